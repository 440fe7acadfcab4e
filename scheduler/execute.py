"""The match function every mode shares: claim a match, play it in a referee process, store it.

``execute_match(db_url, match_id)`` is what a Celery task and a local pool worker both call. It
never imports gRPC: the referee runs as its own process (``python -m referee.serve``), which
dies with its parent. While the match plays, a thread renews the lease; the result is written
once (first commit wins), so a retried or redelivered match is never counted twice.

The match's working folder (``/tmp/arena-MATCHID-*``) is held, while the match plays, by an
flock on a file in it (``hold_folder``): the kernel drops the lock with the process that held
it, so a folder whose lock can be taken is a killed worker's leftover (``sweep_held_folders``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from sqlalchemy.exc import InterfaceError, OperationalError

from house import settings
from referee.match.matchfile import MatchFile
from referee.match.socket_folders import pid_gone
from referee import prestarted
from referee.match.spec import MatchSpec

from scheduler import metrics
from scheduler.errors import ArenaError
from scheduler.states import MatchStatus, PlayOutcome
from scheduler.stats.scores import match_tally, score_pair
from scheduler.store import (DEFAULT_LEASE_S, MAX_ATTEMPTS, MatchRow, Store, open_store,
                             worker_name)

ROOT = Path(__file__).resolve().parent.parent
#: bytes of the end of each seat's log kept in its match record (``arena logs``); the referee
#: bounds a seat's log to ``referee.seats.launch.LOG_LIMIT`` (8 MiB)
BOT_LOG_KEPT = 32 * 1024


class MatchFailed(ArenaError, RuntimeError):
    """The referee process ended without a record."""


class HandedBack(RuntimeError):
    """The process was told to stop: the match in play goes back, uncharged."""


#: a file whose existence tells this process to stop (``arena worker`` creates it on SIGTERM)
STOP_FILE_ENV = settings.STOP_FILE.name
STOP_FILE_PREFIX = "arena-worker-"
#: seconds a match in play may still take once its worker is told to stop; then it is handed
#: back (0, the default: at once)
STOP_GRACE_ENV = settings.STOP_GRACE_S.name
#: how often a playing process looks whether it was told to stop
STOP_POLL_S = 0.25
_stop_seen_at: float | None = None


def stop_file_of(pid: int) -> Path:
    """The stop file of the worker whose main process is ``pid`` (made only when it is told to
    stop; a worker killed after that leaves it: ``sweep_stop_files``)."""
    return Path(tempfile.gettempdir()) / f"{STOP_FILE_PREFIX}{pid}.stop"


def tmp_roots() -> list[Path]:
    """Where the leftovers of workers and referees lie: this process's temporary folder and
    ``/tmp`` (the same, unless ``TMPDIR`` says otherwise)."""
    roots = [Path(tempfile.gettempdir()), Path("/tmp")]
    return [r for i, r in enumerate(roots) if r not in roots[:i]]


def sweep_stop_files(roots: list[Path] | None = None) -> int:
    """Remove the stop files (this user's) of workers whose main process is gone; how many. A
    live pid keeps its file, even a reused one (a leftover may stay; a live worker's stop
    request is never lost)."""
    swept = 0
    for root in roots or tmp_roots():
        for path in root.glob(f"{STOP_FILE_PREFIX}*.stop"):
            pid = path.name[len(STOP_FILE_PREFIX):-len(".stop")]
            if not pid.isdigit() or int(pid) == os.getpid() or not pid_gone(int(pid)):
                continue
            try:
                if path.lstat().st_uid != os.geteuid():
                    continue
                path.unlink()
                swept += 1
            except FileNotFoundError:  # (another sweep's)
                pass
    return swept


# -- folders held while in use -----------------------------------------------------------------
MATCH_LOCK = ".arena-match.lock"
"""The lock file of a match's working folder (``working_folder``)."""


def hold_folder(folder: Path, lock_name: str) -> int:
    """Mark ``folder`` (just made, this process's) in use: an exclusive flock on the file
    ``folder/lock_name``, which gets that name only once locked (no sweep ever finds it free
    while its owner lives). Returns the file descriptor holding the lock: close it once the
    folder is removed. The kernel drops the lock when every process sharing the descriptor is
    gone (killed ones too): then ``sweep_held_folders`` may remove the folder."""
    staged = folder / f"{lock_name}.{os.getpid()}-{uuid.uuid4().hex[:8]}"
    fd = os.open(staged, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW,
                 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(staged, folder / lock_name)
    except OSError:
        os.close(fd)
        staged.unlink(missing_ok=True)
        raise
    return fd


def sweep_held_folders(lock_name: str, roots: list[Path] | None = None,
                       prefix: str = "arena-") -> int:
    """Remove the folders ``ROOT/PREFIX*`` (this user's) that hold a ``lock_name`` file nobody
    has locked: their owner died (``hold_folder``). A folder without that file is not judged
    (another kind, or one whose owner died in the instant between making it and locking it:
    an empty folder). Each is removed with its lock held, so two sweeps never race. Returns
    how many were removed."""
    swept = 0
    for root in roots or tmp_roots():
        try:
            entries = [e for e in os.scandir(root) if e.name.startswith(prefix)]
        except OSError:
            continue
        for entry in entries:
            try:
                if not entry.is_dir(follow_symlinks=False) or \
                        entry.stat(follow_symlinks=False).st_uid != os.geteuid():
                    continue
                fd = os.open(os.path.join(entry.path, lock_name),
                             os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
            except OSError:  # no lock file: not a held folder (or swept meanwhile)
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # its owner lives
                os.close(fd)
                continue
            try:
                shutil.rmtree(entry.path, ignore_errors=True)
                swept += not os.path.lexists(entry.path)
            finally:
                os.close(fd)
    return swept


def sweep_working_folders(roots: list[Path] | None = None) -> int:
    """Remove the working folders of matches whose worker died playing them; how many."""
    return sweep_held_folders(MATCH_LOCK, roots)


@contextlib.contextmanager
def working_folder(match_id: str) -> Iterator[Path]:
    """A fresh working folder for one attempt of ``match_id`` (``/tmp/arena-MATCHID-*``), held
    (``hold_folder``) while the block runs and removed after it."""
    folder = Path(tempfile.mkdtemp(prefix=f"arena-{match_id}-"))
    fd = None
    try:
        fd = hold_folder(folder, MATCH_LOCK)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # (the lock last: no sweep races this)
        if fd is not None:
            os.close(fd)


def request_stop() -> None:
    """Tell this process to stop: the match in play is handed back after the grace (a
    signal handler's call)."""
    global _stop_seen_at
    if _stop_seen_at is None:
        _stop_seen_at = time.monotonic()


def _stop_handled() -> None:
    """The match in play went back: the next one plays unless this process is still told to
    stop (the stop file stays)."""
    global _stop_seen_at
    _stop_seen_at = None


def stop_grace_setting() -> float:
    raw = (settings.STOP_GRACE_S.text() or "").strip()
    try:
        return max(0.0, float(raw)) if raw else 0.0
    except ValueError:
        raise ValueError(f"{STOP_GRACE_ENV}={raw!r}: expected seconds (a number)") from None


def must_hand_back() -> bool:
    """Whether the match in play must go back now: this process was told to stop (a signal,
    or the stop file) more than the grace ago."""
    if _stop_seen_at is None:
        path = settings.STOP_FILE.text()
        if not (path and os.path.exists(path)):
            return False
        request_stop()
    seen_at = _stop_seen_at
    assert seen_at is not None  # (set by request_stop)
    return time.monotonic() - seen_at >= stop_grace_setting()


def max_match_seconds(spec: MatchSpec) -> float:
    """An upper bound on a match's wall time under its time control (a hung referee's limit)."""
    tc = spec.time_control
    per = tc.per_decision_ms / 1000
    deals = len(spec.deals or []) or spec.max_deals or 30
    # every seat may spend its whole bank, and wait out the reconnect window on each of its
    # allowed reconnections and the one that forfeits; a deal has at most a few hundred
    # decisions
    away = (tc.max_reconnects + 1) * tc.reconnect_window_ms / 1000
    return (tc.connect_timeout_ms / 1000 + 4 * tc.bank_ms / 1000 + 4 * away
            + deals * 400 * per + 60)


def play(spec: MatchSpec, workdir: Path, heartbeat=None, every_s: float = 5.0,
         should_stop=None) -> MatchFile:
    """Play ``spec`` in a referee process; returns the match file it wrote, with the last
    ``BOT_LOG_KEPT`` bytes of every seat's log (``extra["bot_logs"]``: seat -> text) and each
    log's whole size (``extra["bot_log_bytes"]``: seat -> bytes). ``should_stop`` (asked every
    ``STOP_POLL_S``) true ends the referee and raises HandedBack."""
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    spec_path = workdir / "spec.json"
    out = workdir / "record.json"
    spec_path.write_text(json.dumps(spec.to_dict(), ensure_ascii=False), encoding="utf-8")
    out.unlink(missing_ok=True)  # an earlier attempt's, in a reused workdir
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "protos")] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    proc = prestarted.start([str(spec_path), "--out", str(out), "--workdir",
                             str(workdir / "logs")], env=env, cwd=ROOT,
                            log=workdir / "referee.log")
    deadline = time.monotonic() + max_match_seconds(spec)
    next_beat = time.monotonic() + every_s
    try:
        while True:
            try:
                proc.wait(timeout=min(every_s, STOP_POLL_S) if should_stop else every_s)
                break
            except subprocess.TimeoutExpired:
                now = time.monotonic()
                if should_stop is not None and should_stop():
                    raise HandedBack("its worker was told to stop")
                if heartbeat is not None and now >= next_beat:
                    heartbeat()
                    next_beat = now + every_s
                if now > deadline:
                    raise MatchFailed(f"the referee ran past {max_match_seconds(spec):.0f} s")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode != 0 or not out.exists():
        tail = (workdir / "referee.log").read_text(errors="replace")[-2000:]
        rc = proc.wait()  # (ended: at once)
        how = f" (killed by {_signal_name(-rc)})" if rc < 0 else ""
        raise MatchFailed(f"the referee exited with status {rc}{how}: {tail}")
    match = MatchFile.load(out)
    logs = {s: _tail(workdir / "logs" / f"seat{s}.log") for s in range(4)}
    match.extra["bot_logs"] = {str(s): text for s, (text, _) in logs.items()}
    match.extra["bot_log_bytes"] = {str(s): size for s, (_, size) in logs.items()}
    return match


def _signal_name(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


def play_again(spec: MatchSpec, workdir: Path, attempts: int | None = None, **kw) -> MatchFile:
    """``play``, again on the same cards when the referee process fails (the infrastructure's
    fault, no bot's), up to ``attempts`` (default ``ARENA_MAX_ATTEMPTS`` or 3) times."""
    n = attempts or max_attempts_setting()
    for attempt in range(1, n + 1):
        try:
            match = play(spec, workdir, **kw)
        except MatchFailed as e:
            if attempt == n:
                raise MatchFailed(f"{n} attempt(s), the referee failed each time (no bot's "
                                  f"fault); the last: {e}") from e
            continue
        match.extra["attempt"] = attempt
        return match
    raise AssertionError("unreachable")


def _tail(path: Path, n: int = BOT_LOG_KEPT) -> tuple[str, int]:
    """The last ``n`` bytes of the log at ``path`` (from its first whole character) and the
    log's size; ("", 0) when there is none."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - n))
            data = f.read(n)
    except OSError:
        return "", 0
    if size > n:  # cut inside a character: start at the next whole one
        while data and (data[0] & 0xC0) == 0x80:
            data = data[1:]
    return data.decode("utf-8", errors="replace"), size


def _gone(owner: str | None) -> bool:
    """Whether lease owner ``owner`` ("host:pid") is a process of this host that has died."""
    host, _, pid = (owner or "").rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def max_attempts_setting() -> int:
    """``ARENA_MAX_ATTEMPTS``, else 3: attempts of a match before it is set aside."""
    raw = settings.MAX_ATTEMPTS.text() or ""
    return int(raw) if raw.isdigit() and int(raw) >= 1 else MAX_ATTEMPTS


class StoreUnavailable(ArenaError, RuntimeError):
    """The store did not take a played match's result within the retry budget."""


def _write(store: Store, row: MatchRow, variant: str, match: MatchFile, duration: float,
           owner: str, retry_s: float) -> bool:
    """``store.results.finish`` until it answers: a store that is away at commit time is waited for
    (up to ``retry_s``); the write is keyed by the match id, so retrying never doubles it. The
    result's tally is counted here, from the summary as played; once written, the match's
    duplicate pair is scored (``_score_pair``)."""
    deadline = time.monotonic() + retry_s
    delay = 0.25
    notes: list[str] = []
    tally = match_tally(match.summary(), variant)
    while True:
        try:
            written = store.results.finish(row.id, row.season, match, duration, owner,
                                           note="; ".join(notes) or None, tally=tally)
            if written:
                _score_pair(store, row.id)
            return written
        except (OperationalError, InterfaceError) as e:
            first = (str(getattr(e, "orig", None) or e).strip().splitlines() or [""])[0]
            if time.monotonic() + delay > deadline:
                raise StoreUnavailable(f"the store did not take the result for {retry_s:.0f} s: "
                                       f"{first}") from e
            notes.append(f"result write retried: {type(e).__name__}: {first}"[:300])
            time.sleep(delay)
            delay = min(2 * delay, 5.0)


def _score_pair(store: Store, match_id: str) -> None:
    """After the match's write: its duplicate pair scored once both matches are (the pair's
    other match may have committed at the same time; its writer may score it first). Best
    effort: a pair's finer score never fails the match written."""
    try:
        score_pair(store, match_id)
    except Exception as e:  # noqa: BLE001
        print(f"arena: match {match_id}: its duplicate pair was not scored: "
              f"{type(e).__name__}: {str(e)[:300]}", file=sys.stderr)


def _crash_limit(store: Store, spec: MatchSpec, seat: int) -> None:
    """A forfeit stored: the crash limit of the version in ``seat``
    (``scheduler.crash_limit.after_forfeit``); never a reason to fail the match written."""
    from scheduler.crash_limit import after_forfeit
    try:
        after_forfeit(store, spec, seat)
    except Exception as e:  # noqa: BLE001  (a bad setting, a store hiccup: said in the
        print(f"match {spec.match_id}: the crash limit was not applied: "  # worker's log;
              f"{type(e).__name__}: {e}", file=sys.stderr)  # the next forfeit counts this one)


def execute_match(db_url: str, match_id: str, *, lease_s: float = DEFAULT_LEASE_S,
                  owner: str | None = None, max_attempts: int | None = None,
                  store_retry_s: float = 60.0) -> str:
    """Claim, play and store one match. Returns "done", "counted" (a duplicate delivery whose
    result was already written), "busy" (another worker holds a live lease or it is finished),
    "retry", "failed" (set aside after ``max_attempts``, default ``ARENA_MAX_ATTEMPTS`` or 3),
    "cancelled" (its season was cancelled) or "handed back" (this process was told to stop:
    the match is pending again and the attempt not counted).

    Only the referee's record charges a bot. Whatever else ends an attempt (the referee process
    failed or ran past its limit, the store did not take the result) is the infrastructure's:
    the match goes back, to be played again on the same cards (the spec is stored)."""
    owner = owner or worker_name()
    limit = max_attempts or max_attempts_setting()
    store = open_store(db_url)
    row = store.queue.claim(match_id, owner, lease_s, max_attempts=limit)
    if row is None:  # a match left running by a dead process of this host: take it now
        held = store.pages.match(match_id)
        if held and held.status == MatchStatus.RUNNING and _gone(held.lease_owner):
            row = store.queue.claim(match_id, owner, lease_s, max_attempts=limit,
                                    take_from=held.lease_owner)
            held = store.pages.match(match_id) if row is None else held
        if row is None:
            if held and held.status in (MatchStatus.FAILED, MatchStatus.CANCELLED):
                return PlayOutcome(held.status)
            return PlayOutcome.BUSY

    def renew() -> None:  # the lease outlives a long match only while we are alive
        try:
            store.queue.renew(match_id, owner, lease_s)
        except Exception:  # a store hiccup: the next renewal tries again
            pass

    started = time.monotonic()
    metrics.match_started()
    try:
        spec = MatchSpec.from_dict(row.spec, f"match {match_id}: spec")
        from scheduler.registry.versions import playing
        # pinned versions fetched (and built) on this machine, kept in its cache while played
        with playing(store, spec.bots) as bots, working_folder(match_id) as tmp:
            if bots:
                spec = dataclasses.replace(spec, bots=bots)
            match = play(spec, tmp, heartbeat=renew, every_s=lease_s / 4,
                         should_stop=must_hand_back)
        match.extra["attempt"] = row.attempts
        duration = time.monotonic() - started
        written = _write(store, row, spec.variant, match, duration, owner, store_retry_s)
        metrics.match_written(match.extra.get("timings"), [f.kind for f in match.faults],
                              duration, written)
        forfeit = match.result.forfeit if match.result is not None else None
        if written and forfeit is not None:
            _crash_limit(store, spec, forfeit.seat)
        return PlayOutcome.DONE if written else PlayOutcome.COUNTED
    except HandedBack as e:  # told to stop: back to the queue, charged to nobody
        _stop_handled()
        try:
            status = store.queue.hand_back(match_id, owner, f"{e} ({owner})")
        except Exception:  # the store is away: the lease runs out, and the next one takes it
            return PlayOutcome.RETRY
        metrics.match_handed_back()
        return PlayOutcome.HANDED_BACK if status == MatchStatus.PENDING else status
    except Exception as e:  # anything: the match goes back for another attempt
        why = f"{type(e).__name__}: {e}"
        metrics.match_failed()
        try:
            status = store.queue.give_back(match_id, owner, why, max_attempts=limit)
        except Exception:  # the store is away: the lease runs out, and the match is lost
            return PlayOutcome.RETRY  # to this attempt and taken over by the next
        after: dict[str, PlayOutcome] = {MatchStatus.PENDING: PlayOutcome.RETRY,
                                         MatchStatus.CANCELLED: PlayOutcome.CANCELLED}
        return after.get(status, PlayOutcome.FAILED)
