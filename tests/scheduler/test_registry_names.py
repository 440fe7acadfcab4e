"""Bot names in the registry: a name belongs to the author of its first version, a lookalike of
an existing name is refused (naming the name it resembles), labels are plain, and an author is
proven by their token (``ARENA_AUTHOR_TOKEN`` or ``--token-file``, never an argument).

Real stores: SQLite files in the test's folder; real bot folders written by the test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from registry_helpers import (  # noqa: F401  (fixtures)
    fresh_store, migrated, sqlite_store, versions_stored)
from cli.main import main as arena_main
from scheduler.registry import owners, submissions
from scheduler.registry.archives import RegistryError
from scheduler.store import Store
from scheduler.store.rows import BotOwner


def make_bot(folder: Path, name: str = "greedy", version: str = "1.0.0") -> Path:
    """A small stdio bot whose manifest carries ``name`` and ``version`` as given (escaped as
    TOML strings, so any character can be written)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.toml").write_text(f"name = {json.dumps(name)}\nversion = "
                                     f"{json.dumps(version)}\ncommand = [\"python3\", "
                                     "\"bot.py\"]\nprotocol = \"stdio\"\n", encoding="utf-8")
    (folder / "bot.py").write_text(f"print({name!r})\n", encoding="utf-8")
    return folder




def test_a_name_belongs_to_the_author_of_its_first_version(tmp_path):
    store = sqlite_store(tmp_path)
    alice = owners.add_author(store, "alice")
    owners.add_author(store, "mallory")
    mine = submissions.submit(store, make_bot(tmp_path / "a", "greedy"), author="alice",
                           token=alice).version
    assert (mine.ref, mine.author) == ("greedy@1.0.0", "alice")

    stranger = make_bot(tmp_path / "m", "greedy", "1.0.1")
    with pytest.raises(RegistryError) as e:
        submissions.submit(store, stranger, author="mallory")
    assert "the bot 'greedy' belongs to author 'alice'" in str(e.value)
    assert versions_stored(store) == 1 and submissions.resolve(store, "greedy").id == mine.id

    newer = submissions.submit(store, make_bot(tmp_path / "a2", "greedy", "1.1"), author="alice",
                            token=alice).version
    assert submissions.resolve(store, "greedy").id == newer.id

    # a name first submitted without an author is the organiser's
    submissions.submit(store, make_bot(tmp_path / "o", "random"))
    with pytest.raises(RegistryError, match="the bot 'random' belongs to the organiser"):
        submissions.submit(store, make_bot(tmp_path / "a3", "random", "2"), author="alice",
                        token=alice)
    assert submissions.submit(store, make_bot(tmp_path / "o2", "random", "2")).version.author \
        is None
    assert set(store.registry.names()) == {BotOwner("greedy", "alice"), BotOwner("random", None)}



LOOKALIKES = {
    "cyrillic e": "gre\u0435dy",
    "fullwidth": "\uff47\uff52\uff45\uff45\uff44\uff59",
    "capital": "Greedy",
    "capitals": "GREEDY",
    "zero-width space": "gree\u200bdy",
    "right-to-left override": "\u202eydeerg",
    "concealed on a terminal": "\x1b[8mX\x1b[28mgreedy",
    "cyrillic komi de": "gree\u0501y",
}


@pytest.mark.parametrize("kind", list(LOOKALIKES))
def test_a_lookalike_of_an_existing_name_is_refused(kind, tmp_path):
    store = sqlite_store(tmp_path)
    submissions.submit(store, make_bot(tmp_path / "greedy", "greedy"))
    name = LOOKALIKES[kind]
    with pytest.raises(RegistryError) as e:
        submissions.submit(store, make_bot(tmp_path / "fake", name))
    msg = str(e.value)
    assert "resembles the bot 'greedy' (held by the organiser)" in msg
    assert not any(c in msg for c in "\x1b\u202e\u200b")  # the name is shown escaped
    assert versions_stored(store) == 1


def test_a_lookalike_is_refused_for_its_own_author_too_and_given_names_are_checked(tmp_path):
    store = sqlite_store(tmp_path)
    submissions.submit(store, make_bot(tmp_path / "b", "search-bot"), author="ann")
    with pytest.raises(RegistryError, match="'Search-B0t' resembles the bot 'search-bot'"):
        submissions.submit(store, make_bot(tmp_path / "c", "other"), name="Search-B0t",
                        author="ann")
    got = submissions.submit(store, make_bot(tmp_path / "d", "searcher"), author="ann")
    assert got.version.ref == "searcher@1.0.0"


@pytest.mark.parametrize("field,value", [
    ("name", "bell\x07"), ("name", "new\nline"), ("name", "zero\u200bwidth"),
    ("name", "bidi\u202etxt.exe"), ("name", "caf\u00e9"), ("name", "-dash"), ("name", "a" * 65),
    ("version", "1.0\n"), ("version", "\u202e1.0"), ("version", "1 0"),
    ("author", "ann\x1b[31m"), ("author", "zoe\u2066")])
def test_labels_are_plain(field, value, tmp_path):
    store = sqlite_store(tmp_path)
    bot = make_bot(tmp_path / "bot", "plain")
    with pytest.raises(RegistryError) as e:
        submissions.submit(store, bot, **{field: value})
    msg = str(e.value)
    assert f"{field} {ascii(value)[:80]}" in msg and "ASCII letters, digits" in msg
    assert not any(ord(c) < 32 or 0x7f <= ord(c) for c in msg)
    assert versions_stored(store) == 0


def test_a_token_proves_the_author(tmp_path):
    store = sqlite_store(tmp_path)
    token = owners.add_author(store, "alice")
    bot = make_bot(tmp_path / "bot", "alices-bot")
    with pytest.raises(RegistryError, match="author 'alice': the token is not theirs"):
        submissions.submit(store, bot, author="alice", token=token + "x")
    with pytest.raises(RegistryError, match="author 'bob': the token is not theirs"):
        submissions.submit(store, bot, author="bob", token=token)  # an author nobody added
    with pytest.raises(RegistryError, match="a token was given without its author"):
        submissions.submit(store, bot, token=token)
    assert versions_stored(store) == 0
    assert submissions.submit(store, bot, author="alice", token=token).version.author == "alice"


def test_the_command_reads_the_token_from_the_environment_or_a_file(tmp_path, capsys,
                                                                     monkeypatch):
    db = str(tmp_path / "arena.db")
    assert arena_main(["authors", "add", "alice", "--db", db]) == 0
    token = capsys.readouterr().out.strip()
    assert owners.check_token(Store(f"sqlite:///{db}"), "alice", token)

    bot = make_bot(tmp_path / "bot", "alices-bot")
    monkeypatch.setenv("ARENA_AUTHOR_TOKEN", "not-" + token)
    assert arena_main(["bots", "submit", str(bot), "--db", db, "--author", "alice"]) == 2
    assert "the token is not theirs" in capsys.readouterr().err
    monkeypatch.setenv("ARENA_AUTHOR_TOKEN", token)
    assert arena_main(["bots", "submit", str(bot), "--db", db, "--author", "alice"]) == 0
    assert capsys.readouterr().out.startswith("alices-bot@1.0.0 ")

    monkeypatch.delenv("ARENA_AUTHOR_TOKEN")
    (tmp_path / "token").write_text("wrong\n")
    newer = make_bot(tmp_path / "newer", "alices-bot", "1.1")
    assert arena_main(["bots", "submit", str(newer), "--db", db, "--author", "alice",
                       "--token-file", str(tmp_path / "token")]) == 2
    assert "the token is not theirs" in capsys.readouterr().err
    (tmp_path / "token").write_text(token + "\n")
    assert arena_main(["bots", "submit", str(newer), "--db", db, "--author", "alice",
                       "--token-file", str(tmp_path / "token")]) == 0
    assert submissions.resolve(Store(f"sqlite:///{db}"), "alices-bot").version == "1.1"

    with pytest.raises(SystemExit):  # never on the command line, where `ps` shows it
        arena_main(["bots", "submit", str(newer), "--db", db, "--author", "alice",
                    "--token", token])
    capsys.readouterr()
