"""Variants as data: a frozen rule set of named options, and one preset per variant id.

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
    # 004 later deals: only the dealer team declares; an attacker may declare (with its own level
    # rank, becoming dealer) when neither dealer-team seat can: "when_dealer_team_cannot" or "never".
    attacker_declare: str = "never"

    def __post_init__(self) -> None:
        _check(self.decks == 2, "decks", self.decks, "2 (only the two-deck family is built)")
        _check(self.hand_size * 4 + self.kitty_size == 54 * self.decks, "hand_size",
               self.hand_size, f"4 hands plus the kitty to use all {54 * self.decks} cards")
        _check(self.start_level in RANKS, "start_level", self.start_level, f"one of {RANKS}")
        for rank in self.must_play:
            _check(rank in RANKS, "must_play", rank, f"ranks from {RANKS}")
        _choice(self, "level_table", ("per_20", "fry_table"))
        _choice(self, "kitty_multiplier", ("doubling", "per_pair"))
        _choice(self, "after_ace", ("win", "wrap"))
        _choice(self, "declaration", ("level_single", "level_joker"))
        _choice(self, "overturn", ("level_pairs", "pair_joker"))
        _choice(self, "first_receiver", ("flip", "seeded"))
        _choice(self, "no_declaration", ("open_kitty", "draw_kitty_card"))
        _choice(self, "attacker_declare", ("never", "when_dealer_team_cannot"))
        _check(isinstance(self.throw_penalty, int) and self.throw_penalty >= 0, "throw_penalty",
               self.throw_penalty, "an integer >= 0")
        _check(isinstance(self.max_redeals, int) and 0 <= self.max_redeals <= 10, "max_redeals",
               self.max_redeals, "an integer from 0 to 10")
        _check(isinstance(self.redeal_points, int) and self.redeal_points >= 0, "redeal_points",
               self.redeal_points, "an integer >= 0")
        _check(isinstance(self.ja_reset, bool), "ja_reset", self.ja_reset, "true or false")

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


PRESETS: dict[str, RuleSet] = {
    "two-deck-80": RuleSet(
        variant="two-deck-80",
        must_play=("2", "J", "A"),
        level_table="per_20",
        kitty_multiplier="doubling",
        after_ace="win",
        ja_reset=True,
        declaration="level_single",
        overturn="level_pairs",
        first_receiver="flip",
        no_declaration="open_kitty",
    ),
    "two-deck-fry": RuleSet(
        variant="two-deck-fry",
        level_table="fry_table",
        kitty_multiplier="per_pair",
        after_ace="wrap",
        declaration="level_joker",
        overturn="pair_joker",
        first_receiver="seeded",
        no_declaration="draw_kitty_card",
        max_redeals=3,
        redeal_points=15,
        attacker_declare="when_dealer_team_cannot",
    ),
}

#: Variant ids that exist in the rules documents but are not built in this engine yet.
PLANNED_VARIANTS = ("single-deck", "three-deck")


def rules_for(variant: str, options: Mapping[str, Any] | None = None) -> RuleSet:
    """The preset of ``variant`` with ``options`` applied."""
    try:
        preset = PRESETS[variant]
    except KeyError:
        if variant in PLANNED_VARIANTS:
            raise ValueError(f"variant {variant!r} is not built yet; built: "
                             f"{', '.join(PRESETS)}") from None
        raise ValueError(f"unknown variant {variant!r}; expected one of: "
                         f"{', '.join(PRESETS)}") from None
    return preset.with_options(options)
