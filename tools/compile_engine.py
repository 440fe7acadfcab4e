"""``make compiled``: the rules engine's hot modules compiled with mypyc, beside the source.

The extensions go to ``build/compiled/`` (never into ``referee/rules``: the pure source stays
importable whatever is built there), with ``manifest.json``: each compiled module's extension
and the SHA-256 of the source it was compiled from. ``referee/rules/compiled.py`` loads them
only while every recorded hash matches the source on disk. Needs a C compiler and Python's
headers; without them nothing is built and the engine stays pure Python.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "compiled"
TEMP = ROOT / "build" / "compiled-temp"
GROUP = "arena_rules"

#: The modules ``arena bench engine --variant two-deck-fry`` spends its time in (cProfile):
#: the state and its copy, the engine's dispatch, the two-deck flow, combinations, declarations,
#: legal listings and random player, and the card sampling the players draw from; and the other
#: families' rules, which read a compiled ``State`` slower from Python than a plain one.
MODULES = (
    "referee/rules/trump.py",
    "referee/rules/state_type.py",
    "referee/rules/state.py",
    "referee/rules/engine.py",
    "referee/rules/sampling.py",
    "referee/rules/draws.py",
    "referee/rules/multisets.py",
    "referee/rules/families/two_deck/flow.py",
    "referee/rules/families/two_deck/combos.py",
    "referee/rules/families/two_deck/declare.py",
    "referee/rules/families/two_deck/legal.py",
    "referee/rules/families/two_deck/policy.py",
    "referee/rules/families/single_deck/flow.py",
    "referee/rules/families/single_deck/combos.py",
    "referee/rules/families/single_deck/declare.py",
    "referee/rules/families/single_deck/scoring.py",
    "referee/rules/families/single_deck/legal.py",
    "referee/rules/families/single_deck/policy.py",
    "referee/rules/families/three_deck/flow.py",
    "referee/rules/families/three_deck/combos.py",
    "referee/rules/families/three_deck/declare.py",
    "referee/rules/families/three_deck/scoring.py",
    "referee/rules/families/three_deck/legal.py",
    "referee/rules/families/three_deck/policy.py",
    "referee/play/chance.py",
    "referee/play/random_play.py",
    "referee/play/selfplay.py",
)


def module_name(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".")


def source_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def missing_toolchain() -> str | None:
    """Why nothing can be compiled here (None: a C compiler and Python's headers are present)."""
    include = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not include.exists():
        return f"Python's headers are missing ({include})"
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        return f"no C compiler ({cc})"
    try:
        import mypyc  # noqa: F401
    except ImportError:
        return "mypyc is not installed (pip install mypy)"
    return None


def build() -> int:
    why = missing_toolchain()
    if why is not None:
        print(f"compiled: not built: {why}; the engine stays pure Python")
        return 0
    from mypyc.build import mypycify
    from setuptools import setup

    start = time.perf_counter()
    hashes = {m: source_hash(ROOT / m) for m in MODULES}  # before: an edit meanwhile is stale
    shutil.rmtree(OUT, ignore_errors=True)
    extensions = mypycify(list(MODULES), opt_level="3", target_dir=str(TEMP / "c"),
                          group_name=GROUP)
    setup(name="arena-rules-compiled", ext_modules=extensions, script_name="compile_engine",
          script_args=["-q", "build_ext", "--build-lib", str(OUT), "--build-temp", str(TEMP)])
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    modules = {}
    for m in MODULES:
        name = module_name(m)
        ext = Path(*name.split(".")).with_suffix("").as_posix() + suffix
        if not (OUT / ext).exists():
            raise SystemExit(f"compiled: {ext} was not built")
        modules[name] = {"source": m, "sha256": hashes[m], "extension": ext}
    shared = {f"{GROUP}__mypyc": f"{GROUP}__mypyc{suffix}"}
    manifest = {"python": sys.implementation.cache_tag, "ext_suffix": suffix,
                "modules": modules, "shared": shared}
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"compiled: {len(modules)} modules of referee/rules in build/compiled "
          f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(build())
