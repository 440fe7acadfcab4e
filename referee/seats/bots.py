"""Bot manifests and bot processes.

A manifest (``bot.toml``) names a bot and says how to start it:

    name = "greedy"
    version = "1.0.0"
    command = ["python3", "bot.py"]     # run with the manifest's folder as working directory
    protocol = "grpc"                   # or "stdio": a program that speaks JSON lines

A bot process learns where and who it is from its environment: ``ARENA_REFEREE`` (the address,
``unix:///path/seatN.sock`` or ``host:port``), ``ARENA_SEAT``, ``ARENA_TOKEN`` and
``ARENA_MATCH_ID``. Every seat is its own process: partners never share one.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import threading
import tomllib
from dataclasses import dataclass
from pathlib import Path

PROTOCOLS = ("grpc", "stdio")
_FIELDS = {"name", "version", "command", "protocol", "description"}
ROOT = Path(__file__).resolve().parents[2]  # the repository: referee/seats/bots.py
BRIDGE = ROOT / "sample_bots" / "stdio" / "bridge.py"
LOG_LIMIT = 8 * 1024 * 1024
"""Bytes of a bot's output (stdout and stderr) kept in its seat's log for one match."""


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

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"

    def content_hash(self) -> str:
        """A hash of the manifest and the files of its folder (what a result is attributed to)."""
        h = hashlib.sha256()
        h.update(repr((self.name, self.version, self.command, self.protocol)).encode())
        for p in sorted(self.folder.rglob("*")):
            if p.is_file() and "node_modules" not in p.parts and "build" not in p.parts \
                    and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(self.folder)).encode())
                h.update(p.read_bytes())
        return h.hexdigest()[:16]


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
    return Manifest(data["name"], data["version"], tuple(command), protocol,
                    path.parent.resolve(), path.resolve())


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


def launch(manifest: Manifest, *, address: str, seat: int, token: str, match_id: str,
           log_path: Path) -> subprocess.Popen:
    """Start one bot process for one seat, its output into ``log_path``."""
    env = dict(os.environ, ARENA_REFEREE=address, ARENA_SEAT=str(seat), ARENA_TOKEN=token,
               ARENA_MATCH_ID=match_id)
    # a checkout that is not installed still finds the project's packages
    paths = [str(ROOT), str(ROOT / "protos")] + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    command = list(manifest.command)
    if command[0] in ("python", "python3"):
        command[0] = sys.executable  # the project's interpreter, with its packages
    if manifest.protocol == "stdio":
        command = [sys.executable, str(BRIDGE), "--", *command]
    try:
        proc = subprocess.Popen(command, cwd=manifest.folder, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
    except OSError as e:
        Path(log_path).write_bytes(b"")
        raise ManifestError(f"{manifest.path or manifest.command[0]}: field 'command': cannot "
                            f"start {command[0]!r}: {e.strerror}") from None
    pump = threading.Thread(target=_keep_log, args=(proc.stdout, Path(log_path), LOG_LIMIT),
                            name=f"seat{seat}-log", daemon=True)
    pump.start()
    proc.log_pump = pump  # type: ignore[attr-defined]  (join it once the bot has exited)
    return proc


def _keep_log(pipe, path: Path, limit: int) -> None:
    """Copy a bot's output into ``path`` up to ``limit`` bytes; count the rest and say so at
    the end, so that no bot can fill the disk with its prints."""
    dropped = 0
    with pipe, open(path, "wb", buffering=0) as log:
        kept = 0
        while chunk := pipe.read1(65536):
            room = limit - kept
            if room > 0:
                log.write(chunk[:room])
                kept += min(room, len(chunk))
            dropped += max(0, len(chunk) - max(room, 0))
        if dropped:
            log.write(f"\n[arena: {dropped} more bytes of this bot's output were dropped; a "
                      f"seat's log keeps {limit} bytes a match]\n".encode())
