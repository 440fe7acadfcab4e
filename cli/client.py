"""The participant's side of the submission service: HTTP calls to ``arena serve`` with the
author's token in the ``Authorization`` header (read from ``--token-file`` or
``$ARENA_AUTHOR_TOKEN``, never an argument ``ps`` would show). Standard library only."""

from __future__ import annotations

import json
import urllib.parse

from house import settings

TOKEN_ENV = settings.AUTHOR_TOKEN.name
SERVER_ENV = settings.SERVER.name
TIMEOUT_S = 120.0


class ServiceError(RuntimeError):
    """A call the service refused or could not answer; the message says which and why."""


def author_token(token_file: str | None) -> str | None:
    """``--token-file``'s token, else ``$ARENA_AUTHOR_TOKEN``; None: none given."""
    if token_file:
        try:
            with open(token_file, encoding="utf-8") as f:
                token = f.read(4096).strip()
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"--token-file {token_file}: cannot be read ({e})") from None
        if not token:
            raise ValueError(f"--token-file {token_file}: empty; expected the token "
                             "`arena authors add` printed")
        return token
    return (settings.AUTHOR_TOKEN.text() or "").strip() or None


class Client:
    """Calls to the service at ``server`` (``http(s)://host:port``) as the token's author."""

    def __init__(self, server: str, token: str | None) -> None:
        parts = urllib.parse.urlsplit(server)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"--server {server!r}: expected http(s)://HOST[:PORT]")
        self.server, self.token = server.rstrip("/"), token

    def call(self, method: str, path: str, body: bytes | None = None,
             content_type: str = "application/json", raw: bool = False):
        import urllib.error  # (here: a command's parser imports this module, not its calls)
        import urllib.request
        headers = {"Accept": "application/json", "User-Agent": "arena-cli"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if body is not None:
            headers["Content-Type"] = content_type
        req = urllib.request.Request(self.server + path, data=body, method=method,
                                     headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT_S) as r:
                data = r.read()
        except urllib.error.HTTPError as e:
            text = e.read(65536).decode("utf-8", "replace")
            try:
                detail = json.loads(text).get("detail", text)
            except (ValueError, AttributeError):
                detail = text
            retry = e.headers.get("Retry-After")
            raise ServiceError(f"{method} {path}: {e.code} {detail}"
                               + (f" (retry after {retry} s)" if retry else "")) from None
        except (urllib.error.URLError, OSError) as e:
            raise ServiceError(f"{self.server}: cannot be reached ({getattr(e, 'reason', e)})"
                               ) from None
        return data.decode("utf-8", "replace") if raw else json.loads(data or b"null")

    def get(self, path: str, raw: bool = False):
        return self.call("GET", path, raw=raw)

    def post(self, path: str, value=None):
        return self.call("POST", path, json.dumps(value if value is not None else {}).encode())


def quoted(*parts: str) -> str:
    return "/".join(urllib.parse.quote(p, safe="") for p in parts)


def client_of(args) -> Client:
    """The client of ``--server`` (or ``$ARENA_SERVER``) with ``--token-file``'s token."""
    server = args.server or settings.SERVER.text()
    if not server:
        raise ValueError(f"no --server (or ${SERVER_ENV}): the submission service's URL")
    return Client(server, author_token(args.token_file))


def server_options(p) -> None:
    p.add_argument("--server", metavar="URL", help=f"the submission service (default "
                   f"${SERVER_ENV})")
    p.add_argument("--token-file", metavar="PATH", help="a file holding your token (default "
                   "$ARENA_AUTHOR_TOKEN); never the token itself as an argument")
