"""SDK bots as lab policies (``BotPolicy``), and the wire side of a policy (from the SDK's
``arena_sdk.policy``: ``observation_from_pb``, ``TrickLog``, ``PolicyBot``).

``BotPolicy`` hands an ``arena_sdk.Bot`` the ``DecisionRequest`` the referee would send
(observation, kind, hint, clock; no events) and reads its answer as the referee reads one.
"""

from __future__ import annotations

from shengji_arena.v1 import referee_pb2 as pb

from lab.paths import SDK, on_path
from referee.rules.observe import Observation
from referee.wire.protocol import (
    DECISION_TO_PB,
    action_from_pb,
    action_to_pb,
    observation_message,
)

on_path(SDK)
from arena_sdk.policy import KIND_OF_PB, PolicyBot, TrickLog, observation_from_pb  # noqa: E402

__all__ = ["KIND_OF_PB", "BotPolicy", "PolicyBot", "TrickLog", "observation_from_pb"]


class BotPolicy:
    """An SDK bot (an ``arena_sdk.Bot`` instance) played as a lab policy."""

    def __init__(self, bot) -> None:
        self.bot = bot
        self.name = getattr(bot, "name", type(bot).__name__)

    def match_start(self, seat: int, match_id: str, variant: str) -> None:
        self.bot.seat = seat

    def act(self, view: Observation, legal) -> object:
        request = pb.DecisionRequest(kind=DECISION_TO_PB[legal.kind],
                                     observation=observation_message(view, view.seat),
                                     time_left_ms=legal.time_left_ms,
                                     bank_left_ms=legal.bank_left_ms)
        request.hint.complete = legal.complete
        request.hint.actions.extend(action_to_pb(a) for a in legal.actions)
        return action_from_pb(self.bot.decide(request))
