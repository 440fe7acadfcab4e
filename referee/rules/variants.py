"""Variant ids: the preset rule set of each, from the family registry, with options applied."""

from __future__ import annotations

from typing import Any, Mapping

from .families import family_of, presets
from .options import RuleSet


def rules_for(variant: str, options: Mapping[str, Any] | None = None) -> RuleSet:
    """The preset of ``variant`` with ``options`` applied (``ValueError`` naming what is known)."""
    known = presets()
    try:
        preset = known[variant]
    except KeyError:
        raise ValueError(f"unknown variant {variant!r}; expected one of: "
                         f"{', '.join(known)}") from None
    rules = preset.with_options(options)
    family = family_of(rules)
    if rules.decks != family.decks:
        raise ValueError(f"option 'decks' = {rules.decks!r} is not allowed; expected "
                         f"{family.decks} for this game")
    return rules


def variant_ids() -> tuple[str, ...]:
    """Every built variant id, in registration order."""
    return tuple(presets())
