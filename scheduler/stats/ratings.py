"""Rating statistics for league standings: Bradley-Terry fits, bootstrap intervals and an SPRT.

Everything is on the Elo scale: a rating difference ``d`` means an expected score of
``1 / (1 + 10 ** (-d / 400))`` for the higher-rated side. A game is ``(a, b, score_a)`` with
``score_a`` in [0, 1]; a draw (0.5) counts as half a win for each side, and any fraction is
allowed. A single fit is plain Python; the intervals' thousands of refits are one batch in
numpy (``_fit_batch``), each row the same fixed point as the single fit.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from scheduler.states import AbVerdict

Game = tuple[str, str, float]

ELO_PER_NAT = 400.0 / math.log(10.0)  # Elo points per unit of natural-log strength
SCORE_FLOOR = 1e-6  # elo_from_score clamps its input to [SCORE_FLOOR, 1 - SCORE_FLOOR]
Z95 = 1.959963984540054  # a 95% interval's half-width in standard errors


def score_from_elo(elo: float) -> float:
    """Expected score of a side rated ``elo`` points above its opponent (logistic, 400 scale)."""
    return _sigmoid(elo / ELO_PER_NAT)


def elo_from_score(score: float) -> float:
    """The Elo difference that gives an expected ``score``; the inverse of score_from_elo.

    The score is clamped to [SCORE_FLOOR, 1 - SCORE_FLOOR] (about +-2400 Elo) so a perfect
    record gives a large finite number rather than infinity.
    """
    s = min(max(float(score), SCORE_FLOOR), 1.0 - SCORE_FLOOR)
    return ELO_PER_NAT * math.log(s / (1.0 - s))


def bradley_terry(
    games: Iterable[Game],
    players: Sequence[str],
    *,
    prior: float = 0.5,
    iterations: int = 10_000,
    tol: float = 1e-6,
) -> dict[str, float]:
    """Fit Bradley-Terry ratings by minorisation-maximisation (Hunter 2004); Elo scale.

    ``prior`` is a pseudo-game count: besides its real games, every player is treated as having
    played ``prior`` draws against a virtual opponent fixed at strength 1 (rating 0 before
    centring). This pulls each rating gently towards the middle, keeps a player who won (or
    lost) every game finite and ties together groups of players who never met. It matters
    little once a player has many more than ``prior`` games. With ``prior=0`` the plain maximum
    likelihood fit is returned, which exists only when every split of the players who have
    games into two groups has each group scoring something against the other; otherwise
    ValueError.

    Each MM step multiplies every player's strength by (actual score / expected score), then
    sets the overall level exactly (plain MM moves it very slowly). The steps are accelerated
    by squared extrapolation (SQUAREM, Varadhan and Roland 2008), falling back to plain steps
    whenever an extrapolation would lower the likelihood. ``iterations`` caps the number of MM
    steps; fitting stops once one step moves no rating by ``tol`` Elo or more.

    Returns a rating for every name in ``players``. Players with no games get 0, and the others
    are shifted so their mean is 0, so the mean over all of ``players`` is 0.
    """
    index = _index(players)
    if not 0 <= prior < math.inf:
        raise ValueError(f"prior must be a finite number >= 0, got {prior!r}")
    if iterations < 1:
        raise ValueError(f"iterations must be at least 1, got {iterations!r}")
    tally = _tally(games, index)
    theta = _fit(tally, len(index), prior, iterations, tol)
    return _ratings(theta, list(index))


def bootstrap_intervals(
    clusters: Sequence[Sequence[Game]],
    players: Sequence[str],
    *,
    samples: int = 1000,
    level: float = 0.95,
    seed: int = 0,
    prior: float = 0.5,
) -> dict[str, tuple[float, float, float]]:
    """Percentile-bootstrap intervals for Bradley-Terry ratings, resampling whole clusters.

    A cluster is a list of games that must stay together (in the league, the two matches of a
    duplicate pair). Clusters are drawn with replacement ``samples`` times using
    numpy's generator seeded with ``seed``, and the fit (this ``prior``) is redone each time.
    Returns ``{player: (rating_on_all_data, low, high)}`` where ``low`` and ``high`` are the
    (1 - level) / 2 and 1 - (1 - level) / 2 percentiles of the refitted ratings (linear
    interpolation between order statistics). A player absent from a resample gets 0 in it, as
    in ``bradley_terry``. ``prior`` must be > 0 here, since a resample can easily contain a
    player who won every game. Each refit starts from the full-data fit and stops at a
    tolerance of 1e-4 Elo.
    """
    index = _index(players)
    if not 0 < prior < math.inf:
        raise ValueError(f"prior must be a finite number > 0 for the bootstrap, got {prior!r}")
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must be strictly between 0 and 1, got {level!r}")
    names = list(index)
    count = len(index)
    cluster_tallies = _tallies(clusters, index)

    whole = _merge(cluster_tallies)
    theta_all = _fit(whole, count, prior, 10_000, 1e-6)
    point = _ratings(theta_all, names)
    if not cluster_tallies:
        return {name: (point[name], point[name], point[name]) for name in names}

    # Clusters with the same tally are interchangeable: a resample is how many times each
    # distinct tally was drawn (a league has few: a pairing and its pair's outcome).
    distinct: dict[tuple, int] = {}
    kinds: list[dict[tuple[int, int], list[float]]] = []
    drawn_kind = []
    known: dict[int, int] = {}  # id of a tally (clusters of the same games share one) -> kind
    for tally in cluster_tallies:
        if id(tally) not in known:
            key = tuple(sorted((pair, n, score) for pair, (n, score) in tally.items()))
            if key not in distinct:
                distinct[key] = len(kinds)
                kinds.append(tally)
            known[id(tally)] = distinct[key]
        drawn_kind.append(known[id(tally)])
    rng = np.random.default_rng(seed)
    k = len(cluster_tallies)
    share = np.bincount(drawn_kind, minlength=len(kinds)) / k
    times = rng.multinomial(k, share, size=samples)  # (samples, kinds): each kind's draws
    pairs = sorted({pair for tally in kinds for pair in tally})
    where = {pair: q for q, pair in enumerate(pairs)}
    per_kind = np.zeros((2, len(kinds), len(pairs)))
    for kk, tally in enumerate(kinds):
        for pair, (n, score) in tally.items():
            per_kind[:, kk, where[pair]] = n, score
    # Start from the full-data fit: the resampled optimum is close, so few steps are needed.
    ratings = _fit_batch(pairs, times @ per_kind[0], times @ per_kind[1], count, prior, 1e-4,
                         start=theta_all)
    draws = {name: list(ratings[:, p]) for p, name in enumerate(names)}
    return _percentile_intervals(point, draws, level)


def simulated_intervals(
    clusters: Sequence[Sequence[Game]],
    players: Sequence[str],
    *,
    samples: int = 1000,
    level: float = 0.95,
    seed: int = 0,
    prior: float = 0.5,
) -> dict[str, tuple[float, float, float]]:
    """Parametric-bootstrap intervals: seasons simulated from the fitted ratings.

    Every game is replayed ``samples`` times with the fitted expected score of its two players
    (a draw with the data's overall draw rate, else a win or a loss), and the ratings refitted.
    Unlike resampling, this does not collapse to a zero-width interval when one player won
    every game; it trusts the model instead of the data's spread. Returns
    ``{player: (rating_on_all_data, low, high)}`` like ``bootstrap_intervals``.
    """
    index = _index(players)
    names = list(index)
    games = [g for cluster in clusters for g in cluster]
    if not 0 <= prior < math.inf:
        raise ValueError(f"prior must be a finite number >= 0, got {prior!r}")
    start = _fit(_tally(games, index), len(names), prior, 10_000, 1e-6)
    point = _ratings(start, names)  # bradley_terry(games, names, prior=prior)
    if not games:
        return {n: (point[n], point[n], point[n]) for n in names}
    draw_rate = sum(1 for _, _, sc in games if sc == 0.5) / len(games)
    rng = np.random.default_rng(seed)
    # every game of a pairing has the same expected score: a simulated season draws, pairing
    # by pairing, how many of its games each side won and how many were drawn
    meetings = Counter((min(index[a], index[b]), max(index[a], index[b])) for a, b, _ in games)
    pairs = sorted(meetings)
    played = np.empty((samples, len(pairs)))
    scored = np.empty((samples, len(pairs)))
    for q, (i, j) in enumerate(pairs):
        n = meetings[(i, j)]
        e = score_from_elo(point[names[i]] - point[names[j]])
        win = min(max(e - draw_rate / 2, 0.0), 1.0 - draw_rate)
        got = rng.multinomial(n, (win, draw_rate, max(0.0, 1.0 - win - draw_rate)),
                              size=samples)
        played[:, q] = n
        scored[:, q] = got[:, 0] + got[:, 1] / 2
    # from the fit the season was simulated from: the refit is close to it
    ratings = _fit_batch(pairs, played, scored, len(names), prior, 1e-4, start=start)
    draws = {n: list(ratings[:, p]) for p, n in enumerate(names)}
    return _percentile_intervals(point, draws, level)


def _percentile_intervals(point: dict[str, float], draws: dict[str, list[float]],
                          level: float) -> dict[str, tuple[float, float, float]]:
    """(point, low, high) per player from its resampled ratings, at the central ``level``."""
    tail = (1.0 - level) / 2.0
    out = {}
    for name, values in draws.items():
        values = sorted(values)
        out[name] = (point[name], _quantile(values, tail), _quantile(values, 1.0 - tail))
    return out


def rating_intervals(
    clusters: Sequence[Sequence[Game]],
    players: Sequence[str],
    *,
    samples: int = 1000,
    level: float = 0.95,
    seed: int = 0,
    prior: float = 0.5,
) -> dict[str, tuple[float, float, float]]:
    """The standings' intervals: for each player the envelope of the resampling bootstrap
    (robust when the model fits badly) and the simulated one (honest when results are
    one-sided, where resampling sees no spread at all). The wider of the two, bound by bound."""
    a = bootstrap_intervals(clusters, players, samples=samples, level=level, seed=seed,
                            prior=prior)
    b = simulated_intervals(clusters, players, samples=samples, level=level, seed=seed,
                            prior=prior)
    return {n: (a[n][0], min(a[n][1], b[n][1]), max(a[n][2], b[n][2])) for n in a}


def rating_history(units: Sequence[Sequence[Game]], players: Sequence[str], *,
                   points: int = 12, prior: float = 0.5) -> list[dict]:
    """Ratings over a season: the Bradley-Terry fit of the first ``k`` units (in play order)
    at up to ``points`` evenly spaced ``k``, the last one all of them. Each entry is
    ``{"units": k, "ratings": {player: elo}}``; point fits only (no intervals)."""
    index = _index(players)
    names = list(index)
    if not units:
        return []
    marks = sorted({max(1, round(len(units) * (i + 1) / points)) for i in range(points)})
    tally: dict[tuple[int, int], list[float]] = {}
    out, taken, theta = [], 0, None
    unit_tallies = _tallies(units, index)
    for k in marks:
        for unit in unit_tallies[taken:k]:
            for pair, (n, score) in unit.items():
                entry = tally.setdefault(pair, [0.0, 0.0])
                entry[0] += n
                entry[1] += score
        taken = k
        theta = _fit(tally, len(names), prior, 10_000, 1e-4, start=theta)
        out.append({"units": k, "ratings": {n: round(r, 2)
                                            for n, r in _ratings(theta, names).items()}})
    return out


class WaldBounds:
    """Wald's stopping bounds of a sequential test with error rates ``alpha`` (accepting H1
    when H0 holds) and ``beta`` (accepting H0 when H1 holds), for a dataclass that has them."""

    alpha: float
    beta: float

    def check_error_rates(self) -> None:
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0 < value < 0.5:
                raise ValueError(f"{name} must be strictly between 0 and 0.5, got {value!r}")

    @property
    def lower(self) -> float:
        """Accept H0 once the LLR falls to this: ln(beta / (1 - alpha))."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 once the LLR rises to this: ln((1 - beta) / alpha)."""
        return math.log((1.0 - self.beta) / self.alpha)


@dataclass
class Sprt(WaldBounds):
    """Sequential probability ratio test between two hypotheses about one player's edge.

    Each observation is one duplicate-pair outcome for the first player: a win (score 1), a
    draw (1/2) or a loss (0). H0: the first player's expected score is score_from_elo(elo0);
    H1: it is score_from_elo(elo1). ``alpha`` is the chance of accepting H1 when H0 holds and
    ``beta`` the chance of accepting H0 when H1 holds.

    The log-likelihood ratio is the generalised SPRT with a normal approximation: each score x
    is treated as normal with the estimated per-observation variance v, so with m the mean of
    the N scores, LLR = sum((x - s0)^2 - (x - s1)^2) / (2 v) = N (s1 - s0) (2 m - s0 - s1) / (2 v).

    v is the variance of the scores with one extra win and one extra loss mixed in. The plain
    sample variance is 0 after a single result (or any one-sided run), and any small floor in
    its place makes the very first win accept H1: in simulation that accepted H1 under H0 in
    35-47% of runs instead of 5%. The two extra results keep short runs honest, still let a
    long run of wins accept H1, and change v by O(1/N) once there are many results.
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo1 > self.elo0:
            raise ValueError(f"elo1 must be greater than elo0, got elo0={self.elo0!r}, "
                             f"elo1={self.elo1!r}")
        self.check_error_rates()

    def llr(self, wins: int, draws: int, losses: int) -> float:
        """Log-likelihood ratio of H1 against H0 after these outcomes; 0 with no outcomes."""
        for name, value in (("wins", wins), ("draws", draws), ("losses", losses)):
            if value < 0:
                raise ValueError(f"{name} must be >= 0, got {value!r}")
        n = wins + draws + losses
        if n == 0:
            return 0.0
        mean = (wins + draws / 2.0) / n
        # The spread of the scores with one extra win and one extra loss (see the class notes).
        padded = (wins + 1 + draws / 2.0) / (n + 2)
        variance = ((wins + 1) * (1.0 - padded) ** 2 + draws * (0.5 - padded) ** 2
                    + (losses + 1) * padded ** 2) / (n + 2)
        s0 = score_from_elo(self.elo0)
        s1 = score_from_elo(self.elo1)
        return n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * variance)

    def decide(self, wins: int, draws: int, losses: int) -> str | None:
        """"H1" (the first player is at least elo1 stronger), "H0", or None to keep playing."""
        value = self.llr(wins, draws, losses)
        if value >= self.upper:
            return "H1"
        if value <= self.lower:
            return "H0"
        return None

    def walk(self, outcomes: Iterable[float], max_pairs: int | None = None) -> SprtState:
        """The test over pair ``outcomes`` (1 a win, 0.5 a draw, 0 a loss for the first
        player) taken in order until it decides or ``max_pairs`` are taken (None: no limit):
        the stopping rule of every sequential run (``arena sprt``, a new version's A/B)."""
        w = d = lost = n = 0
        decision = None
        for x in outcomes:
            if max_pairs is not None and n >= max_pairs:
                break
            if x == 1:
                w += 1
            elif x == 0:
                lost += 1
            elif x == 0.5:
                d += 1
            else:
                raise ValueError(f"pair outcome {x!r}: expected 1, 0.5 or 0")
            n += 1
            decision = self.decide(w, d, lost)
            if decision:
                break
        elo = self.elo_interval(w, d, lost) if n else (None, None, None)
        return SprtState(n, w, d, lost, self.llr(w, d, lost), self.lower, self.upper, decision,
                         decision is None and max_pairs is not None and n >= max_pairs, *elo)

    @staticmethod
    def elo_interval(wins: int, draws: int, losses: int,
                     z: float = Z95) -> tuple[float, float, float]:
        """The first player's Elo edge and its interval from pair outcomes: the mean score
        with one win and one loss added (as ``llr`` pads its variance: a clean sweep then
        shows a finite edge) and the normal approximation of that mean, ``z`` standard errors
        each side, mapped to Elo; scores are kept within [0.001, 0.999] (+-1200 Elo)."""
        n = wins + draws + losses + 2
        mean = (wins + 1 + draws / 2.0) / n
        var = ((wins + 1) * (1.0 - mean) ** 2 + draws * (0.5 - mean) ** 2
               + (losses + 1) * mean ** 2) / n
        half = z * math.sqrt(var / n)

        def elo(s: float) -> float:
            return elo_from_score(min(max(s, 0.001), 0.999))
        return elo(mean), elo(mean - half), elo(mean + half)


#: what a pair-W/D/L test's decision says of the first player, as people read it
VERDICTS = {"H1": AbVerdict.STRONGER, "H0": AbVerdict.NOT_STRONGER, None: AbVerdict.AT_LIMIT}


@dataclass(frozen=True)
class SprtState:
    """Where a pair-W/D/L test (``Sprt.walk``) stands after the pairs it took, in their order:
    the tally, its LLR between the bounds, the decision ("H1", "H0"; None: none yet, or none
    within ``max_pairs``: ``at_limit``) and the first player's Elo edge with its 95% interval
    (``Sprt.elo_interval``; None before any pair)."""

    pairs: int
    wins: int
    draws: int
    losses: int
    llr: float
    lower: float
    upper: float
    decision: str | None
    at_limit: bool
    elo: float | None
    elo_low: float | None
    elo_high: float | None

    @property
    def verdict(self) -> AbVerdict:
        """Stronger, not stronger, stopped at the pair limit, or running."""
        if self.decision is None and not self.at_limit:
            return AbVerdict.RUNNING
        return VERDICTS[self.decision]

    def text(self) -> str:
        """The state in a line: the verdict, the Elo edge and its interval, the pairs, the
        W-D-L and the LLR between its bounds."""
        elo = ("" if self.elo is None else
               f" {self.elo:+.0f} Elo [{self.elo_low:+.0f}, {self.elo_high:+.0f}],")
        return (f"{self.verdict}:{elo} {self.pairs} pairs (W-D-L {self.wins}-{self.draws}-"
                f"{self.losses}), LLR {self.llr:.2f} in [{self.lower:.2f}, {self.upper:.2f}]")


# --- internals ----------------------------------------------------------------------------
#
# A tally maps a pair of player indices (i, j), i < j, to [games played, score of i]. Strengths
# are handled as natural logs ("theta"); the virtual opponent of the prior sits at theta = 0.


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def _log_add_exp(a: float, b: float) -> float:
    high, low = (a, b) if a >= b else (b, a)
    return high + math.log1p(math.exp(low - high))


def _index(players: Sequence[str]) -> dict[str, int]:
    if isinstance(players, str):
        raise TypeError("players must be a sequence of names, not a single string")
    return {name: i for i, name in enumerate(dict.fromkeys(players))}


def _tally(games: Iterable[Game], index: dict[str, int]) -> dict[tuple[int, int], list[float]]:
    tally: dict[tuple[int, int], list[float]] = {}
    for game in games:
        try:
            a, b, score = game
        except (TypeError, ValueError):
            raise ValueError(f"a game must be (a, b, score_a), got {game!r}") from None
        for name in (a, b):
            if name not in index:
                raise ValueError(f"game {game!r} names {name!r}, which is not in players")
        if a == b:
            raise ValueError(f"game {game!r} has a player playing itself")
        score = float(score)
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"game {game!r} has a score outside [0, 1]")
        i, j = index[a], index[b]
        if i > j:
            i, j, score = j, i, 1.0 - score
        entry = tally.setdefault((i, j), [0.0, 0.0])
        entry[0] += 1.0
        entry[1] += score
    return tally


def _tallies(clusters: Iterable[Iterable[Game]], index: dict[str, int]
             ) -> list[dict[tuple[int, int], list[float]]]:
    """``_tally`` of each cluster; clusters of the same games share one (a league's units are
    of few kinds: a pairing and its outcome). Read only: a shared tally is never changed."""
    seen: dict[tuple, dict[tuple[int, int], list[float]]] = {}
    out = []
    for cluster in clusters:
        try:
            key = tuple(tuple(game) for game in cluster)
            hash(key)
        except TypeError:  # not games: _tally says what is wrong
            out.append(_tally(cluster, index))
            continue
        if key not in seen:
            seen[key] = _tally(cluster, index)
        out.append(seen[key])
    return out


def _merge(tallies: Iterable[dict[tuple[int, int], list[float]]]
           ) -> dict[tuple[int, int], list[float]]:
    merged: dict[tuple[int, int], list[float]] = {}
    for tally in tallies:
        for pair, (n, score) in tally.items():
            entry = merged.setdefault(pair, [0.0, 0.0])
            entry[0] += n
            entry[1] += score
    return merged


def _best_level(theta: list[float]) -> float:
    """The c maximising the likelihood of ``theta - c``: the root of sum(sigmoid(t - c)) = n/2.

    Newton's method, kept inside a bracket that always holds the root and bisected when a
    step would leave it.
    """
    low, high = min(theta), max(theta)  # the sum is >= n/2 at c = low and <= n/2 at c = high
    c = sum(theta) / len(theta)
    for _ in range(200):
        probs = [_sigmoid(t - c) for t in theta]
        excess = sum(probs) - len(theta) / 2.0
        if abs(excess) <= 1e-13 * len(theta) or high - low <= 1e-13:
            break
        if excess > 0:
            low = c
        else:
            high = c
        slope = sum(q * (1.0 - q) for q in probs)
        guess = c + excess / slope if slope > 0 else math.inf
        c = guess if low <= guess <= high else (low + high) / 2.0
    return c


def _fit(
    tally: dict[tuple[int, int], list[float]],
    count: int,
    prior: float,
    iterations: int,
    tol: float,
    start: Sequence[float | None] | None = None,
) -> list[float | None]:
    """Log-strengths by MM with SQUAREM; None for players without games."""
    played = sorted({i for pair in tally for i in pair})
    result: list[float | None] = [None] * count
    if not played:
        return result
    local = {p: k for k, p in enumerate(played)}
    pairs = [(local[i], local[j], n) for (i, j), (n, _) in tally.items()]
    size = len(played)
    won = [prior / 2.0] * size  # actual score, the prior's virtual draws included
    for (i, j), (n, score) in tally.items():
        won[local[i]] += score
        won[local[j]] += n - score
    if prior == 0:
        _require_connected(tally, played, local)
    log_won = [math.log(w) for w in won]
    step_tol = tol / ELO_PER_NAT

    def mm_step(theta: list[float]) -> list[float]:
        expected = [prior * _sigmoid(t) for t in theta]
        exp = math.exp
        for i, j, n in pairs:
            gap = theta[j] - theta[i]
            p = 1.0 / (1.0 + exp(gap)) if gap < 700.0 else 0.0  # sigmoid(theta_i - theta_j)
            expected[i] += n * p
            expected[j] += n - n * p
        new = [t + lw - math.log(e) for t, lw, e in zip(theta, log_won, expected)]
        # Moving every player by the same amount changes only the prior's virtual games, so
        # each plain MM step closes only about prior / games of the way to the best overall
        # level. Take that level exactly instead; without a prior, keep the mean at 0.
        shift = _best_level(new) if prior else sum(new) / size
        return [t - shift for t in new]

    def log_likelihood(theta: list[float]) -> float:
        total = sum(w * t for w, t in zip(won, theta))
        exp, log1p = math.exp, math.log1p
        for i, j, n in pairs:
            a, b = theta[i], theta[j]
            total -= n * (a + log1p(exp(b - a)) if a >= b else b + log1p(exp(a - b)))
        if prior:
            total -= prior * sum(_log_add_exp(t, 0.0) for t in theta)
        return total

    theta = [0.0] * size if start is None else [start[p] or 0.0 for p in played]
    steps = 0
    while steps < iterations:
        first = mm_step(theta)
        steps += 1
        r = [b - a for a, b in zip(theta, first)]
        if max(abs(x) for x in r) < step_tol or steps >= iterations:
            theta = first
            break
        second = mm_step(first)
        steps += 1
        v = [c - b - d for b, c, d in zip(first, second, r)]
        r_norm = math.sqrt(sum(x * x for x in r))
        v_norm = math.sqrt(sum(x * x for x in v))
        theta = second
        if v_norm == 0 or steps >= iterations:
            continue
        # Extrapolate along the path of the two steps; alpha = -1 would give `second` again.
        alpha = min(-r_norm / v_norm, -1.0)
        if alpha == -1.0:
            continue
        jump = [t - 2.0 * alpha * a + alpha * alpha * b for t, a, b in zip(theta, r, v)]
        try:
            candidate = mm_step(jump)
            steps += 1
            if log_likelihood(candidate) >= log_likelihood(second):
                theta = candidate
        except (ValueError, OverflowError, ZeroDivisionError):
            pass  # the extrapolation went somewhere numerically hopeless; keep the plain steps
    for k, p in enumerate(played):
        result[p] = theta[k]
    return result


def _fit_batch(pairs: Sequence[tuple[int, int]], games: np.ndarray, scores: np.ndarray,
               count: int, prior: float, tol: float, *, start: Sequence[float | None],
               iterations: int = 100) -> np.ndarray:
    """Ratings (Elo, centred as ``_ratings`` does) of many tallies at once: row ``s`` is the
    tally with ``games[s, q]`` games between ``pairs[q]`` = (i, j) and ``scores[s, q]`` the
    score of i in them. The fit ``_fit`` finds (the likelihood's maximum with the prior's
    virtual draws, ``prior > 0``, which makes it strictly concave), reached here by Newton
    steps from ``start`` for every row at once, each step halved until the row's likelihood
    does not fall; a row stops once no rating moves by ``tol`` Elo. A player without games in
    a row gets 0 there and is left out of its centring."""
    rows, size = games.shape
    first = np.array([i for i, _ in pairs], dtype=int)
    second = np.array([j for _, j in pairs], dtype=int)
    into_i = np.zeros((size, count))
    into_j = np.zeros((size, count))
    into_i[np.arange(size), first] = 1.0
    into_j[np.arange(size), second] = 1.0
    won = prior / 2.0 + scores @ into_i + (games - scores) @ into_j
    active = (games @ (into_i + into_j)) > 0  # (rows, players): who played in the row
    theta = np.where(active, np.array([t or 0.0 for t in start], dtype=float), 0.0)
    step_tol = tol / ELO_PER_NAT
    eye = np.eye(count)

    def likelihood(t: np.ndarray, n: np.ndarray, w: np.ndarray, on: np.ndarray) -> np.ndarray:
        gap = t[:, first] - t[:, second]  # log(e^a + e^b) = a - log(sigmoid(a - b))
        pair_terms = n * (t[:, first] - _log_sigmoid(gap))
        return (np.sum(w * t, axis=1) - pair_terms.sum(axis=1)
                - prior * np.sum(np.where(on, -_log_sigmoid(-t), 0.0), axis=1))

    moving = np.ones(rows, dtype=bool)
    for _ in range(iterations):
        t, n, on, got = theta[moving], games[moving], active[moving], won[moving]
        p = _sigmoid_array(t[:, first] - t[:, second])  # i's expected score against j
        own = _sigmoid_array(t)
        gradient = np.where(on, got - prior * own - (n * p) @ into_i
                            - (n - n * p) @ into_j, 0.0)
        w = n * p * (1.0 - p)
        cross = np.zeros((len(t), count, count))
        cross[:, first, second] = w  # each pair once: no sum, so exactly the sum over pairs
        hessian = cross + cross.transpose(0, 2, 1)
        diagonal = (prior * own * (1.0 - own) + w @ into_i + w @ into_j)
        hessian -= diagonal[:, :, None] * eye  # minus the curvature: negative definite
        off = ~on  # a player without games: its own row, fixed
        hessian[off] = -eye[np.nonzero(off)[1]]
        step = np.linalg.solve(hessian, -gradient[:, :, None])[:, :, 0]
        before = likelihood(t, n, got, on)
        scale = np.ones(len(t))
        for _ in range(30):
            fell = likelihood(t + scale[:, None] * step, n, got, on) < before - 1e-12 * np.abs(before)
            if not fell.any():
                break
            scale = np.where(fell, scale / 2.0, scale)
        new = np.where(on, t + scale[:, None] * step, 0.0)
        theta[moving] = new
        settled = np.max(np.abs(new - t), axis=1) < step_tol
        moving[np.flatnonzero(moving)[settled]] = False
        if not moving.any():
            break
    mean = np.sum(np.where(active, theta, 0.0), axis=1) / np.maximum(active.sum(axis=1), 1)
    return np.where(active, (theta - mean[:, None]) * ELO_PER_NAT, 0.0)


def _sigmoid_array(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    return np.minimum(x, 0.0) - np.log1p(np.exp(-np.abs(x)))


def _require_connected(tally: dict[tuple[int, int], list[float]], played: list[int],
                       local: dict[int, int]) -> None:
    """Without a prior, finite ratings need every player to reach every other by "scored
    something against" links (Hunter 2004, assumption 1)."""
    size = len(played)
    forward: list[list[int]] = [[] for _ in range(size)]
    backward: list[list[int]] = [[] for _ in range(size)]
    for (i, j), (n, score) in tally.items():
        a, b = local[i], local[j]
        if score > 0:  # i scored against j
            forward[a].append(b)
            backward[b].append(a)
        if n - score > 0:
            forward[b].append(a)
            backward[a].append(b)
    for links in (forward, backward):
        seen = {0}
        todo = [0]
        while todo:
            for nxt in links[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        if len(seen) < size:
            raise ValueError("with prior=0 these games have no finite ratings (some group of "
                             "players never scored against the rest); use a prior > 0")


def _ratings(theta: list[float | None], names: list[str]) -> dict[str, float]:
    fitted = [t for t in theta if t is not None]
    mean = sum(fitted) / len(fitted) if fitted else 0.0
    return {name: 0.0 if t is None else (t - mean) * ELO_PER_NAT
            for name, t in zip(names, theta)}


def _quantile(values: list[float], q: float) -> float:
    """Quantile of sorted ``values`` by linear interpolation between order statistics."""
    position = q * (len(values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)
