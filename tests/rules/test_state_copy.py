"""Each state type's copy, written out field by field for speed (the compiled engine reads
declared fields natively), copies every field the type declares: a field added to a state and
forgotten in a copy fails here."""

import random

import pytest

from referee.play.chance import chance_action
from referee.play.random_play import random_action
from referee.rules.engine import apply, new_game
from referee.rules.state import CHANCE
from referee.rules.variants import rules_for, variant_ids


def _declared(cls) -> set[str]:
    """The fields ``cls`` declares: its annotations, or a compiled class's attributes."""
    names: set[str] = set(getattr(cls, "__mypyc_attrs__", ()))
    for klass in cls.__mro__:
        names.update(n for n in vars(klass).get("__annotations__", {})
                     if n.isidentifier() and not n.isupper())
    return names


@pytest.mark.parametrize("variant", variant_ids())
def test_a_copy_holds_every_declared_field_of_its_state(variant):
    rng = random.Random(variant)
    state = new_game(rules_for(variant))
    for i in range(60):  # into the deal: hands, declarations, a trick
        if state.turn == CHANCE:
            action = chance_action(state, f"{variant}-copy-{i}")
        else:
            action = random_action(state, rng)
        state, _ = apply(state, action, state.turn)
    fields = _declared(type(state))
    assert len(fields) > 30
    set_fields = {n for n in fields if hasattr(state, n)}
    assert len(set_fields) == len(fields), sorted(fields - set_fields)
    twin = state.copy()
    assert type(twin) is type(state)
    missing = sorted(n for n in fields if not hasattr(twin, n)
                     or getattr(twin, n) is not getattr(state, n))
    assert missing == [], f"{type(state).__name__}.copy() leaves out {missing}"
