"""Bot processes: the one place a bot is started, its environment built, and its output kept.

A bot process learns where and who it is from its environment: ``ARENA_SEAT`` and
``ARENA_MATCH_ID``, and for a gRPC bot ``ARENA_REFEREE`` (the address, ``unix:///path/seatN.sock``
or ``host:port``), ``ARENA_TOKEN`` and ``ARENA_PROTO_DIR`` (the folder of the protocol
definition ``shengji_arena/v1/referee.proto``, the referee's own copy, read-only). A stdio bot
talks to the referee over its own standard input and output instead. Its ``PYTHONPATH`` holds
what its manifest's ``pythonpath`` asks for, for a gRPC bot the generated protocol package and,
for a Python bot, the Python SDK (``sdk_folders``: ``arena_sdk``, the rules engine it carries,
the protocol package); nothing else of the arena. Every seat is its own process (and process
group): partners never share one, and a bot's whole tree ends with it.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import shengji_arena

from house import settings

from referee.seats import gate as gate_module
from referee.seats.manifest import Manifest, ManifestError
from referee.seats.runtimes import resolve, runtime_of
from referee.seats.sandbox import (PATH, SEAT_ADDRESS, SandboxPolicy, SeatCgroup, SeatUid,
                                   args_fd, claim_uid, environment_args, sandbox_command,
                                   seccomp_fd, uid_processes)

LOG_TAIL = 2000
"""Characters of a bot's log quoted when its process ended before the match did."""
LOG_LIMIT = 8 * 1024 * 1024
"""Bytes of a bot's output (stdout and stderr; stderr only for a stdio bot, whose stdout is the
protocol) kept in its seat's log for one match."""
ARENA_ROOT = Path(__file__).resolve().parents[2]
"""The arena's own folder: in a sandbox, only the rules engine's part of it (``ENGINE``) is
bound, and a Python bot imports ``referee.rules`` from it."""
SDK = ARENA_ROOT / "sdk" / "python" / "src"
"""The Python SDK's modules (``arena_sdk``; ``arena_bot`` and ``arena_policy``, its former
names): on every Python bot's ``PYTHONPATH``, and what the registry's ``@sdk`` names."""
ENGINE = (ARENA_ROOT / "referee" / "__init__.py", ARENA_ROOT / "referee" / "rules",
          ARENA_ROOT / "referee" / "play", ARENA_ROOT / "referee" / "wire",
          ARENA_ROOT / "house")
"""The rules engine as the SDK carries it (its package ``sdk/python`` ships the same folders):
what of ``referee`` a sandboxed Python bot sees, not its seats, match or server, and the
settings table the engine reads (``house``)."""
COMPILED = ARENA_ROOT / "build" / "compiled"
"""The compiled engine (``make compiled``), bound beside the engine's source where it is built:
a sandboxed Python bot's ``referee.rules`` loads it as the referee's does (while it matches the
source; ``ARENA_ENGINE``, passed on from the referee's environment, chooses)."""


def engine_folders() -> list[Path]:
    """What a sandboxed Python bot gets of the rules engine: ``ENGINE``, and ``COMPILED`` where
    it is built."""
    return [*ENGINE, COMPILED] if COMPILED.is_dir() else list(ENGINE)


SAMPLES = ARENA_ROOT / "sample_bots" / "python"
"""The Python samples' folder, where the SDK was: a manifest's ``pythonpath`` may still name it
(the search sample does, for the greedy sample it falls back on)."""
PROTOS = Path(shengji_arena.__file__).resolve().parent.parent
"""The folder holding the generated protocol package ``shengji_arena``: what every Python gRPC
bot imports from the arena, and of ``shengji_arena/v1/referee.proto``: a bot's build and a
gRPC bot find the protocol there (``ARENA_PROTO_DIR``), so a bot's folder carries no copy of it."""
PROTO_DIR_ENV = settings.PROTO_DIR.name
BOTZONE_USER = "botzone"
"""The ``USER`` a Botzone bot is given (some Botzone bots check that it is set)."""
GATE = Path(gate_module.__file__).resolve()
"""The seat's gate program (``referee.seats.gate``), run by the interpreter alone."""
GATE_SOURCE = GATE.with_name("gate.c")
"""The same gate in C (``make gate`` builds it into ``GATE_BUILD``): a few microseconds a
message where the Python one takes tens, and no interpreter to start for each seat."""
GATE_BUILD = ARENA_ROOT / "build" / "gate"
GATE_ENV = settings.GATE.name
"""Which gate a seat gets: ``native`` (it must be built), ``python``, or unset or ``auto``: the
native one when it is built from ``gate.c`` as it is now, else the Python one."""


def native_gate_path() -> Path:
    """Where ``make gate`` puts the native gate built from ``gate.c`` as it is now: the file's
    name carries the source's hash, so an edited source is never served by an old build."""
    digest = hashlib.sha256(GATE_SOURCE.read_bytes()).hexdigest()[:16]
    return GATE_BUILD / f"arena-gate-{digest}"


@functools.cache
def _native_gate() -> str | None:
    try:
        path = native_gate_path()
    except OSError:
        return None
    return str(path) if os.access(path, os.X_OK) else None


def gate_program() -> list[str]:
    """The command that runs a seat's gate (before its arguments): the native gate or the
    Python one, as ``ARENA_GATE`` asks (``auto``: the native one when built)."""
    choice = settings.GATE.value()
    native = _native_gate() if choice in ("auto", "native") else None
    if choice == "native" and native is None:
        raise RuntimeError(f"{GATE_ENV}=native but the native gate is not built for "
                           f"{GATE_SOURCE} as it is now (make gate)")
    if choice not in ("auto", "native", "python"):
        raise RuntimeError(f"{GATE_ENV}={choice!r}: expected native, python or auto")
    return [native] if native else [sys.executable, "-I", "-S", str(GATE)]
GATE_BACKLOG = 1
"""Connections a seat's socket queues while its gate holds as many as it passes on: past
these, the bot's own ``connect`` waits or fails."""


def gate_listener(path: Path) -> socket.socket:
    """A gRPC seat's socket at ``path``, listening, for its gate (``start_gate``) to accept on."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(path))
        listener.listen(GATE_BACKLOG)
    except OSError:
        listener.close()
        raise
    return listener


def start_gate(listener: socket.socket, inner: Path,
               cgroup: SeatCgroup | None = None) -> subprocess.Popen:
    """Start the seat's gate (``referee.seats.gate``) on ``listener``, passing connections on to
    the seat's server at ``inner``, in ``cgroup`` (the seat's) when there is one, from before
    its program runs: what the bot makes it do is that seat's CPU and memory. It ends when its
    standard input closes."""
    fd = listener.fileno()
    command = [*gate_program(), str(fd), str(inner), str(gate_module.UP_BYTES_PER_S),
               str(gate_module.UP_BURST)]
    # it enters the cgroup itself before its program starts, as the bot does: the first process
    # into a new cgroup waits for the kernel (tens of ms), and the referee need not wait with it
    prefix = cgroup.enter() if cgroup is not None else []
    return subprocess.Popen(prefix + command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            env={"PATH": PATH}, pass_fds=(fd,), start_new_session=True)


def stop_gate(gate: subprocess.Popen) -> None:
    """End a seat's gate: its standard input closed, killed if it has not ended within 1 s."""
    assert gate.stdin is not None  # a gate is started with a pipe for its input
    try:
        gate.stdin.close()
    except OSError:
        pass
    try:
        gate.wait(timeout=1)
    except subprocess.TimeoutExpired:
        gate.kill()
        gate.wait()


def sdk_folders(runtimes) -> tuple[list[Path], list[Path]]:
    """What a bot or a build step of ``runtimes`` gets of the Python SDK (none unless one of
    them has ``sdk``, as Python does): the folders bound read-only in its sandbox (the SDK's
    modules, the rules engine's parts, the protocol package), and its ``PYTHONPATH`` entries
    (the SDK's and the protocol package's folders, and the arena's, which in a sandbox shows
    only the engine)."""
    if not any(r.sdk for r in runtimes):
        return [], []
    return [SDK, *engine_folders(), PROTOS], [SDK, PROTOS, ARENA_ROOT]


def bot_environment(manifest: Manifest, *, seat: int, match_id: str, address: str | None = None,
                    token: str | None = None, base: dict[str, str] | None = None,
                    sandboxed: bool = False) -> dict[str, str]:
    """The environment of ``manifest``'s process for ``seat``: ``base`` (the referee's own by
    default) with the ARENA_* variables set, ``PYTHONPATH`` built from the manifest and, for a
    Python bot, the SDK (``sdk_folders``; the arena's folder only when ``sandboxed``, where it
    shows only the engine: unsandboxed, the bot runs on the arena's interpreter, which has the
    engine), and for a Botzone bot, ``USER`` (``BOTZONE_USER``)."""
    env = dict(os.environ if base is None else base)
    for name in ("PYTHONPATH", settings.REFEREE.name, settings.TOKEN.name, PROTO_DIR_ENV):
        env.pop(name, None)
    env[settings.SEAT.name] = str(seat)
    env[settings.MATCH_ID.name] = match_id
    if manifest.protocol == "botzone":
        env["USER"] = BOTZONE_USER
    paths = [str(p) for p in manifest.pythonpath]
    if manifest.protocol == "grpc":
        if address is None or token is None:
            raise ValueError(f"{manifest.label}: a gRPC bot needs the referee's address and "
                             "its seat's token")
        env[settings.REFEREE.name] = address
        env[settings.TOKEN.name] = token
        env[PROTO_DIR_ENV] = str(PROTOS)
        paths.append(str(PROTOS))
    paths += [str(p) for p in sdk_folders([runtime_of(manifest)])[1]
              if sandboxed or p != ARENA_ROOT]
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


class BotProcess:
    """A started bot: its process, and the thread that copies its output into its seat's log;
    for a sandboxed seat of a root launcher, also the seat's uid."""

    def __init__(self, popen: subprocess.Popen, log_pump: threading.Thread,
                 uid: SeatUid | None = None, sandboxed: bool = False,
                 log_path: Path | None = None) -> None:
        self.popen = popen
        self.log_pump = log_pump
        self.log_path = log_path
        self.uid = uid
        self.seat_uid = None if uid is None else uid.uid
        """The seat's own uid (a root launcher's sandbox), kept after ``stop()``."""
        self.sandboxed = sandboxed
        self.cgroup: SeatCgroup | None = None
        """The seat's cgroup, if it has one (removed at ``stop()``)."""
        self.gate: subprocess.Popen | None = None
        """A gRPC seat's gate (``start_gate``), ended at ``stop()``."""

    @property
    def pid(self) -> int:
        return self.popen.pid

    def turn(self, acting: bool) -> None:
        """The seat's CPU share: the seat to act's, or a waiting seat's (its cgroup's
        ``turn``; nothing for a seat without one)."""
        if self.cgroup is not None:
            self.cgroup.turn(acting)

    async def exited(self) -> int:
        """Wait (without blocking the loop) until the process has exited; its exit status."""
        if self.popen.poll() is not None:
            return self.popen.returncode
        try:
            fd = os.pidfd_open(self.popen.pid)
        except (AttributeError, OSError):  # no pidfd here: look every 20 ms
            while self.popen.poll() is None:
                await asyncio.sleep(0.02)
            return self.popen.returncode
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def exited_now() -> None:
            if not done.done():
                done.set_result(None)

        loop.add_reader(fd, exited_now)
        try:
            await done
        finally:
            loop.remove_reader(fd)
            os.close(fd)
        return self.popen.wait()

    def exit_note(self) -> dict | None:
        """How the process ended, once it has: ``status`` (its exit status, or minus the
        signal that ended it), ``said`` (the exit in words) and ``log_tail`` (the last
        ``LOG_TAIL`` characters of its log); None while it runs."""
        status = self.popen.poll()
        if status is None:
            return None
        said = (f"was killed by signal {-status}" if status < 0 else
                f"exited with status {status}")
        if self.sandboxed and status > 128:  # its sandbox's init passes a signal on so
            said += f" (signal {status - 128} inside its sandbox)"
        self.log_pump.join(timeout=1)  # the end of its output is in the log
        tail = ""
        if self.log_path is not None:
            try:
                with open(self.log_path, "rb") as log:
                    log.seek(0, os.SEEK_END)
                    log.seek(max(0, log.tell() - 4 * LOG_TAIL))
                    tail = log.read().decode("utf-8", "replace")[-LOG_TAIL:]
            except OSError:
                pass
        return {"status": status, "said": said, "log_tail": tail}

    def stop(self, grace: float = 3.0) -> None:
        """Give the bot ``grace`` seconds to exit, then kill its whole process group (a
        sandbox: its PID namespace goes with it); returns once its log is complete and, for a
        seat with its own uid, no process of that uid is left."""
        try:
            self.popen.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            try:  # what it started goes too
                os.killpg(self.popen.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.popen.wait()
        if self.gate is not None:  # (before its cgroup goes)
            stop_gate(self.gate)
        if self.uid is not None:
            reap_uid(self.uid.uid)
            if self.cgroup is not None:
                self.cgroup.remove()
                self.cgroup = None
            self.uid.release()
            self.uid = None
        self.log_pump.join(timeout=2)  # the log is complete once the pipe closes


def reap_uid(uid: int, timeout: float = 10.0) -> None:
    """Wait until no process of ``uid`` is left (the PID namespace dies with bwrap's child,
    the kernel takes a moment); kill any that is still there, and give up after twice
    ``timeout`` (a process stuck in the kernel)."""
    deadline = time.monotonic() + timeout
    killed = False
    while (left := uid_processes(uid)):
        if time.monotonic() > deadline:
            if killed:
                return
            killed = True
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + timeout
        time.sleep(0.005)


def launch(manifest: Manifest, *, seat: int, match_id: str, log_path: Path,
           address: str | None = None, token: str | None = None,
           sandbox: SandboxPolicy | None = None, socket_dir: Path | None = None,
           gate: tuple[socket.socket, Path] | None = None) -> BotProcess:
    """Start one bot process for one seat, its output into ``log_path``. A gRPC bot connects to
    ``address`` with ``token``; a stdio bot's standard input and output are left open as pipes
    (``popen.stdin``, ``popen.stdout``) for its ``StdioSeat``. With a ``sandbox`` policy, the bot
    runs in its seat's sandbox (``referee.seats.sandbox``); a gRPC bot's ``socket_dir`` (the
    folder of its seat's socket ``seat.sock``) is its one way to the referee, and its address
    is the socket's path inside the sandbox. A Botzone bot is a stdio one (started by its seat
    each turn, or once while it keeps running) that also sees its manifest's ``data`` folder
    read-only at ``/data`` (``sandbox.DATA_DIR``). A gRPC bot's ``gate``, its seat's listening
    socket and the seat server's inner socket, is handed to the seat's gate process, started in
    the seat's cgroup before the bot (``start_gate``; the listener is closed here)."""
    stdio = manifest.protocol in ("stdio", "botzone")  # (a Botzone bot: pipes, each turn)
    command = list(manifest.command)
    # python: the project's interpreter, with its packages; java: Debian's OpenJDK 17
    command[0] = resolve(command[0])
    runtime = runtime_of(manifest)
    uid = filter_fd = env_fd = cgroup = None
    if sandbox is None:
        env = bot_environment(manifest, seat=seat, match_id=match_id, address=address,
                              token=token)
    else:
        if not stdio and socket_dir is None:
            raise ValueError(f"{manifest.label}: a sandboxed gRPC bot needs its seat's socket "
                             "folder")
        # the SDK's rules engine is chosen as the referee's (``COMPILED`` is bound where built)
        base = {"PATH": PATH, "HOME": "/tmp", "LANG": "C.UTF-8",
                settings.ENGINE.name: settings.ENGINE.value()}
        env = bot_environment(manifest, seat=seat, match_id=match_id,
                              address=None if stdio else SEAT_ADDRESS, token=token, base=base,
                              sandboxed=True)
        folders = (sandbox_pythonpath(manifest) + ([] if stdio else [PROTOS])
                   + sdk_folders([runtime])[0])
        check_startable(manifest, sandboxed=True)
        uid = claim_uid()
        cgroup = None if uid is None else SeatCgroup.make(f"arena-seat-{uid.uid}", sandbox)
        # what the arena sets for its runtime (a JVM's flags), from the seat's memory and
        # whether its cgroup bounds it
        env = {**runtime.environment(sandbox.memory_mb, cgroup is not None), **env}
        filter_fd = seccomp_fd()
        env_fd = args_fd(environment_args(env))  # (the token in no command line)
        command = sandbox_command(command, env=env, workdir=manifest.folder, folders=folders,
                                  policy=sandbox, uid=None if uid is None else uid.uid,
                                  socket_dir=None if stdio else socket_dir, seccomp=filter_fd,
                                  env_fd=env_fd, cgroup=cgroup,
                                  data_dir=manifest.data_folder if manifest.protocol == "botzone"
                                  else None, runtimes=[runtime])
        env = {"PATH": PATH}  # (prlimit's and bwrap's own; the bot's is the one above)
    gate_proc = None
    try:
        if gate is not None:
            gate_proc = start_gate(gate[0], gate[1], cgroup)
        proc = subprocess.Popen(command, cwd=manifest.folder, env=env,
                                stdin=subprocess.PIPE if stdio else subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE if stdio else subprocess.STDOUT,
                                start_new_session=True,
                                pass_fds=tuple(fd for fd in (filter_fd, env_fd)
                                               if fd is not None))
    except OSError as e:
        if gate_proc is not None:
            stop_gate(gate_proc)
        if cgroup is not None:
            cgroup.remove()
        if uid is not None:
            uid.release()
        Path(log_path).write_bytes(b"")
        raise ManifestError(f"{manifest.path or manifest.command[0]}: field 'command': cannot "
                            f"start {command[0]!r}: {e.strerror}") from None
    finally:
        for fd in (filter_fd, env_fd):
            if fd is not None:
                os.close(fd)  # bwrap has its own copy
        if gate is not None:
            gate[0].close()  # the gate's alone: the socket dies with it
    output = proc.stderr if stdio else proc.stdout
    pump = threading.Thread(target=_keep_log, args=(output, Path(log_path), LOG_LIMIT),
                            name=f"seat{seat}-log", daemon=True)
    pump.start()
    bot = BotProcess(proc, pump, uid, sandbox is not None, Path(log_path))
    bot.cgroup = cgroup
    bot.gate = gate_proc
    return bot


def sandbox_pythonpath(manifest: Manifest) -> list[Path]:
    """The folders bound into a sandboxed bot for its manifest's ``pythonpath`` (its author
    wrote it: it may name only what the bot may read). A folder inside the bot's own is bound
    whole, and so are the Python SDK's modules (``SDK``) and the Python samples' folder
    (``SAMPLES``); the arena's folder gives only the rules engine (``ENGINE``): a Python bot has
    the SDK and the engine without naming them; any other folder of the host is refused."""
    out = []
    for i, p in enumerate(manifest.pythonpath):
        if p == manifest.folder or manifest.folder in p.parents or p in (SDK, SAMPLES):
            out.append(p)
        elif p == ARENA_ROOT:
            out.extend(engine_folders())
        else:
            raise ManifestError(
                f"{manifest.path or manifest.label}: field 'pythonpath'[{i}] = {str(p)!r}: "
                "outside the bot's folder; a sandboxed bot imports only from its own folder, "
                f"the Python SDK ({SDK}), the Python samples ({SAMPLES}) and the rules engine "
                f"(the arena's folder, {ARENA_ROOT}: its referee package's rules, play and wire, "
                "and the settings table)")
    return list(dict.fromkeys(out))


def _check_runnable(manifest: Manifest, program: str) -> None:
    """Raise the error an unsandboxed start would give when ``program`` cannot be found (the
    sandbox's own failure would only be a line in the seat's log)."""
    if "/" in program:
        path = Path(program) if os.path.isabs(program) else manifest.folder / program
        found = path.is_file() and os.access(path, os.X_OK)
    else:
        found = shutil.which(program, path=PATH) is not None
    if not found:
        raise ManifestError(f"{manifest.path or manifest.command[0]}: field 'command': cannot "
                            f"start {program!r}: No such file or directory")


def check_startable(manifest: Manifest, sandboxed: bool, *, unbuilt: bool = False) -> None:
    """Raise ``ManifestError`` (naming the manifest and its field) when ``manifest``'s bot
    cannot be started: its program is not there, or (``sandboxed``, a root launcher) the
    seat's own uid could not enter its folder, or its runtime (``referee.seats.runtimes``) is
    not installed on this machine (the message names the Debian package to install).
    ``unbuilt``: the folder is a bot's source, to be built before it plays; a program inside
    it that is not there yet is its build's to make (the build's own tools are checked)."""
    problem = runtime_of(manifest).missing(build=unbuilt and bool(manifest.build))
    if problem is not None:
        raise ManifestError(f"{manifest.path or manifest.label}: {problem}")
    program = resolve(manifest.command[0])
    made_by_build = (unbuilt and bool(manifest.build) and "/" in program
                     and not os.path.isabs(program))
    if not made_by_build:
        _check_runnable(manifest, program)
    if not sandboxed:
        return
    folders = [manifest.folder, *sandbox_pythonpath(manifest)]
    if manifest.data_folder is not None:
        folders.append(manifest.data_folder)
    if os.geteuid() != 0:
        return
    for folder in folders:
        mode = folder.stat().st_mode if folder.exists() else 0o755
        need = 0o004 if folder.is_file() else 0o005  # a file (the engine's __init__.py): read
        if mode & need != need:
            raise ManifestError(
                f"{manifest.path or manifest.label}: the bot's folder {folder} has mode "
                f"{mode & 0o777:04o}: a sandboxed bot runs as a user of its own, which must "
                f"be able to read it (chmod -R o+rX {folder})")


def _keep_log(pipe, path: Path, limit: int) -> None:
    """Copy a bot's output into ``path`` up to ``limit`` bytes; count the rest and say so at
    the end, so that no bot can fill the disk with its prints."""
    dropped = 0
    with pipe, open(path, "wb", buffering=0) as log:
        kept = 0
        while chunk := pipe.read1(65536):
            room = limit - kept
            if room > 0:
                log.write(chunk[:room])
                kept += min(room, len(chunk))
            dropped += max(0, len(chunk) - max(room, 0))
        if dropped:
            log.write(f"\n[arena: {dropped} more bytes of this bot's output were dropped; a "
                      f"seat's log keeps {limit} bytes a match]\n".encode())
