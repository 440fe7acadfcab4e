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

The file is parsed here only (``read_toml``), and ``Manifest.to_fields`` / ``from_fields`` are
the one map between a manifest and the plain fields kept of it. The types of a bot, each with
one job:

- ``Manifest``: what a bot is called and how it starts (read from its file, or from fields);
- ``referee.match.spec.SeatBot``: the bot of one seat of a match spec (its name there, its
  manifest, the registry version it plays);
- ``scheduler.season.SeasonBot``: a bot as its season names it, with the manifest it plays
  here and, once pinned, the portable one its match specs carry;
- ``scheduler.registry.submissions.Prepared``: an upload read and packed, before the store;
- ``scheduler.store.rows.NewVersion`` / ``BotVersionRow``: a registry version written / read
  (its ref, its manifest); ``scheduler.registry.submissions.Submitted``: what a submission
  answers (that version, and whether it was stored already);
- ``scheduler.store.rows.NewBot`` / ``BotRow``: a season's bot written / read.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shlex
import tomllib
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from house.build_output import BUILD_OUTPUT
from referee.seats.runtimes import RUNTIMES

PROTOCOLS = ("grpc", "stdio", "botzone")
_FIELDS = {"name", "version", "command", "protocol", "description", "pythonpath", "build",
           "time_limit", "memory_limit", "data", "runtime"}
TIME_LIMIT_MAX = 60
"""The longest per-turn time limit (seconds) a Botzone bot's manifest may ask for."""
MEMORY_LIMIT_MAX = 4096
"""The largest memory limit (MiB) a Botzone bot's manifest may ask for."""
MANIFEST_SIZE_LIMIT = 64 << 10
"""The largest manifest file, in bytes: refused from its size, before it is parsed."""
MANIFEST_NESTING = 4
"""The deepest a manifest may nest arrays and tables under its top level (``build =
[["make"]]`` is 2): its brackets and braces are counted before it is parsed (a parser recurses
once per level), and what it read is measured (dotted keys and table headers nest too). A line
may hold at most ``4 * MANIFEST_NESTING`` dots outside strings and comments (a dotted key
costs a parser the square of its parts)."""
TEXT_LIMIT = 1024
"""The longest ``name``, ``version``, folder of ``pythonpath`` and ``data``, in characters."""
ARGUMENT_LIMIT = 32 << 10
"""The longest argument of ``command`` or of a ``build`` step, in characters (a ``sh -c``
script is one argument; the whole manifest is at most ``MANIFEST_SIZE_LIMIT`` bytes)."""
DESCRIPTION_LIMIT = 2000
"""The longest ``description`` (a paragraph), in characters."""
ARGUMENTS_LIMIT = 64
"""The most arguments of one command line (``command``, each step of ``build``)."""
BUILD_STEPS_LIMIT = 16
"""The most steps of ``build``."""
PYTHONPATH_LIMIT = 16
"""The most folders of ``pythonpath``."""


_OPTIONAL = ("time_limit", "memory_limit", "data", "runtime")
PLACED_FIELDS = ("manifest_name", "version", "command", "protocol", "folder", "path",
                 "pythonpath", "build", *_OPTIONAL)
"""The fields of a placed manifest (a match spec's seat) as ``Manifest.to_fields`` writes them."""
VERSION_FIELDS = ("name", "version", "command", "protocol", "pythonpath", "build", *_OPTIONAL,
                  "description")
"""The fields of a registry version's manifest as ``Manifest.to_fields`` writes them."""


def _expect(ok: object, where: str, name: str, value: Any, expected: str) -> None:
    """``ValueError`` saying field ``name`` is not ``expected`` unless ``ok`` is true."""
    if not ok:
        raise ValueError(f"{where}: field {name!r} = {value!r}: expected {expected}")


def _optional(data: Mapping[str, Any], where: str, name: str, kind, expected: str):
    v = data.get(name)
    _expect(v is None or (isinstance(v, kind) and not isinstance(v, bool)), where, name, v,
            expected)
    return v


class ManifestError(ValueError):
    """A manifest that cannot be used; the message names the file and the field."""


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
    description: str | None = dataclasses.field(default=None, compare=False)
    """The author's paragraph on the bot (the registry shows it; no match needs it)."""

    def to_fields(self, *, placed: bool = True) -> dict[str, Any]:
        """The manifest as plain data, the one form a match spec (``placed``: its name as
        ``manifest_name``, beside the seat's, with its ``folder`` and ``path``) and a registry
        version (not ``placed``: as the author wrote it, with its ``description``) keep. A field
        that may be unset is written only when set: the form of a manifest without it is the
        one stored before the field came. ``from_fields`` reads it back."""
        out: dict[str, Any] = {"manifest_name" if placed else "name": self.name,
                               "version": self.version, "command": list(self.command),
                               "protocol": self.protocol}
        if placed:
            out |= {"folder": str(self.folder), "path": str(self.path) if self.path else None}
        if self.pythonpath:
            out["pythonpath"] = [str(p) for p in self.pythonpath]
        if self.build:
            out["build"] = [list(step) for step in self.build]
        for name in _OPTIONAL if placed else (*_OPTIONAL, "description"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], *, folder: Path | None = None,
                    where: str = "bot") -> "Manifest":
        """The manifest ``to_fields`` wrote: placed (``folder`` None: the fields name it) or a
        registry version's, placed in ``folder`` (its ``pythonpath`` relative to it, an entry
        that begins with ``@`` kept as written: ``scheduler.registry.versions.located`` places
        those). ``ValueError`` naming ``where``, the field and what was expected."""
        known = PLACED_FIELDS if folder is None else VERSION_FIELDS
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {unknown}; expected {', '.join(known)}")
        name_field = "manifest_name" if folder is None else "name"
        texts = (name_field, "version", "protocol") + (("folder",) if folder is None else ())
        for name in texts:
            if name not in data:
                raise ValueError(f"{where}: missing field {name!r} (a string)")
            _expect(isinstance(data[name], str), where, name, data[name], "a string")
        if "command" not in data:
            raise ValueError(f"{where}: missing field 'command' (a list of strings)")
        command = data["command"]
        _expect(isinstance(command, list) and command and all(isinstance(c, str)
                                                              for c in command),
                where, "command", command, "a non-empty list of strings")
        pythonpath = data.get("pythonpath", [])
        _expect(isinstance(pythonpath, list) and all(isinstance(p, str) for p in pythonpath),
                where, "pythonpath", pythonpath, "a list of absolute folders" if folder is None
                else "a list of folders relative to the bot's, or @bot/..., @sdk, @arena")
        build = data.get("build", [])
        _expect(isinstance(build, list) and all(isinstance(s, list) and s and all(
            isinstance(a, str) for a in s) for s in build), where, "build", build,
            "a list of command lines, each a non-empty list of strings")
        runtime = data.get("runtime")
        _expect(runtime is None or runtime in RUNTIMES, where, "runtime", runtime,
                f"one of the arena's runtimes ({', '.join(sorted(RUNTIMES))}), or absent")
        if folder is None:
            path = data.get("path")
            _expect(path is None or isinstance(path, str), where, "path", path,
                    "the manifest's path, or null")
            home, file = Path(data["folder"]), Path(path) if path else None
            paths = tuple(Path(p) for p in pythonpath)
        else:
            home, file = folder, folder / "bot.toml"
            paths = tuple(Path(p) if p.startswith("@") else folder / p for p in pythonpath)
        return cls(data[name_field], data["version"], tuple(command), data["protocol"], home,
                   file, paths, tuple(tuple(s) for s in build),
                   time_limit=_optional(data, where, "time_limit", (int, float),
                                        "seconds per turn, or absent"),
                   memory_limit=_optional(data, where, "memory_limit", int, "MiB, or absent"),
                   data=_optional(data, where, "data", str,
                                  "a folder inside the bot's, or absent"),
                   runtime=runtime,
                   description=_optional(data, where, "description", str,
                                         "a paragraph, or absent"))

    def moved(self, folder: Path) -> "Manifest":
        """The same bot in ``folder``, a copy of its own (a build's): its file and the
        ``pythonpath`` entries inside its folder follow it."""
        paths = tuple(folder / p.relative_to(self.folder) if p.is_relative_to(self.folder)
                      else p for p in self.pythonpath)
        return dataclasses.replace(self, folder=folder, pythonpath=paths,
                                   path=folder / self.path.name if self.path else None)

    @staticmethod
    def name_in(data: Mapping[str, Any]) -> str | None:
        """The manifest's name in its fields (either form of ``to_fields``), or None."""
        return data.get("manifest_name", data.get("name"))

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


def shown(value: object, limit: int = 200) -> str:
    """A value for a message: its repr, cut at ``limit`` characters with its length."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


_SCAN = re.compile("|".join((
    r'"{3}(?:[^\\]|\\[\s\S])*?"{3,5}',  # a multi-line basic string
    r"'{3}[\s\S]*?'{3,5}",  # a multi-line literal string
    r'"(?:[^"\\\n]|\\.)*"',  # a basic string
    r"'[^'\n]*'",  # a literal string
    r"#[^\n]*",  # a comment
    r"[\[\]{}.\n]")))
"""What of a TOML text tells its nesting: strings and comments (passed over whole), brackets,
braces, dots and line ends."""


def _nesting(text: str, most: int) -> str | None:
    """What of ``text`` nests past ``most`` before it is parsed, at which line, with the
    limit: arrays or tables deeper than ``most``, or a line of more than ``4 * most`` dots
    (dotted keys, which cost a parser the square of their parts), outside strings and
    comments; None: within bounds."""
    depth = dots = 0
    for m in _SCAN.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > most:
                return (f"arrays or tables nested more than {most} deep at line "
                        f"{text.count(chr(10), 0, m.start()) + 1}; the limit is {most}")
        elif c in "]}":
            depth = max(depth - 1, 0)
        elif c == ".":
            dots += 1
            if dots > 4 * most:
                return (f"more than {4 * most} dots (a dotted key's) at line "
                        f"{text.count(chr(10), 0, m.start()) + 1}; the limit is {4 * most}")
        elif c == "\n":
            dots = 0
    return None


def _deepest(data: dict) -> int:
    """How deep ``data``'s arrays and tables nest under its top-level table (no recursion)."""
    deepest, pending = 0, [(v, 1) for v in data.values()]
    while pending:
        value, depth = pending.pop()
        items = value.values() if isinstance(value, dict) else \
            value if isinstance(value, list) else None
        if items is not None:
            deepest = max(deepest, depth)
            pending.extend((v, depth + 1) for v in items)
    return deepest


def read_toml(path: Path, what: str, fields: set[str], required: tuple[str, ...],
              error: type[ValueError], *, size_limit: int | None = None,
              nesting: int | None = None) -> dict:
    """A TOML file's top-level table, with only known fields and every required one; ``error``
    names the file and the field otherwise, and the limit for a file of more than
    ``size_limit`` bytes (refused before it is parsed) or nesting deeper than ``nesting``
    (``MANIFEST_NESTING``)."""
    try:
        with open(path, "rb") as f:
            raw = f.read() if size_limit is None else f.read(size_limit + 1)
            size = max(len(raw), os.fstat(f.fileno()).st_size)
    except FileNotFoundError:
        raise error(f"{path}: no such {what} file") from None
    except OSError as e:
        raise error(f"{path}: the {what} file cannot be read ({e.strerror})") from None
    if size_limit is not None and len(raw) > size_limit:
        raise error(f"{path}: the {what} file is {size} bytes; the limit is {size_limit} "
                    "bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise error(f"{path}: not UTF-8 (byte {e.start})") from None
    where = _nesting(text, nesting) if nesting is not None else None
    if where is not None:
        raise error(f"{path}: {where}")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise error(f"{path}: not valid TOML: {e}") from None
    except RecursionError:
        raise error(f"{path}: arrays or tables nested too deep to read") from None
    except ValueError:  # an integer of more digits than Python converts (4300)
        raise error(f"{path}: not valid TOML: an integer too long to read") from None
    deepest = _deepest(data) if nesting is not None else 0
    if nesting is not None and deepest > nesting:
        raise error(f"{path}: arrays or tables nested {deepest} deep; the limit is {nesting}")
    unknown = set(data) - fields
    if unknown:
        raise error(f"{path}: field {shown(sorted(unknown)[0])}: unknown; expected one of "
                    f"{', '.join(sorted(fields))}")
    for name in required:
        if name not in data:
            raise error(f"{path}: missing field {name!r}")
    return data


def read_manifest(path: str | Path) -> tuple[Path, dict]:
    """A manifest file (``path``, or ``bot.toml`` in the folder ``path``) and its fields as
    written: at most ``MANIFEST_SIZE_LIMIT`` bytes, nesting at most ``MANIFEST_NESTING`` deep,
    only known fields and every required one (``ManifestError`` otherwise)."""
    path = Path(path)
    if path.is_dir():
        path = path / "bot.toml"
    return path, read_toml(path, "manifest", _FIELDS, ("name", "version", "command"),
                           ManifestError, size_limit=MANIFEST_SIZE_LIMIT,
                           nesting=MANIFEST_NESTING)


def oversized(where: object, size: int) -> str:
    """The refusal of a manifest file of ``size`` bytes, over ``MANIFEST_SIZE_LIMIT``."""
    return (f"{where}: the manifest file is {size} bytes; the limit is {MANIFEST_SIZE_LIMIT} "
            f"bytes (its description at most {DESCRIPTION_LIMIT} characters)")


def load_manifest(path: str | Path) -> Manifest:
    """Read and check a manifest; errors name the file, the field and what was expected."""
    return manifest_of(*read_manifest(path))


def manifest_of(path: Path, data: dict) -> Manifest:
    """The manifest at ``path`` whose fields (``read_manifest``) are ``data``, checked: every
    field of its type and within its bounds; errors name the file, the field and what was
    expected, or the limit."""
    if not isinstance(data["name"], str) or not data["name"].strip():
        raise ManifestError(f"{path}: field 'name': expected a non-empty string")
    _within(path, "'name'", data["name"])
    if not isinstance(data["version"], str):
        raise ManifestError(f"{path}: field 'version': expected a string such as \"1.0.0\"")
    _within(path, "'version'", data["version"])
    description = data.get("description")
    if description is not None and not isinstance(description, str):
        raise ManifestError(f"{path}: field 'description': expected a string (a paragraph)")
    if description is not None:
        _within(path, "'description'", description, DESCRIPTION_LIMIT)
    command = command_line(data["command"], f"{path}: field 'command'")
    if command is None:
        raise ManifestError(f"{path}: field 'command': expected a list of strings, e.g. "
                            "[\"python3\", \"bot.py\"]")
    protocol = data.get("protocol", "grpc")
    if protocol not in PROTOCOLS:
        raise ManifestError(f"{path}: field 'protocol' = {shown(protocol)}: expected one of "
                            f"{', '.join(PROTOCOLS)}")
    folder = path.parent.resolve()
    return Manifest(data["name"], data["version"], tuple(command), protocol, folder,
                    path.resolve(), _pythonpath(path, folder, data.get("pythonpath", [])),
                    build_steps(data.get("build", []), str(path)),
                    time_limit=_time_limit(path, protocol, data.get("time_limit")),
                    memory_limit=_memory_limit(path, protocol, data.get("memory_limit")),
                    data=_data_folder(path, protocol, folder, data.get("data")),
                    runtime=_runtime(path, data.get("runtime")), description=description)


def _within(where: object, field: str, text: str, limit: int = TEXT_LIMIT) -> None:
    """``text`` (the manifest's ``field``) at most ``limit`` characters."""
    if len(text) > limit:
        raise ManifestError(f"{where}: field {field} is {len(text)} characters; the limit is "
                            f"{limit}")


def command_line(value, where: str) -> list[str] | None:
    """A command line as a manifest writes it: a list of strings, or one string split like a
    shell would; at most ``ARGUMENTS_LIMIT`` arguments of at most ``ARGUMENT_LIMIT`` characters
    each (``ManifestError`` naming ``where``, the field, past them). None: neither form."""
    if isinstance(value, str):  # (at most MANIFEST_SIZE_LIMIT bytes, as the file is)
        try:
            value = shlex.split(value)
        except ValueError as e:  # an unclosed quote, a trailing escape
            raise ManifestError(f"{where} = {shown(value)}: cannot be split into arguments "
                                f"({e})") from None
    if not (isinstance(value, list) and value and all(isinstance(a, str) for a in value)):
        return None
    if len(value) > ARGUMENTS_LIMIT:
        raise ManifestError(f"{where}: {len(value)} arguments; the limit is {ARGUMENTS_LIMIT}")
    for i, arg in enumerate(value):
        if len(arg) > ARGUMENT_LIMIT:
            raise ManifestError(f"{where}[{i}] is {len(arg)} characters; the limit is "
                                f"{ARGUMENT_LIMIT}")
    return value


def _folder_text(path: Path, field: str, value: str) -> None:
    """A folder as the manifest's ``field`` names it: within ``TEXT_LIMIT``, no control
    character (a NUL is no path)."""
    _within(path, field, value)
    if any(unicodedata.category(c) == "Cc" for c in value):
        raise ManifestError(f"{path}: field {field} = {shown(value)}: a folder with a control "
                            "character")


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
            f"{path}: field 'time_limit' = {shown(value)}: expected Botzone's time limit per "
            f"turn in seconds, a number above 0 and at most {TIME_LIMIT_MAX} (such as 1 for a "
            "compiled bot, 6 for a Python one)")
    return value  # (as written: a whole number stays one in every form it is kept in)


def _memory_limit(path: Path, protocol: str, value) -> int | None:
    """``memory_limit``: a Botzone bot's MiB, a whole number from 16 to ``MEMORY_LIMIT_MAX``."""
    if value is None:
        return None
    _botzone_only(path, protocol, "memory_limit")
    if not (isinstance(value, int) and not isinstance(value, bool)
            and 16 <= value <= MEMORY_LIMIT_MAX):
        raise ManifestError(
            f"{path}: field 'memory_limit' = {shown(value)}: expected Botzone's memory limit in "
            f"MiB, a whole number from 16 to {MEMORY_LIMIT_MAX} (Botzone's usual one is 256)")
    return value


def _data_folder(path: Path, protocol: str, folder: Path, value) -> str | None:
    """``data``: a folder inside the bot's own, seen read-only at ``/data`` by a Botzone bot."""
    if value is None:
        return None
    _botzone_only(path, protocol, "data")
    if isinstance(value, str):
        _folder_text(path, "'data'", value)
    where = (folder / value).resolve() if isinstance(value, str) and value else None
    if where is None or not (where == folder or folder in where.parents):
        raise ManifestError(f"{path}: field 'data' = {shown(value)}: expected a folder inside "
                            "the bot's own, relative to the manifest's, such as \"data\"")
    if not os.path.isdir(where):  # (False for a name too long too)
        raise ManifestError(f"{path}: field 'data' = {shown(value)}: no such folder in the "
                            "bot's")
    return value


def _runtime(path: Path, value) -> str | None:
    """``runtime``: the name of one of the arena's runtimes (``referee.seats.runtimes``)."""
    if value is None:
        return None
    if not isinstance(value, str) or value not in RUNTIMES:
        raise ManifestError(f"{path}: field 'runtime' = {shown(value)}: expected one of "
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
    if len(value) > BUILD_STEPS_LIMIT:
        raise ManifestError(f"{where}: field 'build': {len(value)} steps; the limit is "
                            f"{BUILD_STEPS_LIMIT}")
    steps = []
    for i, step in enumerate(value):
        line = command_line(step, f"{where}: field 'build'[{i}]")
        if line is None or not line[0]:
            raise ManifestError(f"{where}: field 'build'[{i}] = {shown(step)}: {expected}")
        steps.append(tuple(line))
    return tuple(steps)


def pythonpath_entries(path: Path, entries) -> list[str]:
    """A manifest's ``pythonpath`` as written: a list of at most ``PYTHONPATH_LIMIT`` folders,
    each a string within ``TEXT_LIMIT`` and without control characters."""
    if not (isinstance(entries, list) and all(isinstance(e, str) and e for e in entries)):
        raise ManifestError(f"{path}: field 'pythonpath': expected a list of folders relative "
                            "to the manifest's, e.g. [\"..\"]")
    if len(entries) > PYTHONPATH_LIMIT:
        raise ManifestError(f"{path}: field 'pythonpath': {len(entries)} folders; the limit "
                            f"is {PYTHONPATH_LIMIT}")
    for i, entry in enumerate(entries):
        _folder_text(path, f"'pythonpath'[{i}]", entry)
    return entries


def _pythonpath(path: Path, folder: Path, entries) -> tuple[Path, ...]:
    entries = pythonpath_entries(path, entries)
    out = []
    for i, entry in enumerate(entries):
        where = (folder / entry).resolve()
        if not os.path.isdir(where):  # (False for a name too long too)
            raise ManifestError(f"{path}: field 'pythonpath'[{i}] = {shown(entry)}: no such "
                                f"folder ({where})")
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
