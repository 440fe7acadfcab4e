"""A version's statistics by role in each season or ladder it plays in (docs/statistics.md,
*Statistics by role*): its newest played matches there read from the store, those still
sealed left out, each deal's trump kind found by replaying the match's record, and the groups
counted by ``scheduler.stats.roles``. Its author's and the organiser's only, as its results
are (``scheduler.service.visibility.owned``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from referee.rules.events import DealEnded, DealStarted, Played
from referee.rules.record import RecordError, replayed
from referee.rules.trump import SUIT_NAMES
from scheduler.errors import Refused
from scheduler.reports import bot_versions
from scheduler.service.visibility import Viewer, owned
from scheduler.stats.roles import NO_TRUMP, BotRoles, PlayedMatch, roles_of

if TYPE_CHECKING:
    from referee.match.matchfile import MatchFile
    from referee.rules.record import MatchRecord

#: the newest played matches read per season and version: records are large
NEWEST = 500
#: the matches read from the store at a time
CHUNK = 50


# -- each deal's trump kind -------------------------------------------------------------------
def _trump_kind(state) -> str | None:
    """The trump kind a state holds once its trump is fixed (the suit's name, or no-trump),
    as ``observe`` tells it to the seats; None while it is not fixed."""
    if getattr(state, "ctx", None) is None:
        return None
    return NO_TRUMP if state.trump is None else SUIT_NAMES[state.trump]


def _game_trumps(game: MatchRecord) -> list[str | None]:
    """The trump kind of each deal a game settles, in order: the trump when the deal's first
    trick is led (every declaration, overturn, kitty flip or draw is over by then, in every
    variant), found by replaying the game; None for a deal settled with no trick led."""
    out: list[str | None] = []
    kind: str | None = None
    for state, events in replayed(game):
        for e in events:
            cls = type(e)
            if cls is DealStarted:  # (a redeal starts again)
                kind = None
            elif cls is Played and kind is None:
                kind = _trump_kind(state)
            elif cls is DealEnded:
                out.append(kind)
                kind = None
    return out


def deal_trumps(match: MatchFile) -> tuple[str | None, ...]:
    """The trump kind of each deal ``match`` settled, game after game (the order of its
    summary's deals); all None when a game does not replay."""
    out: list[str | None] = []
    try:
        for game in match.games:
            out += _game_trumps(game)
    except ValueError:
        return (None,) * sum(1 for _ in match.deals_ended())
    return tuple(out)


class _TrumpBook:
    """The deals' trump kinds of the matches read so far, by store, match and the time it
    finished: a match's record is written once, so it is replayed once. Past ``LIMIT``
    matches it starts afresh."""

    LIMIT = 100_000

    def __init__(self) -> None:
        self.kinds: dict[tuple[str, str, float | None], tuple[str | None, ...]] = {}
        self.lock = threading.Lock()

    def of(self, store, row) -> tuple[str | None, ...] | None:
        """``row``'s deals' trump kinds (a played ``MatchResultRow``); None when its record
        is missing or cannot be read."""
        key = (store.url, row.id, row.finished_at)
        with self.lock:
            got = self.kinds.get(key)
        if got is not None:
            return got
        try:
            record = store.results.record(row.id)
        except (RecordError, ValueError):
            return None
        if record is None:
            return None
        got = deal_trumps(record)
        with self.lock:
            if len(self.kinds) >= self.LIMIT:
                self.kinds.clear()
            self.kinds[key] = got
        return got


_BOOK = _TrumpBook()


# -- a season's matches -----------------------------------------------------------------------
@dataclass(frozen=True)
class SeasonRoles:
    """The groups of a version's bots in a season (``bots``: each name it plays under there),
    over its ``read`` newest played matches of the ``played`` it has there (at most
    ``newest``), less the ``sealed`` ones among them (their mirrors not played yet)."""

    season: str
    format: str | None
    variant: str | None
    played: int
    newest: int
    read: int
    sealed: int
    bots: tuple[BotRoles, ...]

    @property
    def cut(self) -> bool:
        """Whether older matches were left unread."""
        return self.played > self.read

    @property
    def over(self) -> str:
        """What the groups are over, in words."""
        sealed = (f", less {self.sealed} sealed until the matches on their cards are played"
                  if self.sealed else "")
        return (f"over its {'newest ' if self.cut else ''}{self.read} played "
                f"match{'' if self.read == 1 else 'es'}{sealed}")

    def to_dict(self) -> dict[str, Any]:
        return {"season": self.season, "format": self.format, "variant": self.variant,
                "played": self.played, "newest": self.newest, "read": self.read,
                "sealed": self.sealed, "cut": self.cut, "over": self.over,
                "bots": [b.to_dict() for b in self.bots]}


class _Reading:
    """The newest played matches of a season where one of ``bots`` sat, a chunk at a time,
    as ``PlayedMatch``es; what was read and left out is counted as it goes."""

    def __init__(self, store, season: str, bots: Sequence[str], newest: int) -> None:
        self.store, self.season, self.bots, self.newest = store, season, list(bots), newest
        self.played = self.read = self.sealed = 0

    def __iter__(self) -> Iterator[PlayedMatch]:
        pages, offset = self.store.pages, 0
        seen: set[str] = set()
        while self.read < self.newest:
            page = pages.seated_page(self.season, self.bots, offset=offset,
                                     limit=min(CHUNK, self.newest - self.read))
            if not page.rows:
                return
            self.played = max(self.played, page.total)
            offset += len(page.rows)
            # (a result written meanwhile moves the older ones down a place: read once)
            rows = [r for r in page.rows if r.id not in seen]
            self.read += len(rows)
            seen.update(r.id for r in rows)
            sealed = pages.sealed_among(rows)
            for r in rows:
                if r.id in sealed:
                    self.sealed += 1
                    continue
                deals = r.summary.deals
                trumps = _BOOK.of(self.store, r)
                if trumps is None or len(trumps) != len(deals):
                    trumps = (None,) * len(deals)
                yield PlayedMatch(tuple(r.seats), deals, trumps)


def season_roles(store, season: str, bots: Sequence[str], *,
                 newest: int = NEWEST) -> SeasonRoles:
    """The groups of ``bots`` (names of one version in ``season``) over their newest
    ``newest`` played matches there, the sealed ones left out."""
    config = store.seasons.get(season).config
    reading = _Reading(store, season, bots, newest)
    got = roles_of(bots, reading)
    return SeasonRoles(season, config.format.value, config.variant, reading.played, newest,
                       reading.read, reading.sealed, tuple(got))


def version_roles(store, viewer: Viewer, name: str, version: str, *,
                  season: str | None = None, newest: int = NEWEST) -> dict[str, Any]:
    """The viewer's ``name@version`` by role in each season (and ladder) that pinned it, its
    scrimmages apart, or in ``season`` only; refused as its results are (``owned``)."""
    from scheduler.service.versions import seasons_of
    row = owned(store, viewer, name, version)
    seasons = seasons_of(store, row, season)
    out = []
    for s in seasons:
        bots = [b for b, v in bot_versions(store, s).items() if v["hash"] == row.content_hash]
        out.append(season_roles(store, s, bots, newest=newest).to_dict())
    return {"version": f"{name}@{version}", "newest": newest, "seasons": out}


def sees_roles(store, viewer: Viewer | None, season: str, bot: str) -> bool:
    """Whether ``viewer`` may see the statistics by role of ``bot`` (a season's bot name):
    the organiser, or the author of the version it plays."""
    if viewer is None:
        return False
    if viewer.organiser:
        return True
    ref = bot_versions(store, season).get(bot, {}).get("ref", "")
    name, _, version = ref.partition("@")
    if not version:
        return False
    try:
        owned(store, viewer, name, version)
    except Refused:
        return False
    return True
