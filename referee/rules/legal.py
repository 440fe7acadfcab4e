"""Listing legal actions (a lazy view, like ``board.legal_moves``).

``legal_actions(state)`` supports ``in``, iteration, ``bool()`` and ``count()``. Each family lists
its own actions; the listing is complete for every decision except a lead in a family with throws
(``complete`` is False there: any set of cards of one suit class may be thrown). Burials are
generated lazily: there can be millions.
"""

from __future__ import annotations

from typing import Iterator

from .actions import Action, DecisionKind
from .engine import is_legal
from .families import family_of
from .state import State


class LegalActions:
    """Lazy view of the legal actions at a seat's decision."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.kind = state.decision
        self.seat = state.turn
        self.family = family_of(state.rules)
        self.complete = self.kind != DecisionKind.LEAD or not self.family.throws

    def __contains__(self, action: Action) -> bool:
        return is_legal(self.state, action, self.seat)

    def __iter__(self) -> Iterator[Action]:
        return iter(self.family.actions(self.state, self.kind, self.seat))

    def __bool__(self) -> bool:
        return any(True for _ in self)

    def count(self) -> int:
        n = self.family.count(self.state, self.kind, self.seat)
        return sum(1 for _ in self) if n is None else n

    def __repr__(self) -> str:
        return f"<LegalActions {self.kind.value} seat {self.seat} complete={self.complete}>"


def legal_actions(state: State) -> LegalActions:
    """The legal actions of the seat to act (see the module docstring)."""
    if state.turn < 0:
        raise ValueError(f"no seat decision now: the state waits for {state.decision.value}")
    return LegalActions(state)


__all__ = ["LegalActions", "legal_actions"]
