"""``arena bench compare OTHER``: this tree's rules engine against another checkout's (an older
commit's, say), in one run: ``arena bench engine`` of each, alternated round by round, and,
where valgrind is installed, the instructions each executes for the same random deals (a count
that the machine's load does not change, unlike its times).

The other checkout is run with this tree's virtual environment and itself first on the path; it
needs a ``referee.rules`` with ``rules_for`` and a random-play ``play`` (``referee.play.selfplay``,
or ``referee.selfplay`` before the redesign).
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from tools.benchengine import WORKLOAD, machine

HERE = Path(__file__).resolve().parent.parent



def _env(tree: Path) -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree), str(tree / "protos")]))


def _engine_rate(tree: Path, variant: str, deals: int) -> float:
    """The median deals/s ``arena bench engine`` of ``tree`` prints."""
    cli = "cli.main" if (tree / "cli" / "main.py").is_file() else "scheduler.cli"  # its layout
    code = ("import importlib, sys\nsys.argv = ['arena', 'bench', 'engine', '--variant', "
            f"sys.argv[1], '--deals', sys.argv[2]]\nimportlib.import_module({cli!r}).main()")
    run = subprocess.run([sys.executable, "-c", code, variant, str(deals)], cwd=tree,
                         env=_env(tree), capture_output=True, text=True)
    match = re.search(r"^deals/s\s+([0-9.]+)", run.stdout, re.M)
    if run.returncode or match is None:
        raise SystemExit(f"arena bench compare: arena bench engine in {tree} failed (exit "
                         f"{run.returncode}):\n{run.stdout[-1000:]}{run.stderr[-2000:]}")
    return float(match.group(1))


def _instructions(tree: Path, variant: str, games: int, passes: int) -> int:
    """Instructions (valgrind's callgrind) of the workload in ``tree``."""
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                          sys.executable, "-c", WORKLOAD, variant, str(games), str(passes)],
                         cwd=tree, env=_env(tree), capture_output=True, text=True)
    match = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode or match is None:
        raise SystemExit(f"arena bench compare: the counted workload in {tree} failed (exit "
                         f"{out.returncode}):\n{out.stderr[-2000:]}")
    return int(match.group(1))


def bench_compare(other: str, variants: list[str], rounds: int = 3, deals: int = 2000,
                  games: int = 10) -> int:
    """Print, per variant, both trees' deals/s over ``rounds`` alternated rounds (which goes
    first alternates too) and, with valgrind, the instructions of one pass of ``games`` random
    games (two passes less one, so start-up does not count)."""
    other_tree = Path(other).resolve()
    if not (other_tree / "referee" / "rules").is_dir():
        raise SystemExit(f"arena bench compare: {other_tree} is not a checkout of this project "
                         "(no referee/rules folder)")
    print(f"command      arena bench compare {other} --variant {' '.join(variants)} --rounds "
          f"{rounds} --deals {deals}")
    print(f"machine      {machine()}, python {sys.version.split()[0]}; each rate a median of "
          f"arena bench engine's 5 rounds, the trees alternated")
    count = shutil.which("valgrind") is not None
    for variant in variants:
        mine: list[float] = []
        theirs: list[float] = []
        for r in range(rounds):
            pair = [(HERE, mine), (other_tree, theirs)]
            for tree, into in (pair if r % 2 == 0 else pair[::-1]):
                into.append(_engine_rate(tree, variant, deals))
        ratio = statistics.median(mine) / statistics.median(theirs)
        print(f"{variant:<16} deals/s: this tree {', '.join(f'{x:.1f}' for x in mine)}; other "
              f"{', '.join(f'{x:.1f}' for x in theirs)}; this / other (medians) {ratio:.3f}",
              flush=True)
        if count:
            per = {}
            for name, tree in (("this", HERE), ("other", other_tree)):
                per[name] = (_instructions(tree, variant, games, 2)
                             - _instructions(tree, variant, games, 1))
            print(f"{'':<16} instructions of {games} random games of up to 10 deals: this tree "
                  f"{per['this'] / 1e6:,.0f} M, other {per['other'] / 1e6:,.0f} M; this / other "
                  f"{per['this'] / per['other']:.3f}", flush=True)
    if not count:
        print("instructions not counted: valgrind is not installed (Debian: apt-get install "
              "valgrind)")
    return 0
