"""Hostile uploads refused quickly and cleanly by the registry (issue 44): archives of many
nested folders or many entries, a manifest that is huge, nests deep or holds values of odd
types, an archive deeper than Python's recursion limit, and a ``pythonpath`` that probes the
host's folders. Each is a ``RegistryError`` (which the service turns into a 400) naming the
limit, within a time bound, leaving no temporary folder behind and storing nothing.

Real archives built here, real SQLite stores (``registry_helpers``), the registry's own
``submit``.
"""

from __future__ import annotations

import io
import tarfile
import tempfile
import time
import zipfile
import zlib
from pathlib import Path

import pytest
from registry_helpers import (  # noqa: F401  (fixtures)
    fresh_store, migrated, sqlite_store, versions_stored)
from referee.seats.launch import SDK
from referee.seats.manifest import ManifestError, load_manifest
from scheduler.registry import archives, submissions
from scheduler.registry.archives import RegistryError

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = 'name = "tiny"\nversion = "1.0"\ncommand = ["python3", "bot.py"]\nprotocol = "stdio"\n'
BOTZONE = MANIFEST.replace('"stdio"', '"botzone"')
#: a bound on this process's CPU seconds, not the wall clock's: the work is all in process
#: (nothing forked), and the CPU it takes stays the same on a loaded machine, where the wall
#: clock's seconds did not (1.6-2.8 s beside other suites on two cores)
SECONDS = 1.5
"""The bound on one refusal (or unpack) here: each takes well under a tenth of it on an idle
machine, and took seconds to minutes before the bounds."""


@pytest.fixture(autouse=True)
def own_tmp(tmp_path, monkeypatch) -> Path:
    """Temporary folders (``arena-submit-*``, ``arena-pack-*``) made in the test's own."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def tar_gz(path: Path, members: list[tuple[str, bytes | None]]) -> Path:
    """A .tar.gz of ``members``: (name, bytes) a file, (name, None) a folder."""
    with tarfile.open(path, "w:gz", format=tarfile.GNU_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


def bot(path: Path, manifest: str, *more: tuple[str, bytes | None]) -> Path:
    return tar_gz(path, [("bot.toml", manifest.encode()), ("bot.py", b"print(1)\n"),
                         ("lib", None), *more])


def empty_files(path: Path, count: int) -> Path:
    """A .tar.gz of ``count`` empty files ``f0``, ``f1``..., no manifest: ustar headers made
    from one template (its checksum moved by each name's bytes)."""
    head = bytearray(tarfile.TarInfo("x").tobuf(tarfile.USTAR_FORMAT))
    head[0:100], head[148:156] = bytes(100), b" " * 8
    base, rest, tail = sum(head), bytes(head[100:148]), bytes(head[156:])
    z = zlib.compressobj(1, zlib.DEFLATED, 31)  # 31: gzip
    out = []
    for i in range(count):
        name = b"f%d" % i
        out.append(z.compress(name.ljust(100, b"\0") + rest
                              + b"%06o\0 " % (base + sum(name)) + tail))
    out.append(z.compress(bytes(1024)) + z.flush())
    path.write_bytes(b"".join(out))
    return path


def refused(tmp_path: Path, archive: Path) -> tuple[str, float]:
    """``submit``'s refusal of ``archive`` as an author's upload, and its seconds; nothing
    stored and no temporary folder left."""
    store = sqlite_store(tmp_path)
    before = versions_stored(store)
    t = time.process_time()
    with pytest.raises(RegistryError) as e:
        submissions.submit(store, archive, author="eve", state="queued")
    took = time.process_time() - t
    assert versions_stored(store) == before
    assert list((tmp_path / "tmp").iterdir()) == []
    return str(e.value), took


def test_600_nested_folders_unpack_in_linear_time_and_are_refused_at_the_depth_limit(tmp_path):
    """An 8 KiB archive of 600 nested folders took 6-14 s: every entry re-walked (checked
    and made) each of its parents. Unpacked with the depth and path limits lifted it takes a
    fraction of a second; submitted, it is refused at the depth limit at once."""
    archive = tar_gz(tmp_path / "nested.tgz", [("bot.toml", MANIFEST.encode())]
                     + [("/".join(["a"] * i), None) for i in range(1, 601)])
    assert archive.stat().st_size < 16 << 10
    try:
        t = time.process_time()
        archives.unpack_archive(archive, tmp_path / "d", depth=1000, length=4096)
        took = time.process_time() - t
        assert (tmp_path / "d" / "/".join(["a"] * 600)).is_dir()
    finally:
        archives.remove_tree(tmp_path / "d")  # (too deep for pytest's own clean-up)
    assert took < SECONDS, f"600 nested folders unpacked in {took:.2f} s of CPU"

    msg, took = refused(tmp_path, archive)
    assert "a path 33 folders deep; the limit is 32" in msg, msg
    assert len(msg) < 500 and took < SECONDS, (msg, took)


def test_100000_empty_files_are_refused_at_the_entry_limit_before_any_is_written(tmp_path,
                                                                                 monkeypatch):
    archive = empty_files(tmp_path / "many.tgz", 100_000)
    assert archive.stat().st_size < 1 << 20
    msg, took = refused(tmp_path, archive)
    assert f"f{archives.ENTRY_LIMIT}: more than {archives.ENTRY_LIMIT} entries in the archive" \
        in msg, msg
    assert took < SECONDS, f"refused in {took:.2f} s of CPU"
    # nothing was written: the headers are read first
    calls = []
    file = archives.Unpacker.file
    monkeypatch.setattr(archives.Unpacker, "file",
                        lambda self, *a: calls.append(a[0]) or file(self, *a))
    with pytest.raises(RegistryError, match="entries in the archive"):
        archives.unpack_archive(archive, tmp_path / "d")
    assert calls == [] and list((tmp_path / "d").iterdir()) == []


def test_a_zip_of_more_entries_than_the_limit_is_refused_from_its_directory(tmp_path):
    archive = tmp_path / "many.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("bot.toml", MANIFEST)
        for i in range(150):
            zf.writestr(f"f{i}", b"")
    with pytest.raises(RegistryError, match=r"many.zip: 151 entries in the archive; the limit "
                                            r"is 100"):
        archives.unpack_archive(archive, tmp_path / "d", entries=100)
    assert list((tmp_path / "d").iterdir()) == []


def test_a_path_longer_than_the_limit_is_refused(tmp_path):
    name = "/".join(["x" * 100] * 11) + "/bot.py"  # 11 folders deep, 1117 characters
    msg, _ = refused(tmp_path, bot(tmp_path / "long.tgz", MANIFEST, (name, b"1")))
    assert f"a path of {len(name)} characters; the limit is {archives.PATH_LIMIT}" in msg, msg
    assert len(msg) < 500


def test_a_24_MiB_description_is_refused_from_the_manifests_size(tmp_path):
    """A 24 KiB upload whose description is 24 MiB was stored, and every listing of versions
    grew 20 times slower: the manifest's size is refused before it is read."""
    archive = bot(tmp_path / "wordy.tgz", MANIFEST + 'description = "' + "x" * (24 << 20) + '"\n')
    assert archive.stat().st_size < 64 << 10
    msg, took = refused(tmp_path, archive)
    assert "wordy.tgz: bot.toml: the manifest file is 25165" in msg, msg
    assert "the limit is 65536 bytes (its description at most 2000 characters)" in msg, msg
    assert took < SECONDS, f"refused in {took:.2f} s of CPU"


@pytest.mark.parametrize("extra, expected", [
    ('description = "' + "x" * 3000 + '"\n',
     "field 'description' is 3000 characters; the limit is 2000"),
    ("description.text = 'a table'\n", "field 'description': expected a string"),
    ('pythonpath = [' + ", ".join(['"lib"'] * 20) + ']\n',
     "field 'pythonpath': 20 folders; the limit is 16"),
    ('pythonpath = ["' + "l" * 2000 + '"]\n',
     "field 'pythonpath'[0] is 2000 characters; the limit is 1024"),
    ('build = [' + ", ".join(['["make"]'] * 20) + ']\n',
     "field 'build': 20 steps; the limit is 16"),
    ('build = [[' + ", ".join(['"-j"'] * 100) + ']]\n',
     "field 'build'[0]: 100 arguments; the limit is 64"),
    ('build = "make ' + "a" * 40000 + '"\n',
     "field 'build'[0][1] is 40000 characters; the limit is 32768"),
], ids=["description", "description-table", "pythonpath-count", "pythonpath-length",
        "build-steps", "build-arguments", "build-argument-length"])
def test_every_text_field_of_a_manifest_is_bounded(tmp_path, extra, expected):
    msg, took = refused(tmp_path, bot(tmp_path / "b.tgz", MANIFEST + extra))
    assert f"b.tgz: bot.toml: {expected}" in msg, msg
    assert len(msg) < 500 and took < SECONDS, (msg, took)


@pytest.mark.parametrize("command, expected", [
    ("[" + ", ".join(['"a"'] * 100) + "]", "field 'command': 100 arguments; the limit is 64"),
    ('["' + "a" * 40000 + '"]', "field 'command'[0] is 40000 characters; the limit is 32768"),
    ("\"python3 'bot.py\"", "field 'command' = \"python3 'bot.py\": cannot be split into "
                            "arguments (No closing quotation)"),
], ids=["arguments", "argument-length", "unclosed-quote"])
def test_a_manifests_command_is_bounded_and_split_or_refused(tmp_path, command, expected):
    manifest = MANIFEST.replace('["python3", "bot.py"]', command)
    msg, _ = refused(tmp_path, bot(tmp_path / "b.tgz", manifest))
    assert f"b.tgz: bot.toml: {expected}" in msg, msg


@pytest.mark.parametrize("text, expected", [
    (MANIFEST + "description = " + "[" * 3000 + "]" * 3000 + "\n",
     "arrays or tables nested more than 4 deep at line 5; the limit is 4"),
    (MANIFEST + "description = " + "{a = " * 4000 + "1" + "}" * 4000 + "\n",
     "arrays or tables nested more than 4 deep at line 5; the limit is 4"),
    (MANIFEST + "description" + ".a" * 20000 + " = 1\n",  # 11 s to parse: square of the parts
     "more than 16 dots (a dotted key's) at line 5; the limit is 16"),
    (MANIFEST + "[description.a.b.c.d]\ne = 1\n",
     "arrays or tables nested 5 deep; the limit is 4"),
    (BOTZONE + "memory_limit = 1" + "0" * 5000 + "\n",
     "not valid TOML: an integer too long to read"),
    (MANIFEST + "description = 1979-05-27\n", "field 'description': expected a string"),
    (BOTZONE + 'data = "' + "d" * 2000 + '"\n', "field 'data' is 2000 characters; the limit "
                                              "is 1024"),
    (BOTZONE + 'data = "a\\u0000b"\n', "field 'data' = 'a\\x00b': a folder with a control"),
    (MANIFEST + 'pythonpath = ["lib\\u0000"]\n',
     "field 'pythonpath'[0] = 'lib\\x00': a folder with a control"),
    (MANIFEST.replace('"tiny"', '"' + "n" * 5000 + '"'),
     "field 'name' is 5000 characters; the limit is 1024"),
    (BOTZONE + 'data = "' + "d" * 300 + '"\n',  # a name too long for the file system
     f"field 'data' = '{'d' * 199}... (302 characters): no such folder in the bot's"),
    (MANIFEST + 'description = "\udce9"\n', f"not UTF-8 (byte {len(MANIFEST) + 15})"),
], ids=["array-3000-deep", "inline-table-4000-deep", "dotted-key-20000-parts",
        "table-header-5-deep", "integer-5000-digits", "description-a-date", "data-too-long",
        "nul-in-data", "nul-in-pythonpath", "name-too-long", "data-name-too-long", "not-utf8"])
def test_an_odd_manifest_is_a_clear_refusal_never_a_crash(tmp_path, text, expected):
    """A 3,000-deep array or 4,000-deep inline table gave a RecursionError (a 500), a
    20,000-part dotted key took 11 s to parse, a 5,000-digit number a ValueError, an unsplit
    command or a NUL in a folder's name a ValueError: each is a ``ManifestError`` from
    ``load_manifest`` and a ``RegistryError`` from ``submit``, naming the file and what is
    wrong, in bounded time."""
    raw = text.encode("utf-8", "surrogateescape")
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "lib").mkdir()
    (folder / "bot.toml").write_bytes(raw)
    t = time.process_time()
    with pytest.raises(ManifestError) as e:
        load_manifest(folder)
    assert f"{folder / 'bot.toml'}: {expected}" in str(e.value), e.value
    msg, _ = refused(tmp_path, tar_gz(tmp_path / "odd.tgz", [("bot.toml", raw),
                                                              ("lib", None)]))
    assert f"odd.tgz: bot.toml: {expected}" in msg, msg
    took = time.process_time() - t
    assert len(msg) < 500 and took < SECONDS, (msg, took)
    # brackets and dots in strings and comments are no nesting
    (folder / "bot.toml").write_text(MANIFEST + 'description = "[[[[[.{{{{{ ....." # [[[[[.{{\n'
                                     + 'build = [["make", "a.b.c.d.e.f"]]\n')
    assert load_manifest(folder).build == (("make", "a.b.c.d.e.f"),)


def test_an_archive_1100_folders_deep_is_refused_and_leaves_no_temporary_folder(tmp_path):
    """One file 1,100 folders deep gave a 500, left its ``arena-submit-*`` folder behind
    (its clean-up recursed past Python's limit) and stored the bot: now it is refused at the
    depth limit before a folder is made; and a temporary folder that deep is removed all the
    same."""
    deep = "/".join(["d"] * 1100) + "/f.py"
    archive = bot(tmp_path / "deep.tgz", MANIFEST, (deep, b"1"))
    msg, took = refused(tmp_path, archive)  # (which checks no arena-submit-* is left)
    assert "a path 1100 folders deep; the limit is 32" in msg and len(msg) < 500, msg
    assert took < SECONDS

    with pytest.raises(RuntimeError, match="after unpacking"):
        with archives.scratch("arena-submit-") as tmp:
            folder = archives.unpack_archive(archive, tmp / "src", depth=2000, length=4000)
            assert (folder / deep).is_file()
            (folder / "out").symlink_to(ROOT)  # removed, not followed
            raise RuntimeError("after unpacking")
    assert list((tmp_path / "tmp").iterdir()) == [] and ROOT.is_dir()


@pytest.mark.parametrize("there, missing", [
    ("/etc", "/no-such-folder-4711"),
    ("../../..", "../../../no-such-folder-4711"),
    (str(ROOT), str(ROOT / "no-such-folder-4711")),
    (str(SDK), str(SDK) + "-no-such"),
], ids=["absolute", "climbing", "the-arena", "the-sdk"])
def test_a_pythonpath_outside_the_bot_is_refused_alike_whether_the_host_has_it(tmp_path,
                                                                              there, missing):
    """A ``pythonpath`` was checked against the service host's folders: one it has and one
    it has not were refused in different words, which named the install path. Now an entry
    leaving the bot's folder is refused the same way whatever it names, quoting only what
    the manifest wrote."""
    seen = []
    for i, entry in enumerate((there, missing)):
        archive = bot(tmp_path / f"p{i}.tgz", MANIFEST + f'pythonpath = ["lib", "{entry}"]\n')
        msg, took = refused(tmp_path, archive)
        assert took < SECONDS
        seen.append(msg.replace(str(archive), "P").replace(ascii(entry), "ENTRY"))
    assert seen[0] == seen[1], seen
    assert "P: bot.toml: field 'pythonpath'[1] = ENTRY: outside the bot's folder" in seen[0]
    for host in (str(ROOT), str(SDK), str(tmp_path), tempfile.gettempdir(), "/tmp", "/work"):
        assert host not in seen[0], (host, seen[0])


def test_a_pythonpath_inside_the_bot_and_a_local_folders_sdk_stay_portable(tmp_path):
    store = sqlite_store(tmp_path)
    v = submissions.submit(store, bot(tmp_path / "ok.tgz", MANIFEST
                                      + 'pythonpath = ["lib", "./lib/../lib", "."]\n'),
                           author="eve", state="queued").version
    assert v.manifest_fields["pythonpath"] == ["@bot/lib", "@bot/lib", "@bot"]
    for entry in ("nolib", "l" * 300):  # (a name too long for the file system)
        msg, _ = refused(tmp_path, bot(tmp_path / "no.tgz",
                                       MANIFEST + f'pythonpath = ["{entry}"]\n'))
        assert f"no.tgz: bot.toml: field 'pythonpath'[0] = {archives.quote(entry)}: no such " \
            "folder in the bot" in msg, msg

    # a bot folder on this machine may name the SDK and the arena where they are here
    folder = tmp_path / "local"
    folder.mkdir()
    (folder / "bot.toml").write_text(MANIFEST.replace("tiny", "local")
                                     + f'pythonpath = ["{SDK}", "{ROOT}"]\n')
    (folder / "bot.py").write_text("print(1)\n")
    v = submissions.submit(store, folder, author="eve", state="queued").version
    assert v.manifest_fields["pythonpath"] == ["@sdk", "@arena"]
