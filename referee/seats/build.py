"""Bots built from source: a manifest's ``build`` run once in a copy of the bot's folder.

``build_bot`` copies a bot's (read-only) folder into a fresh one and runs the manifest's build
steps there, in order, each in a sandbox like a seat's (``referee.seats.sandbox``: no network,
nothing of the host but the runtimes, a private ``/tmp``, its own uid for a root launcher, the
seccomp filter, ``prlimit`` and a cgroup) but with build-sized limits (``BUILD_POLICY``) and the
one difference that the copy, its working directory, is bound read-write; nothing else is
writable. The referee's protocol folder is bound read-only and named by ``ARENA_PROTO_DIR``
(``shengji_arena/v1/referee.proto`` inside it): a bot is built against the protocol the referee
speaks, and its folder need not carry a copy. The whole build has a wall-clock limit
(``ARENA_BUILD_TIMEOUT_S``, default ``BUILD_TIMEOUT_S``). Its output (stdout and stderr, bounded
like a seat's log) is the build log: returned, and kept in the built folder as
``.arena-build.log``. The built folder is then made read-only (and, for a root launcher, given
back to root). A build that fails is refused with ``BuildFailed``, naming the bot, the step,
why, the line of its log that names the cause (``error: ...``) and the end of its log from a
whole line; its folder is removed and its whole log kept beside it (``failed_log_path``).

A sandboxed build's disk is bounded (``ARENA_BUILD_DISK_MB``, default ``BUILD_DISK_MB``): its
folder is a tmpfs of that size (``BuildDisk``), so the kernel refuses its writes past the limit,
whatever number of files it spreads them over; a build that fills it is refused ("wrote more
than 512 MiB (its disk limit)"), and only a built folder within the limit is copied to disk.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from house import settings
from referee.seats.launch import (ARENA_ROOT, LOG_LIMIT, LOG_TAIL, PROTO_DIR_ENV, PROTOS,
                                  reap_uid, sdk_folders)
from referee.seats.manifest import Manifest
from referee.seats.runtimes import resolve, step_runtimes
from referee.seats.sandbox import (MB, PATH, SandboxPolicy, SandboxUnavailable, SeatCgroup,
                                   claim_uid, require_sandbox, sandbox_command, seccomp_fd)

BUILD_TIMEOUT_S: float = settings.BUILD_TIMEOUT_S.default
"""Seconds of wall-clock time a whole build may take (``ARENA_BUILD_TIMEOUT_S`` sets it)."""
TIMEOUT_ENV = settings.BUILD_TIMEOUT_S.name
BUILD_LOG = ".arena-build.log"
"""The build log's name in the built folder."""
BUILD_DISK_MB: int = settings.BUILD_DISK_MB.default
"""MiB a sandboxed build's folder may hold, its sources included (``ARENA_BUILD_DISK_MB``
sets it): room for a Rust target folder or ``node_modules``."""
DISK_ENV = settings.BUILD_DISK_MB.name
BLOCK = 4096
"""What each entry of a built folder counts at least (a folder, a link, a file rounded up):
the disk a file system spends on it."""
BUILD_POLICY = SandboxPolicy(cpu_seconds=1200, memory_mb=4096, processes=512, open_files=1024,
                             file_size_mb=1024, tmpfs_mb=1024)
"""A build's sandbox limits: room for a compiler or a package manager and ``make -j``."""


_CAUSE = re.compile(r"(?i)(\berror\b|\bfatal\b|exception\b|cannot find|not found|"
                    r"undefined|no such file|permission denied|killed)")
"""What a line naming the cause of a failure says (javac's and g++'s ``error:``, rustc's
``error[E0425]``, a JVM's exception, a missing file)."""
_DIAGNOSTIC = re.compile(r"^\S+\.\w+:\d+(:\d+)?: (?!(warning|note|info)\b)")
"""A compiler's diagnostic at a place in a source file, ``main.go:12:5: ...`` (Go's carry no
``error`` word), that is not a warning or a note."""


def cause_line(log: str) -> str | None:
    """The first line of a build log that names a cause (``error: ...``), else the first
    compiler diagnostic at a source line, else None; the arena's own lines (``$ step``, the
    note of dropped output) are not causes."""
    lines = [line.strip() for line in log.splitlines()]
    lines = [line for line in lines if line and not line.startswith(("$ ", "[arena:"))]
    for pattern in (_CAUSE, _DIAGNOSTIC):
        for line in lines:
            if pattern.search(line) and "warning" not in line.lower()[:80]:
                return line[:500]
    return None


def log_tail(log: str, limit: int = LOG_TAIL) -> str:
    """The end of ``log``, at most ``limit`` characters, starting at a whole line."""
    tail = log[-limit:]
    if len(log) > limit and "\n" in tail:
        tail = tail.split("\n", 1)[1]
    return tail.rstrip()


class BuildFailed(ValueError):
    """A build that failed: ``label`` (``name@version``), ``command`` (the step), ``reason``
    (its exit, or the time limit), ``log`` (its whole log), ``cause`` (the line of the log that
    names the cause, if one does) and ``log_path`` (where the whole log is kept, if it is)."""

    def __init__(self, label: str, command: tuple[str, ...], reason: str, log: str,
                 log_path: Path | None = None) -> None:
        self.label, self.command, self.reason, self.log = label, command, reason, log
        self.cause, self.log_path = cause_line(log), log_path
        tail = log_tail(log)
        said = f"{label}: build `{shlex.join(command)}` {reason}"
        if self.cause is not None:
            said += f"; the cause: {self.cause}"
        if log_path is not None:
            said += f"; its whole log: {log_path}"
        super().__init__(said + (f"; the end of its log:\n{tail}" if tail
                                 else "; it printed nothing"))


@dataclass(frozen=True)
class BuildResult:
    """A finished build: the built folder, its log, the seconds it took and the bytes its
    folder holds (``tree_bytes``)."""

    folder: Path
    log: str
    seconds: float
    sandboxed: bool
    bytes: int = 0


def build_timeout() -> float:
    """The build time limit: ``ARENA_BUILD_TIMEOUT_S`` if set, else ``BUILD_TIMEOUT_S``."""
    text = settings.BUILD_TIMEOUT_S.text()
    if not text:
        return BUILD_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise ValueError(f"{TIMEOUT_ENV}={text!r}: expected a number of seconds above 0")
    return value


def build_disk_mb() -> int:
    """The build disk limit in MiB: ``ARENA_BUILD_DISK_MB`` if set, else ``BUILD_DISK_MB``."""
    text = (settings.BUILD_DISK_MB.text() or "").strip()
    if not text:
        return BUILD_DISK_MB
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{DISK_ENV}={text!r}: expected a whole number of MiB, 1 or more")
    return int(text)


def build_policy(value: Any) -> SandboxPolicy | None:
    """A build's sandbox setting: None (``BUILD_POLICY``), "none" (unsandboxed), a policy or a
    dict of limits."""
    if value is None:
        return BUILD_POLICY
    if value == "none":
        return None
    if isinstance(value, SandboxPolicy):
        return value
    return SandboxPolicy.from_dict(value, "build sandbox")


def build_bot(manifest: Manifest, source: Path, into: Path, *, timeout_s: float | None = None,
              policy: Any = None, disk_mb: int | None = None) -> BuildResult:
    """Build ``manifest``'s bot: copy ``source`` to ``into`` (which must not exist, or be
    empty), run the manifest's build steps there (sandboxed under ``policy``, see
    ``build_policy``; "none": plain processes), within ``timeout_s`` seconds in all (None:
    ``build_timeout()``), and make ``into`` read-only. A sandboxed build runs in a folder of
    ``disk_mb`` MiB (None: ``build_disk_mb()``; ``BuildDisk``) copied to ``into`` once it
    passed; an unsandboxed one in ``into`` itself, unbounded. Raises ``BuildFailed`` (``into``
    removed) when a step exits non-zero, runs past the limit, fills its disk or cannot start;
    ``SandboxUnavailable`` when bwrap (or the build's disk) cannot be made here (no fault of
    the bot's)."""
    sandbox = build_policy(policy)
    timeout = build_timeout() if timeout_s is None else float(timeout_s)
    limit = (build_disk_mb() if disk_mb is None else int(disk_mb)) * MB
    if sandbox is not None:
        require_sandbox()
    source, into = Path(source).resolve(), Path(into).absolute()
    if into.exists() and (not into.is_dir() or any(into.iterdir())):
        raise ValueError(f"{manifest.label}: cannot build into {into}: not an empty folder")
    into.mkdir(parents=True, exist_ok=True)
    into = into.resolve()
    uid = disk = None
    log = _Log(LOG_LIMIT)
    start = time.monotonic()
    deadline = start + timeout
    try:
        if sandbox is not None:
            disk = BuildDisk(into, limit)
        files = into if disk is None else disk.view  # where this process reaches the folder
        try:
            shutil.copytree(source, files, symlinks=True, dirs_exist_ok=True)
        except (OSError, shutil.Error):
            if disk is None or not disk.full():
                raise
            raise BuildFailed(manifest.label, manifest.build[0], f"cannot begin: its own files "
                              f"come to more than {limit // MB} MiB (its disk limit)",
                              "") from None
        uid = claim_uid() if sandbox is not None else None
        _own(files, None if uid is None else uid.uid, writable=True)
        for i, step in enumerate(manifest.build):
            toolchains = ", ".join(r.summary() for r in step_runtimes(manifest, step)
                                   if r.version_program)
            if toolchains:  # what the author's build got, in the log they read
                log.add(f"[arena: {toolchains}]\n".encode())
            log.add(f"$ {shlex.join(step)}\n".encode())
            reason = _run_step(manifest, step, into, sandbox, uid, deadline, timeout, log, disk)
            if reason is None and disk is not None and i == len(manifest.build) - 1:
                _own(files, None, writable=True)  # (a build may have closed its own files)
                size = tree_bytes(files)
                if size > limit:  # as copied: a sparse file, a hard link, each in full
                    log.add(f"\n[arena: the build's files come to {size / MB:.0f} MiB, more "
                            f"than its disk limit]\n".encode())
                    reason = (f"wrote more than {limit // MB} MiB (its disk limit): its files "
                              f"come to {size / MB:.0f} MiB")
            if reason is not None:
                text = log.text()
                raise BuildFailed(manifest.label, step, reason, text,
                                  _keep_failed_log(into, text))
        if disk is not None:
            _copy_tree(files, into)
    except BaseException:
        if disk is not None:
            disk.close()
        if uid is not None:
            reap_uid(uid.uid)
            uid.release()
        discard(into)
        raise
    if disk is not None:
        disk.close()
    if uid is not None:
        reap_uid(uid.uid)
        uid.release()
    seconds = time.monotonic() - start
    text = log.text()
    try:
        _own(into, None, writable=False)
        os.chmod(into, 0o755)
        discard(into / BUILD_LOG)
        (into / BUILD_LOG).write_text(text, encoding="utf-8")
        os.chmod(into / BUILD_LOG, 0o444)
        os.chmod(into, 0o555)
        size = tree_bytes(into)
    except BaseException:
        discard(into)
        raise
    return BuildResult(into, text, seconds, sandbox is not None, size)


_DISK_HELPER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
NEWNS, NEWUSER, NOSUID, NODEV, REC, PRIVATE = 0x20000, 0x10000000, 2, 4, 16384, 1 << 18
folder, size, inodes = sys.argv[1].encode(), sys.argv[2], sys.argv[3]
def fail(what):
    print("error", what + ":", os.strerror(ctypes.get_errno()), flush=True)
    sys.exit(1)
uid, gid, mode = os.geteuid(), os.getegid(), "mount"
if uid != 0 or libc.unshare(NEWNS) != 0:
    if libc.unshare(NEWNS | NEWUSER) != 0:
        fail("unshare")
    mode = "user"
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):
        try:
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
        except OSError as e:
            print("error", name + ":", e.strerror, flush=True)
            sys.exit(1)
if libc.mount(None, b"/", None, REC | PRIVATE, None) != 0:
    fail("private mounts")
if libc.mount(b"arena-build", folder, b"tmpfs", NOSUID | NODEV,
              f"size={size},nr_inodes={inodes},mode=0755".encode()) != 0:
    fail("tmpfs")
print("ready", mode, flush=True)
while os.read(0, 4096):
    pass
"""
"""The helper of ``BuildDisk``: a mount namespace of its own (and a user namespace mapping only
the launcher's uid, for a launcher that is not root) with a tmpfs over the build's folder,
held until its standard input ends."""


class BuildDisk:
    """A build's folder bounded to ``limit`` bytes: a tmpfs of that size (and of ``limit /
    BLOCK`` entries) mounted over ``folder`` in a mount namespace of its own, which a helper
    process holds. The build's steps enter that namespace (``enter()``, then bwrap binds the
    folder as usual) and the kernel refuses their writes past the limit; this process reaches
    the files at ``view`` (through the helper's ``/proc/PID/root``), while ``folder`` itself,
    seen from here, is the folder on disk the built files are copied to. The tmpfs goes with
    the helper: at ``close()``, or when this process dies (the helper's standard input ends).
    Its pages are memory, counted in the build's cgroup where the launcher is root."""

    def __init__(self, folder: Path, limit: int) -> None:
        self.folder, self.limit = Path(folder), int(limit)
        if shutil.which("nsenter") is None:
            raise SandboxUnavailable("a build's disk cannot be bounded here: nsenter is not "
                                     "installed (Debian: apt-get install util-linux)")
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _DISK_HELPER, str(self.folder), str(self.limit),
             str(max(64, self.limit // BLOCK))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out = self.proc.stdout
        assert out is not None  # (a pipe, asked for above)
        said = b""
        ends = time.monotonic() + 30
        while b"\n" not in said and time.monotonic() < ends:
            if select.select([out], [], [], max(0.0, ends - time.monotonic()))[0]:
                chunk = os.read(out.fileno(), 4096)
                if not chunk:
                    break
                said += chunk
        words = said.decode(errors="replace").split()
        if words[:1] != ["ready"]:
            self.close()
            raise SandboxUnavailable("a build's disk cannot be bounded here (a tmpfs in a "
                                     "mount namespace of its own): "
                                     f"{' '.join(words[1:]) or 'its helper did not answer'}")
        self.user = words[1:2] == ["user"]
        self.view = Path(f"/proc/{self.proc.pid}/root") / self.folder.relative_to("/")

    def enter(self) -> list[str]:
        """The command prefix that runs a step in the build's mount namespace."""
        return ["nsenter", f"--target={self.proc.pid}",
                *(["--user", "--preserve-credentials"] if self.user else []), "--mount", "--"]

    def full(self) -> bool:
        """Whether the build filled its disk (no block or no entry left)."""
        try:
            st = os.statvfs(self.view)
        except OSError:
            return False
        return st.f_bfree == 0 or st.f_ffree == 0

    def close(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def tree_bytes(folder: Path) -> int:
    """The disk ``folder`` takes, counted as the built folder is copied: each entry at least
    ``BLOCK`` bytes, each file its size rounded up to a block (a sparse file at its full size, a
    hard link as a file of its own); links are not followed."""
    def unreadable(e: OSError) -> None:
        raise e
    total = 0
    for root, dirs, files in os.walk(folder, onerror=unreadable):
        for name in [None, *dirs, *files]:
            st = os.lstat(root if name is None else os.path.join(root, name))
            if stat.S_ISREG(st.st_mode):
                total += max(BLOCK, -(-st.st_size // BLOCK) * BLOCK)
            else:
                total += BLOCK
    return total


def _copy_tree(view: Path, into: Path) -> None:
    """Copy the built folder from the build's disk (``view``) to ``into`` on disk: folders,
    regular files (modes and times kept) and links (never followed); a pipe or a socket the
    build left is not copied. Nothing of the build runs any more, so nothing changes under it."""
    def unreadable(e: OSError) -> None:
        raise e
    for root, dirs, files in os.walk(view, onerror=unreadable):
        here = into / Path(root).relative_to(view)
        for name in dirs + files:
            src, dst = os.path.join(root, name), here / name
            st = os.lstat(src)
            if stat.S_ISDIR(st.st_mode):
                dst.mkdir(mode=0o755)
            elif stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(src), dst)
            elif stat.S_ISREG(st.st_mode):
                fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                try:
                    with open(fd, "rb", closefd=False) as r, open(dst, "xb") as w:
                        shutil.copyfileobj(r, w, 1 << 20)
                finally:
                    os.close(fd)
                os.chmod(dst, 0o755 if st.st_mode & 0o111 else 0o644)
                os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))


CACHE_ENV = settings.BOT_CACHE.name


def cache_dir() -> Path:
    """Where this machine keeps built bots and fetched bot versions (``ARENA_BOT_CACHE``;
    default ``~/.cache/shengji-arena/bots``): the same folder for ``arena match`` and a
    worker."""
    return Path(settings.BOT_CACHE.text() or Path.home() / ".cache" / "shengji-arena" / "bots")


def built(manifest: Manifest, cache: Path | None = None, *, policy: Any = None) -> Manifest:
    """``manifest`` as it plays once built: a bot without a ``build`` as it is; else its folder
    built once into ``cache`` (``cache_dir()``) under its name and content hash (an edit
    builds again; an unchanged bot is not rebuilt), with its ``pythonpath`` entries inside its
    folder following it. ``BuildFailed`` if the build fails."""
    if not manifest.build:
        return manifest
    cache = cache_dir() if cache is None else Path(cache)
    source = manifest.folder
    into = build_once(manifest, source, cache / "local" / f"{manifest.name}-"
                      f"{manifest.content_hash()}", policy=policy)
    return manifest.moved(into)


BUILT_MARK = ".arena-built"
"""The file a finished build leaves in its folder (``build_once``): the folder is whole; it
holds the bytes the folder takes (``tree_bytes``), which a cache's budget counts."""


def build_once(manifest: Manifest, source: Path, into: Path, *, policy: Any = None) -> Path:
    """``source`` built into ``into`` once per machine: a folder already built there (its
    ``BUILT_MARK``) is used as it is, else it is built (``build_bot``) beside it and moved into
    place, under a lock per folder, so the processes of one machine build it once between them.
    A failed build raises ``BuildFailed`` with its whole log kept at ``failed_log_path(into)``;
    the next call builds again."""
    into = Path(into).absolute()
    into.parent.mkdir(parents=True, exist_ok=True)
    with open(into.parent / f".{into.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (into / BUILT_MARK).exists():
            return into
        discard(into)
        tmp = into.parent / f".{into.name}.tmp"
        discard(tmp)
        try:
            result = build_bot(manifest, source, tmp, policy=policy)
        except BuildFailed as e:
            kept = None
            if e.log_path is not None and e.log_path.exists():
                kept = failed_log_path(into)
                os.replace(e.log_path, kept)
            raise BuildFailed(e.label, e.command, e.reason, e.log, kept) from None
        failed_log_path(into).unlink(missing_ok=True)
        os.chmod(tmp, 0o755)
        (tmp / BUILT_MARK).write_text(str(result.bytes + BLOCK), encoding="utf-8")
        os.chmod(tmp, 0o555)
        os.rename(tmp, into)
        return into


def failed_log_path(into: Path) -> Path:
    """Where the whole log of a failed build into ``into`` is kept: beside it, as
    ``NAME.failed-build.log`` (the folder itself is removed)."""
    return into.with_name(into.name + ".failed-build.log")


def _keep_failed_log(into: Path, text: str) -> Path | None:
    path = failed_log_path(into)
    try:
        path.unlink(missing_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError:
        return None
    return path


def discard(folder: Path) -> None:
    """Remove a built (read-only) folder, or a file."""
    folder = Path(folder)
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        folder.unlink()
        return
    if not folder.exists():
        return
    os.chmod(folder, 0o700)
    for root, dirs, _ in os.walk(folder):
        for d in dirs:
            if not os.path.islink(os.path.join(root, d)):
                os.chmod(os.path.join(root, d), 0o700)
    shutil.rmtree(folder)


def _own(folder: Path, uid: int | None, writable: bool) -> None:
    """Give every file of ``folder`` to ``uid`` (None: leave the owner; a root launcher gives
    it back to root when ``not writable``) with plain modes: writable by its owner, or
    read-only for all; set-id and sticky bits dropped. Links are never followed."""
    owner = uid if uid is not None else (0 if os.geteuid() == 0 and not writable else None)
    os.chmod(folder, 0o755)  # (a build may have closed its own folder: walk it all)
    for root, dirs, files in os.walk(folder):
        for name in [None, *dirs, *files]:
            path = root if name is None else os.path.join(root, name)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                if owner is not None:
                    os.chown(path, owner, owner, follow_symlinks=False)
                continue
            if owner is not None:
                os.chown(path, owner, owner, follow_symlinks=False)
            executable = stat.S_ISDIR(st.st_mode) or st.st_mode & 0o111
            mode = 0o555 if executable else 0o444
            mode |= 0o200 if writable else 0
            try:
                os.chmod(path, mode, follow_symlinks=False)
            except NotImplementedError:  # (an older C library: no race left to fear here)
                os.chmod(path, mode)


def _program(step: tuple[str, ...], folder: Path) -> str | None:
    """Why ``step``'s program cannot start (None: it can)."""
    program = step[0]
    if "/" in program:
        path = Path(program) if os.path.isabs(program) else folder / program
        found = path.is_file() and os.access(path, os.X_OK)
    else:
        found = shutil.which(program, path=PATH) is not None
    return None if found else f"cannot start {program!r}: No such file or directory"


SEED_SCRIPT = ('while [ "$1" != -- ]; do mkdir -p "$2" && cp -Rs "$1/." "$2/" || exit 125; '
               'shift 2; done; shift; exec "$@"')
"""Run in the build's sandbox before its step (``SEED_SCRIPT HOST INSIDE ... -- STEP...``):
each of the runtimes' seeds (``Runtime.seed``) made a private tree of links, in the private
``/tmp``, to read-only files under ``/usr`` (a step may add to it and remove from it, never
change what another build sees), then the step itself."""


def _run_step(manifest: Manifest, step: tuple[str, ...], folder: Path,
              sandbox: SandboxPolicy | None, uid, deadline: float, timeout: float,
              log: "_Log", disk: BuildDisk | None = None) -> str | None:
    """Run one build step in ``folder``; why it failed (None: it passed). The step runs under
    the bot's runtime and the one its program means (``referee.seats.runtimes.step_runtimes``):
    their binds, and the environment the arena sets for them (a JVM's flags, offline Go and
    Cargo); a runtime missing on this machine fails the step, naming its Debian package. With
    ``disk``, the step runs in the build's mount namespace, where ``folder`` is its disk; a
    step that fills it fails, whatever it exits with."""
    command = list(step)
    command[0] = resolve(command[0])  # python: the arena's interpreter; javac: OpenJDK 17's
    runtimes = step_runtimes(manifest, step)
    for runtime in runtimes:
        missing = runtime.missing(build=True)
        if missing is not None:
            return f"cannot run: {missing}"
    problem = _program(tuple(command), folder if disk is None else disk.view)
    if problem is not None:
        return problem
    filter_fd = cgroup = None
    # the protocol the bot is built against: the referee's own; a Python step gets the SDK
    binds, sdk_path = sdk_folders(runtimes)
    env: dict[str, str] = {**os.environ, PROTO_DIR_ENV: str(PROTOS)}
    if sdk_path:
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in sdk_path if p != ARENA_ROOT)
    if sandbox is not None:
        if uid is not None:
            cgroup = SeatCgroup.make(f"arena-build-{uid.uid}", sandbox)
        env = {}
        for runtime in runtimes:
            env.update(runtime.environment(sandbox.memory_mb, cgroup is not None, build=True))
        env.update({"PATH": PATH, "HOME": "/tmp", "LANG": "C.UTF-8", "TMPDIR": "/tmp",
                    PROTO_DIR_ENV: str(PROTOS)})
        if sdk_path:
            env["PYTHONPATH"] = os.pathsep.join(map(str, sdk_path))
        seeds = [pair for runtime in runtimes for pair in runtime.seeds()]
        if seeds:
            command = ["/bin/sh", "-c", SEED_SCRIPT, "seed",
                       *[path for pair in seeds for path in pair], "--", *command]
        filter_fd = seccomp_fd()
        command = sandbox_command(command, env=env, workdir=folder,
                                  folders=list(dict.fromkeys([PROTOS, *binds])),
                                  policy=sandbox, uid=None if uid is None else uid.uid,
                                  seccomp=filter_fd, cgroup=cgroup, writable=folder,
                                  runtimes=runtimes)
        if disk is not None:
            command = disk.enter() + command
        env = {"PATH": PATH}
    try:
        try:
            proc = subprocess.Popen(command, cwd=folder, env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    start_new_session=True,
                                    pass_fds=() if filter_fd is None else (filter_fd,))
        except OSError as e:
            return f"cannot start {command[0]!r}: {e.strerror}"
        finally:
            if filter_fd is not None:
                os.close(filter_fd)
        pump = threading.Thread(target=log.pump, args=(proc.stdout,), daemon=True,
                                name="build-log")
        pump.start()
        try:
            status = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            status = None
        try:  # what it left behind goes too (a sandbox: with its PID namespace)
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        if uid is not None:
            reap_uid(uid.uid)
        pump.join(timeout=5)
    finally:
        if cgroup is not None:
            cgroup.remove()
    if disk is not None and disk.full():
        log.add(f"\n[arena: the build filled its disk, {disk.limit // MB} MiB: its writes "
                "past it were refused]\n".encode())
        return f"wrote more than {disk.limit // MB} MiB (its disk limit)"
    if status is None:
        log.add(f"\n[arena: the build ran past {timeout:g} s and was killed]\n".encode())
        return f"ran past {timeout:g} s (the build's time limit) and was killed"
    if status == 0:
        return None
    if status < 0:
        return f"was killed by signal {-status}"
    said = f"exited with status {status}"
    if sandbox is not None and status > 128:
        said += f" (signal {status - 128} inside its sandbox)"
    return said


class _Log:
    """A build's output, bounded: the first and the last ``limit / 2`` bytes, and a line
    counting what was dropped between them."""

    def __init__(self, limit: int) -> None:
        self.half = limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0
        self.lock = threading.Lock()

    def add(self, chunk: bytes) -> None:
        with self.lock:
            room = self.half - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            self.tail += chunk
            if len(self.tail) > self.half:
                cut = len(self.tail) - self.half
                self.dropped += cut
                del self.tail[:cut]

    def pump(self, pipe) -> None:
        with pipe:
            while chunk := pipe.read1(65536):
                self.add(chunk)

    def text(self) -> str:
        with self.lock:
            gap = (f"\n[arena: {self.dropped} bytes of the build's output dropped here; a build "
                   f"log keeps {2 * self.half} bytes]\n".encode() if self.dropped else b"")
            return bytes(self.head + gap + self.tail).decode("utf-8", "replace")
