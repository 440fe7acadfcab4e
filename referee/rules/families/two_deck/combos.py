"""Combinations (牌型) of the two-deck games: what a lead is, how it must be followed, who wins a
trick, and whether a throw (甩牌) stands.

Cards here are kinds (ints 0-53, see ``cards``); a hand is a list of 54 counts. A lead is one
*suit class* (a side suit, or trumps) split into units: singles, pairs (对) and tractors (拖拉机:
two or more pairs of consecutive strength). A lead of one unit is that unit; a lead of several is
a throw. Everything is decided by the tables of a ``TrumpContext``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from functools import lru_cache

from ...cards import TEXT
from ...trump import TRUMP, TrumpContext

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
    out: list[tuple[int, int]] = []
    start: Any = None  # the run's low and high positions, once one is open
    prev: Any = None
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


_SMALL_LEADS: dict = {}
"""(trump context, card, 1 or 2) -> the ``Format`` of that single or pair (formats are values)."""


def lead_format(cards, ctx: TrumpContext) -> Format:
    """What ``cards`` are when led."""
    if not cards:
        return Format(INVALID, -1, (), 0)
    cls = ctx.cls
    first = cards[0]
    c = cls[first]
    size = len(cards)
    if size <= 2 and (size == 1 or cards[1] == first):  # a single, a pair
        known = _SMALL_LEADS.get((ctx, first, size))
        if known is None:
            if len(_SMALL_LEADS) >= 20_000:
                _SMALL_LEADS.clear()
            pos = ctx.pos[first]
            unit = Unit(0, pos, (first,)) if size == 1 else Unit(1, pos, (first, first))
            known = _SMALL_LEADS[(ctx, first, size)] = Format(unit.shape, c, (unit,), size)
        return known
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

def _pair_vector(counts: dict[int, int], ctx: TrumpContext) -> list[int]:
    """Pairs held at each strength position (a position holds several kinds on the off-suit
    level rung, so it may hold several pairs)."""
    vec = [0] * 20
    pos = ctx.pos
    for k, n in counts.items():
        if n >= 2:
            vec[pos[k]] += n // 2
    return vec


def _shape_key(vec) -> tuple[int, ...]:
    """The pair vector with only what matters for tractor lengths: zeros at the ends dropped and
    each gap shortened to one zero (so that equal shapes share one cache entry)."""
    out: list[int] = []
    for n in vec:
        if n or (out and out[-1]):
            out.append(n)
    while out and not out[-1]:
        out.pop()
    return tuple(out)


@lru_cache(maxsize=1 << 16)
def _placed(shape: tuple[int, ...], room: tuple[int, ...]) -> tuple[int, ...]:
    """The longest-first best list of tractor lengths that these pairs (``shape``: pairs per
    position) can place into the led tractors (``room``: pairs still free in each, largest
    first, all >= 2). Each placed tractor takes one pair at each of its consecutive positions
    and goes inside one led tractor with room for it. Exact: the first length is the longest
    that fits anywhere, and every placement of it is tried for the rest."""
    longest = run = 0
    for n in shape:
        run = run + 1 if n else 0
        if run > longest:
            longest = run
    t = min(longest, room[0])
    if t < 2:
        return ()
    best: tuple[int, ...] = ()
    seen_rooms = set()
    for r in room:
        if r < t or r in seen_rooms:
            continue
        seen_rooms.add(r)
        rest_room = list(room)
        rest_room.remove(r)
        if r - t >= 2:
            rest_room.append(r - t)
        rest_room.sort(reverse=True)
        room_left = tuple(rest_room)
        for start in range(len(shape) - t + 1):
            if all(shape[start:start + t]):
                rest = list(shape)
                for p in range(start, start + t):
                    rest[p] -= 1
                got = (t,) + (_placed(_shape_key(rest), room_left) if room_left else ())
                if got > best:
                    best = got
                    if best == room:  # each led tractor matched whole: nothing beats it
                        return best
    return best


def structure_match(counts: dict[int, int], ctx: TrumpContext, tractor_lengths: tuple[int, ...],
                    pairs_led: int) -> tuple[tuple[int, ...], int]:
    """How much of a lead's structure these cards (one suit class, kind -> count) hold, as the
    best the cards allow: (the lengths of the tractors placed into the lead's tractors, longest
    first; the pairs matched, at most the lead's pairs). Measures compare as tuples: a longer
    first tractor wins (3 before 2 + 2 before 2), then more pairs."""
    if pairs_led == 0:
        return ((), 0)
    vec = _pair_vector(counts, ctx)
    pairs = min(pairs_led, sum(vec))
    room = tuple(t for t in tractor_lengths if t >= 2)
    if not room:
        return ((), pairs)
    return (_placed(_shape_key(vec), room), pairs)


def full_structure(fmt: "Format") -> tuple[tuple[int, ...], int]:
    """The measure of a lead's own cards against itself: all of its structure."""
    return (fmt.tractor_lengths, fmt.pairs)


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
    want = structure_match(held_counts, ctx, lengths, fmt.pairs)
    got = structure_match(_counts(play), ctx, lengths, fmt.pairs)
    if got == want:
        return None
    pairs_held = ", ".join(TEXT[k] + " " + TEXT[k] for k in members if hand[k] >= 2)
    return (f"must follow with {_owed_text(want)} of {name} (the longest tractors you hold "
            f"first, then pairs); this play has {_owed_text(got)}; you hold pairs {pairs_held}")


def same_shape_answer(fmt: Format, hand: list[int], play, ctx: TrumpContext) -> bool:
    """Botzone's leniency (``following = "same_shape"``): a pair or a tractor was led, the
    follower's ``hand`` (counts, before playing) holds no unit of that shape in the suit led,
    and ``play`` is one unit of that shape (a pair; a tractor of as many pairs) of any suit,
    or, against a tractor, cards of the suit led only with as many pairs as the strict rule
    owes, whatever tractors they make or break (the judge counts the pairs only)."""
    if len(fmt.units) != 1 or fmt.units[0].pairs == 0:
        return False
    pairs = fmt.units[0].pairs
    held = {k: hand[k] for k in ctx.members[fmt.cls] if hand[k] >= 2}
    if pairs == 1:
        if held:
            return False
    elif structure_match(held, ctx, (pairs,), pairs)[0] == (pairs,):
        return False
    got = lead_format(play, ctx)
    if len(got.units) == 1 and got.units[0].pairs == pairs:
        return True
    return pairs >= 2 and _pairs_answer(fmt, held, play, ctx)


def _pairs_answer(fmt: Format, held: dict[int, int], play, ctx: TrumpContext) -> bool:
    """Against a tractor led: is ``play`` all of the suit led, with as many pairs as the lead
    has or the follower holds (``held``: its pairs of the suit led)? Its tractors do not count."""
    c = fmt.cls
    cls = ctx.cls
    if len(play) != fmt.size or any(cls[k] != c for k in play):
        return False
    owed = min(fmt.pairs, sum(n // 2 for n in held.values()))
    return sum(n // 2 for n in _counts(play).values()) >= owed


def _owed_text(measure: tuple[tuple[int, ...], int]) -> str:
    """``a tractor of 3 pairs and 1 more pair`` for a structure measure."""
    tractors, pairs = measure
    parts = [f"a tractor of {t} pairs" for t in tractors]
    loose = pairs - sum(tractors)
    if loose > 0:
        more = " more" if tractors else ""
        parts.append(f"{loose}{more} pair{'s' if loose != 1 else ''}")
    return " and ".join(parts) or "no pair"


def _held_text(hand: list[int], members) -> str:
    return " ".join(TEXT[k] for k in members for _ in range(hand[k])) or "none"


# --- trick winner ----------------------------------------------------------------------------

def _ruff_top(counts: dict[int, int], ctx: TrumpContext, fmt: Format) -> int:
    """Strength of a ruff of a throw: its strongest unit of the shape of the throw's largest
    unit (its longest tractor, else a pair, else a single), taken from a split of the ruff
    that has the throw's whole structure (the ruff is known to have it)."""
    pos = ctx.pos
    largest = fmt.largest.pairs
    if largest == 0:
        return max(pos[k] for k in counts)
    vec = _pair_vector(counts, ctx)
    if largest == 1:
        return max(p for p, n in enumerate(vec) if n)
    rest_room = fmt.tractor_lengths[1:]
    for top in range(len(vec) - 1, largest - 2, -1):
        low = top - largest + 1
        if all(vec[low:top + 1]):
            rest = list(vec)
            for p in range(low, top + 1):
                rest[p] -= 1
            if not rest_room or _placed(_shape_key(rest), rest_room) == rest_room:
                return top
    return -1


def lead_key(fmt: Format) -> tuple[int, int]:
    """Strength of the lead itself: (1 if trumps, strength of its largest unit)."""
    return (1 if fmt.cls == TRUMP else 0, fmt.largest.top)


def play_key(fmt: Format, play, ctx: TrumpContext):
    """Strength of a following play, or ``None`` when it cannot win the trick (a discard 贴, a
    wrong shape, or a follow of a throw in its own suit). A trump play beats the led suit only
    when it has the led structure (杀 / 毙牌: a pair by a pair, a tractor by a tractor, a throw
    by all of its units); two ruffs of a throw compare by their strongest unit of the shape of
    the throw's largest unit."""
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
    if structure_match(counts, ctx, fmt.tractor_lengths, fmt.pairs) != full_structure(fmt):
        return None
    return (1, _ruff_top(counts, ctx, fmt))


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


@dataclass(frozen=True, slots=True)
class ThrowJudgement:
    """A throw's fate (甩牌): ``forced`` is None when it stands; else what is played instead (a
    unit; with ``failed_throw = "first_card"`` one card of one, as a single), with ``beatable``
    the units another seat could beat and ``penalty`` the points charged."""

    forced: Unit | None
    beatable: tuple[Unit, ...]
    penalty: int


def judge_throw(fmt: Format, others: list[list[int]], ctx: TrumpContext,
                penalty_per_card: int, first_card: bool = False) -> ThrowJudgement:
    """Does this throw stand against the other hands (counts)? When a unit can be beaten, the
    thrower plays the forced unit (``forced_unit``; ``first_card``: Botzone's judge,
    ``forced_card``) and is charged ``penalty_per_card`` for every card in the units that could
    be beaten (003 section 8 每錯一張罰10分)."""
    if len(fmt.units) < 2:
        return ThrowJudgement(None, (), 0)
    beat = beatable_units(fmt, others, ctx)
    if not beat:
        return ThrowJudgement(None, (), 0)
    forced = forced_card(beat, ctx) if first_card else forced_unit(beat)
    return ThrowJudgement(forced, tuple(beat),
                          penalty_per_card * sum(len(u.cards) for u in beat))


def forced_unit(beatable: list[Unit]) -> Unit:
    """The unit a failed throw must play: the one whose highest card is weakest; on a tie, the
    one with fewer cards."""
    return min(beatable, key=lambda u: (u.top, len(u.cards)))


JUDGE_SUIT_ORDER = (0, 1, 3, 2)
"""Botzone's judge lists the suits s, h, c, d: the place of each suit index (S H D C) in it."""


def _judge_suit_place(kind: int) -> int:
    """The place of a card's suit in the judge's order (jokers, never equal to another card: 0)."""
    return JUDGE_SUIT_ORDER[kind // 13] if kind < 52 else 0


def forced_card(beatable: list[Unit], ctx: TrumpContext) -> Unit:
    """What a failed throw plays under Botzone's judge (``failed_throw = "first_card"``): the
    first (lowest) card of the beatable unit whose highest card is weakest; between equally
    strong units (off-suit level cards) the one whose highest card's suit comes first in the
    judge's order S, H, C, D, whatever their sizes."""
    unit = min(beatable, key=lambda u: (u.top, _judge_suit_place(u.cards[0])))
    low = unit.cards[-1]
    return Unit(0, ctx.pos[low], (low,))


def dig_pairs(fmt: Format) -> int:
    """Pairs in the largest unit of the last trick's lead, for the kitty multiplier."""
    return fmt.largest.pairs if fmt.units else 0
