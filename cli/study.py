"""``arena study power A B``: how many deals each estimator needs to tell A from B.

A and B are in-process policies (``random``, ``greedy``, ``greedy-noisy[:EPS]``: played by the
engine in this process, fast) or bot folders / manifests (played by the referee, each bot in
its sandbox). The statistics are in ``scheduler/stats/power.py`` and docs/statistics.md.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import time
from pathlib import Path

from cli.text import json_text, visible


def register(sub) -> None:
    from cli.common import VARIANT_HELP, VARIANTS, unsandboxed_option
    study = sub.add_parser("study", help="studies of the arena's statistics")
    ssub = study.add_subparsers(dest="study_command", required=True)
    sp = ssub.add_parser("power", help="A against B on duplicate deals: per estimator, the "
                         "variance per deal, the mean difference and the deals needed to tell "
                         "them apart at 95%%")
    sp.add_argument("a", help="bot A: random, greedy, greedy-noisy[:EPS] (in process) or a bot "
                    "folder / manifest (through the referee)")
    sp.add_argument("b", help="bot B, likewise")
    sp.add_argument("--variant", default="two-deck-fry", choices=VARIANTS,
                    help=VARIANT_HELP)
    sp.add_argument("--deals", type=int, default=400, help="deals, each played twice with "
                    "the partnerships swapped (default 400)")
    sp.add_argument("--deals-per-set", type=int, default=4, help="deals of a duplicate pair "
                    "scored win/draw/loss (default 4, as in arena sprt)")
    sp.add_argument("--samples", type=int, default=1000, help="bootstrap resamples")
    sp.add_argument("--seed", help="the deals' seed (in process, default \"power\") or key "
                    "(through the referee, default a fresh secret one: no bot can tell the "
                    "cards); the same seed plays the same cards")
    sp.add_argument("--json", action="store_true", help="print the estimators as JSON")
    sp.add_argument("--plot", metavar="FILE.png", help="draw the running estimates")
    sp.add_argument("--save", metavar="FILE.json", help="write each deal's outcomes (both "
                    "plays, net levels, card luck) to study them again")
    sp.add_argument("--sprt-streams", type=int, default=0, metavar="N", help="also run both "
                    "sequential tests on N streams of pairs resampled from these (where each "
                    "stops)")
    sp.add_argument("--workers", type=int, default=2, help="matches at once (referee only)")
    sp.add_argument("--workdir", default="records/study")
    sp.add_argument("--no-progress", action="store_true")
    unsandboxed_option(sp)
    sp.set_defaults(func=cmd_study_power)


def _fail(msg: str) -> int:
    print(f"arena study power: {visible(msg)}", file=sys.stderr)
    return 2


def load_side(x: str, other: str | None = None):
    """An in-process policy name, else a SeasonBot from the bot folder or manifest ``x``."""
    from lab.study import in_process, policy
    if in_process(x):
        policy(x, "check")  # a bad noise is refused here
        return x
    from referee.seats.manifest import load_manifest
    from scheduler.season import SeasonBot
    m = load_manifest(x)
    return SeasonBot(m.name if m.name != other else m.name + "-b", m)


def collect(args, a, b, progress: bool):
    """The study's duplicate deals, in process or through the referee."""
    from lab import study
    total = args.deals - args.deals % args.deals_per_set
    show = _bar(progress, total)
    if isinstance(a, str) and isinstance(b, str):
        return study.play_pairs(a, b, args.variant, total, seed=args.seed or "power",
                                progress=show)
    if isinstance(a, str) or isinstance(b, str):
        raise ValueError("A and B are both in-process policies or both bots (folders or "
                         "manifests)")
    from scheduler.season import new_secret
    return study.referee_pairs(a, b, args.variant, total, args.deals_per_set,
                               args.seed or new_secret(),
                               Path(args.workdir).resolve(), workers=args.workers,
                               progress=show)


def _bar(enabled: bool, total: int):
    if not enabled:
        return None
    last = [0.0]

    def show(done: int) -> None:
        now = time.monotonic()
        if now - last[0] > 1 or done == total:
            last[0] = now
            print(f"\r  {done}/{total} deals", end="\n" if done == total else "",
                  file=sys.stderr, flush=True)
    return show


def _num(x: float, fmt: str = ".3f") -> str:
    return "inf" if not math.isfinite(x) else format(x, fmt)


def cmd_study_power(args) -> int:
    from referee.seats.manifest import ManifestError
    from scheduler.stats import power
    from scheduler.stats.ratings import Sprt
    if args.deals_per_set < 1:
        return _fail("--deals-per-set must be at least 1")
    if args.deals < 2 * args.deals_per_set:
        return _fail(f"--deals must be at least twice --deals-per-set "
                     f"({2 * args.deals_per_set}), got {args.deals}")
    if args.samples < 10:
        return _fail("--samples must be at least 10")
    if args.plot and not args.plot.lower().endswith(".png"):
        return _fail(f"--plot {args.plot}: expected a file name ending in .png")
    try:
        a = load_side(args.a)
        b = load_side(args.b, getattr(a, "name", None))
        if not isinstance(a, str) or not isinstance(b, str):
            from cli.common import sandbox_or_refuse
            sandbox_or_refuse(args)
    except (ManifestError, ValueError) as e:  # (CommandError: the sandbox refused)
        return _fail(str(e))
    name_a = a if isinstance(a, str) else a.name
    name_b = b if isinstance(b, str) else b.name
    t = time.perf_counter()
    try:
        pairs = collect(args, a, b, progress=not args.no_progress and not args.json)
    except ValueError as e:
        return _fail(str(e))
    took = time.perf_counter() - t
    if args.save:
        Path(args.save).write_text(json.dumps({"a": name_a, "b": name_b,
                                               "variant": args.variant,
                                               "deals": [dataclasses.asdict(p) for p in pairs]}),
                                   encoding="utf-8")
    got = power.estimate(pairs, args.deals_per_set, samples=args.samples)
    stops = power.stopping_points(power.set_scores(pairs, args.deals_per_set),
                                  power.PairedSprt(0.0, DEFAULT_D1), Sprt(0.0, 50.0))
    streams = power.resampled_stops(pairs, args.deals_per_set, power.PairedSprt(0.0, DEFAULT_D1),
                                    Sprt(0.0, 50.0), streams=args.sprt_streams) \
        if args.sprt_streams else None
    if args.plot:
        power.plot(pairs, args.plot, args.deals_per_set,
                   f"{name_a} vs {name_b}, {args.variant}: running estimate, 95% interval")
    if args.json:
        print(json_text({"a": name_a, "b": name_b, "variant": args.variant,
                         "deals": len(pairs), "deals_played": 2 * len(pairs),
                         "deals_per_set": args.deals_per_set,
                         "estimators": [e.to_dict() for e in got],
                         "sprt": {k: {"pairs": n, "decision": d} for k, (n, d) in
                                  stops.items()},
                         "sprt_resampled": streams}, indent=2))
        return 0
    # a manifest's name is the bot author's text
    print(f"{visible(name_a, one_line=True)} vs {visible(name_b, one_line=True)}, "
          f"{args.variant}: {len(pairs)} deals, each played twice with "
          f"the partnerships swapped ({2 * len(pairs)} plays, {took:.0f}s); duplicate pairs "
          f"of {args.deals_per_set} deals")
    print(f"{'estimator':<16} {'var/deal':>8} {'[95% bootstrap]':>19} {'mean':>7} "
          f"{'95% interval':>19} {'deals needed':>12} {'[95% bootstrap]':>19}")
    for est in got:
        print(f"{est.name:<16} {_num(est.variance_per_deal):>8} "
              f"[{_num(est.variance_interval[0]):>8},{_num(est.variance_interval[1]):>8}] "
              f"{_num(est.mean):>7} [{_num(est.interval[0]):>8},{_num(est.interval[1]):>8}] "
              f"{_num(est.deals_needed, '.0f'):>12} "
              f"[{_num(est.deals_needed_interval[0], '.0f'):>8},"
              f"{_num(est.deals_needed_interval[1], '.0f'):>8}]")
    print("mean: A's edge per deal in levels (continuous outcome; duplicate_wdl: pair wins "
          "minus losses per pair); deals needed: deals played until the 95% interval excludes "
          "0 at this edge")
    for key, label in (("diff", f"paired differences (H1: {DEFAULT_D1} levels per deal)"),
                       ("wdl", "pair W/D/L (H1: 50 Elo)")):
        n, d = stops[key]
        print(f"sprt on {label}: " + (f"{d} after {n} pairs ({2 * n * args.deals_per_set} "
                                      f"deals)" if d else f"no decision in {n} pairs"))
    if streams:
        print(f"sprt on {streams['streams']} streams resampled from these pairs (the same "
              f"stream for both): paired differences {streams['diff']['median_pairs']} pairs "
              f"(median; mean {streams['diff']['mean_pairs']:.1f}, H1 "
              f"{streams['diff']['h1']:.1%}), pair W/D/L {streams['wdl']['median_pairs']} "
              f"(mean {streams['wdl']['mean_pairs']:.1f}, H1 {streams['wdl']['h1']:.1%}); the "
              f"paired test first on {streams['diff_first']:.1%}, together on "
              f"{streams['together']:.1%}")
    if args.plot:
        print(f"plot: {visible(args.plot, one_line=True)}")
    return 0


#: ``arena sprt``'s default H1 on paired differences: A gains this many levels per deal
DEFAULT_D1 = 0.05
