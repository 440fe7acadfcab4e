"""``arena bench link --against OTHER``: this tree's referee link against another checkout's
(an older commit's), side by side in one run: rounds alternate between the two trees, each
round playing ``--matches`` matches of four sandboxed random Python bots in each tree, and the
relay (a bare grpcio server sending to four client processes in turn, ``benchlink``) once per
round, so that both trees meet the same machine at the same time.

Each tree is run as its own process with this tree's virtual environment and its own folder
first on the path; it needs ``tools.benchlink._referee_match`` (any commit since the link
benchmark). Measured per match, by the referee's own clock: the round trip (request sent to
answer received; the median of the match's decisions), the start-up in the match (asking for
the match to its play's start: every seat's socket, sandbox, bot process, imports, connection
and Hello) and a deal's play.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from house import settings
from tools.benchengine import machine

HERE = Path(__file__).resolve().parent.parent

# One tree's matches: its own folder first on the path; JSON on the last line of its output.
_MATCHES = r'''
import json, sys, time, statistics
from tools import benchlink
variant, deals, matches, with_requests = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    sys.argv[4] == "1"
out = {"rtt_ms": [], "startup_ms": [], "deal_ms": [], "engine": None}
for _ in range(matches):
    begin = time.monotonic()
    result, runner, wall = benchlink._referee_match(variant, deals, with_requests)
    out["rtt_ms"].append(statistics.median(t for _, t in runner.timings))
    out["startup_ms"].append((runner.play_started - begin) * 1000)
    out["deal_ms"].append(runner.play_s / max(1, len(result["deals"])) * 1000)
import referee.rules
out["engine"] = getattr(referee.rules, "ENGINE", "pure")  # (a tree from before the choice: pure)
print(json.dumps(out))
'''

_RELAY = r'''
import asyncio, json, statistics, sys
from tools import benchlink
size = benchlink._request_size(sys.argv[1])  # a typical decision request of the variant
print(json.dumps(statistics.median(asyncio.run(benchlink.relay_round_trips(size,
                                                                          int(sys.argv[2]))))))
'''


def _run(tree: Path, code: str, *args: str) -> object:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tree), str(tree / "protos")] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=tree, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{tree}: {done.stderr.strip()[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_link_against(other: Path, variant: str, deals: int, matches: int, rounds: int,
                       events: str = "with-requests") -> int:
    """Print both trees' medians over ``rounds`` x ``matches`` matches and their ratios."""
    other = other.resolve()
    if not (other / "tools" / "benchlink.py").is_file():
        print(f"arena bench link --against {other}: no tools/benchlink.py there (a checkout of "
              "this project from after the link benchmark?)", file=sys.stderr)
        return 2
    trees = {"this": HERE, "other": other}
    got: dict[str, dict[str, list]] = {name: {"rtt_ms": [], "startup_ms": [], "deal_ms": []}
                                       for name in trees}
    engines: dict[str, object] = {}
    relay: list[float] = []
    with_requests = "1" if events == "with-requests" else "0"
    for r in range(rounds):
        order = list(trees) if r % 2 == 0 else list(reversed(trees))
        for name in order:
            out = _run(trees[name], _MATCHES, variant, str(deals), str(matches), with_requests)
            assert isinstance(out, dict)
            for key in got[name]:
                got[name][key].extend(out[key])
            engines[name] = out.get("engine")
        relay_ms = _run(HERE, _RELAY, variant, "600")
        assert isinstance(relay_ms, float)
        relay.append(relay_ms)
        last = {name: statistics.median(got[name]["rtt_ms"][-matches:]) for name in trees}
        print(f"round {r + 1}/{rounds}: round trip this {last['this']:.3f} ms, other "
              f"{last['other']:.3f} ms; relay {relay_ms:.3f} ms", flush=True)
    med = {name: {key: statistics.median(v) for key, v in d.items()} for name, d in got.items()}
    relay_median = statistics.median(relay)
    print(f"command      arena bench link --against {other} --variant {variant} --deals {deals} "
          f"--matches {matches} --rounds {rounds} --events {events}")
    print(f"machine      {machine()}")
    print(f"trees        this {HERE} (engine {engines.get('this')}, gate "
          f"{settings.GATE.value()}); other {other} (engine {engines.get('other')})")
    print(f"relay        median {relay_median:.3f} ms over {rounds} rounds (bare grpcio, one "
          f"server, four client processes in turn)")
    for name in trees:
        m = med[name]
        print(f"{name:<12} round trip median {m['rtt_ms']:.3f} ms = "
              f"{m['rtt_ms'] / relay_median:.2f} x relay; start-up in the match "
              f"{m['startup_ms']:.0f} ms; deal {m['deal_ms']:.1f} ms (medians over "
              f"{len(got[name]['rtt_ms'])} matches)")
    this, that = med["this"], med["other"]
    print(f"ratio        this / other: round trip {this['rtt_ms'] / that['rtt_ms']:.2f}, "
          f"start-up {this['startup_ms'] / that['startup_ms']:.2f}, deal "
          f"{this['deal_ms'] / that['deal_ms']:.2f}")
    return 0
