"""The engine: who may act, whether an action is allowed, and what it does.

``check(state, action, seat)`` raises with the reason an action is not allowed (``InvalidActionError``
for a malformed one, ``IllegalActionError`` for one the rules forbid), ``is_legal`` answers yes or
no, and ``apply`` returns the new state and its frozen events. Each game family supplies the
handlers; the engine finds them in the family registry.
"""

from __future__ import annotations

from typing import Iterable

from .actions import (Action, Bury, BuryJokers, Declare, DecisionKind, DrawKittyCard, HandOver,
                      Pass, Play, Redeal, Return, RevealDun, Shuffle, Transfer, Uprising)
from .errors import IllegalActionError
from .families import family_of
from .state import CHANCE, P_OVER, State

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


def check(s: State, action: Action, seat: int | None = None) -> None:
    """Raise ``IllegalActionError`` / ``InvalidActionError`` with the reason ``action`` (by
    ``seat``; chance when None) is not allowed now. Returns None when it is."""
    _apply(s, action, seat, dry=True)


def is_legal(s: State, action: Action, seat: int | None = None) -> bool:
    try:
        _apply(s, action, seat, dry=True)
    except ValueError:
        return False
    return True


def apply(s: State, action: Action, seat: int | None = None):
    """``(new_state, events)`` after ``seat`` (None for chance) takes ``action``."""
    return _apply(s, action, seat, dry=False)


def _apply(s: State, action: Action, seat: int | None, dry: bool):
    if s.phase == P_OVER:
        raise IllegalActionError("the game is over: no action is expected")
    actor = None if seat is None or seat == CHANCE else seat
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
    handlers = _HANDLERS.get(s.rules.family)
    if handlers is None:  # once per family: the registry's answer, kept for the hot path
        handlers = _HANDLERS[s.rules.family] = family_of(s.rules).handlers
    return handlers[type(action)](s, action, actor, dry)


_HANDLERS: dict = {}


def apply_all(s: State, actions: Iterable[tuple[int | None, Action]]):
    """Apply (seat, action) pairs in order; returns the final state and all events."""
    events: list = []
    for seat, action in actions:
        s, ev = apply(s, action, seat)
        events.extend(ev)
    return s, events
