"""three-deck's combinations: singles, pairs (棒子) and triples (滚子) of identical cards; the
trump context, every 2 a permanent trump (常主); how a follow answers a lead under dead (死棒) or
live (活棒) pair following; and who wins the trick."""

from __future__ import annotations

from ...cards import TEXT
from ...trump import TRUMP, TrumpContext, trump_context

SINGLE, PAIR, TRIPLE, INVALID = "single", "pair", "triple", "invalid"


def context(level: int, suit: int | None) -> TrumpContext:
    """The trump context of a level and a trump suit, every 2 a permanent trump."""
    return trump_context(level, suit, True)


def lead_format(cards, ctx: TrumpContext) -> tuple[str, int]:
    """(single / pair / triple / invalid, suit class): only identical cards combine (002)."""
    n = len(cards)
    if n == 0 or n > 3 or any(k != cards[0] for k in cards):
        return INVALID, -1
    return (SINGLE, PAIR, TRIPLE)[n - 1], ctx.cls[cards[0]]


def follow_error(lead, hand: list[int], play, ctx: TrumpContext, live: bool) -> str | None:
    n = len(lead)
    if len(play) != n:
        return f"must play {n} card{'s' if n != 1 else ''} to follow, not {len(play)}"
    c = ctx.cls[lead[0]]
    cls = ctx.cls
    members = ctx.members[c]
    held = sum(hand[k] for k in members)
    in_suit = [k for k in play if cls[k] == c]
    name = ctx.class_name(c)
    if held <= n:
        if len(in_suit) != held:
            return f"must play all your {name} first: you hold {held}"
        return None
    if len(in_suit) != n:
        return f"must follow with {n} {name}: you hold {held}"
    if live or n == 1:
        return None
    counts: dict[int, int] = {}
    for k in play:
        counts[k] = counts.get(k, 0) + 1
    biggest = max(counts.values())
    if n == 2:
        pairs = [k for k in members if hand[k] == 2]
        if pairs and biggest < 2:
            return ("must follow the pair with a pair (死棒): you hold "
                    + ", ".join(f"{TEXT[k]} {TEXT[k]}" for k in pairs))
        return None
    triples = [k for k in members if hand[k] >= 3]
    if triples and biggest < 3:
        return ("must follow the triple with a triple (死棒): you hold "
                + ", ".join(" ".join([TEXT[k]] * 3) for k in triples))
    if not triples:
        pairs = [k for k in members if hand[k] == 2]
        if pairs and biggest < 2:
            return ("must follow the triple with a pair and a single (死棒): you hold "
                    + ", ".join(f"{TEXT[k]} {TEXT[k]}" for k in pairs))
    return None


def play_key(lead, play, ctx: TrumpContext):
    """A play of another shape than the lead is small (001 section 7)."""
    if any(k != play[0] for k in play):
        return None
    c = ctx.cls[play[0]]
    lc = ctx.cls[lead[0]]
    if c != lc and c != TRUMP:
        return None
    return (1 if c == TRUMP else 0, ctx.pos[play[0]])


def trick_winner(plays, ctx: TrumpContext) -> int:
    lead = plays[0]
    best, key = 0, (1 if ctx.cls[lead[0]] == TRUMP else 0, ctx.pos[lead[0]])
    for i in range(1, len(plays)):
        k = play_key(lead, plays[i], ctx)
        if k is not None and k > key:
            best, key = i, k
    return best
