"""A new game family is one package: the test-only family in ``tests/toy_family`` (no edit
outside it) plays through the real registry, the random player, the referee with four bot
processes, the record replay, the conformance runner and the CLI listings."""

import json
import os
import subprocess
import sys

from conftest import ROOT

RANDOM_BOT = str(ROOT / "sample_bots" / "python" / "random")


def _arena(*args, families="tests.toy_family", cwd=ROOT):
    env = dict(os.environ, ARENA_FAMILIES=families, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=240)


def test_the_registry_lists_it_beside_the_built_in_variants():
    out = _arena("rules", "variants")
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line.split()[1:] for line in out.stdout.splitlines()[1:]}
    assert rows["toy-trick"] == ["toy", "1", "13", "2"]
    assert {"two-deck-80", "two-deck-fry", "single-deck", "three-deck"} <= set(rows)
    plain = subprocess.run([sys.executable, "-m", "cli", "rules", "variants"], cwd=ROOT,
                           capture_output=True, text=True, env=dict(os.environ,
                                                                   ARENA_FAMILIES=""))
    assert "toy-trick" not in plain.stdout


def test_a_family_that_cannot_be_loaded_is_named():
    out = _arena("rules", "variants", families="tests.no_such_family")
    assert out.returncode != 0
    assert "ARENA_FAMILIES" in out.stderr and "tests.no_such_family" in out.stderr
    assert "Traceback" not in out.stderr


def test_its_vectors_run_through_its_own_judge():
    out = _arena("rules", "check", "tests/toy_family/vectors.json")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines()[-1] == "4 passed, 0 failed"


def test_random_deals_in_process():
    out = _arena("bench", "engine", "--variant", "toy-trick", "--deals", "100", "--repeat", "1")
    assert out.returncode == 0, out.stderr
    measured = next(line for line in out.stdout.splitlines() if line.startswith("measured"))
    assert int(measured.split()[1]) >= 100  # deals played to the end, each of 13 tricks


def test_a_match_of_bot_processes_through_the_referee_replays(tmp_path):
    record = tmp_path / "toy.json"
    out = _arena("match", RANDOM_BOT, RANDOM_BOT, RANDOM_BOT, RANDOM_BOT, "--variant",
                 "toy-trick", "--deals", "2", "--seed", "toy", "--out", str(record))
    assert out.returncode == 0, out.stdout + out.stderr
    data = json.loads(record.read_text())
    game = data["games"][0] if "games" in data else data
    assert game["variant"] == "toy-trick"
    plays = [e for e in game["events"] if e["event"] == "Played"]
    assert len(plays) == 2 * 4 * 13
    verify = _arena("replay", str(record), "--verify")
    assert verify.returncode == 0 and "verified" in verify.stdout, verify.stdout + verify.stderr
