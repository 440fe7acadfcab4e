"""The referee's fault policy, one for the match runner and the lab.

An answer that cannot be read (``GARBAGE``), is not legal (``ILLEGAL``) or comes too late
(``TIMEOUT``) is a fault: the seat takes a strike and the referee plays for it (a pass where
one is legal, else the seeded default action). At the time control's ``max_strikes`` the seat's
team forfeits the match (``Forfeited``).
"""

from __future__ import annotations

from referee.play.random_play import default_action
from referee.rules.actions import Pass
from referee.rules.engine import is_legal

GARBAGE = "garbage"
ILLEGAL = "illegal"
TIMEOUT = "timeout"


class Forfeited(Exception):
    """A seat's fault ends the match: its team forfeits."""

    def __init__(self, seat: int, reason: str) -> None:
        super().__init__(reason)
        self.seat = seat
        self.reason = reason


def action_for(state, seat: int, seed: str):
    """The action the referee plays for ``seat`` after a fault: a pass where it is legal,
    else the default action of ``seed``."""
    return Pass() if is_legal(state, Pass(), seat) else default_action(state, seed)


def add_strike(strikes: list[int], seat: int) -> int:
    """One strike more for ``seat``; its strikes so far."""
    strikes[seat] += 1
    return strikes[seat]


def forfeit_if_out(strikes: list[int], seat: int, max_strikes: int) -> None:
    """At ``max_strikes`` strikes, ``seat``'s team forfeits (``Forfeited``)."""
    if strikes[seat] >= max_strikes:
        raise Forfeited(seat, f"{strikes[seat]} strikes")
