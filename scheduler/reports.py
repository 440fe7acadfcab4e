"""What the command line and the dashboard both report from the store: a season's rows and
state, its standings, a sealed record's reason, the bot versions a season pinned."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING

from scheduler.states import MatchStatus, SeasonState

if TYPE_CHECKING:
    from scheduler.stats.standings import Standings
    from scheduler.store.rows import Row, SealingMatch, SeasonCancel, SeasonRow, StatusCounts


def sealed_reason(sealed: list[SealingMatch]) -> str:
    """Why a stored record is not served yet (``store.pages.sealed_by``)."""
    def named(ms):
        return ", ".join(f"{m.id} ({m.status})" for m in ms[:3]) + (
            f" and {len(ms) - 3} more" if len(ms) > 3 else "")
    mirror = [m for m in sealed if m.mirror]
    rest = [m for m in sealed if not m.mirror]
    parts = ([f"its mirror match {named(mirror)}"] if mirror else []) + (
        [f"the other match(es) on the same cards: {named(rest)}"] if rest else [])
    return (f"sealed until {' and '.join(parts)} {'is' if len(sealed) == 1 else 'are'} over: "
            "a match's record shows its cards, which are secret until every match dealt them "
            "has been played")


def season_status(counts: StatusCounts, cancel: SeasonCancel | None,
                  ladder: bool = False) -> str:
    """A season's state in one word (or two): playing, finished, cancelled, cancelling (its
    running matches left) or not started; a ladder is never finished: with nothing in play it
    is resting (or waiting for versions)."""
    running, done = counts[MatchStatus.RUNNING], counts[MatchStatus.DONE]
    if cancel:
        return f"{SeasonState.CANCELLING} ({running} running left)" if running \
            else SeasonState.CANCELLED
    if counts[MatchStatus.PENDING] + running == 0:
        return SeasonState.RESTING if ladder and done else SeasonState.NOT_STARTED \
            if ladder else SeasonState.FINISHED
    if done + counts[MatchStatus.FAILED] + running == 0:
        return SeasonState.NOT_STARTED
    return SeasonState.PLAYING


def season_rows(store) -> list[dict]:
    """Every season with its counts and state (``arena seasons --json``). A ladder's ``bots``
    are the versions in it now (its entries not retired), ``retired`` how many left it."""
    out = []
    for r in store.pages.overview():
        config, c, cancel = r.config, r.counts, r.cancel
        bots, retired = list(config.bots), 0
        if config.is_ladder:  # its versions join and retire as it runs
            entries = store.ladder.entries(r.name)
            bots = [e.bot for e in entries if e.retired_at is None]
            retired = len(entries) - len(bots)
        out.append({"name": r.name, "variant": config.variant,
                    "format": config.format.value, "duplicate": config.duplicate,
                    "bots": bots, "retired": retired, "matches": c.total, **c.to_dict(),
                    "created_at": r.created_at,
                    "status": season_status(c, cancel, config.is_ladder),
                    "cancelled_at": cancel.cancelled_at if cancel else None,
                    "cancelled_by": cancel.by if cancel else None})
    return out


def bot_versions(store, season: str) -> dict[str, dict]:
    """The bot versions a season pinned, by its bots' names: {"ref", "hash"}."""
    from referee.seats.manifest import Manifest
    out = {}
    for b in store.seasons.bots(season):
        if b.version_hash:
            named = Manifest.name_in(b.manifest_fields) or b.name
            out[b.name] = {"ref": f"{named}@{b.version}", "hash": b.version_hash}
    return out


def season_standings(season: SeasonRow | Mapping, match_rows: Iterable[Row | Mapping], *,
                     samples: int = 1000, seed: int = 0, sealed: Collection[str] = ()) -> Standings:
    """The standings (``scheduler.stats.standings.compute``) of a stored season from its
    match rows (``store.pages.standings_rows`` or ``store.pages.matches``, or mappings of
    their columns): a played match is counted by its result's tally columns, or from its
    summary when it has none (a result written before them). A match whose id is in ``sealed``
    (``store.pages.sealed_in``: its result tells of cards other matches have still to play) is
    counted as not yet played: the standings are then those of before it was."""
    from scheduler.stats.standings import compute
    from scheduler.store.rows import SeasonRow, StandingsRow
    row = SeasonRow.of(season)
    variant = row.config.variant
    rows = [dataclasses.replace(r, played=False) if r.id in sealed else
            _tallied(r, variant) if r.played else r for r in map(StandingsRow.of, match_rows)]
    config = row.config
    if config.is_ladder:  # its bots joined as it ran: those that played
        names = dict.fromkeys(config.bots)
        for r in rows:
            names.update(dict.fromkeys(r.seats))
        config = dataclasses.replace(config, bots=tuple(names))
    return compute(row.name, config, rows, samples=samples, seed=seed)


def _tallied(row, variant: str):
    """A played ``StandingsRow`` with its tally columns: as stored, else counted from its
    summary (a result written before them)."""
    from scheduler.stats.scores import match_tally
    return row if row.tallied else row.with_tally(match_tally(row.summary, variant))
