"""A referee process started ahead: its imports done once, it forks one referee per match.

A worker plays each match in a referee process of its own (``referee.serve``). Started by exec,
each pays for an interpreter and its imports (gRPC, protobuf, the rules engine: about 0.15 s of
CPU) before its match can start. ``start`` instead asks a prestarted process
(``python -m referee.prestarted``, one per worker process, started on its first match) that has
imported ``referee.serve`` and nothing more (no thread, no gRPC object, no event loop) to fork.
The child is a referee process as exec would make it: its own pid, session, log and exit
status, the request's arguments, environment and working folder, its command line rewritten to
``referee.serve``'s (``ps`` and the sweeps see a referee); it dies with the prestarted process,
which dies with the worker.

The protocol, on a Unix socket in a folder only the worker's user can enter, one connection per
match: the worker sends one JSON line ``{"argv", "env", "cwd", "log"}``; the prestarted process
answers ``{"pid": N}`` once forked, then ``{"status": S}`` when the child has ended (``S`` as
``Popen.returncode``: ``-N`` for signal N) and closes. ``{"retire": true}`` asks it to leave once
its children have ended (a worker whose environment changed starts another).

``ARENA_REFEREE_PRESTART=0`` starts each referee by exec instead (``subprocess.Popen``).
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from house import settings
from referee.match.socket_folders import SOCKETS_PREFIX, SOCKETS_ROOT

_PR_SET_PDEATHSIG = 1
_READY_S = 60.0
"""How long a worker waits for a prestarted process to say it is ready."""
_REQUEST_S = 10.0
"""How long the prestarted process waits for a connection's request line."""
_LINE_MAX = 1 << 20
"""The longest request line taken (the environment is most of it)."""


def _libc_prctl():
    try:
        return ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux: a child outlives its parent
        return None


_prctl = _libc_prctl()


def die_with_parent() -> None:
    """Be killed when the process (the thread) that started this one ends."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


# -- the worker's side --------------------------------------------------------------------------
class Forked:
    """A referee forked by a prestarted process, as much of ``subprocess.Popen`` as a worker
    uses: ``pid``, ``wait(timeout)``, ``poll()``, ``kill()``, ``returncode``."""

    def __init__(self, conn: socket.socket, pid: int, said: bytes = b"") -> None:
        self._conn = conn
        self._buffer = said  # what the prestarted process said after the pid
        self.pid = pid
        self.returncode: int | None = None
        try:  # a handle on this very process (its pid stays its own until it is reaped)
            self._pidfd: int | None = os.pidfd_open(pid)
        except (OSError, AttributeError):
            self._pidfd = None

    def wait(self, timeout: float | None = None) -> int:
        """The exit status once the referee has ended; ``subprocess.TimeoutExpired`` past
        ``timeout`` seconds. A prestarted process that dies first takes its children with it:
        the referee counts as killed."""
        if self.returncode is not None:
            return self.returncode
        self._conn.settimeout(timeout)
        try:
            while b"\n" not in self._buffer:
                chunk = self._conn.recv(4096)
                if not chunk:
                    self._ended(-signal.SIGKILL)
                    return -signal.SIGKILL
                self._buffer += chunk
        except (TimeoutError, BlockingIOError):  # (a timeout of 0: the socket does not block)
            raise subprocess.TimeoutExpired("referee.serve", timeout or 0) from None
        except OSError:
            self._ended(-signal.SIGKILL)
            return -signal.SIGKILL
        line, _, self._buffer = self._buffer.partition(b"\n")
        status = json.loads(line).get("status")
        self._ended(status if isinstance(status, int) else -signal.SIGKILL)
        assert self.returncode is not None
        return self.returncode

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                self.wait(0.0)
            except subprocess.TimeoutExpired:
                pass
        return self.returncode

    def kill(self) -> None:
        if self.returncode is not None:
            return
        try:
            if self._pidfd is not None:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            else:
                os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def _ended(self, status: int) -> None:
        self.returncode = status
        self._conn.close()
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None


class _Prestarted:
    """This worker process's prestarted referee: started on first use, started again when it
    has died or when the environment it was started with is not the one asked for."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner = os.getpid()
        # started from a thread that lives as long as this process: a process started with
        # die_with_parent dies with the thread that started it, not the process
        self._spawner: ThreadPoolExecutor | None = None
        self._proc: subprocess.Popen | None = None
        self._env: dict[str, str] = {}
        self._cwd = ""
        self._socket = ""

    def connect(self, env: dict[str, str], cwd: str) -> socket.socket:
        with self._lock:
            if self._owner != os.getpid():  # a fork of the process that started it
                self.__init__()  # type: ignore[misc]
            if self._proc is not None and (self._proc.poll() is not None or env != self._env
                                           or cwd != self._cwd):
                self._retire()
            if self._proc is None:
                self._start(env, cwd)
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                conn.connect(self._socket)
            except OSError:
                conn.close()
                self._retire()
                raise
            return conn

    def _start(self, env: dict[str, str], cwd: str) -> None:
        if self._spawner is None:
            self._spawner = ThreadPoolExecutor(1, thread_name_prefix="referee-prestarter")
        proc = self._spawner.submit(
            subprocess.Popen, [sys.executable, "-m", "referee.prestarted"], cwd=cwd, env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, preexec_fn=die_with_parent,
            start_new_session=True).result()
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], _READY_S)
        line = proc.stdout.readline().decode(errors="replace").strip() if ready else ""
        if not line.startswith("ready "):
            proc.kill()
            proc.wait()
            raise OSError(f"the prestarted referee did not start: {line[:200]!r}")
        self._proc, self._env, self._cwd, self._socket = proc, env, cwd, line[len("ready "):]

    def _retire(self) -> None:
        """Let the current process go: it leaves once its children have ended."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                    conn.connect(self._socket)
                    conn.sendall(b'{"retire": true}\n')
            except OSError:
                proc.kill()
        threading.Thread(target=proc.wait, name="prestarted-reaper", daemon=True).start()
        if proc.stdout is not None:
            proc.stdout.close()


_prestarted = _Prestarted()


def start(argv: list[str], *, env: dict[str, str], cwd: Path, log: Path,
          forked: bool | None = None) -> Forked | subprocess.Popen:
    """A referee process running ``python -m referee.serve ARGV`` with ``env`` in ``cwd``, its
    output in ``log``: forked by this worker's prestarted referee, or started by exec when
    ``forked`` is False (None: unless ``ARENA_REFEREE_PRESTART=0``) or a fork cannot be had."""
    if forked if forked is not None else settings.REFEREE_PRESTART.text() != "0":
        try:
            conn = _prestarted.connect(env, str(cwd))
            try:
                conn.sendall(json.dumps({"argv": argv, "env": env, "cwd": str(cwd),
                                         "log": str(log)}).encode() + b"\n")
                conn.settimeout(_READY_S)
                answer = b""
                while b"\n" not in answer:
                    chunk = conn.recv(4096)
                    if not chunk:
                        raise OSError("the prestarted referee closed the connection")
                    answer += chunk
                line, _, rest = answer.partition(b"\n")
                said = json.loads(line)
                if "pid" not in said:
                    raise OSError(str(said.get("error", said))[:200])
                return Forked(conn, int(said["pid"]), rest)
            except (OSError, ValueError, KeyError):
                conn.close()
                raise
        except (OSError, ValueError, KeyError) as e:
            print(f"arena: referee started by exec ({e})", file=sys.stderr)
    with open(log, "wb") as out:
        # its own session: a signal meant for the worker (a terminal's Ctrl-C, a warm
        # shutdown) does not end the match in hand; it still dies with its parent
        return subprocess.Popen([sys.executable, "-m", "referee.serve", *argv], cwd=cwd,
                                env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, preexec_fn=die_with_parent,
                                start_new_session=True)


# -- the prestarted process ---------------------------------------------------------------------
def _read_line(conn: socket.socket) -> bytes:
    conn.settimeout(_REQUEST_S)
    data = b""
    while not data.endswith(b"\n") and len(data) <= _LINE_MAX:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def _send(conn: socket.socket, message: dict) -> bool:
    try:
        conn.sendall(json.dumps(message).encode() + b"\n")
        return True
    except OSError:
        return False


def _same_user(conn: socket.socket) -> bool:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    return int.from_bytes(creds[4:8], sys.byteorder) == os.getuid()


def _child(request: dict, parent: int, keep_closed: list) -> None:
    """In the fork: become the referee the request asks for; never returns."""
    code = 1
    try:
        argv = [str(a) for a in request["argv"]]
        sys.argv = ["referee.serve", *argv]
        try:  # first: it finds the command line's memory from the environment's, as exec left it
            import setproctitle
            setproctitle.setproctitle(" ".join([sys.executable, "-m", "referee.serve", *argv]))
        except ImportError:
            pass
        os.setsid()
        die_with_parent()
        if os.getppid() != parent:  # the prestarted process died before the line above
            os._exit(1)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for thing in keep_closed:
            if isinstance(thing, int):
                os.close(thing)
            else:
                thing.close()
        os.environ.clear()
        os.environ.update(request["env"])
        tempfile.tempdir = None
        os.chdir(request["cwd"])
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.close(null)
        from referee.serve import main
        code = main(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        import traceback
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def serve() -> None:
    """The prestarted process: import what a referee needs, say where it listens, fork."""
    import referee.serve  # noqa: F401  (what every forked referee would import again)
    folder = Path(tempfile.mkdtemp(prefix=f"{SOCKETS_PREFIX}{os.getpid()}-",
                                   dir=SOCKETS_ROOT))
    path = str(folder / "prestarted.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    waiting: dict[int, socket.socket] = {}
    retiring = False
    me = os.getpid()
    sys.stdout.write(f"ready {path}\n")
    sys.stdout.flush()
    try:
        while not (retiring and not waiting):
            watched: list[Any] = [wake_r] if retiring else [listener, wake_r]
            readable, _, _ = select.select(watched, [], [])
            if wake_r in readable:
                while True:
                    try:
                        if not os.read(wake_r, 512):
                            break
                    except BlockingIOError:
                        break
            if listener in readable:
                conn, _ = listener.accept()
                try:
                    request = json.loads(_read_line(conn)) if _same_user(conn) else None
                except (OSError, ValueError):
                    request = None
                if not isinstance(request, dict) or request.get("retire"):
                    retiring = retiring or isinstance(request, dict)
                    conn.close()
                else:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    try:
                        pid = os.fork()
                    except OSError as e:  # the worker starts this one by exec
                        _send(conn, {"error": f"fork: {e}"})
                        conn.close()
                        continue
                    if pid == 0:
                        _child(request, me, [listener, conn, *waiting.values(), wake_r, wake_w])
                    waiting[pid] = conn
                    if not _send(conn, {"pid": pid}):
                        os.kill(pid, signal.SIGKILL)
            while waiting:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                if pid in waiting:
                    conn = waiting.pop(pid)
                    _send(conn, {"status": os.waitstatus_to_exitcode(status)})
                    conn.close()
    finally:
        listener.close()
        for p in (Path(path), folder):
            try:
                p.unlink() if p.is_socket() else p.rmdir()
            except OSError:
                pass


if __name__ == "__main__":
    serve()
