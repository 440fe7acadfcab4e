"""The floor plan holds: no module of the project reaches into another's private names, no
import circle between modules, and no package imports one above it (the rules engine at the
bottom, the CLI at the top)."""

import ast
from pathlib import Path

from conftest import ROOT

PACKAGES = ("referee", "scheduler", "web", "lab", "tools", "cli")
"""The project's packages, lowest first: each may import only those before it (tools and the
CLI sit over everything; the lab over the library, beside the dashboard)."""
FLOOR = {"referee": 0, "scheduler": 1, "web": 2, "lab": 2, "tools": 3, "cli": 4}


def _modules() -> dict[str, ast.Module]:
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            out[".".join(parts)] = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return out


MODULES = _modules()


def _absolute(module: str, node: ast.ImportFrom) -> str:
    """The module an ``ImportFrom`` in ``module`` names, a relative one resolved."""
    if node.level == 0:
        return node.module or ""
    package = module if _is_package(module) else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _is_package(module: str) -> bool:
    return (ROOT / module.replace(".", "/") / "__init__.py").is_file()


def _top_level_imports(module: str):
    """(line, module imported, names) of the imports that run when ``module`` loads: those of
    its body and of its top-level if/try blocks, not those inside functions or under
    ``TYPE_CHECKING``."""
    todo = list(MODULES[module].body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.If):
            if "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            todo[:0] = node.body + node.orelse
        elif isinstance(node, ast.Try):
            todo[:0] = node.body + node.orelse + node.finalbody + [
                n for h in node.handlers for n in h.body]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, _absolute(module, node), tuple(a.name for a in node.names)


def _all_imports(module: str):
    for node in ast.walk(MODULES[module]):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, (), alias.asname
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                yield node.lineno, _absolute(module, node), (alias.name,), alias.asname


def _ours(name: str) -> str | None:
    """The project module ``name`` names (itself or the package holding it), if any."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def test_no_module_reaches_into_another_modules_private_names():
    found = []
    for module, tree in MODULES.items():
        aliases = {}
        for line, target, names, asname in _all_imports(module):
            other = _ours(target)
            if other is None:
                continue
            for name in names:
                if name.startswith("_") and not name.startswith("__"):
                    found.append(f"{module}:{line}: from {target} import {name}")
                elif f"{target}.{name}" in MODULES:
                    aliases[asname or name] = f"{target}.{name}"
            if not names:
                aliases[asname or target.split(".")[0]] = target
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                found.append(f"{module}:{node.lineno}: {node.value.id}.{node.attr}")
    assert found == []


def test_no_import_circle_between_the_projects_modules():
    graph = {m: set() for m in MODULES}
    for module, tree in MODULES.items():
        for _line, target, names in _top_level_imports(module):
            for name in names or ("",):
                other = _ours(f"{target}.{name}" if name else target)
                if other is not None and other != module:
                    graph[module].add(other)
    circles, state = [], {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                circles.append(" -> ".join(path[path.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert circles == []


def test_no_package_imports_one_above_it():
    upward = []
    for module, tree in MODULES.items():
        floor = FLOOR[module.split(".")[0]]
        for line, target, _names, _asname in _all_imports(module):
            top = target.split(".")[0]
            if top in FLOOR and FLOOR[top] > floor:
                upward.append(f"{module}:{line} imports {target}")
    assert upward == []


def test_the_checks_see_the_project():
    # the walk found the engine, the scheduler and the CLI, and their imports between them
    assert {"referee.rules.engine", "scheduler.store", "cli.main"} <= set(MODULES)
    assert any(_ours(t) == "referee.rules" or (_ours(t) or "").startswith("referee.")
               for _l, t, _n in _top_level_imports("scheduler.execute"))
