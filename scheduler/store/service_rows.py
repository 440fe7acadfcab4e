"""What the submission service keeps in the store (``web/service.py`` says what it means):
authors' roles and status, the states of the versions it took in (and the reads of their
crash limit: ``scheduler.crash_limit.after_forfeit``), dashboard sessions, scrimmages, the
audit log and the events its rate limits count."""

from __future__ import annotations

import json
import time

from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from scheduler.store.rows import BotVersionRow
from scheduler.store.schema import (audit_log, authors, bot_versions, bots, limit_events,
                                    matches, results, scrimmages, sessions, version_states)

#: the states of a version still on its way to ready or refused
IN_FLIGHT = ("queued", "building", "checking")
#: the states of a scrimmage not yet over
SCRIMMAGE_OPEN = ("queued", "playing")
_AUTHOR = (authors.c.name, authors.c.role, authors.c.status, authors.c.created_at,
           authors.c.changed_at)


class ServiceRows:
    """Authors, version states, sessions, scrimmages, the audit log and rate-limit events."""

    engine: Engine

    # -- authors ------------------------------------------------------------------------
    def add_author(self, name: str, token_hash: str, *, role: str = "author",
                   status: str = "active") -> bool:
        """False when an author of that name exists (nothing changed)."""
        try:
            with self.engine.begin() as c:
                c.execute(authors.insert().values(name=name, token_hash=token_hash,
                                                  created_at=time.time(), role=role,
                                                  status=status))
        except IntegrityError:
            return False
        return True

    def author_token_hash(self, name: str) -> str | None:
        """The hash of an active author's token (None: no such author, or not active)."""
        with self.engine.connect() as c:
            return c.execute(select(authors.c.token_hash).where(
                authors.c.name == name, authors.c.status == "active")).scalar()

    def author(self, name: str) -> dict | None:
        with self.engine.connect() as c:
            got = c.execute(select(*_AUTHOR).where(authors.c.name == name)).mappings().first()
        return dict(got) if got else None

    def author_by_token_hash(self, token_hash: str) -> dict | None:
        """The author whose token hashes to ``token_hash``, whatever their status."""
        with self.engine.connect() as c:
            got = c.execute(select(*_AUTHOR).where(authors.c.token_hash == token_hash)
                            ).mappings().first()
        return dict(got) if got else None

    def authors_list(self) -> list[dict]:
        with self.engine.connect() as c:
            return [dict(r) for r in c.execute(select(*_AUTHOR).order_by(
                authors.c.created_at, authors.c.name)).mappings()]

    def set_author(self, name: str, **values) -> bool:
        """Change an author's ``token_hash``, ``status`` or ``role``; their dashboard sessions
        end with it. False: no such author."""
        with self.engine.begin() as c:
            n = c.execute(update(authors).where(authors.c.name == name)
                          .values(**values, changed_at=time.time())).rowcount
            c.execute(delete(sessions).where(sessions.c.author == name))
        return bool(n)

    # -- versions the service took in ----------------------------------------------------
    def add_version_state(self, version_id: int, state: str = "queued") -> None:
        with self.engine.begin() as c:
            c.execute(version_states.insert().values(version_id=version_id, state=state,
                                                     updated_at=time.time()))

    def bot_version_by_id(self, version_id: int) -> BotVersionRow | None:
        with self.engine.connect() as c:
            got = c.execute(select(bot_versions).where(bot_versions.c.id == version_id)
                            ).mappings().first()
        return BotVersionRow(**got) if got else None

    def version_state(self, version_id: int) -> dict | None:
        with self.engine.connect() as c:
            got = c.execute(select(version_states).where(
                version_states.c.version_id == version_id)).mappings().first()
        return dict(got) if got else None

    def version_states(self, version_ids) -> dict[int, dict]:
        """{version id: its state row} of those with one (the others are ready as stored)."""
        ids = list(version_ids)
        if not ids:
            return {}
        with self.engine.connect() as c:
            return {r["version_id"]: dict(r) for r in c.execute(select(version_states).where(
                version_states.c.version_id.in_(ids))).mappings()}

    def claim_version(self, version_id: int, worker: str, stale_after_s: float) -> bool:
        """Take a queued version to build (or one whose builder fell silent ``stale_after_s``
        ago); False: another has it, or it is done."""
        now = time.time()
        with self.engine.begin() as c:
            n = c.execute(update(version_states).where(
                version_states.c.version_id == version_id,
                version_states.c.withdrawn_at.is_(None),
                or_(version_states.c.state == "queued",
                    (version_states.c.state.in_(("building", "checking")))
                    & (version_states.c.updated_at < now - stale_after_s)))
                .values(state="building", claimed_by=worker, updated_at=now)).rowcount
        return bool(n)

    def set_version_state(self, version_id: int, state: str, *, reason: str | None = None,
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

    def intake_queue(self, resend_after_s: float, stale_after_s: float) -> list[dict]:
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
            if state != "queued" and updated_at < now - stale_after_s:
                state, sent_at = "queued", None
            out.append({"version_id": vid, "author": author, "state": state,
                        "sent": sent_at is not None and sent_at >= now - resend_after_s})
        return out

    def mark_version_sent(self, version_id: int) -> None:
        with self.engine.begin() as c:
            c.execute(update(version_states).where(version_states.c.version_id == version_id)
                      .values(sent_at=time.time()))

    def withdraw_version(self, version_id: int, reason: str) -> None:
        """Out of future seasons (seasons that pinned it keep it)."""
        now = time.time()
        with self.engine.begin() as c:
            n = c.execute(update(version_states).where(
                version_states.c.version_id == version_id).values(
                withdrawn_at=now, reason=reason, updated_at=now)).rowcount
            if not n:
                c.execute(version_states.insert().values(
                    version_id=version_id, state="ready", reason=reason, updated_at=now,
                    withdrawn_at=now))

    # -- the crash limit (``scheduler.crash_limit.after_forfeit``) -------------------------
    def ready_service_versions(self, content_hash: str) -> list[dict]:
        """The versions the service took in with content ``content_hash`` that are ready and
        not withdrawn: ``version_id``, ``name``, ``version`` and ``updated_at`` (when they were
        made ready)."""
        with self.engine.connect() as c:
            return [dict(r) for r in c.execute(select(
                version_states.c.version_id, bot_versions.c.name, bot_versions.c.version,
                version_states.c.updated_at).select_from(version_states.join(
                    bot_versions, bot_versions.c.id == version_states.c.version_id)).where(
                bot_versions.c.content_hash == content_hash, version_states.c.state == "ready",
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
            team = 0 if json.loads(seats_json)[0] == bot else 1
            out[match_id] = out.get(match_id, False) or forfeit_team == team
        return list(out.items())[:limit]

    def suspend_version(self, version_id: int, reason: str) -> bool:
        """A ready version suspended with ``reason``; False: it was not ready (suspended by
        another worker already, withdrawn, or never ready)."""
        with self.engine.begin() as c:
            return bool(c.execute(update(version_states).where(
                version_states.c.version_id == version_id, version_states.c.state == "ready",
                version_states.c.withdrawn_at.is_(None))
                .values(state="suspended", reason=reason[:4000],
                        updated_at=time.time())).rowcount)

    def unsuspend_version(self, version_id: int, reason: str | None = None) -> bool:
        """A suspended version ready again (its crash limit counts its matches from now);
        False: it was not suspended."""
        with self.engine.begin() as c:
            return bool(c.execute(update(version_states).where(
                version_states.c.version_id == version_id,
                version_states.c.state == "suspended")
                .values(state="ready", reason=reason, updated_at=time.time())).rowcount)

    def versions_in_flight(self, author: str) -> int:
        with self.engine.connect() as c:
            return c.execute(select(func.count()).select_from(version_states.join(
                bot_versions, bot_versions.c.id == version_states.c.version_id)).where(
                bot_versions.c.author == author, version_states.c.state.in_(IN_FLIGHT),
                version_states.c.withdrawn_at.is_(None))).scalar_one()

    def versions_submitted_since(self, author: str, since: float) -> list[float]:
        """When each of ``author``'s versions submitted since ``since`` was, oldest first."""
        with self.engine.connect() as c:
            return list(c.execute(select(bot_versions.c.submitted_at).where(
                bot_versions.c.author == author, bot_versions.c.submitted_at >= since)
                .order_by(bot_versions.c.submitted_at)).scalars())

    def version_queue(self) -> list[dict]:
        """The versions not yet ready or refused, oldest first, with their names."""
        with self.engine.connect() as c:
            return [dict(r) for r in c.execute(select(
                bot_versions.c.name, bot_versions.c.version, bot_versions.c.author,
                version_states.c.state, version_states.c.claimed_by,
                version_states.c.updated_at).select_from(version_states.join(
                    bot_versions, bot_versions.c.id == version_states.c.version_id)).where(
                version_states.c.state.in_(IN_FLIGHT)).order_by(
                version_states.c.version_id)).mappings()]

    # -- sessions -----------------------------------------------------------------------
    def add_session(self, id_hash: str, author: str, csrf: str, expires_at: float) -> None:
        with self.engine.begin() as c:
            c.execute(delete(sessions).where(sessions.c.expires_at < time.time()))
            c.execute(sessions.insert().values(id_hash=id_hash, author=author, csrf=csrf,
                                               created_at=time.time(), expires_at=expires_at))

    def session(self, id_hash: str) -> dict | None:
        """A live session and its author's role and status."""
        with self.engine.connect() as c:
            got = c.execute(select(sessions.c.author, sessions.c.csrf, sessions.c.expires_at,
                                   authors.c.role, authors.c.status)
                            .select_from(sessions.join(authors,
                                                       authors.c.name == sessions.c.author))
                            .where(sessions.c.id_hash == id_hash,
                                   sessions.c.expires_at > time.time())).mappings().first()
        return dict(got) if got else None

    def end_session(self, id_hash: str) -> None:
        with self.engine.begin() as c:
            c.execute(delete(sessions).where(sessions.c.id_hash == id_hash))

    # -- scrimmages ---------------------------------------------------------------------
    def add_scrimmage(self, **values) -> int:
        now = time.time()
        with self.engine.begin() as c:
            return c.execute(scrimmages.insert().values(
                **values, state="queued", created_at=now, updated_at=now)
            ).inserted_primary_key[0]

    def scrimmage(self, scrimmage_id: int) -> dict | None:
        with self.engine.connect() as c:
            got = c.execute(select(scrimmages).where(scrimmages.c.id == scrimmage_id)
                            ).mappings().first()
        return dict(got) if got else None

    def scrimmages_of(self, author: str | None = None, states=None) -> list[dict]:
        """Scrimmages ``author`` asked for or whose opponent is theirs (None: all), newest
        first; ``states``: only those."""
        q = select(scrimmages)
        if author is not None:
            q = q.where(or_(scrimmages.c.author == author,
                            scrimmages.c.opponent_author == author))
        if states is not None:
            q = q.where(scrimmages.c.state.in_(tuple(states)))
        with self.engine.connect() as c:
            return [dict(r) for r in c.execute(q.order_by(scrimmages.c.id.desc())).mappings()]

    def scrimmages_in_flight(self, author: str) -> int:
        with self.engine.connect() as c:
            return c.execute(select(func.count()).select_from(scrimmages).where(
                scrimmages.c.author == author, scrimmages.c.state.in_(SCRIMMAGE_OPEN))
            ).scalar_one()

    def scrimmage_seasons(self) -> set[str]:
        """The seasons that play scrimmages (shown to their two authors only)."""
        with self.engine.connect() as c:
            return set(c.execute(select(scrimmages.c.season).where(
                scrimmages.c.season.is_not(None))).scalars())

    def set_scrimmage(self, scrimmage_id: int, *, expect=None, **values) -> bool:
        """Change a scrimmage; with ``expect`` (states), only from one of them."""
        q = update(scrimmages).where(scrimmages.c.id == scrimmage_id)
        if expect is not None:
            q = q.where(scrimmages.c.state.in_(tuple(expect)))
        with self.engine.begin() as c:
            return bool(c.execute(q.values(**values, updated_at=time.time())).rowcount)

    # -- the audit log and rate limits --------------------------------------------------
    def audit(self, action: str, *, actor: str | None = None, subject: str | None = None,
              detail: str | None = None, address: str | None = None) -> None:
        with self.engine.begin() as c:
            c.execute(audit_log.insert().values(
                at=time.time(), actor=actor, action=action[:40],
                subject=subject[:250] if subject else subject,
                detail=detail[:2000] if detail else detail,
                address=address[:64] if address else address))

    def audit_entries(self, limit: int = 100, *, action: str | None = None) -> list[dict]:
        """The newest entries first."""
        q = select(audit_log)
        if action is not None:
            q = q.where(audit_log.c.action == action)
        with self.engine.connect() as c:
            return [dict(r) for r in c.execute(q.order_by(audit_log.c.id.desc()).limit(limit)
                                               ).mappings()]

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
