"""Busy processes beside the test suite (``make test-loaded``): ``python -m tools.busy N``
spins N processes at full CPU until it is stopped or the process that started it is gone.

It is how a timing-sensitive test is checked before it is called fixed: the suite must pass with
both of this machine's cores taken by something else too."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time


def _spin(parent: int) -> None:
    """Burn CPU until ``parent`` is gone (looked at every few million steps)."""
    while True:
        for _ in range(2_000_000):
            pass
        if os.getppid() != parent:
            return


def main(argv: list[str]) -> int:
    count = int(argv[0]) if argv else 2
    if count < 1:
        print("tools.busy: N must be at least 1", file=sys.stderr)
        return 2
    starter = os.getppid()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    procs = [multiprocessing.Process(target=_spin, args=(os.getpid(),), daemon=True)
             for _ in range(count)]
    for p in procs:
        p.start()
    print(f"tools.busy: {count} busy processes ({', '.join(str(p.pid) for p in procs)})",
          file=sys.stderr, flush=True)
    try:
        while os.getppid() == starter and all(p.is_alive() for p in procs):
            time.sleep(1)  # (a watch on the starter, which signals nothing when it ends)
    finally:
        for p in procs:
            p.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
