"""The Python SDK (``sdk/python``: ``arena_sdk``, its card functions and the rules engine it
carries, the protocol package) is a package of its own and comes with every Python bot: a sample
copied out of the repository, with only its name changed, plays in ``arena match`` and is stored
by ``arena bots submit``; a stdio Python bot and a Python build step import it too; and
``pip install`` of its folder makes ``arena_sdk`` importable in a fresh environment, away from
the repository."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest
from conftest import ROOT

from referee.match.matchfile import MatchFile
from referee.seats.build import build_bot, discard
from referee.seats.launch import SDK
from referee.seats.manifest import load_manifest
from referee.seats.sandbox import sandbox_problem

SAMPLES = ROOT / "sample_bots" / "python"
SDK_PACKAGE = ROOT / "sdk" / "python"
NO_SANDBOX = sandbox_problem()
needs_sandbox = pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no sandbox here: {NO_SANDBOX}")

STDIO_BOT = '''"""A stdio bot that weighs the hint's actions with the SDK's cards."""

import json
import sys

from arena_sdk.cards import cards, points


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "request":
        actions = message["hint"]["actions"]
        choice = min(actions, key=lambda a: (points(cards(a["cards"])), len(a["cards"])))
        print(json.dumps({"request_id": message["request_id"], "action": choice}), flush=True)
    elif message["type"] == "match_end":
        break
'''


def _arena(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """The arena's command line, as an author runs it: from their own folder, with no
    PYTHONPATH."""
    program = Path(sys.executable).parent / "arena"
    command = [str(program)] if program.exists() else [sys.executable, "-m", "cli"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([*command, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _copy(sample: str, into: Path, name: str) -> Path:
    """A Python sample copied into ``into``, its manifest changed in its name alone."""
    folder = into / name
    shutil.copytree(SAMPLES / sample, folder, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (folder / "bot.toml").read_text()
    (folder / "bot.toml").write_text(toml.replace(f'name = "{sample}"', f'name = "{name}"', 1))
    before = (SAMPLES / sample / "bot.toml").read_text().splitlines()
    after = (folder / "bot.toml").read_text().splitlines()
    assert [(a, b) for a, b in zip(before, after) if a != b] == [
        (f'name = "{sample}"', f'name = "{name}"')]
    return folder


@pytest.fixture(scope="module")
def authors_folder(tmp_path_factory):
    """An author's folder outside the repository: copies of greedy and random, and a stdio bot
    of their own."""
    where = tmp_path_factory.mktemp("author")
    assert ROOT not in where.parents
    _copy("greedy", where, "my-greedy")
    _copy("random", where, "my-random")
    stdio = where / "my-stdio"
    stdio.mkdir()
    (stdio / "bot.py").write_text(STDIO_BOT)
    (stdio / "bot.toml").write_text('name = "my-stdio"\nversion = "1.0.0"\n'
                                    'command = ["python3", "bot.py"]\nprotocol = "stdio"\n')
    return where


def test_the_python_samples_name_no_sdk_folder():
    """The SDK is no file of the samples' folder, and no sample's manifest names a folder
    outside its own (search falls back on the SDK's greedy bot, not on the greedy sample)."""
    assert not (SAMPLES / "arena_bot.py").exists() and not (SAMPLES / "arena_policy.py").exists()
    assert (SDK / "arena_sdk" / "__init__.py").is_file() and SDK == SDK_PACKAGE / "src"
    tomls = sorted(SAMPLES.glob("*/*.toml"))
    assert len(tomls) >= 5
    for toml in tomls:
        assert tomllib.loads(toml.read_text()).get("pythonpath") is None, toml


@needs_sandbox
def test_copied_samples_play_a_match_outside_the_repository(authors_folder):
    """greedy and random copied out of the repository, and a stdio bot importing the SDK,
    play two deals sandboxed: no fault, no strike, a record that verifies."""
    done = _arena("match", "my-greedy", "my-random", "my-greedy", "my-stdio", "--deals", "2",
                  "--variant", "two-deck-fry", "--seed", "sdk", "--out", "sdk.json",
                  cwd=authors_folder)
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads((authors_folder / "sdk.json").read_text())
    logs = {p.name: p.read_text(errors="replace")[-1500:]
            for p in authors_folder.glob("logs-*/seat*.log")}
    assert record["faults"] == [], (record["faults"], logs)
    assert record["result"]["forfeit"] is None and record["result"]["strikes"] == [0, 0, 0, 0]
    assert record["bots"] == ["my-greedy@1.0.0", "my-random@1.0.0", "my-greedy@1.0.0",
                              "my-stdio@1.0.0"]
    assert record["sandbox"] == "bubblewrap"
    assert MatchFile.from_dict(record).verify() == []
    replay = _arena("replay", "sdk.json", "--verify", cwd=authors_folder)
    assert replay.returncode == 0 and "verified" in replay.stdout, replay.stdout + replay.stderr


def test_a_copied_sample_is_submitted_and_read_back(authors_folder, tmp_path):
    """``arena bots submit`` stores the copied greedy into a fresh store, with no pythonpath
    to carry, and ``arena bots show`` reads it back."""
    db = f"sqlite:///{tmp_path / 'store.db'}"
    done = _arena("bots", "submit", "my-greedy", "--db", db, cwd=authors_folder)
    assert done.returncode == 0, done.stdout + done.stderr
    shown = _arena("bots", "show", "my-greedy@1.0.0", "--db", db, cwd=authors_folder)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "my-greedy" in shown.stdout and "bot.py" in shown.stdout and "bot.toml" in shown.stdout
    assert "@sdk" not in shown.stdout and "@arena" not in shown.stdout


@needs_sandbox
def test_a_python_build_step_imports_the_sdk(tmp_path):
    """A Python build step (sandboxed, like every build) finds the SDK and the engine it
    carries, and nothing else of the arena."""
    folder = tmp_path / "source"
    folder.mkdir()
    (folder / "bot.toml").write_text(
        'name = "built"\nversion = "1"\ncommand = ["python3", "bot.py"]\nprotocol = "grpc"\n'
        'build = [["python3", "-c", "import arena_sdk.cards, arena_sdk.policy; '
        "import importlib.util as u; print('seats:', u.find_spec('referee.seats')); "
        "open('built.txt', 'w').write(str(arena_sdk.cards.card('BJ')))\"]]\n")
    result = build_bot(load_manifest(folder), folder, tmp_path / "built")
    try:
        assert result.sandboxed
        assert (result.folder / "built.txt").read_text() == "53", result.log
        assert "seats: None" in result.log, result.log
    finally:
        discard(result.folder)


def test_pip_installs_the_sdk_into_a_fresh_environment(tmp_path):
    """``pip install`` of the SDK's folder (offline, with the arena's setuptools) into a fresh
    environment that reaches grpcio and protobuf but not the arena: ``arena_sdk``, its cards,
    its policies and the former ``arena_bot`` import from there, away from the repository;
    the engine's seats, the referee's server and the arena's command line do not come with it."""
    # the SDK's folder and the arena's folders it packs, copied: the build writes beside them
    source = tmp_path / "source"
    skip = shutil.ignore_patterns("__pycache__", "build", "*.egg-info")
    shutil.copytree(SDK_PACKAGE, source / "sdk" / "python", ignore=skip)
    shutil.copytree(ROOT / "protos", source / "protos", ignore=skip)
    (source / "referee").mkdir()
    shutil.copy(ROOT / "referee" / "__init__.py", source / "referee")
    for part in ("rules", "play", "wire"):
        shutil.copytree(ROOT / "referee" / part, source / "referee" / part, ignore=skip)
    shutil.copytree(ROOT / "house", source / "house", ignore=skip)
    fresh = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(fresh)], check=True)
    python = fresh / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; "
                           "print(sysconfig.get_paths()['purelib'])"], capture_output=True,
                          text=True, check=True).stdout.strip()
    # grpcio, protobuf and setuptools from the arena's environment: a folder named in a .pth
    # file gets none of its own .pth files read, so the arena's packages stay out of reach
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                              "--no-deps", "--no-build-isolation", "--no-index", "--quiet",
                              str(source / "sdk" / "python")], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    probe = ("import importlib.util as u, json, arena_sdk, arena_sdk.cards as c, "
             "arena_sdk.policy, arena_bot, arena_policy, shengji_arena.v1.referee_pb2 as pb\n"
             "ctx = c.card_order('two-deck-fry', '5', 'H')\n"
             "print(json.dumps({'sdk': arena_sdk.__file__, 'pb': pb.__file__,"
             " 'bot': arena_bot.Bot is arena_sdk.Bot, 'trump': ctx.cls[c.card('5S')] == c.TRUMP,"
             " 'missing': [m for m in ('referee.seats', 'referee.server', 'cli', 'scheduler')"
             " if u.find_spec(m.split('.')[0]) is None or u.find_spec(m) is None]}))")
    away = tmp_path / "elsewhere"
    away.mkdir()
    seen = subprocess.run([str(python), "-c", probe], cwd=away, env=env, capture_output=True,
                          text=True, timeout=60)
    assert seen.returncode == 0, seen.stderr
    seen = json.loads(seen.stdout)
    assert seen["sdk"].startswith(site) and seen["pb"].startswith(site), seen
    assert seen["bot"] and seen["trump"], seen
    assert seen["missing"] == ["referee.seats", "referee.server", "cli", "scheduler"], seen
