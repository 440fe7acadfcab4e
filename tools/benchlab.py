"""``arena bench lab``: the strategy lab's deals a second with random policies on one core,
against ``arena bench engine``'s random play measured in the same run."""

from __future__ import annotations

import os
import platform
import statistics
import time

from lab.match import play_match
from lab.policy import RandomPolicy
from referee.match.spec import DealSpec, MatchSpec
from referee.play.selfplay import play
from referee.rules import rules_for
from tools.benchengine import cpu_model


def bench_lab(variant: str, deals_wanted: int = 1000, repeat: int = 5) -> float:
    """Rounds of lab deals (deal-list matches of random policies, one seat each) and of the
    engine benchmark's random play, alternating; prints both figures and their ratio and
    returns the ratio of the medians."""
    rules = rules_for(variant)
    per_round = max(4, deals_wanted // repeat)
    play(rules, "warm-up", max_deals=2)
    _lab_round(variant, 8, "warm-up")
    lab_rates, engine_rates = [], []
    lab_decisions = lab_cpu = engine_cpu = 0.0
    for r in range(repeat):
        t = time.process_time()
        deals, decisions = _lab_round(variant, per_round, f"bench:{r}")
        cpu = time.process_time() - t
        lab_rates.append(deals / cpu)
        lab_cpu += cpu
        lab_decisions += decisions
        t = time.process_time()
        done, game = 0, 0
        while done < per_round:  # arena bench engine's loop: games of up to 10 random deals
            state, _, _ = play(rules, f"bench:{r}:{game}", max_deals=min(10, per_round - done))
            done += state.deal_no
            game += 1
        cpu = time.process_time() - t
        engine_rates.append(done / cpu)
        engine_cpu += cpu
    lab_median, engine_median = statistics.median(lab_rates), statistics.median(engine_rates)
    ratio = lab_median / engine_median
    print(f"command      arena bench lab --variant {variant} --deals {deals_wanted} "
          f"--repeat {repeat}")
    print(f"machine      {platform.machine()} {cpu_model()}, {os.cpu_count()} cpus, python "
          f"{platform.python_version()}; one process, one core")
    print(f"lab          {lab_median:.1f} deals/s (median of {repeat} rounds of {per_round} "
          f"deals; range {min(lab_rates):.1f} - {max(lab_rates):.1f}); "
          f"{lab_decisions / lab_cpu:.0f} decisions/s")
    print(f"engine       {engine_median:.1f} deals/s (arena bench engine's random play, median; "
          f"range {min(engine_rates):.1f} - {max(engine_rates):.1f})")
    print(f"ratio        lab / engine = {ratio:.2f}x (goal 0.8x)")
    return ratio


def _lab_round(variant: str, deals: int, seed: str) -> tuple[int, int]:
    """``deals`` deals in matches of up to 10 deals, random policies on every seat."""
    done = decisions = 0
    m = 0
    while done < deals:
        n = min(10, deals - done)
        spec = MatchSpec(f"{seed}-{m}", variant, deals=[
            DealSpec(f"{seed}:{m}:{j}", ("2", "2"), j % 4) for j in range(n)],
            seat_names=["a", "b", "a", "b"])
        got = play_match(spec, [RandomPolicy() for _ in range(4)], clock=False)
        done += len(got.summary.deals)
        decisions += got.decisions
        m += 1
    return done, decisions
