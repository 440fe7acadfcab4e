"""Evaluation power: finer scores than a pair's win/loss, estimators of one bot's edge over
another, the deals each needs, a paired-score SPRT and a Gaussian model for the standings.

The continuous outcome of a deal for a team (``deal_outcome``) is its level gain minus the
other team's, plus the points it took minus the points the other team kept, counted at one
level per *point step* (a fifth of the deck's face points: 20 in single-deck, 40 in two-deck,
60 in three-deck) and halved, so a two-deck deal where the attackers take 140 adds
(140 - 60) / 80 = +1 level to the attackers. A duplicate deal is played twice on the same cards
with the partnerships swapped; its paired difference for bot A is the mean of A's outcome in
the two plays. See docs/statistics.md for the estimators and why each is unbiased. The deals
themselves are played by the study (``lab.study``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from scheduler.stats.ratings import Z95, WaldBounds

ESTIMATORS = ("plain", "duplicate_wdl", "duplicate_diff", "control_variate")

VALUE_WEIGHTS = {"big_joker": 3.0, "little_joker": 2.5, "level": 2.0, "ace": 1.0, "king": 0.5,
                 "point": 0.05, "long_suit": 0.5}


def hand_value(cards: Sequence[int], level_rank: int) -> float:
    """The strength of one seat's dealt cards (0-53 each) when ``level_rank`` (0 = "2") is the
    level: a fixed, hand-made score (``VALUE_WEIGHTS``), not fitted to any result."""
    w = VALUE_WEIGHTS
    total = 0.0
    suits = [0, 0, 0, 0]
    for c in cards:
        if c == 53:
            total += w["big_joker"]
        elif c == 52:
            total += w["little_joker"]
        else:
            rank = c % 13
            if rank == level_rank:
                total += w["level"]
            else:
                suits[c // 13] += 1
                total += w["ace"] if rank == 12 else w["king"] if rank == 11 else 0.0
            total += w["point"] * (5 if rank == 3 else 10 if rank in (8, 11) else 0)
    total += w["long_suit"] * max(0.0, max(suits) - len(cards) / 4)
    return total


def card_luck(hands: Sequence[Sequence[int]], level_rank: int) -> float:
    """Team 0's card luck: the value of seats 0 and 2's dealt cards minus seats 1 and 3's.
    The four hands of a shuffled deck are exchangeable, so its expectation is exactly 0."""
    v = [hand_value(h, level_rank) for h in hands]
    return v[0] + v[2] - v[1] - v[3]


# -- a duplicate deal's scores --------------------------------------------------------------
@dataclass(frozen=True)
class SequentialResult:
    """A sequential test over duplicate pairs, as it ended: the pairs and deals played, the
    pairs' W/D/L tally, the pair-W/D/L test's LLR, the chosen test's verdict ("H1", "H0", or
    None: none within the pairs allowed) and the pairs it took; for a run of both tests on
    one stream (``lab.study.run_sequential``), the paired test's LLR, the mean paired
    difference, and where each test stopped (``stops``: test -> (pairs, verdict or None))."""

    pairs: int
    deals: int
    wins: int
    draws: int
    losses: int
    llr_wdl: float
    decision: str | None
    decided_at: int
    llr_diff: float | None = None
    mean_diff: float | None = None
    stops: dict[str, tuple[int, str | None]] = field(default_factory=dict)


@dataclass
class DealPair:
    """One deal played twice: A on team 0 in the first play, on team 1 in the second. ``a1``
    and ``a2``: A's continuous outcome in each; ``net1``/``net2``: A's net level gain in each;
    ``luck``: A's card luck in the first play (``card_luck`` of team 0)."""

    seed: str
    a1: float
    a2: float
    net1: int
    net2: int
    luck: float
    forfeit: str | None = None  # a bot that forfeited one of the plays


# -- the estimators ----------------------------------------------------------------------
def _units(pairs: Sequence[DealPair], name: str, per_set: int,
           sets: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """The samples of estimator ``name`` and the deals each costs. ``sets``: the set indices
    (a resample) to take, in order; all sets by default."""
    n_sets = len(pairs) // per_set
    if sets is None:
        sets = np.arange(n_sets)
    kept = pairs[:n_sets * per_set]
    a1 = np.array([p.a1 for p in kept]).reshape(n_sets, per_set)[sets]
    a2 = np.array([p.a2 for p in kept]).reshape(n_sets, per_set)[sets]
    # a deal played once: deal i's first play (A on team 0) when i // 2 is even, else its
    # second (A on team 1); with the dealer at seat i % 4, A is on each side and its team the
    # dealer's for half of the deals, so no advantage of a seat counts for or against it
    first = np.array([(i // 2) % 2 == 0 for i in range(len(kept))]).reshape(n_sets, per_set)[sets]
    once = np.where(first, a1, a2)
    if name == "plain":
        return once.ravel(), 1
    if name == "duplicate_diff":
        return ((a1 + a2) / 2).ravel(), 2
    if name == "duplicate_wdl":
        net = np.array([p.net1 + p.net2 for p in pairs[:n_sets * per_set]]
                       ).reshape(n_sets, per_set)[sets].sum(axis=1)
        forfeit = ["".join(p.forfeit or "" for p in pairs[k * per_set:(k + 1) * per_set])
                   for k in map(int, sets)]
        w = np.sign(net).astype(float)
        for i, sides in enumerate(forfeit):  # a forfeit loses the pair, as in the standings
            if sides:
                w[i] = -1.0 if "a" in sides and "b" not in sides else \
                    1.0 if "b" in sides and "a" not in sides else 0.0
        return w, 2 * per_set
    if name == "control_variate":
        luck = np.array([p.luck for p in kept]).reshape(n_sets, per_set)[sets]
        luck = np.where(first, luck, -luck)  # A's luck in the play counted: on team 1, -L
        fold = (sets % 2)[:, None] * np.ones((1, per_set), dtype=int)
        x, h, f = once.ravel(), luck.ravel(), fold.ravel()
        out = x.copy()
        for k in (0, 1):  # each fold's coefficient from the other fold: cross-fitted
            other = f != k
            c = _slope(x[other], h[other])
            out[f == k] = x[f == k] - c * h[f == k]
        return out, 1
    raise ValueError(f"unknown estimator {name!r}: expected one of {', '.join(ESTIMATORS)}")


def _slope(x: np.ndarray, h: np.ndarray) -> float:
    """The least-squares coefficient of ``x`` on ``h`` (0 when ``h`` does not vary)."""
    if len(h) < 2:
        return 0.0
    vh = float(np.var(h))
    return float(np.mean((x - x.mean()) * (h - h.mean())) / vh) if vh > 0 else 0.0


def deals_needed(mean: float, variance_per_deal: float, z: float = Z95) -> float:
    """Deals for the 95% interval of the mean to exclude 0 when the true edge is ``mean``:
    z^2 * variance / mean^2 (infinite for no edge)."""
    if mean == 0:
        return math.inf
    return z * z * variance_per_deal / (mean * mean)


@dataclass
class Estimate:
    name: str
    units: int
    deals: int
    variance_per_deal: float
    mean: float
    interval: tuple[float, float]
    deals_needed: float
    variance_interval: tuple[float, float] = (0.0, 0.0)
    mean_interval: tuple[float, float] = (0.0, 0.0)
    deals_needed_interval: tuple[float, float] = (0.0, 0.0)

    def to_dict(self) -> dict:
        def num(x):
            return None if not math.isfinite(x) else round(float(x), 6)
        return {"name": self.name, "units": self.units, "deals": self.deals,
                "variance_per_deal": num(self.variance_per_deal),
                "variance_per_deal_interval": [num(x) for x in self.variance_interval],
                "mean": num(self.mean), "interval": [num(x) for x in self.interval],
                "mean_interval": [num(x) for x in self.mean_interval],
                "deals_needed": num(self.deals_needed),
                "deals_needed_interval": [num(x) for x in self.deals_needed_interval]}


CONTINUOUS = ("plain", "duplicate_diff", "control_variate")  # estimators of one same edge


def _point(x: np.ndarray, cost: int) -> tuple[float, float, float]:
    """(mean, variance per deal, half-width of the 95% interval of the mean) of samples."""
    n = len(x)
    mean = float(x.mean())
    var = float(x.var(ddof=1)) if n > 1 else 0.0
    return mean, var * cost, Z95 * math.sqrt(var / n) if n else math.inf


def _points(pairs, per_set: int, names: Sequence[str], sets=None) -> dict[str, tuple]:
    """Each estimator's (mean, variance per deal, half-width, deals needed). plain,
    duplicate_diff and control_variate estimate the same edge (A's expected continuous outcome
    per deal): their deals needed are all taken at the edge estimated by the most precise of
    them (so their ratios are those of their variances); duplicate_wdl's at its own mean."""
    got = {}
    for name in names:
        x, cost = _units(pairs, name, per_set, sets)
        got[name] = _point(x, cost)
    common = [n for n in names if n in CONTINUOUS]
    edge = got[min(common, key=lambda n: got[n][1])][0] if common else None
    return {n: (m, v, h, deals_needed(edge if n in CONTINUOUS and edge is not None else m, v))
            for n, (m, v, h) in got.items()}


def estimate(pairs: Sequence[DealPair], per_set: int = 4, samples: int = 1000,
             seed: int = 0, names: Sequence[str] = ESTIMATORS) -> list[Estimate]:
    """Every estimator on the same deals, each with a bootstrap (resampling whole sets of
    ``per_set`` deals, ``samples`` times) of its variance, mean and deals needed."""
    n_sets = len(pairs) // per_set
    if n_sets < 2:
        raise ValueError(f"at least 2 sets of {per_set} deals are needed, got {len(pairs)} "
                         "deals")
    rng = np.random.default_rng(seed)
    point = _points(pairs, per_set, names)
    boots = [_points(pairs, per_set, names, rng.integers(0, n_sets, n_sets))
             for _ in range(samples)]
    out = []
    for name in names:
        mean, vpd, half, need = point[name]
        boot = np.array([b[name] for b in boots])
        lo, hi = np.quantile(boot, [0.025, 0.975], axis=0, method="nearest")
        x, cost = _units(pairs, name, per_set)
        out.append(Estimate(name, len(x), len(x) * cost, vpd, mean, (mean - half, mean + half),
                            need, (lo[1], hi[1]), (lo[0], hi[0]), (lo[3], hi[3])))
    return out


def running(pairs: Sequence[DealPair], name: str, per_set: int = 4) -> dict[str, list[float]]:
    """The estimate of ``name`` after each set: deals played, mean, and its 95% interval."""
    n_sets = len(pairs) // per_set
    out: dict[str, list[float]] = {"deals": [], "mean": [], "low": [], "high": []}
    x, cost = _units(pairs, name, per_set)
    k = len(x) // n_sets  # samples per set
    for s in range(2, n_sets + 1):
        if name == "control_variate":  # its coefficients from the data seen so far
            x, _ = _units(pairs[:s * per_set], name, per_set)
        mean, _, half = _point(x[:s * k], cost)
        out["deals"].append(s * k * cost)
        out["mean"].append(mean)
        out["low"].append(mean - half)
        out["high"].append(mean + half)
    return out


def plot(pairs: Sequence[DealPair], path: str | Path, per_set: int, title: str) -> None:
    """A PNG of each estimator's running estimate with its 95% interval against deals played."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
    for ax, name in zip(axes.ravel(), ESTIMATORS):
        r = running(pairs, name, per_set)
        ax.fill_between(r["deals"], r["low"], r["high"], alpha=0.3)
        ax.plot(r["deals"], r["mean"])
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.set_title(name)
        ax.set_xlabel("deals played")
        ax.set_ylabel("pair wins - losses" if name == "duplicate_wdl" else "levels per deal")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


# -- SPRT on paired scores ----------------------------------------------------------------
@dataclass
class PairedSprt(WaldBounds):
    """A sequential test on continuous paired scores (a duplicate pair's mean paired
    difference per deal): H0 their mean is ``d0``, H1 it is ``d1``, the normal approximation of
    the generalised SPRT as fishtest runs it on game pairs: with m the mean of the N scores and
    v their variance, LLR = N (d1 - d0) (2 m - d0 - d1) / (2 v), against Wald's bounds.

    v is the sample variance times (N + ``pad``) / N: an estimated variance is too small about
    half the time and the LLR, divided by it, then overshoots; without the factor, simulated
    error rates were 6-7% for a nominal 5% when d1 - d0 is a quarter of the scores' spread or
    more, with it 3-5% (tests/scheduler/test_power.py, docs/statistics.md). No decision before
    ``min_pairs`` scores."""

    d0: float
    d1: float
    alpha: float = 0.05
    beta: float = 0.05
    min_pairs: int = 8
    pad: float = 10.0

    def __post_init__(self) -> None:
        if not self.d1 > self.d0:
            raise ValueError(f"d1 must be greater than d0, got d0={self.d0!r}, d1={self.d1!r}")
        self.check_error_rates()

    def llr_of(self, n: int, total: float, squares: float) -> float:
        """The LLR from the count, sum and sum of squares of the scores."""
        if n < 2:
            return 0.0
        mean = total / n
        var = max((squares - n * mean * mean) / (n - 1), 0.0) * (n + self.pad) / n
        var = max(var, 1e-12 * max(1.0, squares / n))
        return n * (self.d1 - self.d0) * (2 * mean - self.d0 - self.d1) / (2 * var)

    def llr(self, scores: Sequence[float]) -> float:
        x = np.asarray(scores, dtype=float)
        return self.llr_of(len(x), float(x.sum()), float((x * x).sum()))

    def decide(self, scores: Sequence[float]) -> str | None:
        if len(scores) < self.min_pairs:
            return None
        value = self.llr(scores)
        return "H1" if value >= self.upper else "H0" if value <= self.lower else None


def stopping_points(pair_scores: Sequence[tuple[float, float]], paired: PairedSprt,
                    wdl) -> dict:
    """On one stream of pairs, each (W/D/L score, paired difference), where each test stops:
    {"diff": (pairs, decision), "wdl": (pairs, decision)}; (len, None) when it did not."""
    out: dict[str, tuple[int, str | None]] = {}
    scores: list[float] = []
    for i, (_, d) in enumerate(pair_scores, 1):
        scores.append(d)
        got = paired.decide(scores)
        if got:
            out["diff"] = (i, got)
            break
    out.setdefault("diff", (len(pair_scores), None))
    tally = [0, 0, 0]
    for i, (w, _) in enumerate(pair_scores, 1):
        tally[0 if w == 1.0 else 1 if w == 0.5 else 2] += 1
        got = wdl.decide(*tally)
        if got:
            out["wdl"] = (i, got)
            break
    out.setdefault("wdl", (len(pair_scores), None))
    return out


def set_scores(pairs: Sequence[DealPair], per_set: int) -> list[tuple[float, float]]:
    """Each set of ``per_set`` deals as a duplicate pair: (A's W/D/L score, A's mean paired
    difference per deal)."""
    out = []
    for k in range(len(pairs) // per_set):
        chunk = pairs[k * per_set:(k + 1) * per_set]
        net = sum(p.net1 + p.net2 for p in chunk)
        out.append((1.0 if net > 0 else 0.0 if net < 0 else 0.5,
                    sum((p.a1 + p.a2) / 2 for p in chunk) / len(chunk)))
    return out


# -- the standings' Gaussian model --------------------------------------------------------
@dataclass
class GaussianFit:
    """Ratings from paired differences: each unit's difference d (bot a against bot b, per
    deal) is modelled as normal with mean r_a - r_b and one variance for all; ratings are the
    least-squares fit with ``prior`` virtual units of 0 against an average bot (a ridge that
    keeps a bot with few units near 0), centred to mean 0; 95% intervals from the fit's
    covariance."""

    ratings: dict[str, tuple[float, float, float]]
    sigma: float
    units: int
    prior: float = field(default=2.0)


def gaussian_ratings(units: Sequence[tuple[str, str, float]], players: Sequence[str],
                     prior: float = 2.0) -> GaussianFit:
    """Fit ``GaussianFit`` to ``units``: (a, b, a's paired difference per deal)."""
    names = list(dict.fromkeys(players))
    k = len(names)
    index = {n: i for i, n in enumerate(names)}
    if not units or k == 0:
        return GaussianFit({n: (0.0, 0.0, 0.0) for n in names}, 0.0, 0, prior)
    X = np.zeros((len(units), k))
    y = np.zeros(len(units))
    for u, (a, b, d) in enumerate(units):
        X[u, index[a]] += 1.0
        X[u, index[b]] -= 1.0
        y[u] = d
    A = X.T @ X + prior * np.eye(k)
    r = np.linalg.solve(A, X.T @ y)
    resid = y - X @ r
    dof = max(1, len(units) - (k - 1))
    sigma2 = float(resid @ resid) / dof if len(units) > 1 else float(y @ y)
    C = np.eye(k) - np.ones((k, k)) / k
    cov = sigma2 * C @ np.linalg.inv(A) @ C
    r = C @ r
    half = Z95 * np.sqrt(np.clip(np.diag(cov), 0.0, None))
    return GaussianFit({n: (float(r[i]), float(r[i] - half[i]), float(r[i] + half[i]))
                        for n, i in index.items()}, math.sqrt(sigma2), len(units), prior)


def resampled_stops(pairs: Sequence[DealPair], per_set: int, paired: PairedSprt, wdl,
                    streams: int = 1000, max_pairs: int = 2000, seed: int = 0) -> dict:
    """Both tests on ``streams`` streams of duplicate pairs drawn with replacement from these
    pairs (each stream fed to both tests alike): for each test the median and mean number of
    pairs to a decision (a stream undecided at ``max_pairs`` counts ``max_pairs``), the share
    of H1 decisions, and the share of streams where the paired test stopped first, together
    or later."""
    scores = set_scores(pairs, per_set)
    rng = random.Random(seed)
    got: dict[str, list] = {"diff": [], "wdl": []}
    earlier = same = 0
    for _ in range(streams):
        stops = {}
        total = squares = 0.0
        tally = [0, 0, 0]
        for i in range(1, max_pairs + 1):
            w, d = scores[rng.randrange(len(scores))]
            total, squares = total + d, squares + d * d
            tally[0 if w == 1.0 else 1 if w == 0.5 else 2] += 1
            if "diff" not in stops and i >= paired.min_pairs:
                value = paired.llr_of(i, total, squares)
                if value >= paired.upper or value <= paired.lower:
                    stops["diff"] = (i, "H1" if value >= paired.upper else "H0")
            if "wdl" not in stops:
                verdict = wdl.decide(*tally)
                if verdict:
                    stops["wdl"] = (i, verdict)
            if len(stops) == 2:
                break
        for key in ("diff", "wdl"):
            got[key].append(stops.get(key, (max_pairs, None)))
        a, b = got["diff"][-1][0], got["wdl"][-1][0]
        earlier += a < b
        same += a == b
    out: dict[str, Any] = {}
    for key, runs in got.items():
        lengths = sorted(r[0] for r in runs)
        out[key] = {"median_pairs": lengths[len(lengths) // 2],
                    "mean_pairs": sum(lengths) / len(lengths),
                    "h1": sum(r[1] == "H1" for r in runs) / len(runs),
                    "undecided": sum(r[1] is None for r in runs) / len(runs)}
    out["diff_first"] = earlier / streams
    out["together"] = same / streams
    out["streams"] = streams
    return out
