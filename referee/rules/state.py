"""The game state shared by every family: one moment of a game, the deal flow every family
walks (dealing one card at a time with chances to declare, rounds of offers, cards passed between
seats, tricks), and the dealer and kitty bookkeeping.

The engine's ``new_game`` builds the first state (of the family's state type: ``State`` plus the
fields only that family keeps) and applies actions to it through the family's rules. States are
never changed in place: a rejected action leaves the state as it was, and any earlier state can be
kept and reused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence, TypeVar

from .actions import DecisionKind, Shuffle
from .cards import KINDS, POINTS, RANK_TEXT, TEXT
from .errors import IllegalActionError, InvalidActionError
from .events import (CardDealt, CardsPassed, CardsPassedPublic, DealEnded, DealerSet,
                     DealStarted, Event, GameEnded, Passed, Played, TrickWon)
from .options import RuleSet
from .settlement import DealOutcome
from .state_type import (P_BURY, P_DEALING, P_DRAW, P_OVER, P_PLAY, P_REDEAL,  # noqa: F401
                         P_ROUND, P_SHUFFLE, Phase, State)

CHANCE = -1
"""``state.turn`` when chance acts (the shuffle, the 004 kitty card)."""
NOBODY = -2
"""``state.turn`` when the game is over."""

_S = TypeVar("_S", bound=State)


def empty_hands() -> list[list[int]]:
    return [[0] * KINDS for _ in range(4)]


def start_game(state_type: type[State], rules: RuleSet, *, levels: Sequence[str] | None = None,
               dealer: int | None = None, max_deals: int | None = None) -> State:
    """The state before the first shuffle (the engine's ``new_game`` names the family's state
    type). ``levels`` (team 0 = seats 0 and 2, team 1 = seats 1 and 3) and ``dealer`` start a
    game from a given position; a ``dealer`` of ``None`` makes the first deal decide it (抢庄).
    ``max_deals`` ends the game after that many deals."""
    s = state_type.__new__(state_type)
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
    s.winner_team = None
    s.max_deals = max_deals
    s.flip_seat = None
    s.match_points = (0, 0, 0, 0)
    for name, value in state_type.GAME_FIELDS.items():
        setattr(s, name, value)
    reset_deal(s)
    return s


def reset_deal(s: State, redeals: int = 0) -> None:
    s.phase = P_SHUFFLE
    s.turn = CHANCE
    s.decision = DecisionKind.SHUFFLE
    s.deck = ()
    s.next_card = 0
    s.first_receiver = None
    s.hands = empty_hands()
    s.kitty = ()
    s.kitty_owner = None
    s.first_deal = s.dealer is None
    s.level = s.levels[s.dealer % 2] if s.dealer is not None else s.levels[0]
    s.trump = None
    s.decl = None
    s.redeals = redeals
    s.round_next = None
    s.round_passes = 0
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
    s.drawn_indexes = ()
    s.drawn_card = None
    s.opened_kitty = ()
    s.hard_duns = frozenset()
    s.dry_pot = False
    s.kitty_public = False
    for name, value in type(s).DEAL_FIELDS.items():
        setattr(s, name, value)


def deal_until_choice(s: State, ev: list, may_declare, after_card=None) -> bool:
    """Deal one card at a time (抓牌). True when the receiver of a card may declare now (its
    DECLARE decision is set); False when all are dealt and the last round of chances is set."""
    dealt = s.rules.hand_size * 4
    hands, deck, first = s.hands, s.deck, s.first_receiver
    i = s.next_card
    append = ev.append
    while i < dealt:
        seat = (first + i) % 4
        card = deck[i]
        hands[seat][card] += 1
        i += 1
        s.next_card = i
        append(CardDealt(seat, card, seat))
        if after_card is not None:
            after_card(s, seat, card, ev)
        if may_declare(s, seat):
            s.turn, s.decision = seat, DecisionKind.DECLARE
            return True
    s.phase = P_ROUND
    s.round_next, s.round_passes = first, 0
    return False


def offer_round(s: State, may_declare, seats=None) -> bool:
    """Go round in seat order from ``round_next`` until four seats in a row have passed (or
    could not declare; only ``seats`` are asked when given). True when a seat's DECLARE decision
    is set."""
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
    hand = own_hand(n, giver)
    for k in cards:
        hand[k] -= 1
    hand = own_hand(n, receiver)
    for k in cards:
        hand[k] += 1
    ev.append(CardsPassed(giver, receiver, tuple(cards), reason, (giver, receiver)))
    ev.append(CardsPassedPublic(giver, receiver, len(cards), reason))


def set_dealer(s: State, seat: int, reason: str, ev: list) -> None:
    s.dealer = seat
    s.level = s.levels[seat % 2]
    ev.append(DealerSet(seat, s.level, reason))


def restart(s: State, redeals: int) -> None:
    """A redeal: same dealer (or none yet), same first receiver rule, new deck."""
    first_deal = s.first_deal
    reset_deal(s, redeals)  # the game's fields (levels, dealer, deal number) stay
    s.first_deal = s.dealer is None and first_deal


def start_play(s: State) -> None:
    s.phase = P_PLAY
    s.leader = s.dealer
    s.turn = s.dealer
    s.decision = DecisionKind.LEAD
    s.trick = ()


def counts_of(cards) -> dict[int, int]:
    out: dict[int, int] = {}
    for c in cards:
        out[c] = out.get(c, 0) + 1
    return out


def require_held(s: State, seat: int, cards: tuple[int, ...], what: str) -> None:
    hand = s.hands[seat]
    size = len(cards)
    if size <= 2:  # fast path: a single or a pair in hand
        k = cards[0]
        if k.__class__ is int and 0 <= k < KINDS and hand[k] >= size and (
                size == 1 or cards[1] == k):
            return
    for k, n in counts_of(cards).items():
        if not 0 <= k < KINDS:
            raise InvalidActionError(f"card {k!r} is not a card")
        if hand[k] < n:
            have = hand[k]
            raise IllegalActionError(
                f"seat {seat} cannot {what} {' '.join(TEXT[c] for c in cards)}: it holds "
                f"{have} {TEXT[k]}" + ("" if have else f" (no {TEXT[k]} in hand)"))


def check_deck(rules: RuleSet, deck: tuple) -> None:
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


def own_hand(n: State, seat: int) -> list[int]:
    """A private copy of one seat's counts (states share unchanged hands)."""
    n.hands = list(n.hands)
    hand = n.hands[seat] = list(n.hands[seat])
    return hand


def remove_cards(n: State, seat: int, cards) -> None:
    hand = own_hand(n, seat)
    for k in cards:
        hand[k] -= 1


def follow_played(s: _S, seat: int, cards: tuple[int, ...], key: Any,
                  end_deal: Callable[[_S, int, list[Event]], None]) -> tuple[_S, tuple[Event, ...]]:
    """The new state after a legal follow of strength ``key`` (None: cannot win); completes the
    trick after the fourth play, and the deal (``end_deal``) after the last trick."""
    n = s.copy()
    remove_cards(n, seat, cards)
    played = Played(seat, cards, False)
    trick = n.trick = s.trick + ((seat, cards),)
    if key is not None and key > n.trick_key:
        n.trick_key = key
        n.trick_best = len(trick) - 1
    if len(trick) < 4:
        n.turn = (seat + 1) % 4
        return n, (played,)
    winner = trick[n.trick_best][0]
    points = 0
    for _, play in trick:
        for k in play:
            points += POINTS[k]
    if winner % 2 != n.dealer % 2:
        n.attacker_points += points
    pbs = list(n.points_by_seat)
    pbs[winner] += points
    n.points_by_seat = tuple(pbs)
    n.tricks = n.tricks + ((trick, winner),)
    ev: list[Event] = [played, TrickWon(winner, points, len(n.tricks))]
    if not any(n.hands[winner]):
        end_deal(n, winner, ev)
        return n, tuple(ev)
    n.leader = winner
    n.turn = winner
    n.decision = DecisionKind.LEAD
    n.trick = ()
    return n, tuple(ev)


def check_drawn_shuffle(s: State, a: Shuffle) -> None:
    """The shuffle of a game whose first deal draws its first receiver (single- and three-deck):
    a full deck, and a first seat while there is no dealer yet."""
    if s.dealer is None and s.flip_seat is None and a.first_seat not in range(4):
        raise InvalidActionError("shuffle: the first deal draws its first receiver; expected a "
                                 "first seat 0-3")
    check_deck(s.rules, tuple(a.deck))


def do_drawn_shuffle(s: State, a: Shuffle, advance):
    """Deal a checked shuffle from the dealer, or from the drawn seat while there is none."""
    rules = s.rules
    deck = tuple(a.deck)
    n = s.copy()
    if n.dealer is not None:
        first = n.dealer
    elif n.flip_seat is not None:
        first = n.flip_seat
    else:
        first = n.flip_seat = a.first_seat
    n.hands = empty_hands()
    n.deck, n.first_receiver = deck, first
    n.kitty = deck[rules.hand_size * 4:]
    n.phase = P_DEALING
    ev: list = [DealStarted(n.deal_no, n.dealer, first, n.levels, n.redeals)]
    advance(n, ev)
    return n, tuple(ev)


def do_pass(s: State, seat: int, advance, queue_phase: str | None = None):
    """A pass: during dealing play goes on, in a declaration round the next seat is asked, in a
    queue of offers (``queue_phase``) the next seat in it."""
    n = s.copy()
    if n.phase == P_DEALING:
        n.hands = [list(h) for h in n.hands]
    ev: list = [Passed(seat, s.decision.value, seat)]
    if n.phase == P_ROUND:
        n.round_passes += 1
        n.round_next = (seat + 1) % 4
    elif n.phase == queue_phase:
        n.queue = n.queue[1:]  # type: ignore[attr-defined]  # a family's queue of offers
    advance(n, ev)
    return n, tuple(ev)


def deal_ended(n: State, out: DealOutcome) -> DealEnded:
    """The public event of a settled deal."""
    return DealEnded(n.deal_no, tuple(n.kitty), n.attacker_points, out.kitty_bonus, n.penalties,
                     out.attacker_total, out.levels, out.next_dealer, out.restore_level)


def next_deal(n: State, out: DealOutcome, ev: list) -> None:
    """After a settled deal: the new levels and dealer, then the game's end (at a winner, or
    after ``max_deals``) or the next deal's shuffle."""
    n.levels, n.dealer = out.levels, out.next_dealer
    n.deal_no += 1
    if out.game_over or (n.max_deals is not None and n.deal_no >= n.max_deals):
        n.winner_team = out.winner_team
        n.phase, n.turn, n.decision = P_OVER, NOBODY, DecisionKind.GAME_OVER
        ev.append(GameEnded(out.winner_team, out.levels, n.deal_no))
        return
    reset_deal(n)


def deal_points_in_play(s: State) -> int:
    """Points still in hands or the current trick (for the conservation invariant)."""
    return sum(POINTS[k] * h[k] for h in s.hands for k in range(KINDS))


@dataclass(frozen=True, slots=True)
class Declaration:
    """A declaration (亮主 / 报主) standing on the table."""

    seat: int
    cards: tuple[int, ...]
    strength: int
    suit: int | None  # None: no-trump
    overturn: bool
