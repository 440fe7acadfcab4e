"""The Python SDK for Shengji Arena bots.

    from arena_sdk import Bot, run               # the protocol client (arena_sdk.bot)
    from arena_sdk.cards import card_order       # card strength, trick winners (arena_sdk.cards)
    from arena_sdk.policy import run_policy      # a lab policy played as a bot (arena_sdk.policy)

``arena_sdk.cards`` and ``arena_sdk.policy`` are the arena's rules engine (``referee.rules``) in a
bot's terms; the engine comes with the SDK, in every Python bot's sandbox and in its package.
"""

import gc

# The imports below (grpc, asyncio, the protocol) make some hundred thousand objects, and the
# collector would walk them again and again as they are made: off meanwhile, then those objects
# are set apart from its later passes (a bot starts about 10% sooner; its collections later
# skip them).
_collecting = gc.isenabled()
gc.disable()
try:
    from arena_sdk.bot import PROTOCOL, Bot, pb, run
finally:
    gc.freeze()
    if _collecting:
        gc.enable()

__all__ = ["PROTOCOL", "Bot", "pb", "run"]
