"""``arena bench lab``: the strategy lab's deals a second with random policies on one core,
against ``arena bench engine``'s random play measured in the same run; and (``python -m
tools.benchlab VARIANT ...``) what each part of a lab decision costs against the engine's."""

from __future__ import annotations

import os
import platform
import random
import statistics
import sys
import time

from lab.match import play_match
from lab.policy import Legal, RandomPolicy, listed_actions, play_listing
from referee.match.spec import DealSpec, MatchSpec
from referee.play.random_play import random_action
from referee.play.selfplay import play
from referee.rules import apply, observe, rules_for
from referee.rules.actions import DecisionKind
from tools.benchengine import cpu_model


class _ViewingRandom(RandomPolicy):
    """The random policy handed the seat's view at every decision (which it does not read):
    what the lab costs a policy that observes."""

    observes = True


def bench_lab(variant: str, deals_wanted: int = 1000, repeat: int = 5) -> float:
    """Rounds of lab deals (deal-list matches of random policies, one seat each), of the engine
    benchmark's random play and of lab deals whose policies are handed the view, interleaved a
    match of up to 10 deals at a time (this machine's speed drifts within a round as much as
    between rounds); prints the figures and each round's ratio of the lab to the engine, and
    returns the median of those ratios."""
    rules = rules_for(variant)
    per_round = max(4, deals_wanted // repeat)
    play(rules, "warm-up", max_deals=2)
    _lab_round(variant, 8, "warm-up")
    lab_rates, engine_rates, viewing_rates = [], [], []
    lab_decisions = lab_cpu_all = 0.0
    for r in range(repeat):
        lab_cpu = engine_cpu = viewing_cpu = 0.0
        lab_deals = engine_deals = viewing_deals = 0
        chunk = 0
        while lab_deals < per_round:
            n = min(10, per_round - lab_deals)
            seed = f"bench:{r}:{chunk}"
            t = time.process_time()
            deals, decisions = _lab_round(variant, n, seed)
            lab_cpu += time.process_time() - t
            lab_deals += deals
            lab_decisions += decisions
            t = time.process_time()  # arena bench engine's loop: a game of up to 10 deals
            state, _, _ = play(rules, seed, max_deals=n)
            engine_cpu += time.process_time() - t
            engine_deals += state.deal_no
            t = time.process_time()
            deals, _ = _lab_round(variant, n, seed, _ViewingRandom)
            viewing_cpu += time.process_time() - t
            viewing_deals += deals
            chunk += 1
        lab_rates.append(lab_deals / lab_cpu)
        engine_rates.append(engine_deals / engine_cpu)
        viewing_rates.append(viewing_deals / viewing_cpu)
        lab_cpu_all += lab_cpu
    ratios = [a / b for a, b in zip(lab_rates, engine_rates)]
    viewing = [a / b for a, b in zip(viewing_rates, engine_rates)]
    ratio = statistics.median(ratios)
    print(f"command      arena bench lab --variant {variant} --deals {deals_wanted} "
          f"--repeat {repeat}")
    print(f"machine      {platform.machine()} {cpu_model()}, {os.cpu_count()} cpus, python "
          f"{platform.python_version()}; one process, one core")
    print(f"lab          {_spread(lab_rates)} deals/s (rounds of {per_round} deals); "
          f"{lab_decisions / lab_cpu_all:.0f} decisions/s; random policies (no view)")
    print(f"engine       {_spread(engine_rates)} deals/s (arena bench engine's random play, "
          "interleaved with the lab a match at a time)")
    print(f"lab, viewed  {_spread(viewing_rates)} deals/s (the same policies handed the view)")
    print(f"ratio        lab / engine = {ratio:.2f}x (goal 0.8x; median of the {repeat} rounds' "
          f"ratios, range {min(ratios):.2f} - {max(ratios):.2f}); handed the view "
          f"{statistics.median(viewing):.2f}x (range {min(viewing):.2f} - {max(viewing):.2f})")
    return ratio


def _spread(rates: list[float]) -> str:
    return f"{statistics.median(rates):.1f} (median; range {min(rates):.1f} - {max(rates):.1f})"


def _lab_round(variant: str, deals: int, seed: str, policy=RandomPolicy) -> tuple[int, int]:
    """``deals`` deals in matches of up to 10 deals, a ``policy`` on every seat."""
    done = decisions = 0
    m = 0
    while done < deals:
        n = min(10, deals - done)
        spec = MatchSpec(f"{seed}-{m}", variant, deals=[
            DealSpec(f"{seed}:{m}:{j}", ("2", "2"), j % 4) for j in range(n)],
            seat_names=["a", "b", "a", "b"])
        got = play_match(spec, [policy() for _ in range(4)], clock=False)
        done += len(got.summary.deals)
        decisions += got.decisions
        m += 1
    return done, decisions


_PLAY_KINDS = (DecisionKind.LEAD, DecisionKind.FOLLOW)


def decision_parts(variant: str, deals: int = 20, passes: int = 5) -> dict[str, float]:
    """Microseconds a deal of each part of a decision, each timed alone (CPU time, the best of
    ``passes``) on the states of ``deals`` random deals: the rules' ``apply`` (A, in both), the
    engine benchmark's random draw (R), and the lab's view, listing of leads and follows,
    listing of other decisions, and ``Legal`` with the policy's choice (together X). Prints
    them with the X that 0.8x allows (1.25 R + 0.25 A) and the ratio they give, with the view
    and without it."""
    rules = rules_for(variant)
    states = []

    def keep(before, seat, action, after, events) -> None:
        if seat is not None:
            states.append((before, action))
    for d in range(deals):
        play(rules, f"parts:{d}", max_deals=1, on_action=keep)
    rng = random.Random(0)
    plays = [x for x in states if x[0].decision in _PLAY_KINDS]
    others = [x for x in states if x[0].decision not in _PLAY_KINDS]

    def per_deal(f, items) -> float:
        best = float("inf")
        for _ in range(passes):
            t = time.process_time()
            for x in items:
                f(x)
            best = min(best, time.process_time() - t)
        return best / deals * 1e6

    a = per_deal(lambda x: apply(x[0], x[1], x[0].turn), states)
    r = per_deal(lambda x: random_action(x[0], rng), states)
    view = per_deal(lambda x: observe(x[0], x[0].turn), states)
    lead_follow = per_deal(lambda x: play_listing(x[0]), plays)
    other = per_deal(lambda x: listed_actions(x[0], "parts"), others)
    listed = [(s, listed_actions(s, "parts")) for s, _ in states]
    rest = per_deal(lambda x: rng.choice(Legal(x[0].decision, *x[1], 2000, 10000).actions),
                    listed)
    x = view + lead_follow + other + rest
    print(f"{variant}: {len(states) / deals:.0f} decisions a deal; us a deal: apply (A) {a:.0f}, "
          f"random draw (R) {r:.0f}; view {view:.0f}, listing of leads and follows "
          f"{lead_follow:.0f}, of other decisions {other:.0f}, Legal and choice {rest:.0f}: "
          f"X {x:.0f} (0.8x allows {1.25 * r + 0.25 * a:.0f}); (A + R) / (A + X) = "
          f"{(a + r) / (a + x):.2f}x; without the view (a policy with observes = False) "
          f"X {x - view:.0f}, {(a + r) / (a + x - view):.2f}x")
    return {"apply": a, "random": r, "view": view, "lead_follow": lead_follow, "other": other,
            "rest": rest}


if __name__ == "__main__":
    for name in sys.argv[1:] or ["two-deck-80", "two-deck-fry", "botzone-tractor",
                                 "single-deck", "three-deck"]:
        decision_parts(name)
