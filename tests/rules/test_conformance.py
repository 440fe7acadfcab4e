"""The conformance runner against the shared vectors and the project's own."""

import json
import subprocess
import sys

import pytest

from conftest import BESIDE, ROOT, SHARED_COPY
from referee.conformance import run_file

VARIANTS = ("two-deck-80", "two-deck-fry", "single-deck", "three-deck")
SHARED_FILES = [SHARED_COPY / f"{v}.json" for v in VARIANTS]
OWN_FILES = [ROOT / "tests" / "vectors" / f"{v}.json" for v in VARIANTS]


def _arena(*args):
    return subprocess.run([sys.executable, "-m", "cli", *args], cwd=ROOT,
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


@pytest.mark.skipif(not BESIDE.is_dir(), reason="no shared folder beside this clone: the "
                    "project's copy of the shared vectors is used as it is")
def test_the_copy_of_the_shared_vectors_is_current():
    """The copy in tests/vectors/shared/ equals the shared folder's files, where there is one."""
    names = sorted(p.name for p in BESIDE.iterdir() if p.suffix in (".json", ".md"))
    assert names == sorted(p.name for p in SHARED_COPY.iterdir()), "files differ"
    stale = [n for n in names if (BESIDE / n).read_bytes() != (SHARED_COPY / n).read_bytes()]
    assert not stale, f"copy the shared vectors again: {stale} changed (cp {BESIDE}/* {SHARED_COPY}/)"


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


def _check_one(tmp_path, case, variant, context=None):
    path = tmp_path / "v.json"
    path.write_text(json.dumps({"variant": variant,
                                "context": context or {"level": "2", "trump": "S"},
                                "cases": [case]}))
    return _arena("rules", "check", str(path))


def _exempt_case(**deal_changes):
    deal = {"dealer": 0, "levels": {"dealer_team": "7", "attackers": "2"},
            "attacker_points": 120, "kitty": ["3C", "4C", "6D", "7D", "8H", "9H", "3S", "4S"],
            "last_trick": {"winner_team": "dealer_team", "cards": ["AS"], "winning_card": "AS"},
            "two_exempt": "attackers"}
    deal.update(deal_changes)
    return {"id": "e", "kind": "deal_result", "deal": deal,
            "expect": {"levels": {"dealer_team": "7", "attackers": "4"}, "two_exempt": None}}


def test_two_exempt_is_judged(tmp_path):
    """An exempt team at 2 that takes over with 120 goes up 2 and leaves the exemption; the
    same deal without the exemption stays at 2 (must-play) and deducts the dealer team."""
    ok = _check_one(tmp_path, _exempt_case(), "two-deck-80")
    assert ok.returncode == 0, ok.stdout
    case = _exempt_case()
    del case["deal"]["two_exempt"]
    held = _check_one(tmp_path, case, "two-deck-80")
    assert held.returncode == 1 and "levels" in held.stdout, held.stdout


@pytest.mark.parametrize("case, variant, words", [
    (_exempt_case(two_exempt="dealer_team"), "two-deck-80", "which is at 7"),
    (_exempt_case(levels={"dealer_team": "2", "attackers": "2"}, restore_level="J",
                  two_exempt="attackers"), "two-deck-80", "contradicts deal.restore_level"),
    (_exempt_case(restore_level="J"), "two-deck-80", "contradicts deal.levels"),
    ({"id": "o", "kind": "declare", "first_deal": False, "dealer": 0, "phase": "after_burial",
      "current": None, "overturned": True, "seat": 1, "cards": ["2S", "2S", "LJ"],
      "expect": "legal"}, "two-deck-fry", "'overturned' true contradicts 'current' null"),
    ({"id": "k", "kind": "declare", "first_deal": False, "dealer": 0, "phase": "dealing",
      "current": {"seat": 1, "cards": ["2H"]}, "kitty_opened": True, "seat": 2,
      "cards": ["2S", "2S"], "expect": "illegal"}, "two-deck-80", "'kitty_opened' true"),
    ({"id": "g", "kind": "tribute", "previous": {"attacker_total": 60, "kitty": []},
      "giver_hand": ["BJ", "BJ", "BJ", "3C"], "giver_three_bj": False,
      "giver_partner_three_bj": False, "expect": {"count": 2, "direction": "to_dealer",
                                                  "cards": ["BJ", "BJ"]}},
     "three-deck", "giver_three_bj contradicts giver_hand"),
])
def test_contradicting_fields_fail_the_case(tmp_path, case, variant, words):
    context = {"level": "3", "trump": "S"} if variant == "three-deck" else None
    out = _check_one(tmp_path, case, variant, context)
    assert out.returncode == 1 and words in out.stdout, out.stdout
