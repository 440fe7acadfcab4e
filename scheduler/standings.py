"""Standings of a season: results per bot, ratings with bootstrap intervals, head to head.

The unit of a result is what removes the luck of the cards. In a duplicate season that is the
duplicate pair: the two matches on the same deals with the partnerships swapped; a bot wins the
pair when its net level gain over both matches is larger than its opponent's. In a plain season
it is the match. Ratings are a Bradley-Terry fit of those results on the Elo scale; the 95%
interval of each bot is the envelope of a bootstrap that resamples whole units (a pair is never
split) and one that simulates the season from the fitted ratings (see ``ratings``).

Beside them, in the same units, a Gaussian model on paired differences (``paired_rating``,
``scheduler.power``): each unit's continuous score (a pair's paired difference per deal, or a
plain match's mean deal outcome) is normal with mean r_a - r_b; ratings in levels per deal. The
table shows Bradley-Terry and says so (``rating_shown``); docs/statistics.md has the model.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from dataclasses import asdict, dataclass, field

from referee.match.matchfile import MatchSummary
from referee.rules import family_of, rules_for

from scheduler.power import gaussian_ratings
from scheduler.scores import deal_scores, pair_result
from scheduler.ratings import rating_history, rating_intervals

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


def compute(season: dict, match_rows: list[dict], *, samples: int = 1000,
            seed: int = 0) -> Standings:
    """Standings from the stored season config and its match rows (with results)."""
    config = json.loads(season["config_json"])
    names = list(config["bots"])
    lines = {n: BotLine(n) for n in names}
    title = family_of(rules_for(config["variant"])).title  # match points (积分) and titles
    keeps_match_points = title is not None
    if keeps_match_points:
        for b in lines.values():
            b.match_points = 0
    clusters: dict[str, list[dict]] = defaultdict(list)
    done = 0
    deals_total = 0
    failed = sum(1 for row in match_rows if row.get("status") == "failed")
    for row in match_rows:
        if row.get("summary_json") is None:  # not played yet, or set aside
            continue
        done += 1
        s = MatchSummary.from_dict(json.loads(row["summary_json"]), f"match {row['id']}: summary")
        seats = json.loads(row["seats_json"])
        team_bot = [seats[0], seats[1]]
        clusters[row["cluster"]].append({"teams": team_bot, "summary": s,
                                         "scores": deal_scores(s, config["variant"])})
        deals_total += len(s.deals)
        for t, name in enumerate(team_bot):
            b = lines[name]
            b.matches += 1
            sc = s.score[t]
            b.wins += sc == 1.0
            b.draws += sc == 0.5
            b.losses += sc == 0.0
            b.net_levels += s.net[t]
            if s.forfeit_team == t:
                b.forfeits += 1
            if s.strikes:
                b.strikes += s.strikes[t] + s.strikes[t + 2]
            for d in s.deals:
                b.deals += 1
                b.level_gain += d.gain[t]
                if d.attackers == t:
                    b.attack_deals += 1
                    b.attack_points += d.attacker_total
                elif d.attackers is not None:
                    b.defend_deals += 1
                    b.conceded_points += d.attacker_total
            if keeps_match_points and s.match_points:
                mp = s.match_points
                b.match_points += mp[t] + mp[t + 2]
                for seat in (t, t + 2):
                    b.titles[title(mp[seat])] = b.titles.get(title(mp[seat]), 0) + 1
    # results by unit: the duplicate pair (both matches needed) or the match
    units: list[list[tuple[str, str, float]]] = []
    paired: list[tuple[str, str, float]] = []  # (a, b, a's paired difference per deal)
    h2h: dict[str, dict[str, list[float]]] = {a: {b: [0.0, 0] for b in names if b != a}
                                              for a in names}
    for key, ms in clusters.items():
        if config["duplicate"]:
            if len(ms) < 2:
                continue  # half a pair says nothing the other half does not cancel
            a, b = ms[0]["teams"]
            net_a = sum(m["summary"].net[m["teams"].index(a)] for m in ms)
            forfeit = [m["teams"][m["summary"].forfeit_team] for m in ms
                       if m["summary"].forfeit_team is not None]
            if forfeit:  # a forfeit loses the pair
                score_a = 0.0 if a in forfeit and b not in forfeit else (
                    1.0 if b in forfeit and a not in forfeit else 0.5)
            else:
                score_a = 1.0 if net_a > 0 else 0.0 if net_a < 0 else 0.5
            for bot, sc in ((a, score_a), (b, 1 - score_a)):
                line = lines[bot]
                line.pairs_won += sc == 1.0
                line.pairs_drawn += sc == 0.5
                line.pairs_lost += sc == 0.0
            units.append([(a, b, score_a)])
            paired.append((a, b, pair_result(a, [m["teams"] for m in ms],
                                              [m["summary"] for m in ms],
                                              [m["scores"] for m in ms])["diff"]))
        else:
            for m in ms:
                a, b = m["teams"]
                units.append([(a, b, m["summary"].score[0])])
                got = pair_result(a, [m["teams"]], [m["summary"]], [m["scores"]])
                paired.append((a, b, got["diff"]))
        for a, b, sc in units[-1]:
            h2h[a][b][0] += sc
            h2h[a][b][1] += 1
            h2h[b][a][0] += 1 - sc
            h2h[b][a][1] += 1
    if units:
        intervals = rating_intervals(units, names, samples=samples, seed=seed, prior=PRIOR)
        for n, (r, lo, hi) in intervals.items():
            lines[n].rating, lines[n].low, lines[n].high = r, lo, hi
    fit = gaussian_ratings(paired, names, prior=PRIOR)
    for n, (r, lo, hi) in fit.ratings.items():
        lines[n].paired_rating, lines[n].paired_low, lines[n].paired_high = r, lo, hi
    ranked = sorted(lines.values(), key=lambda b: (-b.rating, -b.score, b.name))
    return Standings(season=season["name"], variant=config["variant"],
                     duplicate=config["duplicate"], matches_done=done,
                     matches_total=len(match_rows), deals=deals_total, units=len(units),
                     lines=ranked, head_to_head=h2h, matches_failed=failed,
                     paired_sigma=fit.sigma, paired_units=fit.units,
                     history=rating_history(units, names, prior=PRIOR))


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
        for b in names:
            if a == b:
                cells.append(f"{'-':>{width}}")
            else:
                sc, n = st.head_to_head[a][b]
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
