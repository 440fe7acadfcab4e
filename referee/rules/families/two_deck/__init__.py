"""The two-deck family (seeds 003 and 004): 25-card hands, an 8-card kitty, tractors and throws.
Presets: ``two-deck-80`` (003), ``two-deck-fry`` (004) and ``botzone-tractor`` (the rules of
Botzone's Tractor judge: one deal a game)."""

from ...family import Family
from ...options import RuleSet
from ...trump import TrumpContext, trump_context
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

BOTZONE_TRACTOR = RuleSet(
    variant="botzone-tractor",
    level_table="botzone_table",
    kitty_multiplier="per_pair",
    after_ace="win",
    declaration="level_single",
    overturn="once",
    first_receiver="seeded",
    no_declaration="first_receiver_deals",
    single_deal=True,
    level_tractors=False,
    failed_throw="first_card",
)


def _rules_context(rules: RuleSet, level: int, suit: int | None) -> TrumpContext:
    return trump_context(level, suit, linked_levels=rules.level_tractors)


def _scores(state) -> dict:
    """A single-deal game's scores per seat (Botzone's table), once it is settled."""
    return {} if state.scores is None else {"scores": list(state.scores)}


FAMILY = Family(
    name="two_deck", decks=2, presets=(TWO_DECK_80, TWO_DECK_FRY, BOTZONE_TRACTOR),
    action_rules=RULES, state_type=TwoDeckState, result_extras=_scores,
    rules_context=_rules_context,
    actions=legal.actions, count=legal.count, plays=legal.plays, random_action=policy.random_action,
    judges="referee.conformance.two_deck", trick_winner=combos.trick_winner, throws=True, engine_goal=400)
