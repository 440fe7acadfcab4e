"""Evaluation power (scheduler/stats/power.py, its deals played by lab/study.py): the
continuous deal outcome, the card-luck value function, the estimators' bias on bots of equal
strength, the paired-score SPRT's error rates by simulation, the standings' Gaussian model, the
finer scores in the store, and the Bradley-Terry fit against choix."""

from __future__ import annotations

import json
import math
import random

import choix
import numpy as np
import pytest

from referee.match.matchfile import DealSummary, MatchSummary
from lab import study
from referee.rules import rules_for
from scheduler.stats import power, scores
from scheduler.stats.ratings import ELO_PER_NAT, bradley_terry


# -- the continuous outcome --------------------------------------------------------------
def test_a_deals_continuous_outcome_is_levels_plus_points_at_one_level_per_step():
    # two-deck: the attackers (team 1) took 140 of 200 and gained 1 level
    d = DealSummary(dealer=0, attackers=1, attacker_total=140, before=("2", "2"),
                    after=("2", "3"), gain=(0, 1))
    step = scores.point_step(2)
    assert step == 40
    # levels +1, points 140 - 60 = 80 at 80 points per level: +1
    assert scores.deal_outcome(d, 1, step) == pytest.approx(2.0)
    assert scores.deal_outcome(d, 0, step) == pytest.approx(-2.0)
    # single deck: the defenders (team 0) gained 2 levels, the attackers took 15 of 100
    d = DealSummary(0, 1, 15, ("2", "2"), ("4", "2"), (2, 0))
    assert scores.deal_outcome(d, 0, scores.point_step(1)) == pytest.approx(2 + 70 / 40)


def test_a_pair_result_counts_a_bot_on_both_sides_of_the_same_deals():
    deals = (DealSummary(0, 1, 0, ("2", "2"), ("2", "2"), (0, 0)),) * 2
    s1 = MatchSummary(deals, (1, -1), (1.0, 0.0))
    s2 = MatchSummary(deals, (-1, 1), (0.0, 1.0))
    # A on team 0 in match 1 (team 0 scored +1 and -0.5), on team 1 in match 2 (team 0
    # scored -0.25 and +0.5, so A +0.25 and -0.5)
    got = scores.pair_result("A", [["A", "B"], ["B", "A"]], [s1, s2],
                            [[1.0, -0.5], [-0.25, 0.5]])
    assert got["b"] == "B" and got["score"] == 1.0  # net levels +1 +1
    assert got["diffs"] == pytest.approx([(1.0 + 0.25) / 2, (-0.5 - 0.5) / 2])
    assert got["diff"] == pytest.approx(sum(got["diffs"]) / 2)
    # a forfeit in match 2 by A loses the pair and its unplayed deal
    s2f = MatchSummary(deals[:1], (0, 0), (1.0, 0.0), forfeit_team=1)
    got = scores.pair_result("A", [["A", "B"], ["B", "A"]], [s1, s2f], [[1.0, -0.5], [0.0]])
    assert got["score"] == 0.0
    assert got["diffs"][1] == pytest.approx((-0.5 - scores.FORFEIT_OUTCOME) / 2)


# -- the control variate's value function -----------------------------------------------
def _dealt(variant: str, seed: str) -> list[list[int]]:
    hands, _ = study.dealt_hands(rules_for(variant), seed, 0)
    return hands


def test_card_luck_changes_sign_when_the_partnerships_swap_and_averages_zero():
    rules = rules_for("single-deck")
    values = []
    for i in range(400):
        hands, level = study.dealt_hands(rules, f"luck:{i}", i % 4)
        assert sorted(len(h) for h in hands) == [12] * 4  # every seat's dealt cards
        luck = power.card_luck(hands, level)
        swapped = hands[1:] + hands[:1]  # the same cards, the other partnership's seats
        assert power.card_luck(swapped, level) == pytest.approx(-luck)
        values.append(luck)
    v = np.array(values)
    assert v.std() > 1  # it does vary with the cards
    assert abs(v.mean()) < 3.5 * v.std() / math.sqrt(len(v))  # expectation 0


def test_the_dealt_hands_do_not_depend_on_the_seats_play():
    """The control variate is a function of the cards dealt only: the hands the referee path
    rebuilds are the hands greedy play was dealt."""
    rules = rules_for("two-deck-fry")
    for i in range(3):
        seed = f"same:{i}"
        _, hands, _ = study._play_once(rules, seed, 0, "greedy", "random", "t")
        assert hands == _dealt("two-deck-fry", seed)  # seat by seat, card by card


# -- bias on bots of equal strength (acceptance 2) ---------------------------------------
def test_every_estimator_is_centred_on_zero_for_bots_of_equal_strength():
    """random against random (each seat its own generator): over many seeds each estimator's
    95% interval covers 0 about 95% of the time, and the pooled estimate is near 0."""
    seeds, deals = 16, 48
    covered = {n: 0 for n in power.ESTIMATORS}
    pooled = {n: [] for n in power.ESTIMATORS}
    for k in range(seeds):
        pairs = study.play_pairs("random", "random", "single-deck", deals, seed=f"eq{k}")
        for e in power.estimate(pairs, 4, samples=20):
            covered[e.name] += e.interval[0] <= 0 <= e.interval[1]
            pooled[e.name].append((e.mean, (e.interval[1] - e.interval[0]) / (2 * 1.96)))
    for name in power.ESTIMATORS:
        assert covered[name] >= seeds - 3, (name, covered)
        means = np.array([m for m, _ in pooled[name]])
        se = math.sqrt(sum(s * s for _, s in pooled[name])) / seeds
        assert abs(means.mean()) < 3 * se, (name, means.mean(), se)


def test_the_control_variate_lowers_variance_without_moving_the_mean():
    """greedy-noisy against itself: card luck explains part of a plain deal's outcome."""
    pairs = study.play_pairs("greedy-noisy", "greedy-noisy", "single-deck", 120, seed="cv")
    got = {e.name: e for e in power.estimate(pairs, 4, samples=50)}
    plain, cv = got["plain"], got["control_variate"]
    assert cv.variance_per_deal < 0.9 * plain.variance_per_deal
    assert cv.interval[0] <= 0 <= cv.interval[1]
    assert got["duplicate_diff"].interval[0] <= 0 <= got["duplicate_diff"].interval[1]


# -- the paired-score SPRT's error rates, by simulation --------------------------------------
def _pool() -> np.ndarray:
    """Real per-pair paired differences of two copies of one bot (random), with each pair
    seen from both bots' side (the same bot on both sides: a symmetric law), standardised."""
    pairs = study.play_pairs("random", "random", "single-deck", 200, seed="pool")
    d = np.array([s for _, s in power.set_scores(pairs, 4)])
    d = np.concatenate([d, -d])
    return d / d.std()


def _run(test: power.PairedSprt, draws: np.ndarray) -> tuple[float, float]:
    """Rates of H1 and H0 over the runs (rows of ``draws``), the test applied in order."""
    n = draws.shape[1]
    count = np.arange(1, n + 1)
    total = np.cumsum(draws, axis=1)
    squares = np.cumsum(draws * draws, axis=1)
    mean = total / count
    var = (squares - count * mean ** 2) / np.maximum(count - 1, 1) * (count + test.pad) / count
    var = np.maximum(var, 1e-12)
    llr = count * (test.d1 - test.d0) * (2 * mean - test.d0 - test.d1) / (2 * var)
    llr[:, :test.min_pairs - 1] = 0.0
    row = draws[0, :test.min_pairs + 5]  # the vectorised LLR is the class's own
    assert llr[0, len(row) - 1] == pytest.approx(test.llr(row))
    h1 = llr >= test.upper
    h0 = llr <= test.lower
    first_h1 = np.where(h1.any(axis=1), h1.argmax(axis=1), n)
    first_h0 = np.where(h0.any(axis=1), h0.argmax(axis=1), n)
    return float(np.mean(first_h1 < first_h0)), float(np.mean(first_h0 < first_h1))


@pytest.mark.parametrize("law", ["engine", "normal"])
def test_the_paired_sprt_keeps_its_error_rates(law):
    """alpha and beta by simulation: streams of paired scores drawn from real ones of two
    copies of a bot (or normal ones), with no edge (H0 true) and with an edge of exactly d1."""
    rng = np.random.default_rng(7)
    runs, n = 4000, 600
    draws = rng.choice(_pool(), size=(runs, n)) if law == "engine" else \
        rng.standard_normal((runs, n))
    test = power.PairedSprt(0.0, 0.25, alpha=0.05, beta=0.05)
    slack = 3 * math.sqrt(0.05 * 0.95 / runs)
    false_h1, _ = _run(test, draws)
    assert false_h1 <= 0.05 + slack, false_h1
    _, false_h0 = _run(test, draws + test.d1)
    assert false_h0 <= 0.05 + slack, false_h0
    assert _run(test, draws + 2 * test.d1)[0] > 0.95  # and the evidence does decide


# -- the standings' Gaussian model ---------------------------------------------------------
def test_the_gaussian_model_recovers_known_ratings():
    truth = {"a": 0.6, "b": 0.1, "c": -0.2, "d": -0.5}
    rng = random.Random(3)
    names = list(truth)
    units = []
    for _ in range(600):
        x, y = rng.sample(names, 2)
        units.append((x, y, truth[x] - truth[y] + rng.gauss(0, 1.0)))
    fit = power.gaussian_ratings(units, names, prior=0.0)
    covered = 0
    for n, (r, lo, hi) in fit.ratings.items():
        assert abs(r - truth[n]) < 0.2
        covered += lo <= truth[n] <= hi
    assert covered >= 3
    assert fit.sigma == pytest.approx(1.0, abs=0.1)
    assert sum(r for r, _, _ in fit.ratings.values()) == pytest.approx(0.0, abs=1e-9)


# -- the store keeps the finer scores ----------------------------------------------------
def test_a_migrated_store_scores_a_pair_when_its_second_match_is_done(tmp_path):
    from test_migrations import _previous_store

    from scheduler.execute import execute_match
    from scheduler.reports import season_standings
    from scheduler.stats.standings import table
    from scheduler.store import Store
    url = _previous_store(tmp_path)  # the previous release's store, its folders made local
    store = Store(url)
    rows = store.pages.matches("previous-release")
    done = {r.cluster for r in rows if r.status == "done"}
    todo = next(r for r in rows if r.status == "pending" and r.cluster in done)
    assert store.results.pair_scores("previous-release") == []
    assert execute_match(url, todo.id) == "done"
    [pair] = store.results.pair_scores("previous-release")
    assert pair.cluster == todo.cluster
    both = [r for r in store.pages.matches("previous-release") if r.cluster == todo.cluster]
    # the pair's score by hand, from the two summaries and the documented formula
    variant = json.loads(both[0].spec_json)["variant"]
    step = scores.point_step(rules_for(variant).decks)
    a = pair.bot_a
    per_deal = []
    for r in both:
        s = MatchSummary.from_dict(json.loads(r.summary_json))
        team = json.loads(r.seats_json).index(a)
        per_deal.append([scores.deal_outcome(d, team, step) for d in s.deals])
    want = [(x + y) / 2 for x, y in zip(*per_deal)]
    assert json.loads(pair.deal_diffs_json) == pytest.approx(want)
    assert pair.diff_a == pytest.approx(sum(want) / len(want))
    assert pair.deals == len(want) == 2
    with store.engine.connect() as c:
        from sqlalchemy import select

        from scheduler.store import results
        stored = c.execute(select(results.c.deal_scores_json)
                           .where(results.c.match_id == todo.id)).scalar()
    assert stored is not None and len(json.loads(stored)) == 2
    st = season_standings(store.seasons.get("previous-release"),
                          store.pages.matches("previous-release"), samples=20)
    d = st.to_dict()
    assert d["rating_shown"] == "bradley_terry" and d["paired_model"]["units"] == 2
    for line in d["bots"]:  # every earlier key is still there, the new ones beside them
        assert {"rating", "low", "high", "pairs_won", "paired_rating", "paired_low",
                "paired_high"} <= set(line)
    assert "rating shown: Bradley-Terry" in table(st)


# -- Bradley-Terry against choix --------------------------------------------------------
def test_the_bradley_terry_fit_agrees_with_choix():
    rng = random.Random(11)
    names = [f"bot{i}" for i in range(6)]
    strength = {n: rng.gauss(0, 1) for n in names}
    games, data = [], []
    for _ in range(800):
        a, b = rng.sample(names, 2)
        p = 1 / (1 + math.exp(strength[b] - strength[a]))
        u = rng.random()
        score = 1.0 if u < p * 0.9 else 0.5 if u < p * 0.9 + 0.1 else 0.0
        games.append((a, b, score))
        i, j = names.index(a), names.index(b)
        # choix counts whole comparisons: every game twice, a draw as one win each way
        data += [(i, j), (i, j)] if score == 1.0 else [(j, i), (j, i)] if score == 0.0 \
            else [(i, j), (j, i)]
    ours = bradley_terry(games, names, prior=0.0)
    theirs = choix.ilsr_pairwise(len(names), data, alpha=0.0, tol=1e-10, max_iter=10_000)
    theirs = (theirs - theirs.mean()) * ELO_PER_NAT
    for i, n in enumerate(names):
        assert ours[n] == pytest.approx(theirs[i], abs=0.05), (n, ours[n], theirs[i])
