"""Random legal play: at least 2,000 complete deals per variant, with invariants checked after
every action."""

import random
from collections import Counter

import pytest

from referee.rules import presets, rules_for
from referee.rules.actions import DecisionKind, Play
from referee.rules.cards import KINDS, POINTS, format_cards
from referee.rules.families.two_deck.combos import lead_format
from referee.rules.events import DealEnded, Declared, GameEnded, ThrowFailed
from referee.rules.legal import legal_actions
from referee.rules.events import CardsPassed, PreKittyAction, Played
from referee.rules.state import P_BURY, P_DEALING, P_OVER, P_PLAY, P_SHUFFLE
from referee.rules.engine import is_legal
from referee.play.selfplay import play, random_policies

DEALS = 2000
VARIANTS = list(presets())
# the 2,000 deals of a variant in parts that pytest-xdist can hand to different workers; each
# part plays every PARTS-th game and checks the same coverage on its own share
PARTS = 2
# two-deck: the share of leads that throw every pair of a suit with a top single or two, and
# of leads by a seat holding a tractor that throw its weakest tractor with a single or two, so
# that failed throws with pairs and tractors among the beatable units are frequent (the random
# players' own throws are mostly singles)
PAIR_THROW_RATE = 0.08
TRACTOR_THROW_RATE = 0.5


def _with_pair_throws(policies, seed):
    rng = random.Random(f"pair-throws:{seed}")

    def policy(s, base):
        if s.decision != DecisionKind.LEAD:
            return base(s)
        hand, ctx = s.hands[s.turn], s.ctx
        pos, cls = ctx.pos, ctx.cls
        pairs = {(cls[k], pos[k]): k for k in range(KINDS) if hand[k] >= 2}
        low = min((key for key in pairs if (key[0], key[1] + 1) in pairs), default=None)
        cards = None
        if low is not None and rng.random() < TRACTOR_THROW_RATE:
            a, b = pairs[low], pairs[(low[0], low[1] + 1)]
            c, cards = low[0], [a, a, b, b]
        elif pairs and rng.random() < PAIR_THROW_RATE:
            c = rng.choice(sorted({c for c, _ in pairs}))
            cards = [k for k in ctx.members[c] for _ in range(2) if hand[k] >= 2]
        if cards is not None:
            singles = [k for k in ctx.members[c] if hand[k] == 1]  # strongest first
            cards += singles[:rng.choice((1, 1, 2))]
            if lead_format(cards, ctx).kind == "throw":
                return Play(tuple(cards))
        return base(s)

    return [lambda s, base=base: policy(s, base) for base in policies]


def _beats(unit, hand, ctx, cls) -> bool:
    """Whether ``hand`` (counts) holds a unit of class ``cls`` of the same shape as ``unit`` and
    stronger: a higher single, a higher pair, or as many pairs at consecutive positions with a
    higher top."""
    pos = ctx.pos
    top = max(pos[k] for k in unit.cards)
    held = [k for k in range(KINDS) if hand[k] and ctx.cls[k] == cls]
    if unit.pairs == 0:
        return any(pos[k] > top for k in held)
    pair_pos = {pos[k] for k in held if hand[k] >= 2}
    return any(all(t - i in pair_pos for i in range(unit.pairs)) for t in pair_pos if t > top)


def _text(cards, ctx):
    return format_cards(sorted(cards, key=ctx.key.__getitem__, reverse=True))


class _Tricks:
    """The finished tricks of a deal, each counted once: the cards of each kind in them and
    how many cards each seat played into them. A state's tricks must begin with the very
    tricks already counted (the same objects, in order); otherwise the count starts over."""

    def __init__(self) -> None:
        self.counted: tuple = ()
        self.kinds = [0] * KINDS
        self.played = [0, 0, 0, 0]

    def update(self, tricks: tuple) -> None:
        n = len(self.counted)
        if tricks[:n] != self.counted:  # (a tuple compares its items by identity first)
            n, self.kinds, self.played = 0, [0] * KINDS, [0, 0, 0, 0]
        kinds, played = self.kinds, self.played
        for trick, _ in tricks[n:]:
            assert len({len(c) for _, c in trick}) == 1  # every seat plays as many cards
            for p, cards in trick:
                played[p] += len(cards)
                for k in cards:
                    kinds[k] += 1
        self.counted = tricks


def _held(s) -> list[int]:
    """How many cards of each kind the four hands hold together."""
    return [a + b + c + d for a, b, c, d in zip(*s.hands)]


def _located_cards(s, tricks: _Tricks, held: list[int]):
    """Every card the state knows the place of: how many of each kind, by kind (``held``: the
    hands' share)."""
    tricks.update(s.tricks)
    where = [h + t for h, t in zip(held, tricks.kinds)]
    placed = [*s.kitty]
    for _, cards in s.trick:
        placed += cards
    if s.phase == P_DEALING:
        placed += s.deck[s.next_card:s.rules.hand_size * 4]
    for k in placed:
        where[k] += 1
    return where


POINT_KINDS = [k for k in range(KINDS) if POINTS[k]]


class Checker:
    def __init__(self, rules):
        self.rules = rules
        self.kinds = Counter()
        self.events = Counter()
        self.deals = 0
        self.full = [rules.decks] * KINDS
        self.total_points = 100 * rules.decks
        # failed-throw penalties of the deal in play: (dealer team's throws, attackers' throws)
        self.penalties = [0, 0]
        self.tricks = _Tricks()

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
                self._throw_failed(before, seat, e, events)
            if isinstance(e, DealEnded):
                self._deal_total(e)
            if isinstance(e, PreKittyAction):
                self.events[e.action] += 1
            if isinstance(e, CardsPassed):
                self.events["passed:" + e.reason] += 1
            if isinstance(e, Played) and e.lead and len(e.cards) == 4 and rules.family == \
                    "single_deck" and len({k % 13 for k in e.cards}) == 1:
                self.events["dun_led"] += 1
        if isinstance(action, Play) and before.decision == DecisionKind.LEAD and len(
                {before.ctx.cls[k] for k in action.cards}) == 1 and rules.family != "three_deck":
            from referee.rules.families.two_deck.combos import lead_format
            if len(action.cards) > 1 and (rules.family == "single_deck" or lead_format(
                    action.cards, before.ctx).kind == "throw"):
                failed = any(isinstance(e, ThrowFailed) for e in events)
                self.events["throw_failed" if failed else "throw_stood"] += 1
                if rules.family == "two_deck" and not failed:
                    self._throw_stood(before, seat, action.cards)
        s = after
        if s.phase in (P_SHUFFLE, P_OVER):
            ended = [e for e in events if isinstance(e, DealEnded)]
            if ended:
                self._deal_end(before, ended[0], s, events)
            return
        # cards conserved
        held = _held(s)
        assert _located_cards(s, self.tricks, held) == self.full
        # hand sizes
        sizes = [sum(h) for h in s.hands]
        if s.phase == P_DEALING:
            for i in range(4):
                assert sizes[i] == len(range((i - s.first_receiver) % 4, s.next_card, 4))
        elif s.phase == P_PLAY:
            played = [*self.tricks.played]  # (the finished tricks, counted above)
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
        in_hands = sum(POINTS[k] * held[k] for k in POINT_KINDS)
        on_table = sum(POINTS[k] for _, cards in s.trick for k in cards)
        kitty = sum(POINTS[k] for k in s.kitty)
        undealt = sum(POINTS[k] for k in s.deck[s.next_card:rules.hand_size * 4]) \
            if s.phase == P_DEALING else 0
        assert in_hands + on_table + taken + kitty + undealt == self.total_points
        assert s.attacker_points == sum(s.points_by_seat[i] for i in range(4)
                                        if s.dealer is not None and i % 2 != s.dealer % 2)

    def _beatable(self, before, seat, cards):
        """The units of a two-deck throw that another seat could beat, worked out here from the
        other three hands before the lead."""
        ctx = before.ctx
        fmt = lead_format(cards, ctx)
        others = [before.hands[(seat + i) % 4] for i in (1, 2, 3)]
        return fmt, [u for u in fmt.units if any(_beats(u, h, ctx, fmt.cls) for h in others)]

    def _throw_stood(self, before, seat, cards):
        fmt, beaten = self._beatable(before, seat, cards)
        assert not beaten, (
            f"{before.ctx.describe()}: the throw {_text(cards, before.ctx)} by seat {seat} stood, "
            f"but another seat can beat {' / '.join(u.text() for u in beaten)}")

    def _throw_failed(self, before, seat, e, events):
        rules = self.rules
        ctx = before.ctx
        assert e.seat == seat and before.decision == DecisionKind.LEAD
        played = [x for x in events if isinstance(x, Played)]
        assert len(played) == 1 and played[0].lead and tuple(played[0].cards) == tuple(e.forced)
        where = f"{ctx.describe()}: seat {seat} threw {_text(e.attempted, ctx)}"
        if rules.family == "single_deck":
            # 000 4.2.2.2: the lowest thrown card, no penalty; it failed because another seat
            # holds a stronger card of the suit than the lowest thrown one
            low = min(e.attempted, key=ctx.key.__getitem__)
            assert e.penalty == 0, where
            assert tuple(e.forced) == (low,), (where, _text(e.forced, ctx))
            c = ctx.cls[low]
            assert any(h[k] and ctx.cls[k] == c and ctx.pos[k] > ctx.pos[low]
                       for i in (1, 2, 3) for h in [before.hands[(seat + i) % 4]]
                       for k in range(KINDS)), where
            return
        assert rules.family == "two_deck", (rules.family, e)
        fmt, beaten = self._beatable(before, seat, e.attempted)
        hands = " | ".join(f"seat {(seat + i) % 4}: "
                           + _text([k for k in range(KINDS)
                                    for _ in range(before.hands[(seat + i) % 4][k])
                                    if ctx.cls[k] == fmt.cls], ctx) for i in (1, 2, 3))
        where += (f" (units {' / '.join(u.text() for u in fmt.units)}); the others hold "
                  f"{hands}")
        assert fmt.kind == "throw" and beaten, f"{where}: no unit can be beaten, yet it failed"
        want = rules.throw_penalty * sum(len(u.cards) for u in beaten)
        assert e.penalty == want, (
            f"{where}: penalty {e.penalty}, expected {want} for "
            f"{' / '.join(u.text() for u in beaten)}")
        pos = ctx.pos
        weakest = min((max(pos[k] for k in u.cards), len(u.cards)) for u in beaten)
        allowed = [sorted(u.cards) for u in beaten
                   if (max(pos[k] for k in u.cards), len(u.cards)) == weakest]
        if sum(1 for u in beaten if max(pos[k] for k in u.cards) == weakest[0]) > 1:
            self.events["throw_forced_top_tie"] += 1
        if rules.failed_throw == "first_card":
            # Botzone's judge: the lowest card of the unit with the weakest highest card; equal
            # ones by the judge's suit order S, H, C, D (suit indexes S H D C), whatever their size
            def judged(u):
                top = max(u.cards, key=pos.__getitem__)
                return pos[top], (0, 1, 3, 2)[top // 13] if top < 52 else 0
            unit = min(beaten, key=judged)
            allowed = [[min(unit.cards, key=pos.__getitem__)]]
        assert sorted(e.forced) in allowed, (
            f"{where}: forced {_text(e.forced, ctx)}, expected one of "
            f"{[_text(u, ctx) for u in allowed]}")
        team = 0 if seat % 2 == before.dealer % 2 else 1
        self.penalties[team] += e.penalty
        self.events["throw_penalty_dealer_team" if team == 0 else "throw_penalty_attackers"] += 1
        if len(beaten) > 1:
            self.events["throw_failed_several_beatable"] += 1
        for u in beaten:
            self.events["beatable_" + ("single", "pair", "tractor")[min(u.pairs, 2)]] += 1

    def _deal_total(self, ended):
        """The attackers' total: points taken, the kitty bonus, and the deal's failed-throw
        penalties (a dealer-team throw adds to it, an attacker's throw takes from it)."""
        pen, self.penalties = self.penalties, [0, 0]
        if self.rules.family != "two_deck":
            return
        assert tuple(ended.penalties) == tuple(pen), (ended, pen)
        want = ended.attacker_points + ended.kitty_bonus + pen[0] - pen[1]
        if self.rules.level_table != "botzone_table":  # (Botzone's judge does not floor it)
            want = max(0, want)
        assert ended.attacker_total == want, (ended, pen, want)
        if pen != [0, 0]:
            self.events["deal_with_throw_penalty"] += 1
            if want == 0:
                self.events["deal_total_floored"] += 1

    def _deal_end(self, before, ended, s, events):
        self.deals += 1
        rules = self.rules
        assert sum(POINTS[k] for trick, _ in before.tricks for _, c in trick for k in c) \
            + sum(POINTS[k] for _, c in before.trick for k in c) <= self.total_points
        assert ended.attacker_total >= 0 or rules.level_table == "botzone_table"
        # the game ends or continues as its levels say
        over = any(isinstance(e, GameEnded) for e in events)
        assert over == (s.winner_team is not None or s.deal_no == s.max_deals)
        assert (s.phase == P_OVER) == over
        if rules.after_ace == "wrap":
            assert s.winner_team is None
        if rules.single_deal:  # Botzone: one deal; the team the table moves up wins
            attackers_up = ended.attacker_total >= 80
            assert over and s.winner_team == (before.dealer + attackers_up) % 2
        elif s.winner_team is not None and rules.family != "three_deck":
            ace = 12
            dealer_team = before.dealer % 2
            # 003, 000: a team wins by going up from A as the dealer team
            assert s.winner_team == dealer_team and before.levels[dealer_team] == ace
        elif s.winner_team is None:
            assert ended.levels == s.levels


@pytest.mark.parametrize("part", range(PARTS))
@pytest.mark.parametrize("variant", VARIANTS)
def test_random_deals_keep_invariants(variant, part):
    rules = rules_for(variant)
    checker = Checker(rules)
    game = part
    total_decisions = 0
    deals = DEALS // 4 if rules.single_deal else DEALS  # (a game of one deal: a shorter run)
    deals //= PARTS
    while checker.deals < deals:
        seed = f"invariants:{variant}:{game}"
        # every third game the players rarely declare: kitty openings, draws and redeals
        policies = random_policies(seed, 0.02 if game % 3 == 2 else None)
        if rules.family == "two_deck":
            policies = _with_pair_throws(policies, seed)
        state, _, n = play(rules, seed, policies, max_deals=40, on_action=checker)
        # every deal ends: a deal never needs more than a few hundred decisions
        assert n <= 400 * max(1, state.deal_no)
        total_decisions += n
        game += PARTS
    assert checker.deals >= deals
    kinds = checker.kinds
    for kind in (DecisionKind.DECLARE, DecisionKind.BURY, DecisionKind.LEAD, DecisionKind.FOLLOW):
        assert kinds[kind] > 0, kind
    ev = checker.events
    print(f"{variant} part {part}: {checker.deals} deals, {total_decisions} decisions, "
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
    assert ev["throw_penalty_dealer_team"] > 0 and ev["throw_penalty_attackers"] > 0
    assert ev["throw_failed_several_beatable"] > 0 and ev["deal_with_throw_penalty"] > 0
    assert ev["beatable_pair"] > 0 and ev["beatable_tractor"] > 0
    if variant == "two-deck-fry":
        assert kinds[DecisionKind.REDEAL] > 0 and ev["RedealDemanded"] > 0
        assert ev["KittyCardDrawn"] > 0
        assert ev["KittyTaken"] > ev["DealEnded"]  # overturn-and-rebury (炒底) happened
    elif variant == "botzone-tractor":
        assert ev["TrumpSet"] > 0  # nobody called: the first receiver deals
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
            if rules.single_deal:  # Botzone: the one deal decides
                assert state.deal_no == 1
            elif variant != "three-deck":
                assert state.levels[state.winner_team] == 12
    assert ended > 0


def test_three_deck_may_declare_is_whether_a_declaration_is_listed():
    """The dealing's quick question (asked at every card) answers as the listing does."""
    from referee.rules.families.three_deck.declare import declaration_options, may_declare
    rules = rules_for("three-deck")
    asked = said_yes = 0
    for game in range(6):
        def watch(before, seat, action, after, events):
            nonlocal asked, said_yes
            if after.phase in (P_DEALING, "declare_round") and after.ctx is None:
                for x in range(4):
                    listed = bool(declaration_options(after, x))
                    assert may_declare(after, x) == listed, (game, x, after.decl)
                    asked += 1
                    said_yes += listed
        play(rules, f"may-declare:{game}", max_deals=3, on_action=watch)
    assert asked > 100 and 0 < said_yes < asked


def test_a_draw_of_one_card_is_the_sample_of_one_it_replaces():
    """``draw`` is the random players' quick ``tuple(rng.sample(cards, n))``: the same cards and
    the same generator state after, for one card from short and long lists, and for more."""
    import random

    from referee.rules.sampling import draw
    for size in (1, 2, 5, 21, 22, 40):
        cards = list(range(100, 100 + size))
        for n in {1, min(2, size), size}:
            for seed in range(30):
                a, b = random.Random(seed), random.Random(seed)
                assert draw(a, cards, n) == tuple(b.sample(cards, n))
                assert a.getstate() == b.getstate()
