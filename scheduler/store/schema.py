"""The store's tables, its constants and its engines.

Tables: seasons, bots (name, version, content hash), matches (spec, status, attempts, lease),
results, records (the match record, packed: ``scheduler.store.packing``) and attempts (one row
per claim of a match: who played it, how it ended and why: ``arena matches SEASON --faults``); a
result keeps each deal's continuous score and the numbers the standings count (its tally
columns, so a large season's standings read no summary) beside the match's, and ``pair_scores``
a duplicate pair's W/D/L and paired difference once both its matches are done
(``scheduler/stats/power.py``).
The registry's tables (bot_versions, bot_archives, authors) are described in
``scheduler/registry/``; the submission service's (version_states, sessions, scrimmages,
audit_log, limit_events) in ``scheduler/service/``.

``metadata`` is the models; opening a store migrates it to them (``scheduler/migrations``: a
model changed is a new revision there). A column named ``*_json`` holds JSON text, read back
only by the typed rows of ``scheduler.store.rows``; the large ones of a match (its spec, its
result and summary: ``PackedJson``) are stored packed, and read back as the text written.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from sqlalchemy import (Boolean, Column, Float, ForeignKey, Index, Integer, LargeBinary,
                        MetaData, String, Table, Text, TypeDecorator, UniqueConstraint,
                        create_engine, event)
from sqlalchemy.engine import Engine

from house import settings

from scheduler.states import (AuthorStatus, MatchStatus, ScrimmageKind, ScrimmageState,
                              VersionState)
from scheduler.store.packing import pack_record, pack_text, unpack_record, unpack_text

metadata = MetaData()


class PackedJson(TypeDecorator):
    """JSON text stored packed when that is shorter (``packing.pack_text``: still text, so the
    column's type is ``Text`` on every database); it reads back as the text written, and text
    stored before the packing reads as it is."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value, dialect):
        return pack_text(value)

    def process_result_value(self, value, dialect):
        return unpack_text(value)


seasons = Table(
    "seasons", metadata,
    Column("name", String(100), primary_key=True),
    Column("config_json", Text, nullable=False),
    Column("config_hash", String(32), nullable=False),
    Column("file", Text),
    Column("created_at", Float, nullable=False),
)

# The key of each season's deal seeds, read by the scheduler only, never served: a table of its
# own, so that a season row handed around never carries it (none: its deals follow its name).
season_secrets = Table(
    "season_secrets", metadata,
    Column("season", String(100), ForeignKey("seasons.name"), primary_key=True),
    Column("secret", String(200), nullable=False),
    Column("given", Boolean, nullable=False),  # set in the season file, on purpose
)

season_cancels = Table(
    "season_cancels", metadata,
    Column("season", String(100), ForeignKey("seasons.name"), primary_key=True),
    Column("cancelled_at", Float, nullable=False),
    Column("by", String(200)),
)

bots = Table(
    "bots", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("season", String(100), ForeignKey("seasons.name"), nullable=False),
    Column("name", String(100), nullable=False),
    Column("version", String(100), nullable=False),
    Column("content_hash", String(64), nullable=False),
    Column("manifest_json", Text, nullable=False),
    Column("checked_hash", String(64)),   # the content hash that last passed `bots check`
    Column("version_hash", String(64)),   # the pinned registry version; null before the registry
    UniqueConstraint("season", "name"),
)

# The bot registry (scheduler/registry/): immutable versions, each a canonical tar of the
# bot's folder. An archive is kept once per content hash, shared by the versions that have it.
bot_versions = Table(
    "bot_versions", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(100), nullable=False),
    Column("version", String(100), nullable=False),
    Column("content_hash", String(64), nullable=False, index=True),  # sha256 of the tar
    Column("author", String(100)),
    Column("protocol", String(16), nullable=False),
    Column("language", String(40)),
    Column("size", Integer, nullable=False),     # bytes of the uncompressed tar
    Column("files", Integer, nullable=False),
    Column("manifest_json", Text, nullable=False),
    Column("submitted_at", Float, nullable=False),
    UniqueConstraint("name", "version", name="uq_bot_versions_name_version"),
)

bot_archives = Table(
    "bot_archives", metadata,
    Column("content_hash", String(64), primary_key=True),
    Column("data", LargeBinary, nullable=False),  # the canonical tar, zlib-compressed
)

authors = Table(
    "authors", metadata,
    Column("name", String(100), primary_key=True),
    Column("token_hash", String(64), nullable=False),  # sha256 hex of the author's token
    Column("created_at", Float, nullable=False),
    # the submission service's (0005_service): "author" or "organiser" (sees and does all);
    # ``AuthorStatus``: active, pending (registered, awaiting the organiser) or disabled
    Column("role", String(16), nullable=False, server_default="author"),
    Column("status", String(16), nullable=False, server_default=AuthorStatus.ACTIVE.value),
    Column("changed_at", Float),
)

# The submission service (``scheduler/service/``, 0005_service): the state of a version a worker
# builds and checks (``intake.py``); a version with no row (the organiser's own) is ready.
version_states = Table(
    "version_states", metadata,
    Column("version_id", Integer, ForeignKey("bot_versions.id"), primary_key=True),
    Column("state", String(16), nullable=False),  # ``VERSION_STATES``
    Column("reason", Text),          # why it was refused (withdrawn, suspended)
    Column("build_log", Text),       # bounded (``scheduler.service.intake.BUILD_LOG_KEPT``)
    Column("claimed_by", String(200)),
    Column("updated_at", Float, nullable=False),
    Column("sent_at", Float),        # last sent to the workers
    Column("withdrawn_at", Float),   # the organiser withdrew it from future seasons
)

#: an author's dashboard login: the sha256 of the cookie's value, its CSRF token, its end
sessions = Table(
    "sessions", metadata,
    Column("id_hash", String(64), primary_key=True),
    Column("author", String(100), ForeignKey("authors.name"), nullable=False, index=True),
    Column("csrf", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False),
)

#: a test match an author asked for: ``pairs`` duplicate pairs of ``bot`` against
#: ``opponent`` (both name@version), played as a season of its own (``season``) that counts
#: for no standings and is shown to the two authors only; or (``kind``, 0008_ab) an A/B test
#: of at most ``pairs``: its test's bounds, the pairs it took (W/D/L, LLR) and its verdict
scrimmages = Table(
    "scrimmages", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("author", String(100), nullable=False, index=True),
    Column("bot", String(210), nullable=False),
    Column("opponent", String(210), nullable=False),
    Column("opponent_author", String(100)),
    Column("pairs", Integer, nullable=False),
    Column("variant", String(60), nullable=False),
    Column("season", String(100), unique=True),
    Column("state", String(16), nullable=False),  # ``SCRIMMAGE_STATES``
    Column("reason", Text),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("sent_at", Float),
    Column("kind", String(16), nullable=False, server_default=ScrimmageKind.SCRIMMAGE.value),
    Column("elo0", Float), Column("elo1", Float), Column("alpha", Float), Column("beta", Float),
    Column("wins", Integer), Column("draws", Integer), Column("losses", Integer),
    Column("llr", Float),
    Column("verdict", String(32)),
)

#: who did what through the service or the organiser's commands, and what was refused
audit_log = Table(
    "audit_log", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", Float, nullable=False, index=True),
    Column("actor", String(100)),
    Column("action", String(40), nullable=False),
    Column("subject", String(250)),
    Column("detail", Text),
    Column("address", String(64)),
)

#: the events a rate limit counts (a login attempt, ...): its key and when
limit_events = Table(
    "limit_events", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("key", String(200), nullable=False, index=True),
    Column("at", Float, nullable=False),
)

matches = Table(
    "matches", metadata,
    Column("id", String(120), primary_key=True),
    Column("season", String(100), ForeignKey("seasons.name"), nullable=False, index=True),
    Column("ordinal", Integer, nullable=False),
    Column("pairing", String(210), nullable=False),
    Column("cluster", String(240), nullable=False),
    Column("mirror", Boolean, nullable=False),
    Column("seats_json", Text, nullable=False),
    Column("spec_json", PackedJson, nullable=False),
    Column("status", String(16), nullable=False, default=MatchStatus.PENDING.value, index=True),
    Column("attempts", Integer, nullable=False, default=0),
    Column("lease_owner", String(200)),
    Column("lease_until", Float),
    Column("enqueued_at", Float),
    Column("started_at", Float),
    Column("finished_at", Float),
    Column("error", Text),
    # a season's unfinished matches (whether a record is sealed; a ladder's in play), 0007
    Index("ix_matches_season_status", "season", "status"),
)

results = Table(
    "results", metadata,
    Column("match_id", String(120), ForeignKey("matches.id"), primary_key=True),
    Column("season", String(100), nullable=False, index=True),
    Column("result_json", PackedJson, nullable=False),
    Column("summary_json", PackedJson, nullable=False),
    Column("duration_s", Float, nullable=False),
    Column("worker", String(200)),
    Column("written_at", Float, nullable=False),
    # team 0's continuous outcome of each deal (``scheduler.stats.scores.deal_outcome``), a JSON
    # list; null in a result written before these scores (0003_scores)
    Column("deal_scores_json", Text),
    # what the standings count of the match (``scheduler.stats.scores.match_tally``; _0: team 0,
    # seats 0 and 2; _1: team 1): read instead of the summary by a large season's standings;
    # null in a result written before them (0004_tallies), which is counted from its summary
    Column("deal_count", Integer),
    Column("score_0", Float),
    Column("score_1", Float),
    Column("net_0", Integer),
    Column("net_1", Integer),
    Column("forfeit_team", Integer),
    Column("strikes_0", Integer),
    Column("strikes_1", Integer),
    Column("faults", Integer),
    Column("gain_0", Integer),
    Column("gain_1", Integer),
    Column("attacks_0", Integer),
    Column("attack_points_0", Integer),
    Column("attacks_1", Integer),
    Column("attack_points_1", Integer),
    Column("match_points_json", Text),
)
#: the result's tally columns (``scheduler.stats.scores.MatchTally``, ``rows.tally_columns``)
TALLY_COLUMNS = ("deal_count", "score_0", "score_1", "net_0", "net_1", "forfeit_team",
                 "strikes_0", "strikes_1", "faults", "gain_0", "gain_1", "attacks_0",
                 "attack_points_0", "attacks_1", "attack_points_1", "match_points_json",
                 "deal_scores_json")

# One row per duplicate pair once both its matches are done (``scheduler.stats.scores.score_pair``
# scores it): the pair's W/D/L score for bot_a as the standings count it, and bot_a's paired
# difference per deal (the mean of its continuous outcome over the two plays of each deal), each
# deal's and their mean.
pair_scores = Table(
    "pair_scores", metadata,
    Column("season", String(100), ForeignKey("seasons.name"), primary_key=True),
    Column("cluster", String(240), primary_key=True),
    Column("bot_a", String(100), nullable=False),
    Column("bot_b", String(100), nullable=False),
    Column("deals", Integer, nullable=False),
    Column("score_a", Float, nullable=False),
    Column("diff_a", Float, nullable=False),
    Column("deal_diffs_json", Text, nullable=False),
    Column("written_at", Float, nullable=False),
)

records = Table(
    "records", metadata,
    Column("match_id", String(120), ForeignKey("matches.id"), primary_key=True),
    Column("data", LargeBinary, nullable=False),  # ``compress``: packed, versioned by its 1st byte
)

#: one row per claim of a match; ``outcome``: running, done, counted (another attempt's result
#: was written first), retry / failed (the attempt produced no record; failed: the last one),
#: lost (its worker stopped renewing the lease or is gone), interrupted (a local run stopped),
#: cancelled (its season was cancelled while it was given back or abandoned)
attempts = Table(
    "attempts", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("match_id", String(120), ForeignKey("matches.id"), nullable=False, index=True),
    Column("season", String(100), nullable=False, index=True),
    Column("attempt", Integer, nullable=False),
    Column("worker", String(200)),
    Column("started_at", Float, nullable=False),
    Column("ended_at", Float),
    Column("outcome", String(16), nullable=False),
    Column("reason", Text),
)

# A ladder (``scheduler/ladder.py``, 0006_ladder): when each version joined and retired, and
# every version's openskill rating after each of its pairs (its history).
ladder_entries = Table(
    "ladder_entries", metadata,
    Column("season", String(100), ForeignKey("seasons.name"), primary_key=True),
    Column("bot", String(100), primary_key=True),
    Column("author", String(100)),
    Column("joined_at", Float, nullable=False),
    Column("retired_at", Float),
)

ladder_ratings = Table(
    "ladder_ratings", metadata,
    Column("season", String(100), ForeignKey("seasons.name"), primary_key=True),
    Column("cluster", String(240), primary_key=True),   # the pair rated
    Column("bot", String(100), primary_key=True),
    Column("pair_index", Integer, nullable=False),       # the ladder's pairs rated before it
    Column("mu", Float, nullable=False),
    Column("sigma", Float, nullable=False),
    Column("pairs", Integer, nullable=False),            # the bot's pairs, this one counted
    Column("at", Float, nullable=False),
)

# A person's game in the browser (``scheduler/service/human.py``, 0009_human): the person, the
# seat they played, the four seats' names, its state, and once over its record and the bots'
# seat logs (``compress``-ed; a game is no season's and counts in no standings).
human_games = Table(
    "human_games", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("person", String(100), nullable=False, index=True),
    Column("variant", String(60), nullable=False),
    Column("seat", Integer, nullable=False),
    *(Column(f"name_{i}", String(240), nullable=False) for i in range(4)),
    Column("state", String(16), nullable=False), Column("reason", Text),  # ``HumanGameState``
    Column("match_id", String(120), nullable=False, unique=True),
    Column("record", LargeBinary), Column("logs", LargeBinary),
    Column("created_at", Float, nullable=False), Column("ended_at", Float),
)

#: the columns that hold JSON text (each read back by one typed attribute of ``rows``)
JSON_COLUMNS = frozenset(c.name for t in metadata.tables.values() for c in t.columns
                         if c.name.endswith("_json"))

#: seconds a silent worker keeps its match (``ARENA_LEASE_S``'s default)
DEFAULT_LEASE_S: float = settings.LEASE_S.default
#: attempts of a match (each played on the same cards) before it is set aside as failed
MAX_ATTEMPTS: int = settings.MAX_ATTEMPTS.default
LOST = ("lost: its worker stopped renewing the lease (killed, stopped or cut off from the "
        "store)")
CANCELLED = "its season was cancelled"
COUNTED_FIRST = "another attempt's result was written first"
#: a match's statuses (``MatchStatus``): a ``cancelled`` one is never played
STATUSES = tuple(MatchStatus)
#: a service version's states (``VersionState``), in order (``suspended``: the crash limit's)
VERSION_STATES = tuple(VersionState)
#: a scrimmage's states (``ScrimmageState``)
SCRIMMAGE_STATES = tuple(ScrimmageState)


def worker_name() -> str:
    """host:pid, the owner written into a lease."""
    return f"{socket.gethostname()}:{os.getpid()}"


def compress(record: dict) -> bytes:
    """A match record's stored bytes (``records.data``): ``packing.pack_record``."""
    return pack_record(record)


def decompress(data: bytes) -> dict:
    return unpack_record(data)  # (packed, or written before the packing)


ENGINES: dict[tuple[int, str], Engine] = {}  # one engine per (process, URL)
READY: set[Engine] = set()  # the engines whose store was migrated by this process


def engine_for(url: str) -> Engine:
    """One engine per process and URL (created after a fork, never inherited)."""
    key = (os.getpid(), url)
    eng = ENGINES.get(key)
    if eng is None:
        if url.startswith("postgresql://"):
            url = "postgresql+psycopg://" + url[len("postgresql://"):]
        kw: dict[str, Any] = {"future": True}
        if url.startswith("sqlite"):
            kw["connect_args"] = {"timeout": 60}
        else:
            kw["pool_pre_ping"] = True
        eng = create_engine(url, **kw)
        if url.startswith("sqlite"):
            event.listen(eng, "connect", _sqlite_pragmas)
        ENGINES[key] = eng
    return eng


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA busy_timeout=60000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()
