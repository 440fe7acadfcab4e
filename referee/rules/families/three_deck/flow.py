"""three-deck (seeds 001, 002): three decks, 39 cards a hand, a kitty of 6.

The state, the phases three-deck adds and the check/do handlers (``RULES``). After the
declarations come the tribute (进贡), the dealer's burial (big jokers first), joker burying by
the other seats (扣王), the tricks, and the settlement. The deal flow shares the state, actions
and events of ``state``; only the rules differ.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from ... import state as st
from ...actions import (Bury, BuryJokers, Declare, DecisionKind, DrawKittyCard, Pass, Play, Return,
                      Shuffle)
from ...cards import BIG_JOKER, KINDS, LITTLE_JOKER, POINTS, TEXT
from ...family import Rule, nothing_to_check
from ...state import State
from ...errors import IllegalActionError, InvalidActionError
from ...events import (Buried, BuriedPublic, Declared,
                     KittyCardDrawn, KittyShown, KittyTaken, KittyTakenPublic, MatchPoints,
                     Played, PreKittyAction, Redealt, TrumpSet)
from ...trump import TRUMP, TrumpContext
from .combos import INVALID, context, follow_error, lead_format, play_key
from .declare import first_dealer, judge_declaration, may_declare, situation
from .scoring import settle, title


class ThreeDeckPhase(StrEnum):
    """The phases three-deck adds to the shared ones (``state.Phase``)."""

    TRIBUTE = "tribute"
    """The dealer returns cards for the tribute it received (进贡)."""
    JOKER_BURY = "joker_bury"
    """After the burial, the other seats in turn may bury jokers into the kitty (扣王)."""


P_TRIBUTE, P_JOKERS = ThreeDeckPhase.TRIBUTE, ThreeDeckPhase.JOKER_BURY


class ThreeDeckState(State):
    """A three-deck game's state: the shared ``State`` and what only this family keeps."""

    __slots__ = ("prev_result", "grabber", "grab_pending", "queue", "pending", "dealer_six",
                 "deal_match_points")
    prev_result: Any
    grabber: int | None
    grab_pending: bool
    queue: tuple[int, ...]
    pending: Any
    dealer_six: tuple[int, ...]
    deal_match_points: tuple[int, ...]

    def copy(self) -> ThreeDeckState:
        """A shallow copy (hands are copied by whoever changes them)."""
        n = ThreeDeckState.__new__(ThreeDeckState)
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
        n.prev_result = self.prev_result
        n.grabber = self.grabber
        n.grab_pending = self.grab_pending
        n.queue = self.queue
        n.pending = self.pending
        n.dealer_six = self.dealer_six
        n.deal_match_points = self.deal_match_points
        return n
    GAME_FIELDS = {"prev_result": None}
    """``prev_result``: the last deal's (total points, joker units) that decide the tribute."""
    DEAL_FIELDS = {"grabber": None, "grab_pending": False, "queue": (), "pending": None,
                   "dealer_six": (), "deal_match_points": (0, 0, 0, 0)}
    """``grabber``: the first deal's first seat to show a big joker (抢庄), ``grab_pending``: its
    next suited card names the trump; ``queue``: seats still to be asked whether they bury
    jokers; ``pending``: a tribute's (returner, receiver, count); ``dealer_six``: the six cards
    the dealer buried; ``deal_match_points``: match points this deal's tribute moved."""


# -- dry pot, tribute, joker burying ----------------------------------------------------------

def is_dry_pot(kitty, ctx: TrumpContext) -> bool:
    """干锅: a public kitty of trumps only, or one without a trump-suit card and without a level
    card (side cards, with or without jokers and 2s: 001 全是副牌（含常主）, 002 没有主花色牌)."""
    cls = ctx.cls
    if all(cls[k] == TRUMP for k in kitty):
        return True
    level, suit = ctx.level, ctx.suit
    return not any(k < 52 and (k % 13 == level or (k // 13 == suit and k % 13 != 0))
                   for k in kitty)


TO_DEALER, TO_GIVER, NO_TRIBUTE = "to_dealer", "to_giver", "none"


def tribute_plan(previous_total: int, joker_units: int, giver_three_bj: bool,
                 giver_partner_three_bj: bool) -> tuple[int, str]:
    """(cards, direction) of the tribute before a deal (001 section 10): the giver (the new
    dealer's previous seat) holding three big jokers reverses it (the dealer gives), its partner
    holding them cancels it."""
    count = tribute_count(previous_total, joker_units)
    if count <= 0 or giver_partner_three_bj:
        return 0, NO_TRIBUTE
    return count, TO_GIVER if giver_three_bj else TO_DEALER


def tribute_cards(hand: list[int], count: int, ctx: TrumpContext) -> tuple[int, ...]:
    """The giver's ``count`` highest cards: trumps first by strength, then side cards by rank
    whatever their suit; equal strength (off-suit level cards, off-suit 2s, side cards of one
    rank) in suit order S, H, D, C."""
    cls, pos = ctx.cls, ctx.pos
    order = sorted((k for k in range(KINDS) for _ in range(hand[k])),
                   key=lambda k: (cls[k] != TRUMP, -pos[k], k))
    return tuple(order[:count])


def tribute_count(previous_total: int, joker_units: int) -> int:
    """001 section 10."""
    s = previous_total
    if s < 80:
        return (80 - s) // 10 + joker_units
    if s <= 150:
        return joker_units
    return (s - 150) // 10 + joker_units


def _take_key(k: int, ctx: TrumpContext) -> tuple[int, int]:
    """The take-back order, lowest first: 3 < 4 < ... < A < 2 < level card (001 section 7's
    點數大小 read from the bottom); on a tie side cards before trumps."""
    r = k % 13
    value = 13 if r == ctx.level else 12 if r == 0 else r - 1
    return (value, 1 if ctx.cls[k] == TRUMP else 0)


def take_candidates(kitty, ctx: TrumpContext) -> list[int]:
    return sorted((k for k in kitty if k < 52 and not POINTS[k]),
                  key=lambda k: _take_key(k, ctx))


def joker_bury_error(kitty, dealer_six, hand: list[int], jokers, take, ctx: TrumpContext,
                     dry_pot: bool, by_dealer: bool = False) -> str | None:
    if by_dealer:
        return "the dealer has buried already: joker burying is for the other seats (001 §4)"
    if dry_pot:
        return "the kitty is a dry pot (干锅): nothing may be buried into it"
    if all(POINTS[k] or k >= 52 for k in dealer_six):
        return "the dealer buried only point cards (and jokers): no joker may be buried now"
    if not jokers or any(k < 52 for k in jokers):
        return "bury one or more jokers"
    need: dict[int, int] = {}
    for k in jokers:
        need[k] = need.get(k, 0) + 1
    for k, n in need.items():
        if hand[k] < n:
            return f"you hold {hand[k]} {TEXT[k]}, not {n}"
    if need.get(LITTLE_JOKER) and hand[BIG_JOKER] > need.get(BIG_JOKER, 0):
        return "big jokers go first: bury your BJ before any LJ"
    cands = take_candidates(kitty, ctx)
    if len(take) != len(jokers):
        return f"take back as many cards as jokers buried ({len(jokers)})"
    if len(cands) < len(take):
        return f"the kitty has only {len(cands)} non-point cards to take back"
    want = sorted(_take_key(k, ctx) for k in cands[:len(take)])
    got = sorted(_take_key(k, ctx) for k in take)
    pool = list(kitty)
    for k in take:
        if k not in pool:
            return f"{TEXT[k]} is not in the kitty"
        pool.remove(k)
    if got != want or any(POINTS[k] or k >= 52 for k in take):
        return ("take back the lowest non-point kitty cards: "
                + " ".join(TEXT[k] for k in cands[:len(take)]))
    return None


def return_error(hand: list[int], cards, count: int, ctx: TrumpContext) -> str | None:
    """The tribute is returned with side non-point cards as far as held, then non-point
    cards, then any (001 section 10)."""
    if len(cards) != count:
        return f"return exactly {count} card{'s' if count != 1 else ''}"
    side = [k for k in range(52) if hand[k] and ctx.cls[k] != TRUMP and not POINTS[k]]
    side_n = sum(hand[k] for k in side)
    plain_n = sum(hand[k] for k in range(KINDS) if hand[k] and not POINTS[k])
    given_side = sum(1 for k in cards if ctx.cls[k] != TRUMP and not POINTS[k])
    given_plain = sum(1 for k in cards if not POINTS[k])
    if given_side < min(count, side_n) or given_plain < min(count, plain_n):
        return "return side (副牌) non-point cards as far as you hold them"
    return None


# -- the deal ---------------------------------------------------------------------------------

def _grab_suit(s, seat: int, card: int, ev: list) -> None:
    """001: the first deal's trump is the suit of the grabber's next suited card."""
    if s.grab_pending and seat == s.grabber and card < 52:
        s.grab_pending = False
        s.trump = card // 13
        ev.append(TrumpSet(s.trump, "the grabber's next suited card"))


def _advance(s, ev: list) -> None:
    """Run automatic steps until a decision is due."""
    while True:
        if s.phase == st.P_DEALING:
            if st.deal_until_choice(s, ev, may_declare, _grab_suit):
                return
            continue
        if s.phase == st.P_ROUND:
            if st.offer_round(s, may_declare):
                return
            if _after_declaring(s, ev):
                return
            continue
        if s.phase == P_JOKERS:
            while s.queue:
                seat = s.queue[0]
                if _may_bury_jokers(s, seat):
                    s.turn, s.decision = seat, DecisionKind.JOKER_BURY
                    return
                s.queue = s.queue[1:]
            st.start_play(s)
            return
        return


def _after_declaring(s, ev: list) -> bool:
    """True when a decision (or chance) is due."""
    if s.first_deal:
        if s.grabber is not None:
            st.set_dealer(s, s.grabber, "first to show a big joker", ev)
            if s.trump is None:
                s.trump = next((k // 13 for k in s.kitty if k < 52), 0)
                ev.append(TrumpSet(s.trump, "the first suited kitty card (the grabber got none)"))
        else:
            dealer, suit = first_dealer(s.kitty, s.first_receiver, s.rules.first_flip)
            if suit is None:  # a kitty of six jokers: redeal
                ev.append(Redealt("the kitty holds only jokers"))
                st.restart(s, s.redeals + 1)
                return True
            st.set_dealer(s, dealer, f"flipped the {s.rules.first_flip} kitty card", ev)
            s.trump = suit
            ev.append(TrumpSet(suit, "kitty flip"))
        s.kitty_public = True
    elif s.decl is not None:
        s.trump = s.decl.suit
        s.kitty_public = True
    else:
        s.phase, s.turn, s.decision = st.P_DRAW, st.CHANCE, DecisionKind.DRAW_KITTY_CARD
        return True
    return _before_kitty(s, ev)


def _before_kitty(s, ev: list) -> bool:
    s.ctx = context(s.level, s.trump)
    if s.kitty_public:
        ev.append(KittyShown(tuple(s.kitty)))
        s.dry_pot = is_dry_pot(s.kitty, s.ctx)
    if s.rules.tribute and not s.first_deal and s.prev_result is not None:
        if _start_tribute(s, ev):
            return True
    return _take_kitty(s, ev)


def _start_tribute(s, ev: list) -> bool:
    total, units = s.prev_result
    giver, dealer = (s.dealer + 3) % 4, s.dealer
    partner = (giver + 2) % 4
    count, direction = tribute_plan(total, units, s.hands[giver][BIG_JOKER] >= 3,
                                    s.hands[partner][BIG_JOKER] >= 3)
    if direction == NO_TRIBUTE:
        if tribute_count(total, units) > 0:
            ev.append(PreKittyAction(partner, "tribute_cancelled", ()))
        return False
    if direction == TO_GIVER:
        giver, dealer = dealer, giver  # reversed: the dealer gives
        ev.append(PreKittyAction(dealer, "tribute_reversed", ()))
    st.pass_cards(s, giver, dealer, tribute_cards(s.hands[giver], count, s.ctx), "tribute", ev)
    mp = list(s.deal_match_points)
    mp[giver] -= count
    mp[dealer] += count
    s.deal_match_points = tuple(mp)
    s.pending = (dealer, giver, count)  # who returns, to whom, how many
    s.phase, s.turn, s.decision = P_TRIBUTE, dealer, DecisionKind.RETURN
    return True


def _take_kitty(s, ev: list) -> bool:
    if s.dry_pot:
        s.kitty_owner = s.dealer
        st.start_play(s)
        return True
    hand = st.own_hand(s, s.dealer)
    for k in s.kitty:
        hand[k] += 1
    ev.append(KittyTaken(s.dealer, tuple(s.kitty), s.dealer))  # what the dealer took up
    ev.append(KittyTakenPublic(s.dealer))
    s.kitty = ()
    s.kitty_owner = s.dealer
    s.phase, s.turn, s.decision = st.P_BURY, s.dealer, DecisionKind.BURY
    return True


def dealer_six(s):
    return s.dealer_six


def _may_bury_jokers(s, seat: int) -> bool:
    hand = s.hands[seat]
    if not (hand[LITTLE_JOKER] or hand[BIG_JOKER]) or s.dry_pot:
        return False
    if all(POINTS[k] or k >= 52 for k in dealer_six(s)):
        return False
    return bool(take_candidates(s.kitty, s.ctx))


# -- handlers ---------------------------------------------------------------------------------

def _check_shuffle(s, a: Shuffle, seat) -> None:
    st.check_drawn_shuffle(s, a)


def _do_shuffle(s, a: Shuffle, seat, found):
    return st.do_drawn_shuffle(s, a, _advance)


def _check_declare(s, a: Declare, seat):
    """Cards held that make a declaration now; returns the judged ``Declaration``."""
    cards = tuple(a.cards)
    st.require_held(s, seat, cards, "show")
    reason, decl = judge_declaration(situation(s, seat), seat, cards, a.suit)
    if reason:
        raise IllegalActionError(reason)
    return decl


def _do_declare(s, a: Declare, seat, decl):
    cards = tuple(a.cards)
    n = s.copy()
    if n.phase == st.P_DEALING:
        n.hands = [list(h) for h in n.hands]
    ev: list = [Declared(seat, cards, decl.suit, decl.overturn)]
    if n.first_deal:
        n.grabber, n.grab_pending = seat, True
    else:
        n.decl = decl
    n.declarations = n.declarations + (decl,)
    if n.phase == st.P_ROUND:
        n.round_passes, n.round_next = 1, (seat + 1) % 4
    _advance(n, ev)
    return n, tuple(ev)


def _do_pass(s, a: Pass, seat, found):
    return st.do_pass(s, seat, _advance, P_JOKERS)


def _check_draw(s, a: DrawKittyCard, seat) -> None:
    if not isinstance(a.index, int) or not 0 <= a.index < len(s.kitty) or \
            a.index in s.drawn_indexes:
        raise InvalidActionError(f"draw: index {a.index!r} is not an undrawn kitty card")


def _do_draw(s, a: DrawKittyCard, seat, found):
    n = s.copy()
    card = n.kitty[a.index]
    n.drawn_indexes, n.drawn_card = n.drawn_indexes + (a.index,), card
    ev: list = [KittyCardDrawn(card, None if card >= 52 else card // 13)]
    if card >= 52:
        if len(n.drawn_indexes) == len(n.kitty):  # a kitty of jokers only: redeal
            ev.append(Redealt("the kitty holds only jokers"))
            st.restart(n, n.redeals + 1)
        return n, tuple(ev)  # a joker: draw again
    n.trump = card // 13
    _before_kitty(n, ev)
    return n, tuple(ev)


def _check_return(s, a: Return, seat) -> None:
    cards = tuple(a.cards)
    st.require_held(s, seat, cards, "return")
    reason = return_error(s.hands[seat], cards, s.pending[2], s.ctx)
    if reason:
        raise IllegalActionError(reason)


def _do_return(s, a: Return, seat, found):
    cards = tuple(a.cards)
    to = s.pending[1]
    n = s.copy()
    ev: list = []
    st.pass_cards(n, seat, to, cards, "tribute_return", ev)
    n.pending = None
    _take_kitty(n, ev)
    return n, tuple(ev)


def bury_error(rules, hand: list[int], cards) -> str | None:
    """Why the dealer may not bury these cards: six of them, and a big joker goes before any
    little joker (001 section 4)."""
    if len(cards) != rules.kitty_size:
        return f"must bury exactly {rules.kitty_size} cards, not {len(cards)}"
    if LITTLE_JOKER in cards and hand[BIG_JOKER] > sum(1 for k in cards if k == BIG_JOKER):
        return "big jokers are buried first: bury your BJ before any LJ"
    return None


def _check_bury(s, a: Bury, seat) -> None:
    cards = tuple(a.cards)
    if len(cards) == s.rules.kitty_size:
        st.require_held(s, seat, cards, "bury")
    reason = bury_error(s.rules, s.hands[seat], cards)
    if reason:
        raise IllegalActionError(reason)


def _do_bury(s, a: Bury, seat, found):
    cards = tuple(a.cards)
    n = s.copy()
    st.remove_cards(n, seat, cards)
    n.kitty, n.kitty_owner = cards, seat
    n.dealer_six = cards
    ev: list = [Buried(seat, cards, seat)]
    # the new kitty is hidden, unless a joker is buried into it (001 section 4)
    n.kitty_public = LITTLE_JOKER in cards or BIG_JOKER in cards
    if n.kitty_public:
        ev.append(KittyShown(cards))
    else:
        ev.append(BuriedPublic(seat))
    n.phase = P_JOKERS
    n.queue = tuple((seat + i) % 4 for i in (1, 2, 3))
    _advance(n, ev)
    return n, tuple(ev)


def default_take(kitty, count: int, ctx: TrumpContext) -> tuple[int, ...]:
    """The lowest non-point kitty cards; ties in card order (a seat that buries jokers into a
    kitty it has not seen leaves the choice to the referee)."""
    return tuple(sorted(take_candidates(kitty, ctx), key=lambda k: (_take_key(k, ctx), k))[:count])


def _check_bury_jokers(s, a: BuryJokers, seat) -> tuple[int, ...]:
    """Jokers and kitty cards that make a joker burial; returns the cards taken (the referee's
    choice when the action names none)."""
    take = a.take or default_take(s.kitty, len(a.jokers), s.ctx)
    reason = joker_bury_error(s.kitty, dealer_six(s), s.hands[seat], a.jokers, take, s.ctx,
                              s.dry_pot)
    if reason:
        raise IllegalActionError(reason)
    return take


def _do_bury_jokers(s, a: BuryJokers, seat, take):
    a = BuryJokers(a.jokers, take)
    n = s.copy()
    hand = st.own_hand(n, seat)
    kitty = list(n.kitty)
    for k in a.jokers:
        hand[k] -= 1
        kitty.append(k)
    for k in a.take:
        kitty.remove(k)
        hand[k] += 1
    n.kitty = tuple(kitty)
    n.kitty_public = True
    n.queue = n.queue[1:]
    ev: list = [PreKittyAction(seat, "bury_jokers", tuple(a.jokers) + tuple(a.take)),
                KittyShown(n.kitty)]
    _advance(n, ev)
    return n, tuple(ev)


def _check_play(s, a: Play, seat):
    """Cards held that make a lead or a follow; returns a lead's suit class, or a follow's
    strength (None: it cannot win)."""
    cards = tuple(a.cards)
    if not cards:
        raise IllegalActionError("a play needs at least one card")
    st.require_held(s, seat, cards, "play")
    ctx = s.ctx
    if s.decision == DecisionKind.LEAD:
        kind, c = lead_format(cards, ctx)
        if kind == INVALID:
            raise IllegalActionError("a lead is a single, a pair (棒子) or a triple (滚子) of "
                                     f"identical cards: {' '.join(TEXT[k] for k in cards)} is not")
        return c
    reason = follow_error(s.trick_fmt, s.hands[seat], cards, ctx,
                          s.rules.pair_following == "live")
    if reason:
        raise IllegalActionError(reason)
    return play_key(s.trick_fmt, cards, ctx)


def _do_play(s, a: Play, seat, found):
    cards = tuple(a.cards)
    ctx = s.ctx
    if s.decision == DecisionKind.LEAD:
        n = s.copy()
        st.remove_cards(n, seat, cards)
        n.trick = ((seat, cards),)
        n.trick_fmt = cards
        n.trick_key = (1 if found == TRUMP else 0, ctx.pos[cards[0]])
        n.trick_best, n.leader = 0, seat
        n.turn, n.decision = (seat + 1) % 4, DecisionKind.FOLLOW
        return n, (Played(seat, cards, True),)
    return st.follow_played(s, seat, cards, found, _end_deal)


def _end_deal(n, winner: int, ev: list) -> None:
    dt = n.dealer % 2
    mp0 = n.deal_match_points
    out = settle(n.rules, dealer=n.dealer, levels=n.levels, attacker_points=n.attacker_points,
                 kitty=n.kitty, attackers_won_last=winner % 2 != dt, dry_pot=n.dry_pot)
    deal_points = tuple(a + b for a, b in zip(out.match_points, mp0))
    totals = tuple(a + b for a, b in zip(n.match_points, deal_points))
    ev.append(st.deal_ended(n, out))
    ev.append(MatchPoints(deal_points, totals, tuple(title(t) for t in totals)))
    n.match_points = totals
    # a dry pot's jokers count for nothing, the next tribute included (001 干锅: 不算血)
    n.prev_result = (out.attacker_total, 0 if n.dry_pot else out.joker_units)
    st.next_deal(n, out, ev)


RULES = {
    Shuffle: Rule(_check_shuffle, _do_shuffle),
    Declare: Rule(_check_declare, _do_declare),
    Pass: Rule(nothing_to_check, _do_pass),
    DrawKittyCard: Rule(_check_draw, _do_draw),
    Return: Rule(_check_return, _do_return),
    Bury: Rule(_check_bury, _do_bury),
    BuryJokers: Rule(_check_bury_jokers, _do_bury_jokers),
    Play: Rule(_check_play, _do_play),
}
