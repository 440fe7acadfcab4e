"""`arena match` as a bot author uses it: a seat played by a bot started by hand."""

import os
import queue
import subprocess
import sys
import threading
import time

from conftest import ROOT
from league_helpers import arena, env

PY = ROOT / "sample_bots" / "python"


def _lines(stream, into: queue.Queue) -> None:
    for line in stream:
        into.put(line)
    into.put(None)


def test_a_listening_seat_is_played_by_a_bot_started_by_hand(tmp_path):
    record = tmp_path / "m.json"
    referee = subprocess.Popen(
        [sys.executable, "-m", "cli", "match", "--seat", "2=listen", str(PY / "random"),
         str(PY / "greedy"), str(PY / "random"), "--deals", "1", "--variant", "single-deck",
         "--out", str(record), "--unsandboxed"],
        cwd=tmp_path, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(referee.stdout, lines), daemon=True).start()
    printed, exports = [], None
    deadline = time.monotonic() + 60
    while exports is None:
        line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        assert line is not None, "".join(printed)
        printed.append(line)
        if line.strip().startswith("export "):
            exports = dict(kv.split("=", 1) for kv in line.split()[1:])
    assert printed[0].startswith("seat 2 waits 600 s for the bot you start")
    assert exports["ARENA_SEAT"] == "2" and exports["ARENA_REFEREE"].startswith("127.0.0.1:")
    # the bot author's own process: the environment printed, nothing else of the referee's
    by_hand = subprocess.run([sys.executable, "bot.py"], cwd=PY / "random",
                             env={"PATH": os.environ["PATH"], **exports,
                                  "PYTHONPATH": str(ROOT / "protos")},
                             capture_output=True, text=True, timeout=120)
    assert by_hand.returncode == 0, by_hand.stderr
    assert referee.wait(timeout=60) == 0
    while (line := lines.get(timeout=10)) is not None:
        printed.append(line)
    out = "".join(printed)
    assert "seat 2 (team 0): seat 2, started by hand  strikes 0" in out, out
    assert "fault:" not in out and "forfeit" not in out, out
    replay = arena("replay", str(record), "--verify")
    assert replay.returncode == 0 and replay.stdout.startswith("verified: "), replay.stdout


def test_a_bad_seat_option_is_named():
    p = arena("match", "--seat", "4=listen", "a", "b", "c")
    assert p.returncode == 2
    assert p.stderr.strip() == "arena match: --seat 4=listen: expected N=listen with N a seat 0-3"
    p = arena("match", "--seat", "1=listen", "a", "b")
    assert p.returncode == 2 and "expected 3 bots" in p.stderr and "seat(s) 1" in p.stderr


def _copy(sample: str, into) -> "Path":
    """A sample copied to a folder of its own, without what a build makes."""
    import shutil

    from referee.seats.manifest import BUILD_OUTPUT
    folder = into / f"my-{sample}"
    shutil.copytree(ROOT / "sample_bots" / sample, folder,
                    ignore=shutil.ignore_patterns(*BUILD_OUTPUT))
    return folder


def test_arena_match_builds_an_unbuilt_bot_and_prints_each_seats_decision_times(
        tmp_path, monkeypatch):
    """A compiled bot never built: `arena match` builds it in the bot cache, plays it, and
    prints each seat's median and p95 decision time; the second match builds nothing."""
    from referee.match.matchfile import MatchFile
    monkeypatch.setenv("ARENA_BOT_CACHE", str(tmp_path / "cache"))
    go = _copy("go", tmp_path)
    record = tmp_path / "m.json"
    args = ("match", str(go), str(PY / "random"), str(go), str(PY / "random"), "--deals", "1",
            "--out", str(record))
    p = arena(*args, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "go-sample@1.0.0: built by its manifest's build in the build sandbox" in p.stdout
    built = [d for d in (tmp_path / "cache" / "local").iterdir() if d.is_dir()]
    assert len(built) == 1 and (built[0] / "build" / "go-sample").exists()
    assert not (go / "build").exists()  # the author's folder is left as it was
    times = MatchFile.load(record).decision_times()
    assert [t.seat for t in times] == [0, 1, 2, 3]
    for t in times:
        assert (f"  seat {t.seat} decision time: median {t.median_ms:.2f} ms, p95 "
                f"{t.p95_ms:.2f} ms") in p.stdout, p.stdout
    stamp = (built[0] / ".arena-build.log").stat().st_mtime_ns
    again = arena(*args, cwd=tmp_path)
    assert again.returncode == 0 and (built[0] / ".arena-build.log").stat().st_mtime_ns == stamp


def test_arena_match_on_a_bot_whose_build_fails_shows_the_cause_line(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_BOT_CACHE", str(tmp_path / "cache"))
    go = _copy("go", tmp_path)
    source = (go / "main.go").read_text()
    (go / "main.go").write_text(source + "\nfunc broken() int { return undefinedName }\n")
    p = arena("match", str(go), str(PY / "random"), str(go), str(PY / "random"), "--deals", "1",
              "--out", str(tmp_path / "m.json"), cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "go-sample@1.0.0: build `go build -o build/go-sample .` exited with status" in p.stderr
    assert "; the cause: " in p.stderr and "undefined: undefinedName" in \
        p.stderr.split("; the cause: ", 1)[1].split(";", 1)[0], p.stderr
    kept = p.stderr.split("its whole log: ", 1)[1].split(";", 1)[0]
    assert "undefinedName" in open(kept).read()
    assert not (tmp_path / "m.json").exists()


def test_arena_match_prints_the_winner_the_verified_record_gives(tmp_path):
    """A deal list ends no game (the game's winner team is null): the winner printed is the
    match's, as ``arena replay --verify`` derives it from the record."""
    record = tmp_path / "m.json"
    p = arena("match", str(PY / "random"), str(PY / "greedy"), str(PY / "random"),
              str(PY / "greedy"), "--deals", "1", "--seed", "s2", "--match-id", "winner-s2",
              "--out", str(record), "--unsandboxed", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    replay = arena("replay", str(record), "--verify")
    assert replay.returncode == 0, replay.stdout
    verified = replay.stdout.split("\nresult: ", 1)[1].splitlines()[0]
    assert " wins (score " in verified, verified  # (this seed's match is not a draw)
    assert f"  result: {verified}\n" in p.stdout, p.stdout
    assert "None" not in p.stdout
