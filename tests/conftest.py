import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The shared conformance vectors, as the project keeps its own copy of them (a clone stands
# alone); BESIDE is where the team's shared folder lies when the clone has one next to it.
SHARED_COPY = ROOT / "tests" / "vectors" / "shared"
BESIDE = ROOT.parent / "shared" / "conformance"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _servers_of_this_worker() -> None:
    """Under ``pytest -n N`` (pytest-xdist) each worker process after the first gets a Redis
    database and a PostgreSQL database of its own (``test_gwK``, made when missing), so that two
    test files never share a Celery queue or a store; the first worker, and a plain run, use
    the defaults. ARENA_TEST_PG / ARENA_TEST_REDIS given by hand are left as they are."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    k = int(worker[2:]) if worker[2:].isdigit() else 0
    if k == 0 or "ARENA_TEST_PG" in os.environ or "ARENA_TEST_REDIS" in os.environ:
        return
    os.environ["ARENA_TEST_REDIS"] = f"redis://127.0.0.1:6379/{12 + k}"
    name = f"test_{worker}"
    os.environ["ARENA_TEST_PG"] = f"postgresql://postgres@127.0.0.1:5432/{name}"
    try:
        import psycopg
        with psycopg.connect("postgresql://postgres@127.0.0.1:5432/test",
                             autocommit=True) as c:
            if c.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() \
                    is None:
                c.execute(f'CREATE DATABASE "{name}"')
    except Exception:  # no server: the tests that need one say so themselves
        pass


_servers_of_this_worker()


@pytest.fixture()
def pg():
    """The PostgreSQL store's URL for the tests that need one (a missing server fails them:
    it is not a reason to skip)."""
    from league_helpers import PG_URL

    from scheduler.store import Store
    try:
        Store(PG_URL).season_names()
    except Exception as e:
        pytest.fail(f"PostgreSQL at {PG_URL} is needed for this test: {e}")
    return PG_URL


DEMO_GROUP = "demo"
"""The xdist group of the files that use ``demo_season``, so that one worker plays it once."""


@pytest.fixture(scope="session")
def demo_season(tmp_path_factory):
    """``arena demo --out DIR --workers 2``, run once for the worker's session (its test checks
    what it printed, the browser tests serve its store): (the finished process, DIR)."""
    import subprocess

    folder = tmp_path_factory.mktemp("demo")
    done = subprocess.run([sys.executable, "-m", "cli", "demo", "--out", str(folder),
                           "--workers", "2"], cwd=ROOT, capture_output=True, text=True,
                          timeout=240)
    return done, folder
