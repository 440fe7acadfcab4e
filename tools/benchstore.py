"""``arena bench store``: the bytes a played match leaves in the store, per table and index, as
the store wrote them before its packing (the record as zlib JSON, the JSON columns as text) and
as it writes them now (``scheduler.store.packing``), on the same matches; and the time to write
and read a record each way.

The matches are a season played here by ``arena season run`` (round robin, duplicate, the
Python sample bots greedy, random and cheap, two deals a match as a ladder's, a fixed secret, so
every run plays the same cards), or those of an existing store (``--from``). Their rows are
copied into two new SQLite stores, each made by this code, once in each format; SQLite's
``dbstat`` gives each table's and index's pages there. The times: compressing and reading back
each record and JSON column in process, each way; and, with ``--other`` (a checkout of the code
before, such as a ``git worktree``), ``store.results.finish`` and ``store.results.record`` of
every match in a fresh store of each checkout, the two alternated over ``--rounds``.

``dictionary`` is how ``scheduler/store/packing_dictionary.py`` was made.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from tools.benchengine import machine

ROOT = Path(__file__).resolve().parent.parent
BOTS = ("greedy", "random", "cheap")
SEASON = "bench-store"
#: the tables a played match writes rows to
PER_MATCH = ("matches", "results", "records", "attempts", "pair_scores", "ladder_ratings")


# -- the matches -----------------------------------------------------------------------------
def _season_file(folder: Path, matches: int, deals_per_set: int) -> Path:
    pairings = len(BOTS) * (len(BOTS) - 1) // 2
    lines = [f'name = "{SEASON}"', 'variant = "two-deck-fry"', 'format = "round_robin"',
             "duplicate = true", f"deal_sets = {max(1, math.ceil(matches / pairings / 2))}",
             f"deals_per_set = {deals_per_set}", f'seed = "{SEASON}"',
             'secret = "bench-store-fixed-secret"']
    for bot in BOTS:
        lines += ["[[bots]]", f'manifest = "{ROOT / "sample_bots" / "python" / bot}"']
    path = folder / f"{SEASON}.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def play(folder: Path, matches: int, deals_per_set: int, unsandboxed: bool) -> str:
    """A store at ``folder`` with the season played (its URL)."""
    url = f"sqlite:///{folder / 'played.db'}"
    cmd = [sys.executable, "-m", "cli", "season", "run",
           str(_season_file(folder, matches, deals_per_set)), "--db", url, "--no-progress"]
    run = subprocess.run(cmd + (["--unsandboxed"] if unsandboxed else []), cwd=ROOT,
                         capture_output=True, text=True)
    if run.returncode:
        raise SystemExit(f"arena bench store: the season failed (exit {run.returncode}):\n"
                         f"{run.stderr[-3000:]}")
    return url


@dataclass
class Played:
    """Every row of a store (``url``), its JSON columns as text and its records as dicts,
    tables in the order their keys need."""
    url: str
    tables: list[tuple[str, list[dict]]]

    @property
    def played(self) -> list[str]:
        """The ids of the matches with a record."""
        return [r["match_id"] for r in self.rows("records")]

    def rows(self, table: str) -> list[dict]:
        return next((rows for name, rows in self.tables if name == table), [])

    def texts(self) -> dict[str, list[str]]:
        """Each match's packed JSON columns' text (its spec, result and summary)."""
        from scheduler.store import metadata
        from scheduler.store.schema import PackedJson
        out: dict[str, list[str]] = {}
        for name, rows in self.tables:
            packs = [c.name for c in metadata.tables[name].columns
                     if isinstance(c.type, PackedJson)]
            for row in rows if packs else ():
                out.setdefault(row["id" if name == "matches" else "match_id"], []).extend(
                    row[c] for c in packs)
        return out


def read_store(url: str) -> Played:
    from sqlalchemy import select

    from scheduler.store import decompress, metadata, open_store
    store = open_store(url, create=False)
    tables = []
    with store.engine.connect() as c:
        for table in metadata.sorted_tables:
            rows = [dict(r) for r in c.execute(select(table)).mappings()]
            if table.name == "records":
                rows = [dict(r, data=decompress(r["data"])) for r in rows]
            tables.append((table.name, rows))
    return Played(url, tables)


# -- the two formats -------------------------------------------------------------------------
def legacy_record(record: dict) -> bytes:
    """A record's bytes as the store wrote them before its packing."""
    return zlib.compress(json.dumps(record, ensure_ascii=False).encode("utf-8"), 6)


def write_copy(path: Path, played: Played, packed: bool) -> None:
    """A new store at ``path`` (made by this code) holding ``played``'s rows, written packed as
    the store writes them now, or as it wrote them before."""
    from scheduler.store import compress, metadata, open_store
    from scheduler.store.schema import PackedJson
    open_store(f"sqlite:///{path}")
    con = sqlite3.connect(path)
    try:
        for name, rows in played.tables:
            table = metadata.tables[name]
            packs = {c.name for c in table.columns if isinstance(c.type, PackedJson)}
            for row in rows:
                row = dict(row)
                if name == "records":
                    row["data"] = compress(row["data"]) if packed else legacy_record(row["data"])
                for column in packs if packed else ():
                    row[column] = PackedJson().process_bind_param(row[column], None)
                con.execute(f"INSERT INTO {name} ({', '.join(row)}) VALUES "
                            f"({', '.join('?' * len(row))})", list(row.values()))
        con.commit()
    finally:
        con.close()


def pages(path: Path) -> tuple[dict[str, tuple[str, int, int]], int]:
    """Each table's and index's (its table, bytes of its pages, bytes of its rows' payload),
    and the file's bytes."""
    con = sqlite3.connect(path)
    try:
        owner = dict(con.execute("SELECT name, tbl_name FROM sqlite_master"))
        got = {name: (owner.get(name, name), size, payload) for name, size, payload in
               con.execute("SELECT name, SUM(pgsize), SUM(payload) FROM dbstat GROUP BY name")}
        size = con.execute("PRAGMA page_count").fetchone()[0] * \
            con.execute("PRAGMA page_size").fetchone()[0]
    finally:
        con.close()
    return got, size


def column_bytes(path: Path) -> dict[str, float]:
    """The mean bytes stored of each column the packing changes, over the played matches."""
    con = sqlite3.connect(path)
    try:
        return {f"{t}.{c}": con.execute(f"SELECT AVG(LENGTH({c})) FROM {t}").fetchone()[0] or 0
                for t, c in (("records", "data"), ("matches", "spec_json"),
                             ("results", "result_json"), ("results", "summary_json"),
                             ("matches", "seats_json"))}
    finally:
        con.close()


# -- the times -------------------------------------------------------------------------------
def codec_times(played: Played) -> dict[str, tuple[float, float]]:
    """Median microseconds (before, after) to write and to read a record, and a match's JSON
    columns, in process."""
    from scheduler.store import compress, decompress
    from scheduler.store.packing import pack_text, unpack_text
    out: dict[str, tuple[list[float], list[float]]] = {
        k: ([], []) for k in ("record write", "record read", "columns write", "columns read")}

    def timed(key: str, side: int, f, *args):
        t = time.perf_counter()
        got = f(*args)
        out[key][side].append((time.perf_counter() - t) * 1e6)
        return got

    texts = played.texts()
    for r in played.rows("records"):
        old = timed("record write", 0, legacy_record, r["data"])
        new = timed("record write", 1, compress, r["data"])
        timed("record read", 0, lambda b: json.loads(zlib.decompress(b).decode("utf-8")), old)
        assert timed("record read", 1, decompress, new) == json.loads(json.dumps(r["data"]))
        columns = texts[r["match_id"]]
        timed("columns write", 0, lambda ts: list(ts), columns)
        packed = timed("columns write", 1, lambda ts: [pack_text(t) for t in ts], columns)
        timed("columns read", 0, lambda ts: list(ts), columns)
        timed("columns read", 1, lambda ts: [unpack_text(t) for t in ts], packed)
    return {k: (statistics.median(a), statistics.median(b)) for k, (a, b) in out.items()}


#: run in a checkout (its own ``scheduler.store``): ``finish`` then ``record`` of each match
_TIMER = r'''
import json, sqlite3, sys, time
from scheduler.store import open_store
given = json.load(open(sys.argv[1], encoding="utf-8"))
store = open_store("sqlite:///" + sys.argv[2])
con = sqlite3.connect(sys.argv[2])
for table, rows in given["rows"]:
    for row in rows:
        con.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES "
                    f"({', '.join('?' * len(row))})", list(row.values()))
con.commit()
con.close()
results = getattr(store, "results", store)  # (a store before it was composed by job: itself)
try:  # a store that takes the tally typed (``MatchTally``), else its columns
    from scheduler.stats.scores import MatchTally, PairScore  # noqa: F401
    def tally_of(cols):
        return MatchTally(**{k: v for k, v in cols.items() if not k.endswith("_json")},
                          match_points=cols["match_points_json"] and tuple(
                              json.loads(cols["match_points_json"])),
                          deal_scores=tuple(json.loads(cols["deal_scores_json"] or "[]")))
except ImportError:
    def tally_of(cols):
        return cols
import inspect
typed = "match" in inspect.signature(results.finish).parameters  # takes the MatchFile
if typed:
    from referee.match.matchfile import MatchFile
write, read = [], []
for m in given["played"]:
    tally = tally_of(m["tally"])
    args = ((MatchFile.from_dict(m["record"], m["id"]),) if typed else
            (m["result"], m["summary"], m["record"]))
    t = time.perf_counter()
    results.finish(m["id"], m["season"], *args, m["duration_s"], "bench-store", tally=tally)
    write.append(time.perf_counter() - t)
for m in given["played"]:
    t = time.perf_counter()
    got = results.record(m["id"])
    read.append(time.perf_counter() - t)
    assert (got.to_dict() if typed else got) == m["record"], m["id"]
print(json.dumps({"write": write, "read": read}))
'''


def _timer_input(played: Played, path: Path) -> None:
    """What ``_TIMER`` reads: the seasons' rows to write first (their matches as planned, JSON
    text as before), and each played match's ``finish`` arguments."""
    from scheduler.store import TALLY_COLUMNS, open_store
    store = open_store(played.url, create=False)
    records = {r["match_id"]: r["data"] for r in played.rows("records")}
    first = [(name, [dict(r, status="pending", finished_at=None) if name == "matches" else r
                     for r in played.rows(name)])
             for name in ("seasons", "season_secrets", "bots", "matches")]
    finishes = [{"id": m.id, "season": m.season, "result": m.result,
                 "summary": m.summary.to_dict(), "record": records[m.id],
                 "duration_s": m.duration_s, "tally": {k: getattr(m, k) for k in TALLY_COLUMNS}}
                for season in store.seasons.names() for m in store.pages.matches(season)
                if m.id in records]
    path.write_text(json.dumps({"rows": first, "played": finishes}), encoding="utf-8")


def store_times(trees: list[Path], played: Played, folder: Path, rounds: int
                ) -> dict[Path, tuple[float, float]]:
    """Median milliseconds of ``store.results.finish`` and ``store.results.record`` per match in
    each checkout, each in a fresh SQLite store, the checkouts alternated ``rounds`` times."""
    given = folder / "timer.json"
    _timer_input(played, given)
    times: dict[Path, tuple[list[float], list[float]]] = {t: ([], []) for t in trees}
    for r in range(rounds):
        for i, tree in enumerate(trees if r % 2 == 0 else trees[::-1]):
            db = folder / f"timed-{r}-{i}.db"
            run = subprocess.run([sys.executable, "-c", _TIMER, str(given), str(db)], cwd=tree,
                                 capture_output=True, text=True,
                                 env=dict(os.environ, PYTHONPATH=f"{tree}{os.pathsep}"
                                          f"{tree / 'protos'}"))
            if run.returncode:
                raise SystemExit(f"arena bench store: timing in {tree} failed:\n"
                                 f"{run.stderr[-3000:]}")
            got = json.loads(run.stdout.strip().splitlines()[-1])
            times[tree][0].extend(got["write"])
            times[tree][1].extend(got["read"])
    return {t: (statistics.median(w) * 1e3, statistics.median(r) * 1e3)
            for t, (w, r) in times.items()}


# -- the report ------------------------------------------------------------------------------
def bench_store(matches: int = 96, deals_per_set: int = 2, source: str | None = None,
                other: str | None = None, rounds: int = 3, unsandboxed: bool = False) -> int:
    command = "arena bench store " + (
        f"--from {source}" if source else f"--matches {matches} --deals-per-set {deals_per_set}"
        f"{' --unsandboxed' if unsandboxed else ''}") + \
        f"{f' --other {other}' if other else ''} --rounds {rounds}"
    print(f"command      {command}\nmachine      {machine()}, python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="arena-bench-store-") as tmp:
        folder = Path(tmp)
        t = time.monotonic()
        url = source or play(folder, matches, deals_per_set, unsandboxed)
        played = read_store(url)
        n = len(played.played)
        if not n:
            print(f"arena bench store: {url} has no played match", file=sys.stderr)
            return 2
        how = (f"from {source}" if source else
               f"a season played here in {time.monotonic() - t:.0f} s: two-deck-fry, "
               f"{deals_per_set} deals a match, {', '.join(BOTS)}, duplicate, a fixed secret")
        print(f"matches      {n} ({how})")
        stores = {}
        for side in ("empty", "before", "after"):
            path = folder / f"{side}.db"
            if side == "empty":
                from scheduler.store import open_store
                open_store(f"sqlite:///{path}")
            else:
                write_copy(path, played, packed=side == "after")
            stores[side] = pages(path), column_bytes(path) if side != "empty" else {}
        _print_pages(stores, n)
        _print_columns(stores)
        _print_times(codec_times(played), played, folder, other, rounds)
    return 0


def _print_pages(stores: dict, n: int) -> None:
    print("\nbytes per match, before -> after the packing: the pages each table and index grew "
          "by (SQLite, 4 KiB pages),\nand its rows' payload (the bytes of the rows themselves, "
          "whatever the pages)")
    print(f"{'':<34} {'pages':^15} {'':>12}   {'payload':^15}")
    print(f"{'table or index':<34} {'before':>7} {'after':>7} {'after/before':>12}   "
          f"{'before':>7} {'after':>7}")
    (before, file_before), (after, file_after) = stores["before"][0], stores["after"][0]
    empty, file_empty = stores["empty"][0]
    table = {name: t for name, (t, _, _) in before.items()}
    names = sorted(before, key=lambda k: (
        PER_MATCH.index(table[k]) if table[k] in PER_MATCH else len(PER_MATCH),
        table[k], table[k] != k, k))
    rest = [0.0, 0.0]
    for name in names:
        grown = [side[name][1] - empty.get(name, ("", 0, 0))[1] for side in (before, after)]
        payload = [side[name][2] - empty.get(name, ("", 0, 0))[2] for side in (before, after)]
        if table[name] not in PER_MATCH:
            rest = [r + g for r, g in zip(rest, grown)]
        elif any(grown) or any(payload):
            b, a = grown
            print(f"{name:<34} {b / n:>7.0f} {a / n:>7.0f} "
                  f"{f'{a / b:.2f}' if b else '':>12}   {payload[0] / n:>7.0f} "
                  f"{payload[1] / n:>7.0f}")
    print(f"{'every other table (seasons, bots...)':<34} {rest[0] / n:>7.0f} {rest[1] / n:>7.0f}")
    b, a = file_before - file_empty, file_after - file_empty
    print(f"{'the store file, less an empty one':<34} {b / n:>7.0f} {a / n:>7.0f} "
          f"{a / b:>12.2f}")


def _print_columns(stores: dict) -> None:
    print("\nmean bytes stored of the columns the packing changes")
    before, after = stores["before"][1], stores["after"][1]
    for name in before:
        b, a = before[name], after[name]
        print(f"{name:<36} {b:>8.0f} {a:>8.0f} {a / b if b else 0:>13.2f}")


def _print_times(codec: dict, played: Played, folder: Path, other: str | None,
                 rounds: int) -> None:
    print("\nin process, median us per match: before -> after")
    for key, (b, a) in codec.items():
        print(f"{key:<36} {b:>8.0f} {a:>8.0f}")
    trees = [ROOT] + ([Path(other).resolve()] if other else [])
    got = store_times(trees, played, folder, rounds)
    print(f"\nStore.finish and store.results.record, median ms per match ({rounds} rounds, SQLite)")
    for tree, (w, r) in got.items():
        label = "this checkout" if tree == ROOT else str(tree)
        print(f"{label:<36} finish {w:>6.2f}   record {r:>6.2f}")


# -- the dictionary ---------------------------------------------------------------------------
def _first(items: list, kind, n: int) -> list:
    """The first ``n`` items of each ``kind(item)``, in order."""
    seen: dict = {}
    out = []
    for item in items:
        k = kind(item)
        seen[k] = seen.get(k, 0) + 1
        if seen[k] <= n:
            out.append(item)
    return out


def skeleton(record: dict, per_shape: int = 2, timings: int = 4) -> dict:
    """A record cut to what records share: its first game with ``per_shape`` events of each
    shape and actions of each verb, and its first ``timings``."""
    r = json.loads(json.dumps(record))
    r["games"] = r.get("games", [])[:1]
    for g in r["games"]:
        g["events"] = _first(g.get("events", []), tuple, per_shape)
        g["actions"] = _first(g.get("actions", []), lambda a: a[1].split(" ")[0], per_shape)
    if isinstance(r.get("timings"), list):
        r["timings"] = r["timings"][:timings]
    return r


def dictionary(records: list[dict], texts: list[str]) -> bytes:
    """A preset dictionary: the packed skeleton of each record, then the texts (a match's
    spec, result and summary); what comes last is the nearest, so the most used goes last."""
    from scheduler.store.packing import packed_form
    parts = [json.dumps(packed_form(skeleton(r)), ensure_ascii=False,
                        separators=(",", ":")).encode("utf-8") for r in records]
    return b"".join(parts + [t.encode("utf-8") for t in texts])
