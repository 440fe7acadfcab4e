"""The states of the versions the submission service took in (queued, building, checking,
ready, refused, suspended; withdrawn), their intake, and the reads of their crash limit
(``scheduler.crash_limit.after_forfeit``)."""

from __future__ import annotations

import time

from sqlalchemy import func, or_, select, update
from sqlalchemy.engine import Engine

from scheduler.states import IN_FLIGHT, VersionState
from scheduler.store.plain_rows import IntakeItem, QueuedVersion, ReadyVersion, VersionStateRow
from scheduler.store.rows import decoded
from scheduler.store.schema import bot_versions, bots, matches, results, version_states


class Versions:
    """The service's versions on their way to ready, and after (``store.versions``)."""

    __slots__ = ("engine",)

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def add_state(self, version_id: int, state: str = VersionState.QUEUED) -> None:
        with self.engine.begin() as c:
            c.execute(version_states.insert().values(version_id=version_id, state=state,
                                                     updated_at=time.time()))

    def state(self, version_id: int) -> VersionStateRow | None:
        with self.engine.connect() as c:
            got = c.execute(select(version_states).where(
                version_states.c.version_id == version_id)).mappings().first()
        return VersionStateRow(**got) if got else None

    def states(self, version_ids) -> list[VersionStateRow]:
        """The state rows of those of ``version_ids`` with one (the others are ready as
        stored)."""
        ids = list(version_ids)
        if not ids:
            return []
        with self.engine.connect() as c:
            return [VersionStateRow(**r) for r in c.execute(select(version_states).where(
                version_states.c.version_id.in_(ids))).mappings()]

    def claim(self, version_id: int, worker: str, stale_after_s: float) -> bool:
        """Take a queued version to build (or one whose builder fell silent ``stale_after_s``
        ago); False: another has it, or it is done."""
        now = time.time()
        with self.engine.begin() as c:
            n = c.execute(update(version_states).where(
                version_states.c.version_id == version_id,
                version_states.c.withdrawn_at.is_(None),
                or_(version_states.c.state == VersionState.QUEUED,
                    (version_states.c.state.in_((VersionState.BUILDING, VersionState.CHECKING)))
                    & (version_states.c.updated_at < now - stale_after_s)))
                .values(state=VersionState.BUILDING, claimed_by=worker, updated_at=now)).rowcount
        return bool(n)

    def set_state(self, version_id: int, state: str, *, reason: str | None = None,
                          build_log: str | None = None, worker: str | None = None) -> bool:
        """Move a version on; with ``worker``, only while that worker holds it."""
        q = update(version_states).where(version_states.c.version_id == version_id)
        if worker is not None:
            q = q.where(version_states.c.claimed_by == worker,
                        version_states.c.state.in_(IN_FLIGHT))
        values: dict = {"state": state, "updated_at": time.time(), "reason": reason}
        if build_log is not None:
            values["build_log"] = build_log
        with self.engine.begin() as c:
            return bool(c.execute(q.values(**values)).rowcount)

    def intake_queue(self, resend_after_s: float, stale_after_s: float) -> list[IntakeItem]:
        """The versions on their way to ready, oldest first, for ``dispatch.intake_order``:
        ``version_id``, ``author``, ``state`` and ``sent`` (sent within ``resend_after_s``;
        a message older than that was lost with the broker). A version whose builder fell
        silent ``stale_after_s`` ago (its worker died) is queued and unsent again."""
        now = time.time()
        with self.engine.connect() as c:
            rows = c.execute(select(
                version_states.c.version_id, bot_versions.c.author, version_states.c.state,
                version_states.c.sent_at, version_states.c.updated_at).select_from(
                version_states.join(bot_versions,
                                    bot_versions.c.id == version_states.c.version_id)).where(
                version_states.c.withdrawn_at.is_(None),
                version_states.c.state.in_(IN_FLIGHT)).order_by(
                version_states.c.version_id)).all()
        out = []
        for vid, author, state, sent_at, updated_at in rows:
            if state != VersionState.QUEUED and updated_at < now - stale_after_s:
                state, sent_at = VersionState.QUEUED, None
            out.append(IntakeItem(vid, author, state,
                                  sent_at is not None and sent_at >= now - resend_after_s))
        return out

    def mark_sent(self, version_id: int) -> None:
        with self.engine.begin() as c:
            c.execute(update(version_states).where(version_states.c.version_id == version_id)
                      .values(sent_at=time.time()))

    def withdraw(self, version_id: int, reason: str) -> None:
        """Out of future seasons (seasons that pinned it keep it)."""
        now = time.time()
        with self.engine.begin() as c:
            n = c.execute(update(version_states).where(
                version_states.c.version_id == version_id).values(
                withdrawn_at=now, reason=reason, updated_at=now)).rowcount
            if not n:
                c.execute(version_states.insert().values(
                    version_id=version_id, state=VersionState.READY, reason=reason, updated_at=now,
                    withdrawn_at=now))

    # -- the crash limit (``scheduler.crash_limit.after_forfeit``) -------------------------
    def ready_with(self, content_hash: str) -> list[ReadyVersion]:
        """The versions the service took in with content ``content_hash`` that are ready and
        not withdrawn: ``version_id``, ``name``, ``version`` and ``updated_at`` (when they were
        made ready)."""
        with self.engine.connect() as c:
            return [ReadyVersion(**r) for r in c.execute(select(
                version_states.c.version_id, bot_versions.c.name, bot_versions.c.version,
                version_states.c.updated_at).select_from(version_states.join(
                    bot_versions, bot_versions.c.id == version_states.c.version_id)).where(
                bot_versions.c.content_hash == content_hash,
                version_states.c.state == VersionState.READY,
                version_states.c.withdrawn_at.is_(None))).mappings()]

    def recent_forfeits(self, content_hash: str, *, since: float,
                        limit: int) -> list[tuple[str, bool]]:
        """The last ``limit`` matches the bot of content ``content_hash`` played whose results
        were written after ``since``, newest first: (match id, whether its team forfeited).
        One query: the seasons that pinned it, by the name each gave it (a match's pairing is
        "a|b": its two bots' names)."""
        name = bots.c.name
        sits = or_(func.substr(matches.c.pairing, 1, func.length(name) + 1) == name + "|",
                   func.substr(matches.c.pairing, func.length(matches.c.pairing)
                               - func.length(name)) == "|" + name)
        with self.engine.connect() as c:
            rows = c.execute(select(matches.c.id, matches.c.seats_json, results.c.forfeit_team,
                                    name).select_from(
                results.join(matches, matches.c.id == results.c.match_id)
                .join(bots, bots.c.season == matches.c.season)).where(
                bots.c.version_hash == content_hash, results.c.written_at > since, sits)
                .order_by(results.c.written_at.desc(), matches.c.id.desc())
                .limit(2 * limit)).all()  # (a bot entered twice in a season: a match twice)
        out: dict[str, bool] = {}
        for match_id, seats_json, forfeit_team, bot in rows:
            team = 0 if decoded(seats_json)[0] == bot else 1
            out[match_id] = out.get(match_id, False) or forfeit_team == team
        return list(out.items())[:limit]

    def suspend(self, version_id: int, reason: str) -> bool:
        """A ready version suspended with ``reason``; False: it was not ready (suspended by
        another worker already, withdrawn, or never ready)."""
        with self.engine.begin() as c:
            return bool(c.execute(update(version_states).where(
                version_states.c.version_id == version_id,
                version_states.c.state == VersionState.READY,
                version_states.c.withdrawn_at.is_(None))
                .values(state=VersionState.SUSPENDED, reason=reason[:4000],
                        updated_at=time.time())).rowcount)

    def unsuspend(self, version_id: int, reason: str | None = None) -> bool:
        """A suspended version ready again (its crash limit counts its matches from now);
        False: it was not suspended."""
        with self.engine.begin() as c:
            return bool(c.execute(update(version_states).where(
                version_states.c.version_id == version_id,
                version_states.c.state == VersionState.SUSPENDED)
                .values(state=VersionState.READY, reason=reason, updated_at=time.time())).rowcount)

    def in_flight(self, author: str) -> int:
        with self.engine.connect() as c:
            return c.execute(select(func.count()).select_from(version_states.join(
                bot_versions, bot_versions.c.id == version_states.c.version_id)).where(
                bot_versions.c.author == author, version_states.c.state.in_(IN_FLIGHT),
                version_states.c.withdrawn_at.is_(None))).scalar_one()

    def submitted_since(self, author: str, since: float) -> list[float]:
        """When each of ``author``'s versions submitted since ``since`` was, oldest first."""
        with self.engine.connect() as c:
            return list(c.execute(select(bot_versions.c.submitted_at).where(
                bot_versions.c.author == author, bot_versions.c.submitted_at >= since)
                .order_by(bot_versions.c.submitted_at)).scalars())

    def queue(self) -> list[QueuedVersion]:
        """The versions not yet ready or refused, oldest first, with their names."""
        with self.engine.connect() as c:
            return [QueuedVersion(**r) for r in c.execute(select(
                bot_versions.c.name, bot_versions.c.version, bot_versions.c.author,
                version_states.c.state, version_states.c.claimed_by,
                version_states.c.updated_at).select_from(version_states.join(
                    bot_versions, bot_versions.c.id == version_states.c.version_id)).where(
                version_states.c.state.in_(IN_FLIGHT)).order_by(
                version_states.c.version_id)).mappings()]
