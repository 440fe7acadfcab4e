"""The submission service's process under a hostile participant: ``arena serve``'s app served
by uvicorn with ``arena serve``'s own settings (``cli.serve.server_config``), in a process of
its own. While an upload that costs the service dearly runs (600 nested folders, 100,000 empty
files, a 24 MiB manifest), while 30 tokenless uploads are held open and while 200 connections
trickle their headers, another author's GETs keep a p95 of at most 200 ms; a refusal comes
before any body is read; the server's memory stays bounded and slow connections are closed;
failed tokens and refused uploads are counted and refused in their turn."""

from __future__ import annotations

import gzip
import io
import json
import re
import select
import socket
import statistics
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import httpx
import pytest
from test_service_api import archive, bot_folder

from scheduler.registry.owners import add_author
from scheduler.store import open_store

pytestmark = pytest.mark.xdist_group("service process")

ROOT = Path(__file__).resolve().parents[2]
P95_S = 0.2        # another author's GET, while an attack runs
ATTACK_S = 3.0     # how long each attack is measured
RSS_GROWTH = 50 << 20

#: the server: the app of ``arena serve`` with uvicorn as ``arena serve`` configures it
SERVER = r"""
import json, socket, sys
import uvicorn
from cli.serve import ServerBounds, server_config
from web.app import create_app
from scheduler.service.config import ServiceConfig
from scheduler.service.limits import Limits
db, limits, config, bounds = sys.argv[1], *map(json.loads, sys.argv[2:5])
app = create_app(db, service=ServiceConfig(limits=Limits(**limits), **config))
sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # (as uvicorn's:
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # asyncio sets TCP_NODELAY then)
sock.bind(("127.0.0.1", 0))
port = sock.getsockname()[1]
print(port, flush=True)
uvicorn.Server(server_config(app, "127.0.0.1", port, ServerBounds(**bounds))).run(
    sockets=[sock])
"""


class Served:
    """``arena serve``'s app in a process of its own over a fresh store, with authors bob (the
    innocent one), alice, mallory and trudy (attackers)."""

    def __init__(self, tmp: Path, limits: dict | None = None, config: dict | None = None,
                 bounds: dict | None = None) -> None:
        self.db = f"sqlite:///{tmp / 'arena.db'}"
        self.store = open_store(self.db)
        self.tokens = {n: add_author(self.store, n)
                       for n in ("bob", "alice", "mallory", "trudy", "carol")}
        self.log = open(tmp / "serve.log", "w+b")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, self.db, json.dumps(limits or {}),
             json.dumps(config or {}), json.dumps(bounds or {})],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=self.log)
        ready, _, _ = select.select([self.proc.stdout], [], [], 60)
        assert ready, "the server did not say its port within 60 s"
        self.port = int(self.proc.stdout.readline())
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(self.url + "/", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert self.proc.poll() is None and time.monotonic() < deadline, self.server_log()
            time.sleep(0.05)  # (the poll of a wait on the server's start)

    def auth(self, who: str) -> dict:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def client(self, timeout: float = 60, source: str | None = None) -> httpx.Client:
        """An HTTP client of the server (``source``: from that local address), sending each
        request at once (no Nagle delay on a request written in two parts)."""
        return httpx.Client(base_url=self.url, timeout=timeout, transport=httpx.HTTPTransport(
            local_address=source, socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]))

    def rss(self) -> int:
        """The server process's resident memory, in bytes."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmRSS")

    def connect(self, source: str | None = None) -> socket.socket:
        s = socket.socket()
        if source:
            s.bind((source, 0))
        s.connect(("127.0.0.1", self.port))
        return s

    def server_log(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-3000:]

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.log.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One server for the attacks on its availability: limits out of the attackers' way (what
    is measured is the cost of an upload, not a refusal for its number), an upload's work
    bounded to 5 s, headers to 3 s."""
    s = Served(tmp_path_factory.mktemp("attacks"),
               limits={"refused_uploads": 100_000, "versions_per_day": 100_000,
                       "builds_in_flight": 100_000, "upload_s": 5.0},
               bounds={"header_s": 3.0})
    yield s
    s.close()


def p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20, method="inclusive")[18]


def innocent_gets(served: Served, seconds: float, during=None, over=None) -> list[float]:
    """bob's GETs (his versions with his token, and the front page), one after another for
    ``seconds`` (or, once ``over()`` says so, for ``ATTACK_S``): each one's time;
    ``during()`` is called between them."""
    times = []
    with served.client(30) as c:
        start = time.monotonic()
        while time.monotonic() < start + seconds and not (
                over is not None and time.monotonic() >= start + ATTACK_S and over()):
            for path, headers in (("/api/v1/bots", served.auth("bob")), ("/", {})):
                t = time.monotonic()
                got = c.get(path, headers=headers)
                times.append(time.monotonic() - t)
                assert got.status_code == 200, (path, got.status_code, got.text[:300])
            if during is not None:
                during()
    return times


def attack_with_uploads(served: Served, data: bytes) -> tuple[list[float], list]:
    """mallory and trudy upload ``data`` again and again (one upload each at a time, the
    service's two upload slots) while bob's GETs are timed: (their times, the answers)."""
    stop = threading.Event()
    answers, started = [], threading.Barrier(3)

    def attacker(who: str) -> None:
        with served.client() as c:
            started.wait()
            while not stop.is_set():
                t = time.monotonic()
                got = c.post("/api/v1/bots", content=data, headers=served.auth(who))
                answers.append((got.status_code, time.monotonic() - t, got.text[:200]))

    threads = [threading.Thread(target=attacker, args=(who,)) for who in ("mallory", "trudy")]
    for t in threads:
        t.start()
    started.wait()
    try:
        times = innocent_gets(served, ATTACK_S)
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    assert not any(t.is_alive() for t in threads), "an upload was not answered in 60 s"
    return times, answers


def nested_folders(depth: int = 600) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        name = "."
        for _ in range(depth):
            name += "/d"
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
    return buf.getvalue()


def empty_files(n: int = 100_000) -> bytes:
    """A tar.gz of ``n`` empty files and nothing else (its ustar headers written here: the
    tarfile module takes seconds for as many)."""
    blocks = []
    for i in range(n):
        head = bytearray(512)
        name = b"f%d" % i
        head[:len(name)] = name
        for at, field in ((100, b"0000644\0"), (108, b"0000000\0"), (116, b"0000000\0"),
                          (124, b"00000000000\0"), (136, b"00000000000\0"),
                          (148, b" " * 8), (156, b"0"), (257, b"ustar\x0000")):
            head[at:at + len(field)] = field
        head[148:156] = b"%06o\0 " % sum(head)
        blocks.append(bytes(head))
    return gzip.compress(b"".join(blocks) + b"\0" * 1024, 6)


def long_description(tmp: Path) -> bytes:
    """A bot whose ``bot.toml`` has a description of 24 MiB."""
    folder = bot_folder(tmp, "wordy", hello=False)
    toml = (folder / "bot.toml").read_text()
    toml = re.sub(r"(?m)^description = .*$", "description = '" + "a" * (24 << 20) + "'", toml)
    (folder / "bot.toml").write_text(toml)
    return archive(folder)


def check_attack(name: str, times: list[float], answers: list) -> None:
    print(f"{name}: bob's GET p95 {p95(times) * 1000:.0f} ms over {len(times)} GETs "
          f"(max {max(times) * 1000:.0f} ms); the uploads' answers "
          f"{sorted({a[0] for a in answers})}, each in {min(a[1] for a in answers):.2f} to "
          f"{max(a[1] for a in answers):.2f} s")
    assert answers, "no upload was answered"
    assert {a[0] for a in answers} <= {202, 400, 413, 429}, answers[:5]
    assert len(times) >= 10, f"only {len(times)} GETs in {ATTACK_S} s"
    assert p95(times) <= P95_S, f"{name}: bob's GET p95 {p95(times):.3f} s"


# -- (a), (b), (c): uploads that cost the service dearly ------------------------------------
def test_an_upload_of_600_nested_folders_leaves_other_authors_served(served):
    times, answers = attack_with_uploads(served, nested_folders())
    check_attack("600 nested folders", times, answers)


def test_an_upload_of_100000_empty_files_leaves_other_authors_served(served):
    data = empty_files()
    assert len(data) < 8 << 20
    times, answers = attack_with_uploads(served, data)
    check_attack("100,000 empty files", times, answers)


def test_an_upload_with_a_24_mib_manifest_leaves_other_authors_served(served, tmp_path):
    data = long_description(tmp_path)
    assert len(data) < 200 << 10  # (gzip takes 24 MiB of one letter to about 24 KiB)
    times, answers = attack_with_uploads(served, data)
    check_attack("a 24 MiB manifest", times, answers)


# -- (d): uploads without a token, held open --------------------------------------------------
def upload_head(path: str = "/api/v1/bots", length: int = 8_000_000, extra: str = "") -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: arena\r\nContent-Type: application/octet-stream"
            f"\r\nContent-Length: {length}\r\n{extra}\r\n").encode()


def answer_of(sock: socket.socket, within: float) -> bytes:
    """The response the server sent on ``sock`` within ``within`` seconds, its headers and
    its body (as much as came: b"" if nothing)."""
    got, end = b"", time.monotonic() + within
    while True:
        head, sep, body = got.partition(b"\r\n\r\n")
        if sep:
            length = re.search(rb"(?im)^content-length: *(\d+)", head)
            if head.startswith(b"HTTP/1.1 100 ") or (length and len(body) >= int(length[1])):
                return got
        left = end - time.monotonic()
        if left <= 0:
            return got
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except (socket.timeout, ConnectionResetError):
            return got
        if not chunk:
            return got
        got += chunk


def test_an_upload_without_a_token_is_refused_before_its_body(served):
    for path, extra in (("/api/v1/bots", ""), ("/api/v1/bots", "Authorization: Bearer "
                                                "not-a-token\r\n"), ("/me/upload", ""),
                        ("/me/upload", "Cookie: arena_session=forged\r\n")):
        with served.connect() as s:
            s.sendall(upload_head(path, extra=extra))  # the headers, and not a byte more
            got = answer_of(s, 10)
            assert got.startswith(b"HTTP/1.1 401 "), (path, extra, got[:200])
            assert b"connection: close" in got.lower()


def test_30_held_tokenless_uploads_cost_no_memory_and_nobody_waits(served):
    base = served.rss()
    held = []
    try:
        for _ in range(30):
            s = served.connect()
            s.sendall(upload_head() + b"\x1f\x8b\x08\x00")
            s.settimeout(0.5)
            try:  # as much of its body as the server takes, up to 4 MiB
                for _ in range(64):
                    s.sendall(b"\0" * (64 << 10))
            except OSError:  # (refused and closed: the rest is not read)
                pass
            held.append(s)
        peak = [served.rss()]
        times = innocent_gets(served, ATTACK_S, during=lambda: peak.append(served.rss()))
        answers = [answer_of(s, 5) for s in held]
    finally:
        for s in held:
            s.close()
    growth = max(peak) - base
    print(f"30 held tokenless uploads: bob's GET p95 {p95(times) * 1000:.0f} ms over "
          f"{len(times)} GETs; the server's memory grew {growth / 2**20:.1f} MiB")
    assert all(a.startswith(b"HTTP/1.1 401 ") for a in answers), \
        [a[:40] for a in answers if not a.startswith(b"HTTP/1.1 401 ")][:3]
    assert growth < RSS_GROWTH, f"the server's memory grew {growth / 2**20:.1f} MiB"
    assert p95(times) <= P95_S


# -- (e): connections that trickle their headers -----------------------------------------------
def test_200_slow_connections_are_closed_in_time_and_nobody_waits(served):
    header_s = 3.0  # the fixture's bound
    base = served.rss()
    opened = time.monotonic()
    slow = []
    for _ in range(200):
        s = served.connect()
        s.sendall(b"GET / HTTP/1.1\r\nHost: arena\r\nX-Slow: ")
        s.setblocking(False)
        slow.append(s)
    closed: dict[socket.socket, float] = {}
    last = [0.0]

    def trickle() -> None:  # a byte of its header on each connection still open, each 0.5 s
        if time.monotonic() - last[0] < 0.5:
            return
        last[0] = time.monotonic()
        for s in slow:
            if s in closed:
                continue
            try:
                if s.recv(1024) == b"":
                    closed[s] = time.monotonic() - opened
                    continue
            except BlockingIOError:
                pass
            except OSError:
                closed[s] = time.monotonic() - opened
                continue
            try:
                s.send(b"a")
            except OSError:
                closed[s] = time.monotonic() - opened

    peak = [served.rss()]
    try:
        times = innocent_gets(served, header_s + 4, during=lambda: (trickle(), peak.append(
            served.rss())), over=lambda: len(closed) == len(slow))
        last[0] = 0.0
        trickle()
    finally:
        for s in slow:
            s.close()
    growth = max(peak) - base
    print(f"200 slow connections: bob's GET p95 {p95(times) * 1000:.0f} ms over {len(times)} "
          f"GETs; {len(closed)} closed by the server, the last after "
          f"{max(closed.values(), default=0):.1f} s; the server's memory grew "
          f"{growth / 2**20:.1f} MiB")
    assert len(closed) == 200, f"{200 - len(closed)} slow connections still open"
    assert max(closed.values()) <= header_s + 4
    assert growth < RSS_GROWTH
    assert p95(times) <= P95_S


# -- failed tokens, refused uploads, the upload slots, slow bodies ---------------------------
def test_wrong_bearer_tokens_from_an_address_are_counted_and_then_refused(tmp_path):
    served = Served(tmp_path, limits={"logins": 3})
    try:
        with served.client(10, "127.0.0.2") as guesser, served.client(10, "127.0.0.3") as other:
            for i in range(3):
                got = guesser.get("/api/v1/me", headers={"Authorization": f"Bearer guess-{i}"})
                assert got.status_code == 401, got.text
            for headers in ({"Authorization": "Bearer guess-4"}, served.auth("bob")):
                locked = guesser.get("/api/v1/me", headers=headers)
                assert locked.status_code == 429, locked.text
                assert "failed tokens from your address" in locked.json()["detail"]
                assert 1 <= int(locked.headers["retry-after"]) <= 900
            # an upload from there is refused too, before its body
            with served.connect("127.0.0.2") as s:
                s.sendall(upload_head(extra=f"Authorization: Bearer {served.tokens['bob']}"
                                      "\r\n"))
                assert answer_of(s, 10).startswith(b"HTTP/1.1 429 ")
            # the right token from another address still works
            assert other.get("/api/v1/me", headers=served.auth("bob")).json()["name"] == "bob"
        failed = served.store.audit.entries(100, action="token-failed")
        assert [e.address for e in failed] == ["127.0.0.2"] * 3
    finally:
        served.close()


def test_refused_uploads_count_against_the_authors_limit(tmp_path):
    served = Served(tmp_path, limits={"refused_uploads": 3})
    try:
        good = archive(bot_folder(tmp_path, "alice-bot", hello=False))
        bobs = archive(bot_folder(tmp_path, "bob-bot", hello=False))
        with served.client() as c:
            for data in (b"\x00garbage" * 100, nested_folders(50), b""):
                got = c.post("/api/v1/bots", content=data, headers=served.auth("alice"))
                assert got.status_code == 400, got.text
            over = c.post("/api/v1/bots", content=good, headers=served.auth("alice"))
            assert over.status_code == 429, over.text
            assert "3 refused uploads per author" in over.json()["detail"]
            assert 3000 < int(over.headers["retry-after"]) <= 3600
            # before its body, as every refusal of who is asking
            with served.connect() as s:
                s.sendall(upload_head(extra=f"Authorization: Bearer "
                                      f"{served.tokens['alice']}\r\n"))
                assert answer_of(s, 10).startswith(b"HTTP/1.1 429 ")
            # another author's upload is not refused
            assert c.post("/api/v1/bots", content=bobs,
                          headers=served.auth("bob")).status_code == 202
        refused = served.store.audit.entries(100, action="upload-refused")
        assert [e.actor for e in refused] == ["alice"] * 3
    finally:
        served.close()


def test_uploads_at_once_are_bounded_and_a_stalled_body_is_ended(tmp_path):
    served = Served(tmp_path, config={"body_s": 2.0})
    try:
        def start(who: str) -> socket.socket:
            """An upload of ``who``'s asking to go on (``Expect: 100-continue``): the server
            says so once it took one of its upload slots and reads the body."""
            s = served.connect()
            s.sendall(upload_head(length=100_000, extra=f"Authorization: Bearer "
                                  f"{served.tokens[who]}\r\nExpect: 100-continue\r\n"))
            return s
        alice = start("alice")
        assert answer_of(alice, 10).startswith(b"HTTP/1.1 100 ")
        t = time.monotonic()
        bob = start("bob")
        assert answer_of(bob, 10).startswith(b"HTTP/1.1 100 ")
        try:
            with start("alice") as again:  # one upload of hers at a time
                got = answer_of(again, 10)
                assert got.startswith(b"HTTP/1.1 429 ") and b"one upload of yours" in got, got
                assert b"retry-after: " in got.lower()
            with start("carol") as third:  # the service's two slots are taken
                got = answer_of(third, 10)
                assert got.startswith(b"HTTP/1.1 429 ") and b"2 uploads are being" in got, got
            # alice's and bob's bodies stalled: 408 after body_s, and their slots are free
            for s in (alice, bob):
                got = answer_of(s, 10)
                assert got.startswith(b"HTTP/1.1 408 "), got[:200]
            waited = time.monotonic() - t
            assert 1.5 <= waited <= 2.0 + 5, waited
        finally:
            alice.close()
            bob.close()
        good = archive(bot_folder(tmp_path, "carol-bot", hello=False))
        with served.client() as c:
            got = c.post("/api/v1/bots", content=good, headers=served.auth("carol"))
        assert got.status_code == 202, got.text
    finally:
        served.close()
