"""The two-deck deal flow (seeds 003 and 004): declaring and overturning while the cards are
dealt, the redeal offers (暴动), the kitty and the overturn-and-rebury (炒底), leads and follows
with throws, and the end of the deal. The flow every family shares is in ``state``."""

from __future__ import annotations

from typing import Any

from ... import state as st
from ...actions import (Bury, Declare, DecisionKind, DrawKittyCard, Pass, Play, Redeal, Shuffle)
from ...cards import KINDS, POINTS, TEXT
from ...errors import IllegalActionError, InvalidActionError
from ...family import Rule, nothing_to_check
from ...events import (Buried, BuriedPublic, DealStarted, Declared, KittyCardDrawn,
                       KittyOpened, KittyTaken, KittyTakenPublic, Passed, Played, Redealt,
                       RedealDemanded, ThrowFailed, TrumpSet)
from ...options import BurialCount, FailedThrow, Following, RuleSet
from ...state import (CHANCE, P_BURY, P_DEALING, P_DRAW, P_PLAY, P_REDEAL,
                      P_ROUND, State)
from ...trump import trump_context
from . import combos
from .declare import (AFTER_BURIAL, DEALING, Situation, declaration_options, declaring_level,
                      judge_declaration)
from .scoring import settle_deal


class TwoDeckState(State):
    """A two-deck game's state: the shared ``State`` and what only this family keeps."""

    __slots__ = ("restore_level", "two_exempt", "scores", "shown", "kitty_opened", "round_kind",
                 "round_seats", "attackers_asked")
    restore_level: int | None
    two_exempt: frozenset[int]
    scores: Any
    shown: frozenset[Any]
    kitty_opened: bool
    round_kind: str | None
    round_seats: Any
    attackers_asked: bool

    def copy(self) -> TwoDeckState:
        """A shallow copy (hands are copied by whoever changes them)."""
        n = TwoDeckState.__new__(TwoDeckState)
        n.rules = self.rules
        n.levels = self.levels
        n.dealer = self.dealer
        n.deal_no = self.deal_no
        n.winner_team = self.winner_team
        n.max_deals = self.max_deals
        n.flip_seat = self.flip_seat
        n.match_points = self.match_points
        n.phase = self.phase
        n.turn = self.turn
        n.decision = self.decision
        n.deck = self.deck
        n.next_card = self.next_card
        n.first_receiver = self.first_receiver
        n.hands = self.hands
        n.kitty = self.kitty
        n.kitty_owner = self.kitty_owner
        n.level = self.level
        n.trump = self.trump
        n.ctx = self.ctx
        n.decl = self.decl
        n.declarations = self.declarations
        n.first_deal = self.first_deal
        n.redeals = self.redeals
        n.round_next = self.round_next
        n.round_passes = self.round_passes
        n.trick = self.trick
        n.trick_fmt = self.trick_fmt
        n.trick_best = self.trick_best
        n.trick_key = self.trick_key
        n.leader = self.leader
        n.tricks = self.tricks
        n.attacker_points = self.attacker_points
        n.penalties = self.penalties
        n.points_by_seat = self.points_by_seat
        n.drawn_indexes = self.drawn_indexes
        n.drawn_card = self.drawn_card
        n.opened_kitty = self.opened_kitty
        n.hard_duns = self.hard_duns
        n.dry_pot = self.dry_pot
        n.kitty_public = self.kitty_public
        n.restore_level = self.restore_level
        n.two_exempt = self.two_exempt
        n.scores = self.scores
        n.shown = self.shown
        n.kitty_opened = self.kitty_opened
        n.round_kind = self.round_kind
        n.round_seats = self.round_seats
        n.attackers_asked = self.attackers_asked
        return n
    GAME_FIELDS = {"restore_level": None, "two_exempt": frozenset(), "scores": None}
    """``restore_level``: the level the dealer team may get back after a J/A reset (or None);
    ``two_exempt``: the teams for which 2 is not a must-play level after the J reset;
    ``scores``: a single-deal game's score per seat once it is settled (Botzone's table)."""
    DEAL_FIELDS = {"shown": frozenset(), "kitty_opened": False, "round_kind": None,
                   "round_seats": None, "attackers_asked": False}
    """``shown``: level cards shown as single declarations (003: a pair of one shown card does
    not overturn); ``kitty_opened``: nobody declared and the kitty was opened (003);
    ``round_kind``: which round of chances runs ("dealing", "attackers", "after_burial");
    ``round_seats``: who is asked in it (None: everyone); ``attackers_asked``: the attackers
    have had their chance to declare (004)."""


def situation(s: TwoDeckState, seat: int) -> Situation:
    """The facts a declaration by ``seat`` is judged on now."""
    rules = s.rules
    level = declaring_level(rules, s.level, s.levels[seat % 2], seat, s.dealer, s.decl,
                            s.first_deal)
    can = s.round_kind != "attackers"
    return Situation(
        rules=rules, level=level,
        phase=AFTER_BURIAL if s.phase in (P_ROUND,) and s.round_kind == "after_burial"
        else DEALING,
        first_deal=s.first_deal, dealer=s.dealer, current=s.decl, shown=s.shown,
        kitty_opened=s.kitty_opened, dealer_team_can_declare=can)


def _may_declare(s: TwoDeckState, seat: int) -> bool:
    """Could this seat show anything now? (cheap: most seats most of the time cannot)."""
    hand = s.hands[seat]
    rules = s.rules
    if s.kitty_opened:
        return False
    if s.decl is None:
        lv = s.level
        if s.round_kind == "attackers":
            lv = s.levels[seat % 2]
        elif (rules.declaration == "level_joker" and not s.first_deal
              and seat % 2 != s.dealer % 2):
            return False
        if not (hand[lv] or hand[13 + lv] or hand[26 + lv] or hand[39 + lv]):
            return False
    else:
        if seat == s.decl.seat:
            return False
        if rules.overturn == "pair_joker":
            after = s.round_kind == "after_burial"
            if s.first_deal == after:
                return False
        elif rules.overturn == "once" and (s.decl.overturn or s.phase != P_DEALING):
            return False
        lv = s.level
        if not (hand[52] >= 2 or hand[53] >= 2 or hand[lv] >= 2 or hand[13 + lv] >= 2
                or hand[26 + lv] >= 2 or hand[39 + lv] >= 2):
            return False
    return bool(declaration_options(situation(s, seat), seat, hand))


def _advance(s: TwoDeckState, ev: list) -> None:
    """Run automatic steps until a decision is due."""
    rules = s.rules
    while True:
        if s.phase == P_DEALING:
            if st.deal_until_choice(s, ev, _may_declare):
                return
            if rules.overturn == "once":  # the last card's chance was the last one (Botzone)
                if _after_declaring(s, ev):
                    return
                continue
            s.round_kind = "dealing"
            continue
        if s.phase == P_ROUND:
            if st.offer_round(s, _may_declare, s.round_seats):
                return
            kind = s.round_kind
            s.round_kind = None
            s.round_seats = None
            if kind in ("dealing", "attackers"):
                if _after_declaring(s, ev):
                    return
            else:  # after_burial: play starts
                st.start_play(s)
                return
            continue
        if s.phase == P_REDEAL:
            while s.round_next is not None:
                seat = s.round_next
                s.round_next = _next_attacker(s, seat)
                hand = s.hands[seat]
                if sum(POINTS[k] * hand[k] for k in range(KINDS)) < rules.redeal_points:
                    s.turn = seat
                    s.decision = DecisionKind.REDEAL
                    return
            _take_kitty(s, s.dealer, ev)
            return
        return


def _next_attacker(s: TwoDeckState, seat: int) -> int | None:
    """The next attacker after ``seat`` in seat order from the dealer, or None."""
    first = (s.dealer + 1) % 4
    return (first + 2) % 4 if seat == first else None


def _set_trump(s: TwoDeckState, suit: int | None) -> None:
    s.trump = suit
    s.ctx = trump_context(s.level, suit, linked_levels=s.rules.level_tractors)


def _after_declaring(s: TwoDeckState, ev: list) -> bool:
    """Dealing and its declaration chances are over. Returns True when a decision is due."""
    rules = s.rules
    if (s.decl is None and rules.attacker_declare == "when_dealer_team_cannot"
            and not s.first_deal and not s.attackers_asked):
        s.attackers_asked = True
        if not any(_dealer_team_can(s, x) for x in (s.dealer, (s.dealer + 2) % 4)):
            # neither dealer-team seat can declare: the attackers may (004 报主 2)
            s.phase = P_ROUND
            s.round_kind = "attackers"
            s.round_seats = frozenset({(s.dealer + 1) % 4, (s.dealer + 3) % 4})
            s.round_next = (s.dealer + 1) % 4
            s.round_passes = 0
            _advance(s, ev)
            return True
    if s.decl is None:
        if rules.no_declaration == "open_kitty":
            if s.first_deal and s.redeals < rules.first_deal_redeals:
                ev.append(Redealt("nobody declared on the first deal"))
                st.restart(s, s.redeals + 1)
                return True
            if s.first_deal:  # bounded: bots that never declare must not stall a match
                st.set_dealer(s, s.first_receiver, "first receiver after "
                            f"{s.redeals} redeals without a declaration", ev)
            _open_kitty(s, ev)
        elif rules.no_declaration == "first_receiver_deals":
            _first_receiver_deals(s, ev)
        else:
            s.phase = P_DRAW
            s.turn = CHANCE
            s.decision = DecisionKind.DRAW_KITTY_CARD
            return True
    else:
        if rules.overturn in ("pair_joker", "once") and s.first_deal:
            if s.dealer != s.decl.seat:
                st.set_dealer(s, s.decl.seat, "declared", ev)
        _set_trump(s, s.decl.suit)
    return _before_kitty(s, ev)


def _dealer_team_can(s: TwoDeckState, seat: int) -> bool:
    sit = Situation(rules=s.rules, level=s.level, phase=DEALING, first_deal=False,
                    dealer=s.dealer, current=None)
    return bool(declaration_options(sit, seat, s.hands[seat]))


def _first_receiver_deals(s: TwoDeckState, ev: list) -> None:
    """Nobody called (Botzone): the first receiver deals (on the first deal), and the suit of
    the kitty's first suited card is trump; only the suit is told."""
    if s.dealer is None:
        st.set_dealer(s, s.first_receiver, "nobody called: the first receiver deals", ev)
    suit = next((k // 13 for k in s.kitty if k < 52), None)
    _set_trump(s, suit)
    ev.append(TrumpSet(suit, "nobody called: the kitty's first suited card names it"))


def _open_kitty(s: TwoDeckState, ev: list) -> None:
    """003 section 5: the first level card's suit, else the suit of the first card of the
    highest rank; no overturn afterwards."""
    suit = None
    for k in s.kitty:
        if k < 52 and k % 13 == s.level:
            suit = k // 13
            break
    if suit is None:
        best = -1
        for k in s.kitty:
            if k < 52 and k % 13 > best:
                best = k % 13
                suit = k // 13
    s.kitty_opened = True
    s.opened_kitty = tuple(s.kitty)
    _set_trump(s, suit)
    ev.append(KittyOpened(tuple(s.kitty), suit))


def _before_kitty(s: TwoDeckState, ev: list) -> bool:
    """Redeal offers (004 暴动), then the dealer takes up the kitty."""
    rules = s.rules
    if rules.max_redeals and s.redeals < rules.max_redeals:
        s.phase = P_REDEAL
        s.round_next = (s.dealer + 1) % 4
        _advance(s, ev)
        return True
    _take_kitty(s, s.dealer, ev)
    return True


def _take_kitty(s: TwoDeckState, seat: int, ev: list) -> None:
    hand = st.own_hand(s, seat)
    for k in s.kitty:
        hand[k] += 1
    ev.append(KittyTaken(seat, tuple(s.kitty), seat))
    ev.append(KittyTakenPublic(seat))
    s.kitty = ()
    s.kitty_owner = seat
    s.phase = P_BURY
    s.turn = seat
    s.decision = DecisionKind.BURY


def _check_shuffle(s: TwoDeckState, a: Shuffle, seat) -> int:
    """A full deck; returns the seat that receives the first card."""
    rules = s.rules
    deck = tuple(a.deck)
    st.check_deck(rules, deck)
    if s.dealer is not None:
        first = s.dealer
    elif s.flip_seat is not None:
        first = s.flip_seat
    elif rules.first_receiver == "flip":
        first = max(range(4), key=lambda i: _flip_key(deck[i]))
    else:
        if a.first_seat not in range(4):
            raise InvalidActionError("shuffle: this variant draws the first receiver of a game; "
                                     "expected a first seat 0-3")
        first = a.first_seat
    return first


def _do_shuffle(s: TwoDeckState, a: Shuffle, seat, first: int):
    rules = s.rules
    deck = tuple(a.deck)
    n = s.copy()
    ev: list = []
    if n.dealer is None:
        n.flip_seat = first
    n.hands = st.empty_hands()
    n.deck = deck
    n.first_receiver = first
    n.kitty = deck[rules.hand_size * 4:]
    n.phase = P_DEALING
    ev.append(DealStarted(n.deal_no, n.dealer, first, n.levels, n.redeals))
    _advance(n, ev)
    return n, tuple(ev)


def _flip_key(k: int) -> tuple[int, int]:
    """003 section 3: highest rank wins the first receipt; ties black over red, S>H>D>C."""
    if k >= 52:
        return (13 + (k - 52), 4)
    return (k % 13, 3 - k // 13)


def _check_draw(s: TwoDeckState, a: DrawKittyCard, seat) -> None:
    if not isinstance(a.index, int) or not 0 <= a.index < len(s.kitty):
        raise InvalidActionError(f"draw: index {a.index!r} out of range 0-{len(s.kitty) - 1}")


def _do_draw(s: TwoDeckState, a: DrawKittyCard, seat, found):
    n = s.copy()
    ev: list = []
    card = n.kitty[a.index]
    suit = None if card >= 52 else card // 13
    n.drawn_indexes, n.drawn_card = n.drawn_indexes + (a.index,), card
    ev.append(KittyCardDrawn(card, suit))
    # 004 无人报主: the seat holding the card identical to it becomes dealer
    holder = None
    start = n.dealer if n.dealer is not None else n.first_receiver
    for i in range(4):
        x = (start + i) % 4
        if n.hands[x][card]:
            holder = x
            break
    if holder is not None and holder != n.dealer:
        st.set_dealer(n, holder, "holds the drawn kitty card", ev)
    elif n.dealer is None:
        st.set_dealer(n, n.first_receiver, "first receiver (nobody holds the drawn card)", ev)
    _set_trump(n, suit)
    _before_kitty(n, ev)
    return n, tuple(ev)


def _do_pass(s: TwoDeckState, a: Pass, seat, found):
    n = s.copy()
    if n.phase == P_DEALING:
        n.hands = [list(h) for h in n.hands]
    ev: list = [Passed(seat, s.decision.value, seat)]
    if s.decision == DecisionKind.REDEAL:
        _advance(n, ev)
    elif n.phase == P_DEALING:
        _advance(n, ev)
    else:
        n.round_passes += 1
        n.round_next = (seat + 1) % 4
        _advance(n, ev)
    return n, tuple(ev)


def _check_declare(s: TwoDeckState, a: Declare, seat):
    """Cards held that make a declaration now; returns the judged ``Declaration``."""
    cards = tuple(a.cards)
    st.require_held(s, seat, cards, "show")
    reason, decl = judge_declaration(situation(s, seat), seat, cards)
    if reason:
        raise IllegalActionError(reason)
    return decl


def _do_declare(s: TwoDeckState, a: Declare, seat, decl):
    cards = tuple(a.cards)
    n = s.copy()
    if n.phase == P_DEALING:
        n.hands = [list(h) for h in n.hands]
    ev: list = []
    rules = n.rules
    if decl.overturn and decl.strength == 2 and rules.overturn == "level_pairs":
        n.shown = n.shown | {cards[0]}
    n.decl = decl
    n.declarations = n.declarations + (decl,)
    ev.append(Declared(seat, cards, decl.suit, decl.overturn))
    if n.round_kind == "attackers":
        # an attacker declares with its own level and becomes dealer
        st.set_dealer(n, seat, "attacker declared", ev)
        n.round_passes = 4
    elif rules.overturn == "level_pairs" and n.dealer is None:
        st.set_dealer(n, seat, "first to declare", ev)
    if n.round_kind == "after_burial":
        _set_trump(n, decl.suit)
        if rules.overturn == "pair_joker":
            # 炒底: the overturner takes up the buried kitty and buries again
            n.round_passes = 1
            n.round_next = (seat + 1) % 4
            _take_kitty(n, seat, ev)
            return n, tuple(ev)
    if n.phase in (P_ROUND,) and n.round_kind != "attackers":
        n.round_passes = 1
        n.round_next = (seat + 1) % 4
    _advance(n, ev)
    return n, tuple(ev)


def _do_redeal(s: TwoDeckState, a: Redeal, seat, found):
    n = s.copy()
    ev: list = [RedealDemanded(seat), Redealt(f"seat {seat} demanded a redeal (暴动)")]
    dealer = n.dealer
    st.restart(n, n.redeals + 1)
    n.dealer = dealer
    n.first_deal = False
    n.level = n.levels[dealer % 2]
    return n, tuple(ev)


def bury_error(rules: RuleSet, cards) -> str | None:
    """Why this is no burial (two decks: any cards of the hand, as many as the kitty; with
    ``burial_count = "at_most"``, up to as many)."""
    if len(cards) != rules.kitty_size:
        if rules.burial_count is BurialCount.EXACT:
            return f"must bury exactly {rules.kitty_size} cards, not {len(cards)}"
        if len(cards) > rules.kitty_size:
            return f"may bury at most {rules.kitty_size} cards, not {len(cards)}"
    return None


def follow_error(rules: RuleSet, fmt: combos.Format, hand: list[int], play,
                 ctx) -> str | None:
    """Why ``play`` is no legal follow of a lead of format ``fmt`` from ``hand`` (counts) under
    ``rules`` (``combos.follow_error``, and Botzone's same-shape leniency when the rules
    allow it), or None."""
    reason = combos.follow_error(fmt, hand, play, ctx)
    return None if reason is not None and excused(rules, fmt, hand, play, ctx) else reason


def excused(rules: RuleSet, fmt: combos.Format, hand: list[int], play, ctx) -> bool:
    """Does Botzone's leniency (``following = "same_shape"``) let this follow stand, which the
    strict rule refuses? (``combos.same_shape_answer``)"""
    return (rules.following is Following.SAME_SHAPE
            and combos.same_shape_answer(fmt, hand, play, ctx))


def lead_limit(s: TwoDeckState, seat: int) -> int | None:
    """The most cards ``seat`` may lead: None (its hand) unless a short burial
    (``burial_count = "at_most"``) left the dealer more cards than the others; then as many as
    the fewest any other seat holds."""
    if s.rules.burial_count is BurialCount.EXACT:
        return None
    return min(sum(s.hands[x]) for x in range(4) if x != seat)


def _check_bury(s: TwoDeckState, a: Bury, seat) -> None:
    cards = tuple(a.cards)
    reason = bury_error(s.rules, cards)
    if reason:
        raise IllegalActionError(reason)
    if cards:  # (none at all: ``burial_count = "at_most"``)
        st.require_held(s, seat, cards, "bury")


def _do_bury(s: TwoDeckState, a: Bury, seat, found):
    rules = s.rules
    cards = tuple(a.cards)
    n = s.copy()
    st.remove_cards(n, seat, cards)
    n.kitty = cards
    n.kitty_owner = seat
    ev: list = [Buried(seat, cards, seat), BuriedPublic(seat)]
    if (n.kitty_opened or (rules.overturn == "pair_joker" and n.first_deal)
            or rules.overturn == "once"):
        st.start_play(n)
        return n, tuple(ev)
    if n.round_kind == "after_burial":
        n.phase = P_ROUND  # continue the 炒底 round after a rebury
    else:
        n.phase = P_ROUND
        n.round_kind = "after_burial"
        n.round_next = n.dealer
        n.round_passes = 0
    _advance(n, ev)
    return n, tuple(ev)


def _check_play(s: TwoDeckState, a: Play, seat):
    """Cards held that make a lead or a follow; returns a lead's format (None for a follow)."""
    cards = a.cards  # a tuple: ``Play`` makes it one
    if not cards:
        raise IllegalActionError("a play needs at least one card")
    st.require_held(s, seat, cards, "play")
    ctx = s.ctx
    if s.decision == DecisionKind.LEAD:
        fmt = combos.lead_format(cards, ctx)
        if fmt.kind == combos.INVALID:
            classes = sorted({ctx.class_name(ctx.cls[k]) for k in cards})
            raise IllegalActionError(
                f"a lead must be one suit (trumps count as one suit): {' '.join(TEXT[c] for c in cards)} "
                f"mixes {' and '.join(classes)}")
        if s.rules.burial_count is not BurialCount.EXACT:
            most = lead_limit(s, seat)
            if most is not None and len(cards) > most:
                raise IllegalActionError(
                    f"may lead at most {most} card{'s' if most != 1 else ''}: no other seat "
                    "holds more (the dealer kept cards it did not bury)")
        return fmt
    reason = combos.follow_error(s.trick_fmt, s.hands[seat], cards, ctx)
    if reason and not excused(s.rules, s.trick_fmt, s.hands[seat], cards, ctx):
        raise IllegalActionError(reason)
    return None


def _do_play(s: TwoDeckState, a: Play, seat, fmt):
    cards = a.cards
    if fmt is None:
        n, events = st.follow_played(s, seat, cards,
                                     combos.play_key(s.trick_fmt, cards, s.ctx), _end_deal)
        if (n.rules.burial_count is not BurialCount.EXACT and not n.trick
                and n.phase == P_PLAY):
            return _end_if_others_empty(n, events)
        return n, events
    n = s.copy()
    a_cards = cards
    ev: list = []
    ctx = n.ctx
    if fmt.kind == combos.THROW:
        others = [n.hands[(seat + i) % 4] for i in (1, 2, 3)]
        judged = combos.judge_throw(fmt, others, ctx, n.rules.throw_penalty,
                                    n.rules.failed_throw is FailedThrow.FIRST_CARD)
        if judged.forced is not None:
            team = 0 if seat % 2 == n.dealer % 2 else 1
            pen = list(n.penalties)
            pen[team] += judged.penalty
            n.penalties = tuple(pen)
            cards = judged.forced.cards
            ev.append(ThrowFailed(seat, tuple(a_cards), cards, judged.penalty))
            fmt = combos.lead_format(cards, ctx)
    st.remove_cards(n, seat, cards)
    n.trick = ((seat, tuple(cards)),)
    n.trick_fmt = fmt
    n.trick_best = 0
    n.trick_key = combos.lead_key(fmt)
    n.leader = seat
    n.turn = (seat + 1) % 4
    n.decision = DecisionKind.FOLLOW
    ev.append(Played(seat, tuple(cards), True))
    return n, tuple(ev)


def _end_if_others_empty(n: TwoDeckState, events: tuple):
    """After a trick the dealer won holding cards it did not bury (``burial_count =
    "at_most"``): the deal ends when every other hand is empty; what it still holds scores
    nothing."""
    winner = n.leader
    if any(sum(n.hands[x]) for x in range(4) if x != winner):
        return n, events
    n.trick = n.tricks[-1][0]  # the last trick, as the end of a deal reads it
    ev = list(events)
    _end_deal(n, winner, ev)
    return n, tuple(ev)


def _decisive_rank(n: TwoDeckState) -> int | None:
    """Rank of the card that decides the last trick's winning play (its largest unit's top)."""
    _, play = n.trick[n.trick_best]
    top = n.trick_key[1]
    pos = n.ctx.pos
    for k in play:
        if pos[k] == top:
            return None if k >= 52 else k % 13
    return None


def _end_deal(n: TwoDeckState, winner: int, ev: list) -> None:
    rules = n.rules
    dt = n.dealer % 2
    attackers_won = winner % 2 != dt
    kitty_points = sum(POINTS[k] for k in n.kitty)
    out = settle_deal(
        rules, dealer=n.dealer, levels=n.levels, attacker_points=n.attacker_points,
        kitty_points=kitty_points, attackers_won_last=attackers_won,
        last_lead_pairs=combos.dig_pairs(n.trick_fmt),
        last_winning_rank=_decisive_rank(n), penalties=n.penalties,
        restore_level=n.restore_level, two_exempt=n.two_exempt)
    ev.append(st.deal_ended(n, out))
    if rules.single_deal:
        n.scores = out.match_points
    n.restore_level = out.restore_level
    n.two_exempt = out.two_exempt
    st.next_deal(n, out, ev)


RULES = {
    Shuffle: Rule(_check_shuffle, _do_shuffle),
    DrawKittyCard: Rule(_check_draw, _do_draw),
    Pass: Rule(nothing_to_check, _do_pass),
    Declare: Rule(_check_declare, _do_declare),
    Redeal: Rule(nothing_to_check, _do_redeal),
    Bury: Rule(_check_bury, _do_bury),
    Play: Rule(_check_play, _do_play),
}
