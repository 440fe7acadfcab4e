"""Random legal play: at least 2,000 complete deals per variant, with invariants checked after
every action."""

from collections import Counter

import pytest

from referee.rules import rules_for
from referee.rules.actions import DecisionKind, Play
from referee.rules.cards import KINDS, POINTS
from referee.rules.events import DealEnded, Declared, GameEnded, ThrowFailed
from referee.rules.legal import legal_actions
from referee.rules.events import CardsPassed, PreKittyAction, Played
from referee.rules.state import P_BURY, P_DEALING, P_OVER, P_PLAY, P_SHUFFLE, is_legal
from referee.selfplay import play, random_policies

DEALS = 2000
VARIANTS = ["two-deck-80", "two-deck-fry", "single-deck", "three-deck"]


def _located_cards(s):
    """Every card the state knows the place of, as a Counter of kinds."""
    where = Counter()
    for h in s.hands:
        for k in range(KINDS):
            if h[k]:
                where[k] += h[k]
    where.update(s.kitty)
    for trick, _ in s.tricks:
        for _, cards in trick:
            where.update(cards)
    for _, cards in s.trick:
        where.update(cards)
    if s.phase == P_DEALING:
        where.update(s.deck[s.next_card:s.rules.hand_size * 4])
    return where


class Checker:
    def __init__(self, rules):
        self.rules = rules
        self.kinds = Counter()
        self.events = Counter()
        self.deals = 0
        self.full = Counter({k: rules.decks for k in range(KINDS)})
        self.total_points = 100 * rules.decks

    def __call__(self, before, seat, action, after, events):
        rules = self.rules
        # only legal actions are applied: the engine agrees before it is applied
        assert is_legal(before, action, seat), (before, action)
        if seat is not None:
            self.kinds[before.decision] += 1
            # the listing is complete and holds what was played (small decisions only: a
            # listing of burials, follows or tribute returns can run to millions)
            if before.decision not in (DecisionKind.BURY, DecisionKind.LEAD, DecisionKind.FOLLOW,
                                       DecisionKind.RETURN):
                assert action in list(legal_actions(before))
            if before.decision == DecisionKind.FOLLOW and self.kinds[before.decision] % 50 == 0:
                assert action in list(legal_actions(before))
        for e in events:
            self.events[type(e).__name__] += 1
            if isinstance(e, Declared):
                self.events["overturn" if e.overturn else "declaration"] += 1
            if isinstance(e, ThrowFailed):
                assert e.penalty == rules.throw_penalty * (e.penalty // max(1, rules.throw_penalty))
            if isinstance(e, PreKittyAction):
                self.events[e.action] += 1
            if isinstance(e, CardsPassed):
                self.events["passed:" + e.reason] += 1
            if isinstance(e, Played) and e.lead and len(e.cards) == 4 and rules.family == \
                    "single_deck" and len({k % 13 for k in e.cards}) == 1:
                self.events["dun_led"] += 1
        if isinstance(action, Play) and before.decision == DecisionKind.LEAD and len(
                {before.ctx.cls[k] for k in action.cards}) == 1 and rules.family != "three_deck":
            from referee.rules.combos import lead_format
            if len(action.cards) > 1 and (rules.family == "single_deck" or lead_format(
                    action.cards, before.ctx).kind == "throw"):
                failed = any(isinstance(e, ThrowFailed) for e in events)
                self.events["throw_failed" if failed else "throw_stood"] += 1
        s = after
        if s.phase in (P_SHUFFLE, P_OVER):
            ended = [e for e in events if isinstance(e, DealEnded)]
            if ended:
                self._deal_end(before, ended[0], s, events)
            return
        # cards conserved
        assert _located_cards(s) == self.full
        # hand sizes
        sizes = [sum(h) for h in s.hands]
        if s.phase == P_DEALING:
            for i in range(4):
                assert sizes[i] == len(range((i - s.first_receiver) % 4, s.next_card, 4))
        elif s.phase == P_PLAY:
            played = [0, 0, 0, 0]
            for trick, _ in s.tricks:
                assert len({len(c) for _, c in trick}) == 1  # every seat plays as many cards
                for p, cards in trick:
                    played[p] += len(cards)
            for p, cards in s.trick:
                played[p] += len(cards)
            for i in range(4):
                assert sizes[i] == rules.hand_size - played[i], (sizes, played)
            assert len(s.kitty) == rules.kitty_size
        elif s.phase == P_BURY:
            assert sizes[s.turn] == rules.hand_size + rules.kitty_size
            assert sum(sizes) == rules.hand_size * 4 + rules.kitty_size
        else:  # pre-kitty steps: cards may be in passage between two seats
            assert sum(sizes) + len(s.kitty) == rules.hand_size * 4 + rules.kitty_size
        # points conserved: in hands + on the table + taken + kitty (+ undealt) = 200
        taken = sum(s.points_by_seat)
        in_hands = sum(POINTS[k] * h[k] for h in s.hands for k in range(KINDS))
        on_table = sum(POINTS[k] for _, cards in s.trick for k in cards)
        kitty = sum(POINTS[k] for k in s.kitty)
        undealt = sum(POINTS[k] for k in s.deck[s.next_card:rules.hand_size * 4]) \
            if s.phase == P_DEALING else 0
        assert in_hands + on_table + taken + kitty + undealt == self.total_points
        assert s.attacker_points == sum(s.points_by_seat[i] for i in range(4)
                                        if s.dealer is not None and i % 2 != s.dealer % 2)

    def _deal_end(self, before, ended, s, events):
        self.deals += 1
        rules = self.rules
        assert sum(POINTS[k] for trick, _ in before.tricks for _, c in trick for k in c) \
            + sum(POINTS[k] for _, c in before.trick for k in c) <= self.total_points
        assert ended.attacker_total >= 0
        # the game ends or continues as its levels say
        over = any(isinstance(e, GameEnded) for e in events)
        assert over == (s.winner_team is not None or s.deal_no == s.max_deals)
        assert (s.phase == P_OVER) == over
        if rules.after_ace == "wrap":
            assert s.winner_team is None
        if s.winner_team is not None and rules.family != "three_deck":
            ace = 12
            dealer_team = before.dealer % 2
            # 003, 000: a team wins by going up from A as the dealer team
            assert s.winner_team == dealer_team and before.levels[dealer_team] == ace
        elif s.winner_team is None:
            assert ended.levels == s.levels


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_deals_keep_invariants(variant):
    rules = rules_for(variant)
    checker = Checker(rules)
    game = 0
    total_decisions = 0
    while checker.deals < DEALS:
        seed = f"invariants:{variant}:{game}"
        # every third game the players rarely declare: kitty openings, draws and redeals
        policies = random_policies(seed, 0.02 if game % 3 == 2 else None)
        state, _, n = play(rules, seed, policies, max_deals=40, on_action=checker)
        # every deal ends: a deal never needs more than a few hundred decisions
        assert n <= 400 * max(1, state.deal_no)
        total_decisions += n
        game += 1
    assert checker.deals >= DEALS
    kinds = checker.kinds
    for kind in (DecisionKind.DECLARE, DecisionKind.BURY, DecisionKind.LEAD, DecisionKind.FOLLOW):
        assert kinds[kind] > 0, kind
    ev = checker.events
    print(f"{variant}: {checker.deals} deals, {total_decisions} decisions, "
          f"{dict(kinds)}, {dict(ev)}")
    if variant == "single-deck":
        for kind in (DecisionKind.UPRISING, DecisionKind.HANDOVER, DecisionKind.TRANSFER,
                     DecisionKind.RETURN, DecisionKind.DUN_REVEAL):
            assert kinds[kind] > 0, kind
        for what in ("uprising", "handover", "transfer", "hard_dun", "dun_led", "KittyOpened",
                     "throw_failed", "throw_stood"):
            assert ev[what] > 0, what
        return
    if variant == "three-deck":
        for kind in (DecisionKind.RETURN, DecisionKind.JOKER_BURY):
            assert kinds[kind] > 0, kind
        for what in ("passed:tribute", "passed:tribute_return", "bury_jokers", "overturn",
                     "KittyCardDrawn", "tribute_reversed", "tribute_cancelled", "MatchPoints"):
            assert ev[what] > 0, what
        return
    assert ev["declaration"] > 0 and ev["overturn"] > 0
    assert ev["throw_failed"] > 0 and ev["throw_stood"] > 0
    if variant == "two-deck-fry":
        assert kinds[DecisionKind.REDEAL] > 0 and ev["RedealDemanded"] > 0
        assert ev["KittyCardDrawn"] > 0
        assert ev["KittyTaken"] > ev["DealEnded"]  # overturn-and-rebury (炒底) happened
    else:
        assert ev["KittyOpened"] > 0 and ev["Redealt"] > 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_whole_games_end(variant):
    """Games played to their end: 80 and single-deck end when a dealer team goes up from A;
    three-deck when a team passes A or on a special; fry (wrap) never ends by levels, so it is
    checked with after_ace = win."""
    options = {"after_ace": "win"} if variant == "two-deck-fry" else {}
    rules = rules_for(variant, options)
    ended = 0
    for game in range(12):
        state, _, _ = play(rules, f"whole:{variant}:{game}", max_deals=400)
        if state.winner_team is not None:
            ended += 1
            if variant != "three-deck":
                assert state.levels[state.winner_team] == 12
    assert ended > 0
