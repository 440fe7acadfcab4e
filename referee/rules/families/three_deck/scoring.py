"""three-deck's settlement of a deal: levels with the joker bonus, the kitty dug at x2, match
points (积分) with the specials, and the title of a total of match points (001 section 12)."""

from __future__ import annotations

from ...cards import BIG_JOKER, LITTLE_JOKER, POINTS
from ...settlement import DealOutcome

ACE, JACK, THREE = 12, 9, 1

TITLES = (
    (92898, "神"), (51610, "太空堡垒"), (28672, "星球战舰"), (15929, "宇宙飞船"),
    (8849, "航天飞机"), (4916, "战斗机"), (2731, "客机"), (1517, "直升机"), (843, "滑翔机"),
    (468, "坦克"), (260, "房车"), (144, "轿车"), (80, "面包车"), (40, "卡车"), (20, "三轮车"),
    (10, "单车"), (5, "穿鞋"), (0, "赤脚"),
)


def title(points: int) -> str:
    """001 section 12: the title for cumulative match points (below 0: 赤脚)."""
    for threshold, name in TITLES:
        if points >= threshold:
            return name
    return "赤脚"


def joker_units(kitty) -> int:
    """The kitty's joker units: 2 a big joker, 1 a little joker (the bonus and the tribute
    count them)."""
    return sum(2 if k == BIG_JOKER else 1 if k == LITTLE_JOKER else 0 for k in kitty)


def settle(rules, *, dealer: int, levels: tuple[int, int], attacker_points: int, kitty,
           attackers_won_last: bool, dry_pot: bool, tribute=None):
    """The three-deck deal result; its ``match_points`` are this deal's, per seat, the tribute
    included."""
    dt, at = dealer % 2, 1 - dealer % 2
    kitty_points = sum(POINTS[k] for k in kitty)
    total = attacker_points + (2 * kitty_points if attackers_won_last else 0)
    bonus = 0 if dry_pot else joker_units(kitty)
    new = list(levels)
    gain_dt = gain_at = 0
    took = total >= 120
    if took and attackers_won_last:
        gain_at = 1 + bonus
    elif not took and not attackers_won_last:
        gain_dt = 1 + bonus
    winner = None
    if gain_dt:
        new[dt] = levels[dt] + gain_dt
        if new[dt] > ACE:
            winner, new[dt] = dt, ACE
    if gain_at:
        new[at] = levels[at] + gain_at
        if new[at] > ACE:
            winner, new[at] = at, ACE
    if rules.jack_reset and attackers_won_last and levels[dt] == JACK:
        new[dt] = THREE
    team_points = [0, 0]
    if gain_dt:
        team_points[dt], team_points[at] = 3 * gain_dt, -3 * gain_dt
    elif took:
        team_points[at] = 1 + 3 * gain_at
        team_points[dt] = -team_points[at]
    special = None
    big_jokers = sum(1 for k in kitty if k == BIG_JOKER)
    if total == 0:
        special, winner = "shut_out", dt
        team_points[dt], team_points[at] = 50, -50
    elif total >= 300:
        special, winner = "all_points", at
        team_points[at], team_points[dt] = 50, -50
    elif attackers_won_last and big_jokers >= 3 and took:
        special, winner = "three_big_jokers", at
        team_points[at], team_points[dt] = 50, -50
    mp = [team_points[i % 2] for i in range(4)]
    if tribute:
        giver, receiver, count = tribute
        mp[giver] -= count
        mp[receiver] += count
    return DealOutcome(
        total, (new[0], new[1]), (dealer + 2) % 4 if total < 120 else (dealer + 1) % 4,
        winner is not None, winner, dealer_team_gain=gain_dt, attacker_gain=gain_at,
        kitty_bonus=total - attacker_points, match_points=tuple(mp),
        joker_units=joker_units(kitty), special=special)
