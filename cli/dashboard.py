"""``arena web``: the read-only dashboard over the store."""

from __future__ import annotations

from cli.common import DB_HELP, db_url


def cmd_web(args) -> int:
    """``arena web``: the read-only dashboard over the store, served by uvicorn."""
    import uvicorn

    from scheduler.store import StoreError, StoreVersionError
    from web.app import NoStore, create_app
    url = db_url(args)
    try:
        app = create_app(url)
    except NoStore as e:
        raise SystemExit(f"arena web: {e}; name another with --db or $ARENA_DB") from None
    except (StoreVersionError, StoreError) as e:
        raise SystemExit(f"arena web: --db {e}") from None
    print(f"arena web: {url} on http://{args.host}:{args.port}/", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def register(sub) -> None:
    web = sub.add_parser("web", help="a read-only dashboard over the store (pages and a JSON "
                         "API under /api)")
    web.add_argument("--db", help=DB_HELP)
    web.add_argument("--host", default="127.0.0.1", help="the address to bind (default "
                     "127.0.0.1: this machine only)")
    web.add_argument("--port", type=int, default=8000)
    web.set_defaults(func=cmd_web)
