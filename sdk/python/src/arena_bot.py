"""The protocol client under its former name: ``from arena_bot import Bot, run`` is
``from arena_sdk import Bot, run``."""

from arena_sdk.bot import PROTOCOL, Bot, pb, run

__all__ = ["PROTOCOL", "Bot", "pb", "run"]
