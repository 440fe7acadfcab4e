"""The single-deck family (seed 000): 12-card hands, a face-up kitty of 6, throws of top
singles and duns (礅). Preset: ``single-deck``."""

from ...family import Family
from ...options import (DeclarationRule, FirstReceiver, LevelTable, NoDeclaration, Overturn,
                        RuleSet)
from . import combos, legal, policy
from .flow import RULES, SingleDeckState

SINGLE_DECK = RuleSet(  # options not named here keep their RuleSet defaults
    variant="single-deck", family="single_deck", decks=1, hand_size=12, kitty_size=6,
    level_table=LevelTable.SINGLE_DECK_TABLE,
    declaration=DeclarationRule.SINGLE_REVEAL,
    overturn=Overturn.NONE,
    first_receiver=FirstReceiver.SEEDED,
    no_declaration=NoDeclaration.FLIP_KITTY,
)

FAMILY: Family = Family(
    name="single_deck", decks=1, presets=(SINGLE_DECK,), action_rules=RULES,
    state_type=SingleDeckState,
    actions=legal.actions, plays=legal.plays, random_action=policy.random_action,
    random_burials=policy.random_burials,
    judges="referee.conformance.single_deck",
    trick_winner=lambda plays, ctx: combos.trick_winner(plays, ctx)[0],
    bury_limits=lambda rules: (rules.bury_no_void, rules.kitty_points_cap), throws=True,
    engine_goal=1000)
