"""``arena bots`` (check a bot, and the registry's versions: submit, list, show, remove,
withdraw, unsuspend) and ``arena authors`` (the registry's authors)."""

from __future__ import annotations

import dataclasses
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from house import settings
from cli.common import (DB_HELP, VARIANT_HELP, db_url, existing_store, json_text, local_time,
                        open_store, sandbox_or_refuse, size_text, unsandboxed_option,
                        VARIANTS, visible)
from scheduler.states import IN_FLIGHT, VersionState


#: the season whose form a check takes without ``--season``: the default one (``make demo``)
DEFAULT_SEASON = Path(__file__).resolve().parent.parent / "seasons" / "demo.toml"


def check_like_of(args):
    """What ``arena bots check`` plays (``scheduler.league.CheckLike``): a pair of matches of
    the season file ``--season`` as it admits a bot, else of the default season, with the
    variant, deals per match and time allowance given."""
    from scheduler.league import check_like, season_check
    from scheduler.season import load_season, new_secret
    given = [f"--{k.replace('_', '-')}" for k in ("variant", "deals", "per_decision_ms")
             if getattr(args, k) is not None]
    if args.season:
        if given:
            raise ValueError(f"{', '.join(given)}: not with --season: the season file "
                             f"{args.season} gives the variant, the deals per match and the "
                             "time control")
        season = load_season(args.season)
        if args.seed is not None:
            season = dataclasses.replace(season, secret=args.seed)
        return season_check(season)
    config = load_season(DEFAULT_SEASON).config
    if args.variant is not None:
        from referee.rules.variants import rules_for
        level = rules_for(args.variant).start_level
        config = dataclasses.replace(config, variant=args.variant, options={},
                                     start_levels=(level, level))
    if args.deals is not None:
        config = dataclasses.replace(config, deals_per_set=args.deals)
    if args.per_decision_ms is not None:
        config = dataclasses.replace(config, time_control=dataclasses.replace(
            config.time_control, per_decision_ms=args.per_decision_ms))
    return check_like(config, secret=args.seed if args.seed is not None else new_secret(),
                      rng=random.SystemRandom())


def cmd_bots_check(args) -> int:
    from referee.seats.manifest import ManifestError, load_manifest
    from referee.rules.variants import rules_for
    from scheduler.league import smoke_check
    from scheduler.season import SeasonBot, SeasonError
    try:
        sandbox_or_refuse(args)
        manifest = load_manifest(args.manifest)
        if args.deals is not None and args.deals < 1:
            raise ValueError(f"--deals {args.deals}: expected 1 or more deals per match")
        like = check_like_of(args)
        rules_for(like.variant, like.options)
    except (ManifestError, SeasonError, ValueError) as e:
        print(f"arena bots check: {e}", file=sys.stderr)
        return 2
    t = time.perf_counter()
    label = visible(manifest.label, one_line=True)
    with tempfile.TemporaryDirectory(prefix="arena-check-") as tmp:
        played = manifest
        if manifest.build:  # checked as it plays: built, in the sandbox
            from referee.seats.build import BuildFailed, build_bot, discard
            try:
                built = build_bot(manifest, manifest.folder, Path(tmp) / "built").folder
            except BuildFailed as e:
                print(f"FAIL {label} ({manifest.path}): {visible(e)}")
                return 1
            played = manifest.moved(built)
        why = smoke_check(SeasonBot(manifest.name, played), like,
                          workdir=Path(args.workdir) / f"check-{manifest.name}")
        if manifest.build:
            discard(played.folder)
    if why:
        print(f"FAIL {label} ({manifest.path}): {visible(why)}")
        return 1
    a, b = like.match_ids()
    print(f"ok   {label} ({manifest.path}): a duplicate pair of {like.variant} matches as "
          f"season {visible(like.season, one_line=True)} plays them ({a}, {b}), "
          f"{len(like.deals)} deal(s) each, on both sides against random, no faults, "
          f"{time.perf_counter() - t:.1f}s")
    return 0


def cmd_bots_submit(args) -> int:
    """``arena bots submit``: store a bot folder or archive as an immutable version (its
    build, if it has one, must pass in the sandbox first); with ``--server``, upload it to
    the submission service, where a worker builds and checks it."""
    from cli.client import ServiceError, author_token
    from scheduler.registry.versions import submit
    try:
        token = author_token(args.token_file)
        if args.server or (settings.SERVER.text() and not args.db):
            return _upload(args, token)
        store = open_store(db_url(args))
        got = submit(store, Path(args.source), name=args.name, version=args.version,
                     author=args.author, token=token)
    except (ValueError, ServiceError) as e:  # RegistryError, CommandError, the service
        print(f"arena bots submit: {e}", file=sys.stderr)
        return 2
    v = got.version
    print(f"{visible(v.ref, one_line=True)} {v.content_hash}" +
          (" already submitted" if got.already else f" ({v.files} files, {size_text(v.size)})"))
    return 0


def _upload(args, token: str | None) -> int:
    """The folder packed here (or the archive as it is) and sent to the service."""
    import gzip
    from cli.client import client_of
    from scheduler.registry.archives import is_archive
    from scheduler.registry.packing import pack_folder
    if args.name or args.version or args.author:
        raise ValueError("--name, --version and --author are the manifest's and the token's "
                         "on a server: edit bot.toml")
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
    print(f"{visible(v['name'], one_line=True)}@{visible(v['version'], one_line=True)} "
          f"{v['content_hash']} {v['state']} (uploaded {size_text(len(data))}; `arena bots "
          f"status {visible(v['name'], one_line=True)}@{visible(v['version'], one_line=True)}"
          " --wait` follows its build and check)")
    if getattr(args, "wait", False):
        return _wait(client, v, args.timeout)
    return 0


#: ``--wait``'s exit status when ``--timeout`` passes first
TIMED_OUT = 3
WAIT_EPILOG = """exit status: 0 ready (without --wait: stored); 1 refused (or, for status, not
ready); 2 the command or the service refused the request, or the service could not be reached;
3 --timeout passed before the version was ready or refused (it goes on on the service)"""


def _wait(client, v: dict, timeout_s: float | None) -> int:
    """Follow a version on the service until it is ready or refused, printing each state as
    it changes, and while it is queued what it waits behind: 0 ready, 1 refused, ``TIMED_OUT``
    when ``timeout_s`` passes first."""
    from cli.client import quoted
    from scheduler.service.versions import ahead_text
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
            print(f"arena bots: {ref} is still {v['state']} after {timeout_s:g} s (--timeout); "
                  f"the service goes on with it: `arena bots status {ref} --wait` follows it",
                  file=sys.stderr)
            return TIMED_OUT
        time.sleep(1 if left is None else min(1, left))  # (the poll of a wait on the service)
        v = client.get("/api/v1/bots/" + quoted(v["name"], v["version"]))
    if v["state"] in (VersionState.REFUSED, VersionState.SUSPENDED) and v.get("reason"):
        print(f"  why: {visible(v['reason'])}")
    return 0 if v["state"] == VersionState.READY else 1


def _ref(args):
    """The client, and the name and version ``args.ref`` names (a name: your latest)."""
    from cli.client import client_of
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
    from cli.client import quoted
    from web.results import MAX_PAGE
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


def cmd_bots_status(args) -> int:
    """``arena bots status NAME[@VERSION] --server URL``: a version's state on the service
    (a name: its latest), why it was refused, and in each season it plays in its rating, rank,
    pairs and matches, newest first."""
    from cli.client import ServiceError, quoted
    try:
        client, name, version = _ref(args)
        v = client.get("/api/v1/bots/" + quoted(name, version))
        if args.wait and v["state"] in IN_FLIGHT:
            if _wait(client, v, args.timeout) == TIMED_OUT:
                return TIMED_OUT
            v = client.get("/api/v1/bots/" + quoted(name, version))
        got = _results(client, name, version, args.all)
    except (ValueError, ServiceError) as e:
        print(f"arena bots status: {e}", file=sys.stderr)
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
          f"{', a build log (arena bots logs NAME@VERSION)' if v['has_build_log'] else ''}")
    if v["seasons"]:
        print(f"  seasons: {', '.join(visible(s, one_line=True) for s in v['seasons'])}")
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


def cmd_bots_records(args) -> int:
    """``arena bots records NAME@VERSION --server URL [--out DIR]``: the record of every match
    the version played that may be served, one file a match (``arena replay FILE`` reads it)."""
    from cli.client import ServiceError, quoted
    from web.results import record_file_name
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
        print(f"arena bots records: {e}", file=sys.stderr)
        return 2
    sealed = sum(1 for m in rows if m["sealed"])
    print(f"{wrote} record(s) of {visible(name, one_line=True)}@{visible(version, one_line=True)}"
          f" in {out}" + (f"; {sealed} sealed until their mirrors are played" if sealed else ""),
          file=sys.stderr)
    return 0


def cmd_bots_logs(args) -> int:
    """``arena bots logs NAME@VERSION --server URL``: its build log (``--build``), or the logs
    its seats wrote in a match (``--match ID``): the author's only."""
    from cli.client import ServiceError, quoted
    from cli.client import client_of
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
        print(f"arena bots logs: {e}", file=sys.stderr)
        return 2
    return 0


def cmd_bots_list(args) -> int:
    """``arena bots list``: every bot version in the registry, oldest first."""
    store = existing_store(db_url(args), "arena bots list: no bot versions to list")
    rows = store.registry.versions()
    if args.json:
        print(json_text([dataclasses.asdict(r) for r in rows], indent=1))
        return 0
    if not rows:
        print(f"no bot versions in {store.url}")
        return 0
    shown = {r.id: (visible(r.name, one_line=True), visible(r.version, one_line=True),
                    visible(r.author or "", one_line=True)) for r in rows}
    nw = max(4, *(len(shown[r.id][0]) for r in rows))
    vw = max(7, *(len(shown[r.id][1]) for r in rows))
    print(f"{'name':<{nw}} {'version':<{vw}} {'hash':<12} {'protocol':<8} {'size':>10}  "
          f"{'submitted':<16}  author")
    for r in rows:
        name, version, author = shown[r.id]
        print(f"{name:<{nw}} {version:<{vw}} {r.content_hash[:12]} {r.protocol:<8} "
              f"{size_text(r.size):>10}  {local_time(r.submitted_at):<16}  {author}")
    return 0


def cmd_bots_show(args) -> int:
    """``arena bots show NAME[@VERSION]``: a version's fields and files."""
    from scheduler.registry import submissions
    from scheduler.registry.archives import RegistryError
    store = existing_store(db_url(args), f"arena bots show: no bot {args.ref!r}")
    try:
        v = submissions.resolve(store, args.ref)
        files = submissions.listing(store, v)
    except RegistryError as e:
        print(f"arena bots show: {e}", file=sys.stderr)
        return 2

    def field(text) -> str:  # the author's text, its escapes shown unless --raw
        return str(text) if args.raw else visible(text, one_line=True)
    for k in ("name", "version", "content_hash", "author", "protocol", "language", "size",
              "files"):
        print(f"{k + ':':<14}{field(getattr(v, k)) if getattr(v, k) is not None else ''}")
    print(f"{'submitted:':<14}{local_time(v.submitted_at)}")
    manifest = (json.dumps(v.manifest_fields, ensure_ascii=False, sort_keys=True) if args.raw
                else json_text(v.manifest_fields, sort_keys=True))
    print(f"{'manifest:':<14}{manifest}")
    print("files:")
    for f in files:
        what = (f"-> {field(f['target'])}" if f["type"] == "link" else "" if f["type"] == "dir"
                else size_text(f["size"]))
        print(f"  {f['mode']:04o} {field(f['path'])}{'/' if f['type'] == 'dir' else ''} {what}"
              .rstrip())
    return 0


def cmd_bots_remove(args) -> int:
    """``arena bots remove NAME@VERSION``: refused while a season pins it."""
    from scheduler.registry import submissions
    from scheduler.registry.archives import RegistryError
    store = existing_store(db_url(args), f"arena bots remove: no bot {args.ref!r}")
    try:
        v = submissions.remove(store, args.ref)
    except RegistryError as e:
        print(f"arena bots remove: {e}", file=sys.stderr)
        return 2
    print(f"removed {visible(v.ref, one_line=True)} ({v.content_hash[:12]})")
    return 0


def cmd_bots_withdraw(args) -> int:
    """``arena bots withdraw NAME@VERSION``: out of every future season (a season that pinned
    it keeps it); the organiser's, on their own store."""
    from scheduler.registry import submissions
    from scheduler.registry.archives import RegistryError
    store = existing_store(db_url(args), f"arena bots withdraw: no bot {args.ref!r}")
    try:
        if not args.ref.partition("@")[2]:
            raise RegistryError(f"{args.ref}: name the version to withdraw (name@version)")
        v = submissions.resolve(store, args.ref)
    except RegistryError as e:
        print(f"arena bots withdraw: {e}", file=sys.stderr)
        return 2
    why = f"withdrawn by the organiser{': ' + args.reason if args.reason else ''}"
    store.versions.withdraw(v.id, why[:500])
    store.audit.write("withdraw", actor="organiser (command line)", subject=v.ref,
                      detail=args.reason)
    print(f"withdrew {visible(v.ref, one_line=True)}: no future season plays it")
    return 0


def cmd_bots_unsuspend(args) -> int:
    """``arena bots unsuspend NAME@VERSION``: a version the crash limit suspended is ready
    again (its limit counts its matches from now on); the organiser's, on their own store."""
    from scheduler.registry import submissions
    from scheduler.registry.archives import RegistryError
    store = existing_store(db_url(args), f"arena bots unsuspend: no bot {args.ref!r}")
    try:
        if not args.ref.partition("@")[2]:
            raise RegistryError(f"{args.ref}: name the version to unsuspend (name@version)")
        v = submissions.resolve(store, args.ref)
        st = store.versions.state(v.id)
        was = st.reason if st else None
        lifted = "suspension lifted by the organiser" + (f": {args.reason}" if args.reason
                                                         else "")
        if not store.versions.unsuspend(v.id, lifted[:4000]):
            raise RegistryError(f"{args.ref}: not suspended (its state: "
                                f"{st.state if st else VersionState.READY})")
    except RegistryError as e:
        print(f"arena bots unsuspend: {e}", file=sys.stderr)
        return 2
    store.audit.write("unsuspend", actor="organiser (command line)", subject=v.ref,
                      detail=f"{args.reason or ''} (was: {was})"[:2000])
    print(f"unsuspended {visible(v.ref, one_line=True)}: ready again; its crash limit counts "
          "its matches from now on")
    return 0


def timeout_option(parser) -> None:
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="with --wait: give up "
                        "after SECONDS (exit 3); by default it waits as long as it takes")


def register(sub) -> None:
    bots = sub.add_parser("bots", help="bot manifests")
    bsub = bots.add_subparsers(dest="bots_command", required=True)
    bc = bsub.add_parser("check", help="the smoke matches a bot must pass to join a season: "
                         "a duplicate pair against random, as a season plays one (its match "
                         "ids, rules, time control, sandbox limits and deals per match)")
    bc.add_argument("manifest")
    bc.add_argument("--season", metavar="FILE", help="check the bot as this season file admits "
                    "it (default: a pair of the default season, seasons/demo.toml, with the "
                    "options below)")
    bc.add_argument("--variant", choices=VARIANTS, metavar="VARIANT",
                    help=VARIANT_HELP)
    bc.add_argument("--deals", type=int, help="deals in each match (default: the default "
                    "season's deals_per_set)")
    bc.add_argument("--seed", help="the key of the deals' seeds (default: a fresh random one)")
    bc.add_argument("--per-decision-ms", type=int, help="each decision's allowance in ms "
                    "(default: the default season's)")
    bc.add_argument("--workdir", default="records/checks")
    unsandboxed_option(bc)
    bc.set_defaults(func=cmd_bots_check)
    bs = bsub.add_parser("submit", help="store a bot folder or archive (.tar, .tar.gz, .tgz, "
                         ".zip) in the registry as an immutable version",
                         allow_abbrev=False,  # no --token for --token-file: never a token
                         epilog=WAIT_EPILOG)
    bs.add_argument("source", metavar="DIR_OR_ARCHIVE")
    bs.add_argument("--name", help="the bot's name (default: the manifest's)")
    bs.add_argument("--version", help="the version (default: the manifest's)")
    bs.add_argument("--author", help="the author submitting: a name belongs to the author of "
                    "its first version, and only they add versions of it. Their token is read "
                    "from $ARENA_AUTHOR_TOKEN or --token-file and checked; --author without a "
                    "token is the organiser writing straight into their own store")
    bs.add_argument("--token-file", metavar="PATH", help="a file holding the author's token "
                    "(`arena authors add`); never give the token itself as an argument")
    bs.add_argument("--db", help=DB_HELP)
    bs.add_argument("--server", metavar="URL", help="upload to the submission service "
                    "(`arena serve`) instead of writing to a store: a worker builds and checks "
                    "the version (default $ARENA_SERVER, unless --db is given)")
    bs.add_argument("--wait", action="store_true", help="with --server: follow the version "
                    "until it is ready or refused, printing each state as it changes (while "
                    "queued: what it waits behind)")
    timeout_option(bs)
    bs.set_defaults(func=cmd_bots_submit)
    from cli.client import server_options
    st = bsub.add_parser("status", help="a version's state on the submission service (queued, "
                         "building, checking, ready, refused, suspended), why, and in each "
                         "season its rating, rank, pairs and matches", epilog=WAIT_EPILOG)
    st.add_argument("ref", metavar="NAME[@VERSION]", help="a version, or a name: your latest")
    st.add_argument("--wait", action="store_true", help="until it is ready or refused")
    timeout_option(st)
    st.add_argument("--all", action="store_true", help="every match of each season (default: "
                    "the newest 20)")
    st.add_argument("--json", action="store_true")
    server_options(st)
    st.set_defaults(func=cmd_bots_status)
    rc = bsub.add_parser("records", help="save the records of your version's matches, one "
                         "file a match (`arena replay FILE --verify` or `--seat N` reads it)")
    rc.add_argument("ref", metavar="NAME[@VERSION]", help="a version, or a name: your latest")
    rc.add_argument("--out", metavar="DIR", default=".", help="the folder to write them in "
                    "(default: here); a record still sealed is left for later")
    server_options(rc)
    rc.set_defaults(func=cmd_bots_records)
    lg = bsub.add_parser("logs", help="your version's build log, or its seats' logs in a match, "
                         "from the submission service")
    lg.add_argument("ref", metavar="NAME@VERSION")
    lg.add_argument("--match", metavar="ID", help="the logs its seats wrote in this match")
    server_options(lg)
    lg.set_defaults(func=cmd_bots_logs)
    bl = bsub.add_parser("list", help="every bot version in the registry")
    bl.add_argument("--db", help=DB_HELP)
    bl.add_argument("--json", action="store_true")
    bl.set_defaults(func=cmd_bots_list)
    bw = bsub.add_parser("show", help="a bot version's fields and files")
    bw.add_argument("ref", metavar="NAME[@VERSION]", help="a version, or a name: its latest")
    bw.add_argument("--db", help=DB_HELP)
    bw.add_argument("--raw", action="store_true", help="print the fields and file names as "
                    "stored (by default their control and invisible characters are escaped)")
    bw.set_defaults(func=cmd_bots_show)
    br = bsub.add_parser("remove", help="delete a bot version no season pins")
    br.add_argument("ref", metavar="NAME@VERSION")
    br.add_argument("--db", help=DB_HELP)
    br.set_defaults(func=cmd_bots_remove)
    wd = bsub.add_parser("withdraw", help="keep a version out of every future season (those "
                         "that pinned it keep it)")
    wd.add_argument("ref", metavar="NAME@VERSION")
    wd.add_argument("--reason", help="said to its author")
    wd.add_argument("--db", help=DB_HELP)
    wd.set_defaults(func=cmd_bots_withdraw)
    us = bsub.add_parser("unsuspend", help="make a version the crash limit suspended (it "
                         "forfeited too many of its last matches) ready again")
    us.add_argument("ref", metavar="NAME@VERSION")
    us.add_argument("--reason", help="said to its author")
    us.add_argument("--db", help=DB_HELP)
    us.set_defaults(func=cmd_bots_unsuspend)

