"""A seat's CPU is shared by seat, not by session: a bot whose children each start a session of
their own and spin (threads too) takes no more than its seat's share when the other seats think.

Real matches, real sandbox, real bots: seats 1-3 are the search sample, which thinks a part of
each decision's allowance; seat 0 is the random sample in a control match, then a spinner on the
same deal (one two-deck deal: in a single-deck one the search's rollouts are too cheap for a
starved seat to show it in its decision times). The innocent seats' decision times (the
record's ``timings``) in the spinner's match must stay near the control's, with no timeout and
no strike. The spinner's seat's CPU use is read from its cgroup, and printed."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT

from referee.match.local import run_match
from referee.match.spec import MatchSpec, TimeControl
from referee.seats.manifest import Manifest, load_manifest
from referee.seats.sandbox import SandboxPolicy, SeatCgroup, sandbox_problem, seat_cgroups

PY = ROOT / "sample_bots" / "python"
RANDOM = load_manifest(PY / "random")
SEARCH = load_manifest(PY / "search")
CLOCK = TimeControl(per_decision_ms=250, bank_ms=250, max_strikes=10_000,
                    reconnect_window_ms=1000, connect_timeout_ms=30_000)
"""The audit's clock; the spinner's own timeouts strike only it, and never forfeit the deal."""
VARIANT = "two-deck-80"
SLOWER = 1.5
"""How much slower the innocent seats' p95 decision time may be beside the spinner."""

SPINNER = r'''"""spinner: answers every request with the hint's first action and, from its
start, keeps children spinning, each in a session of its own, each with threads."""
import hashlib
import os
import sys
import threading

from arena_bot import Bot, run

CHILDREN, THREADS = 8, 4


def spin():
    block = bytes(1 << 16)
    while True:
        hashlib.sha256(block).digest()  # (without the GIL: the threads spin side by side)


for _ in range(CHILDREN):
    if os.fork() == 0:
        os.setsid()
        for _ in range(THREADS - 1):
            threading.Thread(target=spin, daemon=True).start()
        spin()
print(f"spinner: {CHILDREN} children in sessions of their own, {THREADS} threads each",
      flush=True)


class Spinner(Bot):
    name = "spinner"

    def choose(self, request):
        return request.hint.actions[0]


sys.exit(run(Spinner()))
'''


def _seats_have_the_cpu_controller() -> bool:
    """Whether a seat's cgroup here has the CPU controller (a root launcher, and the kernel's)."""
    probe = SeatCgroup.make(f"arena-seat-probe-cpu-{os.getpid()}", SandboxPolicy())
    if probe is None:
        return False
    found = any((d / f).exists() for d in probe.dirs for f in ("cpu.shares", "cpu.weight"))
    probe.remove()
    return found


NO_SANDBOX = sandbox_problem()
needs_cpu = pytest.mark.skipif(NO_SANDBOX is not None or not _seats_have_the_cpu_controller(),
                               reason=f"no sandbox ({NO_SANDBOX})" if NO_SANDBOX else
                               "no CPU controller in the seats' cgroups (a root launcher, and "
                               "the kernel's cpu controller)")


def _spinner(tmp_path: Path) -> Manifest:
    folder = tmp_path / "spinner"
    folder.mkdir()
    (folder / "bot.py").write_text(SPINNER)
    return Manifest("spinner", "0", ("python3", "bot.py"), "grpc", folder.resolve(),
                    pythonpath=(PY,))


def _cpu_used(dirs: list[Path]) -> int | None:
    """CPU time used by a cgroup, in ns: v1 ``cpuacct.usage``, v2 ``cpu.stat``'s
    ``usage_usec`` (None: neither is there)."""
    for d in dirs:
        try:
            return int((d / "cpuacct.usage").read_text())
        except (OSError, ValueError):
            pass
        try:
            stat = dict(line.split() for line in (d / "cpu.stat").read_text().splitlines())
            return int(stat["usage_usec"]) * 1000
        except (OSError, ValueError, KeyError):
            pass
    return None


class _CpuSampler(threading.Thread):
    """Every seat cgroup's CPU time while a match plays, sampled: by name, the first and the
    last (monotonic time, ns used)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.seen: dict[str, tuple[tuple[float, int], tuple[float, int]]] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            for name, dirs in seat_cgroups().items():
                used = _cpu_used(dirs)
                if used is not None:
                    now = (time.monotonic(), used)
                    self.seen[name] = (self.seen.get(name, (now, now))[0], now)
            self.done.wait(0.05)  # (a sampling interval: nothing to wait for)

    def share(self, uid: int | None) -> float | None:
        """The cores seat uid ``uid``'s cgroup used on average while it was seen."""
        (t0, u0), (t1, u1) = self.seen.get(f"arena-seat-{uid}", ((0, 0), (0, 0)))
        return (u1 - u0) / 1e9 / (t1 - t0) if t1 > t0 else None


def _match(tmp_path: Path, name: str, seat0: Manifest):
    """One single-deck deal, seat 0 ``seat0`` and the search sample on seats 1-3: the record,
    the innocent seats' p95 decision time (ms) and the cores seat 0's cgroup used."""
    spec = MatchSpec(match_id=f"cpu-{name}", variant=VARIANT, seed="cpu-share",
                     max_deals=1, time_control=CLOCK)
    sampler = _CpuSampler()
    sampler.start()
    try:
        _, record, runner = run_match(spec, [seat0, SEARCH, SEARCH, SEARCH], tmp_path / name)
    finally:
        sampler.done.set()
        sampler.join()
    innocent = sorted(ms for seat, ms in record["timings"] if seat != 0)
    assert len(innocent) >= 20, record["timings"]
    p95 = innocent[min(len(innocent) - 1, int(0.95 * len(innocent)))]
    return record, p95, sampler.share(runner.bot_processes[0].seat_uid)


@needs_cpu
@pytest.mark.timing
def test_a_seat_spinning_in_new_sessions_leaves_the_other_seats_their_share(tmp_path):
    _, control, _ = _match(tmp_path, "control", RANDOM)
    record, spun, share = _match(tmp_path, "spinner", _spinner(tmp_path))
    log = (tmp_path / "spinner" / "seat0.log").read_text()
    print(f"innocent p95: control {control:.0f} ms, beside the spinner {spun:.0f} ms; the "
          f"spinner's seat used {'?' if share is None else f'{share:.2f}'} cores")
    assert "spinner: 8 children" in log, log[-2000:]  # (it did spin)
    assert [f for f in record["faults"] if f["seat"] != 0] == [], record["faults"][:8]
    assert record["result"]["forfeit"] is None, record["result"]
    assert spun <= SLOWER * control, (spun, control)


SPIN_TREE = """import os
for _ in range(2):
    os.fork()  # (four processes in all)
while True:
    pass
"""


CAP = 0.05


@needs_cpu
def test_a_seats_cpu_cap_holds_its_whole_tree():
    """``cpu_cores = 0.05``: four spinning processes in the seat's cgroup use a twentieth of a
    core together, not the machine's idle cores nor their share of a busy machine's (well
    above that with two cores)."""
    cgroup = SeatCgroup.make(f"arena-seat-test-cpu-{os.getpid()}", SandboxPolicy(cpu_cores=CAP))
    tree = subprocess.Popen(cgroup.enter() + [sys.executable, "-c", SPIN_TREE],
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while len((cgroup.dirs[0] / "cgroup.procs").read_text().split()) < 4:
            assert time.monotonic() < deadline, "the four spinners never started"
            time.sleep(0.01)  # (the poll of a wait on cgroup.procs)
        t0, u0 = time.monotonic(), _cpu_used(cgroup.dirs)
        time.sleep(1.0)  # (the span measured)
        t1, u1 = time.monotonic(), _cpu_used(cgroup.dirs)
        cores = (u1 - u0) / 1e9 / (t1 - t0)
        print(f"four spinners capped at {CAP} cores used {cores:.3f}")
        assert cores <= CAP * 1.5, cores  # (one period's worth of slack: 100 ms in a second)
    finally:
        os.killpg(tree.pid, 9)
        tree.wait()
        deadline = time.monotonic() + 10
        while (cgroup.dirs[0] / "cgroup.procs").read_text().split() and \
                time.monotonic() < deadline:
            time.sleep(0.01)  # (until the killed have left the cgroup)
        cgroup.remove()


def test_cpu_cores_is_a_number_of_cores_and_a_bad_one_is_named():
    """The one limit that may be a fraction; 0 (or absent) is no cap, and leaves the policy's
    plain form as it was without the field."""
    assert SandboxPolicy().cpu_cores == 0 and "cpu_cores" not in SandboxPolicy().to_dict()
    capped = SandboxPolicy.from_dict({"cpu_cores": 1.5})
    assert capped.cpu_cores == 1.5 and SandboxPolicy.from_dict(capped.to_dict()) == capped
    assert SandboxPolicy(cpu_cores=2).to_dict()["cpu_cores"] == 2.0  # (a whole number too)
    for bad in (-1, 0.001, 5000, math.nan, math.inf, True, "1", None):
        with pytest.raises(ValueError, match=r"s.toml: field 'sandbox': field 'cpu_cores' = .*: "
                           r"expected a number of cores, a fraction allowed .*: 0 for no cap"):
            SandboxPolicy.from_dict({"cpu_cores": bad}, "s.toml: field 'sandbox'")
