"""The state type every family extends: one moment of a game, and the phases of a deal.

Compiled (``make compiled``), ``State`` is a native class open to Python subclasses: the
single- and three-deck state types extend it, and get a copy generated for their own fields;
two-deck's state type (compiled too) writes its copy out.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar, Self

try:  # compiled, State stays open to the families' state types (Python subclasses)
    from mypy_extensions import mypyc_attr
except ImportError:  # the pure engine needs nothing beyond the standard library
    def mypyc_attr(*attrs: str, **kwattrs: object) -> Any:  # type: ignore[misc]
        return lambda cls: cls

from .actions import DecisionKind
from .cards import KINDS
from .options import RuleSet


class Phase(StrEnum):
    """Where a deal stands (``state.phase``); a family may add phases of its own, as a StrEnum
    of its package. The value is the phase's name in observations and on the wire."""

    SHUFFLE = "shuffle"
    """Before the deal: chance orders the deck."""
    DEALING = "dealing"
    """The cards are dealt one at a time; the receiver of each may declare (亮主)."""
    ROUND = "declare_round"
    """Chances in seat order after the last card, or after the burial (the overturn round)."""
    DRAW = "draw_kitty_card"
    """Nobody declared: chance draws the kitty card that names the trump."""
    REDEAL = "redeal_offers"
    """Attackers may demand a redeal (暴动, two-deck-fry)."""
    BURY = "bury"
    """The dealer (or the overturner) buries the kitty (扣底)."""
    PLAY = "play"
    """Tricks: leads and follows."""
    OVER = "game_over"
    """The game has ended."""


P_SHUFFLE, P_DEALING, P_ROUND, P_DRAW = Phase.SHUFFLE, Phase.DEALING, Phase.ROUND, Phase.DRAW
P_REDEAL, P_BURY, P_PLAY, P_OVER = Phase.REDEAL, Phase.BURY, Phase.PLAY, Phase.OVER


FIELDS = (
    "rules", "levels", "dealer", "deal_no", "winner_team", "max_deals", "flip_seat",
    "match_points",
    "phase", "turn", "decision", "deck", "next_card", "first_receiver", "hands", "kitty",
    "kitty_owner", "level", "trump", "ctx", "decl", "declarations", "first_deal",
    "redeals", "round_next", "round_passes", "trick", "trick_fmt", "trick_best",
    "trick_key", "leader", "tricks", "attacker_points", "penalties", "points_by_seat",
    "drawn_indexes", "drawn_card", "opened_kitty", "hard_duns", "dry_pot", "kitty_public",
)
"""What every state keeps (``State``'s slots; a family's state type adds its own)."""


@mypyc_attr(allow_interpreted_subclasses=True)
class State:
    """One moment of a game. Read its attributes; change it only through ``apply``.

    What every family keeps. For the whole game: ``rules``, ``levels`` (by team), ``dealer``,
    ``deal_no``, ``winner_team``, ``max_deals``, ``flip_seat`` (the first deal's drawn first
    receiver), ``match_points`` (per seat; three-deck 积分). For one deal: ``phase``, ``turn``
    and ``decision`` (who acts on what), ``deck``, ``next_card``, ``first_receiver``, ``hands``
    (card counts per seat), ``kitty`` and ``kitty_owner``, ``level``, ``trump`` and ``ctx`` (the
    trump context once the trump is fixed), ``decl`` and ``declarations``, ``first_deal``,
    ``redeals``, ``round_next`` and ``round_passes`` (a round of chances), the trick (``trick``,
    ``trick_fmt``, ``trick_best``, ``trick_key``, ``leader``) and ``tricks`` won, points
    (``attacker_points``, ``penalties`` by team, ``points_by_seat``), and what the table has
    seen (``drawn_indexes`` and ``drawn_card`` of the kitty, ``opened_kitty``, ``hard_duns``,
    ``dry_pot``, ``kitty_public``). A family's own fields are in its state type."""

    __slots__ = FIELDS

    rules: RuleSet
    levels: tuple[int, ...]
    dealer: Any  # a seat, or None before the first deal decides it
    deal_no: int
    winner_team: int | None
    max_deals: int | None
    flip_seat: int | None
    match_points: tuple[int, ...]
    phase: str
    turn: int
    decision: DecisionKind
    deck: tuple[int, ...]
    next_card: int
    first_receiver: Any  # a seat once the shuffle is dealt
    hands: list[list[int]]
    kitty: tuple[int, ...]
    kitty_owner: int | None
    level: int
    trump: int | None
    ctx: Any  # a TrumpContext once the trump is fixed
    decl: Any  # the standing Declaration, or None
    declarations: tuple[Any, ...]
    first_deal: bool
    redeals: int
    round_next: Any  # a seat while a round of chances runs
    round_passes: int
    trick: tuple[tuple[int, tuple[int, ...]], ...]
    trick_fmt: Any
    trick_best: int
    trick_key: Any
    leader: Any  # the seat that led the trick
    tricks: tuple[Any, ...]
    attacker_points: int
    penalties: tuple[int, ...]
    points_by_seat: tuple[int, ...]
    drawn_indexes: tuple[int, ...]
    drawn_card: int | None
    opened_kitty: tuple[int, ...]
    hard_duns: frozenset[Any]
    dry_pot: bool
    kitty_public: bool

    GAME_FIELDS: ClassVar[dict[str, Any]] = {}
    """A family's state type: its own slots kept for the whole game, with their starting
    values (immutable ones: states share them)."""
    DEAL_FIELDS: ClassVar[dict[str, Any]] = {}
    """A family's state type: its own slots that start again at each deal, with their values."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "copy" not in vars(cls):  # a family's state type: its own fields copied too
            cls.copy = _make_copy(cls)  # type: ignore[method-assign]

    def copy(self) -> Self:
        """A shallow copy (hands are copied by whoever changes them)."""
        n = self.__class__.__new__(self.__class__)
        n.rules = self.rules
        n.levels = self.levels
        n.dealer = self.dealer
        n.deal_no = self.deal_no
        n.winner_team = self.winner_team
        n.max_deals = self.max_deals
        n.flip_seat = self.flip_seat
        n.match_points = self.match_points
        n.phase = self.phase
        n.turn = self.turn
        n.decision = self.decision
        n.deck = self.deck
        n.next_card = self.next_card
        n.first_receiver = self.first_receiver
        n.hands = self.hands
        n.kitty = self.kitty
        n.kitty_owner = self.kitty_owner
        n.level = self.level
        n.trump = self.trump
        n.ctx = self.ctx
        n.decl = self.decl
        n.declarations = self.declarations
        n.first_deal = self.first_deal
        n.redeals = self.redeals
        n.round_next = self.round_next
        n.round_passes = self.round_passes
        n.trick = self.trick
        n.trick_fmt = self.trick_fmt
        n.trick_best = self.trick_best
        n.trick_key = self.trick_key
        n.leader = self.leader
        n.tricks = self.tricks
        n.attacker_points = self.attacker_points
        n.penalties = self.penalties
        n.points_by_seat = self.points_by_seat
        n.drawn_indexes = self.drawn_indexes
        n.drawn_card = self.drawn_card
        n.opened_kitty = self.opened_kitty
        n.hard_duns = self.hard_duns
        n.dry_pot = self.dry_pot
        n.kitty_public = self.kitty_public
        return n

    # -- reading ----------------------------------------------------------------------------
    @property
    def is_terminal(self) -> bool:
        return self.phase == P_OVER

    @property
    def dealer_team(self) -> int | None:
        return None if self.dealer is None else self.dealer % 2

    def hand(self, seat: int) -> tuple[int, ...]:
        """The seat's cards, strongest last in the current trump order."""
        counts = self.hands[seat]
        # the context's kinds in key order (keys are distinct): a sort, done once per context
        order = self.ctx.order if self.ctx is not None else range(KINDS)
        cards: list[int] = []
        for k in order:
            n = counts[k]
            if n:
                if n == 1:
                    cards.append(k)
                else:
                    cards.extend([k] * n)
        return tuple(cards)

    def hand_size(self, seat: int) -> int:
        return sum(self.hands[seat])

    def __repr__(self) -> str:
        return (f"<State deal {self.deal_no} phase {self.phase} turn {self.turn} "
                f"{self.decision.value}>")


def _make_copy(cls):
    # One attribute assignment per slot, generated once per state type: the copy is on every
    # action's path.
    names = list(FIELDS) + [name for klass in reversed(cls.__mro__) if klass is not State
                            for name in vars(klass).get("__slots__", ())]
    lines = ["def copy(self):", "    n = _new(cls)"]
    lines += [f"    n.{name} = self.{name}" for name in names]
    lines.append("    return n")
    scope = {"cls": cls, "_new": cls.__new__}
    exec("\n".join(lines), scope)
    copy = scope["copy"]
    copy.__doc__ = "A shallow copy (hands are copied by whoever changes them)."
    return copy


