"""The conformance runner against the shared vectors and the project's own."""

import json
import subprocess
import sys

import pytest

from conftest import ROOT, SHARED
from referee.conformance import run_file

VARIANTS = ("two-deck-80", "two-deck-fry", "single-deck", "three-deck")
SHARED_FILES = [SHARED / "conformance" / f"{v}.json" for v in VARIANTS]
OWN_FILES = [ROOT / "tests" / "vectors" / f"{v}.json" for v in VARIANTS]


def _arena(*args):
    return subprocess.run([sys.executable, "-m", "scheduler.cli", *args], cwd=ROOT,
                          capture_output=True, text=True)


@pytest.mark.parametrize("path", SHARED_FILES + OWN_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_case_passes(path):
    if not path.exists():
        pytest.fail(f"{path} is missing")
    results = run_file(json.loads(path.read_text()), path.name)
    failures = [r.line() for r in results if not r.ok]
    assert results and not failures, "\n".join(failures)


@pytest.mark.parametrize("path", OWN_FILES, ids=lambda p: p.name)
def test_own_vectors_are_many_and_unique(path):
    cases = json.loads(path.read_text())["cases"]
    assert len(cases) >= 80
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids))
    kinds = {c["kind"] for c in cases}
    assert {"format", "follow", "winner", "deal_result", "declare"} <= kinds


def test_cli_passes_shared_files():
    out = _arena("rules", "check", *map(str, SHARED_FILES))
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert sum(1 for x in lines if x.startswith("ok ")) == len(lines) - 1
    assert lines[-1].endswith("0 failed")


def _one_case_file(tmp_path, case, variant="two-deck-fry"):
    path = tmp_path / "v.json"
    path.write_text(json.dumps({"variant": variant, "context": {"level": "2", "trump": "S"},
                                "cases": [case]}))
    return path


def test_cli_fails_a_wrong_expectation(tmp_path):
    path = _one_case_file(tmp_path, {"id": "x", "kind": "winner",
                                     "trick": [["9C"], ["KC"], ["3S"], ["KC"]], "expect": 1})
    out = _arena("rules", "check", str(path))
    assert out.returncode == 1
    assert "FAIL x" in out.stdout and "winner 2, expected 1" in out.stdout


def test_unknown_expect_field_fails_the_case(tmp_path):
    path = _one_case_file(tmp_path, {"id": "y", "kind": "format", "cards": ["5H", "5H"],
                                     "expect": {"format": "pair", "colour": "red"}})
    out = _arena("rules", "check", str(path))
    assert out.returncode == 1
    assert "unknown expect field" in out.stdout


def test_unknown_case_field_fails_the_case(tmp_path):
    path = _one_case_file(tmp_path, {"id": "z", "kind": "winner", "trick": [["9C"]] * 4,
                                     "expect": 0, "seats": 4})
    out = _arena("rules", "check", str(path))
    assert out.returncode == 1 and "unknown field" in out.stdout


def test_unknown_variant_fails_not_passes(tmp_path):
    path = _one_case_file(tmp_path, {"id": "w", "kind": "winner", "trick": [["9C"]] * 4,
                                     "expect": 0}, variant="four-deck")
    out = _arena("rules", "check", str(path))
    assert out.returncode == 1 and "unknown variant" in out.stdout


def test_a_kind_of_another_variant_fails(tmp_path):
    path = _one_case_file(tmp_path, {"id": "t", "kind": "tribute",
                                     "previous": {"attacker_total": 60, "kitty": []},
                                     "giver_three_bj": False, "giver_partner_three_bj": False,
                                     "expect": {"count": 2, "direction": "to_dealer"}})
    out = _arena("rules", "check", str(path))
    assert out.returncode == 1 and "three-deck" in out.stdout


def test_missing_file_is_a_clear_error(tmp_path):
    out = _arena("rules", "check", str(tmp_path / "nope.json"))
    assert out.returncode != 0 and "no such file" in out.stderr
