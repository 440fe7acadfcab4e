"""A seat's bot that floods its own socket with raw HTTP/2 during its opponents' turns, while
three random sample bots play at 250 ms a decision with a 250 ms bank: the innocent seats must
not notice. Each case plays one deal of a real match (sandboxed bots, real gRPC on the seats'
unix sockets) and compares it with a control match of the same deal where seat 0 is the random
sample too: the innocent seats get no fault, their p95 charged decision time stays within
``max(1.5 x control, control + P95_FLOOR_MS)``, and the referee's peak memory within 200 MiB of
the control's. The floor, 10 ms: a control p95 is about a millisecond, and on a loaded machine
with two cores (four bots, the referee and whatever else runs) a bot that waits for a core once
waits a scheduler slice or two, a few ms; the floods this guards against cost 11-35 ms at p95.

The attacker (written into a temporary bot folder with copies of the pure-Python ``h2``,
``hpack`` and ``hyperframe`` packages, the only place a sandboxed bot imports from) plays at
random through the Python SDK; a thread of it attacks while no request of its own is open, for
at most ``ATTACK_S`` seconds of the match.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import shutil
import time
import uuid
from pathlib import Path

import pytest
from conftest import ROOT

from referee.match.local import run_match
from referee.match.spec import MatchSpec, TimeControl
from referee.seats.manifest import load_manifest

pytest.importorskip("h2", reason="h2 (the dev extras) drives the raw HTTP/2 attacks")

RANDOM = load_manifest(ROOT / "sample_bots" / "python" / "random")
TC = TimeControl(per_decision_ms=250, bank_ms=250, max_strikes=3, reconnect_window_ms=1000,
                 connect_timeout_ms=15000)
ATTACK_S = 3.0
ATTACKS = ["streams", "health", "connections", "rapid_reset", "metadata", "pings"]
P95_FLOOR_MS = 10
MEMORY_SLACK_KIB = 200 * 1024

ATTACKER = r'''
"""Plays at random, and floods its own seat's socket with raw HTTP/2 between its turns."""
import os, random, socket, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from arena_bot import Bot, run  # noqa: E402
import h2.config, h2.connection, h2.events, h2.settings  # noqa: E402

ATTACK, ATTACK_S = sys.argv[1], float(sys.argv[2])
PATH = os.environ["ARENA_REFEREE"].split("unix://", 1)[1]
PLAY = "/shengji_arena.v1.Referee/Play"
WATCH = "/grpc.health.v1.Health/Watch"


def headers(path, extra=()):
    return [(":method", "POST"), (":scheme", "http"), (":path", path),
            (":authority", "localhost"), ("content-type", "application/grpc"),
            ("te", "trailers"), *extra]


class Link:
    """One raw HTTP/2 connection to the seat's socket."""

    def __init__(self, timeout=1.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(PATH)
        except OSError:
            self.sock.close()
            raise
        self.sock.settimeout(1.0)
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(
            client_side=True, header_encoding=None, validate_outbound_headers=False,
            normalize_outbound_headers=False))
        self.conn.initiate_connection()
        self.flush()

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def drain(self):
        self.sock.setblocking(False)
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    raise ConnectionError("closed")
                for e in self.conn.receive_data(data):
                    if isinstance(e, h2.events.ConnectionTerminated):
                        raise ConnectionError("goaway")
        except BlockingIOError:
            pass
        finally:
            self.sock.settimeout(1.0)
        self.flush()

    def close(self):
        self.sock.close()


def _int7(n):
    """An HPACK integer with a 7-bit prefix (no Huffman flag)."""
    if n < 127:
        return bytes([n])
    out, n = [127], n - 127
    while n >= 128:
        out.append(n % 128 + 128)
        n //= 128
    return bytes(out + [n])


PAD = b"".join(b"\0" + _int7(len(name)) + name + _int7(16000) + b"a" * 16000
               for name in (f"x-pad-{i}".encode() for i in range(256)))
"""256 literal header fields of 16000 bytes (without indexing): a 4 MiB header block."""


def big_headers(link):
    """A HEADERS frame and CONTINUATION frames carrying a 4 MiB header block (written here:
    hpack's encoder is far too slow for it), on a stream h2 does not know of."""
    import hpack, hyperframe.frame as hf
    link.raw_sid = getattr(link, "raw_sid", 1001) + 2
    block = hpack.Encoder().encode(headers(PLAY), huffman=False) + PAD
    chunks = [block[i:i + 16384] for i in range(0, len(block), 16384)]
    frames = [hf.HeadersFrame(link.raw_sid, data=chunks[0])]
    frames += [hf.ContinuationFrame(link.raw_sid, data=c) for c in chunks[1:]]
    frames[-1].flags.add("END_HEADERS")
    return b"".join(f.serialize() for f in frames)


class Attack:
    def __init__(self):
        self.link = None
        self.held = []
        self.sent = 0
        self.refused = 0

    def one(self):
        if self.link is None:
            self.link = Link()
        link, conn = self.link, self.link.conn
        if ATTACK == "streams":  # Play streams that never send a Hello
            for _ in range(50):
                conn.send_headers(conn.get_next_available_stream_id(), headers(PLAY))
        elif ATTACK == "health":
            for _ in range(50):
                sid = conn.get_next_available_stream_id()
                conn.send_headers(sid, headers(WATCH))
                conn.send_data(sid, b"\0\0\0\0\0", end_stream=True)
        elif ATTACK == "rapid_reset":
            for _ in range(50):
                sid = conn.get_next_available_stream_id()
                conn.send_headers(sid, headers(PLAY))
                conn.reset_stream(sid)
        elif ATTACK == "metadata":  # 4 MiB header blocks, in CONTINUATION frames, 64 KiB
            block = big_headers(link)  # at a time (each a burst: the seat's gate passes
            for i in range(0, len(block), 65536):  # 64 KiB a second)
                link.sock.sendall(block[i:i + 65536])
                self.count()
            link.drain()
            return
        elif ATTACK == "pings":
            for i in range(100):
                conn.ping(i.to_bytes(8, "big"))
                conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 100 + i})
        elif ATTACK == "connections":  # ~200 held, and new ones opened and dropped, at once
            try:
                if len(self.held) < 200:
                    self.held.append(Link(0.001))
                Link(0.001).close()
            except OSError:  # not taken (the seat's gate holds as many as it passes on)
                self.refused += 1
        self.count()
        link.flush()
        link.drain()

    def count(self):
        self.sent += 1
        if self.sent == 1:
            print(f"ATTACK {ATTACK} bursts=1", flush=True)

    def run(self, mine, ended):
        start = time.monotonic()
        while not ended.is_set() and time.monotonic() - start < ATTACK_S:
            if mine.is_set():
                time.sleep(0.001)
                continue
            try:
                self.one()
            except Exception as e:  # refused, reset, GOAWAY: a new connection
                if self.link is not None:
                    self.link.close()
                self.link = None
                if ATTACK == "connections":
                    for link in self.held:
                        link.close()
                    self.held = []
        print(f"ATTACK {ATTACK} bursts={self.sent} refused={self.refused}", flush=True)


class Attacker(Bot):
    name = "attacker"

    def __init__(self):
        super().__init__()
        self.rng = random.Random(1)
        self.mine, self.ended = threading.Event(), threading.Event()
        self.thread = None

    def on_welcome(self, welcome):
        if self.thread is None:
            self.thread = threading.Thread(target=Attack().run, args=(self.mine, self.ended),
                                           daemon=True)
            self.thread.start()

    def decide(self, request):
        self.mine.set()
        try:
            return super().decide(request)
        finally:
            self.mine.clear()

    def choose(self, request):
        return self.rng.choice(request.hint.actions)

    def on_match_end(self, end):
        self.ended.set()
        if self.thread is not None:
            self.thread.join(5)


if __name__ == "__main__":
    sys.exit(run(Attacker()))
'''


def attacker_bot(folder: Path, attack: str):
    """The attacker's bot folder: its program and the HTTP/2 packages, copied in (the SDK comes
    with every Python bot)."""
    folder.mkdir()
    (folder / "bot.py").write_text(ATTACKER)
    for name in ("h2", "hpack", "hyperframe"):
        source = Path(importlib.util.find_spec(name).origin).parent
        shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "bot.toml").write_text(
        'name = "attacker"\nversion = "1.0.0"\n'
        f'command = ["python3", "bot.py", "{attack}", "{ATTACK_S}"]\n'
        'protocol = "grpc"\npythonpath = ["."]\n')
    return load_manifest(folder)


def peak_kib() -> int:
    """The referee's (this process's) peak resident memory since ``reset_peak``."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("/proc/self/status: no VmHWM line")


def reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def play(workdir: Path, seat0) -> dict:
    spec = MatchSpec(match_id=f"flood-{uuid.uuid4().hex[:8]}", variant="two-deck-80", seed="21",
                     max_deals=1, time_control=TC)
    reset_peak()
    result, record, runner = run_match(spec, [seat0, RANDOM, RANDOM, RANDOM], workdir)
    innocent = [ms for seat, ms in record["timings"] if seat != 0]
    return {"result": result, "record": record, "peak_kib": peak_kib(), "p95": p95(innocent),
            "decisions": len(innocent), "excused_s": runner.excused_s,
            "faults": [f for f in record["faults"] if f.get("seat") != 0]}


@pytest.fixture(scope="module")
def control(tmp_path_factory):
    played = play(tmp_path_factory.mktemp("control"), RANDOM)
    assert played["faults"] == [] and played["result"]["forfeit"] is None, played["faults"]
    return played


@pytest.mark.timing
@pytest.mark.parametrize("attack", ATTACKS)
def test_a_seat_flooding_its_socket_does_not_touch_the_other_seats(attack, control, tmp_path):
    bot = attacker_bot(tmp_path / "attacker", attack)
    played = play(tmp_path / "match", bot)
    """The attack ran (its log says how many bursts), and the innocent seats 1-3 got no fault,
    a p95 within the bound of the control's and the referee's memory within 200 MiB of it."""
    log = (tmp_path / "match" / "seat0.log").read_text(errors="replace")
    assert f"ATTACK {attack} bursts=" in log, \
        f"the attack did not run; seat 0's log:\n{log[-2000:]}"
    bursts = int(log.split(f"ATTACK {attack} bursts=")[-1].split()[0])
    assert bursts > 0, f"the attack sent nothing; seat 0's log:\n{log[-2000:]}"
    forfeit = played["result"]["forfeit"]
    assert forfeit is None or forfeit["seat"] == 0, forfeit
    assert played["faults"] == [], f"faults of the innocent seats: {played['faults']}"
    assert played["decisions"] >= control["decisions"] // 2, (played["decisions"], forfeit)
    allowed = max(1.5 * control["p95"], control["p95"] + P95_FLOOR_MS)
    assert played["p95"] <= allowed, (
        f"innocent p95 {played['p95']:.1f} ms under the {attack} attack, control "
        f"{control['p95']:.1f} ms (allowed {allowed:.1f}); loop stalls excused "
        f"{played['excused_s'] * 1000:.0f} ms; {bursts} bursts")
    grown = played["peak_kib"] - control["peak_kib"]
    assert grown <= MEMORY_SLACK_KIB, (
        f"the referee's peak memory grew {grown // 1024} MiB over the control's under the "
        f"{attack} attack")


def test_a_seat_is_not_charged_for_a_stall_of_the_referees_loop(tmp_path, monkeypatch):
    """The referee's loop stalls 600 ms (longer than a decision's 250 ms and its 250 ms bank)
    just after four requests go out to seats 1-3: no seat times out, and each such
    decision is charged its own time, not the stall."""
    from referee.seats.grpc_seat import GrpcSeat
    stalled: list[int] = []  # request ids sent just before a stall
    sent = [0]  # requests to seats 1-3 so far
    request = GrpcSeat.request

    def stalling(self, message, *args):
        reply = request(self, message, *args)
        if self.link.seat == 0:
            return reply
        sent[0] += 1
        # every 7th request to seats 1-3, the first four times: a match has far more than 28
        if sent[0] % 7 == 0 and len(stalled) < 4:
            stalled.append(message.request.request_id)
            asyncio.get_running_loop().call_soon(time.sleep, 0.6)  # the loop lost 600 ms
        return reply

    monkeypatch.setattr(GrpcSeat, "request", stalling)
    played = play(tmp_path / "match", RANDOM)
    assert len(stalled) == 4, stalled
    assert played["faults"] == [], f"a seat was charged for the loop's stall: {played['faults']}"
    worst = max(ms for seat, ms in played["record"]["timings"])
    assert worst < 250, f"a decision was charged {worst} ms (the stall was 600 ms)"
    assert played["excused_s"] >= 4 * 0.55, played["excused_s"]


def test_a_referee_past_its_memory_bound_ends_as_the_infrastructures_failure(tmp_path):
    """Past its bound the referee process ends with OUT_OF_MEMORY (no record written: the
    worker plays the match again, charged to no seat), whatever its event loop is doing."""
    import subprocess
    import sys

    from referee.serve import OUT_OF_MEMORY
    program = ("import sys, time\n"
               "from referee.serve import guard_memory\n"
               "guard_memory(150)\n"
               "kept = bytearray(40 * 2**20)\n"  # under the bound: runs on
               "time.sleep(0.3)\n"
               "print('under', flush=True)\n"
               "kept += bytes(300 * 2**20)\n"  # past it
               "time.sleep(5)\n"
               "print('not ended', flush=True)\n")
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == OUT_OF_MEMORY, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == "under\n"
    assert "past its bound of 150 MiB" in done.stderr
