"""A game family: the axis the engine grows along.

Variants of one family share their rules code and differ only by options (a preset each); a new
family is one package under ``families/`` whose ``FAMILY`` value lists what the engine, the
legal listing, the random player and the conformance runner need from it. Nothing outside a
family's package branches on its name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, NamedTuple, Sequence

from .actions import Action, DecisionKind
from .options import RuleSet
from .state import State
from .trump import TrumpContext, trump_context


class Rule(NamedTuple):
    """The rule of one action type, as a check/do pair.

    ``check(state, action, seat)`` raises ``InvalidActionError`` / ``IllegalActionError`` with
    the reason the action is not allowed now, and otherwise returns what it found on the way
    (a judged format, a declaration; or None). ``do(state, action, seat, found)`` takes a checked
    action and what its check found, and returns ``(new state, events)``."""

    check: Callable[[Any, Any, Any], Any]
    do: Callable[[Any, Any, Any, Any], tuple[Any, tuple[Any, ...]]]


def nothing_to_check(state, action, seat) -> None:
    """The check of an action that is always allowed when its decision is due (a pass)."""
    return None


def _plain_context(level: int, suit: int | None) -> TrumpContext:
    return trump_context(level, suit)


def _no_extras(state) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class Family:
    """What one game family supplies; see the module docstring."""

    name: str
    """The ``RuleSet.family`` value of its presets."""
    decks: int
    presets: tuple[RuleSet, ...]
    action_rules: Mapping[type, Rule]
    """Action type -> its ``Rule`` (a check/do pair)."""
    actions: Callable[[Any, DecisionKind, int], Iterator[Action]]
    """Every legal action of a seat at a decision (leads may leave out throws)."""
    random_action: Callable[..., Action]
    """``random_action(state, rng, declare_rate)``: a random legal action (rng is an input)."""
    judges: str
    """The module whose ``KINDS`` maps conformance case kinds to their judges."""
    throws: bool = False
    """A lead may be any set of one suit class (甩): the listing of leads is incomplete."""
    count: Callable[[Any, DecisionKind, int], int | None] = lambda s, kind, seat: None
    """The number of legal actions without listing them, where that is quicker (else None)."""
    context: Callable[[int, int | None], TrumpContext] = _plain_context
    """The trump context (strength tables) for a level rank and a trump suit."""
    rules_context: Callable[[RuleSet, int, int | None], TrumpContext] | None = None
    """Optional: the trump context where an option of the rule set shapes it (two-deck
    ``level_tractors``); else ``context``."""

    def context_for(self, rules: RuleSet, level: int, suit: int | None) -> TrumpContext:
        """The trump context of ``rules`` for a level rank and a trump suit."""
        if self.rules_context is not None:
            return self.rules_context(rules, level, suit)
        return self.context(level, suit)
    result_extras: Callable[[Any], dict[str, Any]] = _no_extras
    """What a finished game adds to its record's result (three-deck: match points, titles)."""
    trick_winner: Callable[[list, TrumpContext], int] | None = None
    """Optional: the index of the winning play of a (possibly partial) trick, for the bots'
    helpers (``referee.rules.helpers``)."""
    bury_limits: Callable[[RuleSet], tuple[bool, int | None]] = lambda rules: (False, None)
    """What a burial must respect beyond its size: (no side suit held may be left void, the
    most points it may hold or None)."""
    title: Callable[[int], str] | None = None
    """Optional: a family that keeps match points per player (three-deck 积分) names the title
    of a cumulative score; standings show both where it is set."""
    random_burials: Callable[[Any, Any, int], Sequence[Action]] | None = None
    """Optional: ``random_burials(state, rng, n)``, the burials ``n`` calls of ``random_action``
    draw, quicker (the referee's hint of a burial lists a sample of them)."""
    plays: Callable[[Any, DecisionKind, int], Iterator[tuple[int, ...]]] | None = None
    """Optional: the cards of every legal lead or follow, as ``actions`` lists them (a quicker
    listing for the referee's hints)."""
    state_type: type[State] = State
    """The family's state: ``State``, or a subclass that adds the fields only this family keeps
    (its ``GAME_FIELDS`` and ``DEAL_FIELDS``)."""
    engine_goal: int = 100
    """Random legal deals a second the engine should play on one core (``arena bench engine``)."""
