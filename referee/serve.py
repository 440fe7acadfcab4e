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
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from referee.match.local import run_match
from referee.match.spec import MatchSpec
from referee.seats.sandbox import UNSANDBOXED_ENV, SandboxUnavailable


def main(argv: list[str] | None = None) -> int:
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
    bots = [b.manifest for b in spec.bots]
    unsandboxed = os.environ.get(UNSANDBOXED_ENV) == "1"
    try:
        result, record, runner = run_match(spec, bots, Path(args.workdir),
                                           sandbox="none" if unsandboxed else None)
    except SandboxUnavailable as e:
        print(f"referee: {e}", file=sys.stderr)
        return 3
    record["elapsed_s"] = round(runner.elapsed_s, 3)
    record["play_s"] = round(runner.play_s, 3)
    out = Path(args.out)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
