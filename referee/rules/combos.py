"""Combinations (牌型) of the two-deck games: what a lead is, how it must be followed, who wins a
trick, and whether a throw (甩牌) stands.

Cards here are kinds (ints 0-53, see ``cards``); a hand is a list of 54 counts. A lead is one
*suit class* (a side suit, or trumps) split into units: singles, pairs (对) and tractors (拖拉机:
two or more pairs of consecutive strength). A lead of one unit is that unit; a lead of several is
a throw. Everything is decided by the tables of a ``TrumpContext``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import TEXT
from .trump import TRUMP, TrumpContext

SINGLE = "single"
PAIR = "pair"
TRACTOR = "tractor"
THROW = "throw"
INVALID = "invalid"


@dataclass(frozen=True, slots=True)
class Unit:
    """One unit of a play: a single (``pairs == 0``), a pair (1) or a tractor (``pairs`` >= 2).

    ``top`` is the strength of its highest card; ``cards`` are strongest first."""

    pairs: int
    top: int
    cards: tuple[int, ...]

    @property
    def shape(self) -> str:
        return SINGLE if self.pairs == 0 else PAIR if self.pairs == 1 else TRACTOR

    def text(self) -> str:
        return " ".join(TEXT[c] for c in self.cards)


@dataclass(frozen=True, slots=True)
class Format:
    """What a set of cards is when led: ``kind`` (single, pair, tractor, throw or invalid), its
    suit class and its units, strongest first (most pairs first, then highest)."""

    kind: str
    cls: int
    units: tuple[Unit, ...]
    size: int

    @property
    def pairs(self) -> int:
        """Pairs in all units together."""
        return sum(u.pairs for u in self.units)

    @property
    def tractor_lengths(self) -> tuple[int, ...]:
        return tuple(u.pairs for u in self.units if u.pairs >= 2)

    @property
    def largest(self) -> Unit:
        return self.units[0]


def _counts(cards) -> dict[int, int]:
    out: dict[int, int] = {}
    for c in cards:
        out[c] = out.get(c, 0) + 1
    return out


def _pair_positions(counts: dict[int, int], ctx: TrumpContext) -> dict[int, list[int]]:
    """Strength position -> the kinds held as a pair there."""
    by_pos: dict[int, list[int]] = {}
    pos = ctx.pos
    for k, n in counts.items():
        if n >= 2:
            by_pos.setdefault(pos[k], []).append(k)
    return by_pos


def _runs(positions) -> list[tuple[int, int]]:
    """Maximal runs of consecutive positions as (low, high), from a set of positions."""
    out = []
    start = prev = None
    for p in sorted(positions):
        if prev is not None and p == prev + 1:
            prev = p
            continue
        if start is not None:
            out.append((start, prev))
        start = prev = p
    if start is not None:
        out.append((start, prev))
    return out


def decompose(cards, ctx: TrumpContext) -> tuple[Unit, ...]:
    """Split cards of one suit class into units: longest tractors first, then pairs, singles."""
    counts = _counts(cards)
    pos = ctx.pos
    key = ctx.key
    by_pos = _pair_positions(counts, ctx)
    for kinds in by_pos.values():
        kinds.sort(key=key.__getitem__, reverse=True)
    units: list[Unit] = []
    while True:
        best = None
        for low, high in _runs([p for p, ks in by_pos.items() if ks]):
            length = high - low + 1
            if length >= 2 and (best is None or length > best[1] - best[0] + 1):
                best = (low, high)
        if best is None:
            break
        low, high = best
        tcards: list[int] = []
        for p in range(high, low - 1, -1):
            k = by_pos[p].pop()
            tcards += (k, k)
            counts[k] -= 2
        units.append(Unit(high - low + 1, high, tuple(tcards)))
    for p, kinds in by_pos.items():
        for k in kinds:
            units.append(Unit(1, p, (k, k)))
            counts[k] -= 2
    for k, n in counts.items():
        for _ in range(n):
            units.append(Unit(0, pos[k], (k,)))
    units.sort(key=lambda u: (u.pairs, u.top, key[u.cards[0]]), reverse=True)
    return tuple(units)


def lead_format(cards, ctx: TrumpContext) -> Format:
    """What ``cards`` are when led."""
    if not cards:
        return Format(INVALID, -1, (), 0)
    cls = ctx.cls
    c = cls[cards[0]]
    if len(cards) == 1:
        k = cards[0]
        return Format(SINGLE, c, (Unit(0, ctx.pos[k], (k,)),), 1)
    for k in cards:
        if cls[k] != c:
            return Format(INVALID, -1, (), len(cards))
    units = decompose(cards, ctx)
    if len(units) == 1:
        kind = units[0].shape
    else:
        kind = THROW
    return Format(kind, c, units, len(cards))


# --- following -------------------------------------------------------------------------------

def _profile(counts: dict[int, int], ctx: TrumpContext, tractor_lengths, pairs_led: int):
    """How much of a lead's structure these cards can match: (tractor pairs matched by tractors
    of the led lengths, further pairs matched). Longer led tractors are matched first, each from
    the shortest run that holds it."""
    if pairs_led == 0:
        return (0, 0)
    per_pos: dict[int, int] = {}
    pos = ctx.pos
    for k, n in counts.items():
        if n >= 2:
            p = pos[k]
            per_pos[p] = per_pos.get(p, 0) + n // 2
    matched = 0
    for length in tractor_lengths:
        fit = None
        for low, high in _runs([p for p, n in per_pos.items() if n]):
            if high - low + 1 >= length and (fit is None or high - low < fit[1] - fit[0]):
                fit = (low, high)
        if fit is not None:
            for p in range(fit[0], fit[0] + length):
                per_pos[p] -= 1
            matched += length
    rest = sum(per_pos.values())
    return (matched, min(pairs_led - matched, rest))


def follow_error(fmt: Format, hand: list[int], play, ctx: TrumpContext) -> str | None:
    """Why ``play`` is not a legal answer to a lead of format ``fmt`` from ``hand`` (counts,
    before playing), or ``None`` when it is legal. ``play`` is known to be in the hand."""
    n = fmt.size
    if len(play) != n:
        return f"must play {n} card{'s' if n != 1 else ''} to follow, not {len(play)}"
    c = fmt.cls
    cls = ctx.cls
    members = ctx.members[c]
    if n == 1:  # fast path: a single led
        if cls[play[0]] == c or not any(map(hand.__getitem__, members)):
            return None
        return (f"must follow with {ctx.class_name(c)}: you hold "
                f"{_held_text(hand, members)}")
    held = sum(map(hand.__getitem__, members))
    in_suit = [k for k in play if cls[k] == c]
    name = ctx.class_name(c)
    if held <= n:
        if len(in_suit) != held:
            return (f"must play all your {name} first: you hold "
                    f"{_held_text(hand, members)}")
        return None
    if len(in_suit) != n:
        return f"must follow with {n} {name}: you hold {held}"
    if fmt.pairs == 0:
        return None
    held_counts = {k: hand[k] for k in members if hand[k]}
    lengths = fmt.tractor_lengths
    want = _profile(held_counts, ctx, lengths, fmt.pairs)
    got = _profile(_counts(play), ctx, lengths, fmt.pairs)
    if got == want:
        return None
    pairs_held = [k for k in members if hand[k] >= 2]
    if got[0] < want[0]:
        return (f"must follow the tractor with a tractor of {name}: you hold pairs "
                f"{', '.join(TEXT[k] + ' ' + TEXT[k] for k in pairs_held)}")
    need = want[0] + want[1]
    return (f"must follow with {need} pair{'s' if need != 1 else ''} of {name}: you hold "
            f"{', '.join(TEXT[k] + ' ' + TEXT[k] for k in pairs_held)}")


def _held_text(hand: list[int], members) -> str:
    return " ".join(TEXT[k] for k in members for _ in range(hand[k])) or "none"


# --- trick winner ----------------------------------------------------------------------------

def _best_top(counts: dict[int, int], ctx: TrumpContext, pairs: int) -> int:
    """Strength of the strongest unit with at least ``pairs`` pairs in these cards (-1: none)."""
    pos = ctx.pos
    if pairs == 0:
        return max(pos[k] for k in counts)
    positions = {pos[k] for k, n in counts.items() if n >= 2}
    if pairs == 1:
        return max(positions, default=-1)
    best = -1
    for low, high in _runs(positions):
        if high - low + 1 >= pairs and high > best:
            best = high
    return best


def lead_key(fmt: Format) -> tuple[int, int]:
    """Strength of the lead itself: (1 if trumps, strength of its largest unit)."""
    return (1 if fmt.cls == TRUMP else 0, fmt.largest.top)


def play_key(fmt: Format, play, ctx: TrumpContext):
    """Strength of a following play, or ``None`` when it cannot win the trick (a discard 贴, a
    wrong shape, or a follow of a throw in its own suit). A trump play beats the led suit only
    when it has the led structure (杀 / 毙牌: a pair by a pair, a tractor by a tractor, a throw
    by the same units); two such plays compare by their largest unit."""
    cls = ctx.cls
    first = play[0]
    c = cls[first]
    if c != fmt.cls and c != TRUMP:
        return None
    size = fmt.size
    if size <= 2 and len(fmt.units) == 1:  # fast paths: a single, a pair
        if size == 2 and (play[1] != first):
            return None
        return (1 if c == TRUMP else 0, ctx.pos[first])
    for k in play:
        if cls[k] != c:
            return None
    counts = _counts(play)
    if len(fmt.units) == 1:
        unit = fmt.units[0]
        units = decompose(play, ctx)
        if len(units) != 1 or units[0].pairs != unit.pairs:
            return None
        return (1 if c == TRUMP else 0, units[0].top)
    if c == fmt.cls:
        return None  # a throw that stood cannot be beaten in its own suit
    lengths = fmt.tractor_lengths
    if _profile(counts, ctx, lengths, fmt.pairs) != (sum(lengths), fmt.pairs - sum(lengths)):
        return None
    return (1, _best_top(counts, ctx, fmt.largest.pairs))


def trick_winner(plays, ctx: TrumpContext) -> int:
    """Index of the winning play; the first of equals wins (先出为大)."""
    fmt = lead_format(plays[0], ctx)
    if fmt.kind == INVALID:
        raise ValueError("the lead is not a legal combination")
    best, best_key = 0, lead_key(fmt)
    for i in range(1, len(plays)):
        key = play_key(fmt, plays[i], ctx)
        if key is not None and key > best_key:
            best, best_key = i, key
    return best


# --- throws ----------------------------------------------------------------------------------

def beatable_units(fmt: Format, others: list[list[int]], ctx: TrumpContext) -> list[Unit]:
    """The units of a throw that some other hand (counts) could beat with a stronger unit of the
    same shape in the same suit class."""
    members = ctx.members[fmt.cls]
    pos = ctx.pos
    need_pairs = any(u.pairs for u in fmt.units)
    need_runs = any(u.pairs >= 2 for u in fmt.units)
    out = []
    tops_single = []
    tops_pair = []
    runs_all = []
    for hand in others:
        best_single = -1
        pair_pos = set()
        for k in members:
            n = hand[k]
            if n:
                p = pos[k]
                if p > best_single:
                    best_single = p
                if n >= 2 and need_pairs:
                    pair_pos.add(p)
        tops_single.append(best_single)
        tops_pair.append(max(pair_pos, default=-1))
        if need_runs:
            runs_all.append(_runs(pair_pos))
    for u in fmt.units:
        if u.pairs == 0:
            beaten = any(t > u.top for t in tops_single)
        elif u.pairs == 1:
            beaten = any(t > u.top for t in tops_pair)
        else:
            beaten = any(high > u.top and high - low + 1 >= u.pairs
                         for runs in runs_all for low, high in runs)
        if beaten:
            out.append(u)
    return out


def forced_unit(beatable: list[Unit]) -> Unit:
    """The unit a failed throw must play: the one whose highest card is weakest; on a tie, the
    one with fewer cards."""
    return min(beatable, key=lambda u: (u.top, len(u.cards)))


def dig_pairs(fmt: Format) -> int:
    """Pairs in the largest unit of the last trick's lead, for the kitty multiplier."""
    return fmt.largest.pairs if fmt.units else 0
