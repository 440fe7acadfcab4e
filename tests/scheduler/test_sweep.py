"""What killed workers and referees leave on a machine is swept (``scheduler.sweep``), and
nothing of a live one's is: seat cgroups and seat-uid processes (by the seat uid's lock), a
match's working folder and a metrics folder (by the lock held in each), a referee's socket
folders and a worker's stop file (by their pid).

Real processes: a real ``arena worker`` (Celery, Redis, PostgreSQL) playing a real match between
the sandboxed sample bots, killed with SIGKILL together with its referee; a process standing in
for a live referee and worker. Other test runs may share the machine, and their workers sweep
too (any leftover of a dead process is theirs to remove): every assertion is about this test's
own match, pids, uids and folders; the folders that go to the temporary folder (working,
metrics, stop file) go to a private one (``TMPDIR``), which only this test's sweeps look at, so
that those counts are this test's; the referee's socket folders (always in /tmp) and the seat
uids' leftovers are asserted gone, whoever swept them, and a seat uid is looked at with its lock
held (so that no other run's new seat is mistaken for a leftover).
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from league_helpers import (BOTS, REDIS_URL, Worker, env, flush_redis, season_file,
                            unique, wait_for)

from conftest import ROOT
from referee.match.socket_folders import SOCKETS_PREFIX, pid_gone
from referee.seats.sandbox import (LOCK_DIR, OLDER_LOCK_DIR, UID_BASE, UID_SLOTS, SandboxPolicy,
                                   SeatCgroup, sandbox_problem, seat_cgroups, try_uid,
                                   uid_processes)
from scheduler.execute import MATCH_LOCK, STOP_FILE_PREFIX
from scheduler.sweep import KINDS, METRICS_LOCK

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or sandbox_problem() is not None,
                                reason="seats of their own uid: a root launcher with bwrap")


def _has_seat_cgroups() -> tuple[bool, bool]:
    """Whether seats get cgroups here, and whether those have the CPU controller."""
    probe = SeatCgroup.make(f"arena-seat-probe-{os.getpid()}", SandboxPolicy())
    if probe is None:
        return False, False
    cpu = any((d / f).exists() for d in probe.dirs for f in ("cpu.shares", "cpu.weight"))
    probe.remove()
    return True, cpu


CGROUPS, CPU_CGROUPS = _has_seat_cgroups()


# -- processes, uids, folders -----------------------------------------------------------------
def _processes() -> dict[int, tuple[int, int, bytes]]:
    """Every process: pid -> (parent pid, real uid, command line)."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            status = Path(f"/proc/{name}/status").read_text()
            cmd = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        try:
            out[int(name)] = (int(fields["PPid"]), int(fields["Uid"].split()[0]), cmd)
        except (KeyError, ValueError, IndexError):
            continue
    return out


def _descends(procs, pid: int, ancestor: int) -> bool:
    while pid > 1 and pid in procs:
        pid = procs[pid][0]
        if pid == ancestor:
            return True
    return False


def _cgroup_dirs(uid: int) -> list[Path]:
    return seat_cgroups().get(f"arena-seat-{uid}", [])


def _procs_in(d: Path) -> list[str]:
    try:
        return (d / "cgroup.procs").read_text().split()
    except OSError:
        return []


def _in_play(match_id: str) -> dict:
    """The referee of ``match_id`` (its command line names the match's working folder) with
    its four seats running sandboxed, each as a seat uid and (where there are seat cgroups) in
    its cgroup; {} until then."""
    procs = _processes()
    referees = [p for p, (parent, _, cmd) in procs.items()
                if b"referee.serve" in cmd and f"arena-{match_id}-".encode() in cmd
                and b"referee.serve" not in procs.get(parent, (0, 0, b""))[2]]
    for ref in referees:
        uids = {uid for p, (_, uid, _) in procs.items()
                if UID_BASE <= uid < UID_BASE + UID_SLOTS and _descends(procs, p, ref)}
        groups = {uid: _cgroup_dirs(uid) for uid in uids}
        if len(uids) == 4 and (not CGROUPS or all(
                dirs and all(_procs_in(d) for d in dirs) for dirs in groups.values())):
            parent = procs[ref][0]  # a prestarted referee's fork, or the pool's own child
            prestarted = b"referee.prestarted" in procs.get(parent, (0, 0, b""))[2]
            return {"referee": ref, "prestarted": parent if prestarted else None,
                    "pool": procs[parent][0] if prestarted else parent, "uids": sorted(uids),
                    "cgroups": [d for dirs in groups.values() for d in dirs]}
    return {}


def _working_folders(tmp: Path, match_id: str) -> list[Path]:
    return list(tmp.glob(f"arena-{match_id}-*"))


def _stop_file(tmp: Path, pid: int) -> Path:
    return tmp / f"{STOP_FILE_PREFIX}{pid}.stop"


def _said(summary: str) -> dict[str, int]:
    """The counts in a sweep's summary ("4 seat cgroups, 1 stop file"), by kind."""
    names = {name: kind for kind, pair in KINDS.items() for name in pair}
    out = {}
    for part in summary.split(", "):
        n, _, name = part.partition(" ")
        out[names[name]] = int(n)
    return out


def _socket_folders(pid: int) -> list[Path]:
    return list(Path("/tmp").glob(f"{SOCKETS_PREFIX}{pid}-*"))


def _uid_left(uid: int, known: list[Path] = ()) -> tuple[list[Path], list[int]] | None:
    """The cgroups and processes of seat uid ``uid`` now (its cgroups as the sweep finds them,
    and those of ``known`` still there), looked at with its lock held (None: a live seat of
    another run holds it, here or where earlier releases kept the locks: nothing of it is a
    leftover)."""
    held = try_uid(uid)
    if held is None:
        return None
    older = OLDER_LOCK_DIR / f"arena-uid-{uid}.lock"
    fd = os.open(older, os.O_RDONLY) if OLDER_LOCK_DIR != LOCK_DIR and older.exists() else -1
    try:
        if fd >= 0:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return None
        found = _cgroup_dirs(uid)
        return found + [d for d in known if d.exists() and d not in found], uid_processes(uid)
    finally:
        held.release()
        if fd >= 0:
            os.close(fd)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _metrics_folder(tmp: Path) -> Path:
    """The one metrics folder in ``tmp`` (a worker's private TMPDIR: its own). Not read from
    the worker's /proc environ: Celery rewrites its command line (setproctitle) over it."""
    folders = list(tmp.glob("arena-metrics-*"))
    assert len(folders) == 1, folders
    return folders[0]


# -- a worker and its referee killed mid-match --------------------------------------------------
def test_a_worker_and_referee_killed_mid_match_leave_nothing_once_a_worker_starts(tmp_path, pg):
    """``arena worker`` playing a match of the sandboxed sample bots, told to stop (so its stop
    file is made; a long grace keeps the match playing) and then killed outright with its
    referee, as a stop that timed out ends: the next worker's start sweeps everything away."""
    from scheduler.league import open_season
    from scheduler.season import load_season
    from scheduler.store import Store
    from scheduler.tasks import make_app

    flush_redis()
    name = unique("sweep")
    path = season_file(tmp_path, name, [BOTS / "greedy", BOTS / "random"], deal_sets=1,
                       deals_per_set=60)
    store = Store(pg)
    open_season(load_season(path), store, workdir=tmp_path / "checks", check=False)
    match_id = store.pages.matches(name)[0].id
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    first = Worker(pg, tmp_path / "first.log", lease=3,
                   extra_env={"TMPDIR": str(tmp), "ARENA_STOP_GRACE_S": "600",
                              "ARENA_METRICS_PORT": str(_free_port())})
    second = None
    try:
        first.wait_ready()
        main = first.proc.pid
        metrics = _metrics_folder(tmp)
        make_app(REDIS_URL).send_task("arena.play_match", args=[match_id], queue="arena")
        playing = wait_for(lambda: _in_play(match_id), 60, "the match under way, its four "
                           "seats sandboxed")
        referee, pool, uids = playing["referee"], playing["pool"], playing["uids"]
        assert pool != main and _processes()[pool][0] == main  # the worker's pool process
        os.kill(main, signal.SIGTERM)  # told to stop: its stop file
        stop = _stop_file(tmp, main)
        wait_for(stop.exists, 30, "the worker's stop file")
        # what the match holds now, and will leave
        works, sockets = _working_folders(tmp, match_id), _socket_folders(referee)
        assert len(works) == 1 and (works[0] / MATCH_LOCK).exists() and len(sockets) == 1
        assert (metrics / METRICS_LOCK).exists()
        assert not pid_gone(referee)  # (still playing: the grace is long)

        first.kill9()  # the worker's main and pool processes
        os.kill(referee, signal.SIGKILL)
        prestarted = playing["prestarted"]
        assert prestarted is not None  # (the worker forks its referees from one started ahead)
        wait_for(lambda: pid_gone(referee) and pid_gone(pool) and pid_gone(prestarted), 30,
                 "the referee, the prestarted referee and the pool process gone")
        # left behind (the socket folder and the seats' cgroups too, unless another run's
        # sweep, or its referee starting, came first)
        assert all(w.exists() for w in works) and stop.exists() and metrics.exists()

        flush_redis()  # (the killed worker's message: not to be played again here)
        second = Worker(pg, tmp_path / "second.log", lease=3, extra_env={"TMPDIR": str(tmp)})
        second.wait_ready()  # it sweeps before it is ready
        log = (tmp_path / "second.log").read_text()
        line = next((x for x in log.splitlines() if x.startswith(
            "arena worker: swept what dead workers and referees left: ")), None)
        assert line is not None, log[-3000:]
        said = _said(line.rpartition(": ")[2])
        # (in the private temporary folder: this worker's sweep is the only one to see them)
        assert all(said.get(k, 0) >= 1 for k in ("working_folders", "stop_files",
                                                 "metrics_folders")), line

        assert _working_folders(tmp, match_id) == []
        assert _socket_folders(referee) == [] and not any(s.exists() for s in sockets)
        assert not stop.exists()
        assert not metrics.exists()
        for uid in uids:  # no cgroup, no process (unless a live seat of another run has it)
            left = _uid_left(uid)
            assert left is None or left == ([], []), (uid, left)
    finally:
        first.stop()
        if second:
            second.stop()


# -- a live owner's things are left alone ------------------------------------------------------
OWNER = r"""
import json, os, subprocess, sys, tempfile
from pathlib import Path
from referee.seats.sandbox import SandboxPolicy, SeatCgroup, claim_uid
from scheduler.execute import stop_file_of, working_folder
from scheduler.sweep import hold_metrics_folder

with working_folder(sys.argv[1]) as work:
    uid = claim_uid()
    cgroup = SeatCgroup.make(f"arena-seat-{uid.uid}", SandboxPolicy())
    sockets = tempfile.mkdtemp(prefix=f"arena-sockets-{os.getpid()}-", dir="/tmp")
    metrics = tempfile.mkdtemp(prefix="arena-metrics-")
    hold_metrics_folder(Path(metrics))
    stop_file_of(os.getpid()).touch()
    # a seat's process that will outlive its launcher (no die-with-parent)
    seat = subprocess.Popen((cgroup.enter() if cgroup else []) + [
        "setpriv", f"--reuid={uid.uid}", f"--regid={uid.uid}", "--clear-groups",
        "sleep", "600"], start_new_session=True)
    print(json.dumps({"work": str(work), "uid": uid.uid, "sockets": sockets,
                      "metrics": metrics, "stop": str(stop_file_of(os.getpid())),
                      "cgroups": [str(d) for d in cgroup.dirs] if cgroup else [],
                      "seat": seat.pid}), flush=True)
    sys.stdin.read()  # held until the test kills this process
"""


def _arena_sweep(environ: dict[str, str]) -> dict[str, int]:
    """``arena sweep`` run in ``environ``: what it says it removed, by kind (it names each)."""
    done = subprocess.run([sys.executable, "-m", "cli", "sweep"], cwd=ROOT, env=environ,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    counts = {k.strip(): int(v) for k, _, v in (line.rpartition(":") for line in
                                                done.stdout.splitlines()[1:])}
    assert set(counts) == {pair[1] for pair in KINDS.values()}, done.stdout
    return counts


def test_a_live_owners_things_are_left_and_swept_once_it_is_killed(tmp_path):
    """A process holding a match's working folder, a seat uid with its cgroup and a process of
    that uid, a socket folder and a stop file of its pid and a metrics folder: the sweep leaves
    every one alone while it lives; once it is killed (its seat's process living on), ``arena
    sweep`` removes them all, kills the process and says so by kind (both sweeps are ``arena
    sweep`` in the owner's environment: its temporary folder is this test's own)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    private = {**env(), "TMPDIR": str(tmp)}
    owner = subprocess.Popen([sys.executable, "-c", OWNER, unique("live")], cwd=ROOT,
                             env=private, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    held = None
    try:
        held = json.loads(owner.stdout.readline())
        uid, seat = held["uid"], held["seat"]
        cgroups = [Path(d) for d in held["cgroups"]]
        assert bool(cgroups) == CGROUPS
        assert any((d / f).exists() for d in cgroups for f in ("cpu.shares", "cpu.weight")) \
            == CPU_CGROUPS, cgroups  # (its CPU folder too, where there is the controller)
        wait_for(lambda: seat in uid_processes(uid) and all(
            str(seat) in _procs_in(d) for d in cgroups), 30, "the seat's process as its uid, "
                 "in its cgroup")
        paths = [Path(held[k]) for k in ("work", "sockets", "metrics", "stop")]
        assert [p.parent for p in paths] == [tmp, Path("/tmp"), tmp, tmp]

        swept = _arena_sweep(private)  # (other runs' leftovers may go; nothing of this one's)
        assert all(p.exists() for p in paths), ([p for p in paths if not p.exists()], swept)
        assert (Path(held["work"]) / MATCH_LOCK).exists()
        assert all(d.exists() for d in cgroups) and seat in uid_processes(uid)
        assert try_uid(uid) is None  # (still its owner's)

        owner.kill()
        owner.wait()
        counts = _arena_sweep(private)
        # (the seat's leftovers and the socket folder in /tmp may have gone to another run's
        # sweep first: asserted gone below, whoever swept them)
        assert all(counts[k] >= 1 for k in ("working folders", "stop files",
                                            "metrics folders")), counts
        assert not any(p.exists() for p in paths), [p for p in paths if p.exists()]
        assert pid_gone(seat)
        # no cgroup (its CPU folder neither), no process of it
        assert _uid_left(uid, cgroups) in (None, ([], []))
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
        if held is not None and not pid_gone(held["seat"]):
            os.kill(held["seat"], signal.SIGKILL)


@pytest.mark.skipif(OLDER_LOCK_DIR == LOCK_DIR, reason="the seat uid locks are where they were")
def test_a_seat_whose_uid_an_earlier_releases_referee_holds_is_left_alone():
    """A referee of an earlier release still running on the machine holds its seats' uids in
    ``OLDER_LOCK_DIR``: a process of such a uid is a live seat, not a leftover, until that
    lock is dropped."""
    from referee.seats.sandbox import claim_uid
    from scheduler.sweep import sweep
    claimed = seat = older = None
    try:
        claimed = claim_uid()
        uid = claimed.uid
        older = os.open(OLDER_LOCK_DIR / f"arena-uid-{uid}.lock",
                        os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(older, fcntl.LOCK_EX | fcntl.LOCK_NB)  # (an earlier release's claim)
        started = subprocess.run(  # (not this process's child: init reaps it)
            ["sh", "-c", f"setpriv --reuid={uid} --regid={uid} --clear-groups sleep 600 "
             ">/dev/null 2>&1 & echo $!"], capture_output=True, text=True, check=True)
        seat = int(started.stdout)
        wait_for(lambda: seat in uid_processes(uid), 30, "the seat's process as its uid")
        claimed.release()  # (free where this release keeps the locks)
        sweep(seat_wait_s=1)
        assert not pid_gone(seat)  # alive: the earlier release's lock is held
        os.close(older)
        older = None
        sweep(seat_wait_s=5)
        assert pid_gone(seat) and uid_processes(uid) == []
    finally:
        if older is not None:
            os.close(older)
        if claimed is not None:
            claimed.release()
        if seat is not None and not pid_gone(seat):
            os.kill(seat, signal.SIGKILL)


def test_a_claimer_passes_over_a_leftovers_uid_without_taking_its_lock(monkeypatch):
    """A dead referee's leftover (a process of a uid nobody holds) is passed over by referees
    claiming seats without their taking its lock even for a look: a worker's sweep that met
    the lock held at that moment took the leftover for a live seat's and left it there (seen
    once in the suite, a claim on the other test worker beside this file's sweep)."""
    from referee.seats import sandbox
    first = sandbox.claim_uid()
    uid, seat = first.uid, None
    try:
        started = subprocess.run(  # (not this process's child: init reaps it)
            ["sh", "-c", f"setpriv --reuid={uid} --regid={uid} --clear-groups sleep 600 "
             ">/dev/null 2>&1 & echo $!"], capture_output=True, text=True, check=True)
        seat = int(started.stdout)
        wait_for(lambda: seat in uid_processes(uid), 30, "the seat's process as its uid")
        first.release()  # the referee died: its uid's lock went with it
        looked: list[int] = []
        real = sandbox.try_uid
        monkeypatch.setattr(sandbox, "try_uid", lambda u: looked.append(u) or real(u))
        other = sandbox.claim_uid()
        other.release()
        assert other.uid != uid and uid not in looked, (uid, looked)
        monkeypatch.undo()
        sandbox.sweep_seats(wait_s=5)
        assert pid_gone(seat) and uid_processes(uid) == []
    finally:
        first.release()
        if seat is not None and not pid_gone(seat):
            os.kill(seat, signal.SIGKILL)
