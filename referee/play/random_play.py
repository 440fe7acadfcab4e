"""Random legal play, for tests, benchmarks and the ``random`` sample bot. The random generator
is an input; the engine itself has none. Each game family plays its own random moves."""

from __future__ import annotations

import random

from referee.rules.families import family_of
from referee.rules.sampling import DECLARE_RATE
from referee.rules.state import State


def random_action(s: State, rng: random.Random, declare_rate: float = DECLARE_RATE):
    """A random legal action for the seat to act (every decision kind, throws included);
    ``declare_rate`` is the chance of declaring when a declaration is possible."""
    play = _PLAYERS.get(s.rules.family)
    if play is None:
        play = _PLAYERS[s.rules.family] = family_of(s.rules).random_action
    return play(s, rng, declare_rate)


_PLAYERS: dict = {}


def default_action(state: State, seed: str):
    """The legal action the referee plays for a seat that did not (deterministic per seed)."""
    return random_action(state, random.Random(seed))
