"""The engine: who may act, whether an action is allowed, and what it does.

``new_game(rules)`` is the state before the first shuffle. ``check(state, action, seat)`` raises
with the reason an action is not allowed (``InvalidActionError`` for a malformed one,
``IllegalActionError`` for one the rules forbid), ``is_legal`` answers yes or no, and ``apply``
returns the new state and its frozen events. Each game family supplies its state type and a
check/do pair per action type; the engine finds them in the family registry.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from .actions import (Action, Bury, BuryJokers, Declare, DecisionKind, DrawKittyCard, HandOver,
                      Pass, Play, Redeal, Return, RevealDun, Shuffle, Transfer, Uprising)
from .errors import IllegalActionError
from .families import family_of
from .options import RuleSet
from .state import CHANCE, P_OVER, State, start_game

_EXPECTED = {
    DecisionKind.SHUFFLE: (Shuffle,),
    DecisionKind.DRAW_KITTY_CARD: (DrawKittyCard,),
    DecisionKind.DECLARE: (Declare, Pass),
    DecisionKind.REDEAL: (Redeal, Pass),
    DecisionKind.BURY: (Bury,),
    DecisionKind.LEAD: (Play,),
    DecisionKind.FOLLOW: (Play,),
    DecisionKind.GAME_OVER: (),
    DecisionKind.UPRISING: (Uprising, Pass),
    DecisionKind.HANDOVER: (HandOver, Pass),
    DecisionKind.TRANSFER: (Transfer, Pass),
    DecisionKind.RETURN: (Return,),
    DecisionKind.DUN_REVEAL: (RevealDun, Pass),
    DecisionKind.JOKER_BURY: (BuryJokers, Pass),
}


def new_game(rules: RuleSet, *, levels: Sequence[str] | None = None, dealer: int | None = None,
             max_deals: int | None = None) -> State:
    """The state before the first shuffle. ``levels`` (team 0 = seats 0 and 2, team 1 = seats 1
    and 3) and ``dealer`` start a game from a given position; a ``dealer`` of ``None`` makes the
    first deal decide it (抢庄). ``max_deals`` ends the game after that many deals."""
    return start_game(family_of(rules).state_type, rules, levels=levels, dealer=dealer,
                      max_deals=max_deals)


def check(s: State, action: Action, seat: int | None = None) -> None:
    """Raise ``IllegalActionError`` / ``InvalidActionError`` with the reason ``action`` (by
    ``seat``; chance when None) is not allowed now. Returns None when it is."""
    actor = None if seat is None or seat == CHANCE else seat
    _rule(s, action, actor).check(s, action, actor)


def is_legal(s: State, action: Action, seat: int | None = None) -> bool:
    actor = None if seat is None or seat == CHANCE else seat
    try:
        _rule(s, action, actor).check(s, action, actor)
    except ValueError:
        return False
    return True


def apply(s: State, action: Action, seat: int | None = None):
    """``(new_state, events)`` after ``seat`` (None for chance) takes ``action``."""
    actor = None if seat is None or seat == CHANCE else seat
    turn = s.turn
    # the hot path: the actor's turn (never so once the game is over) and an action type
    # already seen at this family's decision; anything else goes through ``_rule``'s checks
    rule = _DUE.get((s.rules.family, s.decision, type(action))) if actor == (
        None if turn == CHANCE else turn) else None
    if rule is None:
        rule = _rule(s, action, actor)
        _DUE[(s.rules.family, s.decision, type(action))] = rule
    check_it, do_it = rule
    return do_it(s, action, actor, check_it(s, action, actor))


def _rule(s: State, action: Action, actor: int | None):
    """The family's rule for ``action`` by ``actor`` (None: chance), once the action is known
    to be due: the game goes on, it is the actor's turn, the decision is of its kind."""
    if s.phase == P_OVER:
        raise IllegalActionError("the game is over: no action is expected")
    expected_actor = None if s.turn == CHANCE else s.turn
    if actor != expected_actor:
        who = "chance" if expected_actor is None else f"seat {expected_actor}"
        by = "chance" if actor is None else f"seat {actor}"
        raise IllegalActionError(
            f"out of turn: {by} acted, but it is {who}'s turn to {s.decision.value}")
    if not isinstance(action, _EXPECTED[s.decision]):
        names = " or ".join(t.__name__ for t in _EXPECTED[s.decision])
        raise IllegalActionError(
            f"wrong decision kind: the state waits for a {s.decision.value} decision "
            f"({names}), not {type(action).__name__}")
    rules = _RULES.get(s.rules.family)
    if rules is None:  # once per family: the registry's answer, kept for the hot path
        rules = _RULES[s.rules.family] = family_of(s.rules).action_rules
    return rules[type(action)]


_RULES: dict = {}
_DUE: dict = {}
"""(family, decision, action type) -> its rule, for every such triple ``_rule`` has allowed."""


def apply_all(s: State, actions: Iterable[tuple[int | None, Action]]):
    """Apply (seat, action) pairs in order; returns the final state and all events."""
    events: list = []
    for seat, action in actions:
        s, ev = apply(s, action, seat)
        events.extend(ev)
    return s, events
