"""single-deck's combinations (000 section 4): singles, throws of one suit (甩) and duns (礅:
the four cards of one rank, gold, hard or soft); how a follow answers each, who wins the trick,
and how a throw fails."""

from __future__ import annotations

from ...cards import TEXT
from ...trump import TRUMP, TrumpContext

SINGLE, THROW, DUN, INVALID = "single", "throw", "dun", "invalid"
GOLD, HARD, SOFT = "gold", "hard", "soft"
_DUN_RANK = {SOFT: 1, HARD: 2, GOLD: 3}


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
