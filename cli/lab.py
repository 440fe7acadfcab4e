"""``arena lab`` (duplicate pairs between policies in process), ``arena bots wrap`` (a policy as a
gRPC bot folder) and ``arena bench lab``."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from cli.common import VARIANT_HELP, VARIANTS, subcommands
from cli.text import json_text, visible

ROOT = Path(__file__).resolve().parent.parent


def _variants():
    from referee.rules import variant_ids
    return variant_ids()


def cmd_lab(args) -> int:
    from lab.policy import PolicyError
    from lab.run import run_lab
    from scheduler.reports import season_standings
    from scheduler.stats.standings import table
    if args.deals < 1 or args.deals_per_set < 1 or args.workers < 1:
        print("arena lab: --deals, --deals-per-set and --workers must be at least 1",
              file=sys.stderr)
        return 2
    pairs = -(-args.deals // args.deals_per_set)
    t = time.perf_counter()
    try:
        season, rows = run_lab(args.a, args.b, variant=args.variant, pairs=pairs,
                               deals_per_set=args.deals_per_set, workers=args.workers,
                               seed=args.seed)
    except PolicyError as e:
        print(f"arena lab: {visible(e)}", file=sys.stderr)
        return 2
    took = time.perf_counter() - t
    st = season_standings(season, [r["row"] for r in rows], samples=args.samples)
    decisions = sum(r["decisions"] for r in rows)
    faults = [f for r in rows for f in r["faults"]]
    if args.json:
        print(json_text({**st.to_dict(), "seconds": round(took, 3), "decisions": decisions,
                         "faults": len(faults)}, indent=1))
        return 0
    print(visible(table(st)))
    print(f"lab: {pairs} pairs of {args.deals_per_set} deals ({st.deals} deals played, "
          f"{decisions} decisions) in {took:.1f} s with {args.workers} worker(s); seed "
          f"{args.seed!r}; {len(faults)} fault(s)")
    for f in faults[:5]:  # the reason quotes what the policy raised
        print(f"  fault: seat {f['seat']} {f['kind']}: {visible(f['reason'], one_line=True)} "
              f"(default {f['default_action']})")
    return 0


def cmd_wrap(args) -> int:
    """Write a bot folder that plays policy MODULE:CLASS (or FILE.py:CLASS) through the SDK:
    a copy of the policy's source (a sandboxed bot reads only its own folder, the SDK and the
    rules engine), ``bot.py`` and ``bot.toml``."""
    import importlib.util
    import shutil

    from lab.policy import PolicyError, make_policy
    where, sep, attr = args.policy.rpartition(":")
    out = Path(args.out).resolve()
    if not sep or not where or not attr.isidentifier():
        print(f"arena bots wrap: policy {args.policy!r}: expected MODULE:CLASS or "
              "FILE.py:CLASS", file=sys.stderr)
        return 2
    try:
        make_policy(args.policy)  # it loads and makes a policy here, or the error says why
        if where.endswith(".py"):
            source, module = Path(where).resolve(), Path(where).stem
        else:
            module = where
            found = importlib.util.find_spec(where.split(".")[0])
            if found is None or found.origin is None:
                raise PolicyError(f"policy {args.policy!r}: module {where!r} has no source "
                                  "file to copy")
            source = Path(found.origin)
            if found.submodule_search_locations:
                source = source.parent  # a package: copied whole
    except PolicyError as e:
        print(f"arena bots wrap: {visible(e)}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, out / source.name, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    else:
        shutil.copyfile(source, out / f"{module}.py")
    name = args.name or attr.lower()
    description = f"The lab policy {module}:{attr} through the Python SDK."
    (out / "bot.toml").write_text(  # JSON's string escapes are TOML's basic strings
        f'name = {json.dumps(name)}\nversion = "1.0.0"\ncommand = ["python3", "bot.py"]\n'
        f'protocol = "grpc"\n# the Python SDK (arena_sdk) and the rules engine come with '
        f'every Python bot\ndescription = {json.dumps(description)}\n')
    (out / "bot.py").write_text(
        f'"""A lab policy as a gRPC bot (arena_sdk.policy): {module}:{attr}."""\n\n'
        "import sys\n\nfrom arena_sdk.policy import run_policy\n\n"
        f"from {module} import {attr}\n\n"
        f"if __name__ == \"__main__\":\n"
        f"    sys.exit(run_policy({attr}(), {name!r}))\n")
    print(f"wrote {visible(out, one_line=True)}: bot {name!r} plays policy "
          f"{visible(module, one_line=True)}:{attr} (bot.toml, bot.py, "
          f"{visible(source.name, one_line=True)})")
    return 0


def cmd_bench_lab(args) -> int:
    from tools.benchlab import bench_lab
    for i, variant in enumerate([args.variant] if args.variant else _variants()):
        if i:
            print()
        bench_lab(variant, args.deals, args.repeat)
    return 0


def register(sub) -> None:
    variants = VARIANTS
    lab = sub.add_parser("lab", help="duplicate deals between two policies in process, rated "
                         "as a season (docs/lab.md)")
    lab.add_argument("a", help="policy A: a short name (random, greedy, cheap, first, search) "
                     "or MODULE:CLASS (or FILE.py:CLASS)")
    lab.add_argument("b", help="policy B, as A")
    lab.add_argument("--variant", default="two-deck-fry", choices=variants,
                     metavar="VARIANT", help=VARIANT_HELP)
    lab.add_argument("--deals", type=int, default=200, help="distinct deals, each played in "
                     "both seatings (default 200)")
    lab.add_argument("--deals-per-set", type=int, default=4, help="deals per duplicate pair")
    lab.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    lab.add_argument("--seed", default="0", help="the key of the deals' seeds (default 0)")
    lab.add_argument("--samples", type=int, default=1000, help="rating resamples")
    lab.add_argument("--json", action="store_true", help="the standings as JSON")
    lab.set_defaults(func=cmd_lab)

    bots_sub = subcommands(sub, "bots")
    if bots_sub is not None:
        wrap = bots_sub.add_parser("wrap", help="write a bot folder that plays a lab policy as "
                                   "a gRPC bot through the Python SDK")
        wrap.add_argument("policy", help="MODULE:CLASS, FILE.py:CLASS or a short name")
        wrap.add_argument("--out", required=True, help="the bot folder to write")
        wrap.add_argument("--name", help="the bot's name (default: the class name)")
        wrap.set_defaults(func=cmd_wrap)

    bench_sub = subcommands(sub, "bench")
    if bench_sub is not None:
        bl = bench_sub.add_parser("lab", help="the lab's deals per second with random "
                                  "policies against the engine benchmark's, one core")
        bl.add_argument("--variant", choices=variants,
                        help="one variant (default: each in turn)")
        bl.add_argument("--deals", type=int, default=1000)
        bl.add_argument("--repeat", type=int, default=5)
        bl.set_defaults(func=cmd_bench_lab)
