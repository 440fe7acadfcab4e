"""``arena study power`` and ``arena sprt`` on paired differences, from the command line: in
process for the sample policies, through the referee for bot folders."""

from __future__ import annotations

import json
import re

from conftest import ROOT
from league_helpers import arena

from cli.main import build_parser

GREEDY = ROOT / "sample_bots" / "python" / "greedy"
RANDOM = ROOT / "sample_bots" / "python" / "random"


def run(capsys, *args: str) -> tuple[int, str, str]:
    """The command line in this process (the engine warm): exit code, stdout, stderr."""
    parsed = build_parser().parse_args(list(args))
    rc = parsed.func(parsed)
    out = capsys.readouterr()
    return rc, out.out, out.err


KEYS = {"name", "variance_per_deal", "mean", "interval", "deals_needed", "deals_needed_interval"}


def test_study_power_reports_every_estimator_as_json_and_draws_the_plot(tmp_path, capsys):
    png = tmp_path / "power.png"
    rc, out, err = run(capsys, "study", "power", "greedy", "random", "--variant", "single-deck",
                       "--deals", "16", "--samples", "50", "--json", "--plot", str(png))
    assert rc == 0, err
    got = json.loads(out)
    assert [e["name"] for e in got["estimators"]] == ["plain", "duplicate_wdl",
                                                      "duplicate_diff", "control_variate"]
    by = {e["name"]: e for e in got["estimators"]}
    for e in got["estimators"]:
        assert KEYS <= set(e), e
        low, high = e["deals_needed_interval"]
        assert low <= e["deals_needed"] <= high
    for name in ("plain", "duplicate_diff", "control_variate"):  # greedy beats random
        assert by[name]["interval"][0] > 0, by[name]
        assert by[name]["variance_per_deal"] > 0 and 0 < by[name]["deals_needed"] < 16
    assert got["deals"] == 16 and got["deals_played"] == 32
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_study_power_prints_a_table_and_the_sprt_stopping_points(capsys):
    rc, out, err = run(capsys, "study", "power", "random", "greedy", "--variant", "single-deck",
                       "--deals", "8", "--samples", "20", "--no-progress")
    assert rc == 0, err
    lines = out.splitlines()
    # name, variance [bootstrap], mean [interval], deals needed [bootstrap]
    rows = {line.split()[0]: re.findall(r"-?\d+\.?\d*|inf", line) for line in lines[2:6]}
    assert set(rows) == {"plain", "duplicate_wdl", "duplicate_diff", "control_variate"}
    assert all(len(r) == 9 for r in rows.values()), rows
    assert float(rows["duplicate_diff"][3]) < 0  # A is random: its edge is negative
    assert float(rows["duplicate_diff"][5]) < 0  # and the interval's top too
    assert any(line.startswith("sprt on paired differences") for line in lines), out


def test_study_power_refuses_bad_input_plainly(tmp_path, capsys):
    for args, want in ((["--plot", "x.jpg"], ("--plot x.jpg: expected a file name ending in "
                                              ".png")),
                       (["--deals", "3"], "--deals must be at least twice --deals-per-set"),
                       ([], None)):
        b = "greedy-noisy:lots" if want is None else "random"
        rc, _, err = run(capsys, "study", "power", "greedy", b, *args)
        assert rc == 2, err
        assert (want or "the noise after ':' must be a number") in err, err
    rc, _, err = run(capsys, "study", "power", str(tmp_path), "random")
    assert rc == 2 and str(tmp_path) in err, err
    rc, _, err = run(capsys, "study", "power", "greedy", str(RANDOM))
    assert rc == 2 and "both in-process policies or both bots" in err, err


def test_study_power_plays_bot_folders_through_the_referee(tmp_path):
    # a key of our own, so the same cards each run: with a fresh secret one, greedy's two
    # duplicate pairs against random were both drawn in one run of four
    p = arena("study", "power", str(GREEDY), str(RANDOM), "--variant", "single-deck",
              "--deals", "4", "--deals-per-set", "2", "--samples", "20", "--json",
              "--seed", "study-power", "--workers", "4", "--workdir", str(tmp_path / "w"),
              cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert got["a"] == "greedy" and got["b"] == "random" and got["deals"] == 4
    by = {e["name"]: e for e in got["estimators"]}
    assert by["duplicate_diff"]["mean"] > 0 and by["duplicate_wdl"]["mean"] > 0
    # both plays of each deal were played by the referee, each with its record
    records = sorted(x.parent.name for x in (tmp_path / "w").glob("*/record.json"))
    assert records == [f"power-{k:04d}-{m}" for k in range(2) for m in range(2)]


def test_sprt_decides_on_paired_differences_and_keeps_the_pair_result_mode(capsys):
    common = ("--variant", "single-deck", "--seed", "3", "--deals-per-set", "1",
              "--no-progress")
    rc, out, err = run(capsys, "sprt", "greedy", "random", *common, "--compare")
    assert rc == 0, err
    assert "greedy is stronger by at least 0.05 levels per deal (H1 accepted)" in out, out
    assert "on the same pairs, pair W/D/L (H1 50.0 Elo): H1 after" in out, out
    rc, out, err = run(capsys, "sprt", "greedy", "random", *common, "--score", "wdl")
    assert rc == 0, err
    assert "greedy is stronger by at least 50.0 Elo (H1 accepted)" in out, out
    rc, _, err = run(capsys, "sprt", "greedy", "random", "--d0", "0.2", "--d1", "0.1")
    assert rc == 2 and "d1 must be greater than d0" in err, err
