"""A bot that is not there at the match's start is a fault at once, and the fault says why: its
process's exit status and the end of its log, or why its Hello was refused."""

import dataclasses
import shutil
import os
import sys
import time

import pytest
from conftest import ROOT

from referee.match.local import run_match
from referee.match.spec import MatchSpec, TimeControl
from referee.seats.manifest import Manifest, load_manifest
from referee.seats.sandbox import sandbox_problem

PY = ROOT / "sample_bots" / "python"
RANDOM = load_manifest(PY / "random")
PROBE = ROOT / "tests" / "bots" / "hello_probe.py"
SANDBOXES = ["none"] + (["bubblewrap"] if sandbox_problem() is None else [])
AT_ONCE_S = 10.0
"""A match whose seat fails at its start ends this soon: well under the 15 s connect timeout
that a referee waiting for the seat would take (a second or two idle; over 2.5 s was seen
on a loaded machine, where four bots take that long to start)."""


def _exiting(code: str, protocol: str = "grpc") -> Manifest:
    return dataclasses.replace(RANDOM, name="exits", protocol=protocol,
                               command=("python3", "-c", code))


def _probe(mode: str) -> Manifest:
    return Manifest("hello-probe", "0", (sys.executable, str(PROBE), mode), "grpc",
                    ROOT / "tests" / "bots")


def _play(tmp_path, bots, sandbox, connect_ms=15000):
    spec = MatchSpec(match_id="connect", variant="two-deck-80", seed="c", max_deals=1,
                     time_control=TimeControl(connect_timeout_ms=connect_ms))
    started = time.monotonic()
    result, record, _ = run_match(spec, bots, tmp_path,
                                  sandbox=None if sandbox == "bubblewrap" else "none")
    return result, record, time.monotonic() - started


def _fault(record, seat):
    faults = [f for f in record["faults"] if f["seat"] == seat]
    assert len(faults) == 1, record["faults"]
    return faults[0]


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_bot_that_exits_at_start_is_a_fault_at_once_with_its_status_and_log(tmp_path,
                                                                               sandbox):
    code = "import sys; print('no model file at ./weights.bin', file=sys.stderr); sys.exit(3)"
    result, record, took = _play(tmp_path, [RANDOM, _exiting(code), RANDOM, RANDOM], sandbox)
    assert took < AT_ONCE_S, f"{took:.2f} s: the referee waited for the connect timeout"
    assert result["forfeit"] == {"seat": 1, "team": 1, "reason": "never connected"}
    fault = _fault(record, 1)
    assert fault["kind"] == "never_connected" and fault["exit_status"] == 3
    assert fault["reason"] == "seat 1 did not connect: its process exited with status 3 first"
    assert "no model file at ./weights.bin" in fault["log_tail"]


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_bot_killed_at_start_says_by_which_signal(tmp_path, sandbox):
    code = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    _, record, took = _play(tmp_path, [RANDOM, RANDOM, _exiting(code), RANDOM], sandbox)
    assert took < AT_ONCE_S, took
    fault = _fault(record, 2)
    assert ("signal 9" in fault["reason"]) and fault["exit_status"] in (-9, 128 + 9), fault


def test_a_stdio_bot_that_exits_at_start_says_how_it_ended(tmp_path):
    code = "import sys; print('stdio bot: bad config', file=sys.stderr); sys.exit(2)"
    result, record, took = _play(tmp_path, [RANDOM, RANDOM, RANDOM,
                                            _exiting(code, protocol="stdio")], "none")
    assert took < AT_ONCE_S and result["forfeit"]["seat"] == 3
    fault = _fault(record, 3)
    assert fault["kind"] == "disconnect" and fault["exit_status"] == 2
    assert fault["reason"].endswith("; its process exited with status 2"), fault["reason"]
    assert "stdio bot: bad config" in fault["log_tail"]


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_hello_in_another_protocol_version_is_refused_at_once(tmp_path, sandbox):
    """The seat's own token in a Hello of another protocol version: the bot cannot play, so
    the seat stops waiting (though the bot is still running)."""
    result, record, took = _play(tmp_path, [_probe("protocol"), RANDOM, RANDOM, RANDOM],
                                 sandbox)
    # at once, with 3 s of it for stopping a bot that does not exit by itself (5.1 s was seen
    # on a loaded machine)
    assert took < AT_ONCE_S, took
    fault = _fault(record, 0)
    assert fault["kind"] == "never_connected" and "exit_status" not in fault
    assert fault["reason"] == ("seat 0 was refused: its Hello speaks protocol "
                               "'shengji-arena/9', this referee shengji-arena/1"), fault
    assert result["forfeit"]["seat"] == 0


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_bad_token_is_named_in_the_fault(tmp_path, sandbox):
    """A wrong token on a seat's own socket: the seat waits on (the right one may follow) but
    the fault says what was refused, and how the bot ended when it gave up."""
    _, record, took = _play(tmp_path, [RANDOM, _probe("token-exit"), RANDOM, RANDOM], sandbox)
    assert took < AT_ONCE_S, took
    fault = _fault(record, 1)
    assert fault["reason"] == ("seat 1 did not connect: its process exited with status 4 "
                               "first"), fault
    assert "unknown seat token" in fault["log_tail"]
    assert record["refused_streams"] == [{"reason": "its Hello has an unknown seat token",
                                          "bot": "hello-probe"}]
    # the probe's refused Hello must come before the timeout: its start takes about half a
    # second, over 1.5 s on a loaded machine (the fault then named no refusal), 0.4 s at most
    # beside four busy loops; the test waits the timeout out, so it is no longer than that
    # needs: 4 s, over twice the slowest start seen
    _, record, took = _play(tmp_path, [RANDOM, RANDOM, _probe("token"), RANDOM], sandbox,
                            connect_ms=4000)
    assert _fault(record, 2)["reason"] == ("seat 2 did not connect within 4000 ms: its Hello "
                                           "has an unknown seat token")


def test_a_season_with_a_missing_executable_names_the_bot_and_field(tmp_path):
    from league_helpers import arena, season_file
    from scheduler.store import Store
    ghost = tmp_path / "ghost"
    ghost.mkdir(mode=0o755)
    (ghost / "bot.toml").write_text('name = "ghost"\nversion = "1"\n'
                                    'command = ["./build/ghost-bot"]\n')
    path = season_file(tmp_path, "missing", [str(PY / "random"), str(ghost)])
    db = f"sqlite:///{tmp_path}/missing.db"
    p = arena("season", "run", str(path), "--db", db, "--no-progress", cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and "bots check" not in p.stderr, p.stderr
    assert p.stderr.splitlines() == [
        f"arena season run: {path}: field bots[1].manifest: bot 'ghost' cannot be started: "
        f"{ghost / 'bot.toml'}: field 'command': cannot start './build/ghost-bot': No such "
        "file or directory", "nothing was enqueued"]
    assert Store(db).seasons.names() == []


def test_a_bot_that_cannot_be_started_forfeits_its_match_and_says_why(tmp_path):
    """A program gone by the time a match starts (admitted earlier): its seat never connects,
    the fault names the field, and the referee goes on (no infrastructure failure)."""
    gone = dataclasses.replace(RANDOM, name="gone", command=("./gone-bot",))
    result, record, took = _play(tmp_path, [RANDOM, RANDOM, RANDOM, gone], "none")
    assert took < AT_ONCE_S and result["forfeit"] == {"seat": 3, "team": 1,
                                                "reason": "never connected"}
    assert _fault(record, 3)["reason"] == (
        f"seat 3 could not be started: {RANDOM.path}: field 'command': cannot start "
        "'./gone-bot': No such file or directory")


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root launcher gives a seat its own uid")
def test_a_bot_folder_its_sandbox_cannot_read_is_refused_before_the_match(tmp_path):
    from referee.seats.launch import check_startable
    from referee.seats.manifest import ManifestError
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    bot = dataclasses.replace(RANDOM, folder=private)
    with pytest.raises(ManifestError, match=r"has mode 0700: a sandboxed bot runs as a user "
                                            r"of its own.*chmod -R o\+rX"):
        check_startable(bot, sandboxed=True)
    check_startable(bot, sandboxed=False)  # unsandboxed, it runs as the launcher


def test_socket_folders_of_a_killed_referee_are_swept_and_a_live_ones_kept(tmp_path):
    import subprocess
    from pathlib import Path

    from referee.match.local import SOCKETS_PREFIX, sweep_socket_folders
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    # (a live process: its pid is the point)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stale = Path(f"/tmp/{SOCKETS_PREFIX}{gone.pid}-test")
        kept = Path(f"/tmp/{SOCKETS_PREFIX}{alive.pid}-test")
        for folder in (stale, kept):
            (folder / "seat0").mkdir(parents=True)
        assert sweep_socket_folders() >= 1
        assert not stale.exists() and kept.exists()
    finally:
        alive.kill()
        alive.wait()
        shutil.rmtree(kept, ignore_errors=True)
