"""People's games in the browser (``store.humans``): who played which seat against which bots,
the game's state, and once it is over its record and the bots' seat logs."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import func, select, update
from sqlalchemy.engine import Engine

from scheduler.states import HUMAN_OPEN, HumanGameState
from scheduler.store.schema import compress, decompress, human_games

if TYPE_CHECKING:
    from referee.match.matchfile import MatchFile


@dataclass(frozen=True, slots=True)
class HumanGameRow:
    """A person's game (its record and logs apart: ``Humans.record``, ``Humans.logs``)."""
    id: int
    person: str
    variant: str
    seat: int
    seats: tuple[str, str, str, str]
    state: str
    reason: str | None
    match_id: str
    created_at: float
    ended_at: float | None


_ROW = (human_games.c.id, human_games.c.person, human_games.c.variant, human_games.c.seat,
        *(human_games.c[f"name_{i}"] for i in range(4)), human_games.c.state,
        human_games.c.reason, human_games.c.match_id, human_games.c.created_at,
        human_games.c.ended_at)


def _row(r) -> HumanGameRow:
    return HumanGameRow(r.id, r.person, r.variant, r.seat, (r.name_0, r.name_1, r.name_2,
                                                             r.name_3),
                        r.state, r.reason, r.match_id, r.created_at, r.ended_at)


class Humans:
    """People's games (``store.humans``)."""

    __slots__ = ("engine",)

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def add(self, person: str, variant: str, seat: int, seats, match_id: str) -> int:
        with self.engine.begin() as c:
            key = c.execute(human_games.insert().values(
                person=person, variant=variant, seat=seat, match_id=match_id,
                state=HumanGameState.STARTING, created_at=time.time(),
                **{f"name_{i}": name for i, name in enumerate(seats)})).inserted_primary_key
            assert key is not None  # (an insert of one row)
            return key[0]

    def get(self, game_id: int) -> HumanGameRow | None:
        with self.engine.connect() as c:
            r = c.execute(select(*_ROW).where(human_games.c.id == game_id)).first()
        return None if r is None else _row(r)

    def of(self, person: str | None = None, limit: int = 20) -> list[HumanGameRow]:
        """``person``'s games (None: everyone's), newest first."""
        q = select(*_ROW).order_by(human_games.c.id.desc()).limit(limit)
        if person is not None:
            q = q.where(human_games.c.person == person)
        with self.engine.connect() as c:
            return [_row(r) for r in c.execute(q)]

    def open_count(self, person: str | None = None) -> int:
        """Games not over (of ``person``; None: of everyone)."""
        q = select(func.count()).select_from(human_games).where(
            human_games.c.state.in_(tuple(HUMAN_OPEN)))
        if person is not None:
            q = q.where(human_games.c.person == person)
        with self.engine.connect() as c:
            return c.execute(q).scalar_one()

    def change(self, game_id: int, state: str, reason: str | None = None, *,
               record: dict | None = None, logs: dict[int, str] | None = None) -> bool:
        """Move an open game to ``state`` (with its record and the bots' logs once over)."""
        values: dict = {"state": state, "reason": reason}
        if state not in HUMAN_OPEN:
            values["ended_at"] = time.time()
        if record is not None:
            values["record"] = compress(record)
        if logs is not None:
            values["logs"] = compress({str(seat): text for seat, text in logs.items()})
        with self.engine.begin() as c:
            return bool(c.execute(update(human_games).where(
                human_games.c.id == game_id, human_games.c.state.in_(tuple(HUMAN_OPEN)))
                .values(**values)).rowcount)

    def abandon_open(self, reason: str) -> int:
        """Every game left open (a service that stopped mid-game): failed, with ``reason``."""
        with self.engine.begin() as c:
            return c.execute(update(human_games).where(
                human_games.c.state.in_(tuple(HUMAN_OPEN))).values(
                state=HumanGameState.FAILED, reason=reason, ended_at=time.time())).rowcount

    def record(self, game_id: int) -> MatchFile | None:
        """The game's record once it is over (None before); one that does not read back
        raises the match file's ``RecordError`` naming the game."""
        from referee.match.matchfile import MatchFile
        with self.engine.connect() as c:
            data = c.execute(select(human_games.c.record)
                             .where(human_games.c.id == game_id)).scalar()
        return None if data is None else MatchFile.from_dict(decompress(data), f"game {game_id}")

    def log(self, game_id: int, seat: int) -> str:
        """The seat log of the bot at ``seat`` of a game over ("" for none)."""
        with self.engine.connect() as c:
            data = c.execute(select(human_games.c.logs)
                             .where(human_games.c.id == game_id)).scalar()
        return "" if data is None else str(decompress(data).get(str(seat), ""))
