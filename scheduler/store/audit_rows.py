"""The audit log of the service's actions, and the events its rate limits count."""

from __future__ import annotations

import time

from sqlalchemy import delete, select
from sqlalchemy.engine import Engine

from scheduler.store.plain_rows import AuditEntry
from scheduler.store.schema import audit_log, limit_events


class Audit:
    """The audit log and the rate limits' events (``store.audit``)."""

    __slots__ = ("engine",)

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def write(self, action: str, *, actor: str | None = None, subject: str | None = None,
              detail: str | None = None, address: str | None = None) -> None:
        with self.engine.begin() as c:
            c.execute(audit_log.insert().values(
                at=time.time(), actor=actor, action=action[:40],
                subject=subject[:250] if subject else subject,
                detail=detail[:2000] if detail else detail,
                address=address[:64] if address else address))

    def entries(self, limit: int = 100, *, action: str | None = None) -> list[AuditEntry]:
        """The newest entries first."""
        q = select(audit_log)
        if action is not None:
            q = q.where(audit_log.c.action == action)
        with self.engine.connect() as c:
            return [AuditEntry(**r) for r in c.execute(
                q.order_by(audit_log.c.id.desc()).limit(limit)).mappings()]

    def limit_events(self, key: str, since: float) -> list[float]:
        """When each event of ``key`` since ``since`` was, oldest first."""
        with self.engine.connect() as c:
            return list(c.execute(select(limit_events.c.at).where(
                limit_events.c.key == key, limit_events.c.at >= since)
                .order_by(limit_events.c.at)).scalars())

    def add_limit_event(self, key: str, keep_s: float) -> None:
        """Count one event of ``key``; events older than ``keep_s`` are dropped."""
        now = time.time()
        with self.engine.begin() as c:
            c.execute(delete(limit_events).where(limit_events.c.key == key,
                                                 limit_events.c.at < now - keep_s))
            c.execute(limit_events.insert().values(key=key[:200], at=now))
