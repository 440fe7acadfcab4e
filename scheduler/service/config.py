"""The submission service's settings (``arena serve``): its limits, self-registration, the
variant of its scrimmages, its A/B tests, and how its HTTP edge bounds cookies and bodies."""

from __future__ import annotations

from dataclasses import dataclass, field

from scheduler.service.ab import AbSettings
from scheduler.service.human import HumanSettings
from scheduler.service.limits import Limits


@dataclass(frozen=True)
class ServiceConfig:
    """``arena serve``'s settings."""
    limits: Limits = field(default_factory=Limits)
    self_registration: bool = False
    variant: str = "two-deck-fry"
    ab: AbSettings = field(default_factory=AbSettings)  # A/B tests (``ARENA_AB_*``)
    human: HumanSettings = field(default_factory=HumanSettings)  # ``ARENA_HUMAN*``
    secure_cookies: bool = False        # behind TLS: the session cookie is Secure
    body_s: float = 20.0                # a request body pausing this long ends with 408
    body_rate: int = 32 << 10           # bytes a second a body keeps up after its first body_s
