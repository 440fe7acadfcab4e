"""The client's build backend (PEP 517), standard library only: ``pip install`` builds it
offline, in an environment with nothing installed. The wheel (PEP 427) holds the files
``[tool.build_backend]`` lists, taken from their one place in the repository (an sdist holds
them itself), and its dist-info: METADATA, WHEEL, entry_points.txt and RECORD."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import re
import tarfile
import tomllib
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # every entry's time: the same files make the same wheel


def _config() -> tuple[dict, dict]:
    with open(HERE / "pyproject.toml", "rb") as f:
        data = tomllib.load(f)
    return data["project"], data["tool"]["build_backend"]


def _dist(project: dict) -> str:
    """``name-version`` as a wheel's and an sdist's file names spell it."""
    return f"{re.sub(r'[-_.]+', '_', project['name']).lower()}-{project['version']}"


def _sources(tool: dict) -> list[tuple[str, Path]]:
    """(path in the package, file) of each carried file: under the repository's folder, or in
    an sdist (PKG-INFO beside this file) under its own."""
    root = HERE if (HERE / "PKG-INFO").is_file() else (HERE / tool["root"]).resolve()
    return [(rel, root / rel) for rel in tool["files"]]


def _metadata(project: dict) -> bytes:
    """The core metadata (version 2.1), the README as its description."""
    head = [("Metadata-Version", "2.1"), ("Name", project["name"]),
            ("Version", project["version"]), ("Summary", project["description"]),
            ("License", project["license"]), ("Requires-Python", project["requires-python"]),
            *(("Requires-Dist", d) for d in project.get("dependencies", ())),
            ("Description-Content-Type", "text/markdown")]
    readme = (HERE / project["readme"]).read_text(encoding="utf-8")
    return ("".join(f"{k}: {v}\n" for k, v in head) + "\n" + readme).encode()


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(
        b"=").decode()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    project, tool = _config()
    dist = _dist(project)
    info = f"{dist}.dist-info"
    scripts = "".join(f"{k} = {v}\n" for k, v in project.get("scripts", {}).items())
    files = [(rel, path.read_bytes()) for rel, path in _sources(tool)] + [
        (f"{info}/METADATA", _metadata(project)),
        (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: build_backend\n"
                          b"Root-Is-Purelib: true\nTag: py3-none-any\n"),
        (f"{info}/entry_points.txt", f"[console_scripts]\n{scripts}".encode())]
    record = io.StringIO()
    rows = csv.writer(record, lineterminator="\n")
    rows.writerows([name, _digest(data), len(data)] for name, data in files)
    rows.writerow([f"{info}/RECORD", "", ""])
    files.append((f"{info}/RECORD", record.getvalue().encode()))
    name = f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / name, "w", zipfile.ZIP_DEFLATED) as whl:
        for path, data in files:
            entry = zipfile.ZipInfo(path, ZIP_TIME)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(entry, data)
    return name


def build_sdist(sdist_directory, config_settings=None) -> str:
    """The package's own files, PKG-INFO and the carried files, under ``name-version/``."""
    project, tool = _config()
    dist = _dist(project)
    own = [(n, (HERE / n).read_bytes()) for n in ("pyproject.toml", "build_backend.py",
                                                  project["readme"])]
    files = own + [("PKG-INFO", _metadata(project))] + [
        (rel, path.read_bytes()) for rel, path in _sources(tool)]
    name = f"{dist}.tar.gz"
    with tarfile.open(Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path, data in files:
            entry = tarfile.TarInfo(f"{dist}/{path}")
            entry.size, entry.mode = len(data), 0o644
            tar.addfile(entry, io.BytesIO(data))
    return name
