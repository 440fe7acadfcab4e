"""``arena bench matchmaking``: the ladder's matchmaking against a round robin, in simulation
(``scheduler.stats.matchmaking``): how many duplicate pairs each needs before a share of
simulated ladders rank N bots of known strengths correctly, judged by the standings'
Bradley-Terry fit and by the ladder's own openskill ratings."""

from __future__ import annotations

import os
import platform
import time

from scheduler.stats import matchmaking as mm


def bench_matchmaking(bots: int, gap: float, runs: int, budget_rounds: int, share: float,
                      draw: float) -> int:
    strengths = {f"bot{i}": gap * i for i in range(bots)}
    per_round = bots * (bots - 1) // 2
    budget = per_round * budget_rounds
    print(f"{bots} bots {gap:g} Elo apart, draws {draw:.0%}; {runs} simulated ladders each; "
          f"pairs until {share:.0%} of them rank every bot right, checked every {per_round} "
          f"pairs (one round robin), up to {budget}; {platform.node()}, "
          f"{os.cpu_count()} cpus", flush=True)
    print(f"{'judged by':<14} {'tau >=':>6} {'matchmaking':>12} {'round robin':>12} {'ratio':>6}"
          f" {'seconds':>8}")
    for judge in ("bradley-terry", "openskill"):
        for tau in (1.0, 0.9):
            t = time.perf_counter()
            got = [mm.pairs_needed(strengths, schedule, runs=runs, budget=budget, share=share,
                                   tau=tau, every=per_round, judge=judge, draw=draw)
                   for schedule in (mm.matchmade, mm.round_robin)]
            shown = [str(g) if g is not None else f">{budget}" for g in got]
            made, robin = got
            ratio = f"{robin / made:.2f}" if made is not None and robin is not None else "-"
            print(f"{judge:<14} {tau:>6.2f} {shown[0]:>12} {shown[1]:>12} {ratio:>6} "
                  f"{time.perf_counter() - t:>8.1f}", flush=True)
    return 0
