"""The protocol client: connect, loop, one callback per decision kind.

    from arena_sdk import Bot, run

    class MyBot(Bot):
        name = "mine"
        def on_follow(self, request):          # a DecisionRequest
            return request.hint.actions[0]     # an Action

    run(MyBot())

``run`` reads ARENA_REFEREE, ARENA_SEAT and ARENA_TOKEN from the environment (the referee sets
them when it launches the bot), sends the Hello, and answers each request with the callback for
its kind. Every callback gets the DecisionRequest and returns an Action message; the default
of each is ``choose`` (the first hint action), so a bot overrides only what it cares about.

The callbacks are plain functions, called one at a time on the thread that called ``run``: the
stream is driven by grpc's asyncio API on that thread, so a message costs no hand-over between
threads (a request iterator fed from a queue would need one for every answer). ``run`` starts
its own event loop, so call it from plain code, not from inside a running asyncio loop.

A bot that sets ``events_with_requests = True`` asks the referee for its events only inside its
requests and at each deal's end (``EVENT_DELIVERY_WITH_REQUESTS``): fewer messages, no trick
notices; ``on_notice`` then sees only the deal end's notice (and, after a forfeit, the match
end's). The events are the same, in the same order.
"""

from __future__ import annotations

import asyncio
import os
import sys

import grpc
from shengji_arena.v1 import referee_pb2 as pb
from shengji_arena.v1 import referee_pb2_grpc as pb_grpc

PROTOCOL = "shengji-arena/1"

__all__ = ["PROTOCOL", "Bot", "pb", "run"]

_CALLBACKS = {
    pb.DECISION_KIND_DECLARE: "on_declare",
    pb.DECISION_KIND_REDEAL: "on_redeal",
    pb.DECISION_KIND_BURY: "on_bury",
    pb.DECISION_KIND_LEAD: "on_lead",
    pb.DECISION_KIND_FOLLOW: "on_follow",
    pb.DECISION_KIND_UPRISING: "on_uprising",
    pb.DECISION_KIND_HANDOVER: "on_handover",
    pb.DECISION_KIND_TRANSFER: "on_transfer",
    pb.DECISION_KIND_RETURN: "on_return",
    pb.DECISION_KIND_DUN_REVEAL: "on_dun_reveal",
    pb.DECISION_KIND_JOKER_BURY: "on_joker_bury",
}


class Bot:
    """Override the callbacks you need. ``self.seat`` and ``self.welcome`` are set on Welcome."""

    name = "python-bot"
    version = "1.0.0"
    events_with_requests = False  # True: events in requests and at deal end, no trick notices

    def __init__(self) -> None:
        self.seat = -1
        self.welcome: pb.Welcome | None = None

    # every decision kind falls back to choose()
    def choose(self, request: pb.DecisionRequest) -> pb.Action:
        return request.hint.actions[0]

    def on_declare(self, request): return self.choose(request)
    def on_redeal(self, request): return self.choose(request)
    def on_bury(self, request): return self.choose(request)
    def on_lead(self, request): return self.choose(request)
    def on_follow(self, request): return self.choose(request)
    def on_uprising(self, request): return self.choose(request)
    def on_handover(self, request): return self.choose(request)
    def on_transfer(self, request): return self.choose(request)
    def on_return(self, request): return self.choose(request)
    def on_dun_reveal(self, request): return self.choose(request)
    def on_joker_bury(self, request): return self.choose(request)

    # notifications
    def on_welcome(self, welcome: pb.Welcome) -> None: ...
    def on_notice(self, notice: pb.Notice) -> None: ...
    def on_rejection(self, rejection: pb.Rejection) -> None:
        print(f"[{self.name} seat {self.seat}] rejected: {rejection.reason}", file=sys.stderr)
    def on_match_end(self, end: pb.MatchEnd) -> None: ...

    def decide(self, request: pb.DecisionRequest) -> pb.Action:
        return getattr(self, _CALLBACKS[request.kind])(request)


def run(bot: Bot, address: str | None = None, token: str | None = None) -> int:
    """Play one seat until the match ends; returns a process exit code."""
    address = address or os.environ.get("ARENA_REFEREE")
    token = token or os.environ.get("ARENA_TOKEN")
    if not address or not token:
        print("arena_sdk: ARENA_REFEREE and ARENA_TOKEN must be set (the referee sets them "
              "when it launches a bot)", file=sys.stderr)
        return 2
    return asyncio.run(_play(bot, address, token))


async def _play(bot: Bot, address: str, token: str) -> int:
    delivery = (pb.EVENT_DELIVERY_WITH_REQUESTS if bot.events_with_requests
                else pb.EVENT_DELIVERY_UNSPECIFIED)
    hello = pb.BotMessage(hello=pb.Hello(token=token, bot_name=bot.name,
                                         bot_version=bot.version, protocol=PROTOCOL,
                                         event_delivery=delivery))
    async with grpc.aio.insecure_channel(address) as channel:
        call = pb_grpc.RefereeStub(channel).Play()
        try:
            await call.write(hello)
            while True:
                msg = await call.read()
                if msg is grpc.aio.EOF:  # the referee closed the stream
                    break
                which = msg.WhichOneof("body")
                if which == "request":
                    request = msg.request
                    action = bot.decide(request)
                    await call.write(pb.BotMessage(answer=pb.Answer(
                        request_id=request.request_id, action=action)))
                elif which == "notice":
                    bot.on_notice(msg.notice)
                elif which == "welcome":
                    bot.seat = msg.welcome.seat
                    bot.welcome = msg.welcome
                    bot.on_welcome(msg.welcome)
                elif which == "rejection":
                    bot.on_rejection(msg.rejection)
                elif which == "match_end":
                    bot.on_match_end(msg.match_end)
                    break
        except grpc.RpcError as e:
            print(f"arena_sdk: {e.code().name}: {e.details()}", file=sys.stderr)
            return 1
        except asyncio.InvalidStateError:  # an answer written after the referee ended the stream
            print("arena_sdk: the referee closed the stream", file=sys.stderr)
            return 1
    return 0
