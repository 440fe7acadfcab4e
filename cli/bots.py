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
from cli import participant
from cli.common import (DB_HELP, VARIANT_HELP, db_url, existing_store, open_store,
                        sandbox_or_refuse, size_text, unsandboxed_option, VARIANTS)
from cli.text import json_text, local_time, visible
from scheduler.states import VersionState


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
    the submission service, where a worker builds and checks it (``cli.participant``)."""
    from cli.client import ServiceError, author_token
    from scheduler.registry.versions import submit
    try:
        token = author_token(args.token_file)
        if args.server or (settings.SERVER.text() and not args.db):
            if args.name or args.version or args.author:
                raise ValueError("--name, --version and --author are the manifest's and the "
                                 "token's on a server: edit bot.toml")
            return participant.upload(args, token)
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
                         epilog=participant.WAIT_EPILOG)
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
    participant.wait_options(bs, "with --server: ")
    bs.set_defaults(func=cmd_bots_submit, prog="arena bots submit", bots="arena bots")
    participant.status_arguments(bsub.add_parser("status", help=participant.STATUS_HELP,
                                                 epilog=participant.WAIT_EPILOG), "arena bots")
    participant.records_arguments(bsub.add_parser("records", help=participant.RECORDS_HELP),
                                  "arena bots")
    participant.logs_arguments(bsub.add_parser("logs", help=participant.LOGS_HELP), "arena bots")
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

