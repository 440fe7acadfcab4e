"""Play one match described by a JSON spec and write its record: the referee as its own process.

    python -m referee.serve SPEC.json --out RECORD.json --workdir DIR

The league's workers start this and wait for it, so that gRPC lives only here, never in a
forked worker. The spec (written by the scheduler) holds the match id, variant, options, the
deal list, time control and fault policy, and the four bots' manifests, seat by seat. The record
is written whole (to a temporary name, then renamed) or not at all; the exit status is 0 when a
record was written, whatever the bots did.

The bots run in their seats' sandboxes under the spec's limits; with ``ARENA_UNSANDBOXED=1`` in
the environment (what ``--unsandboxed`` sets for a season's workers) they run unsandboxed. A
machine where bwrap cannot run refuses the match otherwise (exit status 3).

The referee's own memory is bounded (``ARENA_REFEREE_MEMORY_MB``, by default
``REFEREE_MEMORY_MB``): past it, the process ends at once with status 4 and writes no record. That
is the infrastructure's failure, charged to no seat: the worker plays the match again.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

from house import settings
from referee.match.local import play_match
from referee.match.runner import Startup
from referee.match.spec import MatchSpec
from referee.seats.sandbox import UNSANDBOXED_ENV, SandboxUnavailable


REFEREE_MEMORY_MB: int = settings.REFEREE_MEMORY_MB.default
MEMORY_ENV = settings.REFEREE_MEMORY_MB.name
OUT_OF_MEMORY = 4
"""The exit status of a referee past its memory bound (no record written)."""


def _resident_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def guard_memory(limit_mb: int, every_s: float = 0.05) -> threading.Thread:
    """Watch this process's resident memory from a thread of its own (it runs while the event
    loop is stalled); past ``limit_mb`` MiB, end the process with ``OUT_OF_MEMORY``."""
    def watch() -> None:
        while True:
            used = _resident_kib()
            if used > limit_mb * 1024:
                os.write(2, (f"referee: {used // 1024} MiB resident, past its bound of "
                             f"{limit_mb} MiB ({MEMORY_ENV}): the match is given back\n"
                             ).encode())
                os._exit(OUT_OF_MEMORY)
            time.sleep(every_s)
    thread = threading.Thread(target=watch, name="memory-guard", daemon=True)
    thread.start()
    return thread


def _memory_limit_mb() -> int:
    text = settings.REFEREE_MEMORY_MB.text() or ""
    if not text:
        return REFEREE_MEMORY_MB
    if not text.isdigit() or int(text) < 64:
        raise ValueError(f"{MEMORY_ENV}={text[:40]!r}: expected a whole number of MiB, at "
                         "least 64")
    return int(text)


def process_started() -> float | None:
    """When this process started (exec), on the monotonic clock, to the kernel's clock tick
    (``/proc/self/stat``); None where that cannot be read."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
    return time.monotonic() - age


def main(argv: list[str] | None = None) -> int:
    startup = Startup(main=time.monotonic())  # the interpreter and the imports are behind it
    startup.process = process_started()
    p = argparse.ArgumentParser(prog="python -m referee.serve")
    p.add_argument("spec", help="the match spec (JSON)")
    p.add_argument("--out", required=True, help="where to write the match record")
    p.add_argument("--workdir", required=True, help="for the bots' logs")
    args = p.parse_args(argv)
    try:
        spec = MatchSpec.from_dict(json.loads(Path(args.spec).read_text(encoding="utf-8")),
                                   args.spec)
    except (OSError, ValueError) as e:
        print(f"referee: {e}", file=sys.stderr)
        return 2
    if spec.bots is None:
        print(f"referee: {args.spec}: field 'bots': expected four bots, seats 0-3",
              file=sys.stderr)
        return 2
    try:
        guard_memory(_memory_limit_mb())
    except ValueError as e:
        print(f"referee: {e}", file=sys.stderr)
        return 2
    bots = [b.manifest for b in spec.bots]
    unsandboxed = settings.UNSANDBOXED.text() == "1"
    try:
        _, match, runner = play_match(spec, bots, Path(args.workdir),
                                      sandbox="none" if unsandboxed else None, startup=startup)
    except SandboxUnavailable as e:
        print(f"referee: {e}", file=sys.stderr)
        return 3
    match.elapsed_s = round(runner.elapsed_s, 3)
    match.play_s = round(runner.play_s, 3)
    out = Path(args.out)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(match.to_dict(), ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
