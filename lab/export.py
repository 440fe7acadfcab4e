"""A season's decisions as data (``arena export``): one row per decision a seat made in the
season's stored matches, for research (docs/lab.md, "Exporting a season").

Each game of a record is replayed with the engine from its seed and actions; at each seat's
decision the row takes what that seat was sent then: its observation and the legal hint in the
JSON form a stdio bot reads them (``referee.seats.stdio_seat.json_line``, the hint sampled from
the runner's own seed), the events it was shown since its previous decision (as
``MatchFile.seat_view`` has them), the action it took and its time, and the deal's result for
its team. ``full`` (the organiser's) adds the four hands and the kitty at the decision; without
it a row holds nothing its seat could not see.

Matches are read a page at a time and a match's rows are handed on as soon as they are made, so
the memory an export needs does not grow with the season. A record still sealed (its duplicate
mirror, or a match on its cards, not played yet) is left out and counted.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from shengji_arena.v1 import referee_pb2 as pb

from referee.match.matchfile import MatchFile
from referee.rules.actions import parse_action
from referee.rules.cards import TEXT
from referee.rules.engine import apply
from referee.rules.events import DealEnded
from referee.seats.stdio_seat import json_line
from referee.wire.hints import legal_hint
from referee.wire.protocol import DECISION_TO_PB, observation_bytes
from scheduler.errors import ArenaError
from scheduler.states import MatchStatus

FORMATS = ("jsonl", "parquet")
PAGE = 200
"""Matches read from the store at a time."""
ROW_GROUP = 8192
"""Rows of a parquet row group (a few tens of MB in memory while it fills)."""

IDS = ("season", "match_id", "variant", "game", "deal", "decision", "seat", "bot", "team")
"""The columns that say whose decision a row is, and where in the match."""
RESULT = ("gain", "gain_other", "net", "attacking", "attacker_points")
"""The deal's result for the row's seat (null while the deal has none: a forfeit cut it)."""
JSON_COLUMNS = ("observation", "legal", "seen", "seen_after")
"""The columns holding JSON values (text in parquet, nested in JSON lines)."""
FULL_COLUMNS = ("hands", "kitty")
"""What only a full export has: every hand and the kitty at the decision."""
COLUMNS = IDS + ("kind", "action", "time_ms") + RESULT + JSON_COLUMNS
"""A seat-view row's columns, in order (a full row adds ``FULL_COLUMNS``)."""


class ExportError(ArenaError, ValueError):
    """An export that cannot be made as asked: the message names what is wrong."""


@dataclass
class ExportTally:
    """What an export did: matches exported and their rows, matches left out (sealed, without
    a record) and records that did not replay (match id and why)."""

    matches: int = 0
    rows: int = 0
    sealed: int = 0
    without_record: int = 0
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started


# -- one match -------------------------------------------------------------------------------
def decision_times(match: MatchFile, seats: list[int]) -> list[float | None]:
    """Each decision's time (ms) from the record's ``timings``, for the decisions made by
    ``seats`` (the non-chance actions of every game, in order).

    The runner appends one ``[seat, ms]`` per decision it charged, in the order the decisions
    were made: an answer, a garbage or illegal one, or a timeout (each then has its action,
    the bot's or the default played for it). A match forfeited on a strike has one timing
    more, the last (the answer charged, no action played after it); a disconnect has none
    for the decision it left open. So the k-th timing is the k-th decision's when the seats
    agree pairwise; a record where they do not, or that has no timings, gives None for all."""
    timings = match.extra.get("timings")
    if not isinstance(timings, list) or len(timings) not in (len(seats), len(seats) + 1):
        return [None] * len(seats)
    out: list[float | None] = []
    for seat, pair in zip(seats, timings):
        if not (isinstance(pair, list) and len(pair) == 2 and pair[0] == seat
                and isinstance(pair[1], (int, float)) and not isinstance(pair[1], bool)):
            return [None] * len(seats)
        out.append(float(pair[1]))
    return out


def _cards(cards) -> list[str]:
    return [TEXT[c] for c in cards]


def match_rows(match: MatchFile, season: str, *, full: bool = False) -> list[dict[str, Any]]:
    """The rows of every decision of ``match``, in the order they were made; a record whose
    games do not replay to the events it states raises ``ValueError`` saying where."""
    summary = match.summary().deals
    seats = [seat for game in match.games for seat, _ in game.actions if seat is not None]
    times = decision_times(match, seats)
    rows: list[dict[str, Any]] = []
    pending: list[list[dict]] = [[], [], [], []]  # what each seat was shown since it decided
    last = [-1, -1, -1, -1]  # each seat's last row
    deal = 0  # deals ended so far in the match: the index of the deal in play in ``summary``
    for g, game in enumerate(match.games):
        state = game.new_state()
        cursor = 0  # the game's recorded events consumed so far
        for step, (seat, text) in enumerate(game.actions):
            where = f"match {match.match_id}: game {g}: action {step}"
            if seat is not None:
                if state.turn != seat:
                    raise ValueError(f"{where}: seat {seat} acts, the engine waits for "
                                     f"{state.turn}")
                rows.append(_row(match, season, state, game.seed, step, g, deal, len(rows),
                                 seat, text, times[len(rows)], pending[seat],
                                 summary[deal] if deal < len(summary) else None, full))
                last[seat] = len(rows) - 1
                pending[seat] = []
            try:
                state, events = apply(state, parse_action(text), seat)
            except ValueError as e:
                raise ValueError(f"{where} ({seat}: {text[:60]}): {e}") from None
            recorded = game.events[cursor:cursor + len(events)]
            if [d.get("event") for d in recorded] != [type(e).__name__ for e in events]:
                raise ValueError(f"{where}: the replay's events are not the record's (events "
                                 f"{cursor} to {cursor + len(events)})")
            cursor += len(events)
            for event, d in zip(events, recorded):
                shown = {k: v for k, v in d.items() if k != "visible_to"}
                for s in range(4):
                    if event.visible(s):
                        pending[s].append(shown)
                if type(event) is DealEnded:
                    deal += 1
        if cursor != len(game.events):
            raise ValueError(f"match {match.match_id}: game {g}: {len(game.events)} events "
                             f"recorded, {cursor} replayed")
    for seat in range(4):
        if last[seat] >= 0:
            rows[last[seat]]["seen_after"] = pending[seat]
    return rows


def _row(match: MatchFile, season: str, state, seed, step: int, game: int, deal: int,
         decision: int, seat: int, action: str, time_ms: float | None, seen: list[dict],
         result, full: bool) -> dict[str, Any]:
    """One decision's row (``seen_after`` None: only a seat's last row has it)."""
    message = pb.RefereeMessage()
    request = message.request
    request.kind = DECISION_TO_PB[state.decision]
    request.observation.MergeFromString(observation_bytes(state, seat))
    request.hint.CopyFrom(legal_hint(state, f"{seed}:{step}"))  # the runner's seed for it
    sent = json.loads(json_line(message))  # as a stdio bot reads its request
    team = seat % 2
    row: dict[str, Any] = {
        "season": season, "match_id": match.match_id, "variant": match.variant, "game": game,
        "deal": deal, "decision": decision, "seat": seat, "bot": match.seats[seat],
        "team": team, "kind": sent["kind"], "action": action, "time_ms": time_ms}
    if result is None:
        row.update(dict.fromkeys(RESULT))
    else:
        mine, theirs = result.gain[team], result.gain[1 - team]
        row.update(gain=mine, gain_other=theirs, net=mine - theirs,
                   attacking=None if result.attackers is None else result.attackers == team,
                   attacker_points=result.attacker_total)
    row.update(observation=sent["observation"], legal=sent["hint"], seen=seen,
               seen_after=None)
    if full:
        row.update(hands=[_cards(state.hand(s)) for s in range(4)], kitty=_cards(state.kitty))
    return row


# -- a season --------------------------------------------------------------------------------
def check_season(store, season: str) -> None:
    """Raise ``ExportError`` when ``store`` has no season ``season``, naming those it has."""
    if store.seasons.get(season) is None:
        known = ", ".join(store.seasons.names()) or "none"
        raise ExportError(f"no season {season!r} in {store.url} (seasons there: {known})")


def season_records(store, season: str, tally: ExportTally, page: int = PAGE
                   ) -> Iterator[MatchFile]:
    """The records of the season's played matches, in play order, read a page of matches at
    a time; the sealed ones, those without a record and those whose record does not read
    back are counted in ``tally``, not given.
    Pages go by the season's whole match list (fixed in play order), so a match finishing
    meanwhile shifts none."""
    offset = 0
    while True:
        rows = store.pages.match_page(season=season, limit=page, offset=offset).rows
        if not rows:
            return
        offset += len(rows)
        done = [r for r in rows if r.status == MatchStatus.DONE]
        sealed = store.pages.sealed_among(done) if done else set()
        for r in done:
            if r.id in sealed:
                tally.sealed += 1
                continue
            try:
                record = store.results.record(r.id)
            except ValueError as e:  # a stored record that does not read back: named
                tally.unreadable.append((r.id, str(e)))
                continue
            if record is None:
                tally.without_record += 1
                continue
            yield record


def export_season(store, season: str, sink: RowSink, *, full: bool = False,
                  page: int = PAGE, progress: Callable[[ExportTally], None] | None = None
                  ) -> ExportTally:
    """Write the rows of every played, unsealed match of ``season`` to ``sink`` (closed
    after); ``progress`` is called after each match. A record that does not replay is left
    out and named in the tally."""
    check_season(store, season)
    tally = ExportTally()
    try:
        for match in season_records(store, season, tally, page):
            try:
                rows = match_rows(match, season, full=full)
            except ValueError as e:
                tally.unreadable.append((match.match_id, str(e)))
                continue
            sink.add(rows)
            tally.matches += 1
            tally.rows += len(rows)
            if progress is not None:
                progress(tally)
    except BaseException:
        sink.abort()
        raise
    sink.close()
    return tally


# -- writing rows ----------------------------------------------------------------------------
class RowSink:
    """Where rows go: ``add`` a match's rows, then ``close`` (or ``abort``: nothing kept)."""

    def add(self, rows: list[dict[str, Any]]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def abort(self) -> None:
        pass


def open_sink(fmt: str, out: Path | None, stdout: IO[str], full: bool) -> RowSink:
    """The sink of format ``fmt`` writing to the file ``out`` (kept only once the export is
    whole), or for JSON lines without one to ``stdout``."""
    if fmt not in FORMATS:
        raise ExportError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if out is None:
        if fmt == "parquet":
            raise ExportError("--format parquet writes a file: name it with --out FILE")
        return JsonlSink(stdout)
    if not out.parent.is_dir():
        raise ExportError(f"--out {out}: no such folder {out.parent}")
    return ParquetSink(out, full) if fmt == "parquet" else JsonlSink(None, out)


class JsonlSink(RowSink):
    """One JSON object a line, the JSON columns nested: on a text stream, or in the file
    ``path`` once closed (written beside it until then)."""

    def __init__(self, stream: IO[str] | None, path: Path | None = None) -> None:
        self.path = path
        self.partial = None if path is None else path.with_name(path.name + ".partial")
        if self.partial is not None:
            stream = open(self.partial, "w", encoding="utf-8")
        assert stream is not None
        self.stream: IO[str] = stream

    def add(self, rows: list[dict[str, Any]]) -> None:
        self.stream.write("".join(json.dumps(r, ensure_ascii=False, separators=(",", ":"))
                                  + "\n" for r in rows))

    def close(self) -> None:
        if self.partial is None:
            self.stream.flush()
            return
        self.stream.close()
        assert self.path is not None
        self.partial.replace(self.path)

    def abort(self) -> None:
        if self.partial is not None:
            self.stream.close()
            self.partial.unlink(missing_ok=True)


def parquet_schema(full: bool):
    """The parquet file's columns: flat ids, action, time and result; the JSON columns (and
    a full export's hands and kitty) as JSON text."""
    import pyarrow as pa
    kinds = {"season": pa.string(), "match_id": pa.string(), "variant": pa.string(),
             "bot": pa.string(), "kind": pa.string(), "action": pa.string(),
             "time_ms": pa.float64(), "attacking": pa.bool_()}
    names = COLUMNS + (FULL_COLUMNS if full else ())
    return pa.schema([(n, kinds.get(n, pa.string() if n in JSON_COLUMNS + FULL_COLUMNS
                                     else pa.int32())) for n in names])


class ParquetSink(RowSink):
    """A parquet file written a row group at a time (``ROW_GROUP`` rows), at ``path`` once
    closed (written beside it until then)."""

    def __init__(self, path: Path, full: bool, row_group: int = ROW_GROUP) -> None:
        import pyarrow.parquet as pq
        self.path, self.row_group = path, row_group
        self.partial = path.with_name(path.name + ".partial")
        self.schema = parquet_schema(full)
        self.text = [n for n in self.schema.names if n in JSON_COLUMNS + FULL_COLUMNS]
        self.writer = pq.ParquetWriter(self.partial, self.schema, compression="zstd")
        self.columns: dict[str, list] = {n: [] for n in self.schema.names}
        self.held = 0

    def add(self, rows: list[dict[str, Any]]) -> None:
        columns, text = self.columns, self.text
        for name, values in columns.items():
            if name in text:
                values.extend(None if r[name] is None else
                              json.dumps(r[name], ensure_ascii=False, separators=(",", ":"))
                              for r in rows)
            else:
                values.extend(r[name] for r in rows)
        self.held += len(rows)
        if self.held >= self.row_group:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa
        if self.held:
            self.writer.write_table(pa.Table.from_pydict(self.columns, schema=self.schema))
            for values in self.columns.values():
                values.clear()
            self.held = 0

    def close(self) -> None:
        self._flush()
        self.writer.close()
        self.partial.replace(self.path)

    def abort(self) -> None:
        self.writer.close()
        self.partial.unlink(missing_ok=True)
