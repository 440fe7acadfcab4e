"""Bot text is shown, not obeyed: the ``arena`` commands print what a bot or its author wrote
with every control and invisible character escaped (``--raw`` opts out), and the dashboard
sends ``nosniff`` and a Content-Security-Policy its own pages keep to.

Real components: a SQLite store, ``arena bots submit`` and ``arena season run`` in their own
processes, a referee process per match and a bot of the test's own, named with escapes, that
writes terminal escapes to its stderr; for `arena sprt`, `study power`, `lab`, `bots wrap` and
`botzone log`, copies of the stdio sample bot named with escapes, a lab policy that raises
them and files named with them; the dashboard is the real app under FastAPI's TestClient (the
browser's side is in test_web_browser.py).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from league_helpers import BOTS, arena, env, season_file, unique

from cli.text import json_text, visible
from scheduler.store import Store
from scheduler.store.rows import NewVersion
from web.app import create_app

#: what the hostile bot writes to its stderr: a window title, concealed text, a clipboard
#: write (OSC 52), a C1 control sequence introducer, a right-to-left override, then text
#: that must come through as it is
HOSTILE_LOG = ("title \x1b]0;pwned\x07 hidden \x1b[8mconcealed\x1b[0m clipboard "
               "\x1b]52;c;cHduZWQ=\x07 csi \x9b31m rtl \u202etxt.exe\u202c back\rover "
               "é 升级\n")
#: the hostile bot's name (in its season file, and in the registry as an older store holds
#: it) and its author's: ESC, BEL, an override, concealed text and a zero-width space
HOSTILE_NAME = "evil\x1b]0;pwned\x07\u202e"
HOSTILE_AUTHOR = "mal\x1b[8mlory\u200b"

HOSTILE_BOT = '''"""hostile: the random sample bot, whose stderr carries terminal escapes."""

import os
import random
import sys

from arena_bot import Bot, run


class HostileBot(Bot):
    def __init__(self, seed):
        super().__init__()
        self.rng = random.Random(seed)

    def choose(self, request):
        return self.rng.choice(request.hint.actions)


if __name__ == "__main__":
    sys.stderr.buffer.write(LOG.encode("utf-8"))
    sys.stderr.flush()
    sys.exit(run(HostileBot(os.environ.get("ARENA_MATCH_ID", "") + os.environ["ARENA_SEAT"])))
'''

HIDDEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A store holding one plain match of the hostile bot (named HOSTILE_NAME in its season
    file) against greedy, seats 0 and 2 hostile, and the hostile bot's version in the registry
    under HOSTILE_NAME, with an author and a description that carry escapes too (as a store
    written before the registry refused such names holds them): (db url, folder, season,
    match id)."""
    folder = tmp_path_factory.mktemp("escaping")
    bot = folder / "hostile"
    bot.mkdir()
    (bot / "bot.py").write_text(HOSTILE_BOT.replace("LOG", repr(HOSTILE_LOG)), encoding="utf-8")
    (bot / "bot.toml").write_text('name = "hostile"\nversion = "1"\ncommand = ["python3", '
                                  '"bot.py"]\nprotocol = "grpc"\n', encoding="utf-8")
    db = f"sqlite:///{folder}/s.db"
    name = unique("escaping")
    toml_name = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in HOSTILE_NAME)
    path = season_file(folder, name, [(str(bot), toml_name), BOTS / "greedy"], deal_sets=1,
                       deals_per_set=1, duplicate=False)
    arena("season", "run", str(path), "--db", db, "--no-check", "--no-progress", "--workers",
          "1", cwd=folder, check=True)
    store = Store(db)
    matches = store.pages.matches(name)
    assert {m.status for m in matches} == {"done"}, matches
    mid = next(m.id for m in matches if json.loads(m.seats_json)[0] == HOSTILE_NAME)

    arena("bots", "submit", str(bot), "--db", db, cwd=folder, check=True)
    plain = next(r for r in store.registry.versions() if r.name == "hostile")
    fields = dict(plain.manifest_fields, name=HOSTILE_NAME, description="says " + HOSTILE_LOG)
    row = NewVersion(HOSTILE_NAME, plain.version, plain.content_hash, HOSTILE_AUTHOR,
                     plain.protocol, plain.language, plain.size, plain.files, fields,
                     plain.submitted_at)
    store.registry.add(row, store.registry.archive(plain.content_hash))
    return db, folder, name, mid


def _out(*args: str, cwd: Path) -> str:
    """What ``arena ARGS`` printed, decoded as written (no newline translation: a raw CR
    stays a CR)."""
    p = subprocess.run([sys.executable, "-m", "cli", *args], cwd=cwd, env=env(),
                       capture_output=True, timeout=120)
    assert p.returncode == 0, (args, p.returncode, p.stderr.decode(errors="replace"))
    return p.stdout.decode("utf-8")


def _no_raw_escapes(text: str) -> None:
    got = HIDDEN.findall(text)
    assert not got, f"raw control or invisible characters printed: {got!r}\n{text!r}"


# -- the escaping function ------------------------------------------------------------------
def test_every_control_and_invisible_character_is_shown_as_an_escape():
    hidden = [chr(c) for c in range(0x110000)
              if unicodedata.category(chr(c)) in ("Cc", "Cf", "Cs", "Zl", "Zp")]
    cf = [c for c in hidden if unicodedata.category(c) == "Cf"]
    assert "\u202e" in cf and "\u200b" in cf and "\u2066" in cf and "\U000e0001" in cf
    for c in hidden:
        for one_line in (False, True):
            if not one_line and c in "\n\t":
                assert visible(c) == c  # kept in a log's text
                continue
            shown = visible(c, one_line=one_line)
            assert shown.isascii() and shown.isprintable() and shown.startswith("\\"), \
                (hex(ord(c)), shown)
            assert ast.literal_eval(f'"{shown}"') == c, (hex(ord(c)), shown)  # reads back
        assert json.loads(json_text([c])) == [c]
        assert c in "\n\t" or c not in json_text([c])
    for c in ("\x00", "\x1b", "\x07", "\x08", "\x7f", "\x80", "\x9b", "\x9f"):  # C0, DEL, C1
        assert c in hidden and visible(c) == visible(c, one_line=True) == f"\\x{ord(c):02x}"
    assert visible("\r") == "\\r" and visible("\n", one_line=True) == "\\n"
    assert visible("\u202e") == "\\u202e" and visible("\U000e0001") == "\\U000e0001"
    assert visible("a\nb\tc", one_line=True) == "a\\nb\\tc"


def test_ordinary_text_is_kept_as_it_is():
    for text in ("greedy", "é", "升级 拖拉机", "Ωμέγα", "ä-ö_ü 1.0", "a b", "🂡 ♠♥", "\\x1b"):
        assert visible(text) == visible(text, one_line=True) == text
        assert json.loads(json_text(text)) == text and text in json_text(text)
    assert visible("line one\n\tline two\n") == "line one\n\tline two\n"


# -- the command line -----------------------------------------------------------------------
def test_logs_show_a_bots_escapes_and_raw_prints_them(played):
    db, folder, _, mid = played
    out = _out("logs", mid, "--seat", "0", "--db", db, cwd=folder)
    _no_raw_escapes(out)
    head, _, log = out.partition("\n")
    assert head.startswith(f"match {mid}, seat 0 (team 0): bot evil\\x1b]0;pwned\\x07\\u202e;")
    for shown in ("title \\x1b]0;pwned\\x07", "hidden \\x1b[8mconcealed\\x1b[0m",
                  "clipboard \\x1b]52;c;cHduZWQ=\\x07", "csi \\x9b31m", "rtl \\u202etxt.exe",
                  "back\\rover", "é 升级\n"):
        assert shown in log, (shown, log)

    raw = _out("logs", mid, "--seat", "0", "--db", db, "--raw", cwd=folder)
    assert HOSTILE_LOG in raw   # the bytes, as the bot wrote them
    assert raw.partition("\n")[0] == head  # the header is the arena's: escaped
    other = _out("logs", mid, "--seat", "1", "--db", db, cwd=folder)
    assert other.startswith(f"match {mid}, seat 1 (team 1): bot greedy;")


def test_bot_names_and_fields_are_escaped_in_lists_and_summaries(played):
    db, folder, season, mid = played
    name = "evil\\x1b]0;pwned\\x07\\u202e"
    listed = _out("bots", "list", "--db", db, cwd=folder)
    _no_raw_escapes(listed)
    line = re.search(rf"^{re.escape(name)} +1 +[0-9a-f]{{12}} grpc .*$", listed, re.M)
    assert line and line[0].endswith("  mal\\x1b[8mlory\\u200b"), listed
    rows = json.loads(_out("bots", "list", "--db", db, "--json", cwd=folder))
    assert HOSTILE_NAME in [r["name"] for r in rows]  # the same data for a JSON reader

    show = _out("bots", "show", f"{HOSTILE_NAME}@1", "--db", db, cwd=folder)
    _no_raw_escapes(show)
    assert f"name:         {name}\n" in show
    assert "author:       mal\\x1b[8mlory\\u200b\n" in show
    manifest = show.split("manifest:", 1)[1].split("\n", 1)[0]
    assert json.loads(manifest)["description"] == "says " + HOSTILE_LOG
    raw = _out("bots", "show", f"{HOSTILE_NAME}@1", "--db", db, "--raw", cwd=folder)
    assert f"name:         {HOSTILE_NAME}\n" in raw and f"author:       {HOSTILE_AUTHOR}\n" in raw
    assert json.loads(raw.split("manifest:", 1)[1].split("\n", 1)[0])["name"] == HOSTILE_NAME

    for args in (("standings", season), ("standings", season, "--csv"),
                 ("standings", season, "--json"), ("matches", season),
                 ("matches", season, "--faults"), ("seasons",), ("replay", mid, "--verify")):
        out = _out(*args, "--db", db, cwd=folder)
        _no_raw_escapes(out)
        if args[0] in ("standings", "matches") and args[-1] != "--faults":
            assert "evil\\x1b" in out or "evil\\u001b" in out, (args, out)
    standings = json.loads(_out("standings", season, "--db", db, "--json", cwd=folder))
    assert HOSTILE_NAME in [b["name"] for b in standings["bots"]]



# -- sprt, study, lab and botzone: names, fault reasons, error messages, file names ----------
#: a name or a file name that carries ESC, BEL and a right-to-left override, and as the
#: commands must print it
HOSTILE_FILE = "evil\x1b]0;pwned\x07\u202e"
HOSTILE_SHOWN = "evil\\x1b]0;pwned\\x07\\u202e"
#: what a hostile lab policy raises: a clipboard write (OSC 52), a C1 CSI and an override
HOSTILE_RAISE = "boom \x1b]52;c;cHduZWQ=\x07 \x9b31m \u202etxt.exe"
RAISE_SHOWN = "boom \\x1b]52;c;cHduZWQ=\\x07 \\x9b31m \\u202etxt.exe"


def _run(*args: str, cwd: Path) -> tuple[int, str, str]:
    """``arena ARGS`` in its own process: exit code, stdout and stderr decoded as written."""
    p = subprocess.run([sys.executable, "-m", "cli", *args], cwd=cwd, env=env(),
                       capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8")


def _stdio_bot(folder: Path, name: str) -> Path:
    """A bot folder of the stdio sample bot (fast to start), named ``name`` in its manifest
    (written with TOML escapes: the manifest holds only printable text)."""
    folder.mkdir()
    (folder / "stdio_bot.py").write_bytes((BOTS.parent / "stdio" / "stdio_bot.py").read_bytes())
    toml_name = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in name)
    (folder / "bot.toml").write_text(f'name = "{toml_name}"\nversion = "1"\ncommand = '
                                     '["python3", "stdio_bot.py"]\nprotocol = "stdio"\n',
                                     encoding="utf-8")
    return folder


def _bad_manifest(tmp_path: Path) -> Path:
    """A bot folder named with escapes whose manifest is refused: the error names its path."""
    bad = tmp_path / HOSTILE_FILE
    bad.mkdir()
    (bad / "bot.toml").write_text('name = "bad"\nversion = "1"\ncommand = ["x"]\n'
                                  'protocol = "bogus"\n', encoding="utf-8")
    return bad


def test_sprt_shows_a_manifests_name_and_a_refused_path_escaped(tmp_path):
    evil = _stdio_bot(tmp_path / "a", HOSTILE_NAME)
    plain = _stdio_bot(tmp_path / "b", "plain")
    # the same program on both sides: pair results are draws, and these bounds decide at once
    rc, out, err = _run("sprt", str(evil), str(plain), "--variant", "single-deck",
                        "--score", "wdl", "--elo0", "-1000", "--elo1", "0", "--alpha", "0.45",
                        "--beta", "0.45", "--deals-per-set", "1", "--max-pairs", "1",
                        "--seed", "escaping", "--workdir", str(tmp_path / "w"),
                        "--no-progress", cwd=tmp_path)
    assert rc == 0, err
    _no_raw_escapes(out + err)
    assert err.startswith(f"sprt {HOSTILE_SHOWN} vs plain: single-deck,"), err
    assert out.startswith(f"{HOSTILE_SHOWN} is stronger by at least 0.0 Elo (H1 accepted)"), out
    # the seats keep the name as it is: only what is printed is escaped
    record = json.loads((tmp_path / "w" / "sprt-0000-0" / "record.json").read_text())
    assert record["seats"] == [HOSTILE_NAME, "plain", HOSTILE_NAME, "plain"]

    rc, out, err = _run("sprt", str(_bad_manifest(tmp_path)), str(plain), cwd=tmp_path)
    assert rc == 2 and not out, (rc, out)
    _no_raw_escapes(err)
    assert f"arena sprt: {tmp_path}/{HOSTILE_SHOWN}/bot.toml: field 'protocol'" in err, err


def test_study_power_shows_a_manifests_name_and_a_refused_path_escaped(tmp_path):
    rc, out, err = _run("study", "power", str(_bad_manifest(tmp_path)), "random", cwd=tmp_path)
    assert rc == 2 and not out, (rc, out)
    _no_raw_escapes(err)
    assert f"arena study power: {tmp_path}/{HOSTILE_SHOWN}/bot.toml: field 'protocol'" in err

    evil = _stdio_bot(tmp_path / "a", HOSTILE_NAME)
    plain = _stdio_bot(tmp_path / "b", "plain")
    args = ("study", "power", str(evil), str(plain), "--variant", "single-deck", "--deals",
            "2", "--deals-per-set", "1", "--samples", "10", "--seed", "escaping", "--workers",
            "2", "--workdir", str(tmp_path / "w"), "--no-progress")
    rc, out, err = _run(*args, cwd=tmp_path)
    assert rc == 0, err
    _no_raw_escapes(out + err)
    assert out.startswith(f"{HOSTILE_SHOWN} vs plain, single-deck: 2 deals"), out


EVIL_POLICY = f"""
class Evil:
    def act(self, view, legal):
        raise RuntimeError({HOSTILE_RAISE!r})
"""


def test_lab_and_wrap_show_what_a_policy_raised_escaped(tmp_path):
    (tmp_path / "evilpolicy.py").write_text(EVIL_POLICY, encoding="utf-8")
    rc, out, err = _run("lab", "evilpolicy.py:Evil", "random", "--variant", "single-deck",
                        "--deals", "1", "--deals-per-set", "1", "--samples", "10",
                        cwd=tmp_path)
    assert rc == 0, err
    _no_raw_escapes(out + err)
    faults = [line for line in out.splitlines() if line.startswith("  fault: ")]
    assert faults, out
    for line in faults:  # each strike's reason quotes what the policy raised
        assert f"garbage: RuntimeError: {RAISE_SHOWN} (default " in line, line

    # a policy whose import fails: the error quotes its exception
    (tmp_path / "brokenpolicy.py").write_text(f"raise ImportError({HOSTILE_RAISE!r})\n",
                                              encoding="utf-8")
    for args, head in ((("lab", "brokenpolicy.py:X", "random"), "arena lab: "),
                       (("bots", "wrap", "brokenpolicy.py:X", "--out", "o"),
                        "arena bots wrap: ")):
        rc, out, err = _run(*args, cwd=tmp_path)
        assert rc == 2 and not out, (args, rc, out)
        _no_raw_escapes(err)
        assert err.startswith(head) and f"failed: ImportError: {RAISE_SHOWN}\n" in err, err


def test_botzone_log_shows_a_records_file_name_escaped(tmp_path):
    from referee.rules.record import FORMAT
    missing = tmp_path / f"{HOSTILE_FILE}.json"
    rc, out, err = _run("botzone", "log", str(missing), "--seat", "0", cwd=tmp_path)
    assert rc == 2 and not out, (rc, out)
    _no_raw_escapes(err)
    assert err == f"{tmp_path}/{HOSTILE_SHOWN}.json: cannot be read: No such file or directory\n"

    missing.write_text('{"format": "nonsense"}', encoding="utf-8")
    rc, out, err = _run("botzone", "log", str(missing), "--seat", "0", cwd=tmp_path)
    assert rc == 2 and not out, (rc, out)
    _no_raw_escapes(err)
    assert err.startswith(f"{tmp_path}/{HOSTILE_SHOWN}.json: ") and "'format'" in err, err

    missing.write_text(json.dumps({"format": FORMAT, "variant": "single-deck", "seed": "x",
                                   "actions": []}), encoding="utf-8")
    rc, out, err = _run("botzone", "log", str(missing), "--seat", "0", "--out",
                        f"{HOSTILE_FILE}.jsonl", cwd=tmp_path)
    assert rc == 0, err
    _no_raw_escapes(out)
    assert out == f"0 Botzone game(s) of seat 0 written to {HOSTILE_SHOWN}.jsonl\n", out
    assert (tmp_path / f"{HOSTILE_FILE}.jsonl").read_text() == ""

# -- the dashboard's headers ----------------------------------------------------------------
def test_every_dashboard_response_says_nosniff_and_carries_the_policy(played):
    db, _, season, mid = played
    app = create_app(db)

    @app.get("/api/broken")
    def broken():  # an unexpected error: its 500 carries the headers too
        raise RuntimeError("a bug")
    client = TestClient(app, raise_server_exceptions=False)
    pages = ["/", f"/seasons/{season}", "/matches", f"/matches/{mid}",
             f"/matches/{mid}/replay", "/bots", "/seasons/nope", "/matches?limit=-1"]
    other = ["/api/seasons", f"/api/seasons/{season}", f"/api/seasons/{season}/progress",
             "/api/matches", f"/api/matches/{mid}", f"/api/matches/{mid}/replay", "/api/bots",
             "/api/matches/nope", "/api/matches?limit=-1", "/openapi.json",
             "/static/arena.css", "/static/replay.js", "/static/nope.js", "/api/broken"]
    nonces = set()
    for url in pages + other:
        r = client.get(url)
        assert r.headers.get("x-content-type-options") == "nosniff", url
        policy = r.headers.get("content-security-policy", "")
        rules = dict((d.split(" ", 1) + [""])[:2] for d in policy.split("; "))
        assert rules.get("default-src") == "'none'" and rules.get("script-src") == "'self'", \
            (url, policy)
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy, (url, policy)
        nonce = re.fullmatch(r"'self' 'nonce-([A-Za-z0-9_-]{16,})'", rules.get("style-src", ""))
        assert nonce, (url, policy)
        nonces.add(nonce[1])
        if url in pages:
            assert "text/html" in r.headers["content-type"], url
            html = r.text
            assert not re.search(r"<script(?![^>]*\ssrc=)", html), url  # no inline script
            assert not re.search(r"\sstyle=", html), url   # no style attribute
            assert not re.search(r"\son[a-z]+=", html), url  # no inline handler
            for tag in re.findall(r"<style[^>]*>", html):  # only the response's own nonce
                assert tag == f'<style nonce="{nonce[1]}">', (url, tag)
    assert len(nonces) == len(pages + other)  # a fresh nonce each response
    page = client.get(f"/seasons/{season}").text
    assert re.search(r"#ci-bar-1 \{ left: [0-9.]+%; width: [0-9.]+%; \}", page), page
