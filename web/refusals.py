"""The web edge's one map from a refusal to its HTTP status and headers: the domain says why
(``scheduler.errors.Refusal``), only this module says how that reads in HTTP."""

from __future__ import annotations

from scheduler.errors import Refusal, Refused

#: the HTTP status of each refusal
STATUS: dict[Refusal, int] = {
    Refusal.MALFORMED: 400,
    Refusal.UNAUTHENTICATED: 401,
    Refusal.FORBIDDEN: 403,
    Refusal.NOT_FOUND: 404,
    Refusal.TOO_SLOW: 408,
    Refusal.TOO_LARGE: 413,
    Refusal.CONFLICT: 409,
    Refusal.LIMITED: 429,
    Refusal.FAILED: 500,
}


class SeeOther(Refused):
    """A refusal a browser is sent elsewhere for (303 to ``location``): a page asked for
    without a session goes to the login, which comes back to it."""

    def __init__(self, kind: Refusal, detail: str, location: str) -> None:
        super().__init__(kind, detail)
        self.location = location


def status_of(refused: Refused) -> int:
    """The HTTP status that answers ``refused``."""
    return 303 if isinstance(refused, SeeOther) else STATUS[refused.kind]


def headers_of(refused: Refused) -> dict[str, str]:
    """The headers that go with ``refused``'s answer: where to go instead (``SeeOther``),
    when to retry (whole seconds, at least one), and for an unauthenticated request the
    scheme its token is sent with."""
    if isinstance(refused, SeeOther):
        return {"Location": refused.location}
    out = {}
    if refused.retry_after is not None:
        out["Retry-After"] = str(max(1, int(refused.retry_after + 0.999)))
    if refused.kind is Refusal.UNAUTHENTICATED:
        out["WWW-Authenticate"] = "Bearer"
    return out
