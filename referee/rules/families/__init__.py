"""The registry of game families: the one place that lists them.

The built-in families are listed here. Another family (a package outside this one, a test's or a
league's own) is added by naming its module in the environment variable ``ARENA_FAMILIES``
(comma-separated module paths, each with a ``FAMILY`` value); the registry imports them the first
time it is asked. No family registers itself.
"""

from __future__ import annotations

import importlib

from house import settings

from ..errors import FamilyError
from ..family import Family
from ..options import RuleSet
from . import single_deck, three_deck, two_deck

_BUILT_IN: tuple[Family, ...] = (two_deck.FAMILY, single_deck.FAMILY, three_deck.FAMILY)
_REGISTRY: dict[str, Family] = {}
_PRESETS: dict[str, RuleSet] = {}


def _add(family: Family, origin: str) -> None:
    if family.name in _REGISTRY:
        raise FamilyError(f"{origin}: family {family.name!r} is already registered")
    for preset in family.presets:
        if preset.family != family.name:
            raise FamilyError(f"{origin}: preset {preset.variant!r} names family "
                             f"{preset.family!r}, not {family.name!r}")
        if preset.decks != family.decks:
            raise FamilyError(f"{origin}: preset {preset.variant!r} has {preset.decks} decks; "
                             f"family {family.name!r} plays with {family.decks}")
        if preset.variant in _PRESETS:
            raise FamilyError(f"{origin}: variant id {preset.variant!r} is already taken")
    _REGISTRY[family.name] = family
    for preset in family.presets:
        _PRESETS[preset.variant] = preset


def _load() -> None:
    for family in _BUILT_IN:
        _add(family, __name__)
    for name in filter(None, (n.strip() for n in settings.FAMILIES.value().split(","))):
        try:
            module = importlib.import_module(name)
        except ImportError as e:
            raise FamilyError(f"ARENA_FAMILIES: cannot import {name!r}: {e}") from None
        found = getattr(module, "FAMILY", None)
        if not isinstance(found, Family):
            raise FamilyError(f"ARENA_FAMILIES: module {name!r} has no FAMILY value (a Family)")
        _add(found, f"ARENA_FAMILIES {name!r}")


def families() -> dict[str, Family]:
    """Every registered family by name."""
    if not _REGISTRY:
        _load()
    return dict(_REGISTRY)


def presets() -> dict[str, RuleSet]:
    """Every variant id's preset rule set, in registration order."""
    if not _REGISTRY:
        _load()
    return dict(_PRESETS)


def family_of(rules: RuleSet) -> Family:
    """The family of a rule set (raises ``ValueError`` for an unknown one)."""
    try:
        return _REGISTRY[rules.family]
    except KeyError:
        if not _REGISTRY:
            _load()
            return family_of(rules)
        raise ValueError(f"unknown game family {rules.family!r}; registered: "
                         f"{', '.join(_REGISTRY)}") from None
