"""``arena rules``: the rules engine's conformance vectors (``check``), its variants
(``variants``) and its mutation test (``mutate``)."""

from __future__ import annotations

import json
import os
import platform
import time


def _load_json(path: str) -> object:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise SystemExit(f"arena: {path}: no such file")
    except json.JSONDecodeError as e:
        raise SystemExit(f"arena: {path}: not valid JSON: line {e.lineno} column {e.colno}: "
                         f"{e.msg}")


def cmd_rules_check(args) -> int:
    from referee.conformance import run_file
    passed = failed = 0
    for path in args.files:
        data = _load_json(path)
        if not isinstance(data, dict):
            print(f"FAIL {path}: expected a JSON object with 'variant' and 'cases'")
            failed += 1
            continue
        for result in run_file(data, os.path.basename(path)):
            print(result.line())
            if result.ok:
                passed += 1
            else:
                failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def cmd_rules_variants(args) -> int:
    from referee.rules import families
    registered = families()
    print(f"{'variant':<16} {'family':<12} {'decks':>5} {'hand':>5} {'kitty':>5}")
    for family in registered.values():
        for r in family.presets:
            print(f"{r.variant:<16} {family.name:<12} {r.decks:>5} {r.hand_size:>5} "
                  f"{r.kitty_size:>5}")
    return 0


def cmd_rules_mutate(args) -> int:
    from tools import mutation
    chosen = [m for m in mutation.MUTATIONS if not args.only or args.only in m.rule]
    if not chosen:
        raise SystemExit(f"arena: no mutation's rule contains {args.only!r}")
    print(f"command      arena rules mutate{' --only ' + repr(args.only) if args.only else ''}")
    print(f"machine      {platform.machine()}, python {platform.python_version()}")
    print(f"mutations    {len(chosen)}, each alone on a copy of the project: the rules vectors, "
          "then the fast rules tests if every vector still passes")
    start = time.perf_counter()
    try:
        results = mutation.run(chosen, progress=lambda line: print(line, flush=True))
    except mutation.NotGreen as e:
        raise SystemExit(f"arena: rules mutate: {e}")
    missed = [r for r in results if not r.caught_by or r.caught_by.startswith("STALE")]
    by_vectors = sum(1 for r in results if "vector case" in r.caught_by)
    print(f"caught       {len(results) - len(missed)} of {len(results)} ({by_vectors} by vectors, "
          f"{len(results) - len(missed) - by_vectors} only by tests) in "
          f"{time.perf_counter() - start:.0f} s")
    for r in missed:
        print(f"MISSED       {r.mutation.rule} ({r.mutation.path}): {r.caught_by or 'nothing failed'}")
    return 1 if missed else 0


def register(sub) -> None:
    rules = sub.add_parser("rules", help="the rules engine")
    rsub = rules.add_subparsers(dest="rules_command", required=True)
    check = rsub.add_parser("check", help="run rules conformance vector files")
    check.add_argument("files", nargs="+")
    check.set_defaults(func=cmd_rules_check)
    variants = rsub.add_parser("variants", help="list the built variant ids and their families")
    variants.set_defaults(func=cmd_rules_variants)
    mutate = rsub.add_parser("mutate", help="break each rule once (one-line mutations on a copy "
                             "of the project) and check that a vector or a test fails")
    mutate.add_argument("--only", default="", metavar="TEXT",
                        help="only the mutations whose rule name contains TEXT")
    mutate.set_defaults(func=cmd_rules_mutate)
