"""How the store keeps a played match (``scheduler/store/packing.py``): a record and the large
JSON columns read back exactly as written, for real records (the golden games as match records,
and the previous release's stored matches); records and columns stored before the packing still
read; the packed record is well under its plain zlib size; the preset dictionary never changes;
and all of it through a store on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import sqlite3
import zlib
from dataclasses import replace

import pytest
import sqlalchemy as sa
from test_migrations import fresh_url, pg_schema  # noqa: F401  (fixtures: each database)

from conftest import ROOT
from referee.match.matchfile import DealResult, MatchFile, MatchResult
from referee.match.spec import TimeControl
from scheduler.season_config import SeasonConfig
from scheduler.store import Store, compress, decompress, results
from scheduler.store.rows import encoded
from scheduler.store.packing import RECORD_V1, TEXT_V1, pack_text, unpack_text
from scheduler.store.packing_dictionary import V1
from scheduler.store.rows import PlannedMatch

GOLDEN = sorted((ROOT / "tests" / "golden").glob("*.json"))
PREVIOUS = ROOT / "tests" / "fixtures" / "store-previous-release.db"
#: a packed record is at most this share of its JSON at zlib level 6 (what the store wrote
#: before); measured: 0.32-0.35 for the golden games as match records (three deals, no
#: decision times), 0.36-0.38 for the previous release's stored matches (two deals each, with
#: the decision time of each decision: thousandths of a millisecond pack the least)
SHARE_OF_ZLIB = 0.40


def _legacy(record: dict) -> bytes:
    """A record's bytes as the store wrote them before the packing."""
    return zlib.compress(json.dumps(record, ensure_ascii=False).encode("utf-8"), 6)


def _golden_game(path) -> MatchFile:
    return MatchFile.from_dict(json.load(open(path, encoding="utf-8"))["record"])


def _golden_match(path) -> dict:
    """A golden game as the match record a season stores (the game, its rules, the seats)."""
    return _golden_game(path).to_dict()


def toy_match(match_id: str, n: int = 0, seats=("a", "b", "a", "b"),
              variant: str = "two-deck-fry") -> MatchFile:
    """A played match's record as small as one can be (no game, a draw); ``n``, its elapsed
    seconds, tells two records of one match apart."""
    return MatchFile(match_id, variant, {}, {}, tuple(seats), TimeControl(), [],
                     result=MatchResult(match_id, variant, None, (0, 0, 0, 0), None, ()),
                     elapsed_s=float(n))


def summary_written(store: Store, match_id: str, summary: dict) -> None:
    """``summary`` stored as the written match's summary, whatever its record says (a made-up
    result for the standings)."""
    with store.engine.begin() as c:
        c.execute(sa.update(results).where(results.c.match_id == match_id)
                  .values(summary_json=encoded(summary)))


def _with_timings(record: dict) -> dict:
    """``record`` with a decision time for each decision, as the referee keeps them."""
    rng = random.Random(record["games"][0]["seed"])
    return dict(record, timings=[[seat, round(rng.lognormvariate(0, 0.6), 3)] for seat, _ in
                                 record["games"][0]["actions"] if seat is not None])


def _previous_records() -> list[dict]:
    con = sqlite3.connect(PREVIOUS)
    try:
        return [decompress(d) for (d,) in con.execute("SELECT data FROM records ORDER BY 1")]
    finally:
        con.close()


def _reads_back(record) -> None:
    """``record`` stored and read back is what its JSON reads back as, key for key."""
    assert json.dumps(decompress(compress(record))) == json.dumps(record)


# -- records --------------------------------------------------------------------------------
@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_a_golden_game_as_a_match_record_is_stored_packed_and_reads_back_as_written(path):
    record = _golden_match(path)
    stored = compress(record)
    assert stored[0] == RECORD_V1
    assert decompress(stored) == record
    _reads_back(record)
    assert len(stored) <= SHARE_OF_ZLIB * len(_legacy(record)), (len(stored), len(_legacy(record)))


def test_the_previous_releases_stored_records_read_and_pack_to_under_the_share():
    records = _previous_records()
    assert len(records) == 3 and all(r["timings"] and len(r["games"]) == 2 for r in records)
    for record in records:
        stored = compress(record)
        assert stored[0] == RECORD_V1 and decompress(stored) == record
        assert len(stored) <= SHARE_OF_ZLIB * len(_legacy(record))


TRICKY = ["", " ", "a b", "a|b", "|", "7C", "~1", "\n", "é", "-", 0, -1, 7, 10, 2 ** 70, True,
          False, None, 1.5, -0.0, 0.0, float("inf"), 1e-7, [], [""], ["a b"], ["7C", "8D"],
          ["a|b"], [1, 2], [[]], ("x", "y"), {"k": 1}, {}]


def test_any_value_anywhere_reads_back_as_its_json_does():
    """Random values put where the packing makes columns (events' values and keys, actions,
    decision times), and objects where columns go: each record reads back as its JSON."""
    base = _with_timings(_golden_match(GOLDEN[-1]))
    rng = random.Random(12)
    for _ in range(300):
        record = json.loads(json.dumps(base))
        game = record["games"][0]
        for e in rng.sample(game["events"], 3):
            e[rng.choice(list(e))] = rng.choice(TRICKY)
        if rng.random() < 0.2:
            rng.choice(game["events"])[rng.choice([5, "new key", "event"])] = rng.choice(TRICKY)
        i = rng.randrange(len(game["actions"]))
        game["actions"][i] = rng.choice([
            [rng.choice([None, 0, 3, 9, 10, -1, True, "1", 1.0]), game["actions"][i][1]],
            [0, rng.choice(["pass", "play 7C|8D", " play 7C", "", "play ", "shuffle - 7C"])],
            [1, "play 7C", "extra"], (2, "play 7C"), {"seat": 0}])
        record["timings"][rng.randrange(len(record["timings"]))] = rng.choice([
            [0, 1], [1, -0.0], [2, 0.0], [3, 1e-4], [0, 12345.6789], [True, 1.0], [None, 2.5],
            [0, 1.5, 2], (1, 0.25), [0, float("inf")]])
        if rng.random() < 0.1:
            record[rng.choice(["timings", "games"])] = rng.choice([{}, [], None, "x"])
        if rng.random() < 0.1:
            game[rng.choice(["events", "actions"])] = rng.choice([{}, [], None, [{}], [1]])
        _reads_back(record)


def test_a_record_that_columns_cannot_tell_apart_is_kept_as_before():
    record = _golden_match(GOLDEN[0])
    record["timings"] = {"seats": "0", "ms": "1"}  # what packed timings look like
    assert compress(record) == _legacy(record)
    assert decompress(compress(record)) == record


def test_a_record_stored_before_the_packing_still_reads(tmp_path):
    """The previous release's store (a fixture, records as zlib JSON and columns as plain
    text) opened by this code: its records and results read as they were written."""
    db = tmp_path / "previous.db"
    db.write_bytes(PREVIOUS.read_bytes())
    con = sqlite3.connect(db)
    stored = dict(con.execute("SELECT match_id, data FROM records"))
    texts = dict(con.execute("SELECT match_id, summary_json FROM results"))
    con.close()
    store = Store(f"sqlite:///{db}")
    assert stored and all(data[:1] == b"\x78" for data in stored.values())  # zlib's header
    for match_id, data in stored.items():
        assert store.results.record(match_id).to_dict() == json.loads(zlib.decompress(data))
    rows = {r.id: r for r in store.pages.matches("previous-release") if r.played}
    assert {i: r.summary_json for i, r in rows.items()} == texts
    assert all(r.summary.deals and r.spec["variant"] == "two-deck-fry" for r in rows.values())


def test_the_dictionary_is_the_one_stored_rows_were_packed_with():
    """Every packed row needs these very bytes: a new dictionary is a new version."""
    assert hashlib.sha256(V1).hexdigest() == \
        "117ea57686f9f10b8b97b70e34d933a4ebb1e45d1f117c499b9bd145484d74fa"


def test_a_record_and_a_column_packed_by_the_first_packing_still_read():
    """Rows packed by the first version (a fixture made once by it): a change to how records
    or texts are packed that would misread the rows already stored fails here."""
    stored = json.loads((ROOT / "tests" / "fixtures" / "packed-v1.json").read_text())
    record = dict(_golden_match(ROOT / "tests" / "golden" / "single-deck.json"),
                  timings=stored["timings"])
    assert decompress(base64.b64decode(stored["record"])) == record
    assert unpack_text(stored["stored_spec_json"]) == stored["spec_json"]


# -- JSON columns ---------------------------------------------------------------------------
def test_json_text_is_packed_when_shorter_and_any_text_reads_back():
    spec = json.dumps({"match_id": "s-00001", "variant": "two-deck-fry", "options": {},
                       "deals": [{"seed": hashlib.sha256(b"deal").hexdigest(),
                                  "levels": ["2", "2"], "dealer": 0}],
                       "seats": ["a", "b", "a", "b"]})
    packed = pack_text(spec)
    assert packed.startswith(TEXT_V1) and len(packed) <= 0.6 * len(spec)
    for text in (spec, "[1, 2]", "", "~", "~1", "~1AAAA", "{}", "é" * 300, None):
        assert unpack_text(pack_text(text)) == text
    assert pack_text("[1, 2]") == "[1, 2]"  # not shorter: kept as it is
    assert unpack_text('{"written": "before"}') == '{"written": "before"}'


# -- through a store, on both databases -----------------------------------------------------
def test_a_store_writes_a_match_packed_and_reads_it_back_as_written(fresh_url):
    game = _golden_game(GOLDEN[-1])
    timings = _with_timings(game.to_dict())["timings"]
    match = replace(game, match_id="packed-00000", extra={"timings": timings}, result=MatchResult(
        "packed-00000", game.variant, None, (0, 0, 0, 0), None,
        tuple(DealResult.of(g, e) for g, e in game.deals_ended())))
    record, summary, result = match.to_dict(), match.summary().to_dict(), match.result.to_dict()
    spec = {"match_id": "packed-00000", "variant": record["variant"], "options": {},
            "deals": [{"seed": record["games"][0]["seed"], "levels": ["2", "2"], "dealer": 0}],
            "seats": ["a", "b", "a", "b"]}
    store = Store(fresh_url)  # a SQLite file, or a PostgreSQL schema of its own
    store.seasons.create("packed", SeasonConfig("packed", record["variant"], "packed"), "h",
                         "packed.toml", [], [PlannedMatch("packed-00000", 0, "a|b", "a|b#0",
                                                          False, ("a", "b", "a", "b"), spec)])
    assert store.results.finish("packed-00000", "packed", match, 1.0, "me", tally=None)
    assert store.results.record("packed-00000") == match
    assert store.results.record("packed-00000").to_dict() == record
    row = store.pages.match_and_result("packed-00000")
    assert (row.spec, row.result, row.summary.to_dict()) == (spec, result, summary)
    with store.engine.connect() as c:
        data, spec_text, summary_text = c.execute(sa.text(
            "SELECT data, spec_json, summary_json FROM records JOIN matches ON id = match_id "
            "JOIN results USING (match_id)")).one()
    assert bytes(data)[0] == RECORD_V1 and len(data) <= SHARE_OF_ZLIB * len(_legacy(record))
    assert spec_text.startswith(TEXT_V1) and summary_text.startswith(TEXT_V1)
