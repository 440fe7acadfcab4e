"""Play one match described by a JSON spec and write its record: the referee as its own process.

    python -m referee.serve SPEC.json --out RECORD.json --workdir DIR

The league's workers start this and wait for it, so that gRPC lives only here, never in a
forked worker. The spec (written by the scheduler) holds the match id, variant, options, the
deal list, time control and fault policy, and the four bots' manifests, seat by seat. The record
is written whole (to a temporary name, then renamed) or not at all; the exit status is 0 when a
record was written, whatever the bots did.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from referee.seats.bots import Manifest
from referee.match.local import run_match
from referee.match.spec import DealSpec, MatchSpec, time_control_from_dict


def spec_from_dict(data: dict) -> tuple[MatchSpec, list[Manifest]]:
    """The match spec and the seat-by-seat manifests of a scheduler's JSON spec."""
    tc = time_control_from_dict(data.get("time_control"))
    deals = [DealSpec(d["seed"], tuple(d["levels"]), d.get("dealer"))
             for d in data["deals"]] if data.get("deals") is not None else None
    bots = [Manifest(b["manifest_name"], b["version"], tuple(b["command"]), b["protocol"],
                     Path(b["folder"]), Path(b["path"]) if b.get("path") else None)
            for b in data["bots"]]
    spec = MatchSpec(match_id=data["match_id"], variant=data["variant"],
                     options=data.get("options") or {}, seed=str(data.get("seed", "0")),
                     max_deals=data.get("max_deals"), deals=deals, time_control=tc,
                     seat_names=list(data.get("seats") or [b.label for b in bots]))
    return spec, bots


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m referee.serve")
    p.add_argument("spec", help="the match spec (JSON)")
    p.add_argument("--out", required=True, help="where to write the match record")
    p.add_argument("--workdir", required=True, help="for the bots' logs")
    args = p.parse_args(argv)
    spec, bots = spec_from_dict(json.loads(Path(args.spec).read_text(encoding="utf-8")))
    result, record, runner = run_match(spec, bots, Path(args.workdir))
    record["elapsed_s"] = round(runner.elapsed_s, 3)
    record["play_s"] = round(runner.play_s, 3)
    out = Path(args.out)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
