"""`arena demo` (what `make demo` runs on a fresh machine): a small season of the sample bots,
played to its end, with standings and every record replayed."""

import re

import pytest
from conftest import DEMO_GROUP

from scheduler.store import Store

pytestmark = pytest.mark.xdist_group(DEMO_GROUP)  # the season is played once, shared


def test_the_demo_plays_its_season_and_every_record_verifies(demo_season):
    out, folder = demo_season
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Traceback" not in out.stderr
    verified = re.search(r"^(\d+) of (\d+) match records replay and verify", out.stdout, re.M)
    assert verified and verified.group(1) == verified.group(2), out.stdout[-2000:]
    store = Store(f"sqlite:///{folder / 'demo.db'}")
    rows = store.pages.matches("demo")
    assert len(rows) == int(verified.group(2)) > 0
    assert {row.status for row in rows} == {"done"}
    for bot in ("greedy", "random"):  # the standings name the sample bots
        assert re.search(rf"^\s*\d+\s+{bot}\b", out.stdout, re.M), out.stdout[-2000:]
