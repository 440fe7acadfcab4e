"""The compiled engine (``make compiled``): loaded only while it matches the source, and judged by
the same vectors and golden records as the pure source (the suite runs one engine, this file the
other).

``referee/rules/compiled.py`` compares the SHA-256 of each compiled module's source, recorded in
``build/compiled/manifest.json`` at compile time, with the source on disk: in a copy of the
project, a build whose recorded source differs is refused (the pure source runs, with a
warning; ``ARENA_ENGINE=compiled`` fails instead). The tests that need a build skip without one
(no C compiler): ``make test`` builds it first.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from referee.rules.compiled import stale

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / "compiled"

_WHICH = ("import referee.rules, referee.rules.engine as e\n"
          "print(referee.rules.ENGINE, e.__file__)")


def _fresh_build() -> dict | None:
    try:
        manifest = json.loads((BUILD / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    return None if stale(manifest, ROOT) else manifest


def _copy_engine(dest: Path) -> None:
    """referee/rules and referee/play (and the empty referee package) in ``dest``, with the
    settings table they read (house): a project of its own."""
    for part in ("rules", "play"):
        shutil.copytree(ROOT / "referee" / part, dest / "referee" / part,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "house", dest / "house", ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "referee" / "__init__.py").write_text("")


def _which(project: Path, engine: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(project), PYTHONDONTWRITEBYTECODE="1")
    env.pop("ARENA_ENGINE", None)
    if engine is not None:
        env["ARENA_ENGINE"] = engine
    return subprocess.run([sys.executable, "-c", _WHICH], cwd=project, env=env,
                          capture_output=True, text=True, timeout=60)


def test_a_build_of_other_source_is_refused(tmp_path):
    """A manifest whose recorded hash is not the source's: the pure source runs, with a warning;
    required (ARENA_ENGINE=compiled), it fails. No compiler needed."""
    _copy_engine(tmp_path)
    build = tmp_path / "build" / "compiled"
    (build / "referee" / "rules").mkdir(parents=True)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    (build / "referee" / "rules" / f"engine{suffix}").write_bytes(b"not an extension")
    manifest = {"python": sys.implementation.cache_tag, "ext_suffix": suffix, "shared": {},
                "modules": {"referee.rules.engine": {
                    "source": "referee/rules/engine.py", "sha256": "0" * 64,
                    "extension": f"referee/rules/engine{suffix}"}}}
    (build / "manifest.json").write_text(json.dumps(manifest))

    out = _which(tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["pure", str(tmp_path / "referee" / "rules" / "engine.py")]
    assert "stale" in out.stderr and "referee.rules.engine" in out.stderr
    required = _which(tmp_path, "compiled")
    assert required.returncode != 0 and "StaleBuild" in required.stderr
    assert _which(tmp_path, "pure").stdout.split()[0] == "pure"


def test_without_a_build_the_engine_is_pure(tmp_path):
    _copy_engine(tmp_path)
    out = _which(tmp_path)
    assert out.returncode == 0 and out.stdout.split()[0] == "pure" and not out.stderr
    required = _which(tmp_path, "compiled")
    assert required.returncode != 0 and "no compiled engine is built" in required.stderr


def test_a_stale_compiled_module_is_never_loaded(tmp_path):
    """The real build, copied beside a copy of the source: loaded while the source is the one
    compiled; one changed line in a compiled module's source, and it is refused."""
    if _fresh_build() is None:
        pytest.skip("no fresh compiled engine (make compiled; needs a C compiler)")
    _copy_engine(tmp_path)
    shutil.copytree(BUILD, tmp_path / "build" / "compiled")
    fresh = _which(tmp_path)
    assert fresh.returncode == 0, fresh.stderr
    assert fresh.stdout.split()[0] == "compiled"
    assert fresh.stdout.split()[1].startswith(str(tmp_path / "build" / "compiled"))

    engine = tmp_path / "referee" / "rules" / "engine.py"
    engine.write_text(engine.read_text() + "\n# changed after compiling\n")
    out = _which(tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["pure", str(engine)]
    assert "stale" in out.stderr and "referee.rules.engine" in out.stderr
    assert _which(tmp_path, "compiled").returncode != 0


def test_vectors_and_golden_records_on_the_other_engine():
    """The rules vectors, the golden records, the states' copies and random play (whole games
    of every variant), run again on the engine this suite is not running: the pure source
    when the suite runs the compiled engine (what ``make test`` runs where it is built), the
    compiled one when the suite runs the source (``ARENA_ENGINE=pure``)."""
    import referee.rules
    other = "pure" if referee.rules.ENGINE == "compiled" else "compiled"
    if other == "compiled" and _fresh_build() is None:
        pytest.skip("no fresh compiled engine (make compiled; needs a C compiler)")
    env = dict(os.environ, ARENA_ENGINE=other)
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests/rules/test_conformance.py", "tests/rules/test_golden.py",
                          "tests/rules/test_state_copy.py",
                          "tests/rules/test_random_play.py::test_whole_games_end"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=280)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    check = subprocess.run([sys.executable, "-c", _WHICH], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=60)
    assert check.stdout.split()[0] == other, check.stderr
