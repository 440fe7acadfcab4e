"""The bot registry: canonical packing, immutable versions, refusals that store nothing, the
verified local cache (corruption, concurrent fetches, eviction), removal while pinned, authors
and the ``arena bots submit/list/show/remove`` commands.

Real stores: SQLite files in the test's folder, and PostgreSQL for one submit and fetch.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import stat
import tarfile
import time
import zipfile
import zlib
from pathlib import Path

import pytest
from league_helpers import PG_URL, unique
from sqlalchemy import func, select, update

from cli.main import main as arena_main
from scheduler.registry import archives, owners, packing, submissions, versions
from scheduler.registry import cache as bot_cache
from scheduler.registry.archives import RegistryError
from scheduler.store import Store, bot_archives, bot_versions
from scheduler.season_config import SeasonConfig
from scheduler.store.rows import NewBot

MANIFEST = 'name = "{name}"\nversion = "{version}"\ncommand = ["python3", "bot.py"]\n' \
           'protocol = "stdio"\n'


def make_bot(folder: Path, name: str = "tiny", version: str = "1.0", *, order=None,
             extra: dict[str, bytes] | None = None) -> Path:
    """A small bot folder: a manifest, a program, a helper module and an executable script;
    ``order`` reverses the order the files are created in."""
    files = {"bot.toml": MANIFEST.format(name=name, version=version).encode(),
             "bot.py": b"print('hello')\n", "lib/util.py": b"X = 1\n",
             "run.sh": b"#!/bin/sh\nexec python3 bot.py\n", **(extra or {})}
    items = list(files.items())
    if order == "reversed":
        items.reverse()
    for rel, data in items:
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    os.chmod(folder / "run.sh", 0o700)
    return folder


def sqlite_store(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path / 'arena.db'}")


def counts(store: Store) -> tuple[int, int]:
    """(bot versions, archives) in the store."""
    with store.engine.connect() as c:
        return (c.execute(select(func.count()).select_from(bot_versions)).scalar_one(),
                c.execute(select(func.count()).select_from(bot_archives)).scalar_one())


# -- packing ------------------------------------------------------------------------------
def test_packing_is_canonical(tmp_path):
    a = make_bot(tmp_path / "a")
    b = make_bot(tmp_path / "b", order="reversed")
    for p in (b / "bot.py", b / "lib"):
        os.utime(p, (1_000_000, 1_000_000))
    os.chmod(b / "bot.py", 0o600)  # group and others' bits are not kept
    first = packing.pack(a)
    assert packing.pack(b).content_hash == first.content_hash
    assert packing.pack(a).data == first.data
    assert (first.files, first.size) == (4, len(first.data))

    for junk in ("node_modules/left-pad/index.js", "build/bot.o", "__pycache__/bot.pyc",
                 ".git/HEAD", "lib/__pycache__/util.pyc"):
        (b / junk).parent.mkdir(parents=True, exist_ok=True)
        (b / junk).write_bytes(b"rebuilt where the bot runs")
    assert packing.pack(b).content_hash == first.content_hash

    with tarfile.open(fileobj=io.BytesIO(first.data)) as tar:
        members = tar.getmembers()
    assert [m.name for m in members] == ["bot.py", "bot.toml", "lib", "lib/util.py", "run.sh"]
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, 0, "", "")}
    assert {m.name: m.mode for m in members} == {"bot.py": 0o644, "bot.toml": 0o644,
                                                 "lib": 0o755, "lib/util.py": 0o644,
                                                 "run.sh": 0o755}

    (b / "bot.py").write_bytes(b"print('changed')\n")
    assert packing.pack(b).content_hash != first.content_hash


def test_archives_pack_as_their_folder(tmp_path):
    bot = make_bot(tmp_path / "tiny")
    (bot / "link.py").symlink_to("lib/util.py")
    want = packing.pack(bot).content_hash
    tgz = tmp_path / "tiny.tgz"
    with tarfile.open(tgz, "w:gz") as tar:
        tar.add(bot, arcname="tiny")  # one top-level folder holding the manifest
    plain = tmp_path / "tiny.tar"
    with tarfile.open(plain, "w") as tar:
        for p in sorted(bot.rglob("*"), reverse=True):
            tar.add(p, arcname=str(p.relative_to(bot)), recursive=False)
    zipped = tmp_path / "tiny.zip"
    with zipfile.ZipFile(zipped, "w") as zf:
        for p in sorted(bot.rglob("*")):
            info = zipfile.ZipInfo(str(p.relative_to(bot)) + ("/" if p.is_dir() else ""))
            info.external_attr = os.lstat(p).st_mode << 16
            zf.writestr(info, os.readlink(p) if p.is_symlink() else
                        b"" if p.is_dir() else p.read_bytes())
    for archive in (tgz, plain, zipped):
        assert packing.pack(archive).content_hash == want, archive


def test_a_symlink_inside_the_folder_is_kept(tmp_path):
    bot = make_bot(tmp_path / "tiny")
    (bot / "link.py").symlink_to("lib/util.py")
    (bot / "lib" / "up").symlink_to("..")
    with tarfile.open(fileobj=io.BytesIO(packing.pack(bot).data)) as tar:
        links = {m.name: m.linkname for m in tar if m.issym()}
    assert links == {"link.py": "lib/util.py", "lib/up": ".."}


# -- refusals: each names its reason and stores nothing -------------------------------------
def _tar_with(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def _member(name: str, kind=tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info


def _manifest_member() -> tuple[tarfile.TarInfo, bytes]:
    return _member("bot.toml"), MANIFEST.format(name="tiny", version="1.0").encode()


def refusal_sources(kind: str, tmp_path: Path, monkeypatch) -> tuple[Path, str]:
    """A source ``submit`` must refuse, and words its message must hold."""
    bot = make_bot(tmp_path / "tiny")
    if kind == "manifest":
        (bot / "bot.toml").write_text('name = "tiny"\nversion = "1.0"\n')
        return bot, "missing field 'command'"
    if kind == "manifest in an archive":
        return (_tar_with(tmp_path / "bad.tgz", [(_member("bot.toml"), b'name = "x"\n')]),
                "bad.tgz: bot.toml: missing field 'version'")
    if kind == "over the limit":
        monkeypatch.setenv("ARENA_BOT_SIZE_LIMIT", str(64 * 1024))
        (bot / "weights.bin").write_bytes(os.urandom(80 * 1024))
        return bot, "weights.bin: the archive grows past"
    if kind == "archive over the limit":
        monkeypatch.setenv("ARENA_BOT_SIZE_LIMIT", str(64 * 1024))
        return (_tar_with(tmp_path / "big.tgz", [_manifest_member(),
                                                 (_member("zeros"), bytes(200 * 1024))]),
                "big.tgz: zeros: the archive grows past")
    if kind == "symlink escaping":
        (bot / "secrets").symlink_to("../../etc/passwd")
        return bot, "secrets: a symlink pointing outside the folder"
    if kind == "absolute symlink":
        (bot / "abs").symlink_to(bot / "bot.py")
        return bot, "abs: a symlink to an absolute path"
    if kind == "special file":
        os.mkfifo(bot / "pipe")
        return bot, "pipe: a special file"
    if kind == "archive with ..":
        return (_tar_with(tmp_path / "dots.tgz", [_manifest_member(),
                                                  (_member("../evil.txt"), b"x")]),
                "dots.tgz: ../evil.txt: a path leaving the archive's folder")
    if kind == "archive with an absolute path":
        zipped = tmp_path / "abs.zip"
        with zipfile.ZipFile(zipped, "w") as zf:
            zf.writestr("bot.toml", _manifest_member()[1])
            zf.writestr("/tmp/evil.txt", b"x")
        return zipped, "abs.zip: /tmp/evil.txt: an absolute path"
    if kind == "archive link escaping":
        return (_tar_with(tmp_path / "link.tgz", [_manifest_member(),
                                                  (_member("sub/up", tarfile.SYMTYPE,
                                                           "../../outside"), b"")]),
                "link.tgz: sub/up: a symlink pointing outside the archive's folder")
    if kind == "archive path through a link":
        return (_tar_with(tmp_path / "via.tgz", [_manifest_member(),
                                                 (_member("here", tarfile.SYMTYPE, "."), b""),
                                                 (_member("here/x"), b"x")]),
                "via.tgz: here/x: a path through a symlink")
    raise AssertionError(kind)


REFUSALS = ["manifest", "manifest in an archive", "over the limit", "archive over the limit",
            "symlink escaping", "absolute symlink", "special file", "archive with ..",
            "archive with an absolute path", "archive link escaping",
            "archive path through a link"]


@pytest.mark.parametrize("kind", REFUSALS)
def test_a_refused_bot_names_the_reason_and_stores_nothing(kind, tmp_path, monkeypatch):
    store = sqlite_store(tmp_path)
    source, words = refusal_sources(kind, tmp_path, monkeypatch)
    with pytest.raises(RegistryError) as e:
        submissions.submit(store, source)
    assert words in str(e.value)
    assert str(source) in str(e.value)
    assert counts(store) == (0, 0)
    assert not (tmp_path.parent / "evil.txt").exists()


def test_unpacking_counts_the_limit_as_it_goes(tmp_path):
    big = _tar_with(tmp_path / "big.tgz", [_manifest_member(), (_member("zeros"),
                                                                 bytes(4 << 20))])
    with pytest.raises(RegistryError, match="big.tgz: zeros: the archive grows past"):
        archives.unpack_archive(big, tmp_path / "out", limit=256 * 1024)
    zeros = tmp_path / "out" / "zeros"  # (a tar's stream is surveyed first: none written)
    assert not zeros.exists() or zeros.stat().st_size <= 256 * 1024
    many = _tar_with(tmp_path / "many.tgz", [(_member(f"f{i}"), b"") for i in range(600)])
    with pytest.raises(RegistryError, match="many.tgz: f"):  # entries count too
        archives.unpack_archive(many, tmp_path / "out2", limit=256 * 1024)


def test_a_version_never_changes(tmp_path):
    store = sqlite_store(tmp_path)
    bot = make_bot(tmp_path / "tiny")
    got = submissions.submit(store, bot, author="ann")
    first = got.version
    assert (first.ref, got.already, first.author) == ("tiny@1.0", False, "ann")
    assert first.content_hash == packing.pack(bot).content_hash

    again = submissions.submit(store, bot)  # the same content: a no-op
    assert again.already and again.version.columns() == first.columns()
    assert counts(store) == (1, 1)

    (bot / "bot.py").write_bytes(b"print('better')\n")
    with pytest.raises(RegistryError) as e:
        submissions.submit(store, bot)
    assert "tiny@1.0 is already in the registry with other content" in str(e.value)
    assert first.content_hash[:12] in str(e.value) and "bump the version" in str(e.value)
    assert counts(store) == (1, 1)

    newer = submissions.submit(store, bot, version="1.1").version
    (bot / "bot.py").write_bytes(b"print('hello')\n")
    alias = submissions.submit(store, bot, name="tiny-alias", version="9")  # the first content
    assert alias.version.content_hash == first.content_hash and not alias.already
    assert counts(store) == (3, 2)  # the archive is shared
    assert json.loads(newer.manifest_json)["version"] == "1.1"
    assert (newer.protocol, newer.language, newer.files) == ("stdio", "python", 4)


def test_a_versions_manifest_is_placed_where_it_was_fetched(tmp_path):
    store = sqlite_store(tmp_path)
    bot = make_bot(tmp_path / "tiny")
    (bot / "bot.toml").write_text(MANIFEST.format(name="tiny", version="1.0")
                                  + 'pythonpath = ["lib"]\nbuild = "make all"\n')
    v = submissions.submit(store, bot, version="2.0").version
    assert v.manifest_fields["build"] == [["make", "all"]]
    assert v.manifest_fields["version"] == "2.0"
    folder = bot_cache.fetch(store, v.content_hash, tmp_path / "cache")
    m = versions.located(v.manifest(), folder)
    assert (m.name, m.version, m.command, m.protocol) == ("tiny", "2.0", ("python3", "bot.py"),
                                                         "stdio")
    assert (m.folder, m.path, m.pythonpath) == (folder, folder / "bot.toml",
                                                (folder.resolve() / "lib",))
    assert getattr(m, "build", (("make", "all"),)) == (("make", "all"),)
    assert v.manifest().pythonpath == (Path("@bot/lib"),)


def test_resolve_names_the_latest_version_and_lists_the_known(tmp_path):
    store = sqlite_store(tmp_path)
    bot = make_bot(tmp_path / "tiny")
    for v in ("1.0", "2.0", "1.5"):
        (bot / "bot.py").write_text(f"print({v!r})\n")
        submissions.submit(store, bot, version=v)
    assert submissions.resolve(store, "tiny").version == "1.5"  # the last submitted
    assert submissions.resolve(store, "tiny@2.0").ref == "tiny@2.0"
    with pytest.raises(RegistryError, match=r"tiny@3\.0: no such version of tiny; its "
                                            r"versions: 1\.0, 2\.0, 1\.5"):
        submissions.resolve(store, "tiny@3.0")
    with pytest.raises(RegistryError, match="huge: no such bot in the registry; its bots: tiny"):
        submissions.resolve(store, "huge")


# -- the local cache ----------------------------------------------------------------------
def test_fetch_unpacks_read_only_and_refetches_a_corrupted_copy(tmp_path):
    store = sqlite_store(tmp_path)
    bot = make_bot(tmp_path / "tiny")
    (bot / "link.py").symlink_to("lib/util.py")
    v = submissions.submit(store, bot).version
    cache = tmp_path / "cache"
    folder = bot_cache.fetch(store, v.content_hash, cache)
    assert folder == cache / v.content_hash
    assert (folder / "lib" / "util.py").read_bytes() == b"X = 1\n"
    assert os.readlink(folder / "link.py") == "lib/util.py"
    modes = {p.name: stat.S_IMODE(os.lstat(p).st_mode) for p in [folder, *folder.rglob("*")]
             if not p.is_symlink()}
    assert modes == {v.content_hash: 0o555, "bot.toml": 0o444, "bot.py": 0o444, "lib": 0o555,
                     "util.py": 0o444, "run.sh": 0o555}
    assert packing.pack(folder).content_hash == v.content_hash
    assert bot_cache.fetch(store, v.content_hash, cache) == folder  # verified, kept

    def corrupt(path: Path) -> None:
        os.chmod(path, 0o644)
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0x01  # one bit, the size unchanged
        path.write_bytes(bytes(data))

    for broken in (folder / "lib" / "util.py", cache / f"{v.content_hash}.tar"):
        os.chmod(broken.parent, 0o755)
        corrupt(broken)
        assert not bot_cache._verified(cache, v.content_hash)
        assert bot_cache.fetch(store, v.content_hash, cache) == folder
        assert bot_cache._verified(cache, v.content_hash)
        assert (folder / "lib" / "util.py").read_bytes() == b"X = 1\n"

    os.chmod(folder, 0o755)
    (folder / "added.py").write_text("")  # a file that is not the version's
    assert not bot_cache._verified(cache, v.content_hash)
    bot_cache.fetch(store, v.content_hash, cache)
    assert not (folder / "added.py").exists()
    assert sorted(p.name for p in cache.iterdir() if p.name.startswith(".tmp")) == []


def test_fetch_refuses_an_archive_that_does_not_match_its_hash(tmp_path):
    store = sqlite_store(tmp_path)
    v = submissions.submit(store, make_bot(tmp_path / "tiny")).version
    tar = zlib.decompress(store.registry.archive(v.content_hash))
    with store.engine.begin() as c:
        c.execute(update(bot_archives).values(data=zlib.compress(tar[:-1] + b"\x01")))
    with pytest.raises(RegistryError, match="the stored archive's content hash is .*corrupt"):
        bot_cache.fetch(store, v.content_hash, tmp_path / "cache")
    assert not (tmp_path / "cache" / v.content_hash).exists()
    with pytest.raises(RegistryError, match="no such bot version archive"):
        bot_cache.fetch(store, "0" * 64, tmp_path / "cache")
    with pytest.raises(RegistryError, match="not a bot version's content hash"):
        bot_cache.fetch(store, "../etc", tmp_path / "cache")


def _fetch_in_process(url: str, content_hash: str, cache: str, out) -> None:
    out.put(str(bot_cache.fetch(Store(url), content_hash, Path(cache))))


def test_concurrent_fetches_unpack_once(tmp_path, monkeypatch):
    store = sqlite_store(tmp_path)
    v = submissions.submit(store, make_bot(tmp_path / "tiny")).version
    cache = tmp_path / "cache"
    fills = tmp_path / "fills"
    fill = bot_cache._fill

    def counted(*a):
        with open(fills, "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(0.2)  # the others are waiting meanwhile
        fill(*a)

    monkeypatch.setattr(bot_cache, "_fill", counted)
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=_fetch_in_process, args=(store.url, v.content_hash, str(cache),
                                                         out)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0] * 4
    assert {out.get(timeout=5) for _ in procs} == {str(cache / v.content_hash)}
    assert len(fills.read_text().split()) == 1
    assert bot_cache._verified(cache, v.content_hash)
    assert sorted(p.name for p in cache.iterdir() if not p.name.endswith((".lock", ".use"))) \
        == sorted([v.content_hash, f"{v.content_hash}.tar", f"{v.content_hash}.json"])


def test_eviction_drops_the_least_recently_used_first(tmp_path, monkeypatch):
    store = sqlite_store(tmp_path)
    bot = make_bot(tmp_path / "tiny")
    cache = tmp_path / "cache"
    hashes = []
    for i in range(4):
        (bot / "weights.bin").write_bytes(bytes([i]) * 100_000)
        hashes.append(submissions.submit(store, bot, version=str(i)).version.content_hash)
    one = json.loads((bot_cache.fetch(store, hashes[0], cache).parent
                      / f"{hashes[0]}.json").read_text())["bytes"]
    monkeypatch.setenv("ARENA_BOT_CACHE_MB", str(2.5 * one / (1 << 20)))  # room for two
    bot_cache.fetch(store, hashes[1], cache)
    bot_cache.fetch(store, hashes[0], cache)  # used again: 1 is now the least recent
    bot_cache.fetch(store, hashes[2], cache)
    kept = {h for h in hashes if (cache / f"{h}.json").exists()}
    assert kept == {hashes[0], hashes[2]}
    assert not (cache / hashes[1]).exists() and not (cache / f"{hashes[1]}.tar").exists()

    with bot_cache.using(hashes[0], cache):  # playing: never evicted
        bot_cache.fetch(store, hashes[2], cache)
        bot_cache.fetch(store, hashes[3], cache)
        assert (cache / f"{hashes[0]}.json").exists()
    assert {h for h in hashes if (cache / f"{h}.json").exists()} == {hashes[0], hashes[3]}
    with bot_cache._flock(cache / f"{hashes[0]}.lock"):  # being fetched elsewhere: it stays
        bot_cache.fetch(store, hashes[2], cache)
    assert {h for h in hashes if (cache / f"{h}.json").exists()} == {hashes[0], hashes[2]}

    monkeypatch.setenv("ARENA_BOT_CACHE_MB", "0")  # the one being fetched stays
    assert bot_cache.fetch(store, hashes[1], cache).is_dir()
    assert {h for h in hashes if (cache / f"{h}.json").exists()} == {hashes[1]}


# -- removal and authors -------------------------------------------------------------------
def test_remove_is_refused_while_a_season_pins_the_version(tmp_path):
    store = sqlite_store(tmp_path)
    bot = make_bot(tmp_path / "tiny")
    v = submissions.submit(store, bot).version
    twin = submissions.submit(store, bot, version="1.0-twin").version  # the same archive
    store.seasons.create("spring", SeasonConfig("spring", "two-deck-fry", "spring"), "h",
                         "spring.toml",
                         [NewBot("tiny", v.version, "x", {}, v.content_hash)], [])
    with pytest.raises(RegistryError, match="tiny@1.0: pinned by season spring"):
        submissions.remove(store, "tiny@1.0")
    assert counts(store) == (2, 1)
    with pytest.raises(RegistryError, match="name the version"):
        submissions.remove(store, "tiny")

    store.seasons.delete("spring")
    assert submissions.remove(store, "tiny@1.0").ref == "tiny@1.0"
    assert counts(store) == (1, 1)  # the archive stays with the twin
    submissions.remove(store, twin.ref)
    assert counts(store) == (0, 0)
    with pytest.raises(RegistryError, match="no such bot"):
        submissions.remove(store, "tiny@1.0")


def test_authors_tokens(tmp_path):
    store = sqlite_store(tmp_path)
    token = owners.add_author(store, "ann")
    assert len(token) >= 40
    assert owners.check_token(store, "ann", token)
    assert not owners.check_token(store, "ann", token + "x")
    assert not owners.check_token(store, "bob", token)
    assert store.authors.token_hash("ann") != token  # only its hash is stored
    with pytest.raises(RegistryError, match="exists already"):
        owners.add_author(store, "ann")


# -- the command line ---------------------------------------------------------------------
def test_bots_commands(tmp_path, capsys):
    db = str(tmp_path / "arena.db")
    bot = make_bot(tmp_path / "tiny")
    assert arena_main(["bots", "submit", str(bot), "--db", db, "--author", "ann"]) == 0
    v = submissions.resolve(Store(f"sqlite:///{db}"), "tiny@1.0")
    assert capsys.readouterr().out.startswith(f"tiny@1.0 {v.content_hash} (4 files, ")
    assert arena_main(["bots", "submit", str(bot), "--db", db]) == 0
    assert capsys.readouterr().out == f"tiny@1.0 {v.content_hash} already submitted\n"

    (bot / "bot.py").write_text("print('other')\n")
    assert arena_main(["bots", "submit", str(bot), "--db", db]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena bots submit: ") and "bump the version" in err
    assert err.count("\n") == 1
    assert arena_main(["bots", "submit", str(tmp_path / "none"), "--db", db]) == 2
    assert "no such folder or archive" in capsys.readouterr().err
    assert counts(Store(f"sqlite:///{db}")) == (1, 1)

    assert arena_main(["bots", "submit", str(bot), "--db", db, "--name", "t2",
                       "--version", "2"]) == 0
    capsys.readouterr()
    assert arena_main(["bots", "list", "--db", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["name", "version", "hash", "protocol", "size", "submitted",
                                "author"]
    assert lines[1].split()[:4] == ["tiny", "1.0", v.content_hash[:12], "stdio"]
    assert lines[1].split()[-1] == "ann" and lines[2].split()[:2] == ["t2", "2"]

    assert arena_main(["bots", "show", "tiny", "--db", db]) == 0
    out = capsys.readouterr().out
    assert f"content_hash: {v.content_hash}" in out and "  0755 run.sh" in out
    assert "  0755 lib/" in out and "  0644 lib/util.py 6 B" in out

    assert arena_main(["bots", "remove", "tiny@1.0", "--db", db]) == 0
    assert capsys.readouterr().out.startswith("removed tiny@1.0")
    assert arena_main(["bots", "show", "tiny", "--db", db]) == 2
    assert "no such bot in the registry; its bots: t2" in capsys.readouterr().err


# -- PostgreSQL ---------------------------------------------------------------------------
def test_submit_and_fetch_on_postgresql(tmp_path):
    try:
        store = Store(PG_URL)
        store.registry.versions("none")
    except Exception as e:  # a missing server is a failure here, not a skip
        pytest.fail(f"PostgreSQL at {PG_URL} is needed for this test: {e}")
    name = unique("tiny")
    bot = make_bot(tmp_path / "tiny", name=name, extra={"salt.txt": name.encode()})
    try:
        v = submissions.submit(store, bot, author="ann").version
        assert submissions.submit(store, bot).already
        assert submissions.resolve(store, name).columns() == v.columns()
        t = time.perf_counter()
        folder = bot_cache.fetch(store, v.content_hash, tmp_path / "cache")
        assert time.perf_counter() - t < 10
        assert (folder / "salt.txt").read_text() == name
        assert packing.pack(folder).content_hash == v.content_hash
    finally:
        with store.engine.begin() as c:
            c.execute(bot_versions.delete().where(bot_versions.c.name == name))
            c.execute(bot_archives.delete().where(
                bot_archives.c.content_hash == packing.pack(bot).content_hash))
