"""The match function every mode shares: claim a match, play it in a referee process, store it.

``execute_match(db_url, match_id)`` is what a Celery task and a local pool worker both call. It
never imports gRPC: the referee runs as its own process (``python -m referee.serve``), which
dies with its parent. While the match plays, a thread renews the lease; the result is written
once (first commit wins), so a retried or redelivered match is never counted twice.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from referee.match.matchfile import MatchFile
from referee.match.spec import MatchSpec

from scheduler.store import DEFAULT_LEASE_S, Store, worker_name

ROOT = Path(__file__).resolve().parent.parent
_PR_SET_PDEATHSIG = 1


class MatchFailed(RuntimeError):
    """The referee process ended without a record."""


try:  # resolved here, so that the child between fork and exec only makes one call
    _prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl
except (OSError, AttributeError):  # not Linux: the referee outlives a killed worker
    _prctl = None


def _die_with_parent() -> None:
    """In the child before exec: be killed when the process that started us dies."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


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


def play(spec: MatchSpec, workdir: Path, heartbeat=None, every_s: float = 5.0) -> MatchFile:
    """Play ``spec`` in a referee process; returns the match file it wrote, with the end of
    each faulting seat's log (``extra["bot_logs"]``)."""
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    spec_path = workdir / "spec.json"
    out = workdir / "record.json"
    spec_path.write_text(json.dumps(spec.to_dict(), ensure_ascii=False), encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "protos")] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    cmd = [sys.executable, "-m", "referee.serve", str(spec_path), "--out", str(out),
           "--workdir", str(workdir / "logs")]
    with open(workdir / "referee.log", "wb") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
    deadline = time.monotonic() + max_match_seconds(spec)
    try:
        while True:
            try:
                proc.wait(timeout=every_s)
                break
            except subprocess.TimeoutExpired:
                if heartbeat is not None:
                    heartbeat()
                if time.monotonic() > deadline:
                    raise MatchFailed(f"the referee ran past {max_match_seconds(spec):.0f} s")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode != 0 or not out.exists():
        tail = (workdir / "referee.log").read_text(errors="replace")[-2000:]
        raise MatchFailed(f"the referee exited with status {proc.returncode}: {tail}")
    match = MatchFile.load(out)
    if match.faults:
        seats = sorted({f.seat for f in match.faults})
        match.extra["bot_logs"] = {str(s): _tail(workdir / "logs" / f"seat{s}.log")
                                   for s in seats}
    return match


def _tail(path: Path, n: int = 2000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""


def execute_match(db_url: str, match_id: str, *, lease_s: float = DEFAULT_LEASE_S,
                  owner: str | None = None) -> str:
    """Claim, play and store one match. Returns "done", "counted" (a duplicate delivery whose
    result was already written), "busy" (another worker holds a live lease or it is finished),
    "retry" or "failed"."""
    owner = owner or worker_name()
    store = Store(db_url)
    row = store.claim(match_id, owner, lease_s)
    if row is None:
        return "busy"

    def renew() -> None:  # the lease outlives a long match only while we are alive
        try:
            store.renew(match_id, owner, lease_s)
        except Exception:  # a store hiccup: the next renewal tries again
            pass

    started = time.monotonic()
    try:
        spec = MatchSpec.from_dict(json.loads(row["spec_json"]), f"match {match_id}: spec")
        with tempfile.TemporaryDirectory(prefix=f"arena-{match_id}-") as tmp:
            match = play(spec, Path(tmp), heartbeat=renew, every_s=lease_s / 4)
        duration = time.monotonic() - started
        written = store.finish(match_id, row["season"], match.result.to_dict(),
                               match.summary().to_dict(), match.to_dict(), duration, owner)
        return "done" if written else "counted"
    except Exception as e:  # anything: the match goes back for another attempt
        return "retry" if store.give_back(match_id, owner, f"{type(e).__name__}: {e}") \
            == "pending" else "failed"
