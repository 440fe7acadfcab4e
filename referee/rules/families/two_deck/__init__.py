"""The two-deck family (seeds 003 and 004): 25-card hands, an 8-card kitty, tractors and throws.
Presets: ``two-deck-80`` (003) and ``two-deck-fry`` (004)."""

from ...family import Family
from ...options import RuleSet
from . import combos, legal, policy
from .flow import RULES, TwoDeckState

TWO_DECK_80 = RuleSet(
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
)

TWO_DECK_FRY = RuleSet(
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
)

FAMILY = Family(
    name="two_deck", decks=2, presets=(TWO_DECK_80, TWO_DECK_FRY), action_rules=RULES, state_type=TwoDeckState,
    actions=legal.actions, count=legal.count, plays=legal.plays, random_action=policy.random_action,
    judges="referee.conformance.two_deck", trick_winner=combos.trick_winner, throws=True, engine_goal=400)
