"""The rules engine: pure (no I/O, clock, randomness, gRPC or Celery), variants as data.

Start with ``rules_for(variant)`` and ``new_game(rules)``; then, at each decision, ``state.turn``
and ``state.decision`` say who acts and how, ``legal_actions(state)`` lists the choices,
``check`` / ``is_legal`` judge one, ``apply`` returns the new state and its events, and
``observe(state, seat)`` is all a seat may see.

``ENGINE`` says which engine runs: ``"pure"`` (the source, the reference) or ``"compiled"`` (its
hot modules built by ``make compiled``, loaded only while they match the source: ``compiled``).
"""

from .compiled import choose as _choose

ENGINE = _choose()

from .actions import (Action, Bury, DecisionKind, Declare, DrawKittyCard, Pass, Play, Redeal,
                      Shuffle, parse_action)
from .cards import CARDS, Card, format_cards, full_deck, parse_cards
from .errors import IllegalActionError, InvalidActionError
from .engine import apply, apply_all, check, is_legal, new_game
from .families import families, family_of, presets
from .family import Family
from .legal import LegalActions, legal_actions
from .observe import Observation, observe
from .options import RuleSet
from .state import CHANCE, NOBODY, State
from .variants import rules_for, variant_ids

__all__ = [
    "Action", "Bury", "DecisionKind", "Declare", "DrawKittyCard", "Pass", "Play", "Redeal",
    "Shuffle", "parse_action", "CARDS", "Card", "format_cards", "full_deck", "parse_cards",
    "IllegalActionError", "InvalidActionError", "LegalActions", "legal_actions", "Observation",
    "observe", "RuleSet", "rules_for", "variant_ids", "presets", "families", "family_of",
    "Family", "CHANCE", "NOBODY", "State", "apply", "apply_all", "check", "is_legal", "new_game",
    "ENGINE",
]
