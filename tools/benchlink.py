"""``arena bench link``: the referee's per-decision round trip against a bare grpcio
bidirectional echo of the same message size, measured in the same run.

Both sides of both measurements are separate Python processes on this machine: the echo client
is a process like a bot, and the referee is measured from its own clock (request sent to answer
received) with four real bot processes answering from the referee's hint. A third figure, the
relay, is the referee's message pattern without the referee: one bare grpcio server sending to
four client processes in turn.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
from shengji_arena.v1 import referee_pb2 as pb

ECHO_METHOD = "/arena.bench.Echo/Chat"

# The echo client talks the way the Python bot SDK (sample_bots/python/arena_bot.py) does:
# grpc's asyncio API on the process's one thread, writing a message and reading the reply.
_ECHO_CLIENT = r'''
import asyncio, sys, time, grpc
address, size, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
payload = b"x" * size

async def main():
    async with grpc.aio.insecure_channel(address) as ch:
        call = ch.stream_stream("%s")()
        times = []
        for i in range(count):
            t = time.perf_counter()
            await call.write(payload)
            await call.read()
            times.append(time.perf_counter() - t)
        await call.done_writing()
    print(" ".join("%%.6f" %% x for x in times))

asyncio.run(main())
''' % ECHO_METHOD


# A client of the relay below: answers each message the server sends it with the same bytes,
# as a bot answers each request (grpc's asyncio API, read then write).
_RELAY_CLIENT = r'''
import asyncio, sys, grpc
async def main():
    async with grpc.aio.insecure_channel(sys.argv[1]) as ch:
        call = ch.stream_stream("%s")()
        await call.write(b"hello")
        while True:
            msg = await call.read()
            if msg is grpc.aio.EOF:
                break
            await call.write(msg)
asyncio.run(main())
''' % ECHO_METHOD
RELAY_CLIENTS = 4


async def _start_server(chat, address: str) -> grpc.aio.Server:
    """A bare grpcio server whose one method, ``ECHO_METHOD``, is bidirectional and handled by
    ``chat``, listening on ``address``."""
    handler = grpc.method_handlers_generic_handler("arena.bench.Echo", {
        "Chat": grpc.stream_stream_rpc_method_handler(chat)})
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port(address)
    await server.start()
    return server


async def relay_round_trips(size: int, count: int) -> list[float]:
    """The referee's message pattern with no game and no referee: one server sends a message to
    each of four client processes in turn and waits for it to come back. A bare grpcio program
    (the handler writes and reads its streams directly), timed from send to reply."""
    streams: list = []
    joined, finished = asyncio.Event(), asyncio.Event()

    async def chat(request_iterator, context):
        await context.read()  # the client's first message: it is there
        streams.append(context)
        if len(streams) == RELAY_CLIENTS:
            joined.set()
        await finished.wait()

    with tempfile.TemporaryDirectory(prefix="arena-relay-", dir="/tmp") as folder:
        sock = Path(folder) / "relay.sock"
        server = await _start_server(chat, f"unix:{sock}")
        procs = [await asyncio.create_subprocess_exec(sys.executable, "-c", _RELAY_CLIENT,
                                                      f"unix://{sock}")
                 for _ in range(RELAY_CLIENTS)]
        await joined.wait()
        payload = b"x" * size
        times = []
        for i in range(count):
            context = streams[i % RELAY_CLIENTS]
            t = time.perf_counter()
            await context.write(payload)
            await context.read()
            times.append((time.perf_counter() - t) * 1000)
        finished.set()
        for proc in procs:
            await proc.wait()
        await server.stop(0)
    return times


async def echo_round_trips(size: int, count: int) -> list[float]:
    async def chat(request_iterator, context):
        async for msg in request_iterator:
            yield msg

    with tempfile.TemporaryDirectory(prefix="arena-echo-", dir="/tmp") as folder:
        sock = Path(folder) / "echo.sock"
        server = await _start_server(chat, f"unix:{sock}")
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _ECHO_CLIENT, f"unix://{sock}", str(size), str(count),
            stdout=subprocess.PIPE)
        out, _ = await proc.communicate()
        await server.stop(0)
    return [float(x) * 1000 for x in out.split()]


class _InstantSeat:
    """A seat with no transport, for measuring the referee's game work alone. Every message
    the runner sends it is encoded and parsed as grpc would, and a request is answered at once
    with an action drawn uniformly from its hint (what the ``random`` bot does)."""

    def __init__(self, link, seed: int) -> None:
        self.link, self.rng, self.busy_s = link, random.Random(seed), 0.0

    def put_nowait(self, msg) -> None:
        if msg is None:  # the match is over for this seat
            return
        t = time.perf_counter()
        got = pb.RefereeMessage.FromString(msg.SerializeToString())
        answer = None
        if got.WhichOneof("body") == "request":
            request = got.request
            answer = pb.BotMessage(answer=pb.Answer(request_id=request.request_id,
                                                    action=self.rng.choice(request.hint.actions)))
            answer = pb.BotMessage.FromString(answer.SerializeToString())
        self.busy_s += time.perf_counter() - t
        if answer is not None:
            self.link.inbox.put_nowait(answer)


def game_work(variant: str, deals: int) -> tuple[int, float, float, float]:
    """Play a match with four in-process seats (no sockets, no grpc): (decisions, ms per
    decision of referee work between an answer and the next request, ms per decision of
    recording and notices after it, ms per decision in the seats)."""
    from referee.match.runner import MatchRunner
    from referee.match.spec import MatchSpec
    from referee.seats.grpc_seat import SeatHub

    class Runner(MatchRunner):
        settle_s = 0.0

        def _settle(self, *args) -> None:
            t = time.perf_counter()
            super()._settle(*args)
            self.settle_s += time.perf_counter() - t

    hub = SeatHub()
    seats = []
    for link in hub.links:
        seats.append(_InstantSeat(link, link.seat))
        link.outbox = seats[-1]
        link.connected.set()
    runner = Runner(MatchSpec(match_id="bench-game-work", variant=variant, seed="bench",
                              max_deals=deals), hub)
    asyncio.run(runner.run())
    n = len(runner.timings)
    seats_s = sum(s.busy_s for s in seats)
    # the seats' time spent on notices is inside _settle: count it once, as the seats'
    critical = runner.play_s - runner.settle_s - seats_s
    return n, critical / n * 1000, runner.settle_s / n * 1000, seats_s / n * 1000


def bench_link(variant: str, deals: int) -> int:
    from referee.seats.manifest import load_manifest
    from referee.match.local import run_match
    from referee.match.spec import MatchSpec
    from referee.wire.hints import legal_hint
    from referee.wire.protocol import observation_to_pb
    from referee.play.random_play import random_action
    from referee.rules.variants import rules_for
    from referee.rules.engine import new_game
    from referee.rules.state import CHANCE
    from referee.rules.engine import apply
    from referee.play.chance import chance_action

    root = Path(__file__).resolve().parent.parent
    bot = load_manifest(root / "sample_bots" / "python" / "random")
    # the referee: a match of four bot processes, timed by the referee's own clock
    spec = MatchSpec(match_id="bench-link", variant=variant, seed="bench", max_deals=deals)
    with tempfile.TemporaryDirectory() as tmp:
        wall = time.perf_counter()
        result, record, runner = run_match(spec, [bot] * 4, Path(tmp))
        wall = time.perf_counter() - wall
    rtts = [t for _, t in runner.timings]
    decisions = len(rtts)
    # the size of a typical request: a mid-deal follow request of this variant
    rules = rules_for(variant)
    s = new_game(rules, max_deals=1)
    rng = random.Random(1)
    sizes = []
    while not s.is_terminal:
        if s.turn == CHANCE:
            s, _ = apply(s, chance_action(s, "size"))
            continue
        req = pb.RefereeMessage(request=pb.DecisionRequest(
            request_id=1, observation=observation_to_pb(s, s.turn), hint=legal_hint(s, "x")))
        sizes.append(req.ByteSize())
        s, _ = apply(s, random_action(s, rng), s.turn)
    size = int(statistics.median(sizes))
    count = max(200, min(decisions, 2000))
    echo = asyncio.run(echo_round_trips(size, count))
    relay = asyncio.run(relay_round_trips(size, count))
    work_decisions, critical_ms, after_ms, seat_ms = game_work(variant, deals)
    ref_median, echo_median = statistics.median(rtts), statistics.median(echo)
    relay_median = statistics.median(relay)
    deal_wall = runner.play_s / max(1, len(result["deals"]))
    per_deal_decisions = decisions / max(1, len(result["deals"]))
    print(f"command      arena bench link --variant {variant} --deals {deals}")
    print(f"machine      {os.uname().machine}, {os.cpu_count()} cpus, python "
          f"{sys.version.split()[0]}, grpcio {grpc.__version__}; unix sockets on one machine")
    print(f"message      median request size {size} bytes (a {variant} decision request)")
    print(f"echo         bare grpcio bidirectional echo, {len(echo)} round trips: median "
          f"{echo_median:.3f} ms, mean {statistics.mean(echo):.3f} ms")
    print(f"referee      {decisions} decisions over {len(result['deals'])} deals, request sent to "
          f"answer received (bot processes answering from the hint): median "
          f"{ref_median:.3f} ms, mean {statistics.mean(rtts):.3f} ms")
    print(f"ratio        referee / echo round trip (medians) = {ref_median / echo_median:.2f} "
          f"(goal <= 1.5)")
    # a deal's time is a sum over its decisions, so it is set against a sum of round trips:
    # decisions x the mean echo (the medians above compare one round trip with another)
    echo_mean, relay_mean = statistics.mean(echo), statistics.mean(relay)
    budget = per_deal_decisions * echo_mean / 1000
    print(f"deal         {deal_wall:.3f} s per deal of play with four external Python bot processes "
          f"({per_deal_decisions:.0f} decisions); decisions x mean echo round trip = {budget:.3f} s; "
          f"ratio {deal_wall / budget:.2f} (goal <= 1.5); whole match with start-up {wall:.2f} s")
    print(f"relay        bare grpcio, one server sending to four client processes in turn, each "
          f"sending it back: {len(relay)} round trips, median {relay_median:.3f} ms, mean "
          f"{relay_mean:.3f} ms = {relay_median / echo_median:.2f} x echo (the referee's message "
          f"pattern with no game)")
    print(f"against it   referee round trip / relay = {ref_median / relay_median:.2f} (medians); "
          f"deal / (decisions x mean relay) = "
          f"{deal_wall / (per_deal_decisions * relay_mean / 1000):.2f}")
    # No referee on this transport and machine crosses faster than the relay, and a deal also
    # holds the work that must come between an answer and the next request (referee and bot).
    floor = relay_mean + critical_ms + seat_ms
    print(f"game work    the same kind of match with four in-process seats (no sockets, no grpc; "
          f"{work_decisions} decisions): referee {critical_ms:.3f} ms per decision between an "
          f"answer and the next request (judge, apply, deal the cards, the next observation and hint), "
          f"{after_ms:.3f} ms recording and notices after it; seats {seat_ms:.3f} ms (parse, "
          f"choose, encode)")
    print(f"floor        on this transport and machine: any referee's round trip >= the relay "
          f"= {relay_median / echo_median:.2f} x echo; with this rules engine, a deal >= "
          f"decisions x (mean relay + work between answer and request + seat) = "
          f"{floor / echo_mean:.2f} x decisions x mean echo")
    return 0
