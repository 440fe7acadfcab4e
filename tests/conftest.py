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
# The tests live by room (tests/rules/, tests/referee/, ...): a test may take a helper from
# another room's test module (``from test_league import _exactly_once``), so every room is on
# the path, and a test module's name is unique across the rooms.
for _room in sorted((ROOT / "tests").glob("*/test_*.py")):
    if str(_room.parent) not in sys.path:
        sys.path.append(str(_room.parent))


RUNS = 8
"""Test runs of this project that may share one machine, each with servers of its own."""
_RUN_LOCK: list[int] = []  # the lock of this run's number, held while the run lasts


def _this_run() -> int:
    """This run's number: 0, or the first of ``RUNS`` whose lock is free when another run of
    the suite (another clone, another job) holds 0. Set once by pytest's first process
    (``ARENA_TEST_RUN``), and inherited by its xdist workers."""
    if os.environ.get("ARENA_TEST_RUN", "").isdigit():
        return int(os.environ["ARENA_TEST_RUN"])
    import fcntl
    run = 0
    for k in range(RUNS):
        fd = os.open(f"/tmp/arena-test-run-{k}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        _RUN_LOCK.append(fd)
        run = k
        break
    os.environ["ARENA_TEST_RUN"] = str(run)
    return run


def _redis_of_run(run: int) -> str:
    """The Redis server ("host:port") of run ``run``: the machine's on 6379 for run 0; for
    another, one of its own on 6400 + run, started here when none answers (left running for
    the next run of that number, as `make redis` leaves 6379's)."""
    if run == 0:
        return "127.0.0.1:6379"
    import shutil
    import socket
    import subprocess
    port = 6400 + run
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        if shutil.which("redis-server"):
            subprocess.run(["redis-server", "--daemonize", "yes", "--bind", "127.0.0.1",
                            "--port", str(port), "--save", "", "--appendonly", "no"],
                           capture_output=True)
    return f"127.0.0.1:{port}"


def _servers_of_this_worker() -> None:
    """The Redis and PostgreSQL databases of this test process. Under ``pytest -n N``
    (pytest-xdist) each worker after the first gets a Redis database and a PostgreSQL database
    of its own (``test_gwK``, made when missing), so that two test files never share a Celery
    queue or a store; the first worker, and a plain run, use the defaults. A second run of the
    suite on the same machine (``_this_run``) has a Redis server of its own and databases
    named ``test_rN`` and ``test_rN_gwK``. ARENA_TEST_PG / ARENA_TEST_REDIS given by hand are
    left as they are."""
    if "ARENA_TEST_PG" in os.environ or "ARENA_TEST_REDIS" in os.environ:
        return
    run = _this_run()
    redis = _redis_of_run(run)
    os.environ["ARENA_TEST_REDIS_SERVER"] = redis
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    k = int(worker[2:]) if worker[2:].isdigit() else 0
    if k == 0 and run == 0:
        return
    name = f"test_{worker}" if run == 0 else f"test_r{run}_{worker}" if k else f"test_r{run}"
    os.environ["ARENA_TEST_REDIS"] = f"redis://{redis}/{12 + k if k else 9}"
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
        Store(PG_URL).seasons.names()
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



# each test's time kept, and the tests much slower than the kept durations named (make test)
from durations_kept import (pytest_runtest_logreport, pytest_sessionfinish,  # noqa: E402,F401
                            pytest_terminal_summary)
