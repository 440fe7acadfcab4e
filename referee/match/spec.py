"""The match spec: what the scheduler asks the referee to play (the contract across the process
boundary), with the one set of time-control and fault-policy defaults every caller uses."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from shengji_arena.v1 import referee_pb2 as pb


@dataclass(frozen=True)
class TimeControl:
    per_decision_ms: int = 2000
    bank_ms: int = 10000
    max_strikes: int = 3
    reconnect_window_ms: int = 5000
    connect_timeout_ms: int = 15000
    max_reconnects: int = 10  # in the whole match; one more forfeits

    def to_pb(self) -> pb.TimeControl:
        return pb.TimeControl(per_decision_ms=self.per_decision_ms, bank_ms=self.bank_ms,
                              max_strikes=self.max_strikes,
                              reconnect_window_ms=self.reconnect_window_ms,
                              max_reconnects=self.max_reconnects)


@dataclass
class DealSpec:
    """One deal of a deal-list match."""

    seed: str
    levels: tuple[str, str] = ("2", "2")
    dealer: int | None = 0


@dataclass
class MatchSpec:
    match_id: str
    variant: str
    options: dict[str, Any] = field(default_factory=dict)
    seed: str = "0"
    max_deals: int | None = None          # whole-game mode: stop after this many deals
    deals: list[DealSpec] | None = None   # deal-list mode
    time_control: TimeControl = field(default_factory=TimeControl)
    seat_names: list[str] = field(default_factory=lambda: ["", "", "", ""])


DEFAULT_TIME_CONTROL = TimeControl()
"""The defaults of every match (season files, ``arena match``, the referee's own limits)."""


def time_control_from_dict(data: dict | None) -> TimeControl:
    """A time control from its dict form; unknown names raise ``ValueError`` naming them."""
    data = data or {}
    known = {f.name for f in fields(TimeControl)}
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"time control: unknown field(s) {sorted(unknown)}; expected "
                         f"{', '.join(sorted(known))}")
    return TimeControl(**data)
