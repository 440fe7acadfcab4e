"""A worker's referees forked from one started ahead (``referee.prestarted``): each match's
referee is still a process of its own, with its own status, log, command line and death, and
the imports are paid once."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT
from referee import prestarted
from referee.match.matchfile import MatchFile
from referee.match.spec import MatchSpec, SeatBot
from referee.seats.manifest import load_manifest
from scheduler.execute import play

RANDOM = load_manifest(ROOT / "sample_bots" / "python" / "random")


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ARENA_REFEREE_PRESTART"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "protos")])
    return {**env, **extra}


def _no_spec(tmp: Path, env: dict[str, str]):
    """A referee asked to play a spec that is not there: it says so in its log, status 2."""
    return prestarted.start([str(tmp / "none.json"), "--out", str(tmp / "out.json"),
                             "--workdir", str(tmp / "logs")], env=env, cwd=ROOT,
                            log=tmp / "referee.log")


def test_two_matches_are_forked_by_one_prestarted_referee_and_each_leaves_its_record(tmp_path):
    """Two matches of four sandboxed random bots, one after the other, through the worker's
    ``play``: each referee is a fork of the same prestarted process (not of this one), shows
    ``referee.serve``'s command line with its match's folder while it plays, and leaves a
    record that verifies."""
    seen: list[tuple[int, int]] = []
    real = prestarted.start

    def watched(*args, **kw):
        proc = real(*args, **kw)
        seen.append((proc.pid, _parent(proc.pid)))
        return proc

    prestarted.start = watched
    try:
        for n in range(2):
            spec = MatchSpec(match_id=f"fork-{n}", variant="two-deck-fry", seed=f"fork-{n}",
                             max_deals=1, bots=[SeatBot.of("random", RANDOM)] * 4)
            match = play(spec, tmp_path / f"m{n}")
            assert isinstance(match, MatchFile) and len(match.games) == 1
            assert MatchFile.load(tmp_path / f"m{n}" / "record.json").verify() == []
    finally:
        prestarted.start = real
    (first, parent), (second, parent2) = seen
    assert first != second and parent == parent2 != os.getpid()
    assert b"referee.prestarted" in Path(f"/proc/{parent}/cmdline").read_bytes()


def test_a_forked_referees_status_and_log_are_its_own(tmp_path):
    """A referee that refuses its spec ends with status 2 and says why in its own log; one
    that waits shows ``referee.serve``'s command line, and killed reads as killed by SIGKILL;
    the prestarted process that forked both is still there for the next."""
    env = _env()
    refused = _no_spec(tmp_path, env)
    assert isinstance(refused, prestarted.Forked)
    assert refused.wait(60) == 2
    assert "none.json" in (tmp_path / "referee.log").read_text()
    parent = _parent_of_next(tmp_path, env)
    held = _no_spec_but_slow(tmp_path, env)
    wanted = f"-m referee.serve {tmp_path / 'slow.json'} --out ".encode()
    deadline = time.monotonic() + 30  # (its first step: ps and the sweeps see a referee)
    while wanted not in Path(f"/proc/{held.pid}/cmdline").read_bytes():
        assert time.monotonic() < deadline, Path(f"/proc/{held.pid}/cmdline").read_bytes()
        time.sleep(0.02)
    held.kill()
    assert held.wait(60) == -signal.SIGKILL
    assert _parent_of_next(tmp_path, env) == parent


def _no_spec_but_slow(tmp: Path, env: dict[str, str]):
    """A referee that waits (its spec is a pipe nobody writes): alive until killed."""
    fifo = tmp / "slow.json"
    if not fifo.exists():
        os.mkfifo(fifo)
    proc = prestarted.start([str(fifo), "--out", str(tmp / "out.json"), "--workdir",
                             str(tmp / "logs")], env=env, cwd=ROOT, log=tmp / "slow.log")
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(0.3)
    assert proc.poll() is None
    return proc


def _parent_of_next(tmp: Path, env: dict[str, str]) -> int:
    """The process that forked the next referee: one that waits, so that it is still there
    to be read (a referee that refuses its spec may be gone and reaped by then)."""
    proc = _no_spec_but_slow(tmp, env)
    parent = _parent(proc.pid)
    proc.kill()
    assert proc.wait(60) == -signal.SIGKILL
    return parent


def test_a_changed_environment_gets_a_prestarted_referee_of_its_own(tmp_path):
    """The imports a referee did ahead were made in the environment it was started with: a
    worker whose environment changed gets another prestarted process, and the first leaves
    once its children have ended."""
    first = _parent_of_next(tmp_path, _env())
    other = "C.UTF-8" if os.environ.get("LANG") != "C.UTF-8" else "C"
    second = _parent_of_next(tmp_path, _env(LANG=other))
    assert second != first
    deadline = time.monotonic() + 30
    while os.path.exists(f"/proc/{first}") and _state(first) != "Z":
        assert time.monotonic() < deadline, "the retired prestarted referee is still there"
        time.sleep(0.05)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_prestarting_turned_off_starts_each_referee_by_exec(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_REFEREE_PRESTART", "0")
    proc = _no_spec(tmp_path, _env())
    assert isinstance(proc, subprocess.Popen) and _parent(proc.pid) == os.getpid()
    assert proc.wait(60) == 2
