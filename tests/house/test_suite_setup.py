"""The suite's own machinery: `make test` runs it on pytest-xdist workers with ``--dist
loadgroup``, and the files marked ``xdist_group`` rely on all their tests running on one worker
(a Redis database they flush, a costly module fixture). A pytest and pytest-xdist that do not
agree on node ids drop the groups silently; this catches it. And every referee, bot and command is
a fresh interpreter: the project's install must not add a costly import finder to each one's start-up."""

import ast
import subprocess
import sys

from conftest import ROOT

GROUPED = '''
import os
import pytest

pytestmark = pytest.mark.xdist_group("together")


@pytest.mark.parametrize("n", range(4))
def test_where(n, tmp_path_factory):
    out = tmp_path_factory.getbasetemp().parent.parent / f"ran-{n}"
    out.write_text(os.environ["PYTEST_XDIST_WORKER"])
'''


def test_an_xdist_group_runs_on_one_worker(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    (tmp_path / "run").mkdir()
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-n", "2", "--dist", "loadgroup", "--basetemp",
                          str(tmp_path / "run" / "base"), "test_grouped.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    workers = {(tmp_path / "run" / f"ran-{n}").read_text() for n in range(4)}
    assert len(workers) == 1, f"the group's tests ran on {sorted(workers)}"


def test_the_project_imports_with_no_costly_finder_at_start_up(tmp_path):
    """`make install` swaps setuptools' editable finder (which loads pathlib and importlib.util:
    about 30 ms an interpreter, paid by every referee and bot) for tools/start_up_paths.py's,
    which loads neither; the project's packages import from anywhere, and the repository stays
    off ``sys.path``."""
    probe = ("import sys; loaded = sorted(m for m in sys.modules if 'editable' in m "
             "or m in ('pathlib', 'importlib.util')); "
             "import referee.rules, shengji_arena.v1.referee_pb2; print(loaded, sys.path)")
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    loaded, _, path = out.stdout.partition(" ")
    assert loaded == "[]", f"loaded at start-up: {loaded}"
    assert str(ROOT) not in ast.literal_eval(path)



def test_every_module_a_bot_or_a_referee_imports_is_compiled_ahead(tmp_path):
    """``make bytecode`` compiles the project and the installed packages: where bytecode may
    not be written (PYTHONDONTWRITEBYTECODE), a module without it is compiled from source again
    by every interpreter that imports it (grpc and protobuf doubled a Python bot's start-up)."""
    probe = ("import os, sys, arena_sdk, referee.serve, scheduler.tasks; "
             "specs = [(m, getattr(mod, '__spec__', None)) for m, mod in sys.modules.items()]; "
             "print(sorted(m for m, spec in specs if spec and (spec.origin or '').endswith('.py') "
             "and not os.path.exists(spec.cached or '')))")
    out = subprocess.run([sys.executable, "-B", "-c", probe], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", f"imported with no bytecode: {out.stdout.strip()}"

TIMED = '''
import time


def test_quick():
    pass


def test_slow():
    time.sleep(2.2)
'''


def test_each_tests_time_is_written_and_the_much_slower_are_named(tmp_path):
    """A run writes every test's time to build/test-durations.json under its root, compares
    the tests with tests/durations.json (the kept durations) and names the one that took much
    longer than it was kept at; a test that is not kept is counted as new."""
    import json
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_timed.py").write_text(TIMED)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "durations.json").write_text(json.dumps({"durations": {
        "test_timed.py::test_slow": 0.1, "test_timed.py::test_gone": 5.0}}))
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "durations_kept",
                          "-p", "no:cacheprovider", "-q", "test_timed.py"], cwd=tmp_path,
                         env={**__import__("os").environ, "PYTHONPATH": str(ROOT / "tests")},
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    written = json.loads((tmp_path / "build" / "test-durations.json").read_text())
    assert written["tests"] == 2 and set(written["durations"]) == {
        "test_timed.py::test_quick", "test_timed.py::test_slow"}
    assert written["durations"]["test_timed.py::test_slow"] >= 2.2
    assert "1 tests kept before:" in out.stdout and "against 0.1 s kept" in out.stdout
    assert "; 1 new" in out.stdout
    named = [ln for ln in out.stdout.splitlines() if ln.endswith("test_timed.py::test_slow")]
    assert len(named) == 1 and "against 0.10s kept" in named[0], out.stdout


def test_a_test_is_kept_under_one_id_with_or_without_its_xdist_group():
    """pytest-xdist's loadgroup names a grouped test ``id@group``; a run without it names it
    ``id``: the durations kept are compared by the id alone, a parameter's ``@`` kept."""
    from durations_kept import kept_id
    assert kept_id("tests/a.py::test_x@service process") == "tests/a.py::test_x"
    assert kept_id("tests/a.py::test_x[bob@1.0]@demo") == "tests/a.py::test_x[bob@1.0]"
    assert kept_id("tests/a.py::test_x[bob@1.0]") == "tests/a.py::test_x[bob@1.0]"
    assert kept_id("tests/a.py::test_x") == "tests/a.py::test_x"


def test_a_store_command_run_in_the_tests_process_ends_as_in_a_process_of_its_own(tmp_path):
    """``league_helpers.arena`` runs the store's commands in the test's own process: each
    ends with the output and status it has in a process of its own, a store the test opened
    is opened (and its schema checked) afresh, and the working folder is left as it was."""
    import os
    import sqlite3

    from league_helpers import IN_PROCESS, _in_this_process, env

    from scheduler.store import Store
    url = f"sqlite:///{tmp_path}/s.db"
    Store(url)
    with sqlite3.connect(tmp_path / "s.db") as c:  # a store that a newer release migrated
        c.execute("UPDATE alembic_version SET version_num = '0099_future'")
    where = os.getcwd()
    for args in (("seasons", "--db", f"sqlite:///{tmp_path}/none.db"),
                 ("standings", "nosuch", "--db", url)):
        assert args[0] in IN_PROCESS
        here = _in_this_process(args, tmp_path)
        own = subprocess.run([sys.executable, "-m", "cli", *args], cwd=tmp_path, env=env(),
                             capture_output=True, text=True, timeout=120)
        assert (here.returncode, here.stdout, here.stderr) == (
            own.returncode, own.stdout, own.stderr), args
        assert os.getcwd() == where
    assert here.returncode != 0 and "0099_future" in here.stderr, here.stderr
