"""The two-deck family (seeds 003 and 004): 25-card hands, an 8-card kitty, tractors and throws.
Presets: ``two-deck-80`` (003), ``two-deck-fry`` (004) and ``botzone-tractor`` (the rules of
Botzone's Tractor judge: one deal a game)."""

from ...family import Family
from ...options import (AfterAce, AttackerDeclare, DeclarationRule, FailedThrow, FirstReceiver,
                        KittyMultiplier, LevelTable, NoDeclaration, Overturn, RuleSet)
from ...trump import TrumpContext, trump_context
from . import combos, legal, policy
from .flow import RULES, TwoDeckState

TWO_DECK_80 = RuleSet(
    variant="two-deck-80",
    must_play=("2", "J", "A"),
    level_table=LevelTable.PER_20,
    kitty_multiplier=KittyMultiplier.DOUBLING,
    after_ace=AfterAce.WIN,
    ja_reset=True,
    declaration=DeclarationRule.LEVEL_SINGLE,
    overturn=Overturn.LEVEL_PAIRS,
    first_receiver=FirstReceiver.FLIP,
    no_declaration=NoDeclaration.OPEN_KITTY,
)

TWO_DECK_FRY = RuleSet(
    variant="two-deck-fry",
    level_table=LevelTable.FRY_TABLE,
    kitty_multiplier=KittyMultiplier.PER_PAIR,
    after_ace=AfterAce.WRAP,
    declaration=DeclarationRule.LEVEL_JOKER,
    overturn=Overturn.PAIR_JOKER,
    first_receiver=FirstReceiver.SEEDED,
    no_declaration=NoDeclaration.DRAW_KITTY_CARD,
    max_redeals=3,
    redeal_points=15,
    attacker_declare=AttackerDeclare.WHEN_DEALER_TEAM_CANNOT,
)

BOTZONE_TRACTOR = RuleSet(
    variant="botzone-tractor",
    level_table=LevelTable.BOTZONE_TABLE,
    kitty_multiplier=KittyMultiplier.PER_PAIR,
    after_ace=AfterAce.WIN,
    declaration=DeclarationRule.LEVEL_SINGLE,
    overturn=Overturn.ONCE,
    first_receiver=FirstReceiver.SEEDED,
    no_declaration=NoDeclaration.FIRST_RECEIVER_DEALS,
    single_deal=True,
    level_tractors=False,
    failed_throw=FailedThrow.FIRST_CARD,
)


def _rules_context(rules: RuleSet, level: int, suit: int | None) -> TrumpContext:
    return trump_context(level, suit, linked_levels=rules.level_tractors)


def _scores(state) -> dict:
    """A single-deal game's scores per seat (Botzone's table), once it is settled."""
    return {} if state.scores is None else {"scores": list(state.scores)}


FAMILY: Family = Family(
    name="two_deck", decks=2, presets=(TWO_DECK_80, TWO_DECK_FRY, BOTZONE_TRACTOR),
    action_rules=RULES, state_type=TwoDeckState, result_extras=_scores,
    rules_context=_rules_context,
    actions=legal.actions, count=legal.count, plays=legal.plays, random_action=policy.random_action,
    judges="referee.conformance.two_deck", trick_winner=combos.trick_winner, throws=True, engine_goal=400)
