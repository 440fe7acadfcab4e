"""A cheaper editable install: the project's packages found at start-up without setuptools' finder.

``pip install -e .`` makes every interpreter of the venv import setuptools' editable finder, and
that finder imports ``pathlib`` and ``importlib.util``: about 30 ms at the start of every
referee, bot and command. ``make install`` runs this afterwards. It reads the finder's own map
of top-level packages to folders, writes a small finder module that uses only what the
interpreter has already loaded, and points the install's ``.pth`` at that module. As before, the
repository is not on ``sys.path``: a bot launched with the venv's interpreter still gets only
what its manifest names on its path.

    python -m tools.start_up_paths       # after pip install -e .; a second run changes nothing
"""

from __future__ import annotations

import ast
import os
import py_compile
import sys
import sysconfig
from pathlib import Path

MODULE = "_shengji_arena_paths"
PTH_GLOB = "__editable__.shengji_arena-*.pth"

FINDER = '''\
"""The Shengji Arena project's top-level packages, found in their folders (written by
tools/start_up_paths.py in place of setuptools' editable finder, which costs every interpreter
about 30 ms at start-up)."""
import sys
from importlib.machinery import PathFinder

PARENTS = {parents!r}


class ProjectFinder:
    """Finds a top-level package of the project in its folder's parent; its modules are then
    found the usual way, through the package's path."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        parent = PARENTS.get(fullname)
        return None if parent is None else PathFinder.find_spec(fullname, [parent])


sys.meta_path.append(ProjectFinder)
'''


def setuptools_mapping(finder: Path) -> dict[str, str]:
    """The ``MAPPING`` (package name -> folder) assigned in setuptools' generated finder."""
    for node in ast.parse(finder.read_text(encoding="utf-8"), str(finder)).body:
        if not isinstance(node, (ast.AnnAssign, ast.Assign)) or node.value is None:
            continue
        target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
        if isinstance(target, ast.Name) and target.id == "MAPPING":
            return ast.literal_eval(node.value)
    raise ValueError(f"{finder}: no MAPPING assignment")


def install(site: Path) -> str:
    """Point the project's editable ``.pth`` in ``site`` at the small finder; what was done."""
    pths = sorted(site.glob(PTH_GLOB))
    if len(pths) != 1:
        return f"{site}: expected one {PTH_GLOB}, found {len(pths)}: left as it is"
    pth = pths[0]
    line = pth.read_text(encoding="utf-8").strip()
    if line == f"import {MODULE}":
        return f"{pth}: already uses {MODULE}"
    module = line.split(";")[0].removeprefix("import ").strip()
    finder = site / f"{module}.py"
    if not line.startswith("import ") or not finder.is_file():
        return f"{pth}: not setuptools' finder ({line[:60]!r}): left as it is"
    mapping = setuptools_mapping(finder)
    odd = [name for name, folder in mapping.items() if os.path.basename(folder) != name]
    if odd:
        return f"{finder}: folders not named after their packages ({', '.join(odd)}): left"
    parents = {name: os.path.dirname(folder) for name, folder in sorted(mapping.items())}
    (site / f"{MODULE}.py").write_text(FINDER.format(parents=parents), encoding="utf-8")
    py_compile.compile(str(site / f"{MODULE}.py"), doraise=True)  # an environment may forbid
    # writing bytecode: compiled here, not again at every start
    pth.write_text(f"import {MODULE}\n", encoding="utf-8")
    return f"{pth}: now imports {MODULE} ({len(parents)} packages)"


def main() -> int:
    print(install(Path(sysconfig.get_paths()["purelib"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
