"""A bot that probes its sandbox and prints what it found (its seat's log): python3
sandbox_probe.py MODE [PATH ...].

``report`` prints one JSON line (its exact environment, what it could reach, read and write)
and exits. The other modes misbehave first, print ``probe: ...`` lines, and then play as a
random bot over gRPC (the SDK on its PYTHONPATH): ``forkbomb``, ``memory``, ``fsize``, ``cpu``
(a child burns CPU), ``sigterm`` (children that ignore SIGTERM, one of them in its own session),
``stdout`` (200 MB of prints), ``segfault`` (a crash at its fifth decision, with a child left).
"""

import json
import os
import signal
import socket
import sys
import time


def say(*parts) -> None:
    print("probe:", *parts, flush=True)


def report(paths: list[str]) -> None:
    with open("/proc/self/environ", "rb") as f:
        env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if kv)
    out = {"env": {k.decode(): v.decode() for k, v in env.items()}, "uid": os.getuid(),
           "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
           "cwd": os.getcwd(), "connect": {}, "read": {}, "write": {},
           "mark_before": os.path.exists("/tmp/mark")}
    for port in (6379, 5432):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=3).close()
            out["connect"][port] = "connected"
        except OSError as e:
            out["connect"][port] = f"{type(e).__name__}: {e}"
    for path in paths:
        try:
            if os.path.isdir(path):
                out.setdefault("listed", {})[path] = sorted(os.listdir(path))
            else:
                open(path, "rb").read(1)
            out["read"][path] = "read"
        except OSError as e:
            out["read"][path] = f"{type(e).__name__}: {e.strerror}"
    for path in (os.path.join(os.getcwd(), "written"), "/tmp/mark", "/etc/x", "/x"):
        try:
            with open(path, "w") as f:
                f.write("x")
            out["write"][path] = "written"
        except OSError as e:
            out["write"][path] = f"{type(e).__name__}: {e.strerror}"
    import ctypes
    import fcntl
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(0)
    out["inotify"] = fd if fd >= 0 else os.strerror(ctypes.get_errno())
    with open(__file__, "rb") as f:  # a file its partner could open too
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        out["flock"] = "done"
        out["fcntl_flags"] = fcntl.fcntl(f, fcntl.F_GETFL)
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)  # (a no-op: no error)
        try:
            os.preadv(f.fileno(), [bytearray(1)], 0, os.RWF_NOWAIT)
            out["nowait_read"] = "read"
        except OSError as e:
            out["nowait_read"] = e.strerror
        out["plain_read"] = len(os.pread(f.fileno(), 1, 0))
    print(json.dumps(out), file=sys.stderr, flush=True)  # the log, for a stdio bot too


def _processes() -> int:
    return sum(p.isdigit() for p in os.listdir("/proc"))


def forkbomb() -> None:
    if os.fork() == 0:  # the bomb: every process forks while it can, until /tmp/stop
        while not os.path.exists("/tmp/stop"):
            try:
                os.fork()
            except OSError:
                time.sleep(0.05)  # (the bomb's pause between forks: its behaviour)
        os._exit(0)
    refused = None
    deadline = time.monotonic() + 60
    while refused is None and time.monotonic() < deadline:
        time.sleep(0.2)  # (the probe's pause between fork attempts)
        try:
            pid = os.fork()
        except OSError as e:
            refused = e.strerror
        else:
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
    say(f"fork refused: {refused}; {_processes()} processes")
    open("/tmp/stop", "w").close()
    while _processes() > 4:  # the bomb ends; then there is room for the bot's threads
        time.sleep(0.05)  # (the poll of a wait for the bomb's end)
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            pass


def memory() -> None:
    hold = []
    try:
        while True:
            hold.append(bytearray(16 * 1024 * 1024))
    except MemoryError:
        say(f"memory refused after {16 * len(hold)} MiB")
    hold.clear()


def fsize() -> None:
    chunk = b"x" * (1024 * 1024)
    for path in ("/tmp/big", "/dev/shm/big"):
        written = 0
        try:
            with open(path, "wb", buffering=0) as f:
                while written < 1024:
                    f.write(chunk)
                    written += 1
        except OSError as e:
            say(f"{path}: write refused after {written} MiB: {e.strerror}")
        os.unlink(path)
    n = 0
    try:  # many files, each under the file size limit: the tmpfs is full
        while n < 1000:
            with open(f"/tmp/part{n}", "wb") as f:
                f.write(chunk * 4)
            n += 1
    except OSError as e:
        say(f"/tmp: full after {n} files: {e.strerror}")
    for i in range(n + 1):
        try:
            os.unlink(f"/tmp/part{i}")
        except FileNotFoundError:
            pass


def treebomb() -> None:
    """Four children of 400 MiB each, every page touched: more than the seat's memory."""
    pids = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            hold = b"x" * (400 * 1024 * 1024)
            time.sleep(30)  # (a child holding its memory: the behaviour under test)
            os._exit(len(hold) and 0)
        pids.append(pid)
    killed = 0
    deadline = time.monotonic() + 20
    while pids and time.monotonic() < deadline:
        for pid in list(pids):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                pids.remove(pid)
                killed += os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        if killed:
            break
        time.sleep(0.05)  # (the poll of a wait on the children)
    say(f"tree memory: {killed} children killed")
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def cpu() -> None:
    pid = os.fork()
    if pid == 0:
        while True:
            pass
    _, status = os.waitpid(pid, 0)
    say(f"cpu burner ended by signal {os.WTERMSIG(status) if os.WIFSIGNALED(status) else None}")


def sigterm() -> None:
    for own_session in (False, True):
        if os.fork() == 0:
            if own_session:
                os.setsid()
                if os.fork():
                    os._exit(0)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            while True:
                time.sleep(1)  # (children that linger: the behaviour under test)
    say("children ignoring SIGTERM started")
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def stdout() -> None:
    line = b"x" * 1023 + b"\n"
    block = line * 1024  # 1 MiB
    for _ in range(200):
        sys.stdout.buffer.write(block)
    sys.stdout.flush()
    say("printed 200 MiB")


def _crashing_bot():
    from arena_bot import Bot

    class Crashing(Bot):
        decisions = 0

        def choose(self, request):
            self.decisions += 1
            if self.decisions == 5:
                if os.fork() == 0:  # a child that would outlive its parent
                    while True:
                        # (a child that would outlive its parent: the behaviour under test)
                        time.sleep(1)
                say("segfault now")
                import ctypes
                ctypes.string_at(0)  # SIGSEGV
            return super().choose(request)
    return Crashing()


def main() -> None:
    mode, paths = sys.argv[1], sys.argv[2:]
    if mode == "report":
        report(paths)
        return
    from arena_bot import Bot, run
    if mode == "segfault":
        sys.exit(run(_crashing_bot()))
    {"forkbomb": forkbomb, "memory": memory, "treebomb": treebomb, "fsize": fsize, "cpu": cpu,
     "sigterm": sigterm, "stdout": stdout}[mode]()
    sys.exit(run(Bot()))


if __name__ == "__main__":
    main()
