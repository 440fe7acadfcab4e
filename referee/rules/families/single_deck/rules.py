"""single-deck (seed 000): one deck, 12 cards a hand, a face-up kitty of 6.

Leads are singles, throws of top cards (甩) and duns (礅: the four cards of one rank); a failed
throw plays its lowest card. Before the dealer takes the kitty come, in order, the uprising (起义),
the weak-dealer handover (打不起), the lone-trump transfer (渡) and the dealer's hard-dun reveal.
The deal flow shares the state, actions and events of ``state``; only the rules differ.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from ... import state as st
from ...actions import (Bury, Declare, DecisionKind, HandOver, Pass, Play, Return, RevealDun,
                      Shuffle, Transfer, Uprising)
from ...cards import KINDS, POINTS, RANK_TEXT, TEXT
from ...family import Rule, nothing_to_check
from ...settlement import DealOutcome
from ...state import Declaration, State
from ...errors import IllegalActionError
from ...events import (Buried, DealerSet, Declared,
                     KittyOpened, KittyShown, KittyTakenPublic, Played,
                     PreKittyAction, Redealt, ThrowFailed)
from ...trump import TRUMP, TrumpContext, trump_context

SINGLE, THROW, DUN, INVALID = "single", "throw", "dun", "invalid"
GOLD, HARD, SOFT = "gold", "hard", "soft"
_DUN_RANK = {SOFT: 1, HARD: 2, GOLD: 3}
ACE, JACK, QUEEN, SIX, TWO = 12, 9, 10, 4, 0



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


# -- combinations ---------------------------------------------------------------------------

def dun_rank(cards) -> int | None:
    """The rank of a dun (four cards of one rank, one of each suit), or None."""
    if len(cards) != 4 or any(k >= 52 for k in cards):
        return None
    r = cards[0] % 13
    if any(k % 13 != r for k in cards) or len({k // 13 for k in cards}) != 4:
        return None
    return r


def lead_format(cards, ctx: TrumpContext) -> tuple[str, int]:
    """(single / throw / dun / invalid, suit class) of a lead."""
    if not cards:
        return INVALID, -1
    if dun_rank(cards) is not None:
        return DUN, -1
    c = ctx.cls[cards[0]]
    if any(ctx.cls[k] != c for k in cards) or len(set(cards)) != len(cards):
        return INVALID, -1
    return (SINGLE if len(cards) == 1 else THROW), c


def dun_kind(rank: int, ctx: TrumpContext, by_dealer: bool, revealed: bool) -> str:
    """gold: four level cards; hard: any other seat's, or the dealer's shown before it took
    the kitty (4.2.3.2); soft: the dealer's otherwise."""
    if rank == ctx.level:
        return GOLD
    return HARD if (not by_dealer or revealed) else SOFT


def held_duns(hand: list[int]) -> list[int]:
    return [r for r in range(13) if hand[r] and hand[13 + r] and hand[26 + r] and hand[39 + r]]


def _cards_of(hand, kinds) -> list[int]:
    return [k for k in kinds if hand[k]]


def follow_error(lead, lead_kind: str, lead_cls: int, req: str | None, hand: list[int], play,
                 ctx: TrumpContext) -> str | None:
    """Why ``play`` does not follow (None when it does). ``req`` is the kind of the strongest
    dun so far when a dun was led (its requirement binds later seats, 4.3.1.3)."""
    n = len(lead)
    if len(play) != n:
        return f"must play {n} card{'s' if n != 1 else ''} to follow, not {len(play)}"
    if len(set(play)) != len(play):
        return "a card appears twice in the play"
    cls = ctx.cls
    if lead_kind == DUN:
        duns = held_duns(hand)
        if duns:
            if dun_rank(play) is None:
                shown = ", ".join(" ".join(TEXT[s * 13 + r] for s in range(4)) for r in duns)
                return f"you hold a dun ({shown}): you must play a dun (000 4.3.1.1)"
            return None
        trumps = sorted(_cards_of(hand, ctx.members[TRUMP]), key=ctx.key.__getitem__,
                        reverse=True)
        played_trumps = [k for k in play if cls[k] == TRUMP]
        if req == SOFT:
            sides = [[k for k in ctx.members[c] if hand[k]] for c in range(4) if c != ctx.suit]
            side_total = sum(len(x) for x in sides)
            want_side = min(side_total, 3 + (1 if not trumps else 0))
            if len(play) - len(played_trumps) != want_side:
                return (f"a soft dun is followed by one card of each side suit and one trump: "
                        f"play {want_side} side card{'s' if want_side != 1 else ''} and "
                        f"{4 - want_side} trump{'s' if want_side != 3 else ''}")
            for cards in sides:
                if cards and not any(k in cards for k in play):
                    return (f"a soft dun is followed by one card of each side suit: you hold "
                            f"{ctx.class_name(cls[cards[0]])}")
            return None
        want = min(4, len(trumps))
        if len(played_trumps) != want:
            return (f"a {req} dun is followed by four trumps (you hold {len(trumps)}): play "
                    f"{want} trump{'s' if want != 1 else ''}")
        if req == GOLD:
            pos = ctx.pos
            if sorted(pos[k] for k in played_trumps) != sorted(pos[k] for k in trumps[:want]):
                return ("a gold dun is followed by your four highest trumps: "
                        + " ".join(TEXT[k] for k in trumps[:want]))
        return None
    members = ctx.members[lead_cls]
    held = [k for k in members if hand[k]]
    in_suit = [k for k in play if cls[k] == lead_cls]
    if len(held) >= n:
        if len(in_suit) != n:
            return (f"must follow with {n} {ctx.class_name(lead_cls)}: you hold "
                    + " ".join(TEXT[k] for k in held))
    elif len(in_suit) != len(held):
        return (f"must play all your {ctx.class_name(lead_cls)} first: you hold "
                + " ".join(TEXT[k] for k in held))
    return None


def dun_follow_test(req: str | None, hand: list[int], ctx: TrumpContext):
    """A quick test of 4-card follows to a dun, each of distinct held cards: true exactly
    where ``follow_error`` finds nothing. What the hand and the requirement fix is worked out
    once, so that listing every follow (hundreds of candidates) checks each in a few steps."""
    if held_duns(hand):
        return lambda play: dun_rank(play) is not None
    cls = ctx.cls
    trumps = sorted(_cards_of(hand, ctx.members[TRUMP]), key=ctx.key.__getitem__, reverse=True)
    if req == SOFT:
        sides = [frozenset(k for k in ctx.members[c] if hand[k]) for c in range(4)
                 if c != ctx.suit]
        sides = [x for x in sides if x]
        want_side = min(sum(map(len, sides)), 3 + (1 if not trumps else 0))

        def soft(play) -> bool:
            return (sum(cls[k] != TRUMP for k in play) == want_side
                    and all(not side.isdisjoint(play) for side in sides))
        return soft
    want = min(4, len(trumps))
    if req == GOLD:
        pos = ctx.pos
        top = sorted(pos[k] for k in trumps[:want])

        def gold(play) -> bool:
            played = [k for k in play if cls[k] == TRUMP]
            return len(played) == want and sorted(pos[k] for k in played) == top
        return gold
    return lambda play: sum(cls[k] == TRUMP for k in play) == want


def play_key(lead_kind: str, lead_cls: int, play, ctx: TrumpContext, kind_of_dun=None):
    """Strength of a following play, or None when it cannot win (a discard 贴)."""
    cls = ctx.cls
    if lead_kind == DUN:
        r = dun_rank(play)
        if r is None:
            return None
        return (_DUN_RANK[kind_of_dun(r)], r)
    c = cls[play[0]]
    if any(cls[k] != c for k in play):
        return None
    if lead_kind == SINGLE:
        if c != lead_cls and c != TRUMP:
            return None
        return (1 if c == TRUMP else 0, ctx.pos[play[0]])
    # a throw: only a kill with as many trumps beats it (4.3.2.1), compared by the highest
    if lead_cls == TRUMP or c != TRUMP:
        return None
    return (1, max(ctx.pos[k] for k in play))


def lead_key(lead_kind: str, lead_cls: int, cards, ctx: TrumpContext, kind_of_dun=None):
    if lead_kind == DUN:
        r = dun_rank(cards)
        return (_DUN_RANK[kind_of_dun(r)], r)
    if lead_kind == THROW and lead_cls == TRUMP:
        return (2, 0)  # a trump throw that stood cannot be beaten
    return (1 if lead_cls == TRUMP else 0, max(ctx.pos[k] for k in cards))


def trick_winner(plays, ctx: TrumpContext, dun_kinds=None) -> tuple[int, str | None]:
    """(index of the winning play, the kind of the strongest dun when a dun was led). A stronger
    dun binds the later seats (4.3.1.3); ``dun_kinds[i]`` is the kind of play i's dun (absent:
    gold for four level cards, hard otherwise)."""
    def kind_of(i):
        if dun_kinds is not None and dun_kinds[i] is not None:
            return lambda r: dun_kinds[i]
        return lambda r: GOLD if r == ctx.level else HARD
    lead_kind, c = lead_format(plays[0], ctx)
    best, key = 0, lead_key(lead_kind, c, plays[0], ctx, kind_of(0))
    req = kind_of(0)(dun_rank(plays[0])) if lead_kind == DUN else None
    for i in range(1, len(plays)):
        k = play_key(lead_kind, c, plays[i], ctx, kind_of(i))
        if k is not None and k > key:
            best, key = i, k
            if lead_kind == DUN:
                req = kind_of(i)(dun_rank(plays[i]))
    return best, req


def throw_fails(cards, lead_cls: int, others: list[list[int]], ctx: TrumpContext) -> bool:
    """4.2.2.2: another seat holds a card of the suit stronger than any thrown card."""
    low = min(ctx.pos[k] for k in cards)
    pos = ctx.pos
    return any(hand[k] and pos[k] > low for hand in others for k in ctx.members[lead_cls])


def judge_throw(cards, lead_cls: int, others: list[list[int]],
                ctx: TrumpContext) -> tuple[tuple[int, ...] | None, int]:
    """(the forced play, the penalty) of a throw: ``(None, 0)`` when it stands; when it fails
    the thrower plays its lowest thrown card as a single, with no penalty (4.2.2.2)."""
    if not throw_fails(cards, lead_cls, others, ctx):
        return None, 0
    return (min(cards, key=ctx.key.__getitem__),), 0


def lead_units(cards, ctx: TrumpContext) -> list[tuple[int, ...]]:
    """The units of a lead, strongest first: a dun is one unit, a throw is singles."""
    if dun_rank(cards) is not None:
        return [tuple(cards)]
    return [(k,) for k in sorted(cards, key=ctx.key.__getitem__, reverse=True)]


# -- scoring (5.1, 6.5, 6.6) ------------------------------------------------------------------

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


# -- the deal ---------------------------------------------------------------------------------

def _ctx(s) -> TrumpContext:
    return trump_context(s.level, s.trump)


def reveal_ranks(level: int, uprising_levels: tuple[int, int] | None) -> set[int]:
    """The ranks a reveal may show: the level rank; in the redeal after an uprising, either
    team's level rank (6.1.2)."""
    return {level} if uprising_levels is None else set(uprising_levels)


def reveal_error(cards, level: int, standing: bool, dealing: bool = True,
                 uprising_levels: tuple[int, int] | None = None) -> str | None:
    """Why these cards are no reveal (亮主) now, or None: one level card (3.2), while the cards
    are dealt, and only the first reveal counts (3.2.2)."""
    if not dealing:
        return "a reveal happens while the cards are dealt (000 3.2)"
    if standing:
        return "only the first reveal counts (000 3.2.2)"
    if len(cards) != 1 or cards[0] >= 52 or cards[0] % 13 not in reveal_ranks(level,
                                                                            uprising_levels):
        want = ("a card of either team's level rank" if uprising_levels is not None
                else f"one level card ({RANK_TEXT[level]})")
        return f"a reveal (亮主) is {want}, not {' '.join(TEXT[c] for c in cards)}"
    return None


def reveal_dealer(seat: int, card: int, dealer: int | None,
                  uprising_levels: tuple[int, int] | None) -> int:
    """The dealer after a reveal: a known dealer stays; else the revealer deals (3.2.3), except
    that in an uprising redeal with different levels a card of the opponents' level rank makes
    the opponents dealer (6.1.2.1); with equal levels a reveal is the revealer's own."""
    if dealer is not None:
        return dealer
    if uprising_levels is not None and uprising_levels[0] != uprising_levels[1] \
            and card % 13 == uprising_levels[1 - seat % 2]:
        return (seat + 1) % 4
    return seat


def _uprising_levels(s) -> tuple[int, int] | None:
    return (s.levels[0], s.levels[1]) if s.uprising else None


def may_reveal(s, seat: int) -> list[int]:
    """Level cards this seat may reveal now (only the first reveal counts, 3.2.2)."""
    if s.decl is not None:
        return []
    hand = s.hands[seat]
    lv = s.level
    if not s.uprising and not (hand[lv] or hand[13 + lv] or hand[26 + lv] or hand[39 + lv]):
        return []
    ranks = reveal_ranks(s.level, _uprising_levels(s))
    return [r + 13 * su for r in ranks for su in range(4) if hand[r + 13 * su]]


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


def flip_suit(kitty, level: int) -> int:
    """3.4: the first level card's suit; else the suit of the lowest-ranked card (first flipped
    on ties), jokers skipped."""
    for k in kitty:
        if k < 52 and k % 13 == level:
            return k // 13
    best = None
    for k in kitty:
        if k < 52 and (best is None or k % 13 < best % 13):
            best = k
    assert best is not None  # a kitty of eight holds a suited card
    return best // 13


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
    reason = reveal_error(cards, s.level, s.decl is not None, True, _uprising_levels(s))
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
        dealer = reveal_dealer(seat, card, None, _uprising_levels(n))
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
