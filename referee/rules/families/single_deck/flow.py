"""single-deck (seed 000): one deck, 12 cards a hand, a face-up kitty of 6.

The state, the phase single-deck adds and the check/do handlers (``RULES``). Before the dealer
takes the kitty come, in order, the uprising (起义), the weak-dealer handover (打不起), the
lone-trump transfer (渡) and the dealer's hard-dun reveal; then the burial. The deal flow shares
the state, actions and events of ``state``; only the rules differ.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from ... import state as st
from ...actions import (Bury, Declare, DecisionKind, HandOver, Pass, Play, Return, RevealDun,
                      Shuffle, Transfer, Uprising)
from ...cards import KINDS, POINTS, TEXT
from ...family import Rule, nothing_to_check
from ...state import Declaration, State
from ...errors import IllegalActionError
from ...events import (Buried, DealerSet, Declared,
                     KittyOpened, KittyShown, KittyTakenPublic, Played,
                     PreKittyAction, Redealt, ThrowFailed)
from ...trump import TRUMP, TrumpContext, trump_context
from .combos import (DUN, INVALID, SINGLE, THROW, dun_kind, dun_rank, follow_error,
                     held_duns, judge_throw, lead_format, lead_key, play_key)
from .declare import flip_suit, may_reveal, reveal_dealer, reveal_error, uprising_levels
from .scoring import settle


class SingleDeckPhase(StrEnum):
    """The phase single-deck adds to the shared ones (``state.Phase``)."""

    PRE_KITTY = "pre_kitty"
    """Before the dealer takes the kitty: uprising, handover, transfer, hard-dun reveal."""


P_PRE = SingleDeckPhase.PRE_KITTY


class SingleDeckState(State):
    """A single-deck game's state: the shared ``State`` and what only this family keeps."""

    __slots__ = ("uprising", "step", "queue", "pending", "side_suits_held", "trick_req")
    uprising: bool
    step: str | None
    queue: tuple[int, ...]
    pending: Any
    side_suits_held: tuple[int, ...]
    trick_req: Any

    def copy(self) -> SingleDeckState:
        """A shallow copy (hands are copied by whoever changes them)."""
        n = SingleDeckState.__new__(SingleDeckState)
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
        n.uprising = self.uprising
        n.step = self.step
        n.queue = self.queue
        n.pending = self.pending
        n.side_suits_held = self.side_suits_held
        n.trick_req = self.trick_req
        return n
    GAME_FIELDS = {"uprising": False}
    """``uprising``: this deal is the redeal after an uprising (起义): either team's level cards
    may be revealed."""
    DEAL_FIELDS = {"step": None, "queue": (), "pending": None, "side_suits_held": (),
                   "trick_req": None}
    """``step``: the pre-kitty step on offer (uprising, handover, transfer, dun_reveal);
    ``queue``: the seats still to be asked in it; ``pending``: (giver, receiver) of a
    transferred trump awaiting its return; ``side_suits_held``: the dealer's side suits with
    the kitty taken up (a burial keeps them); ``trick_req``: the dun kind a follow of a led dun
    must answer."""


# -- the deal ---------------------------------------------------------------------------------

def _ctx(s) -> TrumpContext:
    return trump_context(s.level, s.trump)


def _advance(s, ev: list) -> None:
    """Run automatic steps until a decision is due."""
    while True:
        if s.phase == st.P_DEALING:
            if st.deal_until_choice(s, ev, may_reveal):
                return
            continue
        if s.phase == st.P_ROUND:
            if st.offer_round(s, may_reveal):
                return
            _after_reveal(s, ev)
            continue
        if s.phase == P_PRE:
            if _next_pre_kitty(s, ev):
                return
            continue
        return


def _after_reveal(s, ev: list) -> None:
    if s.decl is None:
        # 3.4: flip the kitty; the first deal's first receiver deals
        if s.dealer is None:
            st.set_dealer(s, s.first_receiver, "first receiver (nobody revealed)", ev)
        suit = flip_suit(s.kitty, s.level)
        s.trump = suit
        ev.append(KittyOpened(tuple(s.kitty), suit))
    s.ctx = _ctx(s)
    s.uprising = False
    s.kitty_public = True
    ev.append(KittyShown(tuple(s.kitty)))
    s.phase = P_PRE
    s.step = "uprising"
    s.queue = tuple((s.dealer + i) % 4 for i in range(4))


def trumps_of(s, seat: int) -> list[int]:
    hand = s.hands[seat]
    return [k for k in s.ctx.members[TRUMP] if hand[k]]


_POINT_KINDS = tuple(k for k in range(KINDS) if POINTS[k])


def pre_kitty_eligible(step: str, seat: int, dealer: int, hand: list[int], ctx: TrumpContext,
                       hard_duns=frozenset()) -> bool:
    """May ``seat`` take this pre-kitty action: uprising (起义 6.1: a dealer-team seat with no
    trump, an attacker with no point card), handover (打不起 6.2: the dealer with 3 or fewer
    trumps), transfer (渡 6.3: exactly one trump), dun_reveal (4.2.3.2: the dealer holding a dun
    of its original cards, not the level rank, not shown yet)?"""
    trumps = sum(map(hand.__getitem__, ctx.members[TRUMP]))
    if step == "uprising":
        if seat % 2 == dealer % 2:
            return trumps == 0
        return not any(map(hand.__getitem__, _POINT_KINDS))
    if step == "handover":
        return seat == dealer and trumps <= 3
    if step == "transfer":
        return trumps == 1
    if step == "dun_reveal":
        return seat == dealer and any(r != ctx.level and r not in hard_duns
                                      for r in held_duns(hand))
    raise ValueError(f"unknown pre-kitty step {step!r}")


def dun_reveal_error(cards, hand: list[int], level: int, hard_duns=frozenset()) -> str | None:
    """Why the dealer may not show these cards as a hard dun (4.2.3.2), or None."""
    r = dun_rank(cards)
    if r is None or r == level or r in hard_duns or not all(hand[k] for k in cards):
        return ("show the four cards of one rank (a dun of your original 12, not yet shown, "
                "not the level rank)")
    return None


def side_suits_held(hand: list[int], ctx: TrumpContext) -> tuple[int, ...]:
    """The side suits the dealer holds cards of, with the kitty taken up (3.6.1 keeps them)."""
    return tuple(c for c in range(4) if c != ctx.suit and any(hand[k] for k in ctx.members[c]))


def _eligible(s, step: str, seat: int) -> bool:
    return pre_kitty_eligible(step, seat, s.dealer, s.hands[seat], s.ctx, s.hard_duns)


_STEPS = ("uprising", "handover", "transfer", "dun_reveal")
_KIND = {"uprising": DecisionKind.UPRISING, "handover": DecisionKind.HANDOVER,
         "transfer": DecisionKind.TRANSFER, "dun_reveal": DecisionKind.DUN_REVEAL}


def _next_pre_kitty(s, ev: list) -> bool:
    """Offer the next pre-kitty action; take the kitty when none is left. True: a decision."""
    while True:
        if s.pending is not None:  # a transferred trump awaits its return
            s.turn, s.decision = s.pending[1], DecisionKind.RETURN
            return True
        while s.queue:
            seat = s.queue[0]
            if _eligible(s, s.step, seat):
                s.turn, s.decision = seat, _KIND[s.step]
                return True
            s.queue = s.queue[1:]
        i = _STEPS.index(s.step)
        if i + 1 == len(_STEPS):
            break
        s.step = _STEPS[i + 1]
        s.queue = tuple((s.dealer + j) % 4 for j in range(4))
    # 3.5: the dealer takes the face-up kitty
    hand = st.own_hand(s, s.dealer)
    for k in s.kitty:
        hand[k] += 1
    s.side_suits_held = side_suits_held(hand, s.ctx)
    ev.append(KittyTakenPublic(s.dealer))
    s.kitty = ()
    s.kitty_owner = s.dealer
    s.phase, s.turn, s.decision = st.P_BURY, s.dealer, DecisionKind.BURY
    s.step = None
    return True


def bury_error(rules, hand: list[int], cards, ctx: TrumpContext, side_suits_held) -> str | None:
    """3.6: six cards, at most 25 points, no side suit held left void — unless no burial can
    keep both, when only the points cap binds. ``cards`` are held (the caller checked)."""
    return burial_judge(rules, hand, ctx, side_suits_held)(cards)


def burial_judge(rules, hand: list[int], ctx: TrumpContext, side_suits_held):
    """``bury_error`` of one hand as a function of the cards buried, for judging many burials
    of that hand: what depends on the hand alone is worked out once."""
    size, cap, no_void = rules.kitty_size, rules.kitty_points_cap, rules.bury_no_void
    cls = ctx.cls
    held = {c: sum(map(hand.__getitem__, ctx.members[c])) for c in side_suits_held}
    keeps: list[bool] = []  # whether some burial keeps every side suit, once asked

    def judge(cards) -> str | None:
        if len(cards) != size:
            return f"must bury exactly {size} cards, not {len(cards)}"
        points = sum(map(POINTS.__getitem__, cards))
        if points > cap:
            return f"a burial may hold at most {cap} points, not {points} (000 3.6.2)"
        if not no_void:
            return None
        buried: dict[int, int] = {}  # suit class -> cards of it buried
        for k in cards:
            c = cls[k]
            buried[c] = buried.get(c, 0) + 1
        voided = [c for c, n in held.items() if buried.get(c) == n]
        if not voided:
            return None
        if not keeps:
            keeps.append(_some_burial_keeps_suits(rules, hand, ctx, side_suits_held))
        if keeps[0]:
            return (f"the burial leaves you void of {ctx.class_name(voided[0])}, a side suit "
                    "you held (000 3.6.1)")
        return None

    return judge


def _some_burial_keeps_suits(rules, hand, ctx, side_suits_held) -> bool:
    keep = []
    for c in side_suits_held:  # keep the richest card of each side suit, bury the cheapest rest
        cards = [k for k in ctx.members[c] if hand[k]]
        keep.append(max(cards, key=lambda k: POINTS[k]))
    rest = sorted((k for k in range(KINDS) if hand[k] and k not in keep), key=POINTS.__getitem__)
    if len(rest) < rules.kitty_size:
        return False
    return sum(POINTS[k] for k in rest[:rules.kitty_size]) <= rules.kitty_points_cap


# -- handlers ---------------------------------------------------------------------------------

def _check_shuffle(s, a: Shuffle, seat) -> None:
    st.check_drawn_shuffle(s, a)


def _do_shuffle(s, a: Shuffle, seat, found):
    return st.do_drawn_shuffle(s, a, _advance)


def _check_declare(s, a: Declare, seat) -> None:
    cards = tuple(a.cards)
    st.require_held(s, seat, cards, "reveal")
    reason = reveal_error(cards, s.level, s.decl is not None, True, uprising_levels(s))
    if reason:
        if s.decl is not None:
            reason += f": the trump is already {TEXT[s.decl.cards[0]][-1]}"
        raise IllegalActionError(reason)


def _do_declare(s, a: Declare, seat, found):
    cards = tuple(a.cards)
    n = s.copy()
    if n.phase == st.P_DEALING:
        n.hands = [list(h) for h in n.hands]
    ev: list = []
    card = cards[0]
    if n.dealer is None:
        dealer = reveal_dealer(seat, card, None, uprising_levels(n))
        st.set_dealer(n, dealer, "first to reveal" if dealer == seat
                       else "revealed the opponents' level", ev)
    n.trump = card // 13
    n.decl = Declaration(seat, cards, 1, card // 13, False)
    n.declarations = n.declarations + (n.decl,)
    ev.append(Declared(seat, cards, card // 13, False))
    if n.phase == st.P_ROUND:
        n.round_passes = 4
    _advance(n, ev)
    return n, tuple(ev)


def _do_pass(s, a: Pass, seat, found):
    return st.do_pass(s, seat, _advance, P_PRE)


def _do_uprising(s, a: Uprising, seat, found):
    n = s.copy()
    ev: list = [PreKittyAction(seat, "uprising", ()), Redealt(f"seat {seat} rose (起义)")]
    first = n.first_receiver
    n.dealer = None
    st.reset_deal(n)  # the game's fields (levels, deal number) stay
    n.flip_seat = first
    n.uprising = True
    return n, tuple(ev)


def _do_handover(s, a: HandOver, seat, found):
    n = s.copy()
    ev: list = [PreKittyAction(seat, "handover", ())]
    partner = (seat + 2) % 4
    n.dealer = partner
    ev.append(DealerSet(partner, n.level, "weak dealer handed over (打不起)"))
    n.queue = ()
    _advance(n, ev)
    return n, tuple(ev)


def _check_transfer(s, a: Transfer, seat) -> None:
    cards = tuple(a.cards)
    st.require_held(s, seat, cards, "transfer")
    trumps = trumps_of(s, seat)
    if len(cards) != 1 or cards[0] not in trumps:
        raise IllegalActionError("a transfer (渡) passes your one trump to your partner: "
                                 + " ".join(TEXT[k] for k in trumps))


def _do_transfer(s, a: Transfer, seat, found):
    cards = tuple(a.cards)
    n = s.copy()
    partner = (seat + 2) % 4
    ev: list = [PreKittyAction(seat, "transfer", ())]
    st.pass_cards(n, seat, partner, cards, "transfer", ev)
    n.pending = (seat, partner)
    n.queue = n.queue[1:]
    _advance(n, ev)
    return n, tuple(ev)


def _check_return(s, a: Return, seat) -> None:
    cards = tuple(a.cards)
    st.require_held(s, seat, cards, "return")
    hand = s.hands[seat]
    has_side = any(hand[k] and s.ctx.cls[k] != TRUMP for k in range(KINDS))
    if len(cards) != 1 or (has_side and s.ctx.cls[cards[0]] == TRUMP):
        raise IllegalActionError("return one side card (副牌) of your choice for the trump (any "
                                 "card when you hold no side card)")


def _do_return(s, a: Return, seat, found):
    cards = tuple(a.cards)
    n = s.copy()
    ev: list = []
    st.pass_cards(n, seat, n.pending[0], cards, "return", ev)
    n.pending = None
    _advance(n, ev)
    return n, tuple(ev)


def _check_reveal_dun(s, a: RevealDun, seat) -> None:
    cards = tuple(a.cards)
    st.require_held(s, seat, cards, "reveal")
    reason = dun_reveal_error(cards, s.hands[seat], s.level, s.hard_duns)
    if reason:
        raise IllegalActionError(reason)


def _do_reveal_dun(s, a: RevealDun, seat, found):
    cards = tuple(a.cards)
    n = s.copy()
    n.hard_duns = n.hard_duns | {dun_rank(cards)}
    ev: list = [PreKittyAction(seat, "hard_dun", cards)]
    _advance(n, ev)
    return n, tuple(ev)


def _check_bury(s, a: Bury, seat) -> None:
    cards = tuple(a.cards)
    st.require_held(s, seat, cards, "bury")
    reason = bury_error(s.rules, s.hands[seat], cards, s.ctx, s.side_suits_held)
    if reason:
        raise IllegalActionError(reason)


def _do_bury(s, a: Bury, seat, found):
    cards = tuple(a.cards)
    n = s.copy()
    st.remove_cards(n, seat, cards)
    n.kitty = cards
    n.kitty_owner = seat
    ev: list = [Buried(seat, cards, None)]  # buried face up: public (3.6)
    st.start_play(n)
    return n, tuple(ev)


def _kind_of(s, seat):
    return lambda r: dun_kind(r, s.ctx, seat == s.dealer, r in s.hard_duns)


_LEAD = DecisionKind.LEAD


def _check_play(s, a: Play, seat):
    """Cards held that make a lead or a follow; returns a lead's (format, suit class), or a
    follow's strength (None: it cannot win)."""
    cards = a.cards  # a tuple: ``Play`` makes it one
    if not cards:
        raise IllegalActionError("a play needs at least one card")
    st.require_held(s, seat, cards, "play")
    ctx = s.ctx
    if s.decision is _LEAD:
        if len(cards) == 1:
            kind, c = SINGLE, ctx.cls[cards[0]]
        else:
            kind, c = lead_format(cards, ctx)
        if kind == INVALID:
            raise IllegalActionError(
                "a lead is a single, a throw of one suit (trumps count as one suit) or a dun "
                f"(four of a rank): {' '.join(TEXT[k] for k in cards)} is none of these")
        return kind, c
    kind, c, lead = s.trick_fmt
    if kind == SINGLE:  # fast path: a single led
        k = cards[0]
        cls = ctx.cls
        if len(cards) != 1 or (cls[k] != c and any(map(s.hands[seat].__getitem__,
                                                         ctx.members[c]))):
            reason = follow_error(lead, kind, c, None, s.hands[seat], cards, ctx)
            raise IllegalActionError(reason)
        return (1 if cls[k] == TRUMP else 0, ctx.pos[k]) if cls[k] in (c, TRUMP) else None
    reason = follow_error(lead, kind, c, s.trick_req, s.hands[seat], cards, ctx)
    if reason:
        raise IllegalActionError(reason)
    return play_key(kind, c, cards, ctx, _kind_of(s, seat))


def _do_play(s, a: Play, seat, found):
    cards = a.cards
    ctx = s.ctx
    if s.decision is _LEAD:
        kind, c = found
        n = s.copy()
        ev: list = []
        if kind == THROW:
            others = [n.hands[(seat + i) % 4] for i in (1, 2, 3)]
            forced, penalty = judge_throw(cards, c, others, ctx)
            if forced is not None:
                ev.append(ThrowFailed(seat, cards, forced, penalty))
                cards, kind = forced, SINGLE
        st.remove_cards(n, seat, cards)
        n.trick = ((seat, cards),)
        n.trick_fmt = (kind, c, cards)
        if kind == DUN:
            n.trick_key = lead_key(kind, c, cards, ctx, _kind_of(n, seat))
            n.trick_req = _kind_of(n, seat)(dun_rank(cards))
        else:
            n.trick_key = lead_key(kind, c, cards, ctx)
            n.trick_req = None
        n.trick_best = 0
        n.leader = seat
        n.turn, n.decision = (seat + 1) % 4, DecisionKind.FOLLOW
        ev.append(Played(seat, cards, True))
        return n, tuple(ev)
    kind = s.trick_fmt[0]
    n, events = st.follow_played(s, seat, cards, found, _end_deal)
    if kind == DUN and n.trick_best == len(n.trick) - 1 and len(n.trick) < 4:
        n.trick_req = _kind_of(n, seat)(dun_rank(cards))  # the stronger dun binds (4.3.1.3)
    return n, events


def _winning_card(n) -> int:
    _, play = n.trick[n.trick_best]
    return max(play, key=n.ctx.key.__getitem__)


def _end_deal(n, winner: int, ev: list) -> None:
    dt = n.dealer % 2
    out = settle(
        n.rules, dealer=n.dealer, levels=n.levels, attacker_points=n.attacker_points,
        kitty_points=sum(POINTS[k] for k in n.kitty), attackers_won_last=winner % 2 != dt,
        last_winning_card=_winning_card(n), trump=n.trump)
    ev.append(st.deal_ended(n, out))
    st.next_deal(n, out, ev)


RULES = {
    Shuffle: Rule(_check_shuffle, _do_shuffle),
    Declare: Rule(_check_declare, _do_declare),
    Pass: Rule(nothing_to_check, _do_pass),
    Uprising: Rule(nothing_to_check, _do_uprising),
    HandOver: Rule(nothing_to_check, _do_handover),
    Transfer: Rule(_check_transfer, _do_transfer),
    Return: Rule(_check_return, _do_return),
    RevealDun: Rule(_check_reveal_dun, _do_reveal_dun),
    Bury: Rule(_check_bury, _do_bury),
    Play: Rule(_check_play, _do_play),
}
