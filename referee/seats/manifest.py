"""Bot manifests: what a bot is called and how it is started.

A manifest (``bot.toml``) names a bot and says how to start it:

    name = "greedy"
    version = "1.0.0"
    command = ["python3", "bot.py"]     # run with the manifest's folder as working directory
    protocol = "grpc"                   # or "stdio": a program that speaks JSON lines, or
                                        # "botzone": a Botzone Tractor bot, unchanged
    pythonpath = ["lib"]                # folders (from the manifest's) the bot imports from
    build = ["make"]                    # or [["npm", "ci", "--offline"], ["node", "gen.js"]]
    time_limit = 1                      # a Botzone bot: seconds per turn (Botzone's 时间限制)
    memory_limit = 256                  # a Botzone bot: MiB (Botzone's 空间限制)
    data = "data"                       # a Botzone bot: its folder seen read-only at /data
    runtime = "java"                    # optional: its runtime (``referee.seats.runtimes``),
                                        # else inferred from the command's program

Nothing else of the arena is on a bot's ``PYTHONPATH`` but the generated protocol package
(``shengji_arena``) for a gRPC bot and, for a Python bot, the Python SDK with the rules engine it
carries (``referee.seats.launch.sdk_folders``): a manifest names neither. ``build`` is one
command line or a list of them, run in order in a copy of the folder before the bot first plays
(``referee.seats.build``).
"""

from __future__ import annotations

import hashlib
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path

from referee.seats.runtimes import RUNTIMES

PROTOCOLS = ("grpc", "stdio", "botzone")
_FIELDS = {"name", "version", "command", "protocol", "description", "pythonpath", "build",
           "time_limit", "memory_limit", "data", "runtime"}
TIME_LIMIT_MAX = 60
"""The longest per-turn time limit (seconds) a Botzone bot's manifest may ask for."""
MEMORY_LIMIT_MAX = 4096
"""The largest memory limit (MiB) a Botzone bot's manifest may ask for."""


class ManifestError(ValueError):
    """A manifest that cannot be used; the message names the file and the field."""


BUILD_OUTPUT = frozenset({"build", "target", "out", "node_modules", "__pycache__", ".git"})
"""Folders a bot's content hash and its registry archive leave out, wherever they are in its
folder: what a build or a tool makes (``build/``, Cargo's and Maven's ``target/``, Gradle's
``out/``, npm's ``node_modules/``, Python's ``__pycache__/``) and Git's ``.git/``. A bot with a
build step gets them back from its build; a bot without one must not keep its program there."""


@dataclass(frozen=True)
class Manifest:
    name: str
    version: str
    command: tuple[str, ...]
    protocol: str
    folder: Path
    path: Path | None = None
    pythonpath: tuple[Path, ...] = ()
    """Absolute folders put on the bot's ``PYTHONPATH``, in the manifest's order."""
    build: tuple[tuple[str, ...], ...] = ()
    """The build's steps, each a command line run in the bot's folder (none: nothing to build)."""
    time_limit: float | None = None
    """A Botzone bot's time limit per turn in seconds (None: Botzone's usual one for its
    language, ``referee.seats.botzone_seat.time_limit_of``)."""
    memory_limit: int | None = None
    """A Botzone bot's memory limit in MiB (None: Botzone's usual 256,
    ``referee.seats.botzone_seat.memory_limit_of``)."""
    data: str | None = None
    """A Botzone bot's folder of data files, relative to its own and inside it (as the manifest
    writes it), seen read-only at ``/data``: ``data_folder``."""
    runtime: str | None = None
    """The runtime the manifest names (``referee.seats.runtimes.RUNTIMES``); None: inferred
    from the command's program (``referee.seats.runtimes.runtime_of``)."""

    @property
    def data_folder(self) -> Path | None:
        """The absolute folder ``data`` names (None: no ``/data``)."""
        return None if self.data is None else (self.folder / self.data).resolve()

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"

    def content_hash(self) -> str:
        """A hash of the manifest and the files of its folder (what a result is attributed
        to): its name, version, command, protocol and build (if any), and every file's path
        and bytes but those under a folder of ``BUILD_OUTPUT``."""
        h = hashlib.sha256()
        h.update(repr((self.name, self.version, self.command, self.protocol)).encode())
        if self.build:
            h.update(repr(("build", self.build)).encode())
        for p in self._hashed_files():
            h.update(str(p.relative_to(self.folder)).encode())
            h.update(p.read_bytes())
        return h.hexdigest()[:16]

    def file_hashes(self) -> dict[str, str]:
        """Each file the content hash covers, by its path in the folder: a short hash of its
        bytes (what tells which files changed when the content hash did)."""
        return {str(p.relative_to(self.folder)): hashlib.sha256(p.read_bytes()).hexdigest()[:16]
                for p in self._hashed_files()}

    def _hashed_files(self) -> list[Path]:
        return [p for p in sorted(self.folder.rglob("*"))
                if p.is_file() and BUILD_OUTPUT.isdisjoint(p.relative_to(self.folder).parts)]


def changed_files(before: dict[str, str], now: dict[str, str], most: int = 8) -> str:
    """The files that differ between two ``file_hashes``, in words: "bot.py (changed),
    cache.db (added)"; at most ``most`` named, the rest counted."""
    changes = [f"{p} ({'added' if p not in before else 'removed' if p not in now else 'changed'})"
               for p in sorted(set(before) | set(now)) if before.get(p) != now.get(p)]
    more = f" and {len(changes) - most} more" if len(changes) > most else ""
    return ", ".join(changes[:most]) + more


def read_toml(path: Path, what: str, fields: set[str], required: tuple[str, ...],
              error: type[ValueError]) -> dict:
    """A TOML file's top-level table, with only known fields and every required one; ``error``
    names the file and the field otherwise."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"{path}: no such {what} file") from None
    except tomllib.TOMLDecodeError as e:
        raise error(f"{path}: not valid TOML: {e}") from None
    unknown = set(data) - fields
    if unknown:
        raise error(f"{path}: field {sorted(unknown)[0]!r}: unknown; expected one of "
                    f"{', '.join(sorted(fields))}")
    for f in required:
        if f not in data:
            raise error(f"{path}: missing field {f!r}")
    return data


def load_manifest(path: str | Path) -> Manifest:
    """Read and check a manifest; errors name the file, the field and what was expected."""
    path = Path(path)
    if path.is_dir():
        path = path / "bot.toml"
    data = read_toml(path, "manifest", _FIELDS, ("name", "version", "command"), ManifestError)
    if not isinstance(data["name"], str) or not data["name"].strip():
        raise ManifestError(f"{path}: field 'name': expected a non-empty string")
    if not isinstance(data["version"], str):
        raise ManifestError(f"{path}: field 'version': expected a string such as \"1.0.0\"")
    command = data["command"]
    if isinstance(command, str):
        command = shlex.split(command)
    if not (isinstance(command, list) and command and all(isinstance(c, str) for c in command)):
        raise ManifestError(f"{path}: field 'command': expected a list of strings, e.g. "
                            "[\"python3\", \"bot.py\"]")
    protocol = data.get("protocol", "grpc")
    if protocol not in PROTOCOLS:
        raise ManifestError(f"{path}: field 'protocol' = {protocol!r}: expected one of "
                            f"{', '.join(PROTOCOLS)}")
    folder = path.parent.resolve()
    return Manifest(data["name"], data["version"], tuple(command), protocol, folder,
                    path.resolve(), _pythonpath(path, folder, data.get("pythonpath", [])),
                    build_steps(data.get("build", []), str(path)),
                    time_limit=_time_limit(path, protocol, data.get("time_limit")),
                    memory_limit=_memory_limit(path, protocol, data.get("memory_limit")),
                    data=_data_folder(path, protocol, folder, data.get("data")),
                    runtime=_runtime(path, data.get("runtime")))


def _botzone_only(path: Path, protocol: str, name: str) -> None:
    if protocol != "botzone":
        raise ManifestError(f"{path}: field {name!r}: only a Botzone bot (protocol = "
                            f"\"botzone\") has one, not a {protocol} bot")


def _time_limit(path: Path, protocol: str, value) -> float | None:
    """``time_limit``: a Botzone bot's seconds per turn, above 0 and at most ``TIME_LIMIT_MAX``."""
    if value is None:
        return None
    _botzone_only(path, protocol, "time_limit")
    if not (isinstance(value, (int, float)) and not isinstance(value, bool)
            and 0 < value <= TIME_LIMIT_MAX):
        raise ManifestError(
            f"{path}: field 'time_limit' = {value!r}: expected Botzone's time limit per turn in "
            f"seconds, a number above 0 and at most {TIME_LIMIT_MAX} (such as 1 for a compiled "
            "bot, 6 for a Python one)")
    return float(value)


def _memory_limit(path: Path, protocol: str, value) -> int | None:
    """``memory_limit``: a Botzone bot's MiB, a whole number from 16 to ``MEMORY_LIMIT_MAX``."""
    if value is None:
        return None
    _botzone_only(path, protocol, "memory_limit")
    if not (isinstance(value, int) and not isinstance(value, bool)
            and 16 <= value <= MEMORY_LIMIT_MAX):
        raise ManifestError(
            f"{path}: field 'memory_limit' = {value!r}: expected Botzone's memory limit in MiB, "
            f"a whole number from 16 to {MEMORY_LIMIT_MAX} (Botzone's usual one is 256)")
    return value


def _data_folder(path: Path, protocol: str, folder: Path, value) -> str | None:
    """``data``: a folder inside the bot's own, seen read-only at ``/data`` by a Botzone bot."""
    if value is None:
        return None
    _botzone_only(path, protocol, "data")
    where = (folder / value).resolve() if isinstance(value, str) and value else None
    if where is None or not (where == folder or folder in where.parents):
        raise ManifestError(f"{path}: field 'data' = {value!r}: expected a folder inside the "
                            "bot's own, relative to the manifest's, such as \"data\"")
    if not where.is_dir():
        raise ManifestError(f"{path}: field 'data' = {value!r}: no such folder ({where})")
    return value


def _runtime(path: Path, value) -> str | None:
    """``runtime``: the name of one of the arena's runtimes (``referee.seats.runtimes``)."""
    if value is None:
        return None
    if not isinstance(value, str) or value not in RUNTIMES:
        raise ManifestError(f"{path}: field 'runtime' = {value!r}: expected one of "
                            f"{', '.join(RUNTIMES)} (docs/languages.md), or no field: the "
                            "arena infers it from the command's program")
    return value


def build_steps(value, where: str) -> tuple[tuple[str, ...], ...]:
    """A manifest's ``build``: one command line (a list of strings, or a string split like a
    shell would) or a list of them (each a list or a string); ``[]``: no build. ``ManifestError``
    (naming ``where`` and the field) for anything else."""
    expected = ("expected a command line such as [\"make\"], or a list of them such as "
                "[[\"npm\", \"ci\", \"--offline\"], [\"node\", \"gen.js\"]]")
    if isinstance(value, str):
        value = [value]
    elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        value = [value]
    if not isinstance(value, list):
        raise ManifestError(f"{where}: field 'build': {expected}")
    steps = []
    for i, step in enumerate(value):
        if isinstance(step, str):
            step = shlex.split(step)
        if not (isinstance(step, list) and step and all(isinstance(a, str) for a in step)
                and step[0]):
            raise ManifestError(f"{where}: field 'build'[{i}] = {step!r}: {expected}")
        steps.append(tuple(step))
    return tuple(steps)


def _pythonpath(path: Path, folder: Path, entries) -> tuple[Path, ...]:
    if not (isinstance(entries, list) and all(isinstance(e, str) and e for e in entries)):
        raise ManifestError(f"{path}: field 'pythonpath': expected a list of folders relative "
                            "to the manifest's, e.g. [\"..\"]")
    out = []
    for i, entry in enumerate(entries):
        where = (folder / entry).resolve()
        if not where.is_dir():
            raise ManifestError(f"{path}: field 'pythonpath'[{i}] = {entry!r}: no such folder "
                                f"({where})")
        out.append(where)
    return tuple(out)


def manifest_for_command(command: str) -> Manifest:
    """A manifest for a bare command line (run in the current folder)."""
    parts = tuple(shlex.split(command))
    if not parts:
        raise ManifestError("an empty bot command")
    return Manifest(Path(parts[-1]).stem, "0", parts, "grpc", Path.cwd())


def bot_argument(text: str) -> Manifest:
    """A manifest path (``bot.toml`` or a folder holding one), or else a command line."""
    p = Path(text)
    if p.suffix == ".toml" or (p.is_dir() and (p / "bot.toml").exists()):
        return load_manifest(p)
    return manifest_for_command(text)
