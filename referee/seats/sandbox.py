"""A sandbox per seat: the bot's command wrapped into a bubblewrap (``bwrap``) command line.

A sandboxed bot runs in new mount, PID, IPC, UTS, network, user and (where available) cgroup
namespaces: no network at all, its own ``/proc``, a minimal ``/dev``, private size-bounded tmpfs
``/tmp`` and ``/dev/shm`` (gone with the match), and read-only binds of its own folder (its
working directory), the folders its manifest's ``pythonpath`` may name
(``referee.seats.launch.sandbox_pythonpath``), the generated protocol package (a gRPC bot), the
Python SDK with the rules engine it carries (a Python bot: ``referee.seats.launch.sdk_folders``)
and the runtimes (``/usr``, the ``/lib*`` and ``/bin`` links, a few files of ``/etc``, the Python
the arena runs, for a Python bot or a program of unknown kind, and what the bot's runtime needs
besides: ``referee.seats.runtimes``, such as Java's ``/etc/java-17-openjdk``); nothing else of
the host. A gRPC bot's one way out is its own seat's socket, bound at ``/run/arena/seat.sock``;
a stdio bot has only its pipes (a Botzone bot also its manifest's ``data`` folder, read-only at
``/data``). Its environment is built from nothing (``ARENA_*``, ``PATH``, ``HOME=/tmp``,
``LANG``, its ``PYTHONPATH``; a Botzone bot's ``USER``; what its runtime's entry sets, such as a
JVM's ``JAVA_TOOL_OPTIONS``; bwrap adds ``PWD``). It has no capabilities, no new privileges, its
own session, dies with the referee, runs under a seccomp filter (``seccomp_program``: file locks
and inotify, which would let partners signal through a file both can read, and calls no bot
needs), and its limits (``SandboxPolicy``) are set with ``prlimit`` on the whole tree before it
starts (and, for a root launcher where the kernel offers it, a cgroup per seat bounds the tree's
memory and tasks, and gives it an equal share of the CPU and, with ``cpu_cores``, a cap:
``SeatCgroup``).

The uid: a launcher that is not root runs the sandbox as itself (bwrap maps it into the user
namespace). A root launcher gives each running seat its own unprivileged uid and gid,
``UID_BASE + n``, claimed with an exclusive ``flock`` on ``LOCK_DIR/arena-uid-<uid>.lock``
(held by the referee while the seat runs, dropped by the kernel if the referee dies) and never
while a process of that uid is alive; so seats of concurrent matches on one machine (any number of
referee processes) never share a uid, and ``RLIMIT_NPROC``, which counts per uid, is per seat.
As root, bwrap could not reach the runtimes under ``/root`` as that uid, so the outer bwrap
(root, every namespace but the user one, only CAP_SETUID/SETGID/SETPCAP kept) builds the
filesystem, ``setpriv`` drops to the seat's uid with every capability and the bounding set
cleared, and an inner bwrap adds the user namespace (and forbids any further one).

What a killed referee leaves (its seats' cgroups; any process of a seat uid that outlived it)
is found by the uid's lock, which the kernel dropped with it: ``sweep_seats`` removes the
leftovers of every uid nobody holds, and touches nothing of a held one.
"""

from __future__ import annotations

import fcntl
import functools
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, fields
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from house import settings

if TYPE_CHECKING:
    from referee.seats.runtimes import Runtime

SANDBOX_DIR = "/run/arena"
"""Where a gRPC seat's socket folder is bound inside its sandbox."""
DATA_DIR = "/data"
"""Where a Botzone bot's data folder is bound, read-only, inside its sandbox."""
SEAT_SOCKET = f"{SANDBOX_DIR}/seat.sock"
SEAT_ADDRESS = f"unix://{SEAT_SOCKET}"
UID_BASE = 64000
UID_SLOTS = 2000
"""Seat uids are ``UID_BASE .. UID_BASE + UID_SLOTS - 1`` (a root launcher only)."""
LOCK_DIR = Path("/run/arena-seats")
"""Where a root launcher's seat uid locks are: machine-wide, as the uids and cgroups they guard
are (a worker with a private ``/tmp`` still sees every other referee's locks), root's only."""
PATH = "/usr/local/bin:/usr/bin:/bin"
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl", "ca-certificates",
       "localtime", "nsswitch.conf")
"""The files and folders of ``/etc`` a sandbox sees (those present)."""
ROOT_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
KINDS = ("bubblewrap", "none")
UNSANDBOXED_ENV = settings.UNSANDBOXED.name
"""Set to "1" (by ``--unsandboxed``) for the referee processes of a season: bots unsandboxed."""
MB = 1024 * 1024
MIN_CPU_CORES, MAX_CPU_CORES = 0.01, 1024
"""The bounds of a seat's CPU cap (``SandboxPolicy.cpu_cores``), when it has one."""
CPU_PERIOD_US = 100_000
"""The period over which a seat's CPU cap is counted (the kernel's default)."""
SEAT_CPU_SHARES = 1024
SEAT_CPU_WEIGHT = 100
"""Every seat's CPU share, v1 ``cpu.shares`` and v2 ``cpu.weight`` (the kernel's defaults):
equal, however many processes, threads or sessions a seat runs."""


class SandboxUnavailable(RuntimeError):
    """bwrap cannot run here; the message says why and how to run without it."""


DEFAULT_PONDER_CORES = 0.1
"""A waiting seat's CPU: enough to read its events as they come, too little to search."""


@dataclass(frozen=True)
class SandboxPolicy:
    """The limits of one seat's sandbox. ``cpu_seconds`` is CPU time per process (a bot may
    not fork its way past it: ``processes`` bounds the tree, threads included); ``memory_mb``
    is each process's address space (RLIMIT_AS) and, where a root launcher can make the seat a
    cgroup, the whole tree's memory (and ``processes`` the tree's too); ``file_size_mb`` the largest file it may
    write, ``tmpfs_mb`` the size of each of its ``/tmp`` and ``/dev/shm``. ``cpu_cores``
    (where the seat's cgroup has the CPU controller) caps the whole tree's CPU at that many
    cores, a fraction allowed; 0, the default, sets no cap: every seat then has an equal share
    of the CPU when the seats want more than there is, and may use what the others leave idle
    (it may think on its opponents' time, never on their share). ``ponder_cores`` caps a seat
    while it waits for its turn (no pondering, as on Botzone, whose judge suspends a bot between
    its turns): a bot that thinks or spins on its opponents' time takes next to nothing from
    the seat whose clock runs, not even a core of its own beside it (two cores of one machine
    share caches and memory); 0 lifts that cap."""

    cpu_seconds: int = 600
    memory_mb: int = 2048
    processes: int = 256
    open_files: int = 256
    file_size_mb: int = 64
    tmpfs_mb: int = 64
    cpu_cores: float = 0.0
    ponder_cores: float = DEFAULT_PONDER_CORES

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in ("cpu_cores", "ponder_cores"):
                if not (isinstance(v, (int, float)) and not isinstance(v, bool) and (
                        v == 0 or MIN_CPU_CORES <= v <= MAX_CPU_CORES)):
                    raise ValueError(f"sandbox: field {f.name!r} = {v!r}: expected a number "
                                     f"of cores, a fraction allowed (unlike the other limits, "
                                     f"whole numbers): 0 for no cap, or {MIN_CPU_CORES} to "
                                     f"{MAX_CPU_CORES}")
                object.__setattr__(self, f.name, float(v))
            elif not (isinstance(v, int) and not isinstance(v, bool) and v >= 1):
                raise ValueError(f"sandbox: field {f.name!r} = {v!r}: expected a whole "
                                 "number, 1 or more")

    def to_dict(self) -> dict[str, float]:
        """The limits by name; ``cpu_cores`` only when it sets a cap and ``ponder_cores`` only
        when not the default (a policy without them reads as it did before the fields were
        added: a season's stored settings unchanged)."""
        out = asdict(self)
        if not self.cpu_cores:
            del out["cpu_cores"]
        if self.ponder_cores == DEFAULT_PONDER_CORES:
            del out["ponder_cores"]
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str = "sandbox") -> "SandboxPolicy":
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected a table of limits, got {data!r}")
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise ValueError(f"{where}: field {unknown[0]!r}: unknown; expected one of "
                             f"{', '.join(names)}")
        try:
            return cls(**data)
        except ValueError as e:
            raise ValueError(f"{where}: {str(e).removeprefix('sandbox: ')}") from None

    def prlimit(self, address_space_mb: int | None = None) -> list[str]:
        """The ``prlimit`` command prefix setting these limits (soft = hard, but CPU: the soft
        limit sends SIGXCPU, the hard one five seconds later SIGKILL). ``address_space_mb``
        (a runtime that reserves far more than it uses, in a seat whose cgroup bounds its
        memory: ``referee.seats.runtimes``) replaces ``memory_mb`` as ``RLIMIT_AS``."""
        address = self.memory_mb if address_space_mb is None else address_space_mb
        return ["prlimit", f"--cpu={self.cpu_seconds}:{self.cpu_seconds + 5}",
                f"--as={address * MB}", f"--nproc={self.processes}",
                f"--nofile={self.open_files}", f"--fsize={self.file_size_mb * MB}",
                "--core=0", "--"]


# -- the seccomp filter ------------------------------------------------------------------------
_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
EPERM, ENOSYS, EOPNOTSUPP = 1, 38, 95
_SYSCALLS = {  # x86_64 number: errno (0: "done", without doing it)
    73: 0,                                  # flock: a lock on a file partners both see
    221: 0,                                 # fadvise64: no evicting a shared file's pages
    27: EPERM, 451: ENOSYS,                 # mincore, cachestat: no looking at the page cache
    253: EPERM, 254: EPERM, 294: EPERM,     # inotify_init, inotify_add_watch, inotify_init1
    300: EPERM,                             # fanotify_init
    101: EPERM, 310: EPERM, 311: EPERM,     # ptrace, process_vm_readv/writev
    298: EPERM, 321: EPERM, 323: EPERM,     # perf_event_open, bpf, userfaultfd
    248: EPERM, 249: EPERM, 250: EPERM,     # add_key, request_key, keyctl
    425: ENOSYS, 426: ENOSYS, 427: ENOSYS,  # io_uring (libuv falls back)
    303: EPERM, 304: EPERM,                 # name_to_handle_at, open_by_handle_at
    246: EPERM, 320: EPERM, 175: EPERM, 313: EPERM, 176: EPERM,  # kexec, modules
}
_BY_ARGUMENT: dict[int, tuple[int, str, tuple[int, ...] | int, int]] = {
    # x86_64 number: (argument, "eq" values or "set" bits, errno)
    72: (1, "eq", (5, 6, 7, 36, 37, 38), 0),    # fcntl F_GETLK, F_SETLK(W), F_OFD_*: locks
    28: (2, "eq", (20, 21), 0),                 # madvise MADV_COLD, MADV_PAGEOUT: eviction
    327: (5, "set", 0x8, EOPNOTSUPP),           # preadv2 RWF_NOWAIT: "is this page cached?"
    328: (5, "set", 0x8, EOPNOTSUPP),           # pwritev2 RWF_NOWAIT
}


def seccomp_program() -> bytes | None:
    """The seccomp filter (classic BPF, as ``bwrap --seccomp`` reads it) every sandboxed bot
    runs under, on x86_64 (None elsewhere). Every file a seat can read (its runtime, a folder
    two partners share) is a file its partner can read too, so nothing done to such a file may
    be seen from another seat: file locks (``flock``, ``fcntl`` lock commands) succeed without
    locking anything, inotify is refused, and the page cache can neither be emptied of a file
    (``fadvise``, ``madvise`` cold or page-out: done, without doing it) nor looked at
    (``mincore``, ``cachestat``, reads and writes with RWF_NOWAIT). A few calls no bot needs
    (ptrace, bpf, keyrings, io_uring, modules...) are refused; another ABI (x32, i386) is
    refused whole."""
    if os.uname().machine != "x86_64":
        return None
    code: list[tuple[int, int, int, int]] = [
        (_LD_ABS, 0, 0, 4), (_JEQ, 1, 0, _AUDIT_ARCH_X86_64), (_RET, 0, 0, _RET_ERRNO | EPERM),
        (_LD_ABS, 0, 0, 0), (_JGE, 0, 1, _X32_BIT), (_RET, 0, 0, _RET_ERRNO | EPERM)]
    for nr, errno in _SYSCALLS.items():
        code += [(_JEQ, 0, 1, nr), (_RET, 0, 0, _RET_ERRNO | errno)]
    for nr, (arg, kind, values, errno) in _BY_ARGUMENT.items():
        block = [(_LD_ABS, 0, 0, 16 + 8 * arg)]  # the argument's low 32 bits
        if kind == "eq":
            assert isinstance(values, tuple)  # "eq": the values
            for v in values:
                block += [(_JEQ, 0, 1, v), (_RET, 0, 0, _RET_ERRNO | errno)]
        else:
            assert isinstance(values, int)  # "set": the bits
            block += [(_JSET, 0, 1, values), (_RET, 0, 0, _RET_ERRNO | errno)]
        block.append((_RET, 0, 0, _RET_ALLOW))  # (A now holds the argument: no falling on)
        code += [(_JEQ, 0, len(block), nr), *block]
    code.append((_RET, 0, 0, _RET_ALLOW))
    return b"".join(struct.pack("<HBBI", *ins) for ins in code)


def seccomp_fd() -> int | None:
    """A file descriptor holding ``seccomp_program()`` for one bwrap to read (the caller
    passes it to the child and closes it), or None where there is no filter."""
    program = seccomp_program()
    if program is None:
        return None
    fd = os.memfd_create("arena-seccomp", os.MFD_CLOEXEC)
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


# -- the seat's cgroup (a root launcher, where the kernel offers one) --------------------------
CGROUP_FS = Path("/sys/fs/cgroup")


class SeatCgroup:
    """The memory, process and CPU bounds of one seat's whole tree: a cgroup per seat (v1
    memory and pids hierarchies, and the cpu one and a separate cpuacct one where mounted; or
    v2 with the memory and pids controllers, and cpu where it can be enabled), made by a root
    launcher and removed at the seat's end. ``enter`` is the command prefix that puts the
    sandbox into it before it starts. The CPU controller gives every seat the same share
    (``SEAT_CPU_SHARES``, ``SEAT_CPU_WEIGHT``), which no child, thread or new session of the
    seat multiplies (a session outside any cgroup would be a scheduler autogroup of its own), and
    ``policy.cpu_cores`` caps it. Without a cgroup the limits are only per process
    (``prlimit``); without the CPU controller, a seat's tree has no CPU bound but
    ``cpu_seconds`` per process."""

    def __init__(self, kind: str, dirs: list[Path],
                 policy: "SandboxPolicy | None" = None) -> None:
        self.kind = kind
        self.dirs = dirs
        self._cap: Path | None = None  # its cpu.cfs_quota_us (v1) or cpu.max (v2), if any
        for d in dirs:
            for name in ("cpu.cfs_quota_us", "cpu.max"):
                if (d / name).exists():
                    self._cap = d / name
        self._caps: dict[bool, bytes] = {}
        if policy is not None:
            waiting = min(c for c in (policy.cpu_cores, policy.ponder_cores) if c) \
                if policy.cpu_cores or policy.ponder_cores else 0.0
            for acting, cores in ((True, policy.cpu_cores), (False, waiting)):
                quota = _cpu_quota_us(cores)
                self._caps[acting] = (str(quota or -1) if kind == "v1" else
                                      f"{quota or 'max'} {CPU_PERIOD_US}").encode()
        self._cap_fd: int | None = None
        self._written: bytes | None = None  # the cap written last

    def turn(self, acting: bool) -> None:
        """Cap the seat as the seat to act (``policy.cpu_cores``), or as a seat waiting for its
        turn (``policy.ponder_cores`` too). Nothing without the CPU controller. Twice a
        decision, between an answer and the next request: the cap's file is kept open (a
        microsecond a write, against 14 for opening it each time) and written only when the
        cap changes."""
        if self._cap is None or not self._caps or self._caps[acting] == self._written:
            return
        try:
            if self._cap_fd is None:
                self._cap_fd = os.open(self._cap, os.O_WRONLY | os.O_CLOEXEC)
            os.write(self._cap_fd, self._caps[acting])
            self._written = self._caps[acting]
        except OSError:  # (removed under it: the seat is over)
            pass

    @classmethod
    def make(cls, name: str, policy: "SandboxPolicy") -> "SeatCgroup | None":
        if os.geteuid() != 0:
            return None
        memory = str(policy.memory_mb * MB)
        v1 = [CGROUP_FS / "memory", CGROUP_FS / "pids"]
        made: list[Path] = []
        try:
            if (v1[0] / "memory.limit_in_bytes").exists() and (v1[1] / "tasks").exists():
                dirs = [v1[0] / name, v1[1] / name]
                for d in dirs:
                    _afresh(d)
                    made.append(d)
                (dirs[0] / "memory.limit_in_bytes").write_text(memory)
                if (dirs[0] / "memory.memsw.limit_in_bytes").exists():
                    (dirs[0] / "memory.memsw.limit_in_bytes").write_text(memory)
                (dirs[1] / "pids.max").write_text(str(policy.processes))
                return cls("v1", dirs + _cpu_v1(name, policy), policy)
            enabled = (CGROUP_FS / "cgroup.subtree_control").read_text().split()
            if "memory" in enabled and "pids" in enabled:
                _enable_cpu_v2(enabled)
                d = CGROUP_FS / name
                _afresh(d)
                made.append(d)
                (d / "memory.max").write_text(memory)
                if (d / "memory.swap.max").exists():
                    (d / "memory.swap.max").write_text("0")
                (d / "pids.max").write_text(str(policy.processes))
                _cpu_v2(d, policy)
                return cls("v2", [d], policy)
        except OSError:
            cls("", made).remove()
            return None
        return None

    def enter(self) -> list[str]:
        """The command prefix that moves its process into the cgroup before the program it
        runs starts (the first process into a new cgroup waits for the kernel: the launcher
        does not wait with it)."""
        script = " && ".join(f"echo $$ > {d}/cgroup.procs" for d in self.dirs)
        return ["/bin/sh", "-c", f'{script} && exec "$@"', "sh"]

    def remove(self) -> None:
        if self._cap_fd is not None:
            os.close(self._cap_fd)
            self._cap_fd = None
        for d in self.dirs:
            try:
                d.rmdir()
            except OSError:
                pass


def _cpu_quota_us(cores: float) -> int | None:
    """A cap of ``cores`` in microseconds per ``CPU_PERIOD_US`` (None: 0, no cap)."""
    if not cores:
        return None
    return max(1000, round(cores * CPU_PERIOD_US))  # (the kernel's least: 1 ms)


def _cpu_roots_v1() -> list[Path]:
    """The v1 hierarchies of the CPU controllers mounted here: ``cpu`` and, when it is
    mounted apart (not with ``cpu``), ``cpuacct`` (the seat's CPU time, counted)."""
    roots = []
    if (CGROUP_FS / "cpu" / "cpu.shares").exists():
        roots.append(CGROUP_FS / "cpu")
    acct = CGROUP_FS / "cpuacct"
    if (acct / "cpuacct.usage").exists() and all(acct.resolve() != r.resolve() for r in roots):
        roots.append(acct)
    return roots


def _cpu_v1(name: str, policy: "SandboxPolicy") -> list[Path]:
    """The seat's folders in the v1 CPU hierarchies, made and set: its equal share and its cap;
    none where there are no such hierarchies, or they refuse (the seat runs without)."""
    made: list[Path] = []
    try:
        for root in _cpu_roots_v1():
            _afresh(root / name)
            made.append(root / name)
        if made and (made[0] / "cpu.shares").exists():
            (made[0] / "cpu.shares").write_text(str(SEAT_CPU_SHARES))
            (made[0] / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
            (made[0] / "cpu.cfs_quota_us").write_text(str(_cpu_quota_us(policy.cpu_cores) or -1))
    except OSError:
        SeatCgroup("v1", made).remove()
        return []
    return made


def _cpu_v2(d: Path, policy: "SandboxPolicy") -> None:
    """The v2 seat cgroup ``d``'s equal share and cap, where it has the cpu controller (a
    refusal leaves the seat without them, its memory and process bounds kept)."""
    if not (d / "cpu.weight").exists():
        return
    try:
        (d / "cpu.weight").write_text(str(SEAT_CPU_WEIGHT))
        (d / "cpu.max").write_text(f"{_cpu_quota_us(policy.cpu_cores) or 'max'} {CPU_PERIOD_US}")
    except OSError:
        pass


def _enable_cpu_v2(enabled: list[str]) -> None:
    """Enable the v2 ``cpu`` controller for the seats' cgroups where the root offers it but has
    not enabled it for its children; where that is refused, seats run without it."""
    if "cpu" in enabled:
        return
    try:
        if "cpu" in (CGROUP_FS / "cgroup.controllers").read_text().split():
            (CGROUP_FS / "cgroup.subtree_control").write_text("+cpu")
    except OSError:
        pass


def _afresh(d: Path, wait_s: float = 2.0) -> None:
    """Make the cgroup ``d`` new. One left by a seat whose launcher died (a referee killed
    mid-match) keeps its limits and its charges: a lower memory and swap limit there makes the
    new, higher one unwritable, and the seat would run without its cgroup. Its processes, if
    any are left, belong to that dead seat (the seat's uid is held now): they are killed."""
    if d.exists():
        deadline = time.monotonic() + wait_s
        while True:
            try:
                d.rmdir()
                break
            except OSError:
                pids = [int(x) for x in (d / "cgroup.procs").read_text().split()]
                if not pids or time.monotonic() > deadline:
                    raise
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                time.sleep(0.02)  # until the killed have left (bounded by ``wait_s``)
    d.mkdir()


# -- the seat's uid ---------------------------------------------------------------------------
class SeatUid:
    """A uid (and gid of the same number) held for one running seat; ``release()`` once no
    process of it is left."""

    def __init__(self, uid: int, fd: int) -> None:
        self.uid = uid
        self._fd = fd

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # the flock goes with it
            self._fd = -1

    def __repr__(self) -> str:
        return f"SeatUid({self.uid})"


def claim_uid() -> SeatUid | None:
    """A free seat uid for a root launcher (None when the launcher is not root).

    A uid with processes (a dead referee's leftover, until a sweep) is passed over without
    taking its lock: a claimer that held it even for a look would make a sweep take the
    leftover for a live seat's."""
    if os.geteuid() != 0:
        return None
    leftovers = processes_by_uid()  # (one pass over /proc)
    for uid in range(UID_BASE, UID_BASE + UID_SLOTS):
        if uid in leftovers:
            continue
        held = try_uid(uid)
        if held is None:
            continue
        if uid_processes(uid):  # a leftover since the pass above: not this one
            held.release()
            continue
        return held
    raise SandboxUnavailable(f"all {UID_SLOTS} seat uids from {UID_BASE} are in use")


def try_uid(uid: int) -> SeatUid | None:
    """The seat uid ``uid``'s lock taken without waiting, or None while another process (a
    live seat's referee, a build) holds it."""
    LOCK_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = LOCK_DIR / f"arena-uid-{uid}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return SeatUid(uid, fd)


def uid_processes(uid: int) -> list[int]:
    """The host's processes whose real uid is ``uid`` (read from /proc)."""
    return processes_by_uid(uid, uid + 1).get(uid, [])


def processes_by_uid(low: int = UID_BASE,
                     high: int = UID_BASE + UID_SLOTS) -> dict[int, list[int]]:
    """The host's processes whose real uid is in ``low .. high - 1``, by uid (one pass over
    /proc)."""
    out: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", "rb") as f:
                for line in f:
                    if line.startswith(b"Uid:"):
                        uid = int(line.split()[1])
                        if low <= uid < high:
                            out.setdefault(uid, []).append(int(entry.name))
                        break
        except (OSError, ValueError, IndexError):
            continue
    return out


# -- what a killed referee leaves: its seats' cgroups and processes -----------------------------
SEAT_CGROUP = re.compile(r"arena-(?:seat|build)-(\d+)")
"""The names of the cgroups of seats (``launch``) and of builds (``build``): the uid's own."""


def seat_cgroups() -> dict[str, list[Path]]:
    """The seat and build cgroups there are, by name (a v1 one has a folder in the memory and
    in the pids hierarchy, and in the cpu and cpuacct ones where mounted; a v2 one a single
    folder)."""
    out: dict[str, list[Path]] = {}
    roots: list[Path] = []
    for root in (CGROUP_FS / "memory", CGROUP_FS / "pids", CGROUP_FS / "cpu",
                 CGROUP_FS / "cpuacct", CGROUP_FS):
        if all(root.resolve() != r.resolve() for r in roots):  # (cpu,cpuacct mounted as one)
            roots.append(root)
    for root in roots:
        try:
            entries = list(os.scandir(root))
        except OSError:
            continue
        for entry in entries:
            m = SEAT_CGROUP.fullmatch(entry.name)
            if m and UID_BASE <= int(m.group(1)) < UID_BASE + UID_SLOTS \
                    and entry.is_dir(follow_symlinks=False):
                out.setdefault(entry.name, []).append(Path(entry.path))
    return out


def sweep_seats(wait_s: float = 5.0) -> dict[str, int]:
    """Remove what seats of dead referees (and builds of dead workers) left: a seat uid whose
    lock nobody holds (the kernel dropped it with the process that held it) belongs to no live
    seat, so any process of that uid or in its cgroups is killed and its cgroups are removed,
    with the lock held meanwhile (no seat claims the uid until the sweep is done). A uid whose
    lock is held is a live seat's: nothing of it is touched. Returns ``{"cgroups": removed,
    "processes": killed}``; a launcher that is not root has no seat uids (nothing to do)."""
    done = {"cgroups": 0, "processes": 0}
    if os.geteuid() != 0:
        return done
    groups = seat_cgroups()
    by_uid: dict[int, list[str]] = {}
    for name in groups:
        m = SEAT_CGROUP.fullmatch(name)
        assert m is not None  # seat_cgroups() gives only the names it matches
        by_uid.setdefault(int(m.group(1)), []).append(name)
    for uid in sorted(set(by_uid) | set(processes_by_uid())):
        held = try_uid(uid)
        if held is None:  # a live seat's
            continue
        older = _older_lock(uid)
        if older is None:  # a live seat of an earlier release's referee
            held.release()
            continue
        try:
            dirs = [d for name in by_uid.get(uid, []) for d in groups[name]]
            done["processes"] += _kill_seat(uid, dirs, wait_s)
            for name in by_uid.get(uid, []):
                for d in groups[name]:
                    try:
                        d.rmdir()
                    except FileNotFoundError:
                        pass
                    except OSError:  # a process stuck in the kernel: the next sweep
                        break
                else:
                    done["cgroups"] += 1
        finally:
            held.release()
            if older >= 0:
                os.close(older)
    return done


OLDER_LOCK_DIR = Path("/tmp")
"""Where earlier releases kept the seat uid locks: a referee of one still running on this
machine (a rolling upgrade, another checkout's run) holds its seats' uids there."""


def _older_lock(uid: int) -> int | None:
    """The uid's lock in ``OLDER_LOCK_DIR`` taken without waiting (its descriptor; -1 when
    there is no such file, or it is ``LOCK_DIR`` itself), or None while it is held."""
    if OLDER_LOCK_DIR == LOCK_DIR:
        return -1
    try:
        fd = os.open(OLDER_LOCK_DIR / f"arena-uid-{uid}.lock",
                     os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        return -1
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _kill_seat(uid: int, cgroups: list[Path], wait_s: float) -> int:
    """SIGKILL every process of ``uid`` and in ``cgroups`` (the uid's lock held) until none is
    left or ``wait_s`` has passed; how many were killed."""
    killed: set[int] = set()
    deadline = time.monotonic() + wait_s
    while True:
        pids = set(uid_processes(uid))
        for d in cgroups:
            try:
                pids.update(int(x) for x in (d / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                pass
        if not pids or time.monotonic() > deadline:
            return len(killed)
        for pid in pids - killed:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except ProcessLookupError:
                pass
        time.sleep(0.01)  # until the killed have left, and their parents reaped them


# -- the command line -------------------------------------------------------------------------
def _python_roots() -> list[Path]:
    """The folders the arena's Python needs: its venv (``sys.prefix``) and the installation
    its interpreter resolves into (``sys.base_prefix``), unless under /usr."""
    roots = []
    for p in (sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(
            os.path.realpath(sys.executable)))):
        for q in (Path(p), Path(os.path.realpath(p))):
            if q not in roots and not _under(q, [Path("/usr")]):
                roots.append(q)
    return roots


def _under(path: Path, roots: list[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def _runtime_args() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr", "--perms", "0755", "--dir", "/etc"]
    for name in ROOT_LINKS:
        p = Path("/") / name
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            args += ["--ro-bind", str(p), str(p)]
    for name in ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return args


def _binds(folders: list[Path], writable: frozenset[Path] = frozenset()) -> list[str]:
    """Read-only binds of ``folders`` at their own paths (read-write for those in
    ``writable``), parents first, each parent folder made first (mode 0755: bwrap would make it
    0700, which the seat's uid cannot cross)."""
    args: list[str] = []
    made: set[Path] = {Path("/"), Path("/usr"), Path("/etc"), Path("/tmp")}
    for folder in sorted(set(folders), key=lambda p: (len(p.parts), str(p))):
        for parent in reversed(folder.parents):
            if parent not in made:
                args += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        args += ["--bind" if folder in writable else "--ro-bind", str(folder), str(folder)]
        made.add(folder)
    return args


def sandbox_command(command: list[str], *, env: dict[str, str], workdir: Path,
                    folders: list[Path], policy: SandboxPolicy, uid: int | None = None,
                    socket_dir: Path | None = None, seccomp: int | None = None,
                    env_fd: int | None = None, cgroup: SeatCgroup | None = None,
                    writable: Path | None = None, data_dir: Path | None = None,
                    runtimes: "Sequence[Runtime] | None" = None) -> list[str]:
    """The command line that runs ``command`` sandboxed: in ``workdir`` with exactly ``env``,
    ``folders`` (its own, its pythonpath, the protocol package) bound read-only,
    ``socket_dir`` (a gRPC seat's socket folder) at ``/run/arena``, as ``uid`` (a root
    launcher; None: as the launcher), under ``policy``'s limits and the seccomp filter read from
    file descriptor ``seccomp`` (``seccomp_fd()``), if any. With ``env_fd`` (``args_fd(
    environment_args(env))``), bwrap reads the environment from it: the seat's token is then in
    no process's command line on the host. With ``cgroup``, the whole tree starts in it. With
    ``writable`` (a bot's build: its folder, which must be ``workdir``), that one folder is
    bound read-write; a bot's own run never passes it. ``data_dir`` (a Botzone bot's data
    folder) is bound read-only at ``/data``. ``runtimes`` (``referee.seats.runtimes``: the
    bot's, or a build step's) adds what they need read-only (Java: ``/etc/java-17-openjdk``),
    binds the arena's Python only for those that use it, and gives a runtime that reserves
    more address space than it uses a larger ``RLIMIT_AS`` where ``cgroup`` bounds its memory;
    None: the arena's Python bound and ``memory_mb`` as ``RLIMIT_AS``, as for any program."""
    if writable is not None and Path(writable) != Path(workdir):
        raise ValueError(f"sandbox: the writable folder {writable} must be the working "
                         f"directory {workdir}")
    filtered = [] if seccomp is None else ["--seccomp", str(seccomp)]
    tmpfs = str(policy.tmpfs_mb * MB)
    folders = [Path(workdir), *map(Path, folders)]
    python = _python_roots() if runtimes is None or any(r.arena_python for r in runtimes) \
        else []
    extra = [p for r in runtimes or () for p in r.bind_paths()]
    address = None if not runtimes else max(
        r.address_space_mb(policy.memory_mb, cgroup is not None) for r in runtimes)
    # the bot's folders are bound at their paths; the Python installation too (its venv's
    # symlinks point into it)
    # the private mounts first: a folder under /tmp (a test's) is bound over the tmpfs
    fs = ["--proc", "/proc", "--dev", "/dev",
          "--perms", "1777", "--size", tmpfs, "--tmpfs", "/tmp",
          "--perms", "1777", "--size", tmpfs, "--tmpfs", "/dev/shm"]
    rw = frozenset() if writable is None else frozenset({Path(writable)})
    fs += _runtime_args() + _binds([f for f in folders + python + extra
                                    if not _under(f, [Path("/usr")])], rw)
    if socket_dir is not None:
        fs += ["--perms", "0755", "--dir", "/run", "--ro-bind", str(socket_dir), SANDBOX_DIR]
    if data_dir is not None:
        fs += ["--ro-bind", str(data_dir), DATA_DIR]
    fs += ["--remount-ro", "/dev", "--remount-ro", "/"]
    environ = environment_args(env) if env_fd is None else ["--args", str(env_fd)]
    common = ["--die-with-parent", "--new-session", "--chdir", str(workdir)]
    prefix = ([] if cgroup is None else cgroup.enter()) + policy.prlimit(address)
    if uid is None:
        return prefix + [
            "bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
            *common, *fs, *environ, *filtered, "--", *command]
    return prefix + [
        "bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try", "--cap-drop", "ALL", "--cap-add", "CAP_SETUID",
        "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP", *common, *fs, *environ, "--",
        "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
        "--bounding-set=-all", "--",
        "bwrap", "--unshare-user", "--disable-userns", "--die-with-parent", "--dev-bind", "/", "/",
        "--chdir", str(workdir), *filtered, "--", *command]


def environment_args(env: dict[str, str]) -> list[str]:
    """bwrap's options for exactly the environment ``env``."""
    out = ["--clearenv"]
    for k, v in env.items():
        out += ["--setenv", k, v]
    return out


def args_fd(args: list[str]) -> int:
    """A file descriptor holding ``args`` as ``bwrap --args FD`` reads them (NUL-terminated),
    for one bwrap to read; the caller passes it to the child and closes it."""
    fd = os.memfd_create("arena-args", os.MFD_CLOEXEC)
    os.write(fd, b"".join(a.encode() + b"\0" for a in args))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@functools.cache
def sandbox_problem() -> str | None:
    """Why bwrap cannot sandbox a bot here (None: it can). Found once per process, by running
    ``true`` sandboxed the way a seat would be."""
    for tool in ("bwrap", "prlimit") + (("setpriv",) if os.geteuid() == 0 else ()):
        if shutil.which(tool) is None:
            return (f"{tool} is not installed (Debian: apt-get install "
                    f"{'bubblewrap' if tool == 'bwrap' else 'util-linux'}; `make test` and "
                    "`make demo` install it)")
    uid = claim_uid()
    fd = seccomp_fd()
    try:
        cmd = sandbox_command(["true"], env={"PATH": PATH}, workdir=Path("/usr"), folders=[],
                              policy=SandboxPolicy(), uid=None if uid is None else uid.uid,
                              seccomp=fd)
        try:
            done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=30, pass_fds=() if fd is None else (fd,))
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"bwrap did not run: {e}"
    finally:
        if uid is not None:
            uid.release()
        if fd is not None:
            os.close(fd)
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip()[-300:]
        return f"bwrap cannot make a sandbox here (user namespaces refused?): {why}"
    return None


def require_sandbox() -> None:
    """Raise ``SandboxUnavailable`` (saying how to play without it) unless bwrap works."""
    problem = sandbox_problem()
    if problem is not None:
        raise SandboxUnavailable(f"bots cannot be sandboxed: {problem}; to play them "
                                 "unsandboxed anyway, with the referee's rights and the whole "
                                 "host in reach, pass --unsandboxed")


def policy_of(value: Any) -> SandboxPolicy | None:
    """A match's sandbox setting: a policy, a dict of limits, "none" (unsandboxed) or None
    (the default policy)."""
    if value is None:
        return SandboxPolicy()
    if value == "none":
        return None
    if isinstance(value, SandboxPolicy):
        return value
    return SandboxPolicy.from_dict(value)
