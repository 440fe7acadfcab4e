"""What the benchmark commands promise about how they measure (the figures themselves are for
docs/performance.md, not for tests)."""

import subprocess
import sys

from conftest import ROOT
from tools.benchleague import DELIVERY, DISPATCH, _order, _spread


def test_the_league_benchmark_reverses_the_order_of_its_modes_every_other_run():
    """A mode that always went first (or last) would carry the machine's drift alone."""
    orders = [_order(DISPATCH, run) for run in range(4)]
    assert orders[0] == ("direct", "local", "celery")
    assert orders[1] == ("celery", "local", "direct")
    assert orders[2] == orders[0] and orders[3] == orders[1]
    firsts = {_order(tuple(DELIVERY), run)[0] for run in range(2)}
    assert firsts == set(DELIVERY)  # each way of taking events goes first in one run of two


def test_the_league_benchmark_prints_the_median_and_the_range_of_a_figure():
    assert _spread([3.0, 1.0, 2.5]) == "2.50 (1.00 - 3.00)"
    assert _spread([1200.0, 800.0], "{:,.0f}") == "1,000 (800 - 1,200)"


def test_the_engine_comparison_refuses_a_folder_that_is_no_checkout(tmp_path):
    out = subprocess.run([sys.executable, "-m", "cli", "bench", "compare", str(tmp_path),
                          "--variant", "single-deck", "--rounds", "1"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert f"{tmp_path} is not a checkout of this project (no referee/rules folder)" in out.stderr


def test_the_languages_benchmark_names_an_unknown_language():
    out = subprocess.run([sys.executable, "-m", "cli", "bench", "languages", "go", "cobol"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip() == ("arena bench languages: unknown language 'cobol': expected "
                                  "some of python, java, go, rust, cpp, node, go-grpc, "
                                  "cpp-stdio, node-stdio")
