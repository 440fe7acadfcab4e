"""The participant's thin client (``sdk/client``): ``pip install ./sdk/client``, offline, in an
empty virtual environment, installs it and nothing else: the arena's modules it lists, each the
repository's own file, importing only the standard library and each other; its wheel and sdist
are well formed. Its ``arena-submit``, with nothing of the arena's environment, submits a
sample bot to a real ``arena serve`` and reads the version's status as ``arena bots status``
prints it (one implementation)."""

from __future__ import annotations

import ast
import base64
import csv
import gzip
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from league_helpers import BOTS, arena, env, wait_for

from conftest import ROOT

pytestmark = pytest.mark.xdist_group("thin_client")  # one worker builds the venv once

CLIENT = ROOT / "sdk" / "client"
NAME = "thin-random"
NOBODY = "redis://127.0.0.1:1/0"
"""A broker nothing listens on: no worker takes the version, which stays queued."""


def _config() -> tuple[dict, list[str]]:
    with open(CLIENT / "pyproject.toml", "rb") as f:
        data = tomllib.load(f)
    return data["project"], data["tool"]["build_backend"]["files"]


def _bare_env(home: Path, **more: str) -> dict[str, str]:
    """A participant's environment: no PYTHONPATH, no setting of the arena's, no pip index."""
    keep = {k: os.environ[k] for k in ("TZ",) if k in os.environ}
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
            "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1", **keep, **more}


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A new virtual environment (what ``python -m venv`` puts in it) with the client installed
    from the repository, offline."""
    home = tmp_path_factory.mktemp("participant")
    where = home / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=120)
    pip = [str(where / "bin" / "python"), "-m", "pip"]
    listed = [*pip, "list", "--format=json"]
    before = json.loads(subprocess.run(listed, env=_bare_env(home), capture_output=True,
                                       text=True, check=True).stdout)
    got = subprocess.run([str(where / "bin" / "pip"), "install", "--no-index", "./sdk/client"],
                         cwd=ROOT, env=_bare_env(home, PYTHONDONTWRITEBYTECODE="1"),
                         capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stdout + got.stderr
    after = json.loads(subprocess.run(listed, env=_bare_env(home), capture_output=True,
                                      text=True, check=True).stdout)
    project, _files = _config()
    assert [p for p in after if p not in before] == [
        {"name": project["name"], "version": project["version"]}]
    return where


def test_the_client_installs_alone_and_carries_the_repositorys_own_files(venv):
    project, files = _config()
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    info = site / f"shengji_arena_client-{project['version']}.dist-info"
    with open(info / "RECORD", newline="") as f:
        installed = {row[0] for row in csv.reader(f)
                     if not row[0].startswith((info.name, "../")) and "__pycache__" not in row[0]}
    assert installed == set(files)
    assert [r for r in files if (site / r).read_bytes() != (ROOT / r).read_bytes()] == []
    said = subprocess.run([str(venv / "bin" / "python"), "-c", """
import importlib
for name in ("grpc", "referee", "sqlalchemy", "scheduler.store", "web", "cli.main"):
    try:
        importlib.import_module(name)
        print(name, "found")
    except ImportError:
        pass
import cli.participant
print("ok")
"""], cwd=venv.parent, env=_bare_env(venv.parent), capture_output=True, text=True,
                          timeout=60)
    assert said.stdout == "ok\n", said.stdout + said.stderr


def test_the_carried_modules_import_the_standard_library_and_each_other_only():
    """At any depth (inside functions too): a module the client does not carry, or a
    package outside the standard library, is missing where the client is installed."""
    _project, files = _config()
    carried = {rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
               for rel in files}
    outside = []
    for rel in files:
        for node in ast.walk(ast.parse((ROOT / rel).read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "__future__" \
                        and name not in carried:
                    outside.append(f"{rel}:{node.lineno}: {name}")
    assert outside == []


def _record(whl: zipfile.ZipFile) -> dict[str, tuple[str, str]]:
    """The wheel's RECORD, checked against its entries: every entry listed once, with its
    sha256 and size, but RECORD itself (listed with neither)."""
    name = next(n for n in whl.namelist() if n.endswith(".dist-info/RECORD"))
    rows = list(csv.reader(whl.read(name).decode().splitlines()))
    record = {path: (digest, size) for path, digest, size in rows}
    assert len(record) == len(rows) and sorted(record) == sorted(whl.namelist())
    assert record.pop(name) == ("", "")
    for path, (digest, size) in record.items():
        data = whl.read(path)
        assert digest == "sha256=" + base64.urlsafe_b64encode(
            hashlib.sha256(data).digest()).rstrip(b"=").decode() and size == str(len(data))
    return record


def _build(hook: str, source: Path, out: Path, python: Path) -> Path:
    """The backend's ``hook`` run in ``source`` by ``python``, as a frontend calls it."""
    code = (f"import sys; sys.path.insert(0, '.'); import build_backend; "
            f"print(build_backend.{hook}({str(out)!r}))")
    got = subprocess.run([str(python), "-I", "-B", "-c", code], cwd=source, capture_output=True,
                         text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    return out / got.stdout.strip()


def test_the_wheel_and_the_sdist_are_well_formed(venv, tmp_path):
    project, files = _config()
    python = venv / "bin" / "python"
    wheel = _build("build_wheel", CLIENT, tmp_path, python)
    assert wheel.name == f"shengji_arena_client-{project['version']}-py3-none-any.whl"
    info = f"shengji_arena_client-{project['version']}.dist-info"
    with zipfile.ZipFile(wheel) as whl:
        record = _record(whl)
        assert sorted(record) == sorted([*files, f"{info}/METADATA", f"{info}/WHEEL",
                                         f"{info}/entry_points.txt"])
        meta = whl.read(f"{info}/METADATA").decode()
        assert meta.startswith(f"Metadata-Version: 2.1\nName: {project['name']}\n"
                               f"Version: {project['version']}\n")
        assert "Requires-Python: >=3.11\n" in meta and "Requires-Dist" not in meta
        assert "Tag: py3-none-any\n" in whl.read(f"{info}/WHEEL").decode()
        assert whl.read(f"{info}/entry_points.txt").decode() == (
            "[console_scripts]\narena-submit = cli.participant:main\n")
    # the sdist holds what it takes to build the same wheel, away from the repository
    (tmp_path / "sdist").mkdir()
    sdist = _build("build_sdist", CLIENT, tmp_path / "sdist", python)
    assert sdist.name == f"shengji_arena_client-{project['version']}.tar.gz"
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    unpacked = tmp_path / "unpacked" / sdist.name.removesuffix(".tar.gz")
    (tmp_path / "again").mkdir()
    again = _build("build_wheel", unpacked, tmp_path / "again", python)
    assert again.read_bytes() == wheel.read_bytes()


@pytest.fixture
def service(tmp_path):
    """A real ``arena serve`` on a store of its own, with an author; its URL and the author's
    token file."""
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    token = tmp_path / "alice.token"
    arena("authors", "add", "alice", "--db", db, "--token-file", str(token), check=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path / "serve.log"
    proc = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--db", db, "--port",
                             str(port), "--broker", NOBODY], cwd=ROOT, env=env(),
                            stdout=open(log, "wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        def answers() -> bool:
            assert proc.poll() is None, log.read_text()
            return "on http://" in log.read_text()
        wait_for(answers, 60, "the service")
        yield f"http://127.0.0.1:{port}", token
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def test_arena_submit_submits_a_bot_and_reads_its_status(venv, service, tmp_path):
    from scheduler.registry.archives import size_text
    from scheduler.registry.packing import pack
    server, token = service
    home = tmp_path / "student"
    bot = home / NAME
    shutil.copytree(BOTS / "random", bot, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (bot / "bot.toml").read_text()
    (bot / "bot.toml").write_text(re.sub(r'(?m)^name = .*$', f'name = "{NAME}"', toml))
    for left_out in ("node_modules", "__pycache__"):  # a build's output: not sent
        (bot / left_out).mkdir()
        (bot / left_out / "big.bin").write_bytes(os.urandom(200_000))
    packed = pack(bot)
    sent = size_text(len(gzip.compress(packed.data, 6, mtime=0)))
    submit = venv / "bin" / "arena-submit"
    got = subprocess.run([str(submit), str(bot), "--server", server, "--token-file",
                          str(token)], cwd=home, env=_bare_env(home), capture_output=True,
                         text=True, timeout=120)
    assert (got.returncode, got.stderr) == (0, ""), got.stdout + got.stderr
    ref = f"{NAME}@1.0.0"
    assert got.stdout == (f"{ref} {packed.content_hash} queued (uploaded {sent}; "
                          f"`arena-submit status {ref} --wait` follows its build and check)\n")
    # the server and the token from the environment, as the docs give them
    status = subprocess.run([str(submit), "status", ref], cwd=home, env=_bare_env(
        home, ARENA_SERVER=server, ARENA_AUTHOR_TOKEN=token.read_text().strip()),
        capture_output=True, text=True, timeout=60)
    assert status.returncode == 1, status.stdout + status.stderr  # stored, not ready yet
    assert status.stdout.startswith(f"{ref}: queued\n")
    assert f"{packed.files} files, {size_text(packed.size)}" in status.stdout
    same = arena("bots", "status", ref, "--server", server, "--token-file", str(token))
    assert (same.returncode, same.stdout) == (status.returncode, status.stdout)
    nobody = subprocess.run([str(submit), "status", ref, "--server", server], cwd=home,
                            env=_bare_env(home), capture_output=True, text=True, timeout=60)
    assert nobody.returncode == 2 and nobody.stderr.startswith("arena-submit status: "), \
        nobody.stderr
