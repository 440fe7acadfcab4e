"""A small public API for bots written in Python: card strength and trick winners from what a
seat's observation says (the variant id, the level and the trump as text), whatever the family.

    ctx = card_order("two-deck-fry", "5", "H")
    ctx.cls[card] == TRUMP, ctx.pos[card]          # a card's suit class and strength
    trick_winner("two-deck-fry", ctx, plays)      # index of the play winning so far
"""

from __future__ import annotations

from .cards import parse_rank, parse_suit
from .families import family_of
from .options import RuleSet
from .trump import TRUMP, TrumpContext
from .variants import rules_for

__all__ = ["TRUMP", "bury_limits", "card_order", "rules_of", "trick_winner"]


def rules_of(variant: str) -> RuleSet:
    """The rule set of a variant id (its preset)."""
    return rules_for(variant)


def card_order(variant: str, level: str, trump: str) -> TrumpContext:
    """The strength tables of a deal: level rank as text (``"5"``), trump as ``S H D C`` or
    ``none``/empty for no-trump or not yet fixed."""
    rules = rules_for(variant)
    return family_of(rules).context_for(rules, parse_rank(level), parse_suit(trump or "none"))


def trick_winner(variant: str, ctx: TrumpContext, plays) -> int:
    """The index of the play (a list of cards) winning the trick so far."""
    family = family_of(rules_for(variant))
    if family.trick_winner is None:
        raise ValueError(f"the {family.name} family gives no trick winner to bots")
    return family.trick_winner(list(plays), ctx)


def bury_limits(variant: str) -> tuple[bool, int | None]:
    """(a burial may not leave a side suit held void, the most points a burial may hold)."""
    rules = rules_for(variant)
    return family_of(rules).bury_limits(rules)
