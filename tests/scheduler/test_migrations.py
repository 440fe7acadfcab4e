"""Schema versions of the store: a fresh store, a store of the previous release (a fixture) that
migrates and resumes its season, one older still, one too new, the models against the
migrations, workers opening a fresh store at once, and a stored spec the referee cannot read.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import uuid

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from league_helpers import PG_URL, arena, env

from conftest import ROOT
from scheduler import migrations
from scheduler.execute import execute_match
from scheduler.reports import season_standings
from scheduler.store import Store, StoreVersionError, _ENGINES, engine_for, metadata
from scheduler.store.rows import StatusCounts

FIXTURES = ROOT / "tests" / "fixtures"
FIXTURE = FIXTURES / "store-previous-release.db"
SEASON_FILE = FIXTURES / "store-previous-release.toml"
SEASON = "previous-release"
#: where the fixture was made (its stored bot folders and specs name it; README.md there)
MADE_IN = "/tmp/prev_release"
REGISTRY = {"bot_versions", "bot_archives", "authors"}


def _previous_store(tmp_path, drop: tuple[str, ...] = ()) -> str:
    """A copy of the previous release's store, its bots' folders pointed at this checkout;
    ``drop``: tables to remove (a store made before them)."""
    db = tmp_path / "previous.db"
    shutil.copy(FIXTURE, db)
    con = sqlite3.connect(db)
    con.execute("UPDATE matches SET spec_json = replace(spec_json, ?, ?)", (MADE_IN, str(ROOT)))
    con.execute("UPDATE bots SET manifest_json = replace(manifest_json, ?, ?)",
                (MADE_IN, str(ROOT)))
    for table in drop:
        con.execute(f"DROP TABLE {table}")
    con.commit()
    con.close()
    return f"sqlite:///{db}"


def _sql(url: str, query: str, *args) -> list[tuple]:
    con = sqlite3.connect(url[len("sqlite:///"):])
    try:
        rows = con.execute(query, args).fetchall()
        con.commit()
    finally:
        con.close()
    return rows


def _revision(url: str) -> str | None:
    with engine_for(url).connect() as c:
        return migrations.revision(c)


def _tables(url: str) -> dict[str, dict[str, bool]]:
    """{table: {column: nullable}} of the store at ``url``, as the database describes it."""
    with engine_for(url).connect() as c:
        inspector = sa.inspect(c)
        return {t: {col["name"]: col["nullable"] for col in inspector.get_columns(t)}
                for t in inspector.get_table_names() if t != "alembic_version"}


@pytest.fixture()
def pg_schema():
    """A URL of an empty PostgreSQL schema of its own (dropped afterwards)."""
    schema = f"migrations_{uuid.uuid4().hex[:8]}"
    admin = engine_for(PG_URL)
    try:
        with admin.begin() as c:
            c.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    except sa.exc.OperationalError as e:
        pytest.fail(f"PostgreSQL at {PG_URL} is needed for the migration tests: {e}")
    url = f"{PG_URL}{'&' if '?' in PG_URL else '?'}options=-csearch_path%3D{schema}"
    yield url
    for key in [k for k in _ENGINES if k[1] == url]:
        _ENGINES.pop(key).dispose()
    with admin.begin() as c:
        c.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/fresh.db"
    return request.getfixturevalue("pg_schema")


# -- the models are the migrations ------------------------------------------------------------
def test_a_fresh_store_is_at_head_with_exactly_the_models_tables(fresh_url):
    Store(fresh_url)
    assert _revision(fresh_url) == migrations.head()
    models = {t.name: {c.name: c.nullable for c in t.columns} for t in metadata.sorted_tables}
    assert _tables(fresh_url) == models  # a model changed without a migration, or the reverse
    with engine_for(fresh_url).connect() as c:  # types, keys, indexes and constraints too
        ctx = MigrationContext.configure(c, opts={"compare_type": True})
        assert compare_metadata(ctx, metadata) == []


def test_the_baseline_is_the_schema_of_the_previous_release(tmp_path):
    url = f"sqlite:///{tmp_path}/baseline.db"
    with engine_for(url).connect() as c:
        command.upgrade(migrations.config(c), migrations.BASELINE)
        c.commit()
    query = ("SELECT type, name, sql FROM sqlite_master WHERE tbl_name != 'alembic_version' "
             "ORDER BY name")
    assert _sql(url, query) == _sql(f"sqlite:///{FIXTURE}", query)


# -- a store of the previous release ----------------------------------------------------------
def test_a_store_of_the_previous_release_migrates_and_resumes_its_season(tmp_path):
    """The fixture's season was interrupted with 3 of its 6 matches done (tests/fixtures); it
    resumes with ``--no-check`` (the bots passed their check when it started)."""
    url = _previous_store(tmp_path)
    assert _revision(url) is None
    before = _sql(url, "SELECT match_id, result_json, written_at FROM results ORDER BY 1")
    store = Store(url)
    assert _revision(url) == migrations.head()
    tables = _tables(url)
    assert REGISTRY <= set(tables) and "version_hash" in tables["bots"]
    assert store.seasons.counts(SEASON) == StatusCounts(pending=3, done=3)
    assert store.results.count(SEASON) == 3 and len(store.pages.attempt_log(SEASON)) == 3
    assert [b.name for b in store.seasons.bots(SEASON)] == ["greedy", "random"]
    assert store.seasons.secret(SEASON).given is False

    out = arena("season", "run", str(SEASON_FILE), "--db", url, "--no-check", "--no-progress",
                "--workers", "2", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "6 matches (3 to play)" in out.stderr, out.stderr
    assert store.seasons.counts(SEASON)["done"] == 6 and store.results.count(SEASON) == 6
    # only the pending matches were played: the earlier results are as they were
    assert _sql(url, "SELECT match_id, result_json, written_at FROM results WHERE match_id "
                     "IN (?, ?, ?) ORDER BY 1", *[r[0] for r in before]) == before
    assert sorted(a.match_id for a in store.pages.attempt_log(SEASON)) == \
        [f"{SEASON}-{i:05d}" for i in range(6)]  # one attempt each
    standings = season_standings(store.seasons.get(SEASON), store.pages.matches(SEASON),
                                 samples=50).to_dict()
    assert standings["matches_done"] == standings["matches_total"] == 6
    assert standings["deals"] == 12
    for line in standings["bots"]:
        assert line["matches"] == line["wins"] + line["draws"] + line["losses"] == 6
    # the earlier results have no tally columns (counted from their summaries), the new ones
    # have them; the standings count both as the summaries alone do
    from test_web import straightforward_standings
    earlier = {r[0] for r in before}
    rows = store.pages.standings_rows(SEASON)
    assert {r.id for r in rows if r.deal_count is None} == earlier
    assert all(r.summary_json is not None for r in rows if r.id in earlier)
    assert all(r.summary_json is None and r.deal_count == 2 for r in rows
               if r.id not in earlier)
    want = straightforward_standings(store.seasons.get(SEASON), store.pages.matches(SEASON),
                                     samples=50)
    assert season_standings(store.seasons.get(SEASON), rows, samples=50).to_dict() == want.to_dict()


def test_a_store_older_than_secrets_and_cancels_gains_them(tmp_path):
    url = _previous_store(tmp_path, drop=("season_cancels", "season_secrets"))
    store = Store(url)
    assert _revision(url) == migrations.head()
    assert {"season_cancels", "season_secrets"} | REGISTRY <= set(_tables(url))
    assert store.seasons.counts(SEASON)["pending"] == 3 and store.seasons.secret(SEASON) is None
    assert store.cancels.cancelled(SEASON) is None


def test_a_pre_migration_store_with_other_columns_is_refused_untouched(tmp_path):
    url = _previous_store(tmp_path)
    _sql(url, "ALTER TABLE bots ADD COLUMN surprise TEXT")
    with pytest.raises(StoreVersionError, match=r"table 'bots'.*unknown columns \['surprise'\]"):
        Store(url)
    assert _revision(url) is None and not REGISTRY & set(_tables(url))


# -- a store newer than this code -------------------------------------------------------------
def test_a_store_newer_than_this_code_is_refused_clearly(tmp_path):
    url = f"sqlite:///{tmp_path}/newer.db"
    Store(url)
    _sql(url, "UPDATE alembic_version SET version_num = '0099_future'")
    head = migrations.head()
    with pytest.raises(StoreVersionError) as e:
        migrations.upgrade(engine_for(url), url)
    assert url in str(e.value) and "'0099_future'" in str(e.value) and head in str(e.value)
    for args in (["seasons"], ["standings", "x"], ["season", "run", str(SEASON_FILE)]):
        out = arena(*args, "--db", url, cwd=tmp_path)
        assert out.returncode != 0 and "Traceback" not in out.stderr, out.stderr
        assert "0099_future" in out.stderr and head in out.stderr and url in out.stderr, \
            out.stderr
    assert _sql(url, "SELECT version_num FROM alembic_version") == [("0099_future",)]


# -- workers opening a fresh store at once ----------------------------------------------------
def test_workers_opening_a_fresh_store_at_once_all_get_it(fresh_url):
    # each past its imports says so and waits for a line: then all of them are let go at once
    code = ("import sys; from scheduler.store import Store; print('ready', flush=True); "
            "sys.stdin.readline(); Store(sys.argv[1])")
    procs = [subprocess.Popen([sys.executable, "-c", code, fresh_url], cwd=ROOT, env=env(),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(6)]
    assert [p.stdout.readline() for p in procs] == ["ready\n"] * 6
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, errors
    assert _revision(fresh_url) == migrations.head()
    assert set(_tables(fresh_url)) == set(metadata.tables)


# -- a stored spec with a field the referee does not know -------------------------------------
def test_a_stored_spec_with_an_unknown_field_fails_its_match_charging_no_bot(tmp_path):
    url = _previous_store(tmp_path)
    store = Store(url)
    match_id = f"{SEASON}-00004"
    spec = json.loads(store.pages.match(match_id).spec_json)
    _sql(url, "UPDATE matches SET spec_json = ? WHERE id = ?",
         json.dumps(spec | {"colour": "red"}), match_id)
    # the attempt is given back, charged to nobody; set aside after the attempt limit
    assert execute_match(url, match_id, max_attempts=2) == "retry"
    assert execute_match(url, match_id, max_attempts=2) == "failed"
    row = store.pages.match(match_id)
    assert row.status == "failed" and row.attempts == 2
    assert "unknown field(s) ['colour']" in row.error and match_id in row.error
    assert "Traceback" not in row.error
    log = store.pages.attempt_log(SEASON, match_id)
    assert [a.outcome for a in log] == ["retry", "failed"]
    assert all("unknown field(s) ['colour']" in a.reason for a in log)
    assert store.results.record(match_id) is None and store.results.count(SEASON) == 3


def test_a_store_at_head_opens_without_loading_alembic(tmp_path):
    """The quick check reads the same head as Alembic, and a process that opens a store already
    at head never loads Alembic; an older store still goes through it (the tests above)."""
    assert migrations.quick_head() == migrations.head()
    url = f"sqlite:///{tmp_path / 'at-head.db'}"
    Store(url)
    code = ("import sys; from scheduler.store import Store; Store(sys.argv[1]); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'))")
    out = subprocess.run([sys.executable, "-c", code, url], cwd=ROOT, env=env(),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


def test_a_store_sqlite_answers_locked_at_once_is_migrated_on_a_retry(tmp_path, monkeypatch):
    """SQLite's "database is locked" given at once (a stale snapshot, a journal mode being
    switched: no busy wait helps) starts the migration again; another error does not."""
    import scheduler.store as store_module
    from sqlalchemy.exc import OperationalError
    real, calls = migrations.upgrade, []

    def flaky(engine, url):
        calls.append(url)
        if len(calls) <= 2:
            raise OperationalError("BEGIN IMMEDIATE", {}, Exception("database is locked"))
        return real(engine, url)
    monkeypatch.setattr(store_module.migrations, "upgrade", flaky)
    url = f"sqlite:///{tmp_path}/locked.db"
    Store(url)
    assert len(calls) == 3 and _revision(url) == migrations.head()
    calls.clear()

    def broken(engine, url):
        calls.append(url)
        raise OperationalError("SELECT", {}, Exception("disk I/O error"))
    monkeypatch.setattr(store_module.migrations, "upgrade", broken)
    with pytest.raises(OperationalError, match="disk I/O"):
        Store(f"sqlite:///{tmp_path}/other.db")
    assert len(calls) == 1
