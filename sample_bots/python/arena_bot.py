"""A small Python SDK for Shengji Arena bots: connect, loop, one callback per decision kind.

    from arena_bot import Bot, run

    class MyBot(Bot):
        name = "mine"
        def on_follow(self, request):          # a DecisionRequest
            return request.hint.actions[0]     # an Action

    run(MyBot())

``run`` reads ARENA_REFEREE, ARENA_SEAT and ARENA_TOKEN from the environment (the referee sets
them when it launches the bot), sends the Hello, and answers each request with the callback for
its kind. Every callback gets the DecisionRequest and returns an Action message; the default
of each is ``choose`` (the first hint action), so a bot overrides only what it cares about.
"""

from __future__ import annotations

import os
import queue
import sys

import grpc
from shengji_arena.v1 import referee_pb2 as pb
from shengji_arena.v1 import referee_pb2_grpc as pb_grpc

PROTOCOL = "shengji-arena/1"

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
        print("arena_bot: ARENA_REFEREE and ARENA_TOKEN must be set (the referee sets them "
              "when it launches a bot)", file=sys.stderr)
        return 2
    outgoing: queue.Queue = queue.Queue()
    outgoing.put(pb.BotMessage(hello=pb.Hello(token=token, bot_name=bot.name,
                                              bot_version=bot.version, protocol=PROTOCOL)))

    def messages():
        while True:
            msg = outgoing.get()
            if msg is None:
                return
            yield msg

    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.RefereeStub(channel)
        try:
            for msg in stub.Play(messages()):
                which = msg.WhichOneof("body")
                if which == "request":
                    action = bot.decide(msg.request)
                    outgoing.put(pb.BotMessage(answer=pb.Answer(
                        request_id=msg.request.request_id, action=action)))
                elif which == "welcome":
                    bot.seat = msg.welcome.seat
                    bot.welcome = msg.welcome
                    bot.on_welcome(msg.welcome)
                elif which == "notice":
                    bot.on_notice(msg.notice)
                elif which == "rejection":
                    bot.on_rejection(msg.rejection)
                elif which == "match_end":
                    bot.on_match_end(msg.match_end)
                    break
        except grpc.RpcError as e:
            print(f"arena_bot: {e.code().name}: {e.details()}", file=sys.stderr)
            return 1
        finally:
            outgoing.put(None)
    return 0
