"""Which engine runs: the pure source, or its hot modules compiled (``make compiled``).

``build/compiled/manifest.json`` lists each compiled module with the SHA-256 of the source it
was compiled from. The compiled modules are loaded only when every hash matches the source on
disk now: one edited file (or a copy of the project whose source differs) refuses them all, and
the engine runs as pure Python, with a warning. ``ARENA_ENGINE`` chooses: ``pure`` never loads
them, ``compiled`` requires them (a stale or missing build raises ``ImportError``), unset or
``auto`` loads them when fresh. Runs once, before the engine's modules are imported.
"""

from __future__ import annotations

import hashlib
import json
import sys
import warnings
from importlib.abc import MetaPathFinder
from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec
from importlib.util import spec_from_file_location
from pathlib import Path
from typing import Any, Sequence

from house import settings

ROOT = Path(__file__).resolve().parent.parent.parent
BUILD = ROOT / "build" / "compiled"


class StaleBuild(ImportError):
    """The compiled modules do not match the source (or are missing) and ``ARENA_ENGINE`` is
    ``compiled``."""


class _CompiledFinder(MetaPathFinder):
    """Finds the listed modules' extensions in the build folder, ahead of the source."""

    def __init__(self, extensions: dict[str, Path]) -> None:
        self.extensions = extensions

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: Any = None) -> ModuleSpec | None:
        file = self.extensions.get(fullname)
        if file is None:
            return None
        return spec_from_file_location(fullname, file,
                                       loader=ExtensionFileLoader(fullname, str(file)))


def stale(manifest: dict[str, Any], root: Path = ROOT) -> list[str]:
    """Why the build cannot be loaded: the modules whose source changed, or a build for another
    Python (empty: fresh)."""
    if manifest.get("python") != sys.implementation.cache_tag or \
            manifest.get("ext_suffix") not in EXTENSION_SUFFIXES:
        return [f"built for {manifest.get('python')}, not {sys.implementation.cache_tag}"]
    out = []
    for name, entry in manifest["modules"].items():
        source = root / entry["source"]
        try:
            digest = hashlib.sha256(source.read_bytes()).hexdigest()
        except OSError:
            digest = None
        if digest != entry["sha256"]:
            out.append(f"{name} (its source changed since it was compiled)")
        elif not (root / "build" / "compiled" / entry["extension"]).exists():
            out.append(f"{name} (its extension is missing)")
    return out


def choose(build: Path = BUILD) -> str:
    """Install the compiled modules if ``ARENA_ENGINE`` allows it and they are fresh; returns
    the engine that will run: ``"compiled"`` or ``"pure"``."""
    mode = settings.ENGINE.value()
    if mode not in ("auto", "pure", "compiled"):
        raise ValueError(f"ARENA_ENGINE={mode!r}: expected pure, compiled or auto")
    if mode == "pure":
        return "pure"
    try:
        manifest = json.loads((build / "manifest.json").read_text())
    except (OSError, ValueError):
        if mode == "compiled":
            raise StaleBuild("ARENA_ENGINE=compiled, but no compiled engine is built "
                             "(make compiled)") from None
        return "pure"
    problems = stale(manifest, build.parent.parent)
    if problems:
        why = "; ".join(problems)
        if mode == "compiled":
            raise StaleBuild(f"the compiled engine is stale: {why}; run make compiled")
        warnings.warn(f"the compiled engine is stale ({why}): running the pure source; "
                      "run make compiled", RuntimeWarning, stacklevel=2)
        return "pure"
    files = {name: build / entry["extension"] for name, entry in manifest["modules"].items()}
    files.update({name: build / ext for name, ext in manifest["shared"].items()})
    sys.meta_path.insert(0, _CompiledFinder(files))
    return "compiled"


def loaded_from_extension(module: object) -> bool:
    """The module was loaded from a compiled extension (not from its source)."""
    file = getattr(module, "__file__", None) or ""
    return file.endswith(tuple(EXTENSION_SUFFIXES))


__all__ = ["StaleBuild", "choose", "loaded_from_extension", "stale"]
