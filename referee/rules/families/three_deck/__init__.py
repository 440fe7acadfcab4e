"""The three-deck family (seeds 001 and 002): 39-card hands, permanent 2s, pairs and triples
(no throws), tribute and match points. Preset: ``three-deck``."""

from ...family import Family
from ...options import (DeclarationRule, FirstReceiver, LevelTable, NoDeclaration, Overturn,
                        RuleSet)
from . import combos, legal, policy
from .flow import RULES, ThreeDeckState
from .scoring import title

THREE_DECK = RuleSet(  # options not named here keep their RuleSet defaults
    variant="three-deck", family="three_deck", decks=3, hand_size=39, kitty_size=6,
    start_level="3",
    level_table=LevelTable.THREE_DECK_TABLE,
    declaration=DeclarationRule.LEVEL_CARDS_OR_THREE_JOKERS,
    overturn=Overturn.STRONGER,
    first_receiver=FirstReceiver.SEEDED,
    no_declaration=NoDeclaration.DRAW_KITTY_CARD,
)


def _result_extras(state) -> dict:
    return {"match_points": list(state.match_points),
            "titles": [title(p) for p in state.match_points]}


FAMILY: Family = Family(
    name="three_deck", decks=3, presets=(THREE_DECK,), action_rules=RULES,
    state_type=ThreeDeckState,
    actions=legal.actions, plays=legal.plays, random_action=policy.random_action,
    judges="referee.conformance.three_deck", trick_winner=combos.trick_winner, title=title,
    context=combos.context, result_extras=_result_extras, engine_goal=100)
