"""Run one match on this machine: four bot processes and a referee that talks to each over its
protocol: gRPC bots on a Unix socket per seat, stdio bots over their pipes."""

from __future__ import annotations

import asyncio
import tempfile
import uuid
from pathlib import Path

from referee.match.runner import MatchRunner
from referee.match.spec import MatchSpec
from referee.seats.grpc_seat import SeatHub
from referee.seats.launch import launch
from referee.seats.manifest import Manifest
from referee.seats.seat import Seat
from referee.seats.stdio_seat import StdioSeat
from referee.server.servicer import create_server, mark_serving


async def run_match_async(spec: MatchSpec, bots: list[Manifest | None], workdir: Path,
                          tcp_port: int | None = None, keep_sent: bool = False,
                          tokens: list[str] | None = None):
    """Play ``spec`` between ``bots`` (seat order; None for a seat played from elsewhere over
    TCP, which needs ``tcp_port``); returns (result, record, runner)."""
    workdir.mkdir(parents=True, exist_ok=True)
    sock_dir = Path(tempfile.mkdtemp(prefix="arena-", dir="/tmp"))
    hub = SeatHub(tokens)
    seats: list[Seat] = list(hub)
    listen = [f"unix:{sock_dir}/seat{i}.sock" for i, bot in enumerate(bots)
              if bot is not None and bot.protocol == "grpc"]
    if tcp_port is not None:
        listen.append(f"127.0.0.1:{tcp_port}")
    server = None
    if listen:
        server = create_server(hub, listen)
        await server.start()
        await mark_serving(server)
    procs = []
    try:
        for seat, bot in enumerate(bots):
            if bot is None:
                continue
            log_path = workdir / f"seat{seat}.log"
            if bot.protocol == "stdio":
                proc = launch(bot, seat=seat, match_id=spec.match_id, log_path=log_path)
                procs.append(proc)
                seats[seat] = await StdioSeat.open(proc.popen.stdin, proc.popen.stdout)
            else:
                procs.append(launch(bot, seat=seat, match_id=spec.match_id, log_path=log_path,
                                    address=f"unix://{sock_dir}/seat{seat}.sock",
                                    token=hub.links[seat].token))
        runner = MatchRunner(spec, seats)
        runner.keep_sent = keep_sent
        result = await runner.run()
        record = runner.record(result, hub.refused, hub.refused_more)
        record["bots"] = [None if b is None else b.label for b in bots]
        await asyncio.sleep(0.05)
    finally:
        if server is not None:
            await asyncio.wait_for(server.stop(grace=0.5), 10)
        for seat in seats:
            seat.close()  # (done already when the match was played)
        # the loop runs on meanwhile: a stdio bot's input is closed, so it can end by itself
        await asyncio.gather(*(asyncio.to_thread(p.stop) for p in procs))
        for f in sock_dir.glob("*"):
            f.unlink(missing_ok=True)
        sock_dir.rmdir()
    return result, record, runner


def run_match(spec: MatchSpec, bots: list[Manifest | None], workdir: Path, **kw):
    return asyncio.run(run_match_async(spec, bots, workdir, **kw))


def new_match_id() -> str:
    return uuid.uuid4().hex[:12]
