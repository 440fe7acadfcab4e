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
