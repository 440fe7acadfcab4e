"""The crash limit: a version the submission service took in that forfeits ``limit`` of its
last ``window`` matches is ``suspended`` (out of the ladders, refused for new scrimmages and
seasons, its author told why) until the organiser lifts it (``arena bots unsuspend``). The
worker that stored a forfeited match applies it (``after_forfeit``). The admission check
(``scheduler.service.intake``) cannot be told from play; this is what stands behind it.
"""

from __future__ import annotations

from dataclasses import dataclass

from house.settings import CRASH_LIMIT as LIMIT_SETTING, CRASH_WINDOW as WINDOW_SETTING

#: the defaults: suspended at this many forfeits among a version's last ``CRASH_WINDOW``
#: matches
CRASH_LIMIT: int = LIMIT_SETTING.default
CRASH_WINDOW: int = WINDOW_SETTING.default


@dataclass(frozen=True)
class CrashLimit:
    """``ARENA_CRASH_LIMIT`` forfeits of a version's last ``ARENA_CRASH_WINDOW`` matches, in the
    workers' environment (``ARENA_CRASH_LIMIT=0``: never)."""
    limit: int = CRASH_LIMIT
    window: int = CRASH_WINDOW

    def __post_init__(self) -> None:
        if not 0 <= self.limit <= self.window or self.window < 1:
            raise ValueError(f"ARENA_CRASH_LIMIT={self.limit}, ARENA_CRASH_WINDOW="
                             f"{self.window}: expected a limit from 0 (no limit) to the "
                             "window, and a window of 1 match or more")

    @classmethod
    def from_env(cls) -> "CrashLimit":
        def count(name: str, raw: str | None, default: int) -> int:
            raw = (raw or "").strip()
            if not raw:
                return default
            if not raw.isdigit():
                raise ValueError(f"{name}={raw!r}: expected a whole number of matches")
            return int(raw)
        return cls(limit=count(LIMIT_SETTING.name, LIMIT_SETTING.text(), CRASH_LIMIT),
                   window=count(WINDOW_SETTING.name, WINDOW_SETTING.text(), CRASH_WINDOW))


def after_forfeit(store, spec, seat: int, settings: CrashLimit | None = None) -> list[str]:
    """The crash limit, once the result of match ``spec`` (a ``MatchSpec``), which seat
    ``seat``'s team forfeited, is stored: each version the service took in with that seat's
    content that is ready is suspended when it forfeited ``limit`` of its last
    ``window`` matches since it was made ready (checked, or its suspension lifted); the
    reason names them, and the audit log says so. One query over those matches a version;
    nothing for a seat with no registry version, or none the service took in. Returns the
    versions suspended (name@version)."""
    settings = settings or CrashLimit.from_env()
    bots = spec.bots or []
    content = bots[seat].version_hash if seat < len(bots) else None
    if settings.limit == 0 or content is None:
        return []
    out = []
    for v in store.versions.ready_with(content):
        recent = store.versions.recent_forfeits(content, since=v.updated_at,
                                                limit=settings.window)
        lost = [m for m, forfeited in reversed(recent) if forfeited]  # as played
        if len(lost) < settings.limit:
            continue
        ref = f"{v.name}@{v.version}"
        reason = (f"forfeited {len(lost)} of its last {len(recent)} matches: "
                  f"{', '.join(lost)}")
        if store.versions.suspend(v.version_id, reason):
            store.audit.write("suspend", actor="crash limit", subject=ref,
                              detail=f"{reason} (limit: {settings.limit} of "
                              f"{settings.window})")
            out.append(ref)
    return out
