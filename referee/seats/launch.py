"""Bot processes: the one place a bot is started, its environment built, and its output kept.

A bot process learns where and who it is from its environment: ``ARENA_SEAT`` and
``ARENA_MATCH_ID``, and for a gRPC bot ``ARENA_REFEREE`` (the address, ``unix:///path/seatN.sock``
or ``host:port``) and ``ARENA_TOKEN``. A stdio bot talks to the referee over its own standard
input and output instead. Its ``PYTHONPATH`` holds what its manifest's ``pythonpath`` asks for
and, for a gRPC bot, the generated protocol package; nothing else of the arena. Every seat is its
own process (and process group): partners never share one, and a bot's whole tree ends with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import shengji_arena

from referee.seats.manifest import Manifest, ManifestError

LOG_LIMIT = 8 * 1024 * 1024
"""Bytes of a bot's output (stdout and stderr; stderr only for a stdio bot, whose stdout is the
protocol) kept in its seat's log for one match."""
PROTOS = Path(shengji_arena.__file__).resolve().parent.parent
"""The folder holding the generated protocol package ``shengji_arena``: what every Python gRPC
bot imports from the arena."""


def bot_environment(manifest: Manifest, *, seat: int, match_id: str, address: str | None = None,
                    token: str | None = None, base: dict[str, str] | None = None
                    ) -> dict[str, str]:
    """The environment of ``manifest``'s process for ``seat``: ``base`` (the referee's own by
    default) with the ARENA_* variables set and ``PYTHONPATH`` built from the manifest alone."""
    env = dict(os.environ if base is None else base)
    for name in ("PYTHONPATH", "ARENA_REFEREE", "ARENA_TOKEN"):
        env.pop(name, None)
    env["ARENA_SEAT"] = str(seat)
    env["ARENA_MATCH_ID"] = match_id
    paths = [str(p) for p in manifest.pythonpath]
    if manifest.protocol == "grpc":
        if address is None or token is None:
            raise ValueError(f"{manifest.label}: a gRPC bot needs the referee's address and "
                             "its seat's token")
        env["ARENA_REFEREE"] = address
        env["ARENA_TOKEN"] = token
        paths.append(str(PROTOS))
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


class BotProcess:
    """A started bot: its process, and the thread that copies its output into its seat's log."""

    def __init__(self, popen: subprocess.Popen, log_pump: threading.Thread) -> None:
        self.popen = popen
        self.log_pump = log_pump

    @property
    def pid(self) -> int:
        return self.popen.pid

    def stop(self, grace: float = 3.0) -> None:
        """Give the bot ``grace`` seconds to exit, then kill its whole process group; returns once
        its log is complete."""
        try:
            self.popen.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            try:  # what it started goes too
                os.killpg(self.popen.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.popen.wait()
        self.log_pump.join(timeout=2)  # the log is complete once the pipe closes


def launch(manifest: Manifest, *, seat: int, match_id: str, log_path: Path,
           address: str | None = None, token: str | None = None) -> BotProcess:
    """Start one bot process for one seat, its output into ``log_path``. A gRPC bot connects to
    ``address`` with ``token``; a stdio bot's standard input and output are left open as pipes
    (``popen.stdin``, ``popen.stdout``) for its ``StdioSeat``."""
    env = bot_environment(manifest, seat=seat, match_id=match_id, address=address, token=token)
    command = list(manifest.command)
    if command[0] in ("python", "python3"):
        command[0] = sys.executable  # the project's interpreter, with its packages
    stdio = manifest.protocol == "stdio"
    try:
        proc = subprocess.Popen(command, cwd=manifest.folder, env=env,
                                stdin=subprocess.PIPE if stdio else subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE if stdio else subprocess.STDOUT,
                                start_new_session=True)
    except OSError as e:
        Path(log_path).write_bytes(b"")
        raise ManifestError(f"{manifest.path or manifest.command[0]}: field 'command': cannot "
                            f"start {command[0]!r}: {e.strerror}") from None
    output = proc.stderr if stdio else proc.stdout
    pump = threading.Thread(target=_keep_log, args=(output, Path(log_path), LOG_LIMIT),
                            name=f"seat{seat}-log", daemon=True)
    pump.start()
    return BotProcess(proc, pump)


def _keep_log(pipe, path: Path, limit: int) -> None:
    """Copy a bot's output into ``path`` up to ``limit`` bytes; count the rest and say so at
    the end, so that no bot can fill the disk with its prints."""
    dropped = 0
    with pipe, open(path, "wb", buffering=0) as log:
        kept = 0
        while chunk := pipe.read1(65536):
            room = limit - kept
            if room > 0:
                log.write(chunk[:room])
                kept += min(room, len(chunk))
            dropped += max(0, len(chunk) - max(room, 0))
        if dropped:
            log.write(f"\n[arena: {dropped} more bytes of this bot's output were dropped; a "
                      f"seat's log keeps {limit} bytes a match]\n".encode())
