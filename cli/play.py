"""``arena match``, ``arena replay`` and ``arena soak``: matches played between bots on this
machine, and match records replayed without them."""

from __future__ import annotations

import json
import os
import secrets
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from cli.common import (DEFAULT_DB, LOG_LINES, VARIANT_HELP, VARIANTS, db_url, existing_store,
                        unsandboxed_option, variant_ids_or_exit)
from cli.text import json_text, visible
from scheduler.reports import sealed_reason

if TYPE_CHECKING:
    from referee.seats.manifest import Manifest


def cmd_replay(args) -> int:
    """Exit 0: verified (or printed); 1: the replay differs from the record (or there is no
    store, as for every command reading one); 2: the record cannot be read; 3: a stored
    record still sealed."""
    from referee.match.matchfile import MatchFile
    try:
        if args.db or not os.path.exists(args.record):
            store = existing_store(db_url(args), f"arena replay: {args.record}: no such file")
            sealed = store.pages.sealed_by(args.record)
            if sealed:
                print(f"arena replay: {args.record}: {sealed_reason(sealed)}", file=sys.stderr)
                return 3
            stored = store.results.record(args.record)
            if stored is None:
                print(f"arena replay: {args.record}: no such file, and no match record with "
                      f"that id in {store.url}", file=sys.stderr)
                return 2
            match = stored
        else:
            match = MatchFile.load(args.record)
    except ValueError as e:
        print(f"arena replay: {visible(e)}", file=sys.stderr)
        return 2
    if args.verify:
        problems = match.verify()
        if problems:
            for p in problems:
                print(f"DIFFERS {visible(p, one_line=True)}")
            return 1
        games, deals = len(match.games), len(match.summary().deals)
        actions = sum(len(g.actions) for g in match.games)
        events = sum(len(g.events) for g in match.games)
        print(f"verified: {games} game(s), {deals} deal(s), {actions} actions, {events} "
              "events")
        print(f"result: {visible(match.outcome(), one_line=True)}")
        if match.faults:
            print(f"faults recorded: {len(match.faults)}")
        return 0
    if args.seat is None:
        shown = [{k: v for k, v in e.items() if k != "visible_to"}
                 for g in match.games for e in g.events]
    else:
        shown = match.seat_view(args.seat)
    for event in shown:
        print(json_text(event))
    return 0


def cmd_soak(args) -> int:
    from referee.seats.manifest import ManifestError
    from tools.soak import DEFAULT_BOTS, soak
    try:
        return soak(args.variant or list(variant_ids_or_exit()), args.matches, args.deals,
                    args.bots or list(DEFAULT_BOTS), args.seed,
                    Path(args.keep) if args.keep else None)
    except (ManifestError, ValueError) as e:
        print(f"arena soak: {e}", file=sys.stderr)
        return 2


LISTEN_CONNECT_MS = 600_000  # how long a seat started by hand is waited for, by default


def _listening_seats(values: list[str] | None) -> set[int]:
    """The seats of ``--seat N=listen`` options."""
    seats = set()
    for v in values or ():
        seat, _, how = v.partition("=")
        if how != "listen" or seat not in ("0", "1", "2", "3"):
            raise ValueError(f"--seat {v}: expected N=listen with N a seat 0-3")
        seats.add(int(seat))
    return seats


def _built(bots: list[Manifest | None], unsandboxed: bool) -> list[Manifest | None] | None:
    """Each bot with a build step as built (once per content, in the bot cache:
    ``referee.seats.build.built``), saying so; None after printing why a build failed."""
    from referee.seats.build import BuildFailed, built, cache_dir
    out: list[Manifest | None] = []
    for b in bots:
        if b is not None and b.build:
            print(f"{visible(b.label, one_line=True)}: built by its manifest's build "
                  f"{'unsandboxed' if unsandboxed else 'in the build sandbox'}, once per "
                  f"content, in {cache_dir()}", flush=True)
            try:
                b = built(b, policy="none" if unsandboxed else None)
            except BuildFailed as e:
                print(f"arena match: {visible(e)}", file=sys.stderr)
                return None
        out.append(b)
    return out


def cmd_match(args) -> int:
    from referee.seats.launch import check_startable
    from referee.seats.manifest import ManifestError, bot_argument
    from referee.match.local import new_match_id, run_match
    from referee.seats.sandbox import SandboxUnavailable
    from referee.match.matchfile import MatchFile
    from referee.match.spec import DEFAULT_TIME_CONTROL, MatchSpec, TimeControl
    from referee.rules.variants import rules_for
    try:
        listen = _listening_seats(args.seat)
    except ValueError as e:
        print(f"arena match: {e}", file=sys.stderr)
        return 2
    if len(args.bots) + len(listen) != 4:
        print(f"arena match: expected {4 - len(listen)} bots (one per seat"
              f"{', besides the listening seat(s) ' if listen else ''}"
              f"{', '.join(map(str, sorted(listen)))}), got {len(args.bots)}", file=sys.stderr)
        return 2
    try:
        rules = rules_for(args.variant)
        given = iter(args.bots)
        wanted = [None if seat in listen else bot_argument(next(given)) for seat in range(4)]
        bots = _built(wanted, args.unsandboxed)
        if bots is None:
            return 2
        for b in bots:
            if b is not None:
                check_startable(b, sandboxed=not args.unsandboxed)
        if args.game and rules.after_ace == "wrap":
            raise ValueError(f"--game: {args.variant} wraps after A (option after_ace = wrap), "
                             "so a game never ends; use --deals N")
    except (ManifestError, ValueError) as e:
        print(f"arena match: {e}", file=sys.stderr)
        return 2
    match_id = args.match_id or new_match_id()
    seed = args.seed if args.seed is not None else secrets.token_hex(16)  # kept in the record
    connect_ms = args.connect_timeout_ms or (LISTEN_CONNECT_MS if listen else
                                             DEFAULT_TIME_CONTROL.connect_timeout_ms)
    spec = MatchSpec(match_id=match_id, variant=args.variant, seed=seed,
                     max_deals=None if args.game else args.deals,
                     time_control=TimeControl(per_decision_ms=args.per_decision_ms,
                                              bank_ms=args.bank_ms,
                                              max_strikes=args.max_strikes,
                                              max_reconnects=args.max_reconnects,
                                              connect_timeout_ms=connect_ms),
                     seat_names=[f"seat {i}, started by hand" if b is None else b.label
                                 for i, b in enumerate(bots)])
    out = Path(args.out) if args.out else Path("records") / f"match-{match_id}.json"
    tokens = [secrets.token_urlsafe(24) for _ in range(4)]

    def listening(address: str) -> None:
        for seat in sorted(listen):
            print(f"seat {seat} waits {connect_ms // 1000} s for the bot you start (over TCP, "
                  "unsandboxed: it runs as you start it); in its environment:\n"
                  f"  export ARENA_REFEREE={address} ARENA_TOKEN={tokens[seat]} "
                  f"ARENA_SEAT={seat} ARENA_MATCH_ID={match_id}", flush=True)
    t = time.perf_counter()
    try:
        _, record, _ = run_match(spec, bots, out.parent / f"logs-{match_id}",
                                 sandbox="none" if args.unsandboxed else None,
                                 tcp_port=args.port if listen else None, tokens=tokens,
                                 listening=listening)
    except SandboxUnavailable as e:
        print(f"arena match: {e}", file=sys.stderr)
        return 2
    except ManifestError as e:  # a bot that cannot be started
        print(f"arena match: {visible(e)}", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, ensure_ascii=False)
    out.write_text(text)
    match = MatchFile.from_dict(json.loads(text), str(out))  # as it reads back
    result = match.result
    assert result is not None  # a record read back states its result
    print(f"match {match_id}: {args.variant}, {len(result.deals)} deals in "
          f"{time.perf_counter() - t:.1f}s")
    for seat, name in enumerate(spec.seat_names):
        print(f"  seat {seat} (team {seat % 2}): {visible(name, one_line=True)}  strikes "
              f"{result.strikes[seat]}")
    for times in match.decision_times():
        print(f"  seat {times.seat} decision time: median {times.median_ms:.2f} ms, p95 "
              f"{times.p95_ms:.2f} ms, longest {times.max_ms:.2f} ms over {times.decisions} "
              "decisions")
    for d in result.deals:
        print(f"  deal {d.deal}: attackers {d.attacker_total} points, levels after "
              f"{d.levels[0]} / {d.levels[1]}")
    if result.match_points and result.titles:
        print(f"  match points {list(result.match_points)}  titles {list(result.titles)}")
    if result.forfeit:
        f = result.forfeit
        print(f"  forfeit: seat {f.seat} ({visible(f.reason, one_line=True)}); team {f.team} "
              "loses")
    for fault in match.faults:
        print(f"  fault: seat {fault.seat} {visible(fault.kind, one_line=True)}: "
              f"{visible(fault.reason, one_line=True)}")
        if fault.log_tail:  # a seat whose process ended: how its log ends
            lines = fault.log_tail.rstrip("\n").splitlines()[-LOG_LINES:]
            print("\n".join(f"    | {visible(line, one_line=True)}" for line in lines))
    by_hand = f" (seat(s) {', '.join(map(str, sorted(listen)))} started by hand: as you " \
        "started them)" if listen else ""
    print(f"  sandbox: {result.sandbox}{by_hand}; rules engine: {match.engine}")
    # the match's result as the standings count it (a deal list's game has no winner team)
    print(f"  result: {visible(match.outcome(), one_line=True)}")
    print(f"  record {out} (arena replay {out} --verify)")
    return 0


def register(sub) -> None:
    from referee.match.spec import DEFAULT_TIME_CONTROL as TC
    variants = VARIANTS
    soak = sub.add_parser("soak", help="many matches between sample bots, every record "
                          "verified; any fault is a bug (a command, not a test)")
    soak.add_argument("--variant", action="append", choices=variants,
                      help="a variant to play (repeat for more; default: all four)")
    soak.add_argument("--matches", type=int, default=10, help="matches per variant")
    soak.add_argument("--deals", type=int, default=4, help="deals per match")
    soak.add_argument("--seed", default="soak")
    soak.add_argument("--keep", help="a folder for the records of matches with problems")
    soak.add_argument("bots", nargs="*", help="bot manifests or folders, rotated through the "
                      "seats (default: Python random, Node.js, Python greedy, C++)")
    soak.set_defaults(func=cmd_soak)

    rep = sub.add_parser("replay", help="replay a match record without bots",
                         epilog="exit status: 0 verified (or printed); 1 the replay differs "
                         "from the record (a DIFFERS line each), or there is no store; 2 the "
                         "record cannot be read (not JSON, a wrong field: named on stderr; no "
                         "such match in the store); 3 a stored record still sealed")
    rep.add_argument("record", help="a record file, or a match id in the store (--db); a "
                     "stored record is sealed (exit 3) until every match on its cards is over")
    rep.add_argument("--db", help=f"the store (default $ARENA_DB or {DEFAULT_DB})")
    rep.add_argument("--verify", action="store_true", help="re-derive every event and the result")
    rep.add_argument("--seat", type=int, choices=range(4), help="print what this seat saw")
    rep.set_defaults(func=cmd_replay)

    match = sub.add_parser("match", help="play one match between four bots on this machine")
    match.add_argument("bots", nargs="+", help="4 bot manifests (bot.toml or its folder) or "
                       "commands, seats 0-3 (the seats not given to --seat N=listen)")
    match.add_argument("--seat", action="append", metavar="N=listen",
                       help="seat N is played by a bot you start yourself (in a debugger, say): "
                       "the referee listens on 127.0.0.1 and prints the address and the seat's "
                       "token; repeatable")
    match.add_argument("--port", type=int, default=0,
                       help="the TCP port a listening seat connects to (default: a free one)")
    match.add_argument("--connect-timeout-ms", type=int, default=0,
                       help="how long the referee waits for each bot to connect (default "
                       f"{TC.connect_timeout_ms}, or {LISTEN_CONNECT_MS} with a listening seat)")
    match.add_argument("--variant", default="two-deck-fry", choices=variants,
                       help=VARIANT_HELP)
    match.add_argument("--deals", type=int, default=4, help="deals to play (default 4)")
    match.add_argument("--game", action="store_true", help="play a whole game to its end")
    match.add_argument("--seed", help="the match's seed, for reproducing a match (default: a "
                       "fresh random one, kept in the record)")
    match.add_argument("--match-id")
    match.add_argument("--out", help="where to write the match record")
    match.add_argument("--per-decision-ms", type=int, default=TC.per_decision_ms)
    match.add_argument("--bank-ms", type=int, default=TC.bank_ms)
    match.add_argument("--max-strikes", type=int, default=TC.max_strikes)
    match.add_argument("--max-reconnects", type=int, default=TC.max_reconnects,
                       help="new streams a seat may open in the match; one more forfeits")
    unsandboxed_option(match)
    match.set_defaults(func=cmd_match)
