"""The game as a state machine: deals from the shuffle to the last trick, and deals to the end
of the game.

``new_game`` builds the first state. For each decision: ``state.turn`` says who acts (a seat, or
``CHANCE``) and ``state.decision`` what kind of decision it is; ``check(state, action)`` raises
with the reason an action is not allowed, ``is_legal`` answers yes or no, and ``apply`` returns the
new state and the frozen events. States are never changed in place: a rejected action leaves the
state as it was, and any earlier state can be kept and reused.
"""

from __future__ import annotations

from typing import Iterable

from . import combos
from .actions import (Action, Bury, BuryJokers, Declare, DecisionKind, DrawKittyCard, HandOver,
                      Pass, Play, Redeal, Return, RevealDun, Shuffle, Transfer, Uprising)
from .cards import KINDS, POINTS, RANK_TEXT, TEXT
from .declare import (AFTER_BURIAL, DEALING, Situation, declaration_options,
                      declaring_level, judge_declaration)
from .errors import IllegalActionError, InvalidActionError
from .events import (Buried, BuriedPublic, CardDealt, CardsPassed, CardsPassedPublic, DealEnded, DealerSet, DealStarted, Declared,
                     GameEnded, KittyCardDrawn, KittyOpened, KittyTaken, KittyTakenPublic, Passed,
                     Played, Redealt, RedealDemanded, ThrowFailed, TrickWon)
from .options import RuleSet
from .scoring import settle_deal
from .trump import trump_context

CHANCE = -1
"""``state.turn`` when chance acts (the shuffle, the 004 kitty card)."""
NOBODY = -2
"""``state.turn`` when the game is over."""

# phases of a deal
P_SHUFFLE = "shuffle"
P_DEALING = "dealing"
P_ROUND = "declare_round"      # the chances after the last card / after the burial
P_DRAW = "draw_kitty_card"
P_REDEAL = "redeal_offers"
P_BURY = "bury"
P_PLAY = "play"
P_OVER = "game_over"


class State:
    """One moment of a game. Read its attributes; change it only through ``apply``."""

    __slots__ = (
        "rules", "levels", "dealer", "deal_no", "restore_level", "two_exempt", "winner_team",
        "phase", "turn", "decision", "deck", "next_card", "first_receiver", "hands", "kitty",
        "kitty_owner", "level", "trump", "decl", "first_declarer", "shown", "kitty_opened",
        "first_deal", "dealer_known_at_start", "redeals", "round_next", "round_passes",
        "round_kind", "round_seats", "ctx", "trick", "trick_fmt", "trick_best", "trick_key",
        "leader", "tricks", "attacker_points", "penalties", "points_by_seat", "declarations",
        "revealed", "last_deal", "max_deals", "flip_seat", "attackers_asked",
        # single-deck and three-deck
        "step", "queue", "hard_duns", "uprising", "grabber", "grab_pending", "dry_pot",
        "kitty_public", "match_points", "prev_result", "deal_match_points", "pending",
        "side_suits_held", "trick_req",
    )

    def copy(self) -> "State":
        """A shallow copy (hands are copied by whoever changes them)."""
        raise NotImplementedError  # replaced below by a generated straight-line copy

    # -- reading ----------------------------------------------------------------------------
    @property
    def is_terminal(self) -> bool:
        return self.phase == P_OVER

    @property
    def dealer_team(self) -> int | None:
        return None if self.dealer is None else self.dealer % 2

    def hand(self, seat: int) -> tuple[int, ...]:
        """The seat's cards, strongest last in the current trump order."""
        counts = self.hands[seat]
        # the context's kinds in key order (keys are distinct): a sort, done once per context
        order = self.ctx.order if self.ctx is not None else range(KINDS)
        cards: list[int] = []
        for k in order:
            n = counts[k]
            if n:
                if n == 1:
                    cards.append(k)
                else:
                    cards.extend([k] * n)
        return tuple(cards)

    def hand_size(self, seat: int) -> int:
        return sum(self.hands[seat])

    def __repr__(self) -> str:
        return (f"<State deal {self.deal_no} phase {self.phase} turn {self.turn} "
                f"{self.decision.value}>")


def _make_copy():
    # One attribute assignment per slot, generated once: the copy is on every action's path.
    lines = ["def copy(self):", "    n = _new(State)"]
    lines += [f"    n.{name} = self.{name}" for name in State.__slots__]
    lines.append("    return n")
    scope = {"State": State, "_new": object.__new__}
    exec("\n".join(lines), scope)
    copy = scope["copy"]
    copy.__doc__ = "A shallow copy (hands are copied by whoever changes them)."
    return copy


State.copy = _make_copy()


def _empty_hands() -> list[list[int]]:
    return [[0] * KINDS for _ in range(4)]


def new_game(rules: RuleSet, *, levels: tuple[str, str] | None = None, dealer: int | None = None,
             max_deals: int | None = None) -> State:
    """The state before the first shuffle. ``levels`` (team 0 = seats 0 and 2, team 1 = seats 1
    and 3) and ``dealer`` start a game from a given position; a ``dealer`` of ``None`` makes the
    first deal decide it (抢庄). ``max_deals`` ends the game after that many deals."""
    s = State.__new__(State)
    start = RANK_TEXT.index(rules.start_level)
    if levels is None:
        s.levels = (start, start)
    else:
        s.levels = tuple(RANK_TEXT.index(str(x).upper()) for x in levels)
    if dealer is not None and dealer not in range(4):
        raise ValueError(f"dealer {dealer!r}: expected a seat 0-3 or None")
    s.rules = rules
    s.dealer = dealer
    s.deal_no = 0
    s.restore_level = None
    s.two_exempt = frozenset()
    s.winner_team = None
    s.max_deals = max_deals
    s.last_deal = None
    s.flip_seat = None
    s.match_points = (0, 0, 0, 0)
    s.prev_result = None
    s.uprising = False
    _reset_deal(s)
    return s


def _reset_deal(s: State, redeals: int = 0) -> None:
    s.phase = P_SHUFFLE
    s.turn = CHANCE
    s.decision = DecisionKind.SHUFFLE
    s.deck = ()
    s.next_card = 0
    s.first_receiver = None
    s.hands = _empty_hands()
    s.kitty = ()
    s.kitty_owner = None
    s.first_deal = s.dealer is None
    s.dealer_known_at_start = s.dealer is not None
    s.level = s.levels[s.dealer % 2] if s.dealer is not None else s.levels[0]
    s.trump = None
    s.decl = None
    s.first_declarer = None
    s.shown = frozenset()
    s.kitty_opened = False
    s.redeals = redeals
    s.round_next = None
    s.round_passes = 0
    s.round_kind = None
    s.round_seats = None
    s.ctx = None
    s.trick = ()
    s.trick_fmt = None
    s.trick_best = 0
    s.trick_key = None
    s.leader = None
    s.tricks = ()
    s.attacker_points = 0
    s.penalties = (0, 0)
    s.points_by_seat = (0, 0, 0, 0)
    s.declarations = ()
    s.revealed = ()
    s.attackers_asked = False
    s.step = None
    s.queue = ()
    s.hard_duns = frozenset()
    s.grabber = None
    s.grab_pending = False
    s.dry_pot = False
    s.kitty_public = False
    s.deal_match_points = (0, 0, 0, 0)
    s.pending = None
    s.side_suits_held = ()
    s.trick_req = None


# -- the declaration situation ------------------------------------------------------------------

def situation(s: State, seat: int) -> Situation:
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


def _may_declare(s: State, seat: int) -> bool:
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
        lv = s.level
        if not (hand[52] >= 2 or hand[53] >= 2 or hand[lv] >= 2 or hand[13 + lv] >= 2
                or hand[26 + lv] >= 2 or hand[39 + lv] >= 2):
            return False
    return bool(declaration_options(situation(s, seat), seat, hand))


# -- the flow ----------------------------------------------------------------------------------

def _advance(s: State, ev: list) -> None:
    """Run automatic steps until a decision is due."""
    rules = s.rules
    while True:
        if s.phase == P_DEALING:
            if deal_until_choice(s, ev, _may_declare):
                return
            s.round_kind = "dealing"
            continue
        if s.phase == P_ROUND:
            if offer_round(s, _may_declare):
                return
            kind = s.round_kind
            s.round_kind = None
            s.round_seats = None
            if kind in ("dealing", "attackers"):
                if _after_declaring(s, ev):
                    return
            else:  # after_burial: play starts
                _start_play(s)
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


def deal_until_choice(s: State, ev: list, may_declare, after_card=None) -> bool:
    """Deal one card at a time (抓牌). True when the receiver of a card may declare now (its
    DECLARE decision is set); False when all are dealt and the last round of chances is set."""
    dealt = s.rules.hand_size * 4
    hands, deck, first = s.hands, s.deck, s.first_receiver
    while s.next_card < dealt:
        seat = (first + s.next_card) % 4
        card = deck[s.next_card]
        hands[seat][card] += 1
        s.next_card += 1
        ev.append(CardDealt(seat, card, seat))
        if after_card is not None:
            after_card(s, seat, card, ev)
        if may_declare(s, seat):
            s.turn, s.decision = seat, DecisionKind.DECLARE
            return True
    s.phase = P_ROUND
    s.round_next, s.round_passes = first, 0
    return False


def offer_round(s: State, may_declare) -> bool:
    """Go round in seat order from ``round_next`` until four seats in a row have passed (or
    could not declare). True when a seat's DECLARE decision is set."""
    seats = s.round_seats
    while s.round_passes < 4:
        seat = s.round_next
        if (seats is None or seat in seats) and may_declare(s, seat):
            s.turn, s.decision = seat, DecisionKind.DECLARE
            return True
        s.round_passes += 1
        s.round_next = (seat + 1) % 4
    return False


def pass_cards(n: State, giver: int, receiver: int, cards, reason: str, ev: list) -> None:
    """Move cards from one hand to another (a transfer, a tribute, a return): the two seats see
    the cards, everyone sees how many."""
    hand = _own_hand(n, giver)
    for k in cards:
        hand[k] -= 1
    hand = _own_hand(n, receiver)
    for k in cards:
        hand[k] += 1
    ev.append(CardsPassed(giver, receiver, tuple(cards), reason, (giver, receiver)))
    ev.append(CardsPassedPublic(giver, receiver, len(cards), reason))


def _next_attacker(s: State, seat: int) -> int | None:
    """The next attacker after ``seat`` in seat order from the dealer, or None."""
    first = (s.dealer + 1) % 4
    return (first + 2) % 4 if seat == first else None


def _set_trump(s: State, suit: int | None) -> None:
    s.trump = suit
    s.ctx = trump_context(s.level, suit)


def _set_dealer(s: State, seat: int, reason: str, ev: list) -> None:
    s.dealer = seat
    s.level = s.levels[seat % 2]
    ev.append(DealerSet(seat, s.level, reason))


def _after_declaring(s: State, ev: list) -> bool:
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
                _restart(s, s.redeals + 1)
                return True
            if s.first_deal:  # bounded: bots that never declare must not stall a match
                _set_dealer(s, s.first_receiver, "first receiver after "
                            f"{s.redeals} redeals without a declaration", ev)
            _open_kitty(s, ev)
        else:
            s.phase = P_DRAW
            s.turn = CHANCE
            s.decision = DecisionKind.DRAW_KITTY_CARD
            return True
    else:
        if rules.overturn == "pair_joker" and s.first_deal:
            if s.dealer != s.decl.seat:
                _set_dealer(s, s.decl.seat, "declared", ev)
        _set_trump(s, s.decl.suit)
    return _before_kitty(s, ev)


def _dealer_team_can(s: State, seat: int) -> bool:
    sit = Situation(rules=s.rules, level=s.level, phase=DEALING, first_deal=False,
                    dealer=s.dealer, current=None)
    return bool(declaration_options(sit, seat, s.hands[seat]))


def _open_kitty(s: State, ev: list) -> None:
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
    s.revealed = s.revealed + (("opened", tuple(s.kitty)),)
    _set_trump(s, suit)
    ev.append(KittyOpened(tuple(s.kitty), suit))


def _before_kitty(s: State, ev: list) -> bool:
    """Redeal offers (004 暴动), then the dealer takes up the kitty."""
    rules = s.rules
    if rules.max_redeals and s.redeals < rules.max_redeals:
        s.phase = P_REDEAL
        s.round_next = (s.dealer + 1) % 4
        _advance(s, ev)
        return True
    _take_kitty(s, s.dealer, ev)
    return True


def _take_kitty(s: State, seat: int, ev: list) -> None:
    hand = _own_hand(s, seat)
    for k in s.kitty:
        hand[k] += 1
    ev.append(KittyTaken(seat, tuple(s.kitty), seat))
    ev.append(KittyTakenPublic(seat))
    s.kitty = ()
    s.kitty_owner = seat
    s.phase = P_BURY
    s.turn = seat
    s.decision = DecisionKind.BURY


def _restart(s: State, redeals: int) -> None:
    """A redeal: same dealer (or none yet), same first receiver rule, new deck."""
    keep = (s.levels, s.dealer, s.deal_no, s.restore_level, s.two_exempt, s.flip_seat)
    first_deal = s.first_deal
    _reset_deal(s, redeals)
    s.levels, s.dealer, s.deal_no, s.restore_level, s.two_exempt, s.flip_seat = keep
    s.first_deal = s.dealer is None and first_deal
    s.dealer_known_at_start = s.dealer is not None
    s.level = s.levels[s.dealer % 2] if s.dealer is not None else s.levels[0]


def _start_play(s: State) -> None:
    s.phase = P_PLAY
    s.leader = s.dealer
    s.turn = s.dealer
    s.decision = DecisionKind.LEAD
    s.trick = ()


# -- applying ----------------------------------------------------------------------------------

def _counts_of(cards) -> dict[int, int]:
    out: dict[int, int] = {}
    for c in cards:
        out[c] = out.get(c, 0) + 1
    return out


def _require_held(s: State, seat: int, cards: tuple[int, ...], what: str) -> None:
    hand = s.hands[seat]
    if len(cards) <= 2:  # fast path: a single or a pair in hand
        k = cards[0]
        if isinstance(k, int) and 0 <= k < KINDS and hand[k] >= len(cards) and (
                len(cards) == 1 or cards[1] == k):
            return
    for k, n in _counts_of(cards).items():
        if not 0 <= k < KINDS:
            raise InvalidActionError(f"card {k!r} is not a card")
        if hand[k] < n:
            have = hand[k]
            raise IllegalActionError(
                f"seat {seat} cannot {what} {' '.join(TEXT[c] for c in cards)}: it holds "
                f"{have} {TEXT[k]}" + ("" if have else f" (no {TEXT[k]} in hand)"))


_EXPECTED = {
    DecisionKind.SHUFFLE: (Shuffle,),
    DecisionKind.DRAW_KITTY_CARD: (DrawKittyCard,),
    DecisionKind.DECLARE: (Declare, Pass),
    DecisionKind.REDEAL: (Redeal, Pass),
    DecisionKind.BURY: (Bury,),
    DecisionKind.LEAD: (Play,),
    DecisionKind.FOLLOW: (Play,),
    DecisionKind.GAME_OVER: (),
    DecisionKind.UPRISING: (Uprising, Pass),
    DecisionKind.HANDOVER: (HandOver, Pass),
    DecisionKind.TRANSFER: (Transfer, Pass),
    DecisionKind.RETURN: (Return,),
    DecisionKind.DUN_REVEAL: (RevealDun, Pass),
    DecisionKind.JOKER_BURY: (BuryJokers, Pass),
}


def check(s: State, action: Action, seat: int | None = None) -> None:
    """Raise ``IllegalActionError`` / ``InvalidActionError`` with the reason ``action`` (by
    ``seat``; chance when None) is not allowed now. Returns None when it is."""
    _apply(s, action, seat, dry=True)


def is_legal(s: State, action: Action, seat: int | None = None) -> bool:
    try:
        _apply(s, action, seat, dry=True)
    except ValueError:
        return False
    return True


def apply(s: State, action: Action, seat: int | None = None):
    """``(new_state, events)`` after ``seat`` (None for chance) takes ``action``."""
    return _apply(s, action, seat, dry=False)


def _apply(s: State, action: Action, seat: int | None, dry: bool):
    if s.phase == P_OVER:
        raise IllegalActionError("the game is over: no action is expected")
    actor = None if seat is None or seat == CHANCE else seat
    expected_actor = None if s.turn == CHANCE else s.turn
    if actor != expected_actor:
        who = "chance" if expected_actor is None else f"seat {expected_actor}"
        by = "chance" if actor is None else f"seat {actor}"
        raise IllegalActionError(
            f"out of turn: {by} acted, but it is {who}'s turn to {s.decision.value}")
    if not isinstance(action, _EXPECTED[s.decision]):
        names = " or ".join(t.__name__ for t in _EXPECTED[s.decision])
        raise IllegalActionError(
            f"wrong decision kind: the state waits for a {s.decision.value} decision "
            f"({names}), not {type(action).__name__}")
    handler = FAMILY_HANDLERS[s.rules.family][type(action)]
    return handler(s, action, actor, dry)


def _check_deck(rules: RuleSet, deck: tuple) -> None:
    """A shuffle must hold every card exactly ``decks`` times."""
    if len(deck) != 54 * rules.decks:
        raise InvalidActionError(f"shuffle: the deck has {len(deck)} cards, expected "
                                 f"{54 * rules.decks}")
    counts = [0] * KINDS
    for k in deck:
        if not isinstance(k, int) or not 0 <= k < KINDS:
            raise InvalidActionError(f"shuffle: {k!r} is not a card")
        counts[k] += 1
    if any(n != rules.decks for n in counts):
        raise InvalidActionError(f"shuffle: the deck must hold each card exactly {rules.decks} "
                                 "times")


def _do_shuffle(s: State, a: Shuffle, seat, dry):
    rules = s.rules
    deck = tuple(a.deck)
    _check_deck(rules, deck)
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
    if dry:
        return None
    n = s.copy()
    ev: list = []
    if n.dealer is None:
        n.flip_seat = first
    n.hands = _empty_hands()
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


def _do_draw(s: State, a: DrawKittyCard, seat, dry):
    if not isinstance(a.index, int) or not 0 <= a.index < len(s.kitty):
        raise InvalidActionError(f"draw: index {a.index!r} out of range 0-{len(s.kitty) - 1}")
    if dry:
        return None
    n = s.copy()
    ev: list = []
    card = n.kitty[a.index]
    suit = None if card >= 52 else card // 13
    n.revealed = n.revealed + (("drawn", card),)
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
        _set_dealer(n, holder, "holds the drawn kitty card", ev)
    elif n.dealer is None:
        _set_dealer(n, n.first_receiver, "first receiver (nobody holds the drawn card)", ev)
    _set_trump(n, suit)
    _before_kitty(n, ev)
    return n, tuple(ev)


def _do_pass(s: State, a: Pass, seat, dry):
    if dry:
        return None
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


def _do_declare(s: State, a: Declare, seat, dry):
    cards = tuple(a.cards)
    _require_held(s, seat, cards, "show")
    reason, decl = judge_declaration(situation(s, seat), seat, cards)
    if reason:
        raise IllegalActionError(reason)
    if dry:
        return None
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
    if n.first_declarer is None:
        n.first_declarer = seat
    if n.round_kind == "attackers":
        # an attacker declares with its own level and becomes dealer
        _set_dealer(n, seat, "attacker declared", ev)
        n.round_passes = 4
    elif rules.overturn == "level_pairs" and n.dealer is None:
        _set_dealer(n, seat, "first to declare", ev)
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


def _do_redeal(s: State, a: Redeal, seat, dry):
    if dry:
        return None
    n = s.copy()
    ev: list = [RedealDemanded(seat), Redealt(f"seat {seat} demanded a redeal (暴动)")]
    dealer = n.dealer
    _restart(n, n.redeals + 1)
    n.dealer = dealer
    n.first_deal = False
    n.dealer_known_at_start = True
    n.level = n.levels[dealer % 2]
    return n, tuple(ev)


def bury_error(rules: RuleSet, cards) -> str | None:
    """Why this is no burial (two decks: any cards of the hand, as many as the kitty)."""
    if len(cards) != rules.kitty_size:
        return f"must bury exactly {rules.kitty_size} cards, not {len(cards)}"
    return None


def _do_bury(s: State, a: Bury, seat, dry):
    rules = s.rules
    cards = tuple(a.cards)
    reason = bury_error(rules, cards)
    if reason:
        raise IllegalActionError(reason)
    _require_held(s, seat, cards, "bury")
    if dry:
        return None
    n = s.copy()
    _remove(n, seat, cards)
    n.kitty = cards
    n.kitty_owner = seat
    ev: list = [Buried(seat, cards, seat), BuriedPublic(seat)]
    if n.kitty_opened or (rules.overturn == "pair_joker" and n.first_deal):
        _start_play(n)
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


def _do_play(s: State, a: Play, seat, dry):
    cards = tuple(a.cards)
    if not cards:
        raise IllegalActionError("a play needs at least one card")
    _require_held(s, seat, cards, "play")
    ctx = s.ctx
    if s.decision == DecisionKind.LEAD:
        fmt = combos.lead_format(cards, ctx)
        if fmt.kind == combos.INVALID:
            classes = sorted({ctx.class_name(ctx.cls[k]) for k in cards})
            raise IllegalActionError(
                f"a lead must be one suit (trumps count as one suit): {' '.join(TEXT[c] for c in cards)} "
                f"mixes {' and '.join(classes)}")
        if dry:
            return None
        return _lead(s, seat, cards, fmt)
    reason = combos.follow_error(s.trick_fmt, s.hands[seat], cards, ctx)
    if reason:
        raise IllegalActionError(reason)
    if dry:
        return None
    return _follow(s, seat, cards)


def _own_hand(n: State, seat: int) -> list[int]:
    """A private copy of one seat's counts (states share unchanged hands)."""
    n.hands = list(n.hands)
    hand = n.hands[seat] = list(n.hands[seat])
    return hand


def _remove(n: State, seat: int, cards) -> None:
    hand = _own_hand(n, seat)
    for k in cards:
        hand[k] -= 1


def _lead(s: State, seat: int, cards, fmt):
    n = s.copy()
    a_cards = cards
    ev: list = []
    ctx = n.ctx
    if fmt.kind == combos.THROW:
        others = [n.hands[(seat + i) % 4] for i in (1, 2, 3)]
        judged = combos.judge_throw(fmt, others, ctx, n.rules.throw_penalty)
        if judged.forced is not None:
            team = 0 if seat % 2 == n.dealer % 2 else 1
            pen = list(n.penalties)
            pen[team] += judged.penalty
            n.penalties = tuple(pen)
            cards = judged.forced.cards
            ev.append(ThrowFailed(seat, tuple(a_cards), cards, judged.penalty))
            fmt = combos.lead_format(cards, ctx)
    _remove(n, seat, cards)
    n.trick = ((seat, tuple(cards)),)
    n.trick_fmt = fmt
    n.trick_best = 0
    n.trick_key = combos.lead_key(fmt)
    n.leader = seat
    n.turn = (seat + 1) % 4
    n.decision = DecisionKind.FOLLOW
    ev.append(Played(seat, tuple(cards), True))
    return n, tuple(ev)


def _follow(s: State, seat: int, cards):
    return follow_played(s, seat, tuple(cards), combos.play_key(s.trick_fmt, cards, s.ctx),
                         _end_deal)


def follow_played(s: State, seat: int, cards: tuple, key, end_deal):
    """The new state after a legal follow of strength ``key`` (None: cannot win); completes the
    trick after the fourth play, and the deal (``end_deal``) after the last trick."""
    n = s.copy()
    _remove(n, seat, cards)
    ev: list = [Played(seat, cards, False)]
    n.trick = n.trick + ((seat, cards),)
    if key is not None and key > n.trick_key:
        n.trick_key = key
        n.trick_best = len(n.trick) - 1
    if len(n.trick) < 4:
        n.turn = (seat + 1) % 4
        return n, tuple(ev)
    winner = n.trick[n.trick_best][0]
    points = 0
    for _, play in n.trick:
        for k in play:
            points += POINTS[k]
    if winner % 2 != n.dealer % 2:
        n.attacker_points += points
    pbs = list(n.points_by_seat)
    pbs[winner] += points
    n.points_by_seat = tuple(pbs)
    n.tricks = n.tricks + ((n.trick, winner),)
    ev.append(TrickWon(winner, points, len(n.tricks)))
    if sum(n.hands[winner]) == 0:
        end_deal(n, winner, ev)
        return n, tuple(ev)
    n.leader = winner
    n.turn = winner
    n.decision = DecisionKind.LEAD
    n.trick = ()
    return n, tuple(ev)


def shuffle_and_deal(s: State, a: Shuffle, dry: bool, advance):
    """A shuffle for a game whose first deal draws its first receiver (single- and three-deck):
    deal from the dealer, or from the drawn seat while there is none."""
    rules = s.rules
    if s.dealer is None and s.flip_seat is None and a.first_seat not in range(4):
        raise InvalidActionError("shuffle: the first deal draws its first receiver; expected a "
                                 "first seat 0-3")
    deck = tuple(a.deck)
    _check_deck(rules, deck)
    if dry:
        return None
    n = s.copy()
    if n.dealer is not None:
        first = n.dealer
    elif n.flip_seat is not None:
        first = n.flip_seat
    else:
        first = n.flip_seat = a.first_seat
    n.hands = _empty_hands()
    n.deck, n.first_receiver = deck, first
    n.kitty = deck[rules.hand_size * 4:]
    n.phase = P_DEALING
    ev: list = [DealStarted(n.deal_no, n.dealer, first, n.levels, n.redeals)]
    advance(n, ev)
    return n, tuple(ev)


def pass_in_round(s: State, seat: int, dry: bool, advance, queue_phase: str):
    """A pass: during dealing play goes on, in a declaration round the next seat is asked, in a
    queue of offers (``queue_phase``) the next seat in it."""
    if dry:
        return None
    n = s.copy()
    if n.phase == P_DEALING:
        n.hands = [list(h) for h in n.hands]
    ev: list = [Passed(seat, s.decision.value, seat)]
    if n.phase == P_ROUND:
        n.round_passes += 1
        n.round_next = (seat + 1) % 4
    elif n.phase == queue_phase:
        n.queue = n.queue[1:]
    advance(n, ev)
    return n, tuple(ev)


def _decisive_rank(n: State) -> int | None:
    """Rank of the card that decides the last trick's winning play (its largest unit's top)."""
    _, play = n.trick[n.trick_best]
    top = n.trick_key[1]
    pos = n.ctx.pos
    for k in play:
        if pos[k] == top:
            return None if k >= 52 else k % 13
    return None


def _end_deal(n: State, winner: int, ev: list) -> None:
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
    ev.append(DealEnded(n.deal_no, tuple(n.kitty), n.attacker_points, out.kitty_bonus,
                        n.penalties, out.attacker_total, out.levels, out.next_dealer,
                        out.restore_level))
    n.last_deal = out
    n.levels = out.levels
    n.restore_level = out.restore_level
    n.two_exempt = out.two_exempt
    n.dealer = out.next_dealer
    n.deal_no += 1
    if out.game_over or (n.max_deals is not None and n.deal_no >= n.max_deals):
        n.winner_team = out.winner_team
        n.phase = P_OVER
        n.turn = NOBODY
        n.decision = DecisionKind.GAME_OVER
        ev.append(GameEnded(out.winner_team, out.levels, n.deal_no))
        return
    _reset_deal(n)


_HANDLERS = {
    Shuffle: _do_shuffle,
    DrawKittyCard: _do_draw,
    Pass: _do_pass,
    Declare: _do_declare,
    Redeal: _do_redeal,
    Bury: _do_bury,
    Play: _do_play,
}


#: Action handlers per game family; the single-deck and three-deck modules add theirs.
FAMILY_HANDLERS: dict[str, dict] = {"two_deck": _HANDLERS}


def deal_points_in_play(s: State) -> int:
    """Points still in hands or the current trick (for the conservation invariant)."""
    return sum(POINTS[k] * h[k] for h in s.hands for k in range(KINDS))


def apply_all(s: State, actions: Iterable[tuple[int | None, Action]]):
    """Apply (seat, action) pairs in order; returns the final state and all events."""
    events: list = []
    for seat, action in actions:
        s, ev = apply(s, action, seat)
        events.extend(ev)
    return s, events


from . import single_deck, three_deck  # noqa: E402,F401  (they register their handlers)
