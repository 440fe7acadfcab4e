"""Mutation check of the rules judges: does every rule the vectors cover have a vector or a test
that fails when the rule is broken?

Each mutation is a one-line change to one rule of the engine, listed in ``mutations.toml``. ``run`` copies the project to a
temporary folder, applies one mutation at a time there (the checkout is never touched), runs
the project's rules vectors and, when they all still pass, the fast rules tests, and reports
which mutations were caught. A mutation nothing catches is a rule the suite does not guard.
Run by ``arena rules mutate`` (``make mutate``); not part of ``make test``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from referee.rules.families import presets

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutation:
    """Replace ``old`` (found exactly once in ``path``) by ``new``: one broken rule."""

    rule: str
    path: str
    old: str
    new: str


MUTATIONS_FILE = ROOT / "tools" / "mutations.toml"


def load_mutations(path: Path = MUTATIONS_FILE) -> tuple[Mutation, ...]:
    """The mutations listed in ``path`` (a ``[[mutation]]`` table each: rule, path, old, new)."""
    with open(path, "rb") as f:
        entries = tomllib.load(f).get("mutation", [])
    out = []
    for i, entry in enumerate(entries, 1):
        if set(entry) != {"rule", "path", "old", "new"}:
            raise ValueError(f"{path}: mutation {i}: expected the fields rule, path, old and new, "
                             f"got {', '.join(sorted(entry))}")
        out.append(Mutation(**entry))
    return tuple(out)


MUTATIONS = load_mutations()

#: The fast rules tests, run when a mutation leaves every vector passing.
TESTS = ("tests/rules/test_conformance.py", "tests/rules/test_structure_match.py",
         "tests/rules/test_actions_and_records.py", "tests/rules/test_hidden_information.py",
         "tests/referee/test_greedy_bot.py")



@dataclass(frozen=True)
class Outcome:
    mutation: Mutation
    caught_by: str  # "" when nothing failed
    seconds: float


def _copy_project(dest: Path) -> None:
    ignore = shutil.ignore_patterns(".git", ".venv", "node_modules", "build", "__pycache__",
                                    "*.egg-info", "records", "*.db")
    for name in ("referee", "scheduler", "tools", "protos", "tests", "sample_bots", "seasons"):
        src = ROOT / name
        if src.exists():
            shutil.copytree(src, dest / name, ignore=ignore)
    for name in ("pyproject.toml",):
        shutil.copy2(ROOT / name, dest / name)


def _vectors_fail(work: Path) -> int:
    """How many vector cases fail in the copy (-1: the runner itself broke)."""
    files = [f"tests/vectors/{v}.json" for v in presets()]
    out = subprocess.run([sys.executable, "-m", "cli", "rules", "check", *files],
                         cwd=work, capture_output=True, text=True, env=_env(work))
    failed = sum(1 for line in out.stdout.splitlines() if line.startswith("FAIL"))
    if out.returncode != 0 and failed == 0:
        return -1
    return failed


class NotGreen(RuntimeError):
    """The unmutated project already fails: a mutation's failure would prove nothing."""


def _tests_fail(work: Path) -> str:
    tests = [t for t in TESTS if (work / t).exists()]
    out = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                          *tests], cwd=work, capture_output=True, text=True, env=_env(work))
    if out.returncode == 0:
        return ""
    failed = [line.split()[1] for line in out.stdout.splitlines() if line.startswith("FAILED")]
    return failed[0] if failed else f"pytest exit {out.returncode}"


def _env(work: Path) -> dict:
    import os
    env = dict(os.environ)
    env["PYTHONPATH"] = str(work)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run(mutations=MUTATIONS, progress=print) -> list[Outcome]:
    """Apply each mutation alone to a copy of the project and say what caught it."""
    results = []
    with tempfile.TemporaryDirectory(prefix="arena-mutate-") as tmp:
        work = Path(tmp) / ROOT.name
        work.mkdir()
        _copy_project(work)
        beside = ROOT.parent / "shared"  # the tests read what lies beside the project, if any
        if beside.is_dir():
            (Path(tmp) / "shared").symlink_to(beside)
        where = subprocess.run([sys.executable, "-c", "import referee; print(referee.__file__)"],
                               cwd=work, capture_output=True, text=True, env=_env(work))
        if not where.stdout.strip().startswith(str(work)):
            raise RuntimeError(f"the copy's engine is not the one imported: {where.stdout!r}")
        if _vectors_fail(work):
            raise NotGreen("the rules vectors fail before any mutation (arena rules check "
                           "tests/vectors/*.json): make them pass first")
        tests_green = None
        for i, m in enumerate(mutations, 1):
            path = work / m.path
            original = path.read_text()
            n = original.count(m.old)
            start = time.perf_counter()
            if n != 1:
                caught = f"STALE: the line to change occurs {n} times in {m.path}"
            else:
                path.write_text(original.replace(m.old, m.new))
                try:
                    failed = _vectors_fail(work)
                    if failed > 0:
                        caught = f"{failed} vector case{'s' if failed != 1 else ''}"
                    elif failed < 0:
                        caught = "the vector runner fails"
                    else:
                        if tests_green is None:  # once, on the unmutated copy
                            path.write_text(original)
                            failing = _tests_fail(work)
                            if failing:
                                raise NotGreen(f"the fast rules tests fail before any "
                                               f"mutation ({failing})")
                            tests_green = True
                            path.write_text(original.replace(m.old, m.new))
                        test = _tests_fail(work)
                        caught = f"test {test}" if test else ""
                finally:
                    path.write_text(original)
            out = Outcome(m, caught, time.perf_counter() - start)
            results.append(out)
            mark = "caught" if caught and not caught.startswith("STALE") else "MISSED"
            progress(f"[{i:2}/{len(mutations)}] {mark:6} {m.rule}: {caught or 'nothing failed'}")
    return results
