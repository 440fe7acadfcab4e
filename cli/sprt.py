"""``arena sprt A B``: duplicate pairs of A against B until a sequential probability ratio
test decides (paired differences per deal, or pair win/draw/loss)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from cli.common import VARIANT_HELP, sandbox_or_refuse, unsandboxed_option, VARIANTS
from cli.text import visible
from cli.study import load_side


def cmd_sprt(args) -> int:
    from referee.seats.manifest import ManifestError
    from referee.rules.variants import rules_for
    from lab import study
    from scheduler.stats.power import PairedSprt
    from scheduler.stats.ratings import Sprt
    from scheduler.season import new_secret
    try:
        rules_for(args.variant)
        test = Sprt(args.elo0, args.elo1, args.alpha, args.beta)
        paired = PairedSprt(args.d0, args.d1, args.alpha, args.beta)
        bot_a = load_side(args.a)
        bot_b = load_side(args.b, getattr(bot_a, "name", None))
        local = isinstance(bot_a, str) and isinstance(bot_b, str)
        if not local and (isinstance(bot_a, str) or isinstance(bot_b, str)):
            raise ValueError("A and B are both in-process policies or both bots (folders or "
                             "manifests)")
        if not local:
            sandbox_or_refuse(args)
        if args.deals_per_set < 1 or args.max_pairs < 1:
            raise ValueError("--deals-per-set and --max-pairs must be at least 1")
    except (ManifestError, ValueError) as e:  # (CommandError: the sandbox refused)
        print(f"arena sprt: {visible(e)}", file=sys.stderr)
        return 2
    name_a = bot_a if local else bot_a.name
    name_b = bot_b if local else bot_b.name
    # the names as printed: a manifest's name is the bot author's text (the raw names stay
    # the seats' names in the matches)
    shown_a, shown_b = visible(name_a, one_line=True), visible(name_b, one_line=True)
    hyp = (f"H0 diff <= {args.d0}, H1 diff >= {args.d1} levels per deal (paired differences)"
           if args.score == "diff" else f"H0 elo <= {args.elo0}, H1 elo >= {args.elo1} (pair "
           "W/D/L)")
    print(f"sprt {shown_a} vs {shown_b}: {args.variant}, duplicate pairs of "
          f"{args.deals_per_set} deals{' in process' if local else ''}; {hyp}, alpha "
          f"{args.alpha}, beta {args.beta}, at most {args.max_pairs} pairs", file=sys.stderr)
    t = time.perf_counter()
    if args.score == "wdl" and not local:  # the pair-W/L test as it always ran
        from scheduler.league import run_sprt
        from scheduler.season import SeasonBot
        got = run_sprt(SeasonBot(name_a, bot_a.manifest), SeasonBot(name_b, bot_b.manifest),
                       variant=args.variant, options={}, sprt=test,
                       deals_per_set=args.deals_per_set, max_pairs=args.max_pairs,
                       workers=args.workers, seed=args.seed,
                       workdir=Path(args.workdir).resolve(), progress=not args.no_progress)
    else:
        if local:
            source = study.in_process_sets(bot_a, bot_b, args.variant, args.deals_per_set,
                                           args.seed or new_secret(), args.max_pairs)
        else:
            def source(stop, secret=args.seed or new_secret()):
                study.referee_pairs(bot_a, bot_b, args.variant,
                                    args.max_pairs * args.deals_per_set, args.deals_per_set,
                                    secret, Path(args.workdir).resolve(),
                                    workers=args.workers, stop=stop, prefix="sprt")

        def show(n, st):
            if not args.no_progress:
                print(f"\r  {n} pairs, W-D-L {st['W']}-{st['D']}-{st['L']}", end="",
                      file=sys.stderr, flush=True)
        got = study.run_sequential(source, args.score, paired, test, args.max_pairs,
                                   args.deals_per_set, progress=show, both=args.compare)
        if not args.no_progress:
            print(file=sys.stderr)
    took = time.perf_counter() - t
    if args.score == "diff":
        _print_diff_verdict(args, shown_a, got, paired, took)
    else:
        _print_wdl_verdict(args, shown_a, got, test, took)
    return 0 if got.decision else 3


def _print_diff_verdict(args, shown_a: str, got, paired, took: float) -> None:
    """The paired test's verdict (``study.run_sequential``'s result), and where the pair
    W/D/L test stopped on the same pairs."""
    verdict = {"H1": f"{shown_a} is stronger by at least {args.d1} levels per deal (H1 "
                     "accepted)",
               "H0": f"{shown_a} is not stronger by {args.d1} levels per deal; at most "
                     f"{args.d0} (H0 accepted)",
               None: "no decision within --max-pairs"}[got.decision]
    at = got.decided_at
    print(f"{verdict}: {at} pairs ({2 * at * args.deals_per_set} deals), mean paired "
          f"difference {got.mean_diff:+.3f} levels per deal over {got.pairs} pairs, "
          f"LLR {got.llr_diff:.2f} in [{paired.lower:.2f}, {paired.upper:.2f}], "
          f"{took:.0f}s")
    n, d = got.stops["wdl"]
    print(f"on the same pairs, pair W/D/L (H1 {args.elo1} Elo): " +
          (f"{d} after {n} pairs" if d else f"no decision after {n} pairs") +
          f" (W-D-L {got.wins}-{got.draws}-{got.losses} over {got.pairs} pairs"
          f"{'' if args.compare else '; --compare plays on until it decides'})")


def _print_wdl_verdict(args, shown_a: str, got, test, took: float) -> None:
    """The pair W/D/L test's verdict (a ``SequentialResult``: ``league.run_sprt``'s or
    ``study.run_sequential``'s)."""
    verdict = {"H1": f"{shown_a} is stronger by at least {args.elo1} Elo (H1 accepted)",
               "H0": f"{shown_a} is not stronger by {args.elo1} Elo; at most {args.elo0} "
                     "(H0 accepted)",
               None: "no decision within --max-pairs"}[got.decision]
    elo, low, high = test.elo_interval(got.wins, got.draws, got.losses)
    print(f"{verdict}: {got.pairs} pairs ({got.deals} deals), W-D-L {got.wins}-"
          f"{got.draws}-{got.losses}, {elo:+.0f} Elo [{low:+.0f}, {high:+.0f}], LLR "
          f"{got.llr_wdl:.2f} in [{test.lower:.2f}, {test.upper:.2f}], {took:.0f}s")


def register(sub) -> None:
    sp = sub.add_parser("sprt", help="duplicate pairs of A against B until a sequential "
                        "probability ratio test decides")
    sp.add_argument("a", help="bot A's folder or manifest, or an in-process policy (random, "
                    "greedy, greedy-noisy[:EPS])")
    sp.add_argument("b", help="bot B, likewise")
    sp.add_argument("--score", choices=("diff", "wdl"), default="diff",
                    help="what each pair scores: diff, its paired difference per deal "
                    "(continuous; the default, see docs/statistics.md), or wdl, its "
                    "win/draw/loss by net levels (the earlier test)")
    sp.add_argument("--compare", action="store_true", help="--score diff: play on until "
                    "the pair-W/D/L test decides too, to see where each stops on the same pairs")
    sp.add_argument("--d0", type=float, default=0.0, help="--score diff, H0: A gains at most "
                    "this many levels per deal (default 0)")
    sp.add_argument("--d1", type=float, default=0.05, help="--score diff, H1: A gains at "
                    "least this many levels per deal (default 0.05)")
    sp.add_argument("--variant", default="two-deck-fry", choices=VARIANTS,
                    help=VARIANT_HELP)
    sp.add_argument("--elo0", type=float, default=0.0, help="--score wdl, H0: A is at most "
                    "this much stronger (default 0)")
    sp.add_argument("--elo1", type=float, default=50.0, help="--score wdl, H1: A is at least "
                    "this much stronger (default 50)")
    sp.add_argument("--alpha", type=float, default=0.05, help="false H1 rate (default 0.05)")
    sp.add_argument("--beta", type=float, default=0.05, help="false H0 rate (default 0.05)")
    sp.add_argument("--deals-per-set", type=int, default=4)
    sp.add_argument("--max-pairs", type=int, default=200)
    sp.add_argument("--workers", type=int, default=max(2, os.cpu_count() or 2),
                    help="matches at once (two per pair)")
    sp.add_argument("--seed", help="the key of the deals' seeds, for reproducing a run "
                    "(default: a fresh random one: no bot can tell the cards)")
    sp.add_argument("--workdir", default="records/sprt")
    sp.add_argument("--no-progress", action="store_true")
    unsandboxed_option(sp)
    sp.set_defaults(func=cmd_sprt)
