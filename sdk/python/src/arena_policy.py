"""Policies under their former name: ``from arena_policy import run_policy`` is
``from arena_sdk.policy import run_policy``."""

from arena_sdk.policy import (KIND_OF_PB, Legal, PolicyBot, TrickLog, observation_from_pb,
                              run_policy)

__all__ = ["KIND_OF_PB", "Legal", "PolicyBot", "TrickLog", "observation_from_pb", "run_policy"]
