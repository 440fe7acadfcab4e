"""``arena serve`` (the submission service and the dashboard, over one store), the participant's
``arena scrimmage`` commands (``cli.participant``), and the organiser's ``arena authors`` and
``arena audit``."""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import TYPE_CHECKING

from house import settings
from cli import participant
from cli.common import (DB_HELP, CommandError, broker_url, db_url, open_store, sandbox_or_refuse,
                        unsandboxed_option)
from cli.text import json_text, local_time, visible
from scheduler.states import AuthorStatus

if TYPE_CHECKING:
    from scheduler.dispatch import Sender


@dataclasses.dataclass(frozen=True)
class ServerBounds:
    """What the HTTP server of ``arena serve`` holds open, and for how long."""
    connections: int = 500          # open connections; past it a request is answered 503
    keep_alive_s: float = 5.0       # an idle connection between requests
    header_s: float = 10.0          # a request's line and headers, from the connection's
    #                                 start or the previous response, complete within this
    header_bytes: int = 16 << 10    # a request's line and headers, at most


def server_config(app, host: str, port: int, bounds: ServerBounds = ServerBounds(), *,
                  proxy_headers: bool = False, forwarded_allow: str = "127.0.0.1"):
    """uvicorn's settings of ``arena serve`` (the tests serve with these): HTTP/1.1 by h11
    within ``bounds`` (a connection whose headers trickle in is closed, however slowly they
    come), no WebSocket; the bodies' own bounds are the app's (``web.app.BoundedBodies``)."""
    import uvicorn
    return uvicorn.Config(app, host=host, port=port, log_level="warning",
                          http=_bounded_h11(bounds.header_s), ws="none",
                          limit_concurrency=bounds.connections,
                          # (typed int by uvicorn, which hands it to a timer of seconds)
                          timeout_keep_alive=bounds.keep_alive_s,  # type: ignore[arg-type]
                          h11_max_incomplete_event_size=bounds.header_bytes,
                          proxy_headers=proxy_headers, forwarded_allow_ips=forwarded_allow)


def _bounded_h11(header_s: float):
    """uvicorn's h11 protocol, which bounds the time of a request's headers: uvicorn closes
    an idle connection after its keep-alive time, but not one that sends a byte now and then
    (slowloris), nor one trickling the rest of a body its app did not read."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class BoundedH11Protocol(H11Protocol):
        """A connection is closed when no new request's headers are in ``header_s`` seconds
        after it was made or after its previous response."""
        _headers_due = None
        _waiting_cycle = None

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._await_headers()

        def _await_headers(self) -> None:
            self._stop_waiting()
            self._waiting_cycle = self.cycle
            self._headers_due = self.loop.call_later(header_s, self._headers_late)

        def _stop_waiting(self) -> None:
            if self._headers_due is not None:
                self._headers_due.cancel()
                self._headers_due = None

        def _headers_late(self) -> None:
            self._headers_due = None
            if self.cycle is self._waiting_cycle and not self.transport.is_closing():
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.cycle is not self._waiting_cycle:  # a new request's headers are in
                self._stop_waiting()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and (self.cycle is None
                                                    or self.cycle.response_complete):
                self._await_headers()

        def connection_lost(self, exc) -> None:
            self._stop_waiting()
            super().connection_lost(exc)

    return BoundedH11Protocol


def cmd_serve(args) -> int:
    """``arena serve``: the dashboard with the submission service; with a broker, its
    dispatcher sends versions to the workers' checks and scrimmages to be played."""
    import uvicorn

    from scheduler.service.intake import Dispatcher
    from scheduler.store import StoreError, StoreVersionError
    from scheduler.store import shown_url  # (no password in a log)
    from web.app import create_app
    from scheduler.service.config import ServiceConfig
    from scheduler.service.limits import Limits
    url = db_url(args)
    try:
        limits = Limits(**{k: type(getattr(Limits(), k))(v) for k, v in
                           (item.split("=", 1) for item in args.limit or ())})
    except (TypeError, ValueError) as e:
        fields = ", ".join(f.name for f in dataclasses.fields(Limits))
        print(f"arena serve: --limit: {e}; expected NAME=NUMBER, NAME one of {fields}",
              file=sys.stderr)
        return 2
    for option, value in (("--connections", args.connections), ("--keep-alive-s",
                          args.keep_alive_s), ("--header-s", args.header_s), ("--header-bytes",
                          args.header_bytes), ("--body-s", args.body_s), ("--body-rate",
                          args.body_rate)):
        if value is not None and not value > 0:
            print(f"arena serve: {option} {value}: expected a number above 0", file=sys.stderr)
            return 2
    bodies = {k: v for k, v in (("body_s", args.body_s), ("body_rate", args.body_rate))
              if v is not None}
    from scheduler.service.ab import AbSettings
    from scheduler.service.human import HumanSettings
    try:
        ab, people = AbSettings.from_env(), HumanSettings.from_env()
    except ValueError as e:
        print(f"arena serve: {e}", file=sys.stderr)
        return 2
    config = ServiceConfig(limits=limits, self_registration=args.self_registration,
                           variant=args.variant, secure_cookies=args.secure_cookies, ab=ab,
                           human=people, **bodies)
    bounds = ServerBounds(connections=args.connections, keep_alive_s=args.keep_alive_s,
                          header_s=args.header_s, header_bytes=args.header_bytes)
    try:
        # the service creates its store (an author needs one to be added); a person's game a
        # previous run left open cannot go on
        open_store(url).humans.abandon_open("the service stopped while it was played")
        app = create_app(url, service=config)
    except (StoreVersionError, StoreError, ValueError) as e:
        print(f"arena serve: --db {e}", file=sys.stderr)
        return 2
    broker = broker_url(args)
    local = None
    sender: str | Sender
    app.state.broker = broker  # (``/me`` says the runtimes the workers' heartbeats say)
    if broker:
        sender = broker
        where = "workers through " + shown_url(broker)
    else:  # one machine: builds, checks and scrimmages on pools of this service's own
        from scheduler.dispatch import LocalSender
        try:
            sandbox_or_refuse(args)
        except CommandError as e:
            print(f"arena serve: {e}", file=sys.stderr)
            return 2
        os.environ[settings.CHECK_VARIANT.name] = args.variant  # (the pools' checks read it)
        from scheduler.service.intake import run_here
        sender = local = LocalSender(url, run_here, match_slots=args.slots, intake_slots=1)
        where = (f"builds, checks and scrimmages here ({args.slots} match slot(s) and one "
                 "intake slot; --broker URL sends them to `arena worker`s instead)")
    dispatcher = Dispatcher(app.state.store, sender, window=args.window, ab=ab).start()
    line = (f"arena serve: {shown_url(url)} on http://{args.host}:{args.port}/ (API under "
            f"/api/v1), {where}")

    class Announced(uvicorn.Server):
        """The server, which says where it serves once it listens there (not before: a
        client that reads the line may connect at once)."""

        async def startup(self, sockets=None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                print(line, flush=True)
    try:
        Announced(server_config(app, args.host, args.port, bounds,
                                proxy_headers=args.proxy_headers,
                                forwarded_allow=args.forwarded_allow)).run()
    finally:
        dispatcher.stop()
        app.state.games.close()
        if local is not None:
            local.close()
    return 0


# -- the organiser's commands on their own store -----------------------------------------
def _authors_do(args, what) -> int:
    from scheduler.registry.archives import RegistryError
    try:
        store = open_store(db_url(args))
        return what(store)
    except (RegistryError, CommandError) as e:
        print(f"arena authors {args.authors_command}: {e}", file=sys.stderr)
        return 2


def cmd_authors_add(args) -> int:
    """``arena authors add NAME``: a new author; their token is printed once, or with
    ``--token-file OUT`` written to OUT only: a new file (an existing one is refused and kept),
    readable by its owner alone (mode 0600)."""
    from scheduler.registry.owners import add_author
    role = "organiser" if args.organiser else "author"

    def add(store) -> int:
        fd = None
        if args.token_file:
            try:
                fd = os.open(args.token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                print(f"arena authors add: --token-file {args.token_file}: exists already; "
                      "it is kept as it is (give a new file)", file=sys.stderr)
                return 2
            except OSError as e:
                print(f"arena authors add: --token-file {args.token_file}: cannot be created "
                      f"({e.strerror or e})", file=sys.stderr)
                return 2
        try:
            token = add_author(store, args.name, role=role)
        except BaseException:
            if fd is not None:  # no author, no token: the new file goes too
                os.close(fd)
                os.unlink(args.token_file)
            raise
        store.audit.write("author-add", actor="organiser (command line)", subject=args.name)
        if fd is None:
            print(token)
            where = "shown once"
        else:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(token + "\n")
            where = f"written to {args.token_file}, mode 0600"
        print(f"the token of {role} {args.name} ({where}; only its hash is kept): they "
              "submit with ARENA_AUTHOR_TOKEN or --token-file, or log in on the dashboard "
              "with it", file=sys.stderr)
        return 0
    return _authors_do(args, add)


def cmd_authors_list(args) -> int:
    def show(store) -> int:
        rows = store.authors.all()
        if args.json:
            print(json_text([dataclasses.asdict(r) for r in rows], indent=1))
            return 0
        print(f"{'name':<24} {'role':<10} {'status':<9} {'created':<16}  changed")
        for r in rows:
            print(f"{visible(r.name, one_line=True):<24} {r.role:<10} {r.status:<9} "
                  f"{local_time(r.created_at):<16}  "
                  f"{local_time(r.changed_at) if r.changed_at else ''}")
        return 0
    return _authors_do(args, show)


def cmd_authors_rotate(args) -> int:
    from scheduler.registry.owners import rotate_token

    def rotate(store) -> int:
        token = rotate_token(store, args.name)
        store.audit.write("rotate", actor="organiser (command line)", subject=args.name)
        print(token)
        print(f"the new token of {args.name} (shown once); the old one no longer works",
              file=sys.stderr)
        return 0
    return _authors_do(args, rotate)


def cmd_authors_revoke(args) -> int:
    from scheduler.registry.owners import revoke_token

    def revoke(store) -> int:
        revoke_token(store, args.name)
        store.audit.write("revoke", actor="organiser (command line)", subject=args.name)
        print(f"{args.name}: no token works until `arena authors rotate {args.name}`")
        return 0
    return _authors_do(args, revoke)


def _status(status: str, action: str):
    def cmd(args) -> int:
        from scheduler.registry.archives import RegistryError

        def change(store) -> int:
            if not store.authors.change(args.name, status=status):
                raise RegistryError(f"no author {args.name!r}")
            store.audit.write(action, actor="organiser (command line)", subject=args.name)
            print(f"{args.name}: {status}")
            return 0
        return _authors_do(args, change)
    return cmd


def cmd_audit(args) -> int:
    store = open_store(db_url(args))
    rows = store.audit.entries(args.limit, action=args.action)
    if args.json:
        print(json_text([dataclasses.asdict(r) for r in rows], indent=1))
        return 0
    for r in reversed(rows):
        print(f"{local_time(r.at)}  {visible(r.action, one_line=True):<16} "
              f"{visible(r.actor or '', one_line=True):<16} "
              f"{visible(r.subject or '', one_line=True)}"
              f"{'  ' + visible(r.detail, one_line=True) if r.detail else ''}"
              f"{'  from ' + visible(r.address, one_line=True) if r.address else ''}")
    return 0


def register(sub) -> None:
    s = sub.add_parser("serve", help="the submission service: authors upload bots, follow "
                       "their builds and logs, ask for scrimmages; with the dashboard")
    s.add_argument("--db", help=DB_HELP)
    s.add_argument("--host", default="127.0.0.1", help="the address to bind (default "
                   "127.0.0.1; behind a TLS reverse proxy in production: docs/deploy.md)")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--broker", help="the workers' Redis URL: uploads are built and checked "
                   "and scrimmages played by `arena worker`s (default $ARENA_BROKER; none: "
                   "on this machine, by the service's own processes)")
    s.add_argument("--slots", type=int, default=1, help="with no broker: the match slots "
                   "of the service's own pool, for scrimmages (default 1; builds and checks "
                   "have one slot of their own)")
    unsandboxed_option(s)
    s.add_argument("--variant", default="two-deck-fry", help="the variant of checks and "
                   "scrimmages")
    s.add_argument("--window", type=int, default=4, help="matches of each scrimmage in the "
                   "queue at once (default 4)")
    s.add_argument("--limit", action="append", metavar="NAME=NUMBER", help="a limit, e.g. "
                   "archive_bytes=8388608, versions_per_day=20, builds_in_flight=2, "
                   "scrimmages_in_flight=2, scrimmage_pairs=8, logins=10, refused_uploads=10, "
                   "uploads_at_once=2, upload_s=60 (repeatable)")
    s.add_argument("--self-registration", action="store_true", help="let anyone ask for an "
                   "author name (POST /api/v1/register); the organiser approves each")
    s.add_argument("--secure-cookies", action="store_true", help="the session cookie only "
                   "over HTTPS (behind a TLS proxy)")
    s.add_argument("--proxy-headers", action="store_true", help="trust X-Forwarded-For from "
                   "--forwarded-allow (the client's address for the login limit)")
    s.add_argument("--forwarded-allow", default="127.0.0.1", help="the proxy's address")
    d = ServerBounds()
    s.add_argument("--connections", type=int, default=d.connections, help="open connections "
                   f"at most; past it a request is answered 503 (default {d.connections})")
    s.add_argument("--keep-alive-s", type=float, default=d.keep_alive_s, help="an idle "
                   f"connection is closed after this (default {d.keep_alive_s:g})")
    s.add_argument("--header-s", type=float, default=d.header_s, help="a connection whose "
                   "request line and headers are not all in this long after it opened (or "
                   f"after its previous response) is closed (default {d.header_s:g})")
    s.add_argument("--header-bytes", type=int, default=d.header_bytes, help="a request's line "
                   f"and headers at most, else 400 (default {d.header_bytes})")
    s.add_argument("--body-s", type=float, help="a request body that pauses "
                   "this long, or falls behind --body-rate after this long, is answered 408 "
                   "(default 20)")
    s.add_argument("--body-rate", type=int, help="bytes a second a request "
                   "body keeps up after its first --body-s (default 32768)")
    s.set_defaults(func=cmd_serve)

    authors = sub.add_parser("authors", help="the authors of the registry and the service")
    asub = authors.add_subparsers(dest="authors_command", required=True)
    aa = asub.add_parser("add", help="a new author; prints their token once (or writes it "
                         "to --token-file)")
    aa.add_argument("name")
    aa.add_argument("--token-file", metavar="OUT", help="write the token to OUT, a new file "
                    "only its owner may read (mode 0600), instead of printing it")
    aa.add_argument("--organiser", action="store_true", help="the organiser's role: sees and "
                    "does everything on the service")
    aa.set_defaults(func=cmd_authors_add)
    al = asub.add_parser("list", help="every author, their role and status")
    al.add_argument("--json", action="store_true")
    al.set_defaults(func=cmd_authors_list)
    for name, func, text in (
            ("rotate", cmd_authors_rotate, "a new token (printed once); the old one stops "
             "working"),
            ("revoke", cmd_authors_revoke, "no token of theirs works until rotated"),
            ("disable", _status(AuthorStatus.DISABLED, "disable"),
             "no login nor write; versions stay"),
            ("enable", _status(AuthorStatus.ACTIVE, "enable"), "active again"),
            ("approve", _status(AuthorStatus.ACTIVE, "approve"),
             "a self-registered author: active")):
        p = asub.add_parser(name, help=text)
        p.add_argument("name")
        p.set_defaults(func=func)
    for p in asub.choices.values():
        p.add_argument("--db", help=DB_HELP)

    au = sub.add_parser("audit", help="the audit log: submissions, logins, limits, the "
                        "organiser's actions")
    au.add_argument("--db", help=DB_HELP)
    au.add_argument("--limit", type=int, default=100)
    au.add_argument("--action", help="only entries of this action (submit, login, limit, ...)")
    au.add_argument("--json", action="store_true")
    au.set_defaults(func=cmd_audit)

    sc = sub.add_parser("scrimmage", help=participant.SCRIMMAGE_HELP)
    ssub = sc.add_subparsers(dest="scrimmage_command", required=True)
    for name, text in participant.SCRIMMAGES:
        participant.scrimmage_arguments(ssub.add_parser(name, help=text), name,
                                        "arena scrimmage")
