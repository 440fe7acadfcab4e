"""``arena bench sandbox``: what a seat's sandbox costs, sandboxed against unsandboxed in the
same run.

- per seat start: a trivial bot (Python without site, no gRPC) started through the one
  launcher, connecting to its seat's Unix socket and exiting; timed from ``launch()`` to the
  connection accepted, and to ``stop()`` returned (its tree gone, a root launcher's seat uid
  checked free), alternating sandboxed and unsandboxed starts;
- per decision: short matches of four random Python bots, three each way, alternating; the
  referee's own round trip (request sent to answer received).
"""

from __future__ import annotations

import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROUNDS = 3
"""Matches played each way for the per-decision figure, alternating."""
_BOT = ("import os, socket; s = socket.socket(socket.AF_UNIX); "
        "s.connect(os.environ['ARENA_REFEREE'].removeprefix('unix://')); s.close()")


def _one_start(manifest, folder: Path, policy, n: int) -> tuple[float, float]:
    from referee.seats.launch import launch
    sock_dir = folder / f"s{n}"
    sock_dir.mkdir(mode=0o700)
    path = sock_dir / "seat.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    os.chmod(sock_dir, 0o711)
    os.chmod(path, 0o666)
    server.settimeout(30)
    t = time.perf_counter()
    proc = launch(manifest, seat=0, match_id="bench", log_path=folder / f"seat{n}.log",
                  address=f"unix://{path}", token="t", sandbox=policy, socket_dir=sock_dir)
    try:
        conn, _ = server.accept()
    except TimeoutError:
        raise SystemExit(f"the trivial bot did not connect: "
                         f"{(folder / f'seat{n}.log').read_text()[-500:]}") from None
    connected = time.perf_counter() - t
    conn.close()
    proc.stop(30)
    stopped = time.perf_counter() - t
    server.close()
    return connected, stopped


def bench_sandbox(starts: int, deals: int) -> int:
    from referee.match.local import run_match
    from referee.match.spec import MatchSpec
    from referee.seats.manifest import Manifest, load_manifest
    from referee.seats.sandbox import SandboxPolicy, require_sandbox
    require_sandbox()
    root = Path(__file__).resolve().parent.parent
    policy = SandboxPolicy()
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        folder = Path(tmp)
        bot_dir = folder / "bot"
        bot_dir.mkdir()
        os.chmod(folder, 0o755)
        bot = Manifest("trivial", "0", ("python3", "-S", "-c", _BOT), "grpc", bot_dir)
        times: dict[str, list[tuple[float, float]]] = {"bubblewrap": [], "none": []}
        for n in range(starts + 1):  # the first of each is a warm-up
            for kind in ("bubblewrap", "none"):
                got = _one_start(bot, folder, policy if kind == "bubblewrap" else None,
                                 2 * n + (kind == "none"))
                if n:
                    times[kind].append(got)
        random_bot = load_manifest(root / "sample_bots" / "python" / "random")
        rtts: dict[str, list[float]] = {"bubblewrap": [], "none": []}
        for r in range(ROUNDS):  # alternating, so that the machine's other load hits both
            for kind in ("bubblewrap", "none"):
                spec = MatchSpec(match_id=f"bench-{kind}-{r}", variant="two-deck-fry",
                                 seed=f"bench{r}", max_deals=deals)
                _, _, runner = run_match(spec, [random_bot] * 4, folder / f"{kind}{r}",
                                         sandbox=None if kind == "bubblewrap" else "none")
                rtts[kind] += [t for _, t in runner.timings]
    med = {k: (statistics.median(c for c, _ in v) * 1000, statistics.median(s for _, s in v)
               * 1000) for k, v in times.items()}
    print(f"command      arena bench sandbox --starts {starts} --deals {deals}")
    model = next((line.split(":", 1)[1].strip() for line in
                  Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), "")
    print(f"machine      {os.uname().machine} {model}, {os.cpu_count()} cpus, {os.uname().sysname} "
          f"{os.uname().release}, python {sys.version.split()[0]}, launcher uid "
          f"{os.geteuid()}{' (a uid per seat)' if os.geteuid() == 0 else ''}")
    for kind, label in (("bubblewrap", "sandboxed  "), ("none", "unsandboxed")):
        print(f"start {label} {starts} starts of a trivial bot (python -S, connects, exits): "
              f"median {med[kind][0]:.1f} ms to its connection, {med[kind][1]:.1f} ms to "
              f"stop() returned")
    extra = med["bubblewrap"][0] - med["none"][0]
    print(f"start cost   sandbox adds {extra:.1f} ms per seat start (goal < 50 ms), "
          f"{med['bubblewrap'][1] - med['none'][1]:.1f} ms to its end; ratio "
          f"{med['bubblewrap'][0] / med['none'][0]:.2f}")
    sb, no = statistics.median(rtts["bubblewrap"]), statistics.median(rtts["none"])
    print(f"decision     {ROUNDS} matches of {deals} deals each way; "
          f"{len(rtts['bubblewrap'])} decisions sandboxed: median round trip "
          f"{sb:.3f} ms, mean {statistics.mean(rtts['bubblewrap']):.3f} ms; "
          f"{len(rtts['none'])} unsandboxed: median {no:.3f} ms, mean "
          f"{statistics.mean(rtts['none']):.3f} ms; ratio {sb / no:.2f} (goal: no measurable "
          f"cost)")
    return 0
