"""Hostile archives handed to ``arena bots submit``: a manifest that is a link leaving the
archive on disk, a decompression bomb in a skipped folder, a huge long-name header, member names
with control, escape or bidi characters, and names too long to print whole. Each is refused
within bounds (time, memory, message length) and stores nothing.

Real archives built here (the bombs as concatenated gzip members of one small compressed chunk,
so they cost little to build), real SQLite stores, and a real ``arena`` process for the bombs,
whose peak memory it reports itself.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import tempfile
import zlib
from pathlib import Path

import pytest
from registry_helpers import (  # noqa: F401  (fixtures)
    fresh_store, migrated, sqlite_store, versions_stored)
from scheduler.registry import archives, submissions, versions
from scheduler.registry.archives import RegistryError

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = b'name = "tiny"\nversion = "1.0"\ncommand = ["python3", "bot.py"]\nprotocol = "stdio"\n'
MiB = 1 << 20




def member(name: str, data: bytes = b"", kind=tarfile.REGTYPE, link: str = ""):
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = kind, link, len(data)
    return info, data


def tar_gz(path: Path, members, fmt=tarfile.GNU_FORMAT) -> Path:
    with tarfile.open(path, "w:gz", format=fmt) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def gzip_member(data: bytes) -> bytes:
    z = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip member
    return z.compress(data) + z.flush()


def bomb(path: Path, header: bytes, chunk: bytes, times: int) -> Path:
    """A .tar.gz: ``header`` (tar blocks), then ``chunk`` ``times`` over, as concatenated gzip
    members (one compressed once): gigabytes of tar for a few MiB of file."""
    one = gzip_member(chunk)
    with open(path, "wb") as f:
        f.write(gzip_member(header))
        for _ in range(times):
            f.write(one)
    return path


def submit_in_a_process(tmp_path: Path, archives: list[Path]) -> list[dict]:
    """``arena``'s submit of each archive in turn, in one process of its own (its store made
    here first): each one's message, seconds, and the process's peak RSS after it (VmHWM, its
    own: ``ru_maxrss`` is kept across exec, and gave the forking test worker's peak, 479 MiB)."""
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    sqlite_store(tmp_path)
    script = (
        "import json, sys, time\n"
        "from scheduler.store import Store\n"
        "from scheduler.registry.versions import submit\n"
        f"store = Store({url!r})\n"
        f"for archive in {[str(a) for a in archives]!r}:\n"
        "    t = time.perf_counter()\n"
        "    try:\n"
        "        submit(store, archive)\n"
        "        msg = None\n"
        "    except ValueError as e:\n"
        "        msg = str(e)\n"
        "    hwm = next(int(line.split()[1]) for line in open('/proc/self/status')\n"
        "               if line.startswith('VmHWM:'))\n"
        "    print(json.dumps({'msg': msg, 's': time.perf_counter() - t, 'rss_mib': hwm / 1024}))\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    return [json.loads(line) for line in out.stdout.splitlines()[-len(archives):]]


def test_a_manifest_linked_out_of_the_folder_on_disk_is_never_read(tmp_path, monkeypatch):
    # the link's text stays inside the archive (x1/.../x6/s/../../.. is x1/x2/x3/x4), but s is
    # the folder itself, so on disk it climbs three folders up from where the archive is
    # unpacked: to the host file below
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "t"))
    (tmp_path / "t").mkdir()
    (tmp_path / "host.toml").write_text('name = "host secret 4711"\nversion = "1"\n'
                                        'command = ["x"]\n')
    archive = tar_gz(tmp_path / "linked.tgz", [
        member("x1/x2/x3/x4/x5/x6/s", kind=tarfile.SYMTYPE, link="../../../../../.."),
        member("bot.toml", kind=tarfile.SYMTYPE, link="x1/x2/x3/x4/x5/x6/s/../../../host.toml"),
        member("bot.py", b"print(1)\n")])
    store = sqlite_store(tmp_path)
    with pytest.raises(RegistryError) as e:
        versions.submit(store, archive)
    msg = str(e.value)
    assert "bot.toml: a symlink pointing outside the archive's folder" in msg
    assert "secret" not in msg and "4711" not in msg
    assert versions_stored(store) == 0

    # a link placed later that moves an earlier one out is caught too
    late = tar_gz(tmp_path / "late.tgz", [
        member("bot.toml", MANIFEST),
        member("a", kind=tarfile.SYMTYPE, link="b/../host.toml"),
        member("b", kind=tarfile.SYMTYPE, link=".")])
    with pytest.raises(RegistryError, match="late.tgz: a: a symlink pointing outside"):
        archives.unpack_archive(late, tmp_path / "u" / "d")


def test_bombs_are_refused_at_once_in_bounded_memory(tmp_path):
    # a 4 GiB member in a folder the registry skips (node_modules), declared and there
    head = tarfile.TarInfo("node_modules/zeros")
    head.size = 4 << 30
    header = (member("bot.toml", MANIFEST)[0].tobuf(tarfile.GNU_FORMAT) +
              MANIFEST.ljust(512, b"\0") + head.tobuf(tarfile.GNU_FORMAT))
    skipped = bomb(tmp_path / "skipped.tar.gz", header, bytes(16 * MiB), 256)
    # a GNU long name of 256 MiB, which tarfile would read whole before its member
    head = tarfile.TarInfo("././@LongLink")
    head.type, head.size = tarfile.GNUTYPE_LONGNAME, 256 * MiB
    longname = bomb(tmp_path / "longname.tar.gz", head.tobuf(tarfile.GNU_FORMAT),
                    b"a" * (16 * MiB), 16)
    assert skipped.stat().st_size < 5 * MiB and longname.stat().st_size < MiB

    first, second = submit_in_a_process(tmp_path, [skipped, longname])
    assert first["msg"] is not None
    assert "skipped.tar.gz: node_modules/zeros: the archive grows past" in first["msg"]
    assert first["s"] < 2 and first["rss_mib"] < 200, first
    assert second["msg"] is not None
    assert "a long-name header of 268435456 bytes, over the limit" in second["msg"]
    assert len(second["msg"]) < 500 and "aaaa" not in second["msg"]
    assert second["s"] < 2 and second["rss_mib"] < 200, second
    assert versions_stored(sqlite_store(tmp_path)) == 0


@pytest.mark.parametrize("name", ["bot\n.py", "\x1b[2J\x1b[31mred.py", "\u202eyp.exe",
                                  "zero\u200bwidth.py", "lib/tab\there.py"])
def test_member_names_with_control_or_bidi_characters_are_refused(name, tmp_path):
    archive = tar_gz(tmp_path / "odd.tgz", [member("bot.toml", MANIFEST),
                                            member(name, b"x")], fmt=tarfile.PAX_FORMAT)
    store = sqlite_store(tmp_path)
    with pytest.raises(RegistryError) as e:
        submissions.submit(store, archive)
    msg = str(e.value)
    assert "a name with control, invisible or bidi characters" in msg
    assert ascii(name)[1:-1] in msg
    assert not any(ord(c) < 32 or 0x7f <= ord(c) for c in msg)
    assert versions_stored(store) == 0


def test_a_long_member_name_is_cut_in_the_message(tmp_path):
    name = "../" + "a" * 3000
    archive = tar_gz(tmp_path / "long.tgz", [member("bot.toml", MANIFEST), member(name, b"x")])
    with pytest.raises(RegistryError) as e:
        submissions.submit(sqlite_store(tmp_path), archive)
    msg = str(e.value)
    assert "... (3003 characters): a path leaving the archive's folder" in msg
    assert len(msg) < 500


def test_an_archive_is_unpacked_once(tmp_path, monkeypatch):
    archive = tar_gz(tmp_path / "ok.tgz", [member("bot.toml", MANIFEST),
                                           member("bot.py", b"print(1)\n")])
    calls = []
    unpack = archives.unpack_archive
    monkeypatch.setattr(archives, "unpack_archive",
                        lambda *a, **k: calls.append(a[0]) or unpack(*a, **k))
    v = versions.submit(sqlite_store(tmp_path), archive).version
    assert (v.ref, v.files, calls) == ("tiny@1.0", 2, [archive])
