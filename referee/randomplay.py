"""Random legal play, for tests, benchmarks and the ``random`` sample bot. The random generator
is an input; the engine itself has none."""

from __future__ import annotations

import random

from .rules import combos
from .rules import single_deck as sd
from .rules import three_deck as td
from .rules.actions import BuryJokers, HandOver, Return, RevealDun, Transfer, Uprising
from .rules.cards import BIG_JOKER, LITTLE_JOKER, POINTS
from .rules.actions import Bury, DecisionKind, Declare, Pass, Play, Redeal
from .rules.declare import declaration_options
from .rules.legal import lead_units, legal_follows
from .rules.state import State, situation
from .rules.trump import TRUMP

DECLARE_RATE = 0.35
THROW_RATE = 0.25
TRACTOR_RATE = 0.15


def _cards(hand: list[int], kinds) -> list[int]:
    """The cards of ``kinds`` in a hand of counts, each as often as held."""
    out = [k for k in kinds if hand[k]]
    extra = [k for k in out if hand[k] > 1]
    if extra:
        out += extra
        for k in extra:
            if hand[k] > 2:
                out.extend([k] * (hand[k] - 2))
    return out


def random_action(s: State, rng: random.Random, declare_rate: float = DECLARE_RATE):
    """A random legal action for the seat to act (every decision kind, throws included);
    ``declare_rate`` is the chance of declaring when a declaration is possible."""
    family = s.rules.family
    if family == "single_deck":
        return _single_deck_action(s, rng, declare_rate)
    if family == "three_deck":
        return _three_deck_action(s, rng, declare_rate)
    kind = s.decision
    seat = s.turn
    if kind == DecisionKind.DECLARE:
        options = declaration_options(situation(s, seat), seat, s.hands[seat])
        if options and rng.random() < declare_rate:
            return Declare(rng.choice(options))
        return Pass()
    if kind == DecisionKind.REDEAL:
        return Redeal() if rng.random() < 0.5 else Pass()
    if kind == DecisionKind.BURY:
        cards = _cards(s.hands[seat], range(54))
        return Bury(tuple(rng.sample(cards, s.rules.kitty_size)))
    if kind == DecisionKind.LEAD:
        r = rng.random()
        if r < THROW_RATE:
            throw = _random_throw(s, seat, rng)
            if throw:
                return Play(throw)
        if r < THROW_RATE + TRACTOR_RATE:
            return Play(rng.choice(lead_units(s, seat)))
        hand = s.hands[seat]
        k = rng.choice(_cards(hand, range(54)))
        return Play((k, k) if hand[k] >= 2 and rng.random() < 0.6 else (k,))
    if kind == DecisionKind.FOLLOW:
        return Play(_random_follow(s, seat, rng))
    raise ValueError(f"no seat decision now: {kind.value}")


def _random_throw(s: State, seat: int, rng: random.Random):
    hand = s.hands[seat]
    ctx = s.ctx
    classes = [c for c in range(5) if sum(map(hand.__getitem__, ctx.members[c])) >= 2]
    if not classes:
        return None
    c = rng.choice(classes)
    cards = _cards(hand, ctx.members[c])
    n = rng.randint(2, min(len(cards), 6))
    # favour strong cards: throws of top cards are what players try
    cards = cards[: max(n, min(len(cards), n + 2))]
    return tuple(rng.sample(cards, n))


def _random_follow(s: State, seat: int, rng: random.Random):
    fmt = s.trick_fmt
    ctx = s.ctx
    hand = s.hands[seat]
    n = fmt.size
    suit = _cards(hand, ctx.members[fmt.cls])
    if len(suit) <= n:
        cls = ctx.cls
        rest = _cards(hand, [k for k in range(54) if hand[k] and cls[k] != fmt.cls])
        # void or short: fill with anything; try a matching ruff now and then
        if not suit and fmt.cls != TRUMP and rng.random() < 0.5:
            trumps = _cards(hand, ctx.members[TRUMP])
            if len(trumps) >= n:
                return tuple(rng.sample(trumps, n))
        return tuple(suit) + tuple(rng.sample(rest, n - len(suit)))
    if fmt.pairs == 0:
        return tuple(rng.sample(suit, n))
    if n == 2:  # a pair led: a pair of the suit is owed when held
        pairs = [k for k in ctx.members[fmt.cls] if hand[k] >= 2]
        if pairs:
            k = rng.choice(pairs)
            return (k, k)
        return tuple(rng.sample(suit, 2))
    for _ in range(4):
        play = tuple(rng.sample(suit, n))
        if combos.follow_error(fmt, hand, play, ctx) is None:
            return play
    return rng.choice(legal_follows(s, seat))


# -- single-deck -------------------------------------------------------------------------------

_FOLLOW = DecisionKind.FOLLOW
_LEAD = DecisionKind.LEAD


def _single_deck_action(s: State, rng: random.Random, declare_rate: float):
    kind, seat = s.decision, s.turn
    hand = s.hands[seat]
    ctx = s.ctx
    if kind is _FOLLOW:
        lead_kind, c, lead = s.trick_fmt
        if lead_kind == sd.SINGLE:  # legal by construction: the suit if held, else anything
            suit = [k for k in ctx.members[c] if hand[k]]
            return Play((rng.choice(suit or [k for k, x in enumerate(hand) if x]),))
    if kind == DecisionKind.DECLARE:
        options = sd._may_reveal(s, seat)
        if options and rng.random() < declare_rate:
            return Declare((rng.choice(options),))
        return Pass()
    if kind == DecisionKind.UPRISING:
        return Uprising() if rng.random() < 0.3 else Pass()
    if kind == DecisionKind.HANDOVER:
        return HandOver() if rng.random() < 0.5 else Pass()
    if kind == DecisionKind.TRANSFER:
        return Transfer(tuple(sd._trumps(s, seat))) if rng.random() < 0.5 else Pass()
    if kind == DecisionKind.RETURN:
        side = [k for k in range(54) if hand[k] and ctx.cls[k] != TRUMP]
        return Return((rng.choice(side or _cards(hand, range(54))),))
    if kind == DecisionKind.DUN_REVEAL:
        ranks = [r for r in sd.held_duns(hand) if r != s.level and r not in s.hard_duns]
        if ranks and rng.random() < 0.7:
            r = rng.choice(ranks)
            return RevealDun(tuple(su * 13 + r for su in range(4)))
        return Pass()
    if kind == DecisionKind.BURY:
        cards = _cards(hand, range(54))
        for _ in range(30):
            pick = tuple(rng.sample(cards, s.rules.kitty_size))
            if sd.bury_error(s.rules, hand, pick, ctx, s.side_suits_held) is None:
                return Bury(pick)
        for b in _lazy_legal(s):
            return b
    if kind == DecisionKind.LEAD:
        duns = sd.held_duns(hand)
        if duns and rng.random() < 0.5:
            d = rng.choice(duns)
            return Play(tuple(su * 13 + d for su in range(4)))
        if rng.random() < THROW_RATE:
            throw = _random_throw(s, seat, rng)
            if throw:
                return Play(throw)
        return Play((rng.choice([k for k, x in enumerate(hand) if x]),))
    if kind == DecisionKind.FOLLOW:
        lead_kind, c, lead = s.trick_fmt
        n = len(lead)
        if lead_kind == sd.SINGLE:  # legal by construction: the suit if held, else anything
            suit = [k for k in ctx.members[c] if hand[k]]
            return Play((rng.choice(suit or [k for k, x in enumerate(hand) if x]),))
        for _ in range(6):
            if lead_kind == sd.DUN:
                duns = sd.held_duns(hand)
                if duns:
                    d = rng.choice(duns)
                    return Play(tuple(su * 13 + d for su in range(4)))
                play = _dun_follow(s, hand, rng)
            else:
                suit = _cards(hand, ctx.members[c])
                if len(suit) >= n:
                    play = tuple(rng.sample(suit, n))
                else:
                    rest = [k for k in _cards(hand, range(54)) if ctx.cls[k] != c]
                    play = tuple(suit) + tuple(rng.sample(rest, n - len(suit)))
            if sd.follow_error(lead, lead_kind, c, s.trick_req, hand, play, ctx) is None:
                return Play(play)
        return rng.choice(list(_lazy_legal(s)))
    raise ValueError(f"no seat decision now: {kind.value}")


def _dun_follow(s: State, hand, rng: random.Random):
    ctx = s.ctx
    trumps = sorted(_cards(hand, ctx.members[TRUMP]), key=ctx.key.__getitem__, reverse=True)
    sides = [_cards(hand, ctx.members[c]) for c in range(4) if c != ctx.suit]
    if s.trick_req == "soft":
        play = [rng.choice(x) for x in sides if x]
        if trumps:
            play.append(rng.choice(trumps))
        rest = [k for x in sides for k in x if k not in play]
        while len(play) < 4 and rest:
            k = rng.choice(rest)
            rest.remove(k)
            play.append(k)
        rest = [k for k in trumps if k not in play]
        while len(play) < 4:
            k = rng.choice(rest)
            rest.remove(k)
            play.append(k)
        return tuple(play)
    take = trumps[:4] if s.trick_req == "gold" else rng.sample(trumps, min(4, len(trumps)))
    side = [k for x in sides for k in x]
    return tuple(take) + tuple(rng.sample(side, 4 - len(take)))


def _lazy_legal(s: State):
    from .rules.legal import legal_actions
    return iter(legal_actions(s))


# -- three-deck --------------------------------------------------------------------------------

def _three_deck_action(s: State, rng: random.Random, declare_rate: float):
    kind, seat = s.decision, s.turn
    hand = s.hands[seat]
    ctx = s.ctx
    if kind == DecisionKind.DECLARE:
        options = td.declaration_options(s, seat)
        if options and rng.random() < declare_rate:
            return rng.choice(options)
        return Pass()
    if kind == DecisionKind.RETURN:
        count = s.pending[2]
        cards = _cards(hand, range(54))
        side = [k for k in cards if ctx.cls[k] != TRUMP and not POINTS[k]]
        plain = [k for k in cards if ctx.cls[k] == TRUMP and not POINTS[k]]
        points = [k for k in cards if POINTS[k]]
        out = []
        for pool in (side, plain, points):
            take = min(len(pool), count - len(out))
            out += rng.sample(pool, take)
        return Return(tuple(out))
    if kind == DecisionKind.BURY:
        cards = _cards(hand, range(54))
        while True:
            pick = tuple(rng.sample(cards, s.rules.kitty_size))
            lj = pick.count(LITTLE_JOKER)
            if not lj or hand[BIG_JOKER] <= pick.count(BIG_JOKER):
                return Bury(pick)
    if kind == DecisionKind.JOKER_BURY:
        if rng.random() < 0.5:
            return Pass()
        cands = td.take_candidates(s.kitty, ctx)
        jokers = [BIG_JOKER] * hand[BIG_JOKER] + [LITTLE_JOKER] * hand[LITTLE_JOKER]
        n = rng.randint(1, min(len(jokers), len(cands)))
        if not s.kitty_public:  # a hidden kitty: the referee picks what is taken back
            return BuryJokers(tuple(jokers[:n]), ())
        return BuryJokers(tuple(jokers[:n]), tuple(cands[:n]))
    if kind == DecisionKind.LEAD:
        k = rng.choice(_cards(hand, range(54)))
        n = rng.randint(1, min(3, hand[k]))
        return Play((k,) * n)
    if kind == DecisionKind.FOLLOW:
        lead = s.trick_fmt
        n = len(lead)
        c = ctx.cls[lead[0]]
        suit = _cards(hand, ctx.members[c])
        live = s.rules.pair_following == "live"
        for _ in range(6):
            if len(suit) <= n:
                rest = [k for k in _cards(hand, range(54)) if ctx.cls[k] != c]
                if not suit and c != TRUMP and rng.random() < 0.5:
                    groups = [k for k in ctx.members[TRUMP] if hand[k] >= n]
                    if groups:
                        return Play((rng.choice(groups),) * n)
                play = tuple(suit) + tuple(rng.sample(rest, n - len(suit)))
            else:
                groups = [k for k in ctx.members[c] if hand[k] >= n]
                if n > 1 and groups and (not live or rng.random() < 0.5):
                    play = (rng.choice(groups),) * n
                elif n == 3 and not live:
                    pairs = [k for k in ctx.members[c] if hand[k] == 2]
                    if pairs:
                        p = rng.choice(pairs)
                        other = [k for k in suit if k != p]
                        play = (p, p, rng.choice(other))
                    else:
                        play = tuple(rng.sample(suit, n))
                else:
                    play = tuple(rng.sample(suit, n))
            if td.follow_error(lead, hand, play, ctx, live) is None:
                return Play(play)
        return rng.choice(list(_lazy_legal(s)))
    raise ValueError(f"no seat decision now: {kind.value}")
