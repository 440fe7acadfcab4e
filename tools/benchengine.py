"""``arena bench engine``: how many random legal deals the engine plays a second on one core.

``python -m tools.benchengine --both [--variant V] [--rounds N]``: the pure and the compiled
engine (``make compiled``) against each other in one run, ``arena bench engine`` of each
alternated round by round (which goes first alternates too).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

import referee.rules
from house import settings
from referee.play.selfplay import play
from referee.rules import apply, family_of, new_game, rules_for


# The workload whose instructions are counted: random play of GAMES games of up to 10 deals
# (PASSES passes after a warm-up), with either layout's import path.
WORKLOAD = r'''
import sys
try:
    from referee.play.selfplay import play
except ImportError:
    from referee.selfplay import play
from referee.rules import rules_for
variant, games, passes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rules = rules_for(variant)
play(rules, "warm-up", max_deals=2)
for _ in range(passes):
    for g in range(games):
        play(rules, f"bench:{g}", max_deals=10)
'''


def bench_engine(variant: str, deals_wanted: int = 2000, repeat: int = 5) -> int:
    """Random legal deals in process on one core, against the engine alone replaying the same
    actions in the same run; prints the figures with the machine and the command."""
    rules = rules_for(variant)
    play(rules, "warm-up", max_deals=2)  # warm caches (trump contexts)
    per_round = max(1, deals_wanted // repeat)
    rates, engine_rates = [], []
    deals = decisions = 0
    cpu = engine_cpu = 0.0
    game = 0
    for _ in range(repeat):
        r_deals = 0
        r_cpu = r_engine = 0.0
        while r_deals < per_round:
            actions: list = []
            max_deals = min(10, per_round - r_deals)
            t = time.process_time()
            state, _, n = play(rules, f"bench:{game}", max_deals=max_deals,
                               on_action=lambda b, seat, a, after, ev: actions.append((seat, a)))
            r_cpu += time.process_time() - t
            # baseline in the same run: the engine alone applying the same actions, no players
            t = time.process_time()
            s = new_game(rules, max_deals=max_deals)
            for seat, a in actions:
                s, _ = apply(s, a, seat)
            r_engine += time.process_time() - t
            r_deals += state.deal_no
            decisions += n
            game += 1
        rates.append(r_deals / r_cpu)
        engine_rates.append(r_deals / r_engine)
        deals += r_deals
        cpu += r_cpu
        engine_cpu += r_engine
    median = statistics.median(rates)
    goal = family_of(rules).engine_goal
    print(f"command      arena bench engine --variant {variant} --deals {deals_wanted} "
          f"--repeat {repeat}")
    print(f"machine      {platform.machine()} {cpu_model()}, {os.cpu_count()} cpus, python "
          f"{platform.python_version()}; one process, one core")
    print(f"engine       {engine()}")
    print(f"measured     {deals} random legal deals, {decisions} decisions, {cpu:.3f} s cpu, "
          f"in {repeat} rounds")
    print(f"deals/s      {median:.1f} (median of the rounds; range {min(rates):.1f} - "
          f"{max(rates):.1f}; overall {deals / cpu:.1f})")
    print(f"decisions/s  {decisions / cpu:.1f}")
    print(f"baseline     the engine alone replaying the same actions: "
          f"{statistics.median(engine_rates):.1f} deals/s (median)")
    print(f"ratio        random play / engine alone = {cpu / engine_cpu:.2f}x the time; "
          f"median deals/s against the {goal} deals/s goal = {median / goal:.2f}")
    return 0


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown cpu"


def machine() -> str:
    """This machine in one line, for a benchmark's report: CPU model, cpus, kernel."""
    return f"{cpu_model()}, {os.cpu_count()} cpus, {platform.system()} {platform.release()}"


def engine() -> str:
    """Which engine runs: pure, or compiled with the modules loaded from extensions."""
    if referee.rules.ENGINE != "compiled":
        return "pure (the source; make compiled builds the compiled engine)"
    from referee.rules.compiled import loaded_from_extension
    names = [n for n, m in list(sys.modules.items())
             if n.startswith("referee.rules.") and loaded_from_extension(m)]
    return f"compiled ({len(names)} modules from build/compiled, mypyc; ARENA_ENGINE=pure for " \
           "the source)"


def _rate(engine_name: str, variant: str, deals: int) -> float:
    """The median deals/s of ``arena bench engine`` in a fresh process on one engine."""
    code = ("import sys\nfrom tools.benchengine import bench_engine\n"
            "bench_engine(sys.argv[1], int(sys.argv[2]))")
    run = subprocess.run([sys.executable, "-c", code, variant, str(deals)], capture_output=True,
                         text=True, env={**os.environ, settings.ENGINE.name: engine_name})
    match = re.search(r"^deals/s\s+([0-9.]+)", run.stdout, re.M)
    if run.returncode or match is None or f"engine       {engine_name}" not in run.stdout:
        raise SystemExit(f"bench: the {engine_name} engine failed (exit {run.returncode}):\n"
                         f"{run.stdout[-1000:]}{run.stderr[-2000:]}")
    return float(match.group(1))


def bench_both(variant: str = "two-deck-fry", rounds: int = 3, deals: int = 2000) -> int:
    """The pure and the compiled engine alternated, ``rounds`` runs of each; prints both rates
    and their ratio (medians)."""
    print(f"command      python -m tools.benchengine --both --variant {variant} --rounds "
          f"{rounds} --deals {deals}")
    print(f"machine      {machine()}, python {platform.python_version()}; each rate the median "
          f"of arena bench engine's 5 rounds, the engines alternated")
    rates: dict[str, list[float]] = {"pure": [], "compiled": []}
    for r in range(rounds):
        order = ("pure", "compiled") if r % 2 == 0 else ("compiled", "pure")
        for name in order:
            rates[name].append(_rate(name, variant, deals))
    pure, compiled = (statistics.median(rates[n]) for n in ("pure", "compiled"))
    for name in ("pure", "compiled"):
        print(f"{name:<12} deals/s {', '.join(f'{x:.1f}' for x in rates[name])} (median "
              f"{statistics.median(rates[name]):.1f})")
    print(f"ratio        compiled / pure = {compiled / pure:.2f}x (medians)")
    if shutil.which("valgrind") is not None:  # a count the machine's load does not change
        games = 10
        count = {name: _instructions(name, variant, games, 2) - _instructions(name, variant,
                                                                              games, 1)
                 for name in ("pure", "compiled")}
        print(f"instructions {games} random games of up to 10 deals (callgrind, start-up left "
              f"out): pure {count['pure'] / 1e6:,.0f} M, compiled {count['compiled'] / 1e6:,.0f} "
              f"M; pure / compiled = {count['pure'] / count['compiled']:.2f}x")
    return 0


def _instructions(engine_name: str, variant: str, games: int, passes: int) -> int:
    """Instructions (valgrind's callgrind) of ``passes`` passes of ``games`` random games on one
    engine (``tools.benchcompare``'s workload)."""
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                          sys.executable, "-c", WORKLOAD, variant, str(games), str(passes)],
                         capture_output=True, text=True,
                         env={**os.environ, settings.ENGINE.name: engine_name})
    match = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode or match is None:
        raise SystemExit(f"bench: the counted workload on the {engine_name} engine failed (exit "
                         f"{out.returncode}):\n{out.stderr[-2000:]}")
    return int(match.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.benchengine")
    parser.add_argument("--both", action="store_true",
                        help="the pure and the compiled engine, alternated in one run")
    parser.add_argument("--variant", default="two-deck-fry")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--deals", type=int, default=2000)
    args = parser.parse_args(argv)
    if args.both:
        return bench_both(args.variant, args.rounds, args.deals)
    return bench_engine(args.variant, args.deals)


if __name__ == "__main__":
    sys.exit(main())
