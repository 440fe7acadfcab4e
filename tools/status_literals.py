"""Status literals: the string constants of the scheduler, the dashboard, the command line and
the lab that spell a state of ``scheduler.states`` (``"pending"``, ``"ready"``...) instead of
naming its member. ``python -m tools.status_literals [ROOT]`` counts them in a tree (this one
by default); ``tests/house/test_structure.py`` wants none.

A literal is a whole string constant equal to a member's value: a docstring, the text of an
f-string, a longer sentence ("3 done") or the member of another enum is none. The state module
itself and the migrations (history, frozen as written) are not read; ``ALLOWED`` lists the few
constants that are the same word but no state.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from scheduler import states

PACKAGES = ("scheduler", "web", "cli", "lab")
"""The packages read."""
SKIPPED = ("scheduler/states.py", "scheduler/migrations/")
"""The state module itself, and the migrations: a migration keeps the words it was written
with, whatever the enums become."""
ALLOWED = {
    # a deal's own progress flag in the study's in-process play: no state of the scheduler
    ("lab/study.py", "done"),
    # a ladder entry as the table shows it: retired, else active (no stored state)
    ("cli/season.py", "active"),
    # the kinds of an upload process's reply (prepared, refused, late, died, failed)
    ("scheduler/service/uploads.py", "refused"),
    ("scheduler/service/uploads.py", "failed"),
    # a bot's place in a ladder, in words ("playing", "placement: 3 of 8 pairs played"...)
    ("scheduler/ladder.py", "playing"),
    # the matches a version's statistics by role are "over" (its field naming them in words)
    ("scheduler/service/roles.py", "over"),
}
"""(file, word) pairs that are the word of a state but not one."""


def values() -> frozenset[str]:
    """Every member value of the enums of ``scheduler.states``."""
    return frozenset(m.value for e in vars(states).values()
                     if isinstance(e, type) and issubclass(e, StrEnum) and e is not StrEnum
                     for m in e)


@dataclass(frozen=True, slots=True, order=True)
class Literal:
    """One status literal: where it is and the word."""

    path: str
    line: int
    word: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.word!r}"


def literals_in(tree: ast.Module, path: str, words: frozenset[str]) -> list[Literal]:
    """The status literals of one module's tree (``path`` as it is reported)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any("Enum" in ast.unparse(b) for b in node.bases):
            skip.update(id(s.value) for s in node.body if isinstance(s, ast.Assign))
            continue  # another fixed set's members
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.body and isinstance(node.body[0], ast.Expr) and isinstance(
                    node.body[0].value, ast.Constant):
                skip.add(id(node.body[0].value))
        elif isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            skip.add(id(node.value))  # an attribute's docstring
    return sorted(Literal(path, node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and node.value in words and id(node) not in skip
                  and (path, node.value) not in ALLOWED)


def literals(root: Path, words: frozenset[str] | None = None) -> list[Literal]:
    """Every status literal of the tree at ``root``."""
    words = values() if words is None else words
    out = []
    for package in PACKAGES:
        for file in sorted((root / package).rglob("*.py")):
            rel = file.relative_to(root).as_posix()
            if not rel.startswith(SKIPPED):
                out += literals_in(ast.parse(file.read_text(encoding="utf-8"), rel), rel, words)
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    found = literals(Path(args[0]) if args else Path(__file__).resolve().parent.parent)
    for f in found:
        print(f)
    files = Counter(f.path for f in found)
    print(f"{len(found)} status literals in {len(files)} files: "
          + ", ".join(f"{w} {n}" for w, n in Counter(f.word for f in found).most_common()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
