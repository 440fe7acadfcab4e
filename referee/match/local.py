"""Run one match on this machine: a referee server on per-seat Unix sockets, four bot processes."""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile
import uuid
from pathlib import Path

from referee.seats.bots import Manifest, launch
from referee.match.runner import MatchRunner, MatchSpec
from referee.server.hub import SeatHub, create_server, mark_serving


async def run_match_async(spec: MatchSpec, bots: list[Manifest], workdir: Path,
                          tcp_port: int | None = None, keep_sent: bool = False,
                          tokens: list[str] | None = None):
    """Play ``spec`` between ``bots`` (seat order); returns (result, record, runner)."""
    workdir.mkdir(parents=True, exist_ok=True)
    sock_dir = Path(tempfile.mkdtemp(prefix="arena-", dir="/tmp"))
    hub = SeatHub(tokens)
    addresses = [f"unix:{sock_dir}/seat{i}.sock" for i in range(4)]
    listen = list(addresses)
    if tcp_port is not None:
        listen.append(f"127.0.0.1:{tcp_port}")
    server = create_server(hub, listen)
    await server.start()
    await mark_serving(server)
    runner = MatchRunner(spec, hub)
    runner.keep_sent = keep_sent
    procs = []
    try:
        for seat, bot in enumerate(bots):
            if bot is None:  # a seat played from elsewhere (over TCP)
                procs.append(None)
                continue
            procs.append(launch(bot, address=f"unix://{sock_dir}/seat{seat}.sock", seat=seat,
                                token=hub.links[seat].token, match_id=spec.match_id,
                                log_path=workdir / f"seat{seat}.log"))
        result = await runner.run()
        record = runner.record(result)
        record["bots"] = [None if b is None else b.label for b in bots]
        await asyncio.sleep(0.05)
    finally:
        await asyncio.wait_for(server.stop(grace=0.5), 10)
        for p in procs:
            if p is None:
                continue
            try:
                p.wait(timeout=3)
            except Exception:
                try:  # the bot's whole process group: what it started goes too
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
            p.log_pump.join(timeout=2)  # its log is complete once the pipe closes
        for f in sock_dir.glob("*"):
            f.unlink(missing_ok=True)
        sock_dir.rmdir()
    return result, record, runner


def run_match(spec: MatchSpec, bots: list[Manifest], workdir: Path, **kw):
    return asyncio.run(run_match_async(spec, bots, workdir, **kw))


def new_match_id() -> str:
    return uuid.uuid4().hex[:12]
