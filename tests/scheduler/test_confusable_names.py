"""Names that could be taken for one already there are refused: a bot's beside the registry's
bots (a capital I read as the l it looks like, before any case folding), and an author's
beside the authors, at self-registration (``POST /api/v1/register``, which does not say whose
name it resembles) and at ``arena authors add`` (which does). Plain different names pass.

Real SQLite stores, the real service app served by uvicorn, the real ``arena`` command.
"""

from __future__ import annotations

import json

import httpx
import pytest
from browser_helpers import serving
from league_helpers import arena

from scheduler.registry import submissions
from scheduler.registry.archives import RegistryError
from scheduler.registry.owners import add_author
from scheduler.store import open_store
from web.app import create_app
from scheduler.service.config import ServiceConfig

#: lookalikes of ``molly``: a capital I for an l (twice), capitals, a one for an l
MOLLY_LIKE = ("moIly", "molIy", "MOLLY", "mo1ly")
#: lookalikes of ``alice``: a capital, a capital I for the l
ALICE_LIKE = ("Alice", "aIice")


def _bot(folder, name: str):
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(f"name = {json.dumps(name)}\nversion = \"1.0.0\"\n"
                                     "command = [\"python3\", \"bot.py\"]\n"
                                     "protocol = \"stdio\"\n", encoding="utf-8")
    (folder / "bot.py").write_text(f"print({name!r})\n", encoding="utf-8")
    return folder


def test_a_bot_name_like_an_existing_one_is_refused(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'arena.db'}")
    submissions.submit(store, _bot(tmp_path / "molly", "molly"), author="ann")
    for name in MOLLY_LIKE:
        with pytest.raises(RegistryError) as e:
            submissions.submit(store, _bot(tmp_path / name.encode().hex(), name), author="bo")
        assert "resembles the bot 'molly' (held by author 'ann')" in str(e.value), name
    for name in ("polly", "mollie", "mily"):  # plain different names
        got = submissions.submit(store, _bot(tmp_path / name, name), author="bo")
        assert got.version.name == name
    assert {o.name for o in store.registry.names()} == {"molly", "polly", "mollie", "mily"}


def test_self_registration_refuses_a_name_like_an_authors_without_naming_it(tmp_path):
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    open_store(db)
    app = create_app(db, ServiceConfig(self_registration=True))
    with serving(app) as base, httpx.Client(base_url=base, timeout=30) as c:
        assert c.post("/api/v1/register", json={"name": "alice"}).status_code == 202
        for name in ALICE_LIKE:
            got = c.post("/api/v1/register", json={"name": name})
            assert got.status_code == 400, (name, got.text)
            detail = got.json()["detail"]
            assert "resembles an existing author's name" in detail, detail
            assert "'alice'" not in detail  # a pending author: not the public's to know
        assert c.post("/api/v1/register", json={"name": "alicia"}).status_code == 202
    names = {a.name for a in open_store(db).authors.all()}
    assert names == {"alice", "alicia"}


def test_arena_authors_add_refuses_a_name_like_an_authors_and_names_it(tmp_path):
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    add_author(open_store(db), "alice")
    for name in ALICE_LIKE:
        out = tmp_path / f"{name}.token"
        got = arena("authors", "add", name, "--db", db, "--token-file", str(out))
        assert got.returncode == 2, got
        assert f"author {name!r} resembles the author 'alice'" in got.stderr, got.stderr
        assert not out.exists()  # no author, no token file
    assert arena("authors", "add", "bob", "--db", db).returncode == 0
    assert {a.name for a in open_store(db).authors.all()} == {"alice", "bob"}
