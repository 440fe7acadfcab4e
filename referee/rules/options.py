"""Variants as data: a frozen rule set of named options (each family's package holds the preset
of each of its variant ids; ``variants.rules_for`` looks them up).

Every option is documented in ``docs/rules/README.md`` and in each variant's rules; an option
that names one of a few ways is a StrEnum here, a docstring per member (its values compare equal to
their names). A rule set is validated when it is built; an unknown option or a value out of range
raises ``ValueError`` naming the option and what it accepts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Mapping

RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")


class LevelTable(StrEnum):
    """How the attackers' total turns into levels (``level_table``)."""

    PER_20 = "per_20"
    """003 section 10: a step per 20 points, 40 to take the deal."""
    FRY_TABLE = "fry_table"
    """004's table."""
    SINGLE_DECK_TABLE = "single_deck_table"
    """000's table (100 points in the deck)."""
    THREE_DECK_TABLE = "three_deck_table"
    """001's table (300 points in the deck)."""
    BOTZONE_TABLE = "botzone_table"
    """Botzone's Tractor judge: the dealer team gains 3 at 0 or less (大光), 2 below 40, 1 below
    80, else the attackers take over with 1, 2 from 120, 3 from 160 (the total is not floored
    at 0)."""


class KittyMultiplier(StrEnum):
    """How the kitty's points count when the attackers win the last trick (摳底)."""

    DOUBLING = "doubling"
    """2 for a single, doubled for each pair of the decisive unit (003 section 9)."""
    PER_PAIR = "per_pair"
    """2 for a single, 4 per pair (004)."""


class AfterAce(StrEnum):
    """A level passing A (``after_ace``)."""

    WIN = "win"
    """The game ends: that team wins."""
    WRAP = "wrap"
    """Back to 2 and play on (004)."""


class DeclarationRule(StrEnum):
    """How a trump is declared (``declaration``, 亮主)."""

    LEVEL_SINGLE = "level_single"
    """Any card of the level rank (003)."""
    LEVEL_JOKER = "level_joker"
    """One or two level cards of a suit with the joker of its colour (004)."""
    SINGLE_REVEAL = "single_reveal"
    """The first level card revealed while the cards are dealt names the trump (000)."""
    LEVEL_CARDS_OR_THREE_JOKERS = "level_cards_or_three_jokers"
    """One to three identical level cards (their suit), or three identical jokers naming a suit
    (001, 002); more cards are stronger, jokers strongest."""


class Overturn(StrEnum):
    """Whether and how a standing declaration is overturned (``overturn``, 反主)."""

    LEVEL_PAIRS = "level_pairs"
    """A pair of level cards beats a single, a stronger pair a pair (炒地皮, 003 section 7)."""
    PAIR_JOKER = "pair_joker"
    """A joker pair (LJ < BJ) beats a level card with its joker; after the burial too, when the
    overturner takes up the kitty and buries again (炒底, 004)."""
    NONE = "none"
    """The first declaration stands (000)."""
    STRONGER = "stronger"
    """Any strictly stronger declaration, in any suit (001, 002)."""
    ONCE = "once"
    """Botzone's snatch (反主): one pair of identical level cards, or an identical joker pair
    (no-trump), beats the single, once a deal, while the cards are dealt; the last to show
    deals on the first deal."""


class FirstReceiver(StrEnum):
    """Who receives the first card of a game (``first_receiver``)."""

    FLIP = "flip"
    """The seat whose flipped card ranks highest (003 section 3)."""
    SEEDED = "seeded"
    """A seat drawn from the match seed."""


class NoDeclaration(StrEnum):
    """What happens when nobody declares on a later deal (``no_declaration``)."""

    OPEN_KITTY = "open_kitty"
    """The kitty is opened and names the trump (003 section 5)."""
    DRAW_KITTY_CARD = "draw_kitty_card"
    """Chance draws a kitty card; its holder deals (004 无人报主)."""
    FLIP_KITTY = "flip_kitty"
    """The kitty is flipped and its first level card's suit, else its lowest card's, is trump
    (000 3.4)."""
    FIRST_RECEIVER_DEALS = "first_receiver_deals"
    """The first receiver (drawn from the seed) deals and the suit of the kitty's first suited
    card is trump, told to all as the trump alone (Botzone: a random banker and suit)."""


class AttackerDeclare(StrEnum):
    """Whether attackers may declare on a later deal (``attacker_declare``, 004)."""

    NEVER = "never"
    """Only the dealer team declares."""
    WHEN_DEALER_TEAM_CANNOT = "when_dealer_team_cannot"
    """When neither dealer-team seat can, an attacker may, with its own level, and deals."""


class DemotionCard(StrEnum):
    """Which card winning the last trick demotes a dealer team at J / Q (000 6.5, 6.6)."""

    TRUMP_SUIT = "trump_suit"
    """The trump suit's J / Q."""
    ANY_LEVEL = "any_level"
    """Any J / Q."""


class PairFollowing(StrEnum):
    """What a led pair or triple owes (``pair_following``, three-deck)."""

    DEAD = "dead"
    """死棒: a pair / triple when the follower holds one."""
    LIVE = "live"
    """活棒: only the suit."""


class FirstFlip(StrEnum):
    """The first deal without a big-joker grab: which flipped kitty card names the dealer and
    the suit (``first_flip``, three-deck)."""

    LOWEST = "lowest"
    """The lowest (001)."""
    HIGHEST = "highest"
    """The highest (002)."""


class Following(StrEnum):
    """What a follower owes when a pair or a tractor is led and it holds no unit of that shape
    in the suit led (``following``, two-deck)."""

    STRICT = "strict"
    """As many cards of the suit led as were led (all of it when it holds fewer), with as
    much of the lead's structure as the suit allows (003 section 6)."""
    SAME_SHAPE = "same_shape"
    """Botzone's judge: it may instead play one unit of the led shape from any suit (a pair
    for a pair, a tractor of as many pairs for a tractor), trumps included; a trump unit so
    played ruffs and can win the trick. Otherwise as ``strict``."""


class FailedThrow(StrEnum):
    """What a failed throw (甩牌失败) plays instead (``failed_throw``, two-deck)."""

    UNIT = "unit"
    """The whole unit another seat could beat whose highest card is weakest; on a tie, the one
    with fewer cards (003 section 8, VARIANTS.md common rule 6)."""
    FIRST_CARD = "first_card"
    """Botzone's judge: only the first (lowest) card of the beatable unit whose highest card is
    weakest (``3S`` of ``3S 3S``, ``5S`` of ``5S 5S 6S 6S``); between equally strong units
    (off-suit level cards) the one of the earliest suit in the judge's order S, H, C, D,
    whatever their sizes. The penalty still counts every card of the beatable units."""


class BurialCount(StrEnum):
    """How many cards the dealer buries (``burial_count``, two-deck)."""

    EXACT = "exact"
    """As many as the kitty held (8)."""
    AT_MOST = "at_most"
    """Botzone's judge does not count them: 0 to 8. The cards not buried stay in the dealer's
    hand: while it holds more than the others, no lead may have more cards than each other seat
    holds; the deal ends when the other hands are empty, and what the dealer still holds then
    scores nothing."""


_CHOICES: dict[str, type[StrEnum]] = {
    "level_table": LevelTable, "kitty_multiplier": KittyMultiplier, "after_ace": AfterAce,
    "declaration": DeclarationRule, "overturn": Overturn, "first_receiver": FirstReceiver,
    "no_declaration": NoDeclaration, "attacker_declare": AttackerDeclare,
    "demotion_card": DemotionCard, "pair_following": PairFollowing, "first_flip": FirstFlip,
    "following": Following, "burial_count": BurialCount, "failed_throw": FailedThrow,
}
"""The options whose value is one of a few names, and the enum of each."""


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The complete, frozen rules of one variant with its options applied."""

    variant: str
    # Which game family this is (a name in the family registry): "two_deck" (003, 004),
    # "single_deck" (000) or "three_deck" (001, 002).
    family: str = "two_deck"
    decks: int = 2
    hand_size: int = 25
    kitty_size: int = 8
    start_level: str = "2"
    # Ranks a team leaves only by going up from them as the dealer team (必打, 003 section 2).
    must_play: tuple[str, ...] = ()
    # How the attackers' total turns into levels: "per_20" (003 section 10) or "fry_table" (004).
    level_table: LevelTable = LevelTable.PER_20
    # Kitty digging (摳底) multiplier: "doubling" (2 for a single, x2 per pair: 003 section 9) or
    # "per_pair" (2 for a single, 4 per pair: 004).
    kitty_multiplier: KittyMultiplier = KittyMultiplier.DOUBLING
    # Points per card in the beatable units of a failed throw (甩牌失敗).
    throw_penalty: int = 10
    # A level passing A: "win" (the game ends) or "wrap" (back to 2, 004).
    after_ace: AfterAce = AfterAce.WIN
    # 003 section 12: the J/A reset and its restoration (落实政策).
    ja_reset: bool = False
    # How a trump is declared: "level_single" (any level card, 003) or "level_joker" (a level card
    # plus a joker of its colour, 004).
    declaration: DeclarationRule = DeclarationRule.LEVEL_SINGLE
    # The overturn ladder: "level_pairs" (炒地皮, 003 section 7) or "pair_joker" (反主, 004).
    overturn: Overturn = Overturn.LEVEL_PAIRS
    # Who receives the first card of a game: "flip" (highest flipped card, 003 section 3) or
    # "seeded" (a seeded random seat).
    first_receiver: FirstReceiver = FirstReceiver.FLIP
    # Nobody declares on a later deal: "open_kitty" (003 section 5) or "draw_kitty_card" (004).
    no_declaration: NoDeclaration = NoDeclaration.OPEN_KITTY
    # 暴动: an attacker holding fewer than `redeal_points` points may demand a redeal, at most
    # `max_redeals` times a deal (0 disables it).
    max_redeals: int = 0
    redeal_points: int = 15
    # 003 section 4: nobody declares on the first deal -> redeal. After this many redeals in a
    # row the first receiver deals and the kitty is opened as on later deals (a bound the seed
    # does not need at a table, but a referee for bots does).
    first_deal_redeals: int = 10
    # 004 later deals: only the dealer team declares; an attacker may declare (with its own level
    # rank, becoming dealer) when neither dealer-team seat can: "when_dealer_team_cannot" or "never".
    attacker_declare: AttackerDeclare = AttackerDeclare.NEVER
    # single-deck (000): who wins the last trick with which card demotes a dealer team at J / Q
    # (6.5, 6.6): "trump_suit" (the trump-suit J / Q) or "any_level" (any J / Q).
    demotion_card: DemotionCard = DemotionCard.TRUMP_SUIT
    # single-deck (000 3.6): the most points a burial may hold, and whether it may leave the
    # dealer void of a side suit it held among its cards.
    kitty_points_cap: int = 25
    bury_no_void: bool = True
    # three-deck (001, 002): "dead" (死棒: a pair / triple lead owes a pair / triple when held) or
    # "live" (活棒: only the suit is owed).
    pair_following: PairFollowing = PairFollowing.DEAD
    # three-deck first deal without a big-joker grab: the "lowest" (001) or "highest" (002)
    # flipped kitty card names the dealer and the suit.
    first_flip: FirstFlip = FirstFlip.LOWEST
    # three-deck (002): a dealer team at J whose kitty is dug restarts at 3.
    jack_reset: bool = True
    # three-deck (001 section 10): tribute (进贡) before each deal after the first.
    tribute: bool = True
    # Botzone Tractor: the game is one deal, settled by the score table (per-seat scores).
    single_deal: bool = False
    # Tractors in trumps may run through the level cards and the jokers (trump-suit A, off-suit
    # level pair, trump-suit level pair, LJ pair, BJ pair); false: only runs of one suit without
    # the level rank, and LJ LJ BJ BJ (Botzone).
    level_tractors: bool = True
    # Two-deck following when a pair or tractor is led and the follower holds none of that shape
    # in the suit led: "strict", or "same_shape" (Botzone's judge: one of that shape from any suit).
    following: Following = Following.STRICT
    # Two-deck burial: "exact" (as many cards as the kitty held) or "at_most" (Botzone's judge
    # does not count them: 0 to 8, the rest stay in the dealer's hand).
    burial_count: BurialCount = BurialCount.EXACT
    # Two-deck failed throw (甩牌失败): "unit" (the whole weakest beatable unit, 003 section 8) or
    # "first_card" (Botzone's judge: its first card only; equal units by the judge's suit order).
    failed_throw: FailedThrow = FailedThrow.UNIT

    def __post_init__(self) -> None:
        _check(isinstance(self.decks, int) and self.decks >= 1, "decks", self.decks,
               "a number of decks >= 1 (the family's)")
        _check(self.hand_size * 4 + self.kitty_size == 54 * self.decks, "hand_size",
               self.hand_size, f"4 hands plus the kitty to use all {54 * self.decks} cards")
        _check(self.start_level in RANKS, "start_level", self.start_level, f"one of {RANKS}")
        for rank in self.must_play:
            _check(rank in RANKS, "must_play", rank, f"ranks from {RANKS}")
        for name, kind in _CHOICES.items():
            _choose(self, name, kind)
        _check(isinstance(self.throw_penalty, int) and self.throw_penalty >= 0, "throw_penalty",
               self.throw_penalty, "an integer >= 0")
        _check(isinstance(self.max_redeals, int) and 0 <= self.max_redeals <= 10, "max_redeals",
               self.max_redeals, "an integer from 0 to 10")
        _check(isinstance(self.first_deal_redeals, int) and self.first_deal_redeals >= 0,
               "first_deal_redeals", self.first_deal_redeals, "an integer >= 0")
        _check(isinstance(self.redeal_points, int) and self.redeal_points >= 0, "redeal_points",
               self.redeal_points, "an integer >= 0")
        for name in ("ja_reset", "bury_no_void", "jack_reset", "tribute", "single_deal",
                     "level_tractors"):
            _check(isinstance(getattr(self, name), bool), name, getattr(self, name),
                   "true or false")
        _check(isinstance(self.kitty_points_cap, int) and self.kitty_points_cap >= 0,
               "kitty_points_cap", self.kitty_points_cap, "an integer >= 0")

    @property
    def must_play_idx(self) -> frozenset[int]:
        """Must-play ranks as rank indexes."""
        return frozenset(RANKS.index(r) for r in self.must_play)

    def with_options(self, options: Mapping[str, Any] | None) -> "RuleSet":
        """This rule set with some options replaced; unknown names raise ``ValueError``."""
        if not options:
            return self
        known = {f.name for f in dataclasses.fields(self)} - {"variant"}
        changes = {}
        for name, value in options.items():
            if name not in known:
                raise ValueError(f"unknown option {name!r} for variant {self.variant!r}; "
                                 f"expected one of: {', '.join(sorted(known))}")
            if name == "must_play":
                value = tuple(value)
            changes[name] = value
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for a match record (tuples as lists)."""
        out = dataclasses.asdict(self)
        out["must_play"] = list(self.must_play)
        for name in _CHOICES:
            out[name] = out[name].value
        return out


def _check(ok: bool, name: str, value: Any, expected: str) -> None:
    if not ok:
        raise ValueError(f"option {name!r} = {value!r} is not allowed; expected {expected}")


def _choose(rules: RuleSet, name: str, kind: type[StrEnum]) -> None:
    """Turn a named option's text into its enum member (raises naming what it accepts)."""
    value = getattr(rules, name)
    try:
        member = kind(value)
    except ValueError:
        member = None
    _check(member is not None, name, value, "one of " + ", ".join(repr(m.value) for m in kind))
    object.__setattr__(rules, name, member)
