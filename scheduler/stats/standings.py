"""Standings of a season: results per bot, ratings with bootstrap intervals, head to head.

The unit of a result is what removes the luck of the cards. In a duplicate season that is the
duplicate pair: the two matches on the same deals with the partnerships swapped; a bot wins the
pair when its net level gain over both matches is larger than its opponent's. In a plain season
it is the match. Ratings are a Bradley-Terry fit of those results on the Elo scale; the 95%
interval of each bot is the envelope of a bootstrap that resamples whole units (a pair is never
split) and one that simulates the season from the fitted ratings (see ``ratings``).

Beside them, in the same units, a Gaussian model on paired differences (``paired_rating``,
``scheduler.stats.power``): each unit's continuous score (a pair's paired difference per deal, or a
plain match's mean deal outcome) is normal with mean r_a - r_b; ratings in levels per deal. The
table shows Bradley-Terry and says so (``rating_shown``); docs/statistics.md has the model.

The standings read plain values: a season's name and configuration, and its matches as
``CountedMatch`` values (the store's ``StandingsRow`` is one; ``scheduler.reports`` hands them
over from the store).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from operator import attrgetter
from types import SimpleNamespace
from typing import TYPE_CHECKING, Protocol

import numpy as np

from referee.rules import family_of, rules_for

from scheduler.states import MatchStatus
from scheduler.stats.power import gaussian_ratings
from scheduler.stats.ratings import rating_history, rating_intervals
from scheduler.stats.scores import FORFEIT_OUTCOME, pair_result

if TYPE_CHECKING:
    from scheduler.season_config import SeasonConfig

#: virtual draws of each bot against an average one: shrinks ratings a little towards 0 and
#: keeps a one-sided record finite (3-0 between two bots is not yet evidence at 95%)
PRIOR = 2.0


@dataclass
class BotLine:
    name: str
    rating: float = 0.0
    low: float = 0.0
    high: float = 0.0
    matches: int = 0
    wins: float = 0
    draws: float = 0
    losses: float = 0
    pairs_won: int = 0
    pairs_drawn: int = 0
    pairs_lost: int = 0
    deals: int = 0
    attack_deals: int = 0
    attack_points: int = 0          # points taken as attackers
    defend_deals: int = 0
    conceded_points: int = 0        # points the attackers took from this bot's team
    level_gain: int = 0
    net_levels: int = 0
    strikes: int = 0
    forfeits: int = 0
    match_points: int | None = None  # three-deck
    titles: dict[str, int] = field(default_factory=dict)
    #: the Gaussian model on paired differences: levels per deal, mean 0, 95% interval
    paired_rating: float = 0.0
    paired_low: float = 0.0
    paired_high: float = 0.0

    @property
    def score(self) -> float:
        n = self.wins + self.draws + self.losses
        return (self.wins + self.draws / 2) / n if n else 0.0


@dataclass
class Standings:
    season: str
    variant: str
    duplicate: bool
    matches_done: int
    matches_total: int
    deals: int
    units: int
    lines: list[BotLine]
    head_to_head: dict[str, dict[str, list[float]]]   # row bot -> col bot -> [score, units]
    #: matches set aside (status failed: the infrastructure failed them on every attempt);
    #: they count for nobody, and a duplicate pair missing one of them is not rated
    matches_failed: int = 0
    #: the Gaussian fit's residual spread per unit (levels per deal) and its units
    paired_sigma: float = 0.0
    paired_units: int = 0
    #: ratings over the season: [{"units": k, "ratings": {bot: elo}}] after the first k units
    history: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"season": self.season, "variant": self.variant, "duplicate": self.duplicate,
                "matches_done": self.matches_done, "matches_total": self.matches_total,
                "matches_failed": self.matches_failed,
                "deals": self.deals, "rated_units": self.units,
                "bots": [asdict(b) | {"score": round(b.score, 4)} for b in self.lines],
                "head_to_head": self.head_to_head,
                "history": self.history,
                "rating_shown": "bradley_terry",
                "paired_model": {"name": "gaussian", "unit": "levels per deal",
                                 "sigma": round(self.paired_sigma, 4),
                                 "units": self.paired_units}}


class CountedMatch(Protocol):
    """What the standings read of one match of a season: its status, duplicate cluster, seats
    (the bot of each seat) and whether it was played; a played match with its result's tally
    (``scheduler.stats.scores.match_tally``)."""

    # read-only members, so that a frozen row satisfies it
    @property
    def status(self) -> str: ...

    @property
    def cluster(self) -> str: ...

    @property
    def played(self) -> bool: ...

    @property
    def seats(self) -> tuple[str, ...]: ...

    @property
    def deal_count(self) -> int | None: ...

    @property
    def score_0(self) -> float | None: ...

    @property
    def score_1(self) -> float | None: ...

    @property
    def net_0(self) -> int | None: ...

    @property
    def net_1(self) -> int | None: ...

    @property
    def forfeit_team(self) -> int | None: ...

    @property
    def strikes_0(self) -> int | None: ...

    @property
    def strikes_1(self) -> int | None: ...

    @property
    def gain_0(self) -> int | None: ...

    @property
    def gain_1(self) -> int | None: ...

    @property
    def attacks_0(self) -> int | None: ...

    @property
    def attack_points_0(self) -> int | None: ...

    @property
    def attacks_1(self) -> int | None: ...

    @property
    def attack_points_1(self) -> int | None: ...

    @property
    def deal_scores(self) -> list[float] | None: ...

    @property
    def match_points(self) -> list[int] | None: ...


def compute(season: str, config: SeasonConfig, match_rows: Sequence[CountedMatch], *,
            samples: int = 1000, seed: int = 0) -> Standings:
    """Standings of season ``season`` (its stored configuration ``config``: bots, variant,
    duplicate) from its matches in play order, each played one with its tally."""
    names = list(config.bots)
    lines = {n: BotLine(n) for n in names}
    title = family_of(rules_for(config.variant)).title  # match points (积分) and titles
    failed = sum(1 for row in match_rows if row.status == MatchStatus.FAILED)
    played = [row for row in match_rows if row.played]
    counted = _Counted(played, names)
    counted.add_to(lines)
    if title is not None:
        for b in lines.values():
            b.match_points = 0
        for row, teams in zip(played, counted.team.tolist()):
            mp = row.match_points
            if mp is None:
                continue
            for t, bot in enumerate(teams):
                b = lines[names[bot]]
                b.match_points = (b.match_points or 0) + mp[t] + mp[t + 2]  # (0 above)
                for seat in (t, t + 2):
                    b.titles[title(mp[seat])] = b.titles.get(title(mp[seat]), 0) + 1
    # results by unit: the duplicate pair (both matches needed) or the match
    units, paired, h2h = counted.units(config.duplicate, [r.cluster for r in played])
    if config.duplicate:
        for [(a, b, score_a)] in units:
            for bot, sc in ((a, score_a), (b, 1 - score_a)):
                line = lines[bot]
                line.pairs_won += sc == 1.0
                line.pairs_drawn += sc == 0.5
                line.pairs_lost += sc == 0.0
    if units:
        intervals = rating_intervals(units, names, samples=samples, seed=seed, prior=PRIOR)
        for n, (r, lo, hi) in intervals.items():
            lines[n].rating, lines[n].low, lines[n].high = r, lo, hi
    fit = gaussian_ratings(paired, names, prior=PRIOR)
    for n, (r, lo, hi) in fit.ratings.items():
        lines[n].paired_rating, lines[n].paired_low, lines[n].paired_high = r, lo, hi
    ranked = sorted(lines.values(), key=lambda b: (-b.rating, -b.score, b.name))
    return Standings(season=season, variant=config.variant,
                     duplicate=config.duplicate, matches_done=len(played),
                     matches_total=len(match_rows), deals=int(counted.deals.sum()),
                     units=len(units), lines=ranked, head_to_head=h2h, matches_failed=failed,
                     paired_sigma=fit.sigma, paired_units=fit.units,
                     history=rating_history(units, names, prior=PRIOR))


#: the sums ``_Counted.add_to`` makes per bot over its team's matches: (its ``BotLine``
#: field, the tally column of its team ``{t}`` or of the other one ``{o}``)
_SUMS = (("net_levels", "net_{t}"), ("strikes", "strikes_{t}"), ("deals", "deal_count"),
         ("level_gain", "gain_{t}"), ("attack_deals", "attacks_{t}"),
         ("attack_points", "attack_points_{t}"), ("defend_deals", "attacks_{o}"),
         ("conceded_points", "attack_points_{o}"))
_INTEGERS = ("deal_count", "net_0", "net_1", "strikes_0", "strikes_1", "gain_0", "gain_1",
             "attacks_0", "attacks_1", "attack_points_0", "attack_points_1")


class _Counted:
    """The played matches' tallies as arrays, a row a match in play order: each team's bot
    (an index into the season's bots), the tally columns, the forfeiting team (-1: none)
    and team 0's continuous outcome of each deal (``deals_played`` of them)."""

    def __init__(self, played: list[CountedMatch], names: list[str]) -> None:
        self.names = names
        index = {n: i for i, n in enumerate(names)}
        teams: dict[tuple, tuple[int, int]] = {}  # seats -> the bots of team 0 and team 1
        for row in played:
            if row.seats not in teams:
                teams[row.seats] = (index[row.seats[0]], index[row.seats[1]])
        n = len(played)
        self.team = np.array([teams[r.seats] for r in played], dtype=np.int64).reshape(n, 2)
        columns = np.array(list(map(attrgetter(*_INTEGERS), played)), dtype=np.int64
                           ).reshape(n, len(_INTEGERS))
        self.column = dict(zip(_INTEGERS, columns.T))
        self.deals = self.column["deal_count"]
        self.score = np.array(list(map(attrgetter("score_0", "score_1"), played)), dtype=float
                              ).reshape(n, 2)
        self.forfeit = np.array([-1 if r.forfeit_team is None else r.forfeit_team
                                 for r in played], dtype=np.int64)
        outcomes = [r.deal_scores or [] for r in played]  # (tallied: never None)
        self.deals_played = np.array([len(x) for x in outcomes], dtype=np.int64)
        self.outcome = np.zeros((n, max(self.deals_played.tolist(), default=0)))
        for i, x in enumerate(outcomes):
            self.outcome[i, :len(x)] = x

    def add_to(self, lines: dict[str, BotLine]) -> None:
        """Each bot's matches, W-D-L, forfeits, levels, deals, points and strikes."""
        fields = ["matches", "wins", "draws", "losses", "forfeits"] + [f for f, _ in _SUMS]
        total = np.zeros((len(self.names), len(fields)), dtype=np.int64)
        for t in (0, 1):
            sc = self.score[:, t]
            got = [np.ones_like(self.deals), sc == 1.0, sc == 0.5, sc == 0.0,
                   self.forfeit == t] + [self.column[c.format(t=t, o=1 - t)] for _, c in _SUMS]
            np.add.at(total, self.team[:, t], np.column_stack(got).astype(np.int64))
        for name, sums in zip(self.names, total.tolist()):
            for f, v in zip(fields, sums):
                setattr(lines[name], f, v)

    def units(self, duplicate: bool, clusters: list[str]) -> tuple[list, list, dict]:
        """The rated units in play order, each ``[(a, b, a's score)]`` (a duplicate pair with
        both its matches played; in a plain season a match), each unit's ``(a, b, a's paired
        difference per deal)`` as ``pair_result`` has it, and the head-to-head matrix (in a
        plain season each cluster's last match only)."""
        by_cluster: dict[str, list[int]] = {}
        for i, key in enumerate(clusters):
            by_cluster.setdefault(key, []).append(i)
        if duplicate:
            groups = [ms for ms in by_cluster.values() if len(ms) >= 2]
        else:
            groups = [[m] for ms in by_cluster.values() for m in ms]
        first = np.array([ms[0] for ms in groups], dtype=np.int64)
        a, b = self.team[first, 0], self.team[first, 1]
        if duplicate:
            score, diff = self._pairs(groups, a, b)
            counted = np.ones(len(groups), dtype=bool)
        else:
            score = self.score[first, 0]
            diff = self._diffs([(first, np.ones(len(first)), np.zeros(len(first)))])
            last = {ms[-1] for ms in by_cluster.values()}
            counted = np.array([ms[0] in last for ms in groups], dtype=bool)
        a_name = [self.names[i] for i in a.tolist()]
        b_name = [self.names[i] for i in b.tolist()]
        units = [[game] for game in zip(a_name, b_name, score.tolist())]
        paired = list(zip(a_name, b_name, diff.tolist()))
        return units, paired, self._head_to_head(a[counted], b[counted], score[counted])

    def _quitter(self, rows: np.ndarray) -> np.ndarray:
        """The bot of each match's forfeiting team; -1 where nobody forfeited."""
        ft = self.forfeit[rows]
        return np.where(ft >= 0, self.team[rows, np.clip(ft, 0, 1)], -1)

    def _pairs(self, groups: list[list[int]], a: np.ndarray,
               b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each duplicate pair's W/D/L score for ``a`` and ``a``'s paired difference per deal,
        as ``pair_result`` has them (which it gives for any pair not of two matches with
        ``a`` in both)."""
        first = np.array([ms[0] for ms in groups], dtype=np.int64)
        second = np.array([ms[1] for ms in groups], dtype=np.int64)
        same = self.team[second, 0] == a  # a on team 0 in both matches
        net_a = self.column["net_0"][first] + np.where(same, self.column["net_0"][second],
                                                       self.column["net_1"][second])
        quit_1, quit_2 = self._quitter(first), self._quitter(second)
        a_quit = (quit_1 == a) | (quit_2 == a)
        b_quit = (quit_1 == b) | (quit_2 == b)
        score = np.where((quit_1 >= 0) | (quit_2 >= 0),  # a forfeit loses the pair
                         np.where(a_quit & ~b_quit, 0.0, np.where(b_quit & ~a_quit, 1.0, 0.5)),
                         np.where(net_a > 0, 1.0, np.where(net_a < 0, 0.0, 0.5)))
        fill = [np.where(q < 0, 0.0, np.where(q == a, -FORFEIT_OUTCOME, FORFEIT_OUTCOME))
                for q in (quit_1, quit_2)]
        diff = self._diffs([(first, np.ones(len(first)), fill[0]),
                            (second, np.where(same, 1.0, -1.0), fill[1])])
        other = (np.array([len(ms) for ms in groups]) != 2) | ~(
            same | (self.team[second, 1] == a))
        for k in np.flatnonzero(other).tolist():
            got = self._pair_result(groups[k])
            score[k], diff[k] = got["score"], got["diff"]
        return score, diff

    def _pair_result(self, ms: list[int]) -> dict:
        """``pair_result`` of the matches ``ms``."""
        teams = [[self.names[i] for i in self.team[m].tolist()] for m in ms]
        counted = [SimpleNamespace(net=(int(self.column["net_0"][m]),
                                        int(self.column["net_1"][m])),
                                   forfeit_team=None if self.forfeit[m] < 0
                                   else int(self.forfeit[m])) for m in ms]
        scores = [self.outcome[m, :self.deals_played[m]].tolist() for m in ms]
        return pair_result(teams[0][0], teams, counted, scores)

    def _diffs(self, plays: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> np.ndarray:
        """Each unit's paired difference per deal, by ``pair_result``'s operations in its
        order; ``plays[m]``: the unit's m-th match (rows), the sign of a's side in it, and
        the outcome of a deal it left unplayed."""
        n = np.max([self.deals_played[rows] for rows, _, _ in plays], axis=0)
        total = np.zeros(len(n))
        for j in range(self.outcome.shape[1]):
            deal = np.zeros(len(n))
            for rows, sign, fill in plays:
                deal = deal + np.where(j < self.deals_played[rows],
                                       sign * self.outcome[rows, j], fill)
            total = np.where(j < n, total + deal / len(plays), total)
        return np.where(n > 0, total / np.maximum(n, 1), 0.0)

    def _head_to_head(self, a: np.ndarray, b: np.ndarray,
                      score: np.ndarray) -> dict[str, dict[str, list[float]]]:
        """Row bot -> column bot -> [its score, units] over the units given."""
        k = len(self.names)
        won, met = np.zeros((k, k)), np.zeros((k, k), dtype=np.int64)
        np.add.at(won, (a, b), score)
        np.add.at(won, (b, a), 1 - score)
        np.add.at(met, (a, b), 1)
        np.add.at(met, (b, a), 1)
        won_, met_ = won.tolist(), met.tolist()
        return {x: {y: [won_[i][j], met_[i][j]] for j, y in enumerate(self.names) if y != x}
                for i, x in enumerate(self.names)}


def table(st: Standings) -> str:
    """The standings as a text table, ratings first, then the head-to-head matrix."""
    unit = "pairs" if st.duplicate else "matches"
    out = [f"season {st.season} ({st.variant}, {'duplicate' if st.duplicate else 'plain'}): "
           f"{st.matches_done}/{st.matches_total} matches, {st.deals} deals, {st.units} rated "
           f"{unit}"]
    if st.matches_failed:
        out[0] += (f"; {st.matches_failed} set aside (failed by the infrastructure, counted for "
                   f"nobody: arena matches {st.season} --faults)")
    head = (f"{'#':>2} {'bot':<16} {'rating':>7} {'95% interval':>17} {'W-D-L':>11} "
            f"{'pairs W-D-L':>12} {'levels':>7} {'att pts':>8} {'conceded':>8} {'strikes':>7}")
    if st.lines and st.lines[0].match_points is not None:
        head += f" {'match pts':>9}  title"
    out.append(head)
    for i, b in enumerate(st.lines, 1):
        att = f"{b.attack_points / b.attack_deals:.1f}" if b.attack_deals else "-"
        con = f"{b.conceded_points / b.defend_deals:.1f}" if b.defend_deals else "-"
        pairs = f"{b.pairs_won}-{b.pairs_drawn}-{b.pairs_lost}" if st.duplicate else "-"
        line = (f"{i:>2} {b.name:<16} {b.rating:>7.1f} [{b.low:>7.1f},{b.high:>7.1f}] "
                f"{int(b.wins):>3}-{int(b.draws)}-{int(b.losses):<3} {pairs:>12} "
                f"{b.net_levels:>+7d} {att:>8} {con:>8} {b.strikes:>7}")
        if b.match_points is not None:
            top = max(b.titles.items(), key=lambda kv: kv[1])[0] if b.titles else "-"
            line += f" {b.match_points:>9}  {top}"
        out.append(line)
    out.append("")
    out.append(f"head to head (row's score against column, over {unit}):")
    names = [b.name for b in st.lines]
    width = max(8, *(len(n) for n in names)) if names else 8
    out.append(" " * (width + 1) + " ".join(f"{n[:width]:>{width}}" for n in names))
    for a in names:
        cells = []
        for against in names:
            if a == against:
                cells.append(f"{'-':>{width}}")
            else:
                sc, n = st.head_to_head[a][against]
                cells.append(f"{f'{sc:g}/{n}':>{width}}" if n else f"{'.':>{width}}")
        out.append(f"{a[:width]:<{width}} " + " ".join(cells))
    out.append("")
    out.append("rating: Bradley-Terry on the Elo scale (mean 0); interval: 95%, resampled and "
               "simulated, over "
               f"{unit}; levels: net level gain; att pts / conceded: mean points per deal")
    out.append(f"rating shown: Bradley-Terry on {unit} won/drawn/lost; beside it, the Gaussian "
               f"model on paired differences (levels per deal, 95%): " + ", ".join(
                   f"{b.name} {b.paired_rating:+.3f} [{b.paired_low:+.3f},{b.paired_high:+.3f}]"
                   for b in st.lines))
    return "\n".join(out)


def to_csv(st: Standings) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["rank", "bot", "rating", "low", "high", "matches", "wins", "draws", "losses",
                "pairs_won", "pairs_drawn", "pairs_lost", "deals", "net_levels", "level_gain",
                "attack_points_per_deal", "conceded_per_deal", "strikes", "forfeits",
                "match_points"])
    for i, b in enumerate(st.lines, 1):
        w.writerow([i, b.name, round(b.rating, 1), round(b.low, 1), round(b.high, 1),
                    b.matches, int(b.wins), int(b.draws), int(b.losses), b.pairs_won,
                    b.pairs_drawn, b.pairs_lost, b.deals, b.net_levels, b.level_gain,
                    round(b.attack_points / b.attack_deals, 2) if b.attack_deals else "",
                    round(b.conceded_points / b.defend_deals, 2) if b.defend_deals else "",
                    b.strikes, b.forfeits, "" if b.match_points is None else b.match_points])
    return buf.getvalue()
