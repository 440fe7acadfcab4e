"""Chance from a match seed: the one source of randomness of a match.

Every chance decision (a shuffle, the 004 kitty card) is derived from the match seed and the
position in the game (deal number, redeal count), so the same seed always gives the same deals —
also when the actions between them differ."""

from __future__ import annotations

import random

from referee.rules.actions import DecisionKind, DrawKittyCard, Shuffle
from referee.rules.cards import full_deck
from referee.rules.state import State
from referee.rules.draws import choice, randrange, shuffle


def chance_action(state: State, seed: int | str):
    """The chance action due in ``state`` for match ``seed``."""
    drawn = state.drawn_indexes
    rng = random.Random(f"shengji-arena:{seed}:{state.deal_no}:{state.redeals}:{state.phase}:"
                        f"{len(drawn)}")
    if state.decision == DecisionKind.SHUFFLE:
        deck = list(full_deck(state.rules.decks))
        shuffle(rng, deck)
        first = None
        if state.dealer is None and state.flip_seat is None and \
                state.rules.first_receiver == "seeded":
            first = randrange(rng, 4)
        return Shuffle(tuple(deck), first)
    if state.decision == DecisionKind.DRAW_KITTY_CARD:
        undrawn = [i for i in range(len(state.kitty)) if i not in drawn]
        return DrawKittyCard(choice(rng, undrawn))
    raise ValueError(f"no chance decision now: the state waits for {state.decision.value}")
