"""A bot's deals grouped by the role it played (docs/statistics.md, *Statistics by role*): as
attackers, as defenders (the dealer's team, 庄家方), as the dealer itself and as the dealer's
partner, by the deal's trump kind, by partner and by opponent; in each group its deals and
matches, the deal win rate with its Wilson 95% interval, the mean net levels per deal and the
mean card points taken attacking and conceded defending, each with a Student-t 95% interval.

Pure: it reads plain values (the seats, each deal's summary and trump kind) and hands back
frozen rows; the service reads the store (``scheduler.service.roles``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from scheduler.stats.ratings import Z95


#: Student's t 97.5% quantiles for 1 to 30 degrees of freedom (beyond: ``t95``'s expansion)
_T95 = (12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004,
        2.262157, 2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905,
        2.109816, 2.100922, 2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899,
        2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272)

NO_TRUMP = "no-trump"
#: the trump kinds of a deal, in the order shown: the trump suit by name, or no-trump
TRUMP_KINDS = ("spades", "hearts", "diamonds", "clubs", NO_TRUMP)


class Role(StrEnum):
    """The groups of a bot's deals (``RoleGroup.role``)."""

    ALL = "all"
    """Every deal it played."""
    ATTACKERS = "attackers"
    """Its team attacked (台下: the team without the kitty, collecting points)."""
    DEFENDERS = "defenders"
    """Its team defended: the dealer's team (庄家方), holding the kitty."""
    DEALER = "dealer"
    """It was the dealer (庄家) itself: one of its seats dealt."""
    DEALER_PARTNER = "dealer_partner"
    """It was the dealer's partner: one of its seats sat across from the dealer."""
    TRUMP = "trump"
    """By the deal's trump kind (key: a suit's name or ``no-trump``)."""
    PARTNER = "partner"
    """By the bot at the seat across from its own (key: that bot's name)."""
    OPPONENT = "opponent"
    """By a bot of the other team (key: that bot's name): head to head."""


ROLE_ORDER = tuple(Role)


class DealLike(Protocol):
    """What the statistics read of a deal (``referee.match.results.DealSummary``)."""

    @property
    def dealer(self) -> int | None: ...
    @property
    def attackers(self) -> int | None: ...
    @property
    def attacker_total(self) -> int: ...
    @property
    def gain(self) -> tuple[int, int]: ...


@dataclass(frozen=True)
class PlayedMatch:
    """One played match as the statistics read it: the bots in seats 0-3, each settled deal's
    summary in order, and each deal's trump kind (one of ``TRUMP_KINDS``; None: not known)."""

    seats: tuple[str, str, str, str]
    deals: tuple[DealLike, ...]
    trumps: tuple[str | None, ...]

    def __post_init__(self) -> None:
        if len(self.seats) != 4:
            raise ValueError(f"expected four seats, got {len(self.seats)}")
        if len(self.trumps) != len(self.deals):
            raise ValueError(f"{len(self.deals)} deals but {len(self.trumps)} trump kinds")


# -- intervals ------------------------------------------------------------------------------
def t95(df: int) -> float:
    """Student's t 97.5% quantile for ``df`` degrees of freedom (at least 1): a table up to
    30, the Cornish-Fisher expansion in 1/df beyond (within 1e-6 there)."""
    if df < 1:
        raise ValueError(f"degrees of freedom {df}: expected at least 1")
    if df <= len(_T95):
        return _T95[df - 1]
    z, v = Z95, float(df)
    return (z + (z ** 3 + z) / (4 * v) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * v ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * v ** 3)
            + (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z)
            / (92160 * v ** 4))


def wilson(wins: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of a rate of ``wins`` in ``n`` (None when ``n`` is 0)."""
    if n <= 0:
        return None
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Mean:
    """The mean of ``n`` values with its Student-t 95% interval (``low``, ``high``: None with
    fewer than two values)."""

    n: int
    mean: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(cls, n: int, total: int | float, squares: int | float) -> "Mean":
        """From the count, sum and sum of squares of the values."""
        if n == 0:
            return cls(0, None, None, None)
        mean = total / n
        if n == 1:
            return cls(1, mean, None, None)
        variance = max(0.0, (n * squares - total * total) / (n * (n - 1)))
        half = t95(n - 1) * math.sqrt(variance / n)
        return cls(n, mean, mean - half, mean + half)

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "mean": self.mean, "low": self.low, "high": self.high}


# -- the groups ------------------------------------------------------------------------------
@dataclass(frozen=True)
class RoleGroup:
    """One group of a bot's deals: ``role`` (a ``Role``), ``key`` (the trump kind, partner or
    opponent; None for the others), its ``deals`` and the ``matches`` they were in, the deals
    its team won (gained more levels than the other team) and those even (equal gains), the
    win rate with its Wilson interval, the net levels per deal (its team's gain minus the
    other's), and the points taken as attackers and conceded as defenders
    (``attacker_total``) over the group's deals in each role."""

    role: Role
    key: str | None
    matches: int
    deals: int
    wins: int
    even: int
    win_rate: float | None
    win_low: float | None
    win_high: float | None
    net: Mean
    taken: Mean
    conceded: Mean

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role.value, "key": self.key, "matches": self.matches,
                "deals": self.deals, "wins": self.wins, "even": self.even,
                "win_rate": self.win_rate, "win_low": self.win_low, "win_high": self.win_high,
                "net": self.net.to_dict(), "taken": self.taken.to_dict(),
                "conceded": self.conceded.to_dict()}


@dataclass(frozen=True)
class BotRoles:
    """A bot's groups (``ROLE_ORDER``, then by key), over ``matches`` matches and ``deals``
    deals; ``skipped``: matches where it sat on both teams (no side of its own)."""

    bot: str
    matches: int
    deals: int
    skipped: int
    groups: tuple[RoleGroup, ...]

    def group(self, role: Role | str, key: str | None = None) -> RoleGroup | None:
        return next((g for g in self.groups if g.role == role and g.key == key), None)

    def to_dict(self) -> dict[str, Any]:
        return {"bot": self.bot, "matches": self.matches, "deals": self.deals,
                "skipped": self.skipped, "groups": [g.to_dict() for g in self.groups]}


@dataclass
class _Sums:
    """A group's running sums."""

    deals: int = 0
    wins: int = 0
    even: int = 0
    net: list[int] = field(default_factory=lambda: [0, 0])     # sum, sum of squares
    taken: list[int] = field(default_factory=lambda: [0, 0, 0])  # n, sum, sum of squares
    conceded: list[int] = field(default_factory=lambda: [0, 0, 0])
    matches: int = 0
    last_match: int = -1

    def add(self, match_no: int, net: int, attacking: bool | None, points: int) -> None:
        self.deals += 1
        self.wins += net > 0
        self.even += net == 0
        self.net[0] += net
        self.net[1] += net * net
        if attacking is not None:
            sums = self.taken if attacking else self.conceded
            sums[0] += 1
            sums[1] += points
            sums[2] += points * points
        if match_no != self.last_match:
            self.matches += 1
            self.last_match = match_no

    def row(self, role: Role, key: str | None) -> RoleGroup:
        rate = self.wins / self.deals if self.deals else None
        low, high = wilson(self.wins, self.deals) or (None, None)
        return RoleGroup(role, key, self.matches, self.deals, self.wins, self.even, rate, low,
                         high, Mean.of(self.deals, *self.net), Mean.of(*self.taken),
                         Mean.of(*self.conceded))


class RoleTally:
    """One bot's groups, counted a match at a time (``add``), so that the matches need not be
    held together; ``result`` gives the rows."""

    def __init__(self, bot: str) -> None:
        self.bot = bot
        self.sums: dict[tuple[Role, str | None], _Sums] = {}
        self.matches = 0
        self.deals = 0
        self.skipped = 0

    def add(self, match: PlayedMatch) -> None:
        """Count ``match``'s deals (none when the bot is not in it; a match where it sat on
        both teams is skipped)."""
        mine = [i for i, b in enumerate(match.seats) if b == self.bot]
        teams = {i % 2 for i in mine}
        if not mine:
            return
        if len(teams) > 1:
            self.skipped += 1
            return
        self.matches += 1
        team = teams.pop()
        partners = sorted({match.seats[(i + 2) % 4] for i in mine})
        opponents = sorted({b for i, b in enumerate(match.seats) if i % 2 != team})
        for deal, trump in zip(match.deals, match.trumps):
            self.deals += 1
            net = deal.gain[team] - deal.gain[1 - team]
            attacking = None if deal.attackers is None else deal.attackers == team
            groups: list[tuple[Role, str | None]] = [(Role.ALL, None)]
            if attacking is not None:
                groups.append((Role.ATTACKERS if attacking else Role.DEFENDERS, None))
            if deal.dealer is not None and attacking is False:
                # (with its own process as its partner, a bot is both: only "defenders")
                dealt, across = deal.dealer in mine, (deal.dealer + 2) % 4 in mine
                if dealt and not across:
                    groups.append((Role.DEALER, None))
                elif across and not dealt:
                    groups.append((Role.DEALER_PARTNER, None))
            if trump is not None:
                groups.append((Role.TRUMP, trump))
            groups += [(Role.PARTNER, p) for p in partners]
            groups += [(Role.OPPONENT, o) for o in opponents]
            for g in groups:
                self.sums.setdefault(g, _Sums()).add(self.matches, net, attacking,
                                                     deal.attacker_total)

    def result(self) -> BotRoles:
        def order(g: tuple[Role, str | None]) -> tuple:
            role, key = g
            trump_at = TRUMP_KINDS.index(key) if key in TRUMP_KINDS else len(TRUMP_KINDS)
            return ROLE_ORDER.index(role), trump_at, key or ""
        rows = tuple(self.sums[g].row(*g) for g in sorted(self.sums, key=order))
        return BotRoles(self.bot, self.matches, self.deals, self.skipped, rows)


def bot_roles(bot: str, matches: Iterable[PlayedMatch]) -> BotRoles:
    """``bot``'s groups over ``matches`` (see ``RoleTally``)."""
    tally = RoleTally(bot)
    for m in matches:
        tally.add(m)
    return tally.result()


def roles_of(bots: Sequence[str], matches: Iterable[PlayedMatch]) -> list[BotRoles]:
    """The groups of each of ``bots`` over ``matches``, read once."""
    tallies = [RoleTally(b) for b in bots]
    for m in matches:
        for t in tallies:
            t.add(m)
    return [t.result() for t in tallies]
