"""single-deck's settlement of a deal (000 sections 5.1, 6.5, 6.6): the levels won by the
attackers' trick points and the last trick, and the demotion by a last trick won with the J or Q."""

from __future__ import annotations

from ...settlement import DealOutcome

ACE, JACK, QUEEN, SIX, TWO = 12, 9, 10, 4, 0


def settle(rules, *, dealer: int, levels: tuple[int, int], attacker_points: int,
           kitty_points: int, attackers_won_last: bool, last_winning_card: int | None,
           trump: int | None) -> DealOutcome:
    """The deal's result; the attackers' total is their trick points (kitty points never count,
    whoever wins the last trick: 5.1)."""
    dt = dealer % 2
    at = 1 - dt
    p, k = attacker_points, attackers_won_last
    outside = 100 - kitty_points
    if p == 0:
        take, gain = False, 2
    elif p == outside:
        take, gain = True, 3
    elif p >= 80 and k:
        take, gain = True, 2
    elif (p >= 40 and k) or p >= 80:
        take, gain = True, 1
    elif p >= 40 or k:
        take, gain = True, 0
    else:
        take, gain = False, 1
    new = list(levels)
    winner = None
    if take:
        new[at] = min(ACE, levels[at] + gain)
        nxt = (dealer + 1) % 4
    else:
        if levels[dt] == ACE:
            winner = dt
        new[dt] = min(ACE, levels[dt] + gain)
        nxt = (dealer + 2) % 4
    # 6.5 / 6.6: demotion when the attackers take the last trick with the J / Q
    dl = levels[dt]
    if k and last_winning_card is not None and last_winning_card < 52 and dl in (JACK, QUEEN):
        c = last_winning_card
        if c % 13 == dl and (rules.demotion_card == "any_level" or c // 13 == trump):
            new[dt] = TWO if dl == JACK else SIX
    return DealOutcome(p, (new[0], new[1]), nxt, winner is not None, winner,
                   0 if take else new[dt] - levels[dt], new[at] - levels[at] if take else 0)
