"""The participant's commands on the submission service: upload a bot and follow it, a
version's status, logs and match records, scrimmages. One implementation for ``arena bots
submit --server|status|records|logs`` and ``arena scrimmage``, and for ``arena-submit``, the
thin client (``sdk/client``), which carries this module and what it imports: standard library
only. The packing is imported by the commands that use it (the parser of ``arena bots`` loads
no archive module).

Each command's parser sets ``prog``, the command its messages name (``arena bots status``,
``arena-submit status``), and ``bots``, the one that follows a version (``arena bots``,
``arena-submit``)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from cli.client import ServiceError, author_token, client_of, quoted, server_options
from cli.text import json_text, local_time, visible
from scheduler.service.terms import MAX_PAGE, ahead_text, record_file_name
from scheduler.states import IN_FLIGHT, SCRIMMAGE_OPEN, ScrimmageKind, VersionState

#: ``--wait``'s exit status when ``--timeout`` passes first
TIMED_OUT = 3
WAIT_EPILOG = """exit status: 0 ready (without --wait: stored); 1 refused (or, for status, not
ready); 2 the command or the service refused the request, or the service could not be reached;
3 --timeout passed before the version was ready or refused (it goes on on the service)"""
PROG = "arena-submit"
"""The thin client's command."""


# -- submitting ---------------------------------------------------------------------------------
def upload(args, token: str | None) -> int:
    """``args.source`` packed here (a folder, as the registry packs it) or sent as it is (an
    archive) to the service; with ``args.wait``, followed until ready or refused."""
    import gzip

    from scheduler.registry.archives import is_archive, size_text
    from scheduler.registry.packing import pack_folder
    if token is None:
        raise ValueError("no token: set ARENA_AUTHOR_TOKEN or pass --token-file")
    source = Path(args.source)
    if source.is_dir():
        data = gzip.compress(pack_folder(source, None, source).data, 6, mtime=0)
    elif source.is_file() and is_archive(source):
        data = source.read_bytes()
    else:
        raise ValueError(f"{source}: not a bot folder nor an archive (.tar, .tar.gz, .zip)")
    client = client_of(args)
    v = client.call("POST", "/api/v1/bots", data, "application/octet-stream")
    ref = f"{visible(v['name'], one_line=True)}@{visible(v['version'], one_line=True)}"
    print(f"{ref} {v['content_hash']} {v['state']} (uploaded {size_text(len(data))}; "
          f"`{args.bots} status {ref} --wait` follows its build and check)")
    if getattr(args, "wait", False):
        return wait(client, v, args.timeout, args.bots)
    return 0


def wait(client, v: dict, timeout_s: float | None, bots: str) -> int:
    """Follow a version on the service until it is ready or refused, printing each state as
    it changes, and while it is queued what it waits behind: 0 ready, 1 refused, ``TIMED_OUT``
    when ``timeout_s`` passes first."""
    ref = f"{visible(v['name'], one_line=True)}@{visible(v['version'], one_line=True)}"
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    shown = None
    while True:
        line = v["state"] + (f": {ahead_text(v.get('ahead'))}" if v.get("ahead") else "")
        if line != shown:
            print(f"{ref}: {line}", flush=True)
            shown = line
        if v["state"] not in IN_FLIGHT:
            break
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            print(f"{bots}: {ref} is still {v['state']} after {timeout_s:g} s (--timeout); "
                  f"the service goes on with it: `{bots} status {ref} --wait` follows it",
                  file=sys.stderr)
            return TIMED_OUT
        time.sleep(1 if left is None else min(1, left))  # (the poll of a wait on the service)
        v = client.get("/api/v1/bots/" + quoted(v["name"], v["version"]))
    if v["state"] in (VersionState.REFUSED, VersionState.SUSPENDED) and v.get("reason"):
        print(f"  why: {visible(v['reason'])}")
    return 0 if v["state"] == VersionState.READY else 1


def cmd_submit(args) -> int:
    """``arena-submit DIR_OR_ARCHIVE``: ``upload``."""
    try:
        return upload(args, author_token(args.token_file))
    except (ValueError, ServiceError) as e:  # RegistryError, the service
        print(f"{args.prog}: {e}", file=sys.stderr)
        return 2


# -- a version's status, records and logs -------------------------------------------------------
def _ref(args):
    """The client, and the name and version ``args.ref`` names (a name: your latest)."""
    client = client_of(args)
    name, _, version = args.ref.partition("@")
    if not version:
        mine = [v for v in client.get("/api/v1/bots") if v["name"] == name]
        if not mine:
            raise ValueError(f"{args.ref}: none of your versions is named {name!r}")
        version = mine[0]["version"]
    return client, name, version


def _results(client, name: str, version: str, every: bool) -> dict:
    """The version's results on the service: each season's first page of matches, or with
    ``every`` all of them."""
    path = "/api/v1/bots/" + quoted(name, version, "results")
    got = client.get(path + (f"?limit={MAX_PAGE}" if every else ""))
    for r in got["seasons"] if every else ():
        m = r["matches"]
        while len(m["rows"]) < m["total"]:
            more = client.get(f"{path}?season={quoted(r['season'])}&limit={MAX_PAGE}"
                              f"&offset={len(m['rows'])}")["seasons"][0]["matches"]["rows"]
            if not more:
                break
            m["rows"] += more
    return got


def result_line(server: str, m: dict) -> str:
    """A match's line as an author reads it: its id, status, opponents, its team's result and
    where its replay is."""
    said = ("sealed until its mirror is played" if m["sealed"] else
            f"{m['outcome']}{' (forfeit)' if m['forfeit'] else ''}, net {m['net']:+d}, "
            f"{m['points']} points taken" if m["outcome"] else "")
    return (f"match {visible(m['id'], one_line=True)} {m['status']}  v "
            f"{', '.join(visible(o, one_line=True) for o in m['opponents'])}"
            f"{': ' + said if said else ''}"
            f"{'  ' + server + m['replay_url'] if m['replay_url'] else ''}")


def _season_line(r: dict) -> str:
    if r["rating"] is None:
        rating = "no rating yet"
    elif r["mu"] is not None:
        rating = f"openskill mu {r['mu']:.2f} [{r['low']:.2f}, {r['high']:.2f}]"
    else:
        rating = f"rating {r['rating']:.1f} [{r['low']:.1f}, {r['high']:.1f}]"
    rank = f"rank {r['rank']} of {r['of']}" if r["rank"] else f"not rated yet ({r['of']} bots)"
    return (f"  season {visible(r['season'], one_line=True)} ({r['format']}): {rank}"
            f"{' (retired)' if r['retired'] else ''}, {rating}, {r['pairs']} pairs, "
            f"{r['wins']:g}-{r['draws']:g}-{r['losses']:g} (won, drawn, lost), "
            f"points {r['points']:g}, {r['matches']['total']} matches played")


def cmd_status(args) -> int:
    """``status NAME[@VERSION]``: a version's state on the service (a name: its latest), why it
    was refused, and in each season it plays in its rating, rank, pairs and matches, newest
    first."""
    from scheduler.registry.archives import size_text
    try:
        client, name, version = _ref(args)
        v = client.get("/api/v1/bots/" + quoted(name, version))
        if args.wait and v["state"] in IN_FLIGHT:
            if wait(client, v, args.timeout, args.bots) == TIMED_OUT:
                return TIMED_OUT
            v = client.get("/api/v1/bots/" + quoted(name, version))
        got = _results(client, name, version, args.all)
    except (ValueError, ServiceError) as e:
        print(f"{args.prog}: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json_text({**v, "results": got["seasons"], "ladders": got.get("ladders", [])},
                        indent=1))
        return 0 if v["state"] == VersionState.READY else 1
    print(f"{visible(v['name'], one_line=True)}@{visible(v['version'], one_line=True)}: "
          f"{v['state']}{' (withdrawn)' if v['withdrawn'] else ''}")
    if v["reason"]:
        print(f"  why: {visible(v['reason'])}")
    if v["state"] == VersionState.SUSPENDED:
        print("  it plays in no ladder and no new scrimmage or season until the organiser "
              "lifts the suspension")
    print(f"  submitted {local_time(v['submitted_at'])}, {v['files']} files, "
          f"{size_text(v['size'])}, content {v['content_hash'][:12]}"
          f"{f', a build log ({args.bots} logs NAME@VERSION)' if v['has_build_log'] else ''}")
    if v["seasons"]:
        print(f"  seasons: {', '.join(visible(s, one_line=True) for s in v['seasons'])}")
    for t in v.get("ab") or ():
        print(f"  {_ab_line(t)}")
    for lad in got.get("ladders", ()):
        print(f"  ladder {visible(lad['season'], one_line=True)}: "
              f"{visible(lad['status'], one_line=True)}")
    for r in got["seasons"]:
        print(_season_line(r))
        for m in r["matches"]["rows"]:
            print(f"    {result_line(client.server, m)}")
        left = r["matches"]["total"] - len(r["matches"]["rows"])
        if left > 0:
            print(f"    ... {left} older (--all)")
    return 0 if v["state"] == VersionState.READY else 1


def cmd_records(args) -> int:
    """``records NAME[@VERSION] [--out DIR]``: the record of every match the version played
    that may be served, one file a match (``arena replay FILE`` reads it)."""
    out = Path(args.out)
    try:
        client, name, version = _ref(args)
        got = _results(client, name, version, True)
        rows = [m for r in got["seasons"] for m in r["matches"]["rows"]]
        out.mkdir(parents=True, exist_ok=True)
        wrote = 0
        for m in rows:
            if m["record_url"] is None:
                continue
            path = out / record_file_name(m["id"])
            path.write_text(client.get("/api/v1/matches/" + quoted(m["id"], "record"),
                                       raw=True), encoding="utf-8")
            print(path)
            wrote += 1
    except (ValueError, ServiceError, OSError) as e:
        print(f"{args.prog}: {e}", file=sys.stderr)
        return 2
    sealed = sum(1 for m in rows if m["sealed"])
    print(f"{wrote} record(s) of {visible(name, one_line=True)}@{visible(version, one_line=True)}"
          f" in {out}" + (f"; {sealed} sealed until their mirrors are played" if sealed else ""),
          file=sys.stderr)
    return 0


def cmd_logs(args) -> int:
    """``logs NAME@VERSION``: its build log, or with ``--match ID`` the logs its seats wrote in
    that match: the author's only."""
    name, _, version = args.ref.partition("@")
    try:
        if not version:
            raise ValueError(f"{args.ref}: name the version (NAME@VERSION)")
        client = client_of(args)
        if args.match is None:
            text = client.get("/api/v1/bots/" + quoted(name, version, "build-log"), raw=True)
            print(f"build log of {visible(args.ref, one_line=True)}: "
                  f"{len(text)} characters" if text else
                  f"{visible(args.ref, one_line=True)} has no build log", file=sys.stderr)
            sys.stdout.write(visible(text))
            return 0
        detail = client.get("/api/matches/" + quoted(args.match))
        seats = [i for i, b in enumerate(detail["match"]["seats"])
                 if b in (args.ref, name) or detail.get("versions") and i < len(
                     detail["versions"]) and args.ref in str(detail["versions"][i])]
        if not seats:
            seats = list(range(4))
        shown = 0
        for seat in seats:
            try:
                text = client.get("/api/v1/matches/" + quoted(args.match, "logs", str(seat)),
                                  raw=True)
            except ServiceError as e:
                if " 403 " in str(e) and len(seats) == 4:
                    continue  # another author's seat
                raise
            print(f"== match {visible(args.match, one_line=True)}, seat {seat} "
                  f"({len(text)} characters)")
            sys.stdout.write(visible(text) if text.endswith("\n") or not text
                             else visible(text) + "\n")
            shown += 1
        if not shown:
            raise ValueError(f"match {args.match}: none of its seats is {args.ref}")
    except (ValueError, ServiceError) as e:
        print(f"{args.prog}: {e}", file=sys.stderr)
        return 2
    return 0


# -- scrimmages ---------------------------------------------------------------------------------
def _ab_line(t: dict) -> str:
    """An A/B test in a line: against what, and its verdict (``AbTest.text``)."""
    against = visible(t.get("opponent") or "", one_line=True)
    what = "its predecessor " if t.get("kind") == ScrimmageKind.NEW_VERSION else ""
    return (f"A/B test {t.get('id', '')} v {what}{against}: "
            f"{visible(t['text'], one_line=True)}")


def _scrimmage_line(s: dict) -> str:
    if s.get("ab"):
        return (f"scrimmage {s['id']}: {visible(s['bot'], one_line=True)} v "
                f"{visible(s['opponent'], one_line=True)}, an A/B test, {s['state']}"
                f"{' (' + visible(s['reason'], one_line=True) + ')' if s['reason'] else ''}"
                f"; {visible(s['ab']['text'], one_line=True)}")
    points = (f"{s['points']:g} of {s['pairs_scored']} pairs, mean paired difference "
              f"{s['mean_diff']:+g} a deal" if s["points"] is not None else "no pair scored yet")
    counts = ", ".join(f"{k} {n}" for k, n in (s.get("matches") or {}).items() if n)
    return (f"scrimmage {s['id']}: {visible(s['bot'], one_line=True)} v "
            f"{visible(s['opponent'], one_line=True)}, {s['pairs']} pairs, {s['state']}"
            f"{' (' + visible(s['reason'], one_line=True) + ')' if s['reason'] else ''}; "
            f"{points}{'; matches: ' + counts if counts else ''}")


def cmd_scrimmage(args) -> int:
    """``scrimmage request|list|show|cancel``."""
    try:
        client = client_of(args)
        if args.scrimmage_command == "request":
            got = client.post("/api/v1/scrimmages", {"bot": args.bot, "opponent":
                                                     args.opponent, "pairs": args.pairs,
                                                     "sprt": args.sprt})
            if args.wait:
                while got["state"] in SCRIMMAGE_OPEN:
                    time.sleep(2)  # (the poll of a wait on the service)
                    got = client.get(f"/api/v1/scrimmages/{got['id']}")
            print(_scrimmage_line(got))
        elif args.scrimmage_command == "list":
            for s in client.get("/api/v1/scrimmages"):
                print(_scrimmage_line(s))
        elif args.scrimmage_command == "show":
            got = client.get(f"/api/v1/scrimmages/{args.id}")
            print(json_text(got, indent=1) if args.json else _scrimmage_line(got))
            for m in () if args.json else got.get("results") or ():
                print(f"  {result_line(client.server, m)}")
        else:
            print(_scrimmage_line(client.post(f"/api/v1/scrimmages/{args.id}/cancel")))
    except (ValueError, ServiceError) as e:
        print(f"{args.prog}: {e}", file=sys.stderr)
        return 2
    return 0


# -- the commands' arguments, wherever they are registered ---------------------------------------
SUBMIT_HELP = ("upload a bot folder or archive (.tar, .tar.gz, .tgz, .zip) to the submission "
               "service, where a worker builds and checks it")
STATUS_HELP = ("a version's state on the submission service (queued, building, checking, "
               "ready, refused, suspended), why, and in each season its rating, rank, pairs "
               "and matches")
RECORDS_HELP = ("save the records of your version's matches, one file a match (`arena replay "
                "FILE --verify` or `--seat N` reads it)")
LOGS_HELP = ("your version's build log, or its seats' logs in a match, from the submission "
             "service")
SCRIMMAGE_HELP = "test matches on the submission service that count for no standings"
SCRIMMAGES = (
    ("request", "N duplicate pairs of your ready version against another"),
    ("list", "yours, and those your bots were asked to play"),
    ("show", "one scrimmage, its result and each of its matches (the result of your bot's "
             "team, where its replay is)"),
    ("cancel", "one you asked for"))
"""The scrimmage commands and their help."""


def timeout_option(p) -> None:
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="with --wait: give up "
                   "after SECONDS (exit 3); by default it waits as long as it takes")


def wait_options(p, when: str = "") -> None:
    """``--wait`` and ``--timeout`` of an upload (``when``: what the wait needs)."""
    p.add_argument("--wait", action="store_true", help=f"{when}follow the version until it "
                   "is ready or refused, printing each state as it changes (while queued: "
                   "what it waits behind)")
    timeout_option(p)


def status_arguments(p, bots: str) -> None:
    p.add_argument("ref", metavar="NAME[@VERSION]", help="a version, or a name: your latest")
    p.add_argument("--wait", action="store_true", help="until it is ready or refused")
    timeout_option(p)
    p.add_argument("--all", action="store_true", help="every match of each season (default: "
                   "the newest 20)")
    p.add_argument("--json", action="store_true")
    server_options(p)
    p.set_defaults(func=cmd_status, prog=f"{bots} status", bots=bots)


def records_arguments(p, bots: str) -> None:
    p.add_argument("ref", metavar="NAME[@VERSION]", help="a version, or a name: your latest")
    p.add_argument("--out", metavar="DIR", default=".", help="the folder to write them in "
                   "(default: here); a record still sealed is left for later")
    server_options(p)
    p.set_defaults(func=cmd_records, prog=f"{bots} records", bots=bots)


def logs_arguments(p, bots: str) -> None:
    p.add_argument("ref", metavar="NAME@VERSION")
    p.add_argument("--match", metavar="ID", help="the logs its seats wrote in this match")
    server_options(p)
    p.set_defaults(func=cmd_logs, prog=f"{bots} logs", bots=bots)


def scrimmage_arguments(p, name: str, scrimmage: str) -> None:
    """The arguments of the scrimmage command ``name`` (``scrimmage``: the command above it,
    ``arena scrimmage``)."""
    if name == "request":
        p.add_argument("bot", metavar="NAME@VERSION", help="your version")
        p.add_argument("opponent", metavar="NAME@VERSION", help="a ready version (another "
                       "author's, or a house bot)")
        p.add_argument("--pairs", type=int, default=2)
        p.add_argument("--sprt", action="store_true", help="an A/B test instead: pairs until "
                       "a sequential test decides whether NAME@VERSION is stronger than the "
                       "opponent (another of your versions, or a house bot)")
        p.add_argument("--wait", action="store_true", help="until it is over, then its result")
    elif name in ("show", "cancel"):
        p.add_argument("id", type=int)
    if name == "show":
        p.add_argument("--json", action="store_true")
    server_options(p)
    p.set_defaults(func=cmd_scrimmage, prog=f"{scrimmage} {name}")


# -- arena-submit -------------------------------------------------------------------------------
COMMANDS = ("submit", "status", "records", "logs", "scrimmage")
"""``arena-submit``'s commands; anything else first is a bot to submit."""


def register(sub) -> None:
    """``arena-submit``'s commands: those of ``arena bots`` and ``arena scrimmage`` that talk
    to the service."""
    s = sub.add_parser("submit", help=SUBMIT_HELP + " (the default command: `arena-submit "
                       "DIR_OR_ARCHIVE`)", allow_abbrev=False, epilog=WAIT_EPILOG)
    s.add_argument("source", metavar="DIR_OR_ARCHIVE")
    wait_options(s)
    server_options(s)
    s.set_defaults(func=cmd_submit, prog=PROG, bots=PROG)
    status_arguments(sub.add_parser("status", help=STATUS_HELP, allow_abbrev=False,
                                    epilog=WAIT_EPILOG), PROG)
    records_arguments(sub.add_parser("records", help=RECORDS_HELP, allow_abbrev=False), PROG)
    logs_arguments(sub.add_parser("logs", help=LOGS_HELP, allow_abbrev=False), PROG)
    sc = sub.add_parser("scrimmage", help=SCRIMMAGE_HELP, allow_abbrev=False)
    ssub = sc.add_subparsers(dest="scrimmage_command", required=True)
    for name, text in SCRIMMAGES:
        scrimmage_arguments(ssub.add_parser(name, help=text, allow_abbrev=False), name,
                            f"{PROG} scrimmage")


def main(argv: list[str] | None = None) -> int:
    """``arena-submit``: ``arena-submit DIR_OR_ARCHIVE [--wait]``, ``arena-submit status
    NAME[@VERSION]`` and the rest of ``COMMANDS``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] not in (*COMMANDS, "-h", "--help"):
        argv.insert(0, "submit")
    p = argparse.ArgumentParser(prog=PROG, allow_abbrev=False, description="A participant's "
                                "side of a Shengji Arena league's submission service: submit "
                                "a bot (`arena-submit DIR_OR_ARCHIVE --wait`), follow it, read "
                                "its logs and match records, ask for scrimmages. The server: "
                                "--server or $ARENA_SERVER; your token: --token-file or "
                                "$ARENA_AUTHOR_TOKEN, never an argument.")
    register(p.add_subparsers(dest="command", required=True))
    args = p.parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # the reader went away (`arena-submit status X | head`)
        import os
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # (no second error as Python flushes at exit)
        return 0
