"""What killed workers and referees leave on a machine, removed: ``sweep()``.

A worker or referee process killed outright (SIGKILL, the OOM killer, a machine's watchdog)
cleans nothing up. What it leaves, and how each leftover is told from a live process's own
(always by something the kernel keeps honest, never by a name's or a file's age):

- seat cgroups and seat-uid processes (``referee.seats.sandbox.sweep_seats``): a seat uid
  whose lock file nobody holds;
- a match's working folder, ``/tmp/arena-MATCHID-*`` (``scheduler.execute``), and the metrics
  folder of ``arena worker --metrics-port``, ``/tmp/arena-metrics-*``: a folder whose lock
  file nobody holds;
- a referee's seat socket folders, ``/tmp/arena-sockets-PID-*``
  (``referee.match.socket_folders``), and a worker's stop file, ``/tmp/arena-worker-PID.stop``
  (``scheduler.execute``): a pid that is gone.

A live process's things are never touched; a reused pid may keep a leftover until it ends.
``arena worker`` sweeps when it starts, ``arena sweep`` on an operator's demand. Neither
imports gRPC (a worker's main process must not).
"""

from __future__ import annotations

import os
from pathlib import Path

from referee.match.socket_folders import sweep_socket_folders
from referee.seats.sandbox import sweep_seats

from scheduler.execute import (hold_folder, sweep_held_folders, sweep_stop_files,
                               sweep_working_folders)

METRICS_LOCK = ".arena-metrics.lock"
"""The lock file of a metrics folder made by ``arena worker`` or ``season run``."""
KINDS = {  # key: (one, more)
    "seat_processes": ("seat process", "seat processes"),
    "seat_cgroups": ("seat cgroup", "seat cgroups"),
    "working_folders": ("working folder", "working folders"),
    "socket_folders": ("socket folder", "socket folders"),
    "stop_files": ("stop file", "stop files"),
    "metrics_folders": ("metrics folder", "metrics folders"),
}


def hold_metrics_folder(folder: Path) -> int:
    """Hold the metrics folder this process made (``scheduler.metrics.prepare``) for as long
    as the returned descriptor is open, in this process or those it execs (it is inheritable)
    or forks."""
    fd = hold_folder(folder, METRICS_LOCK)
    os.set_inheritable(fd, True)
    return fd


def sweep(seat_wait_s: float = 5.0) -> dict[str, int]:
    """Remove every leftover of dead workers and referees on this machine (this user's; seat
    cgroups and processes need root); how many of each kind (``KINDS``). The seats' processes
    go first (they may hold what the rest is)."""
    seats = sweep_seats(seat_wait_s)
    return {
        "seat_processes": seats["processes"],
        "seat_cgroups": seats["cgroups"],
        "working_folders": sweep_working_folders(),
        "socket_folders": sweep_socket_folders(),
        "stop_files": sweep_stop_files(),
        "metrics_folders": sweep_held_folders(METRICS_LOCK),
    }


def summary(counts: dict[str, int]) -> str:
    """``counts`` in words, the kinds with none left out: "2 seat cgroups, 1 stop file"
    ("nothing" when there are none)."""
    said = [f"{n} {KINDS[k][n != 1]}" for k, n in counts.items() if n]
    return ", ".join(said) or "nothing"
