"""A test-only game family, "toy": one deck, no declaring, no trump suit, singles only.

It exists to show that a family is one package: it is added to the registry by naming it in
``ARENA_FAMILIES=tests.toy_family`` and then plays through the engine, the legal listing, the
random player, the referee and its bots, the conformance runner and the CLI, with no edit
outside this folder. Rules: 13 cards each and a kitty of 2; the first receiver deals the first
deal and the dealer's next seat deals the next; the dealer takes up the kitty and buries any 2
cards; 13 tricks of one card, following the led suit class when able (jokers and the level
rank's cards are trumps); the attackers go up one level and deal next with 40 points or more,
else the dealer team goes up one; a team that goes up past A wins.
"""

from referee.rules.family import Family
from referee.rules.options import RuleSet

from . import rules

TOY_TRICK = RuleSet(variant="toy-trick", family="toy", decks=1, hand_size=13, kitty_size=2,
                    first_receiver="seeded", declaration="single_reveal", overturn="none")

FAMILY = Family(
    name="toy", decks=1, presets=(TOY_TRICK,), action_rules=rules.RULES, actions=rules.actions,
    random_action=rules.random_action, judges="tests.toy_family.judges", engine_goal=1000)
