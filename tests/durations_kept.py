"""The durations kept: every run of the suite writes each test's time (setup, call and
teardown, in seconds) to ``build/test-durations.json`` under the run's root when it ends, and
names the tests much slower than ``tests/durations.json``, the durations of a whole suite kept
by ``make durations-keep`` for the next change to compare with. A pytest plugin
(``tests/conftest.py`` takes its hooks)."""

from __future__ import annotations

import json
import re
from pathlib import Path

DURATIONS = Path("build") / "test-durations.json"
KEPT_DURATIONS = Path("tests") / "durations.json"
#: a test is named at the end of a run when it took this many times its kept duration and at
#: least ``SLOWER_BY_S`` more
SLOWER = 1.5
SLOWER_BY_S = 2.0
_TIMES: dict[str, float] = {}


def _controller(config) -> bool:
    """The process that reports the run (not an xdist worker)."""
    return not hasattr(config, "workerinput")


def kept_id(nodeid: str) -> str:
    """A test's id as every run names it: without the ``@group`` pytest-xdist's loadgroup adds
    to the tests of an ``xdist_group``."""
    return re.sub(r"@[^@\[\]]*$", "", nodeid)  # (a test's parameters end with "]")


def pytest_runtest_logreport(report) -> None:
    key = kept_id(report.nodeid)
    _TIMES[key] = _TIMES.get(key, 0.0) + report.duration


def pytest_sessionfinish(session, exitstatus) -> None:
    if not _controller(session.config) or not _TIMES:
        return
    out = session.config.rootpath / DURATIONS
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({
        "tests": len(_TIMES), "total_s": round(sum(_TIMES.values()), 2),
        "durations": {k: round(v, 3) for k, v in sorted(_TIMES.items())}}, indent=0) + "\n")


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """The time of the tests run against what the same tests were kept at, and those much
    slower than their kept durations."""
    path = config.rootpath / KEPT_DURATIONS
    if not _controller(config) or not _TIMES or not path.exists():
        return
    try:
        kept = {kept_id(k): v for k, v in json.loads(path.read_text())["durations"].items()}
    except (ValueError, KeyError, OSError):
        return
    both = [k for k in _TIMES if k in kept]
    if not both:
        return
    slower = sorted(((k, kept[k], _TIMES[k]) for k in both
                     if _TIMES[k] > max(SLOWER * kept[k], kept[k] + SLOWER_BY_S)),
                    key=lambda t: t[1] - t[2])
    now, then = sum(_TIMES[k] for k in both), sum(kept[k] for k in both)
    tr = terminalreporter
    tr.write_sep("=", f"durations against {KEPT_DURATIONS}")
    tr.write_line(f"{len(both)} tests kept before: {now:.1f} s now against {then:.1f} s kept"
                  f"{f' ({now / then:.2f}x)' if then else ''}; {len(_TIMES) - len(both)} new")
    for k, was, took in slower[:10]:
        tr.write_line(f"{took:7.2f}s against {was:.2f}s kept  {k}")
