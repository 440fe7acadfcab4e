"""``arena bench link``: the referee's per-decision round trip against a bare grpcio
bidirectional echo of the same message size, measured in the same run.

Both sides of both measurements are separate Python processes on this machine: the echo client
is a process like a bot, and the referee is measured from its own clock (request sent to answer
received) with four real bot processes answering from the referee's hint. A third figure, the
relay, is the referee's message pattern without the referee: one bare grpcio server sending to
four client processes in turn. The echo is played on grpc's sync server too (``sync echo``),
to weigh the other server model by the same measure.

The referee's matches are played for each way a bot may take its events, each against the
same echo and relay: with notices (the protocol's default) and with its requests
(``EVENT_DELIVERY_WITH_REQUESTS``: fewer messages); each figure of the referee is printed for
each, its line naming the way ("notices:", "with-requests:").

Each way plays ``--matches`` matches: the first gives the figures above; all give the start-up
line, the medians of where each match's start-up went (``referee.match.runner.Startup``), from
the match's start to its first request, and the referee process's own start (exec to its
``main``: interpreter and imports), timed apart since the match here is played in this process.
"""

from __future__ import annotations

import asyncio
import dataclasses
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

# The echo client talks the way the Python bot SDK (sdk/python, arena_sdk.bot) does:
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


def _mark(marks: list[float]) -> None:
    """Keep the process's CPU time at the first message and at the latest one. Marking every
    message, not the stream's end, leaves nothing to a handler that the server's stop may cancel
    before the end of the stream reaches it."""
    now = time.process_time()
    if len(marks) < 2:
        marks.append(now)
    else:
        marks[1] = now


async def echo_round_trips(size: int, count: int, cpu: list | None = None) -> list[float]:
    """The echo's round trips (ms); ``cpu``, if given, gets the server process's CPU time (s)
    from the first message received to the last (``count - 1`` round trips)."""
    marks: list[float] = []

    async def chat(request_iterator, context):
        async for msg in request_iterator:
            _mark(marks)
            yield msg

    with tempfile.TemporaryDirectory(prefix="arena-echo-", dir="/tmp") as folder:
        sock = Path(folder) / "echo.sock"
        server = await _start_server(chat, f"unix:{sock}")
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _ECHO_CLIENT, f"unix://{sock}", str(size), str(count),
            stdout=subprocess.PIPE)
        out, _ = await proc.communicate()
        await server.stop(0)
    if cpu is not None and len(marks) == 2:
        cpu.append(marks[1] - marks[0])
    return [float(x) * 1000 for x in out.split()]


def sync_echo_round_trips(size: int, count: int, cpu: list | None = None) -> list[float]:
    """``echo_round_trips`` with grpc's sync server (a thread pool; the handler a generator
    over the request stream) instead of its asyncio server, against the same client: the other
    server model grpc offers, measured the same way."""
    from concurrent import futures

    marks: list[float] = []

    def chat(request_iterator, context):
        for msg in request_iterator:
            _mark(marks)
            yield msg

    handler = grpc.method_handlers_generic_handler("arena.bench.Echo", {
        "Chat": grpc.stream_stream_rpc_method_handler(chat)})
    with tempfile.TemporaryDirectory(prefix="arena-echo-", dir="/tmp") as folder:
        sock = Path(folder) / "echo.sock"
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        server.add_generic_rpc_handlers((handler,))
        server.add_insecure_port(f"unix:{sock}")
        server.start()
        try:
            out = subprocess.run([sys.executable, "-c", _ECHO_CLIENT, f"unix://{sock}",
                                  str(size), str(count)], capture_output=True, check=True).stdout
        finally:
            server.stop(0).wait()
    if cpu is not None and len(marks) == 2:
        cpu.append(marks[1] - marks[0])
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


def game_work(variant: str, deals: int, with_requests: bool = False
              ) -> tuple[int, float, float, float]:
    """Play a match with four in-process seats (no sockets, no grpc; ``with_requests``: each
    takes its events with its requests): (decisions, ms per decision of referee work between
    an answer and the next request, ms per decision of recording and notices after it, ms per
    decision in the seats)."""
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
    for link, seat in zip(hub.links, hub.seats):
        seats.append(_InstantSeat(link, link.seat))
        # a stand-in with the one method of a Mailbox the link calls (put_nowait)
        link.outbox = seats[-1]  # type: ignore[assignment]
        link.connected.set()
        seat.events_with_requests = with_requests  # what its Hello would have asked for
    runner = Runner(MatchSpec(match_id="bench-game-work", variant=variant, seed="bench",
                              max_deals=deals), hub)
    asyncio.run(runner.run())
    n = len(runner.timings)
    seats_s = sum(s.busy_s for s in seats)
    # the seats' time spent on notices is inside _settle: count it once, as the seats'
    critical = runner.play_s - runner.settle_s - seats_s
    return n, critical / n * 1000, runner.settle_s / n * 1000, seats_s / n * 1000


EVENT_MODES = {"notices": False, "with-requests": True}
"""How the bots take their events, by the name ``--events`` gives: with notices (the default
of the protocol), or with their requests (``EVENT_DELIVERY_WITH_REQUESTS``)."""


def _referee_match(variant: str, deals: int, with_requests: bool):
    """A match of four random bot processes, timed by the referee's own clock: (result,
    runner, wall seconds with start-up)."""
    from referee.seats.manifest import load_manifest
    from referee.match.local import run_match
    from referee.match.spec import MatchSpec

    root = Path(__file__).resolve().parent.parent
    bot = load_manifest(root / "sample_bots" / "python" / "random")
    if with_requests:
        bot = dataclasses.replace(bot, command=bot.command + ("--events-with-requests",))
    spec = MatchSpec(match_id="bench-link", variant=variant, seed="bench", max_deals=deals)
    with tempfile.TemporaryDirectory() as tmp:
        wall = time.perf_counter()
        result, _, runner = run_match(spec, [bot] * 4, Path(tmp))
        wall = time.perf_counter() - wall
    return result, runner, wall


def referee_process_ms(count: int, *, forked: bool = False) -> list[float]:
    """The referee process's start, ``count`` times: ms from asking for a referee to its
    ``main`` run and ended (given a spec that is not there: it stops at once, status 2),
    started the way a league's worker starts it (``referee.prestarted.start``: forked from a
    referee started ahead when ``forked``, not counting that one's own start; else by exec:
    the interpreter and ``referee.serve``'s imports each time)."""
    from referee import prestarted

    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(root / "protos")] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        argv = [f"{tmp}/none.json", "--out", f"{tmp}/out.json", "--workdir", tmp]
        log = Path(tmp) / "referee.log"
        if forked:  # the one started ahead: a worker's first match pays for it
            prestarted.start(argv, env=env, cwd=root, log=log, forked=True).wait()
        for _ in range(count):
            t = time.monotonic()
            proc = prestarted.start(argv, env=env, cwd=root, log=log, forked=forked)
            if proc.wait() != 2:
                raise RuntimeError(f"the referee said: {log.read_text()[-2000:]}")
            times.append((time.monotonic() - t) * 1000)
    return times


STARTUP_PHASES = ("sockets and gates", "sandbox spawn", "bot start and connect",
                  "connect to Hello", "last Hello to first request")
"""The phases of a match's start-up in this process, in order (``Startup.phases``)."""


def startup_breakdown(runners, referee_ms: list[float],
                      exec_ms: list[float] | None = None) -> str:
    """The start-up line's figures: the medians (ms) over ``runners``' matches of each phase
    of their start-up, each seat's own spawn and bot start, and the referee process's start
    (``referee_ms``, forked as a worker does; ``exec_ms`` by exec, for comparison), with the
    largest phase named."""
    phases = [r.startup.phases() for r in runners]
    per_seat = [r.startup.per_seat() for r in runners]
    if any(p is None for p in phases) or any(s is None for s in per_seat):
        return "not every stamp was taken (a seat not launched over gRPC)"
    median = {name: statistics.median(p[name] for p in phases if p is not None)
              for name in (*STARTUP_PHASES, "total")}
    seat = {name: statistics.median(x for s in per_seat if s is not None for x in s[name])
            for name in ("sandbox spawn", "bot start and connect")}
    median_referee = statistics.median(referee_ms)
    largest = max((*STARTUP_PHASES, "referee process"),
                  key=lambda name: median_referee if name == "referee process" else median[name])
    by_exec = (f"; by exec {statistics.median(exec_ms):.0f}: interpreter and imports"
               if exec_ms else "")
    return (f"medians over {len(runners)} matches, ms: referee process {median_referee:.0f} "
            f"(asked for to main run, timed apart: forked from one started ahead{by_exec}); "
            f"sockets and gates "
            f"{median['sockets and gates']:.0f}; sandbox spawn {median['sandbox spawn']:.0f} "
            f"(the seats in turn up to the last to say Hello; per seat "
            f"{seat['sandbox spawn']:.0f}); bot start and connect "
            f"{median['bot start and connect']:.0f} (interpreter, imports, connect: spawn to "
            f"stream; per seat {seat['bot start and connect']:.0f}); connect to Hello "
            f"{median['connect to Hello']:.0f}; last Hello to first request "
            f"{median['last Hello to first request']:.0f}; total {median['total']:.0f} in the "
            f"match, {median['total'] + median_referee:.0f} with the referee process; largest: "
            f"{largest}")


def _request_size(variant: str) -> int:
    """The size of a typical request: the median over one random deal's decision requests."""
    from referee.wire.hints import legal_hint
    from referee.wire.protocol import observation_to_pb
    from referee.play.random_play import random_action
    from referee.rules.variants import rules_for
    from referee.rules.engine import apply, new_game
    from referee.rules.state import CHANCE
    from referee.play.chance import chance_action

    s = new_game(rules_for(variant), max_deals=1)
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
    return int(statistics.median(sizes))


def bench_link(variant: str, deals: int, events: str = "both", matches_each: int = 3) -> int:
    """Print the figures; ``events``: "notices", "with-requests" or "both" (the referee's
    matches played each way, in that order, each against the same echo and relay);
    ``matches_each``: the matches of each way (the first gives the figures of the link, all
    the start-up's)."""
    modes = list(EVENT_MODES) if events == "both" else [events]
    every_match = {mode: [_referee_match(variant, deals, EVENT_MODES[mode])
                     for _ in range(max(1, matches_each))] for mode in modes}
    matches = {mode: every[0] for mode, every in every_match.items()}
    referee_ms = referee_process_ms(max(1, matches_each), forked=True)
    exec_ms = referee_process_ms(max(1, matches_each))
    size = _request_size(variant)
    decisions_max = max(len(runner.timings) for _, runner, _ in matches.values())
    count = max(200, min(decisions_max, 2000))
    echo_cpu: list[float] = []
    echo = asyncio.run(echo_round_trips(size, count, echo_cpu))
    relay = asyncio.run(relay_round_trips(size, count))
    sync_cpu: list[float] = []
    sync = sync_echo_round_trips(size, count, sync_cpu)
    echo_median, echo_mean = statistics.median(echo), statistics.mean(echo)
    relay_median, relay_mean = statistics.median(relay), statistics.mean(relay)
    echo_cpu_ms = echo_cpu[0] / max(1, len(echo) - 1) * 1000 if echo_cpu else float("nan")
    print(f"command      arena bench link --variant {variant} --deals {deals} --matches "
          f"{max(1, matches_each)}")
    print(f"machine      {os.uname().machine}, {os.cpu_count()} cpus, python "
          f"{sys.version.split()[0]}, grpcio {grpc.__version__}; unix sockets on one machine")
    print(f"message      median request size {size} bytes (a {variant} decision request)")
    print(f"echo         bare grpcio bidirectional echo, {len(echo)} round trips: median "
          f"{echo_median:.3f} ms, mean {echo_mean:.3f} ms; server CPU {echo_cpu_ms:.3f} ms "
          f"per round trip")
    sync_cpu_ms = sync_cpu[0] / max(1, len(sync) - 1) * 1000 if sync_cpu else float("nan")
    print(f"sync echo    the same echo with grpc's sync server (threads): median "
          f"{statistics.median(sync):.3f} ms, mean {statistics.mean(sync):.3f} ms; server CPU "
          f"{sync_cpu_ms:.3f} ms per round trip = {sync_cpu_ms / echo_cpu_ms:.2f} x the asyncio "
          f"server's (the other server model)")
    print(f"relay        bare grpcio, one server sending to four client processes in turn, each "
          f"sending it back: {len(relay)} round trips, median {relay_median:.3f} ms, mean "
          f"{relay_mean:.3f} ms = {relay_median / echo_median:.2f} x echo (the referee's message "
          f"pattern with no game)")
    for mode, (result, runner, wall) in matches.items():
        rtts = [t for _, t in runner.timings]
        decisions = len(rtts)
        played = max(1, len(result["deals"]))
        ref_median = statistics.median(rtts)
        deal_wall = runner.play_s / played
        per_deal_decisions = decisions / played
        print(f"referee      {mode}: {decisions} decisions over {len(result['deals'])} deals, "
              f"request sent to answer received (bot processes answering from the hint): "
              f"median {ref_median:.3f} ms, mean {statistics.mean(rtts):.3f} ms")
        # each decision's request and answer, and what else the referee sent (notices, the
        # welcomes, rejections, the match's ends)
        others = runner.messages_sent / decisions - 1
        print(f"messages     {mode}: {2 + others:.2f} per decision (the request, the answer and "
              f"{others:.2f} others: notices, welcomes, match ends)")
        cpu_ms = runner.play_cpu_s / decisions * 1000
        print(f"cpu          {mode}: referee process {cpu_ms:.3f} ms per decision of play "
              f"(every thread); / echo server's per round trip = {cpu_ms / echo_cpu_ms:.2f} "
              f"(goal <= 1.5)")
        print(f"ratio        {mode}: referee / echo round trip (medians) = "
              f"{ref_median / echo_median:.2f} (goal <= 1.5)")
        # a deal's time is a sum over its decisions, so it is set against a sum of round
        # trips: decisions x the mean echo (the medians above compare one round trip with
        # another)
        budget = per_deal_decisions * echo_mean / 1000
        print(f"deal         {mode}: {deal_wall:.3f} s per deal of play with four external Python "
              f"bot processes ({per_deal_decisions:.0f} decisions); decisions x mean echo round "
              f"trip = {budget:.3f} s; ratio {deal_wall / budget:.2f} (goal <= 1.5); whole match "
              f"with start-up {wall:.2f} s")
        print(f"against it   {mode}: referee round trip / relay = "
              f"{ref_median / relay_median:.2f} (medians); deal / (decisions x mean relay) = "
              f"{deal_wall / (per_deal_decisions * relay_mean / 1000):.2f}")
        work_decisions, critical_ms, after_ms, seat_ms = game_work(variant, deals,
                                                                   EVENT_MODES[mode])
        print(f"game work    {mode}: the same kind of match with four in-process seats (no "
              f"sockets, no grpc; {work_decisions} decisions): referee {critical_ms:.3f} ms per "
              f"decision between an answer and the next request (judge, apply, deal the cards, "
              f"the next observation and hint), {after_ms:.3f} ms recording and notices after "
              f"it; seats {seat_ms:.3f} ms (parse, choose, encode)")
        # No referee on this transport and machine crosses faster than the relay, and a deal
        # also holds the work that must come between an answer and the next request (referee
        # and bot).
        floor = relay_mean + critical_ms + seat_ms
        print(f"floor        {mode}: on this transport and machine: any referee's round trip >= "
              f"the relay = {relay_median / echo_median:.2f} x echo; with this rules engine, a "
              f"deal >= decisions x (mean relay + work between answer and request + seat) = "
              f"{floor / echo_mean:.2f} x decisions x mean echo")
        print(f"start-up     {mode}: "
              f"{startup_breakdown([r for _, r, _ in every_match[mode]], referee_ms, exec_ms)}")
    return 0
