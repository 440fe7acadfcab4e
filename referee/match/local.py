"""Run one match on this machine: four bot processes and a referee that talks to each over its
protocol: gRPC bots on a Unix socket per seat, stdio bots over their pipes."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

from referee.match.matchfile import MatchFile
from referee.match.results import MatchResult
from referee.match.runner import MatchRunner, Startup
from referee.match.socket_folders import SOCKETS_PREFIX, SOCKETS_ROOT, sweep_socket_folders
from referee.match.spec import MatchSpec
from referee.seats.botzone_seat import (BotzoneSeat, memory_limit_of, time_limit_of,
                                        time_limit_text)
from referee.seats.grpc_seat import SeatHub
from referee.seats.launch import check_startable, gate_listener, launch
from referee.seats.manifest import Manifest, ManifestError
from referee.seats.sandbox import policy_of, require_sandbox
from referee.seats.seat import Seat, Unstarted
from referee.seats.stdio_seat import StdioSeat
from referee.server.servicer import create_server, mark_serving


async def play_match_async(spec: MatchSpec, bots: Sequence[Manifest | None], workdir: Path,
                           tcp_port: int | None = None, keep_sent: bool = False,
                           tokens: list[str] | None = None, sandbox=None,
                           listening: Callable[[str], None] | None = None,
                           startup: Startup | None = None, piped: dict | None = None
                           ) -> tuple[MatchResult, MatchFile, MatchRunner]:
    """Play ``spec`` between ``bots`` (seat order; None for a seat played from elsewhere over
    TCP, which needs ``tcp_port``: 0 for a free one, or over the pipes ``piped`` gives it:
    seat -> (its input to write to, its output to read from), a stdio seat like a program's
    whose other ends the caller holds); returns (result, match file, runner).
    ``listening`` is told the TCP address ("127.0.0.1:PORT") once the referee listens there,
    before any bot is started.

    Each launched bot runs in its seat's sandbox (``referee.seats.sandbox``) under ``sandbox``:
    a ``SandboxPolicy`` (or its dict), "none" to run the bots unsandboxed, or None for the
    spec's setting (``spec.sandbox``, by default the default policy). A sandbox that cannot be
    made here raises ``SandboxUnavailable`` before anything starts. Each launched gRPC seat
    has its own socket and server, which takes that seat's token only; the TCP port takes any
    seat's. ``startup``, if given, gets the start-up's stamps (``runner.startup`` is it)."""
    startup = Startup() if startup is None else startup
    startup.begin = time.monotonic()
    policy = policy_of(spec.sandbox if sandbox is None else sandbox)
    launched = [b for b in bots if b is not None]
    if policy is not None and launched:
        require_sandbox()
    workdir.mkdir(parents=True, exist_ok=True)
    sweep_socket_folders()
    sock_dir = Path(tempfile.mkdtemp(prefix=f"{SOCKETS_PREFIX}{os.getpid()}-", dir=SOCKETS_ROOT))
    hub = SeatHub(tokens)
    seats: list[Seat] = list(hub)
    servers = []
    sockets: dict[int, Path] = {}
    listeners: dict[int, socket.socket] = {}
    inner = sock_dir / "inner"  # the seats' servers: their gates reach them, no bot does
    inner.mkdir(mode=0o700)
    for i, bot in enumerate(bots):
        if bot is not None and bot.protocol == "grpc":
            (sock_dir / f"seat{i}").mkdir(mode=0o700)
            sockets[i] = sock_dir / f"seat{i}"
            servers.append(create_server(hub, [f"unix:{inner}/seat{i}.sock"], seat=i))
            listeners[i] = gate_listener(sockets[i] / "seat.sock")
    if tcp_port is not None:
        tcp = create_server(hub, [])
        tcp_port = tcp.add_insecure_port(f"127.0.0.1:{tcp_port}")
        servers.append(tcp)
    procs = []
    by_seat: list = [None] * 4
    # The seats are launched from these threads, side by side. A sandbox dies with the thread
    # that forked it (bwrap's --die-with-parent follows the forking thread, not the process):
    # the threads live until every bot process of the match is stopped.
    launcher = ThreadPoolExecutor(max_workers=4, thread_name_prefix="seat-launch")
    try:
        for server in servers:
            await server.start()
            await mark_serving(server)
        if listening is not None and tcp_port is not None:
            listening(f"127.0.0.1:{tcp_port}")
        for folder in sockets.values():  # a seat's own uid reaches its socket, and no other
            os.chmod(folder, 0o711)
            os.chmod(folder / "seat.sock", 0o666)
        startup.sockets = time.monotonic()
        def start(seat: int, bot: Manifest):
            """Launch ``seat``'s bot process (in a thread: the seats start side by side)."""
            log_path = workdir / f"seat{seat}.log"
            if bot.protocol == "stdio":
                return launch(bot, seat=seat, match_id=spec.match_id, log_path=log_path,
                              sandbox=policy)
            startup.launching[seat] = time.monotonic()
            proc = launch(bot, seat=seat, match_id=spec.match_id, log_path=log_path,
                          address=f"unix://{sockets[seat]}/seat.sock",
                          token=hub.links[seat].token, sandbox=policy, socket_dir=sockets[seat],
                          gate=(listeners[seat], inner / f"seat{seat}.sock"))
            startup.launched[seat] = time.monotonic()
            return proc

        starting: dict[int, Manifest] = {}
        for seat, (into, out) in (piped or {}).items():
            if bots[seat] is not None:
                raise ValueError(f"seat {seat} is played over pipes and by a bot")
            seats[seat] = await StdioSeat.open(into, out)
        for seat, bot in enumerate(bots):
            if bot is None:
                continue
            if bot.protocol == "botzone":  # started by its seat, each turn or once
                try:
                    check_startable(bot, sandboxed=policy is not None)
                except ManifestError as e:  # the bot's own doing: its seat never connects
                    seats[seat] = Unstarted(str(e))
                    continue
                seats[seat] = BotzoneSeat(seat, partial(
                    _start_botzone, bot, seat, spec.match_id, policy),
                    workdir / f"seat{seat}.log", time_limit_of(bot), time_limit_text(bot))
            else:
                starting[seat] = bot
        # each launch is mostly waiting on the kernel (a fork, an exec, a first cgroup entry):
        # side by side, the last seat's bot starts tens of ms sooner than in turn
        loop = asyncio.get_running_loop()
        launched = await asyncio.gather(*(loop.run_in_executor(launcher, start, seat, bot)
                                          for seat, bot in starting.items()),
                                        return_exceptions=True)
        failed = None
        for (seat, bot), proc in zip(starting.items(), launched):
            if isinstance(proc, ManifestError):  # the bot's own doing: its seat never connects
                seats[seat] = Unstarted(str(proc))
            elif isinstance(proc, BaseException):
                failed = failed or proc
            else:
                procs.append(proc)
                by_seat[seat] = proc
                if bot.protocol == "stdio":
                    seats[seat] = await StdioSeat.open(proc.popen.stdin, proc.popen.stdout)
        if failed is not None:
            raise failed
        runner = MatchRunner(spec, seats, by_seat)
        runner.keep_sent = keep_sent
        runner.startup = startup
        try:
            result = await runner.run()
        except Exception as e:
            if runner.handling is not None:  # a crash names the seat whose answer it was judging
                seat, request_id = runner.handling
                e.add_note(f"the referee failed while judging seat {seat}'s answer to request "
                           f"{request_id}")
            raise
        result = dataclasses.replace(result, sandbox="none" if policy is None else "bubblewrap")
        match = runner.record(result, hub.refused, hub.refused_more)
        startup.opened = [link.opened_at for link in hub.links]
        startup.hellos = [link.hello_at for link in hub.links]
        match.bots = tuple(None if b is None else b.label for b in bots)
        match.sandbox = result.sandbox
        if policy is not None:
            match.sandbox_limits = policy.to_dict()
        await asyncio.sleep(0.05)
    finally:
        await asyncio.gather(*(asyncio.wait_for(server.stop(grace=0.5), 10)
                               for server in servers))
        for each in seats:
            each.close()  # (done already when the match was played)
        await asyncio.gather(*(s.wait_closed() for s in seats if isinstance(s, BotzoneSeat)))
        # the loop runs on meanwhile: a stdio bot's input is closed, so it can end by itself
        await asyncio.gather(*(asyncio.to_thread(p.stop) for p in procs))
        launcher.shutdown()  # (its threads end only now: see above)
        for listener in listeners.values():
            listener.close()  # (a seat whose bot never started)
        shutil.rmtree(sock_dir, ignore_errors=True)
    runner.bot_processes = procs  # stopped: for the tests, their seats' uids and pids
    return result, match, runner


async def run_match_async(spec: MatchSpec, bots: Sequence[Manifest | None], workdir: Path, **kw
                          ) -> tuple[dict, dict, MatchRunner]:
    """``play_match_async`` with the result and the record as plain data: the result as the
    record holds it, the record as the referee writes it (``MatchFile.to_dict``)."""
    result, match, runner = await play_match_async(spec, bots, workdir, **kw)
    return result.to_dict(), match.to_dict(), runner


def _start_botzone(bot: Manifest, seat: int, match_id: str, policy, log_path: Path):
    """A Botzone bot's program for one turn (or kept running), in its sandbox with the memory
    limit of Botzone's (``memory_limit_of``) when it is below the season's."""
    if policy is not None:
        policy = dataclasses.replace(policy, memory_mb=min(policy.memory_mb,
                                                           memory_limit_of(bot)))
    return launch(bot, seat=seat, match_id=match_id, log_path=log_path, sandbox=policy)


def play_match(spec: MatchSpec, bots: Sequence[Manifest | None], workdir: Path, **kw
               ) -> tuple[MatchResult, MatchFile, MatchRunner]:
    return asyncio.run(play_match_async(spec, bots, workdir, **kw))


def run_match(spec: MatchSpec, bots: list[Manifest | None], workdir: Path, **kw
              ) -> tuple[dict, dict, MatchRunner]:
    return asyncio.run(run_match_async(spec, bots, workdir, **kw))


def new_match_id() -> str:
    return uuid.uuid4().hex[:12]
