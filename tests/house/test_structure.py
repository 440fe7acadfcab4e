"""The floor plan holds: no module of the project reaches into another's private names, no
import circle between modules, and no package imports one above it (the rules engine at the
bottom, the CLI at the top)."""

import ast
import functools
from pathlib import Path

from conftest import ROOT

PACKAGES = ("house", "referee", "scheduler", "web", "lab", "tools", "cli")
"""The project's packages, lowest first: each may import only those before it (the house's
settings table under everything; tools and the CLI over everything; the lab over the library,
beside the dashboard)."""
FLOOR = {"house": -1, "referee": 0, "scheduler": 1, "web": 2, "lab": 2, "tools": 3, "cli": 4}


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


def _circles(imports) -> list[str]:
    """The import circles between the project's modules, by the imports ``imports(module)``
    gives ((line, target, names, ...) each), each as "a -> b -> a"."""
    graph = {m: set() for m in MODULES}
    for module in MODULES:
        for _line, target, names, *_ in imports(module):
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
    return circles


def test_no_import_circle_between_the_projects_modules():
    assert _circles(_top_level_imports) == []


def test_no_import_circle_even_through_the_imports_inside_functions():
    """An import inside a function breaks no circle, it only hides one: the worker that stores
    a match importing the intake, which imports the worker's match (once found this way), is
    as tangled as if it were at the top."""
    assert _circles(_all_imports) == []


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


# -- the match record is written and read as typed values ----------------------------------------
_RECORD_WRITERS = ("referee.match.runner", "referee.match.local", "referee.serve")
"""The modules that build a match's record: they make its faults, deal results and result as the
typed values of ``referee.match.results``, and set the match file's fields."""


def _record_shapes() -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """Each typed value of a match record: (its fields, those with no default)."""
    from dataclasses import MISSING, fields

    from referee.match.matchfile import MatchFile
    from referee.match.results import DealResult, Fault, Forfeit, MatchResult
    return {t.__name__: (frozenset(f.name for f in fields(t)),
                         frozenset(f.name for f in fields(t)
                                   if f.default is MISSING and f.default_factory is MISSING))
            for t in (Fault, DealResult, Forfeit, MatchResult, MatchFile)}


def _string_keys(node: ast.AST) -> set[str] | None:
    """The constant string keys of a dict display or a ``dict(...)`` call, else None."""
    if isinstance(node, ast.Dict):
        return {k.value for k in node.keys
                if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return {k.arg for k in node.keywords if k.arg is not None}
    return None


def _dicts_shaped_like_records(module: str, tree: ast.Module | None = None) -> list[str]:
    """Where ``module`` (or the source ``tree``) writes a record value as a dict: a dict whose
    keys are fields of a typed value, two of them required ones, or a string key of one set on
    a dict."""
    shapes = _record_shapes()
    named = set().union(*(every for every, _ in shapes.values()))
    found = []
    for node in ast.walk(MODULES[module] if tree is None else tree):
        keys = _string_keys(node)
        if keys:
            for name, (every, required) in shapes.items():
                if keys <= every and len(keys & required) >= 2:
                    found.append(f"{module}:{node.lineno}: a {name} as a dict {sorted(keys)}")
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, ast.AugAssign) else [])
        for t in targets:
            if (isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant)
                    and t.slice.value in named):
                found.append(f"{module}:{node.lineno}: sets {t.slice.value!r} on a dict")
    return found


def test_the_referee_builds_its_record_as_typed_values():
    found = [f for module in _RECORD_WRITERS for f in _dicts_shaped_like_records(module)]
    assert found == []


def test_the_record_shape_check_finds_a_fault_written_as_a_dict():
    """The check above, on a fault, a deal result and a key set the way the runner once wrote
    them."""
    once = ast.parse(
        'entry = {"seat": seat, "kind": kind, "reason": reason, "strikes": n}\n'
        'entry["default_action"] = action.text()\n'
        'deal = dict(game=index, deal=e.deal, attacker_total=e.attacker_total, levels=x)\n')
    found = _dicts_shaped_like_records("referee.match.runner", once)
    assert sorted(f.split(" [")[0] for f in found) == [
        "referee.match.runner:1: a Fault as a dict",
        "referee.match.runner:2: sets 'default_action' on a dict",
        "referee.match.runner:3: a DealResult as a dict"]


_DEAL_FOLD = "referee.match.results"
"""Where a deal's events are folded into its summary (``DealFold``), the only place."""
_FOLD_USERS = ("referee.match.matchfile", "lab.match", "lab.study")


def _summaries_made(module: str) -> list[int]:
    """The lines of ``module`` that make a deal's summary from its events
    (``DealSummary.of``)."""
    return [node.lineno for node in ast.walk(MODULES[module])
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "of" and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "DealSummary"]


def test_a_deals_events_are_folded_into_its_summary_in_one_place():
    folds = {m: lines for m in MODULES if (lines := _summaries_made(m))}
    assert list(folds) == [_DEAL_FOLD], folds
    for module in _FOLD_USERS:
        imported = {name for _l, target, names, _a in _all_imports(module)
                    if _ours(target) in (_DEAL_FOLD, "referee.match.matchfile")
                    for name in names}
        assert imported & {"DealFold", "fold_deals"}, f"{module} folds no deal with DealFold"


# -- the store package ------------------------------------------------------------------------
STORE = ROOT / "scheduler" / "store"
#: the longest a file of the store package may grow
STORE_FILE_LINES = 400


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` of a chain of attributes on a name; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _store_object(dotted: str):
    """The object ``dotted`` names under ``scheduler.store`` (its longest importable module,
    then attributes); None when it names nothing there."""
    import importlib
    parts = dotted.split(".")
    for cut in range(len(parts), 1, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
        return obj
    return None


def _imported(module: str, node: ast.AST):
    """(module imported, name, bound as) of each name an import statement binds."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name, None, alias.asname
    elif isinstance(node, ast.ImportFrom):
        for alias in node.names:
            yield _absolute(module, node), alias.name, alias.asname


def _table_uses(module: str, body: list[ast.AST], bound: dict[str, str]):
    """(line, what) of each SQLAlchemy import and each store table named in ``body``, a
    scope whose imports bind names (``bound``: name -> the dotted path it stands for) for it
    and the scopes nested in it only."""
    from sqlalchemy import Table
    bound, here, nested, todo = dict(bound), [], [], list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            nested.append(node.body)
        elif isinstance(node, ast.Lambda):
            nested.append([node.body])
        else:
            here.append(node)
            todo.extend(ast.iter_child_nodes(node))
    for node in here:
        for target, name, asname in _imported(module, node):
            if target.split(".")[0] == "sqlalchemy":
                yield node.lineno, f"imports {target}"
            if name is not None:
                if target.startswith("scheduler.store") and \
                        isinstance(_store_object(f"{target}.{name}"), Table):
                    yield node.lineno, f"imports the table {target}.{name}"
                bound[asname or name] = f"{target}.{name}"
            else:
                bound[asname or target.split(".")[0]] = target if asname else \
                    target.split(".")[0]
    for node in here:
        dotted = _dotted(node) if isinstance(node, (ast.Attribute, ast.Name)) else None
        head, _, rest = (dotted or "").partition(".")
        if head not in bound:
            continue
        path = ".".join(p for p in (bound[head], rest) if p)
        if path.startswith("scheduler.store") and isinstance(_store_object(path), Table):
            yield node.lineno, f"{dotted} is the table {path}"
    for inner in nested:
        yield from _table_uses(module, inner, bound)


def test_the_dashboard_and_the_command_line_build_no_sql():
    """No module of ``web/`` or ``cli/`` imports SQLAlchemy, nor names a table (a SQLAlchemy
    ``Table``) of the store package, whether imported (``from scheduler.store import
    matches``) or reached through the module (``store.matches``, with the store imported in
    that scope): they call the store's queries."""
    found = sorted({f"{module}:{line}: {what}" for module, tree in MODULES.items()
                    if module.split(".")[0] in ("web", "cli")
                    for line, what in _table_uses(module, tree.body, {})})
    assert found == []


def _json_columns() -> frozenset[str]:
    from scheduler.store.schema import metadata
    return frozenset(c.name for t in metadata.tables.values() for c in t.columns
                     if c.name.endswith("_json"))


def test_only_the_store_package_reads_its_json_columns():
    """A JSON column of the store (a ``*_json`` column of its ``metadata``) is read back only
    inside ``scheduler/store/``, by the typed rows (``row.seats``, ``row.summary``, ...). Outside
    it, the AST never reads one by name: no subscript (``row["seats_json"]``), no
    ``.get("seats_json")``, no attribute read (``row.seats_json``), so no ``json.loads`` of a
    column either. Writing one (a key of a new row's dict, a keyword) stays allowed."""
    columns = _json_columns()
    assert {"seats_json", "summary_json", "config_json", "manifest_json"} <= columns
    found = []
    for module, tree in MODULES.items():
        if module == "scheduler.store" or module.startswith("scheduler.store."):
            continue
        for node in ast.walk(tree):
            name = None
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) \
                    and isinstance(node.slice, ast.Constant):
                name = node.slice.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "get" and node.args \
                    and isinstance(node.args[0], ast.Constant):
                name = node.args[0].value
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                name = node.attr
            if isinstance(name, str) and name in columns:
                found.append(f"{module}:{node.lineno}: reads the column {name}")
    assert found == []


def test_no_file_of_the_store_package_is_over_its_length():
    """Every file of ``scheduler/store/`` has at most ``STORE_FILE_LINES`` lines; and none is
    named as a table (the module would hide the table the package exports by that name)."""
    from scheduler.store.schema import metadata
    files = sorted(STORE.glob("*.py"))
    long = {path.name: n for path in files
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > STORE_FILE_LINES}
    assert len(files) >= 5 and long == {}
    assert {path.stem for path in files} & set(metadata.tables) == set()


#: the bases a row of the store may not take: a row is read by attribute, never by key
_MAPPING_BASES = frozenset({"Mapping", "MutableMapping", "dict", "UserDict", "OrderedDict"})


def _mapping_classes(tree: ast.AST) -> list[str]:
    """The classes of ``tree`` with a mapping or a dict among their bases."""
    return [f"{node.name} ({node.lineno})" for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef)
            and any((_dotted(b) or "").rpartition(".")[2] in _MAPPING_BASES for b in node.bases)]


def test_no_row_of_the_store_is_a_mapping():
    """The store's rows are frozen values read by attribute (``row.season``): no class of
    ``scheduler/store/`` is a ``Mapping`` or a ``dict``, so ``row["season"]`` is an error, not
    a second way to read a column."""
    from collections.abc import Mapping
    from scheduler.store import rows
    found = {m: got for m in _package_modules("scheduler.store")
             if (got := _mapping_classes(MODULES[m]))}
    assert found == {}
    kinds = [c for c in vars(rows).values() if isinstance(c, type) and issubclass(c, rows.Row)]
    assert len(kinds) >= 8 and not any(issubclass(c, Mapping) for c in kinds)


_ROW_MODULES = ("scheduler.store.rows", "scheduler.store.plain_rows")


def _row_subclasses(module: str, kinds: set[str]) -> list[str]:
    """The classes of ``module`` with a base among ``kinds`` (classes of the store's rows),
    named as imported from the store (``BotVersionRow``) or through it (``rows.BotRow``)."""
    tree = MODULES[module]
    from_store = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and \
                _absolute(module, node).split(".")[:2] == ["scheduler", "store"]:
            from_store |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            from_store |= {(a.asname or a.name).split(".")[0] for a in node.names
                           if a.name.split(".")[:2] == ["scheduler", "store"]}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for base in node.bases:
            parts = (_dotted(base) or "").split(".")
            if parts[-1] in kinds and parts[0] in from_store:
                found.append(f"{module}:{node.lineno} {node.name}({'.'.join(parts)})")
    return found


def test_no_class_outside_the_store_subclasses_a_store_row():
    """A store row is the one type of what it reads: a registry version is ``BotVersionRow``,
    with its ref and manifest, not a second class over it. No class outside
    ``scheduler/store/`` has a base defined in ``rows.py`` or ``plain_rows.py``."""
    kinds = {n.name for m in _ROW_MODULES for n in MODULES[m].body
             if isinstance(n, ast.ClassDef)}
    assert {"Row", "BotVersionRow", "BotRow"} <= kinds
    inside = [w for m in _package_modules("scheduler.store") for w in _row_subclasses(m, kinds)]
    assert any("SeasonRow(Row)" in w for w in inside), inside  # (it sees them)
    found = [w for m in MODULES if m not in _package_modules("scheduler.store")
             for w in _row_subclasses(m, kinds)]
    assert found == [], found


def _run_time_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of each import of ``tree`` but those under ``if TYPE_CHECKING:``."""
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and (_dotted(node.test) or "").endswith("TYPE_CHECKING")
                   for stmt in node.body for n in ast.walk(stmt)}
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.lineno, node.module))
    return found


def test_the_store_scores_nothing():
    """Scoring left the store: no module of ``scheduler/store/`` imports ``scheduler.stats``
    at run time (a tally or a pair's score is counted by ``scheduler.stats.scores`` and handed
    in typed; the store may name those types under ``if TYPE_CHECKING:`` only, since the
    statistics in turn import no store)."""
    found = [f"{m}:{line} imports {target}" for m in _package_modules("scheduler.store")
             for line, target in _run_time_imports(MODULES[m])
             if target == "scheduler.stats" or target.startswith("scheduler.stats.")]
    assert found == []
    probe = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                      "    from scheduler.stats.scores import MatchTally\n"
                      "def f():\n    from scheduler.stats.scores import match_tally\n")
    assert [t for _, t in _run_time_imports(probe)] == ["typing", "scheduler.stats.scores"]


# -- the command line: one module per command group ---------------------------------------------
CLI_MAIN = ROOT / "cli" / "main.py"
#: the longest ``cli/main.py`` may grow: the top-level parser and the dispatch, no commands
CLI_MAIN_LINES = 300


def _cli_modules() -> dict[str, ast.Module]:
    return {m: tree for m, tree in MODULES.items() if m == "cli" or m.startswith("cli.")}


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    """The calls of ``name``, as a function (``name(...)``) or a method (``x.name(...)``)."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and (isinstance(node.func, ast.Name) and node.func.id == name
                 or isinstance(node.func, ast.Attribute) and node.func.attr == name)]


def test_the_command_lines_main_module_is_short():
    lines = len(CLI_MAIN.read_text(encoding="utf-8").splitlines())
    assert lines <= CLI_MAIN_LINES, f"cli/main.py has {lines} lines"


def test_no_command_module_imports_by_name_at_run_time():
    """No module of ``cli/`` calls ``__import__``: a command's code is imported as code."""
    found = [f"{module}:{node.lineno}" for module, tree in _cli_modules().items()
             for node in _calls(tree, "__import__")]
    assert found == []


def test_each_command_group_registers_its_own_subcommands():
    """``build_parser`` makes the top-level parser and its one ``add_subparsers``, and no
    command: each group's module adds its own in its ``register(sub)``, where every
    ``add_parser`` of ``cli/`` is."""
    build = [node for node in ast.walk(MODULES["cli.main"])
             if isinstance(node, ast.FunctionDef) and node.name == "build_parser"]
    assert len(build) == 1
    assert [n.lineno for n in _calls(build[0], "add_parser")] == []
    assert len(_calls(build[0], "add_subparsers")) == 1
    outside = []
    for module, tree in _cli_modules().items():
        inside = {id(call) for node in ast.walk(tree)
                  if isinstance(node, ast.FunctionDef) and node.name == "register"
                  for call in _calls(node, "add_parser")}
        outside += [f"{module}:{call.lineno}" for call in _calls(tree, "add_parser")
                    if id(call) not in inside]
    assert outside == []


# -- the scheduler's rooms: statistics, registry, study play, fault policy ----------------------
def _package_modules(package: str) -> list[str]:
    return [m for m in MODULES if m == package or m.startswith(package + ".")]


def _imports_of(package: str, banned: tuple[str, ...]) -> list[str]:
    """Where a module of ``package`` imports one of ``banned`` (or a module inside one), at
    any depth (in functions too)."""
    found = []
    for module in _package_modules(package):
        for line, target, names, _asname in _all_imports(module):
            for name in names or ("",):
                full = f"{target}.{name}" if name else target
                if any(x == b or x.startswith(b + ".") for b in banned
                       for x in (target, full)):
                    found.append(f"{module}:{line} imports {full}")
    return found


def test_the_statistics_are_pure():
    """``scheduler/stats/`` reads plain values: no module of it imports the store or
    SQLAlchemy (the store hands its rows over; ``scheduler.reports`` does for the
    standings)."""
    assert len(_package_modules("scheduler.stats")) >= 4
    assert _imports_of("scheduler.stats", ("scheduler.store", "sqlalchemy")) == []


def test_the_registry_imports_no_scheduling():
    """``scheduler/registry/`` keeps bot versions; it runs no season: no module of it imports
    the league, the tasks, the match execution, the workers or the season files."""
    assert len(_package_modules("scheduler.registry")) >= 4
    scheduling = tuple(f"scheduler.{m}" for m in ("league", "tasks", "execute", "workers",
                                                  "season", "pinning"))
    assert _imports_of("scheduler.registry", scheduling) == []


_PATH_LOADS = frozenset({"spec_from_file_location", "SourceFileLoader", "run_path",
                         "load_source", "exec_module"})
"""Calls that run a file by its path rather than importing a module."""
_SAMPLES_PENDING = {"lab.policy"}
"""Modules that still run a sample's policy from ``sample_bots/`` by its path (the lab's
``greedy``, ``cheap`` and ``search``), until those policies are importable: the list only
shrinks."""


def _mutates_sys_path(node: ast.AST) -> bool:
    """``sys.path.insert/append/extend(...)``, ``sys.path += ...`` or ``sys.path[...] = ...``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("insert", "append", "extend") \
            and ast.unparse(node.func.value) == "sys.path":
        return True
    targets = (node.targets if isinstance(node, ast.Assign) else
               [node.target] if isinstance(node, ast.AugAssign) else [])
    return any(ast.unparse(t).startswith("sys.path") for t in targets)


def _sample_names() -> dict[str, set[str]]:
    """Each module's top-level names bound to a path under ``sample_bots/``."""
    out: dict[str, set[str]] = {}
    for module, tree in MODULES.items():
        for node in tree.body:
            if isinstance(node, ast.Assign) and "sample_bots" in ast.unparse(node.value):
                out.setdefault(module, set()).update(
                    t.id for t in node.targets if isinstance(t, ast.Name))
    return out


@functools.cache
def _path_loaders() -> frozenset[str]:
    """The project's functions that load a file by path or put a folder on the import path."""
    loaders = set()
    for tree in MODULES.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and any(
                    _mutates_sys_path(n) or (isinstance(n, ast.Call) and (
                        getattr(n.func, "attr", None) in _PATH_LOADS
                        or getattr(n.func, "id", None) in _PATH_LOADS))
                    for n in ast.walk(node)):
                loaders.add(node.name)
    return frozenset(loaders)


def _loads_from_samples(module: str, tree: ast.Module | None = None) -> list[str]:
    """Where ``module`` (or the source ``tree``) puts a folder of ``sample_bots/`` on the
    import path or runs a file of it by path: a function or top-level statement that does
    either (itself, or through a function of the project that does) and names
    ``sample_bots`` (as text, or by a name bound to a path under it)."""
    tree = MODULES[module] if tree is None else tree
    samples = _sample_names()
    sample_names = set(samples.get(module, ()))
    loaders = _path_loaders()
    for _line, target, names, asname in _all_imports(module):
        other = _ours(target)
        for name in names:
            if other is not None and name in samples.get(other, ()):
                sample_names.add(asname or name)
    units = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    units += [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    found = []
    for unit in units:
        text = ast.unparse(unit)
        named = "sample_bots" in text or any(
            isinstance(n, ast.Name) and n.id in sample_names for n in ast.walk(unit))
        if not named:
            continue
        lines = []
        for n in ast.walk(unit):
            called = getattr(getattr(n, "func", None), "attr", None) or \
                getattr(getattr(n, "func", None), "id", None)
            if _mutates_sys_path(n) or (isinstance(n, ast.Call) and (
                    called in _PATH_LOADS or called in loaders)):
                lines.append(n.lineno)
        if lines:
            found.append(f"{module}:{min(lines)}")
    return found


def test_nothing_outside_the_samples_loads_a_sample_by_its_path():
    """A sample bot is a folder a newcomer copies, played as a process: no module outside
    ``sample_bots/`` puts one of its folders on the import path or runs one of its files by
    path (the study plays the lab's policies and the engine's players)."""
    found = {m: got for m in MODULES if (got := _loads_from_samples(m))}
    assert set(found) <= _SAMPLES_PENDING, found


def test_the_sample_load_check_finds_the_studys_old_greedy_loader():
    """The check above, on the way the study once loaded the greedy sample bot."""
    once = ast.parse(
        "def _greedy_bot():\n"
        "    if str(ROOT / 'protos') not in sys.path:\n"
        "        sys.path.insert(0, str(ROOT / 'protos'))\n"
        "    spec = importlib.util.spec_from_file_location(\n"
        "        'arena_greedy_bot', ROOT / 'sample_bots' / 'python' / 'greedy' / 'bot.py')\n"
        "    return spec\n")
    assert _loads_from_samples("lab.study", once) == ["lab.study:3"]


_FAULTS = "referee.match.faults"
"""The referee's fault policy (strikes, the action played for a seat, the forfeit), the one
place both the match runner and the lab take it from."""


def test_the_runner_and_the_lab_share_one_fault_policy():
    for module in ("referee.match.runner", "lab.match"):
        imported = {name for _l, target, names, _a in _all_imports(module)
                    if target == _FAULTS for name in names}
        assert {"Forfeited", "action_for", "add_strike", "forfeit_if_out"} <= imported, module
    # the lab keeps no strike limit or forfeit of its own: no comparison with a strike count,
    # no exception class of its own
    tree = MODULES["lab.match"]
    own = [f"lab.match:{n.lineno}" for n in ast.walk(tree)
           if (isinstance(n, ast.Compare) and "strike" in ast.unparse(n))
           or (isinstance(n, ast.ClassDef) and any("Exception" in ast.unparse(b)
                                                   for b in n.bases))]
    assert own == []


# -- one way to send work ------------------------------------------------------------------------
_DISPATCH = "scheduler.dispatch"
"""The one module that puts work on a lane (``dispatch``, through a ``Sender``)."""
_PUTS_ON_A_LANE = {"apply_async", "send_task", "delay"}
"""Celery's calls that put a task on a queue."""


def _puts_on_a_lane(module: str, tree: ast.Module) -> list[str]:
    """Where ``tree`` puts work on a lane itself: a Celery call that queues a task, or a
    sender's ``send`` (the receiver named as a sender: ``sender.send``, ``self.sender.send``)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver = ast.unparse(node.func.value).lower()
            if node.func.attr in _PUTS_ON_A_LANE or (node.func.attr == "send"
                                                      and "sender" in receiver):
                out.append(f"{module}:{node.lineno}")
    return out


def test_only_the_dispatch_module_puts_work_on_a_lane():
    """Seasons, ladders, scrimmages and the intake send through ``dispatch.dispatch`` (with
    one resend rule, ``dispatch.Resend``): no other module calls a sender or Celery itself."""
    found = [where for module, tree in MODULES.items() if module != _DISPATCH
             for where in _puts_on_a_lane(module, tree)]
    assert found == []
    assert _puts_on_a_lane(_DISPATCH, MODULES[_DISPATCH])  # (the check sees its one place)


_PLAYS_A_MATCH = {"scheduler.tasks", _DISPATCH}
"""The modules that run the match function: the worker's task and ``dispatch.play_here`` (what
a ``LocalSender``'s processes run, ``run_here`` included); everything else sends a match."""


def _runs_the_match_function(module: str, tree: ast.Module) -> list[str]:
    """Where ``tree`` calls or hands on ``execute_match`` (a pool's ``submit`` included)."""
    return [f"{module}:{node.lineno}" for node in ast.walk(tree)
            if isinstance(node, ast.Name) and node.id == "execute_match"
            and isinstance(node.ctx, ast.Load)
            or isinstance(node, ast.Attribute) and node.attr == "execute_match"]


def test_a_match_is_played_only_where_a_sent_one_is_run():
    """A local run sends its matches the one way too (``dispatch.LocalSender``): no module
    but the task and ``dispatch.play_here`` calls the match function, or submits it to a
    pool."""
    found = [where for module, tree in MODULES.items()
             if module not in _PLAYS_A_MATCH | {"scheduler.execute"}
             for where in _runs_the_match_function(module, tree)]
    assert found == []
    for module in _PLAYS_A_MATCH:  # (the check sees them)
        assert _runs_the_match_function(module, MODULES[module]), module


def test_the_default_broker_is_written_once():
    """The broker's default URL is the settings table's, written in one place."""
    url = "redis://127.0.0.1:6379/0"
    places = [f"{path.relative_to(ROOT)}:{n}" for package in PACKAGES + ("house",)
              for path in sorted((ROOT / package).rglob("*.py"))
              for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
              if url in line]
    assert len(set(places)) == 1, places


# -- one settings table -------------------------------------------------------------------------
SETTINGS_MODULE = "house.settings"
_ENV_READERS = ("referee", "scheduler", "web", "cli", "lab", "tools")


def _arena_env_reads(module: str, tree: ast.Module) -> list[str]:
    """Where ``tree`` reads an ``ARENA_*`` variable from the environment itself:
    ``environ.get``/``pop``, ``getenv`` or ``environ[...]`` (read, not written) of an
    ``ARENA_`` string, or of a module-level constant holding one."""
    constants = {target.id: node.value.value for node in tree.body
                 if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                 and isinstance(node.value.value, str) for target in node.targets
                 if isinstance(target, ast.Name)}

    def arena(node: ast.expr) -> bool:
        value = node.value if isinstance(node, ast.Constant) else (
            constants.get(node.id) if isinstance(node, ast.Name) else None)
        return isinstance(value, str) and value.startswith("ARENA_")

    def environ(node: ast.expr) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "environ"
                or isinstance(node, ast.Name) and node.id == "environ")

    found = []
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute):
            if (node.func.attr in ("get", "pop") and environ(node.func.value)
                    or node.func.attr == "getenv"):
                key = node.args[0]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Name):
            key = node.args[0] if node.func.id == "getenv" else None
        elif (isinstance(node, ast.Subscript) and environ(node.value)
              and isinstance(node.ctx, ast.Load)):
            key = node.slice
        if key is not None and arena(key):
            found.append(f"{module}:{node.lineno}")
    return found


def test_no_arena_setting_is_read_outside_the_settings_table():
    """Code asks ``house.settings`` for an ``ARENA_*`` variable, never the environment (a
    child's environment may still be written, by the names the table gives)."""
    found = [where for module, tree in MODULES.items()
             if module.split(".")[0] in _ENV_READERS
             for where in _arena_env_reads(module, tree)]
    assert found == []
    seen = _arena_env_reads(SETTINGS_MODULE, ast.parse(
        "import os\nA = 'ARENA_A'\nos.environ.get(A)\nos.getenv('ARENA_B')\n"
        "os.environ['ARENA_C']\nos.environ['ARENA_D'] = '1'\nos.environ.get('HOME')\n"))
    assert seen == [f"{SETTINGS_MODULE}:3", f"{SETTINGS_MODULE}:4", f"{SETTINGS_MODULE}:5"]


FAMILY_ROOMS = ("combos", "flow", "legal", "policy", "scoring")
"""The modules every family of the engine splits its rules into: combinations, follows and the
trick winner; the state type, phases and check/do handlers; the legal listing; the random
player; settling a deal. A family that declares the trump adds ``declare``."""


def test_every_family_keeps_its_rules_in_the_same_rooms():
    """Each package of ``referee/rules/families`` has the same modules for the same sections
    (no ``rules.py`` of its own), and its state type and ``RULES`` come from its ``flow``. The
    toy family of the tests lives outside and may stay one small file."""
    import importlib

    from referee.rules.actions import Declare

    base = "referee.rules.families"
    packages = sorted({m.split(".")[3] for m in MODULES if m.startswith(base + ".")})
    assert {"two_deck", "single_deck", "three_deck"} <= set(packages)
    wrong = []
    for name in packages:
        package = f"{base}.{name}"
        family = importlib.import_module(package).FAMILY
        rooms = set(FAMILY_ROOMS) | ({"declare"} if Declare in family.action_rules else set())
        modules = {m.split(".")[4] for m in MODULES if m.startswith(package + ".")}
        if modules != rooms:
            wrong.append(f"{package}: modules {sorted(modules)}, expected {sorted(rooms)}")
        flow = importlib.import_module(f"{package}.flow")
        if family.state_type.__module__ != flow.__name__:
            wrong.append(f"{package}: the state type comes from {family.state_type.__module__}")
        if family.action_rules is not getattr(flow, "RULES", None):
            wrong.append(f"{package}: RULES does not come from {flow.__name__}")
    assert wrong == []


# -- one error base per layer; HTTP statuses at the web edge only ---------------------------------
_STATUS_MAP = "web.refusals"
"""The one place a refusal (``scheduler.errors.Refusal``) becomes an HTTP status."""


def _http_statuses(module: str, tree: ast.Module) -> list[str]:
    """Where ``tree`` gives an HTTP error status as a number: an integer 400-599 passed to an
    error's constructor (a callee named ``...Error``, ``...Exception`` or ``Refused``) or as
    ``status_code=``/``status=``."""
    def status(node) -> bool:
        return isinstance(node, ast.Constant) and type(node.value) is int \
            and 400 <= node.value <= 599
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        callee = node.func.attr if isinstance(node.func, ast.Attribute) else \
            getattr(node.func, "id", "")
        error = callee.endswith(("Error", "Exception", "Refused"))
        if (error and any(status(a) for a in node.args)) or any(
                k.arg in ("status_code", "status") and status(k.value) for k in node.keywords):
            out.append(f"{module}:{node.lineno}")
    return out


def test_http_statuses_are_given_at_the_web_edge_only():
    """The domain refuses for a reason (``Refused(Refusal.LIMITED, ...)``), and the web edge
    alone says which HTTP status answers it (``web.refusals.STATUS``)."""
    found = [where for module, tree in MODULES.items()
             if module.split(".")[0] in ("scheduler", "web", "lab", "cli")
             and module != _STATUS_MAP for where in _http_statuses(module, tree)]
    assert found == []
    once = ast.parse("raise Refused(429, 'limit reached')\nJSONResponse({}, status_code=403)\n")
    assert _http_statuses("web.service", once) == ["web.service:1", "web.service:2"]


def test_each_layer_has_one_error_base():
    """The scheduler's errors a user is told of are ``ArenaError``s; the command line's own
    (``cli.common.CommandError``) is one too."""
    from cli.common import CommandError
    from scheduler.errors import ArenaError, Refused
    from scheduler.execute import MatchFailed
    from scheduler.registry.archives import RegistryError
    from scheduler.registry.versions import BuildError
    from scheduler.season import SeasonError
    from scheduler.store import StoreError
    for error in (SeasonError, RegistryError, BuildError, StoreError, MatchFailed, Refused,
                  CommandError):
        assert issubclass(error, ArenaError), error


# -- the fixed sets of states as enums ----------------------------------------------------------
def test_no_status_literal_outside_its_enum():
    """A status, state or outcome of ``scheduler.states`` is named by its member in the
    scheduler, the dashboard, the command line and the lab, never spelled
    (``tools.status_literals``: whole string constants only; its ``ALLOWED`` says why each
    exception is no state)."""
    from tools.status_literals import literals, literals_in, values
    assert [str(f) for f in literals(ROOT)] == []
    seen = literals_in(ast.parse('"""done."""\nif s == "done": x = f"{n} done"\n'
                                 'y = {"status": "queued"}\n'), "m.py", values())
    assert [str(f) for f in seen] == ["m.py:2: 'done'", "m.py:3: 'queued'"]


# -- the season contract ----------------------------------------------------------------------
def _season_config_keys() -> frozenset[str]:
    """Every name a season's stored configuration has (``SeasonConfig.to_json``), its ladder's
    and its time control's fields included."""
    from dataclasses import fields
    from referee.match.spec import TimeControl
    from scheduler.season_config import LadderConfig, SeasonConfig
    return frozenset(f.name for t in (SeasonConfig, LadderConfig, TimeControl)
                     for f in fields(t)) | {"fault_policy"}


def _config_key_reads(module: str, tree: ast.AST, keys: frozenset[str]) -> list[str]:
    """Where ``tree`` reads one of ``keys`` by key from a season configuration: a subscript
    (``config["variant"]``) or a ``.get("variant")`` of a name or attribute ``config`` or
    ``cfg``, or of a call ``.config()``."""
    def is_config(node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            node = node.func
        return (isinstance(node, ast.Name) and node.id in ("config", "cfg")
                or isinstance(node, ast.Attribute) and node.attr in ("config", "cfg"))
    found = []
    for node in ast.walk(tree):
        target = key = None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            target, key = node.value, node.slice.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "get" and node.args \
                and isinstance(node.args[0], ast.Constant):
            target, key = node.func.value, node.args[0].value
        if target is not None and key in keys and is_config(target):
            found.append(f"{module}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_season_configuration_is_read_by_key():
    """A season's configuration is a ``SeasonConfig`` read by attribute
    (``row.config.variant``): no module of the scheduler, the dashboard, the command line or
    the lab reads one of its fields by key (``config["variant"]``, ``cfg.get("open_entry")``)."""
    keys = _season_config_keys()
    assert {"variant", "format", "open_entry", "per_decision_ms", "sandbox"} <= keys
    found = [where for module, tree in MODULES.items()
             if module.split(".")[0] in ("scheduler", "web", "cli", "lab")
             for where in _config_key_reads(module, tree, keys)]
    assert found == []
    once = ast.parse('if row.config.get("format") == "ladder": n = cfg["queue_ahead"]\n'
                     'x = season.config()["bots"]; y = spec["variant"]\n')
    assert len(_config_key_reads("m", once, keys)) == 3


def test_the_scheduler_writes_match_specs_in_one_place():
    """``MatchSpec(...)`` is built in one place of the scheduler (``scheduler.season.
    pairing_spec``): a season's matches and a check's or a test's pairs are written alike."""
    built = [f"{module}:{node.lineno}" for module, tree in MODULES.items()
             if module.split(".")[0] == "scheduler" for node in ast.walk(tree)
             if isinstance(node, ast.Call) and (
                 isinstance(node.func, ast.Name) and node.func.id == "MatchSpec"
                 or isinstance(node.func, ast.Attribute) and node.func.attr == "MatchSpec")]
    assert len(built) == 1 and built[0].startswith("scheduler.season:"), built


# -- the store composed by job ----------------------------------------------------------------
#: the jobs a ``Store`` is composed of, by attribute
STORE_JOBS = frozenset({"seasons", "cancels", "queue", "results", "registry", "authors",
                        "versions", "sessions", "scrimmages", "audit", "ladder", "pages",
                        "humans"})


def _store_jobs() -> dict[str, type]:
    """The jobs of a ``Store`` by attribute: the classes its ``__init__`` builds and sets
    (``self.queue = LeaseQueue(engine)``)."""
    import scheduler.store as store
    store_class = next(n for n in MODULES["scheduler.store"].body
                       if isinstance(n, ast.ClassDef) and n.name == "Store")
    jobs = {}
    for node in ast.walk(store_class):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Name) \
                and isinstance(built := getattr(store, node.value.func.id, None), type):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and _dotted(target.value) == "self":
                    jobs[target.attr] = built
    return jobs


def test_the_store_is_composed_by_job():
    """``Store`` inherits nothing (no mixins) and has no query of its own: its jobs are its
    attributes (``store.queue.claim(...)``), each a class of its own module of the store
    package that inherits nothing either."""
    from scheduler.store import Store
    jobs = _store_jobs()
    assert Store.__bases__ == (object,)
    assert set(jobs) == STORE_JOBS
    assert [n for n, v in vars(Store).items() if callable(v) and not n.startswith("_")] == []
    assert {name: job.__bases__ for name, job in jobs.items()
            if job.__bases__ != (object,)} == {}
    modules = {job.__module__ for job in jobs.values()}
    assert len(modules) == len(jobs) and all(m.startswith("scheduler.store.") for m in modules)


def _returns_a_mapping(cls: type) -> list[str]:
    """The public methods of ``cls`` without a return annotation, or annotated to return a
    dict or a mapping (``dict``, ``list[dict]``, ``Mapping[str, int]``, ...)."""
    import re
    found = []
    for name, fn in vars(cls).items():
        if name.startswith("_") or not callable(fn):
            continue
        returns = getattr(fn, "__annotations__", {}).get("return")
        if returns is None or re.search(r"\b(dict|Dict|Mapping|MutableMapping)\b", str(returns)):
            found.append(f"{cls.__name__}.{name} -> {returns}")
    return found


#: the store's methods that still hand out a dict, and why
RETURNS_A_DICT: dict[str, str] = {}


def test_no_store_job_returns_a_dict():
    """Every public method of every store job is annotated to return a frozen row, a list of
    them or a plain value (a count, a flag, a name): never a dict nor a mapping whose shape
    only its reader knows (``RETURNS_A_DICT`` but)."""
    found = [f for job in _store_jobs().values() for f in _returns_a_mapping(job)]
    assert [f for f in found if f.split(" ->")[0] not in RETURNS_A_DICT] == []

    class Once:
        def author(self, name: str) -> dict | None: ...
        def entries(self) -> list[dict]: ...
        def names(self): ...
        def count(self) -> int: ...
    assert len(_returns_a_mapping(Once)) == 3


def test_the_store_hands_back_and_takes_a_match_file():
    """``store.results.record`` reads a played match back as its ``MatchFile`` (None before it
    is written), and ``store.results.finish`` takes it: no parameter of a JSON value (a dict)
    the caller would have encoded."""
    import inspect

    from scheduler.store.result_rows import Results
    assert inspect.signature(Results.record).return_annotation == "MatchFile | None"
    finish = inspect.signature(Results.finish).parameters
    assert finish["match"].annotation == "MatchFile"
    assert [n for n, p in finish.items() if "dict" in str(p.annotation)] == []


def _json_column_writes(module: str, tree: ast.AST, columns, *, dumps_only=False
                        ) -> list[str]:
    """Where ``tree`` writes a JSON column by its name: a key of a dict (``{"seats_json":
    ...}``), a keyword (``summary_json=...``) or an item set (``row["spec_json"] = ...``);
    with ``dumps_only``, only where the value written is a ``json.dumps(...)``."""
    def named(key, value):
        return isinstance(key, str) and key in columns and (
            not dumps_only or isinstance(value, ast.Call)
            and _dotted(value.func) == "json.dumps")
    found = []
    for node in ast.walk(tree):
        pairs = []
        if isinstance(node, ast.Dict):
            pairs = [(k.value, v) for k, v in zip(node.keys, node.values)
                     if isinstance(k, ast.Constant)]
        elif isinstance(node, ast.Call):
            pairs = [(k.arg, k.value) for k in node.keywords]
        elif isinstance(node, ast.Assign):
            pairs = [(t.slice.value, node.value) for t in node.targets
                     if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant)]
        found += [f"{module}:{node.lineno}: writes the column {k}" for k, v in pairs
                  if named(k, v)]
    return found


def test_only_the_store_package_writes_its_json_columns():
    """A JSON column is encoded where it is decoded, in ``scheduler/store/rows.py``: no module
    of the scheduler outside the store package, of the dashboard, the command line or the lab
    writes one by name (they hand typed values: a ``NewBot``, a ``NewVersion``, a
    configuration, a ``MatchTally`` for ``tally_columns``); a tool that fills a table for a
    benchmark writes none with ``json.dumps`` (``rows.encoded`` does); inside the package no
    module but ``rows`` calls ``json.dumps`` or ``json.loads`` (``packing``, the byte codec of
    records and packed text, aside)."""
    columns = _json_columns()
    found = [where for module, tree in MODULES.items()
             if module.split(".")[0] in ("scheduler", "web", "cli", "lab", "tools")
             and module != "scheduler.store" and not module.startswith("scheduler.store.")
             for where in _json_column_writes(module, tree, columns,
                                              dumps_only=module.startswith("tools."))]
    assert found == []
    coded = [f"{module}:{node.lineno}" for module, tree in MODULES.items()
             if module.startswith("scheduler.store")
             and module not in ("scheduler.store.rows", "scheduler.store.packing")
             for node in ast.walk(tree) if isinstance(node, ast.Call)
             and _dotted(node.func) in ("json.dumps", "json.loads")]
    assert coded == []
    once = ast.parse('row = {"seats_json": json.dumps(s)}\nc.values(summary_json=t)\n'
                     'r["spec_json"] = x\ny = {"seats": s}\n')
    assert len(_json_column_writes("m", once, columns)) == 3
    assert len(_json_column_writes("m", once, columns, dumps_only=True)) == 1


#: the service's domain, by job: what the web's routes and the workers both use
SERVICE_DOMAIN = ("config", "limits", "visibility", "sessions", "uploads", "versions",
                  "scrimmages", "intake")


def test_the_services_domain_speaks_no_http():
    """``scheduler/service/`` (settings, limits, who sees what, sessions, uploads, versions,
    scrimmages, the workers' intake) is used by the web and the workers alike: it imports no
    web framework and nothing of ``web/``, and gives no HTTP status."""
    modules = _package_modules("scheduler.service")
    assert {f"scheduler.service.{m}" for m in SERVICE_DOMAIN} <= set(modules)
    assert _imports_of("scheduler.service", ("fastapi", "starlette", "uvicorn", "jinja2",
                                             "web")) == []
    assert [w for m in modules for w in _http_statuses(m, MODULES[m])] == []


def _store_writes() -> dict[str, frozenset[str]]:
    """Each store job's writes, by the job's attribute: its public methods that open a
    transaction (``engine.begin()``) or commit one, themselves or through a method of theirs."""
    import inspect
    import re
    out = {}
    for name, job in _store_jobs().items():
        text = {m: inspect.getsource(fn) for m, fn in vars(job).items()
                if inspect.isfunction(fn)}
        writes = {m for m, t in text.items() if ".begin()" in t or ".commit()" in t}
        grew = True
        while grew:
            more = {m for m, t in text.items()
                    if m not in writes and set(re.findall(r"self\.(\w+)\(", t)) & writes}
            writes |= more
            grew = bool(more)
        out[name] = frozenset(m for m in writes if not m.startswith("_"))
    return out


def _store_writes_outside_routes(module: str, tree: ast.Module,
                                 writes: dict[str, frozenset[str]]) -> list[str]:
    """Where ``tree`` writes to the store (``store.<job>.<write>(...)``, ``<write>`` one of
    ``writes[job]``) outside a route: in no function that takes the ``request`` (nor inside
    one that does)."""
    found = []

    def visit(node: ast.AST, in_route: bool) -> None:
        for child in ast.iter_child_nodes(node):
            route = in_route
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = child.args
                route = in_route or any(p.arg == "request"
                                        for p in a.posonlyargs + a.args + a.kwonlyargs)
            elif isinstance(child, ast.Call) and not in_route \
                    and isinstance(child.func, ast.Attribute) \
                    and isinstance(job := child.func.value, ast.Attribute) \
                    and child.func.attr in writes.get(job.attr, ()) \
                    and (_dotted(job.value) or "").split(".")[-1] == "store":
                found.append(f"{module}:{child.lineno}: store.{job.attr}.{child.func.attr}")
            visit(child, route)
    visit(tree, False)
    return found


def test_the_web_writes_to_the_store_in_its_routes_only():
    """What the service writes (sessions, uploads, limits and the audit log) is the domain's,
    ``scheduler/service/``: in ``web/``, a store write (a store job's method that writes,
    ``store.audit.write(...)``) is made by a route only (a function that takes the
    ``request``), never by a helper handed the store."""
    writes = _store_writes()
    assert {"write", "add_limit_event"} <= writes["audit"] and "entries" not in writes["audit"]
    assert "add" in writes["registry"] and "cancel" in writes["cancels"] and not writes["pages"]
    found = [w for module, tree in MODULES.items() if module.split(".")[0] == "web"
             for w in _store_writes_outside_routes(module, tree, writes)]
    assert found == []
    once = ast.parse("def login(store, token):\n    store.audit.write('login')\n"
                     "def logout(request):\n    request.app.state.store.sessions.end('x')\n"
                     "def seen(store):\n    return store.audit.entries(9)\n")
    assert _store_writes_outside_routes("web.m", once, writes) == ["web.m:2: store.audit.write"]


#: the rooms of the suite: one folder of tests per room of the house
TEST_ROOMS = ("rules", "referee", "scheduler", "web", "lab", "house")


def _misplaced_tests(tests: Path) -> list[str]:
    """The test files of ``tests`` outside its rooms, and the rooms' folders that are missing."""
    loose = [p.name for p in tests.glob("test_*.py")]
    strays = [f"{p.parent.name}/{p.name}" for p in tests.glob("*/test_*.py")
              if p.parent.name not in TEST_ROOMS]
    missing = [f"{room}/" for room in TEST_ROOMS if not (tests / room).is_dir()]
    return sorted(loose + strays + missing)


def test_the_tests_live_in_the_rooms_they_test(tmp_path):
    """Every test file sits in the folder of the room it tests (``tests/rules/``,
    ``tests/referee/``, ``tests/scheduler/``, ``tests/web/``, ``tests/lab/``, and
    ``tests/house/`` for the house itself), never loose in ``tests/``."""
    assert _misplaced_tests(ROOT / "tests") == []
    for room in TEST_ROOMS:
        (tmp_path / room).mkdir()
    (tmp_path / "test_loose.py").touch()
    (tmp_path / "misc").mkdir()
    (tmp_path / "misc" / "test_stray.py").touch()
    assert _misplaced_tests(tmp_path) == ["misc/test_stray.py", "test_loose.py"]


_MANIFEST = "referee.seats.manifest"
_TOML_READERS = ("referee", "scheduler", "web", "cli", "lab")
"""The packages whose TOML (a bot's ``bot.toml``, a season file) the manifest module parses:
the tools read their own tables (``pyproject.toml``)."""


def _toml_parsers(module: str, tree: ast.Module) -> list[str]:
    """Where ``module`` imports a TOML parser (at any depth: inside a function too)."""
    return [f"{module}:{node.lineno}" for node in ast.walk(tree)
            if (isinstance(node, ast.Import) and any(a.name in ("tomllib", "tomli")
                                                     for a in node.names))
            or (isinstance(node, ast.ImportFrom) and node.module in ("tomllib", "tomli"))]


def test_toml_is_parsed_in_the_manifest_module_only():
    """``bot.toml`` is read once, into one shape: the manifest module parses it (and a season
    file, through ``read_toml``); the rest take what it read (a runtime travels in the
    manifest, never read from its file again)."""
    found = [w for m, tree in MODULES.items() if m.split(".")[0] in _TOML_READERS
             and m != _MANIFEST for w in _toml_parsers(m, tree)]
    assert found == [], found
    assert _toml_parsers(_MANIFEST, MODULES[_MANIFEST])


def test_only_the_manifest_codec_writes_a_manifests_fields():
    """``Manifest.to_fields`` / ``from_fields`` are the one map between a manifest and the
    fields a match spec or the store keeps: no other module spells a field of that form only
    it has (``manifest_name``) or builds a ``Manifest`` field by field."""
    found = []
    for module, tree in MODULES.items():
        if module == _MANIFEST or module.startswith("tools."):
            continue
        found += [f"{module}:{n.lineno}" for n in ast.walk(tree)
                  if isinstance(n, ast.Constant) and n.value == "manifest_name"]
        found += [f"{module}:{n.lineno} Manifest(...)" for n in ast.walk(tree)
                  if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                  and n.func.id == "Manifest"]
    assert found == [], found
