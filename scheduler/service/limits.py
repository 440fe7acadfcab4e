"""What one author (or one address) may do, and how often: the limits, and the check that
refuses past one, naming it and when it resets (each refusal of a limit is audited)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from scheduler.errors import Refusal, Refused

DAY_S = 86400.0
#: self-registrations from one address in a day
REGISTRATIONS_PER_DAY = 5


@dataclass(frozen=True, slots=True)
class Limits:
    """What one author may do; each refusal names the limit and when it resets."""
    archive_bytes: int = 8 << 20        # an upload, as sent
    unpacked_bytes: int = 64 << 20      # the archive unpacked
    versions_per_day: int = 20          # per author, in any 24 hours
    builds_in_flight: int = 2           # versions queued, building or checking, per author
    scrimmages_in_flight: int = 2       # per author
    scrimmage_pairs: int = 8            # duplicate pairs in one scrimmage
    logins: int = 10                    # failed logins per address in ``login_window_s``,
    login_window_s: float = 900.0       # and failed bearer tokens per address, apart
    body_bytes: int = 64 << 10          # a JSON or form body other than an upload
    refused_uploads: int = 10           # uploads refused per author in ``refused_window_s``
    refused_window_s: float = 3600.0
    uploads_at_once: int = 2            # uploads read or unpacked at once on the service
    upload_s: float = 60.0              # an upload's unpacking, packing and checking


def when(t: float) -> str:
    """A time as a refusal tells it (UTC, to the second)."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


def within(store, key: str, limit: int, window_s: float, what: str, *, actor: str | None,
           address: str | None = None) -> None:
    """Refuse (``Refusal.LIMITED``) when ``limit`` events of ``key`` happened in the last
    ``window_s``."""
    since = time.time() - window_s
    events = store.audit.limit_events(key, since)
    if len(events) >= limit:
        resets = events[len(events) - limit] + window_s
        store.audit.write("limit", actor=actor, subject=key, detail=what, address=address)
        raise Refused(Refusal.LIMITED,
                      f"limit reached: {limit} {what} per {window_s / 60:g} minutes; "
                      f"it resets at {when(resets)}", resets - time.time())


def within_registrations(store, address: str) -> None:
    """Self-registrations: at most ``REGISTRATIONS_PER_DAY`` a day from one address."""
    key = f"register:{address}"
    within(store, key, REGISTRATIONS_PER_DAY, DAY_S, "registrations from your address",
           actor=None, address=address)
    store.audit.add_limit_event(key, DAY_S)
