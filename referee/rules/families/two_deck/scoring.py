"""The end of a deal (结算): the attackers' total, the level table, must-play ranks (必打), the J/A
reset (003 section 12) and its restoration, the next dealer and the end of the game.

Levels are rank indexes (0 = ``2`` ... 12 = ``A``); teams are 0 (seats 0, 2) and 1 (seats 1, 3).
"""

from __future__ import annotations

import dataclasses

from ...options import RuleSet
from ...settlement import DealOutcome

ACE = 12
JACK = 9
TWO = 0


def kitty_multiplier(rules: RuleSet, pairs: int) -> int:
    """摳底 multiplier for a last-trick lead whose largest unit has ``pairs`` pairs."""
    if pairs == 0:
        return 2
    if rules.kitty_multiplier == "doubling":
        return 2 ** (pairs + 1)
    return 4 * pairs


def table_gain(rules: RuleSet, total: int) -> tuple[bool, int]:
    """(attackers take over?, levels gained by the team that is dealer team next)."""
    if rules.level_table == "per_20":
        if total >= 80:
            return True, (total - 80) // 20
        return False, (80 - total) // 20
    if rules.level_table == "botzone_table":
        if total <= 0:  # 大光: 0 or less (seed 004 "0分（大光） 主打方升3級"; the judge's score <= 0)
            return False, 3
        if total < 80:
            return False, 2 if total < 40 else 1
        return True, 1 if total < 120 else 2 if total < 160 else 3
    # fry_table (004 升级)
    if total <= 0:
        return False, 3
    if total < 40:
        return False, 2
    if total < 80:
        return False, 1
    if total < 120:
        return True, 0
    return True, min(6, (total - 120) // 40 + 1)


def _climb(rules: RuleSet, level: int, gain: int, as_dealer: bool,
           exempt_two: bool) -> tuple[int, int, bool]:
    """Move a team up ``gain`` levels. Returns (new level, levels it could not take because of
    a must-play rank, whether it won the game by passing A)."""
    must = rules.must_play_idx
    for step in range(gain):
        leaving_own = step == 0 and as_dealer
        if level in must and not leaving_own and not (level == TWO and exempt_two):
            return level, gain - step, False
        if level == ACE:
            if rules.after_ace == "wrap":
                level = TWO
                continue
            return level, 0, True
        level += 1
    return level, 0, False


def _drop(level: int, by: int) -> int:
    return max(TWO, level - by)


def settle_deal(rules: RuleSet, **deal) -> DealOutcome:
    """Score a finished two-deck deal (see ``settle_one``); a single-deal game (Botzone) ends
    with it: the team the table moves up wins, and each of its seats scores the levels gained
    (``match_points``), the other seats 0."""
    out = settle_one(rules, **deal)
    if not rules.single_deal:
        return out
    take_over, gain = table_gain(rules, out.attacker_total)
    team = (deal["dealer"] + (1 if take_over else 0)) % 2
    scores = tuple(gain if seat % 2 == team else 0 for seat in range(4))
    return dataclasses.replace(out, game_over=True, winner_team=team, match_points=scores)


def settle_one(rules: RuleSet, *, dealer: int, levels: tuple[int, int], attacker_points: int,
                kitty_points: int, attackers_won_last: bool, last_lead_pairs: int,
                last_winning_rank: int | None, penalties: tuple[int, int] = (0, 0),
                restore_level: int | None = None,
                two_exempt: frozenset[int] = frozenset()) -> DealOutcome:
    """Score a finished two-deck deal.

    ``penalties`` are failed-throw penalty points charged to throws of (dealer team, attackers);
    ``last_winning_rank`` is the rank of the decisive card of the last trick's winning play (for
    the J/A reset); ``restore_level`` is pending from a J/A reset on the previous deal;
    ``two_exempt`` are the teams the J reset restarted at 2 that still sit there: the exemption
    lasts, on either side, until the team leaves 2."""
    dt = dealer % 2
    at = 1 - dt
    bonus = kitty_points * kitty_multiplier(rules, last_lead_pairs) if attackers_won_last else 0
    total = attacker_points + bonus + penalties[0] - penalties[1]
    if rules.level_table != "botzone_table":  # (Botzone's judge does not floor it)
        total = max(0, total)
    new = list(levels)
    partner = (dealer + 2) % 4
    next_seat = (dealer + 1) % 4
    dl = levels[dt]
    # 003 section 12: the J/A reset, whatever the attackers scored.
    if (rules.ja_reset and attackers_won_last and dl in (JACK, ACE)
            and last_winning_rank == dl):
        new[dt] = TWO if dl == JACK else JACK
        exempt = _still_at_two(two_exempt, new) | ({dt} if dl == JACK else set())
        return DealOutcome(total, (new[0], new[1]), partner, False, None, kitty_bonus=bonus,
                           restore_level=dl, two_exempt=frozenset(exempt))
    # 落实政策: the deal after a reset, attackers under 40 -> back to the level it was reset from.
    if restore_level is not None and total < 40:
        new[dt] = restore_level
        return DealOutcome(total, (new[0], new[1]), partner, False, None, kitty_bonus=bonus,
                           two_exempt=_still_at_two(two_exempt, new))
    take_over, gain = table_gain(rules, total)
    if take_over:
        lvl, short, won = _climb(rules, levels[at], gain, False, at in two_exempt)
        new[at] = lvl
        if short:
            new[dt] = _drop(new[dt], short)
        return DealOutcome(total, (new[0], new[1]), next_seat, won, at if won else None,
                           attacker_gain=lvl - levels[at], kitty_bonus=bonus,
                           two_exempt=_still_at_two(two_exempt, new))
    lvl, short, won = _climb(rules, dl, gain, True, dt in two_exempt)
    new[dt] = lvl
    if short:
        new[at] = _drop(new[at], short)
    # The dealer team held (and, but for a 003 hold under 80 by less than 20, went up): the
    # dealer's partner deals next.
    return DealOutcome(total, (new[0], new[1]), partner, won, dt if won else None,
                       dealer_team_gain=gain, kitty_bonus=bonus,
                       two_exempt=_still_at_two(two_exempt, new))


def error_scores(offender: int) -> tuple[int, ...]:
    """Botzone's scores of a game ended by a seat's error: -3 for it, 0 for its partner, +1 for
    each opponent."""
    return tuple(-3 if seat == offender else 0 if seat % 2 == offender % 2 else 1
                 for seat in range(4))


def _still_at_two(exempt: frozenset[int], levels: list[int]) -> frozenset[int]:
    """The exempt teams that have not left 2."""
    return frozenset(t for t in exempt if levels[t] == TWO)
