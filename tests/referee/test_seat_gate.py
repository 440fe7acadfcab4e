"""A gRPC seat's gate (``referee.seats.gate``): the process between a bot's sandbox and its
seat's server. It passes at most two connections at once (the rest wait in the bot's own
backlog), at most its byte rate from the bot, and runs in the seat's cgroup, where a seat that
waits for its turn is capped at ``ponder_cores``. Real processes, real sockets, real cgroups;
each bound on both gates, the native one (``gate.c``, built by ``make gate``) and the Python
one."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT

from referee.seats import gate as gate_module
from referee.seats.launch import (GATE_ENV, gate_listener, gate_program, launch,
                                  native_gate_path, start_gate, stop_gate)
from referee.seats.manifest import Manifest
from referee.seats.sandbox import SandboxPolicy, SeatCgroup
from test_seat_cpu import needs_cpu


class EchoServer(threading.Thread):
    """The seat's server stand-in on the inner socket: echoes each connection's bytes and
    counts the connections it was given."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(64)
        self.accepted = 0
        self.changed = threading.Condition()

    def run(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self.changed:
                self.accepted += 1
                self.changed.notify_all()
            threading.Thread(target=self._echo, args=(conn,), daemon=True).start()

    @staticmethod
    def _echo(conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)

    def wait_accepted(self, n: int, timeout: float = 10) -> int:
        with self.changed:
            self.changed.wait_for(lambda: self.accepted >= n, timeout)
            return self.accepted


@pytest.fixture(params=["native", "python"])
def gate_kind(request, monkeypatch):
    """Which gate the seats get (``ARENA_GATE``): each test of a bound runs on both."""
    monkeypatch.setenv(GATE_ENV, request.param)
    assert (gate_program()[0] == str(native_gate_path())) == (request.param == "native")
    return request.param


@contextlib.contextmanager
def _gate(folder: Path):
    """A gate on ``folder/seat.sock`` before an echo server; (socket path, echo server)."""
    inner = folder / "inner.sock"
    echo = EchoServer(inner)
    echo.start()
    listener = gate_listener(folder / "seat.sock")
    proc = start_gate(listener, inner)
    listener.close()
    try:
        yield folder / "seat.sock", echo
    finally:
        stop_gate(proc)
        echo.listener.close()


@pytest.fixture
def gate(tmp_path, gate_kind):
    with _gate(tmp_path) as made:
        yield made


def _roundtrip(conn: socket.socket, data: bytes) -> None:
    conn.sendall(data)
    got = b""
    while len(got) < len(data):
        chunk = conn.recv(65536)
        assert chunk, "the gate closed the connection"
        got += chunk
    assert got == data


def _connect(path: Path, timeout: float | None = 5.0) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(str(path))
    except OSError:
        s.close()
        raise
    return s


def test_the_gate_passes_two_connections_and_leaves_the_rest_in_the_bots_backlog(gate):
    path, echo = gate
    first, second = _connect(path), _connect(path)
    _roundtrip(first, b"first")
    _roundtrip(second, b"second")
    queued, refused = [], 0
    for _ in range(50):  # a flood of connections: a few wait in the backlog, the rest fail
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(str(path))
            queued.append(s)
        except BlockingIOError:
            refused += 1
            s.close()
    _roundtrip(first, b"again")  # (the gate has looked at its socket since)
    assert echo.accepted == 2, f"the gate passed {echo.accepted} connections on"
    assert refused >= 50 - (gate_module.CONNECTIONS + 2), (len(queued), refused)
    second.close()  # a slot is free: the oldest waiting connection is passed on
    assert echo.wait_accepted(3) == 3
    _roundtrip(first, b"and again")
    assert echo.accepted == 3, f"the gate passed {echo.accepted} connections on"
    for s in queued + [first]:
        s.close()


def test_the_gate_passes_a_bots_bytes_at_its_rate(tmp_path, monkeypatch, gate_kind):
    rate, burst = 256 * 1024, 64 * 1024
    monkeypatch.setattr(gate_module, "UP_BYTES_PER_S", rate)
    monkeypatch.setattr(gate_module, "UP_BURST", burst)
    with _gate(tmp_path) as (path, _):
        conn = _connect(path)
        size = 512 * 1024
        start = time.monotonic()
        sender = threading.Thread(target=conn.sendall, args=(os.urandom(size),))
        sender.start()
        got = 0
        while got < size:
            chunk = conn.recv(65536)
            assert chunk
            got += len(chunk)
        took = time.monotonic() - start
        sender.join()
        least = (size - burst) / rate
        assert took >= least * 0.95, f"{size} bytes passed in {took:.2f} s, not {least:.2f}"
        conn.close()


SPIN = """import threading
def spin():
    while True:
        pass
for _ in range(3):
    threading.Thread(target=spin, daemon=True).start()
spin()
"""


def _cpu_ns(cgroup: SeatCgroup) -> int:
    for d in cgroup.dirs:  # v1: cpuacct's folder
        if (d / "cpuacct.usage").exists():
            return int((d / "cpuacct.usage").read_text())
    for d in cgroup.dirs:  # v2
        if (d / "cpu.stat").exists():
            stat = dict(line.split() for line in (d / "cpu.stat").read_text().splitlines())
            if "usage_usec" in stat:
                return int(stat["usage_usec"]) * 1000
    raise AssertionError(f"no CPU accounting in {cgroup.dirs}")


def _cores(cgroup: SeatCgroup, seconds: float) -> float:
    used, start = _cpu_ns(cgroup), time.monotonic()
    time.sleep(seconds)  # (a measuring window: the spinner spins throughout)
    return (_cpu_ns(cgroup) - used) / 1e9 / (time.monotonic() - start)


@needs_cpu
def test_the_gate_runs_in_its_seats_cgroup_and_a_waiting_seat_is_capped(tmp_path, gate_kind):
    folder = tmp_path / "spinner"
    folder.mkdir()
    (folder / "bot.py").write_text(SPIN)
    os.chmod(folder, 0o755)
    manifest = Manifest("spinner", "0", ("python3", "bot.py"), "grpc", folder.resolve())
    sockets = tmp_path / "sock"
    sockets.mkdir()
    listener = gate_listener(sockets / "seat.sock")
    proc = launch(manifest, seat=0, match_id="gate", log_path=tmp_path / "seat0.log",
                  token="tok", sandbox=SandboxPolicy(), socket_dir=sockets,
                  gate=(listener, tmp_path / "inner.sock"))
    try:
        assert proc.cgroup is not None and proc.gate is not None
        # the gate's program runs once its process has entered the seat's cgroup (it moves
        # itself there first): from then on it is in it
        program = os.path.realpath(gate_program()[0])
        deadline = time.monotonic() + 10
        while os.path.realpath(f"/proc/{proc.gate.pid}/exe") != program:
            assert time.monotonic() < deadline, "the gate's program never started"
            time.sleep(0.005)
        lines = Path(f"/proc/{proc.gate.pid}/cgroup").read_text()
        for d in proc.cgroup.dirs:
            assert f"/{d.name}\n" in lines, f"the gate is not in {d}:\n{lines}"
        proc.turn(False)
        waiting = _cores(proc.cgroup, 1.0)
        proc.turn(True)
        acting = _cores(proc.cgroup, 1.0)
        print(f"the spinner's seat: {waiting:.2f} cores waiting, {acting:.2f} acting")
        assert waiting <= 2 * SandboxPolicy().ponder_cores, waiting
        assert acting >= 0.25, acting
    finally:
        proc.stop(0)


def test_each_seat_is_capped_while_it_waits_and_lifted_for_its_own_decisions(tmp_path,
                                                                               monkeypatch):
    """In a real match, the runner lifts a seat's waiting cap as its request goes out and sets
    it again once its answer is judged: each seat's calls alternate, waiting first, and it
    acts once for each of its decisions."""
    from referee.match.local import run_match
    from referee.match.spec import MatchSpec
    from referee.seats import launch as launch_module
    from referee.seats.manifest import load_manifest
    calls: dict[int, list[bool]] = {}
    original = launch_module.BotProcess.turn

    def turn(self, acting):
        calls.setdefault(self.pid, []).append(acting)
        original(self, acting)
    monkeypatch.setattr(launch_module.BotProcess, "turn", turn)
    bot = load_manifest(ROOT / "sample_bots" / "python" / "random")
    spec = MatchSpec(match_id="turns", variant="single-deck", seed="7", max_deals=1)
    _, record, runner = run_match(spec, [bot] * 4, tmp_path, sandbox="none")
    for seat, proc in enumerate(runner.bot_processes):
        seen = calls[proc.pid]
        decisions = sum(1 for s, _ in record["timings"] if s == seat)
        assert decisions > 0 and seen == [False] + [True, False] * decisions, (seat, seen)
