"""The SDK's greedy bot (which the greedy sample plays), driven in process through the wire
messages: every action it chooses is one the referee accepts."""

import random

import pytest

from referee.play.chance import chance_action
from referee.wire.hints import legal_hint
from referee.wire.protocol import DECISION_TO_PB, action_from_pb, observation_to_pb
from referee.play.random_play import random_action
from referee.rules.actions import DecisionKind
from referee.rules.variants import rules_for
from referee.rules.engine import new_game
from referee.rules.state import CHANCE
from referee.rules.engine import apply
from shengji_arena.v1 import referee_pb2 as pb


def _greedy():
    from arena_sdk.greedy import GreedyBot
    return GreedyBot()


def _request(state, seed: str) -> pb.DecisionRequest:
    return pb.DecisionRequest(request_id=1, kind=DECISION_TO_PB[state.decision],
                              observation=observation_to_pb(state, state.turn),
                              hint=legal_hint(state, seed))


@pytest.mark.parametrize("variant", ["two-deck-80", "two-deck-fry", "single-deck", "three-deck"])
def test_greedy_at_every_seat_plays_only_legal_actions(variant):
    bot = _greedy()
    rules = rules_for(variant)
    decisions = 0
    for game in range(8):
        seed = f"greedy:{variant}:{game}"
        state = new_game(rules, max_deals=2)
        while not state.is_terminal:
            if state.turn == CHANCE:
                state, _ = apply(state, chance_action(state, seed))
                continue
            action = bot.decide(_request(state, f"{seed}:{decisions}"))
            state, _ = apply(state, action_from_pb(action), state.turn)  # raises if illegal
            decisions += 1
    assert decisions > 8 * 2 * 20


def test_greedy_buries_by_single_deck_rules_whatever_the_hand():
    """000 3.6: no side suit held left void, at most 25 points; checked on 300 burials reached
    by random play, where the bot's own choice has to give way to the rules now and then."""
    bot = _greedy()
    rules = rules_for("single-deck")
    burials = 0
    for game in range(300):
        seed = f"bury:{game}"
        rng = random.Random(seed)
        state = new_game(rules, max_deals=1)
        while not state.is_terminal and state.decision != DecisionKind.BURY:
            if state.turn == CHANCE:
                state, _ = apply(state, chance_action(state, seed))
            else:
                state, _ = apply(state, random_action(state, rng), state.turn)
        if state.is_terminal:
            continue
        action = bot.on_bury(_request(state, seed))
        apply(state, action_from_pb(action), state.turn)  # raises if the burial breaks a rule
        burials += 1
    assert burials >= 250
