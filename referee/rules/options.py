"""Variants as data: a frozen rule set of named options (each family's package holds the preset
of each of its variant ids; ``variants.rules_for`` looks them up).

Every option is documented in ``docs/rules/README.md`` and in each variant's rules. A rule set is validated when
it is built; an unknown option or a value out of range raises ``ValueError`` naming the option and
what it accepts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")


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
    level_table: str = "per_20"
    # Kitty digging (摳底) multiplier: "doubling" (2 for a single, x2 per pair: 003 section 9) or
    # "per_pair" (2 for a single, 4 per pair: 004).
    kitty_multiplier: str = "doubling"
    # Points per card in the beatable units of a failed throw (甩牌失敗).
    throw_penalty: int = 10
    # A level passing A: "win" (the game ends) or "wrap" (back to 2, 004).
    after_ace: str = "win"
    # 003 section 12: the J/A reset and its restoration (落实政策).
    ja_reset: bool = False
    # How a trump is declared: "level_single" (any level card, 003) or "level_joker" (a level card
    # plus a joker of its colour, 004).
    declaration: str = "level_single"
    # The overturn ladder: "level_pairs" (炒地皮, 003 section 7) or "pair_joker" (反主, 004).
    overturn: str = "level_pairs"
    # Who receives the first card of a game: "flip" (highest flipped card, 003 section 3) or
    # "seeded" (a seeded random seat).
    first_receiver: str = "flip"
    # Nobody declares on a later deal: "open_kitty" (003 section 5) or "draw_kitty_card" (004).
    no_declaration: str = "open_kitty"
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
    attacker_declare: str = "never"
    # single-deck (000): who wins the last trick with which card demotes a dealer team at J / Q
    # (6.5, 6.6): "trump_suit" (the trump-suit J / Q) or "any_level" (any J / Q).
    demotion_card: str = "trump_suit"
    # single-deck (000 3.6): the most points a burial may hold, and whether it may leave the
    # dealer void of a side suit it held among its cards.
    kitty_points_cap: int = 25
    bury_no_void: bool = True
    # three-deck (001, 002): "dead" (死棒: a pair / triple lead owes a pair / triple when held) or
    # "live" (活棒: only the suit is owed).
    pair_following: str = "dead"
    # three-deck first deal without a big-joker grab: the "lowest" (001) or "highest" (002)
    # flipped kitty card names the dealer and the suit.
    first_flip: str = "lowest"
    # three-deck (002): a dealer team at J whose kitty is dug restarts at 3.
    jack_reset: bool = True
    # three-deck (001 section 10): tribute (进贡) before each deal after the first.
    tribute: bool = True

    def __post_init__(self) -> None:
        _check(isinstance(self.decks, int) and self.decks >= 1, "decks", self.decks,
               "a number of decks >= 1 (the family's)")
        _check(self.hand_size * 4 + self.kitty_size == 54 * self.decks, "hand_size",
               self.hand_size, f"4 hands plus the kitty to use all {54 * self.decks} cards")
        _check(self.start_level in RANKS, "start_level", self.start_level, f"one of {RANKS}")
        for rank in self.must_play:
            _check(rank in RANKS, "must_play", rank, f"ranks from {RANKS}")
        _choice(self, "level_table", ("per_20", "fry_table", "single_deck_table",
                                      "three_deck_table"))
        _choice(self, "kitty_multiplier", ("doubling", "per_pair"))
        _choice(self, "after_ace", ("win", "wrap"))
        _choice(self, "declaration", ("level_single", "level_joker", "single_reveal",
                                      "level_cards_or_three_jokers"))
        _choice(self, "overturn", ("level_pairs", "pair_joker", "none", "stronger"))
        _choice(self, "first_receiver", ("flip", "seeded"))
        _choice(self, "no_declaration", ("open_kitty", "draw_kitty_card", "flip_kitty"))
        _choice(self, "attacker_declare", ("never", "when_dealer_team_cannot"))
        _check(isinstance(self.throw_penalty, int) and self.throw_penalty >= 0, "throw_penalty",
               self.throw_penalty, "an integer >= 0")
        _check(isinstance(self.max_redeals, int) and 0 <= self.max_redeals <= 10, "max_redeals",
               self.max_redeals, "an integer from 0 to 10")
        _check(isinstance(self.first_deal_redeals, int) and self.first_deal_redeals >= 0,
               "first_deal_redeals", self.first_deal_redeals, "an integer >= 0")
        _check(isinstance(self.redeal_points, int) and self.redeal_points >= 0, "redeal_points",
               self.redeal_points, "an integer >= 0")
        for name in ("ja_reset", "bury_no_void", "jack_reset", "tribute"):
            _check(isinstance(getattr(self, name), bool), name, getattr(self, name),
                   "true or false")
        _choice(self, "demotion_card", ("trump_suit", "any_level"))
        _choice(self, "pair_following", ("dead", "live"))
        _choice(self, "first_flip", ("lowest", "highest"))
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
        return out


def _check(ok: bool, name: str, value: Any, expected: str) -> None:
    if not ok:
        raise ValueError(f"option {name!r} = {value!r} is not allowed; expected {expected}")


def _choice(rules: RuleSet, name: str, allowed: tuple[str, ...]) -> None:
    value = getattr(rules, name)
    _check(value in allowed, name, value, "one of " + ", ".join(repr(a) for a in allowed))
