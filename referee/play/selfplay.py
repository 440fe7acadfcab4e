"""In-process play with policies (functions from a state to an action), chance from the seed.

Used by the engine benchmark, the demo and the tests; the match runner with real bots lives
apart from this."""

from __future__ import annotations

import random
from typing import Callable

from referee.play.chance import chance_action
from referee.play.random_play import random_action
from referee.rules.families import family_of, presets
from referee.rules.options import RuleSet
from referee.rules.sampling import DECLARE_RATE
from referee.rules.record import MatchRecord
from referee.rules.state import CHANCE, State
from referee.rules.engine import apply, new_game

Policy = Callable[[State], object]


def random_policies(seed: int | str, declare_rate: float | None = None,
                    rules: RuleSet | None = None) -> list[Policy]:
    """Four independent random players, each with its own generator; given the ``rules``,
    they call that family's random player directly (the engine benchmark's hot path)."""
    rngs = [random.Random(f"player:{seed}:{i}") for i in range(4)]
    act = random_action if rules is None else family_of(rules).random_action
    rate = DECLARE_RATE if declare_rate is None else declare_rate
    return [_random_player(act, r, rate) for r in rngs]


def _random_player(act: Callable[[State, random.Random, float], object], rng: random.Random,
                   rate: float) -> Policy:
    """A player answering ``act(state, rng, rate)``."""
    return lambda s: act(s, rng, rate)


def play(rules: RuleSet, seed: int | str, policies: list[Policy] | None = None, *,
         max_deals: int | None = 1, levels=None, dealer=None, record: bool = False,
         on_action=None):
    """Play a game (or ``max_deals`` deals) and return (final state, record or None, decisions).

    ``on_action(state_before, seat, action, state_after, events)`` is called after every action
    when given (the invariant tests hook in here)."""
    policies = policies or random_policies(seed, rules=rules)
    state = new_game(rules, levels=levels, dealer=dealer, max_deals=max_deals)
    rec = None
    if record:
        rec = MatchRecord(rules.variant, _overrides(rules), seed,
                          {"levels": None if levels is None else list(levels),
                           "dealer": dealer, "max_deals": max_deals})
    decisions = 0
    while not state.is_terminal:
        if state.turn == CHANCE:
            seat = None
            action = chance_action(state, seed)
        else:
            seat = state.turn
            action = policies[seat](state)
            decisions += 1
        new, events = apply(state, action, seat)
        if rec is not None:
            rec.add(seat, action, events)
        if on_action is not None:
            on_action(state, seat, action, new, events)
        state = new
    if rec is not None:
        rec.finish(state)
    return state, rec, decisions


def _overrides(rules: RuleSet) -> dict:
    base = presets()[rules.variant].to_dict()
    return {k: v for k, v in rules.to_dict().items() if base.get(k) != v}
