"""``arena bench engine``: how many random legal deals the engine plays a second on one core."""

from __future__ import annotations

import os
import platform
import statistics
import time

from referee.play.selfplay import play
from referee.rules import apply, family_of, new_game, rules_for


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
