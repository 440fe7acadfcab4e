"""The evaluation-power study (``arena study power``, ``arena sprt``): duplicate deals played
between two bots, in process (``random``, ``greedy``, ``greedy-noisy``: the engine's random
player and the lab's greedy policy) or through the referee (bots as processes), each deal's
scores as ``scheduler.stats.power`` counts them, and a sequential test run on the pairs as they
are played.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import numpy as np

from referee.play.random_play import random_action
from referee.rules.state import State

from lab.match import seat_inputs
from lab.policy import make_policy
from scheduler.stats.power import DealPair, PairedSprt, SequentialResult, card_luck, set_scores
from scheduler.stats.ratings import Sprt
from scheduler.stats.scores import FORFEIT_OUTCOME, deal_outcome, point_step

Policy = Callable[[State], object]
#: the bots the study plays in process (other bots play through the referee)
IN_PROCESS = ("random", "greedy", "greedy-noisy")
NOISE = 0.1  # greedy-noisy's default chance of a random legal action


def in_process(name: str) -> bool:
    """Whether ``name`` is a policy the study plays in process (``greedy-noisy:0.05`` too)."""
    return name.split(":", 1)[0] in IN_PROCESS


def policy(name: str, seed: str) -> Policy:
    """The in-process policy ``name`` for one seat of one match, its randomness from ``seed``:
    ``random`` (uniform legal actions), ``greedy`` (the lab's greedy policy, handed what the
    referee would list) or ``greedy-noisy[:EPS]`` (greedy, but a random legal action with
    chance EPS, default 0.1: a bot of close strength)."""
    base, _, arg = name.partition(":")
    rng = random.Random(f"policy:{name}:{seed}")
    if base == "random":
        return lambda s: random_action(s, rng)
    if base not in ("greedy", "greedy-noisy"):
        raise ValueError(f"unknown in-process policy {name!r}: expected one of "
                         f"{', '.join(IN_PROCESS)}")
    try:
        eps = float(arg) if arg else (NOISE if base == "greedy-noisy" else 0.0)
    except ValueError:
        raise ValueError(f"policy {name!r}: the noise after ':' must be a number") from None
    if not 0 <= eps <= 1:
        raise ValueError(f"policy {name!r}: the noise must be within [0, 1]")
    greedy = make_policy("greedy")
    count = [0]

    def act(s):
        if eps and rng.random() < eps:
            return random_action(s, rng)
        count[0] += 1
        view, legal = seat_inputs(s, f"{seed}:{count[0]}", 0, 0)
        return greedy.act(view, legal)
    return act


# -- playing duplicate deals -----------------------------------------------------------------
def _play_once(rules, seed: str, dealer: int, team0: str, team1: str, tag: str):
    from referee.match.results import DealFold
    from referee.play.selfplay import play
    from referee.rules.events import CardDealt, DealStarted
    seats = [team0, team1, team0, team1]
    pols = [policy(seats[i], f"{tag}:{seed}:{i}") for i in range(4)]
    got: dict = {"hands": [[], [], [], []]}
    fold = DealFold(rules.to_dict().get("after_ace") == "wrap")

    def hook(_before, _seat, _action, _after, events):
        for e in events:
            fold.see(e)
            if isinstance(e, CardDealt):
                if not fold.deals and "dealt" not in got:
                    got["hands"][e.seat].append(e.card)
            elif isinstance(e, DealStarted):
                if "dealt" not in got:
                    got["hands"] = [[], [], [], []]  # a redeal: the cards dealt again
                    got["level"] = e.levels[e.dealer % 2] if e.dealer is not None else 0
    play(rules, seed, pols, max_deals=1, levels=("2", "2"), dealer=dealer, on_action=hook)
    return fold.deals[-1], got["hands"], got.get("level", 0)


def play_pairs(a: str, b: str, variant: str, deals: int, seed: str = "power",
               progress: Callable[[int], None] | None = None) -> list[DealPair]:
    """``deals`` duplicate deals of in-process policies ``a`` against ``b``, each from its own
    seed (``seed``:deal), the dealer rotating over the seats."""
    from referee.rules import rules_for
    rules = rules_for(variant)
    step = point_step(rules.decks)
    out = []
    for i in range(deals):
        s = f"{seed}:{i}"
        d1, hands, level = _play_once(rules, s, i % 4, a, b, "m1")
        d2, _, _ = _play_once(rules, s, i % 4, b, a, "m2")
        out.append(DealPair(s, deal_outcome(d1, 0, step), deal_outcome(d2, 1, step),
                            d1.gain[0] - d1.gain[1], d2.gain[1] - d2.gain[0],
                            card_luck(hands, level)))
        if progress is not None:
            progress(i + 1)
    return out


def dealt_hands(rules, seed: str, dealer: int | None) -> tuple[list[list[int]], int]:
    """The four hands deal ``seed`` gives and the level rank (``dealer`` None: the rules find
    the dealer): dealing draws from the seeded deck whatever the seats declare, so a
    never-declaring random play finds the same cards."""
    from referee.play.selfplay import play
    from referee.rules.events import CardDealt, DealStarted
    got: dict = {"hands": [[], [], [], []], "level": 0, "done": False}
    rng = random.Random(seed)

    def hook(_b, _s, _a, after, events):
        for e in events:
            if got["done"]:
                return
            if isinstance(e, DealStarted):
                got["hands"] = [[], [], [], []]
                got["level"] = e.levels[e.dealer % 2] if e.dealer is not None else 0
            elif isinstance(e, CardDealt):
                got["hands"][e.seat].append(e.card)
        if after.phase.name not in ("SHUFFLE", "DEALING") and any(got["hands"]):
            got["done"] = True
    play(rules, seed, [lambda s: random_action(s, rng, 0.0)] * 4, max_deals=1,
         levels=("2", "2"), dealer=dealer, on_action=hook)
    return got["hands"], got["level"]


def referee_pairs(a, b, variant: str, deals: int, per_set: int, secret: str, workdir: Path,
                  workers: int = 2, progress: Callable[[int], None] | None = None,
                  stop: Callable[[list[DealPair]], bool] | None = None,
                  prefix: str = "power") -> list[DealPair]:
    """Duplicate pairs of ``per_set`` deals between SeasonBots ``a`` and ``b`` played by the
    referee (``deals`` in all), in order; ``stop(deals so far)`` ends the run early. Matches
    are ``PREFIX-KKKK-M``, deal seeds keyed by ``secret`` from ``PREFIX:setK:dealJ`` (as
    ``arena sprt --score wdl`` labels its deals: the same secret gives the same cards)."""
    from referee.match.spec import DEFAULT_TIME_CONTROL, DealSpec
    from referee.rules import rules_for
    from scheduler.execute import play_again
    from scheduler.league import here, in_order
    from scheduler.season import pairing_spec
    from scheduler.season import deal_seed
    rules = rules_for(variant)
    step = point_step(rules.decks)
    n_sets = max(1, deals // per_set)

    def play_set(k: int) -> list[DealPair]:
        ds = [DealSpec(deal_seed(secret, f"{prefix}:set{k}:deal{j}"), ("2", "2"),
                       (k * per_set + j) % 4) for j in range(per_set)]
        got = []
        for m, (t0, t1) in enumerate(((a, b), (b, a))):
            spec = pairing_spec(f"{prefix}-{k:04d}-{m}", here(t0), here(t1), variant=variant,
                                options={}, deals=ds, time_control=DEFAULT_TIME_CONTROL)
            got.append(play_again(spec, workdir / spec.match_id).summary())
        s1, s2 = got
        forfeit = None
        if s1.forfeit_team is not None or s2.forfeit_team is not None:
            who = {("a", "b")[s1.forfeit_team] if s1.forfeit_team is not None else None,
                   ("b", "a")[s2.forfeit_team] if s2.forfeit_team is not None else None}
            forfeit = "".join(sorted(w for w in who if w))
        out = []
        for j, d in enumerate(ds):
            hands, level = dealt_hands(rules, d.seed, d.dealer)
            if j < len(s1.deals) and j < len(s2.deals):
                d1, d2 = s1.deals[j], s2.deals[j]
                out.append(DealPair(d.seed, deal_outcome(d1, 0, step),
                                    deal_outcome(d2, 1, step), d1.gain[0] - d1.gain[1],
                                    d2.gain[1] - d2.gain[0], card_luck(hands, level), forfeit))
            else:  # a forfeit ended a match before this deal: it counts as the loss it gave
                loser = 1.0 if forfeit == "b" else -1.0 if forfeit == "a" else 0.0
                out.append(DealPair(d.seed, FORFEIT_OUTCOME * loser, FORFEIT_OUTCOME * loser,
                                    0, 0,
                                    card_luck(hands, level), forfeit))
        return out

    pairs: list[DealPair] = []
    for got in in_order(play_set, n_sets, workers):  # a sequential test sees sets as numbered
        pairs.extend(got)
        if progress is not None:
            progress(len(pairs))
        if stop is not None and stop(pairs):
            break
    return pairs


def run_sequential(next_sets, chosen: str, paired: PairedSprt, wdl: Sprt, max_pairs: int,
                   per_set: int, progress: Callable[[int, dict], None] | None = None,
                   both: bool = False) -> SequentialResult:
    """Both tests on one stream of duplicate pairs (``next_sets(stop)`` yields each pair's
    deals in order, ending when ``stop(pairs so far)`` is true), until the ``chosen`` one
    ("diff" or "wdl") decides (``both``: until both have) or ``max_pairs``. Returns the tally,
    each test's LLR and where each decided ({"diff": (pairs, decision or None), "wdl": ...})."""
    state: dict = {"pairs": 0, "W": 0, "D": 0, "L": 0, "scores": [], "stops": {}}

    def stop(deals: list[DealPair]) -> bool:
        while (state["pairs"] + 1) * per_set <= len(deals):
            k = state["pairs"]
            w, d = set_scores(deals[k * per_set:(k + 1) * per_set], per_set)[0]
            state["pairs"] += 1
            state["W" if w == 1.0 else "D" if w == 0.5 else "L"] += 1
            state["scores"].append(d)
            for key, got in (("diff", paired.decide(state["scores"])),
                             ("wdl", wdl.decide(state["W"], state["D"], state["L"]))):
                if got and key not in state["stops"]:
                    state["stops"][key] = (state["pairs"], got)
            if progress is not None:
                progress(state["pairs"], state)
            done = len(state["stops"]) == 2 if both else chosen in state["stops"]
            if done or state["pairs"] >= max_pairs:
                return True
        return False
    next_sets(stop)
    n = state["pairs"]
    decided_at, decision = state["stops"].get(chosen, (n, None))
    return SequentialResult(
        n, 2 * n * per_set, state["W"], state["D"], state["L"],
        llr_wdl=wdl.llr(state["W"], state["D"], state["L"]), decision=decision,
        decided_at=decided_at, llr_diff=paired.llr(state["scores"]),
        mean_diff=float(np.mean(state["scores"])) if state["scores"] else 0.0,
        stops={k: state["stops"].get(k, (n, None)) for k in ("diff", "wdl")})


def in_process_sets(a: str, b: str, variant: str, per_set: int, seed: str, max_pairs: int):
    """``run_sequential``'s source of pairs for in-process policies."""
    def gen(stop) -> None:
        deals: list[DealPair] = []
        for k in range(max_pairs):
            deals.extend(play_pairs(a, b, variant, per_set, seed=f"{seed}:set{k}"))
            if stop(deals):
                return
    return gen
