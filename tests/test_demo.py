"""`arena demo` (what `make demo` runs on a fresh machine): a small season of the sample bots,
played to its end, with standings and every record replayed."""

import re
import subprocess
import sys

from conftest import ROOT

from scheduler.store import Store


def test_the_demo_plays_its_season_and_every_record_verifies(tmp_path):
    out = subprocess.run([sys.executable, "-m", "cli", "demo", "--out", str(tmp_path),
                          "--workers", "2"], cwd=ROOT, capture_output=True, text=True,
                         timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Traceback" not in out.stderr
    verified = re.search(r"^(\d+) of (\d+) match records replay and verify", out.stdout, re.M)
    assert verified and verified.group(1) == verified.group(2), out.stdout[-2000:]
    store = Store(f"sqlite:///{tmp_path / 'demo.db'}")
    rows = store.matches("demo")
    assert len(rows) == int(verified.group(2)) > 0
    assert {row["status"] for row in rows} == {"done"}
    for bot in ("greedy", "random"):  # the standings name the sample bots
        assert re.search(rf"^\s*\d+\s+{bot}\b", out.stdout, re.M), out.stdout[-2000:]
