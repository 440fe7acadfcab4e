"""The continuous scores of a deal and of a duplicate pair (docs/statistics.md), and what the
standings count of a match (its result's tally columns): pure functions of stored summaries,
which the store, the standings and the estimators share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# -- the continuous outcome of a deal ------------------------------------------------------
def point_step(decks: int) -> float:
    """Points per level of the continuous outcome: a fifth of the deck's face points."""
    return decks * 100 / 5


def deal_outcome(deal, team: int, step: float) -> float:
    """Team ``team``'s continuous outcome of a deal (a ``DealSummary``): level gain minus the
    other team's, plus (points taken - points kept by the other team) / (2 * step)."""
    levels = deal.gain[team] - deal.gain[1 - team]
    if deal.attackers is None:
        return float(levels)
    attackers_edge = 2 * deal.attacker_total - 5 * step  # attackers' points minus defenders'
    edge = attackers_edge if deal.attackers == team else -attackers_edge
    return levels + edge / (2 * step)


def deal_scores(summary, variant: str) -> list[float]:
    """Team 0's continuous outcome of each deal of a match (a ``MatchSummary``)."""
    from referee.rules import rules_for
    step = point_step(rules_for(variant).decks)
    return [round(deal_outcome(d, 0, step), 6) for d in summary.deals]


@dataclass(frozen=True, slots=True)
class MatchTally:
    """What the standings count of a match; team 0 is seats 0 and 2, team 1 seats 1 and 3:
    its deals; each team's score, net level gain, strikes, level gains summed over the deals,
    deals attacked and points taken attacking; the forfeiting team, the bot faults, the seats'
    match points (three-deck; else None) and team 0's continuous outcome of each deal."""
    deal_count: int
    score_0: float
    score_1: float
    net_0: int
    net_1: int
    forfeit_team: int | None
    strikes_0: int
    strikes_1: int
    faults: int
    gain_0: int
    gain_1: int
    attacks_0: int
    attack_points_0: int
    attacks_1: int
    attack_points_1: int
    match_points: tuple[int, ...] | None
    deal_scores: tuple[float, ...]


def match_tally(summary, variant: str) -> MatchTally:
    """What the standings count of a match (a ``MatchSummary``)."""
    deals = summary.deals
    strikes = summary.strikes
    out = {"deal_count": len(deals), "forfeit_team": summary.forfeit_team,
           "faults": summary.faults,
           "match_points": tuple(summary.match_points) if summary.match_points else None,
           "deal_scores": tuple(deal_scores(summary, variant))}
    for t in (0, 1):
        out[f"score_{t}"] = float(summary.score[t])
        out[f"net_{t}"] = summary.net[t]
        out[f"strikes_{t}"] = strikes[t] + strikes[t + 2] if strikes else 0
        out[f"gain_{t}"] = sum(d.gain[t] for d in deals)
        out[f"attacks_{t}"] = sum(1 for d in deals if d.attackers == t)
        out[f"attack_points_{t}"] = sum(d.attacker_total for d in deals if d.attackers == t)
    return MatchTally(**out)


#: the continuous outcome of a deal a forfeit left unplayed, for the side that did not forfeit
FORFEIT_OUTCOME = 5.0


def pair_result(a: str, teams: Sequence[Sequence[str]], summaries: Sequence,
                scores: Sequence[Sequence[float]]) -> dict:
    """A duplicate pair for bot ``a``: its W/D/L score as the standings count it (net levels
    over both matches; a forfeit loses the pair) and its paired difference per deal (the mean
    of ``a``'s continuous outcome in the two plays of each deal; a forfeited match scores its
    deals at the loss the forfeit gave). ``teams[m]``: match m's [team 0 bot, team 1 bot];
    ``scores[m]``: team 0's outcome of each deal of match m."""
    forfeit = [teams[m][s.forfeit_team] for m, s in enumerate(summaries)
               if s.forfeit_team is not None]
    b = teams[0][1] if teams[0][0] == a else teams[0][0]
    net_a = sum(s.net[teams[m].index(a)] for m, s in enumerate(summaries))
    if forfeit:
        score = 0.0 if a in forfeit and b not in forfeit else (
            1.0 if b in forfeit and a not in forfeit else 0.5)
    else:
        score = 1.0 if net_a > 0 else 0.0 if net_a < 0 else 0.5
    per_match = []
    n = max((len(x) for x in scores), default=0)
    for m, sc in enumerate(scores):
        sign = 1.0 if teams[m][0] == a else -1.0
        lost = summaries[m].forfeit_team
        # the deals a forfeit left unplayed count as lost by the forfeiting side
        fill = 0.0 if lost is None else (-FORFEIT_OUTCOME if teams[m][lost] == a
                                         else FORFEIT_OUTCOME)
        per_match.append([sign * x for x in sc] + [fill] * (n - len(sc)))
    diffs = [sum(x[i] for x in per_match) / len(per_match) for i in range(n)]
    return {"a": a, "b": b, "score": score, "diffs": diffs,
            "diff": sum(diffs) / len(diffs) if diffs else 0.0}


@dataclass(frozen=True, slots=True)
class PairScore:
    """A duplicate pair scored (``pair_result`` for its first match's team 0 bot, ``bot_a``):
    the W/D/L score and the mean paired difference of ``bot_a``, and its paired difference
    of each deal."""
    season: str
    cluster: str
    bot_a: str
    bot_b: str
    score_a: float
    diff_a: float
    deal_diffs: tuple[float, ...]


def score_pair(store, match_id: str) -> PairScore | None:
    """Score ``match_id``'s duplicate pair once both of its matches are done, and hand the
    score to the store to keep (``store.results.keep_pair_score``, which writes it once):
    the score kept, else None (not a pair, not both played, or already scored)."""
    done = store.results.pair_to_score(match_id)
    if done is None:
        return None
    teams = [d.seats[:2] for d in done]
    summaries = [d.summary for d in done]
    # a result written before these scores (a migrated store): from its summary
    scores = [d.deal_scores if d.deal_scores is not None else deal_scores(d.summary, d.variant)
              for d in done]
    got = pair_result(teams[0][0], teams, summaries, scores)
    pair = PairScore(done[0].season, done[0].cluster, got["a"], got["b"], got["score"],
                     got["diff"], tuple(got["diffs"]))
    return pair if store.results.keep_pair_score(pair) else None


# -- a fixed value function of the cards dealt (the control variate) ------------------------
#: weights of ``hand_value``, fixed before any data: a joker, a level card, an ace, a king,
#: a point, and each card of the longest suit beyond a quarter of the hand (a likely trump suit)
