"""Randomized cross-check of the two-deck following rule (combos.structure_match) and of what it
drives (follow_error, the ruff of a throw in play_key / trick_winner) against a brute-force oracle.

The rule (two-deck-80 "Following"): over every way to pick disjoint tractors from the cards (2+
pairs at consecutive strength positions, one pair per position; the off-suit level rung is one
position that may hold several pairs of different kinds), and every way to place each picked
tractor inside one led tractor with room for it (a led tractor of k pairs holds tractors whose
lengths add up to at most k), the lexicographically greatest longest-first list of the placed
lengths; with it, the pairs matched: min(pairs led, pairs held).

The oracle below is written from that text alone: it enumerates splits of the cards kind by kind
and tries every assignment of a split's tractors to the led tractors. It uses only the context's
tables (``cls``, ``pos``, ``members``), never a helper of ``combos``.
"""

from __future__ import annotations

import random
from functools import lru_cache
from itertools import product

import pytest

from referee.rules.cards import format_cards, parse_cards
from referee.rules.families.two_deck.combos import follow_error, lead_format, play_key, structure_match, \
    trick_winner
from referee.rules.trump import TRUMP, trump_context

SEED = 20240611
STRUCTURE_CASES = 20000
FOLLOW_CASES = 4000
RUFF_CASES = 4000

# the lead shapes that stress placement: one tractor, several tractors, tractors plus pairs
LEAD_SHAPES = [(), (2,), (3,), (4,), (2, 2), (3, 2), (3, 3), (4, 2), (2, 2, 2), (3, 2, 2),
               (4, 3), (5,), (6,)]


# --- the oracle --------------------------------------------------------------------------------

def _tractor_splits(counts: dict[int, int], ctx) -> set[tuple[tuple[int, int], ...]]:
    """Every set of disjoint tractors the cards can be split into, each tractor as (pairs, top
    position), the set sorted. The cards outside the tractors are pairs or singles; which of the
    two does not matter for the tractors, so that choice is not enumerated.

    Pairs are taken in order of position (then kind); each is either outside every tractor or
    the lowest pair of a tractor that goes up one position at a time, taking at each position
    any one still free kind held twice there."""
    pos = ctx.pos
    pairs = sorted((pos[k], k) for k, n in counts.items() if n >= 2)
    at: dict[int, list[int]] = {}
    for p, k in pairs:
        at.setdefault(p, []).append(k)
    used: set[int] = set()
    chosen: list[tuple[int, int]] = []
    out: set[tuple[tuple[int, int], ...]] = set()

    def split_from(i: int) -> None:
        while i < len(pairs) and pairs[i][1] in used:
            i += 1
        if i == len(pairs):
            out.add(tuple(sorted(chosen, reverse=True)))
            return
        p, k = pairs[i]
        used.add(k)
        split_from(i + 1)  # this pair is in no tractor

        def grow(q: int, length: int) -> None:  # a tractor p..q-1 so far; add a pair at q
            for k2 in at.get(q, ()):
                if k2 in used:
                    continue
                used.add(k2)
                chosen.append((length + 1, q))
                split_from(i + 1)  # the tractor ends at q
                chosen.pop()
                grow(q + 1, length + 1)  # or goes on
                used.discard(k2)

        grow(p + 1, 1)
        used.discard(k)

    split_from(0)
    return out


@lru_cache(maxsize=None)
def _best_assignment(lengths: tuple[int, ...], room: tuple[int, ...]) -> tuple[int, ...]:
    """Every assignment of the tractors (``lengths``) to a led tractor or to none, within each led
    tractor's room; the greatest longest-first list of the placed lengths."""
    best: tuple[int, ...] = ()
    for choice in product(range(-1, len(room)), repeat=len(lengths)):
        load = [0] * len(room)
        placed = []
        for length, j in zip(lengths, choice):
            if j >= 0:
                load[j] += length
                placed.append(length)
        if all(load[j] <= room[j] for j in range(len(room))):
            got = tuple(sorted(placed, reverse=True))
            if got > best:
                best = got
    return best


def oracle_match(counts, ctx, tractor_lengths, pairs_led):
    """What structure_match should answer, by brute force."""
    if pairs_led == 0:
        return ((), 0)
    pairs = min(pairs_led, sum(n // 2 for n in counts.values()))
    room = tuple(tractor_lengths)
    if not room:
        return ((), pairs)
    best: tuple[int, ...] = ()
    for split in _tractor_splits(counts, ctx):
        got = _best_assignment(tuple(length for length, _ in split), room)
        if got > best:
            best = got
    return (best, pairs)


def oracle_ruff(counts, ctx, fmt):
    """For an all-trump play against a throw ``fmt``: (does it have the throw's whole
    structure, the strength of its strongest unit of the shape of the throw's largest unit taken
    from a split that has the whole structure)."""
    room = fmt.tractor_lengths
    whole = (room, fmt.pairs)
    if oracle_match(counts, ctx, room, fmt.pairs) != whole:
        return False, None
    pos = ctx.pos
    largest = fmt.units[0].pairs
    if largest == 0:
        return True, max(pos[k] for k in counts)
    if largest == 1:
        return True, max(pos[k] for k, n in counts.items() if n >= 2)
    top = -1
    for split in _tractor_splits(counts, ctx):
        if _best_assignment(tuple(length for length, _ in split), room) == room:
            for length, t in split:
                if length == largest and t > top:
                    top = t
    assert top >= 0
    return True, top


# --- card generation ---------------------------------------------------------------------------

def _contexts(rng):
    """A context with the hard spots often: level 5 hearts trump (three off-suit level kinds on
    one rung), no-trump (four level kinds on one rung), the extreme levels 2 and A."""
    r = rng.random()
    if r < 0.3:
        return trump_context(3, 1)
    if r < 0.45:
        return trump_context(rng.randrange(13), None)
    if r < 0.55:
        return trump_context(rng.choice((0, 12)), rng.choice((0, 1, 2, 3, None)))
    return trump_context(rng.randrange(13), rng.choice((0, 1, 2, 3, 3, None)))


def _classes(ctx):
    return [c for c in range(5) if ctx.members[c]]


def _layout(ctx, c):
    by_pos: dict[int, list[int]] = {}
    for k in ctx.members[c]:
        by_pos.setdefault(ctx.pos[k], []).append(k)
    return sorted(by_pos), by_pos


def _hot_window(rng, ctx, c, positions, width):
    """A window of ``width`` positions, often over the level rung (trumps) or straddling the
    skipped level rank (a side suit)."""
    lo_min, lo_max = positions[0], max(positions[0], positions[-1] - width + 1)
    if rng.random() < 0.6:
        if c == TRUMP:
            hot = max(ctx.pos[k] for k in ctx.members[c] if k < 52 and k % 13 == ctx.level
                      and k // 13 != ctx.suit)
        else:  # the position just above where the level rank was skipped
            hot = min((ctx.pos[k] for k in ctx.members[c] if k % 13 > ctx.level),
                      default=positions[-1])
        lo = hot - rng.randrange(width)
        return min(max(lo, lo_min), lo_max)
    return rng.randint(lo_min, lo_max)


def _take(counts, avail, k, n=1):
    counts[k] = counts.get(k, 0) + n
    avail[k] -= n


def _random_cards(rng, ctx, c, size, avail):
    """``size`` cards of class ``c`` (fewer if ``avail`` runs out), rich in pairs and in pairs at
    neighbouring positions."""
    positions, by_pos = _layout(ctx, c)
    counts: dict[int, int] = {}
    want_pairs = rng.randint(size // 4, size // 2)
    total = 0
    for _ in range(rng.choice((1, 1, 2))):  # one or two windows of neighbouring pairs
        width = rng.randint(2, 8)
        lo = _hot_window(rng, ctx, c, positions, width)
        window = [k for p in range(lo, lo + width) for k in by_pos.get(p, ())]
        rng.shuffle(window)
        for k in window:
            if want_pairs == 0 or total + 2 > size:
                break
            if avail[k] >= 2:
                _take(counts, avail, k, 2)
                total += 2
                want_pairs -= 1
    members = list(ctx.members[c])
    tries = 0
    while total < size and tries < 200:
        tries += 1
        k = rng.choice(members)
        if avail[k] >= 1:
            _take(counts, avail, k)
            total += 1
    return counts


def _build(rng, ctx, c, tractors, loose_pairs, singles, avail):
    """Cards of class ``c`` with (at most) these tractors, loose pairs and singles, placed at
    random: tractors often over the level rung or the skipped level rank."""
    positions, by_pos = _layout(ctx, c)
    counts: dict[int, int] = {}
    for length in tractors:
        for _ in range(6):
            if length > len(positions):
                break
            start = _hot_window(rng, ctx, c, positions, length)
            picks = []
            for p in range(start, start + length):
                free = [k for k in by_pos.get(p, ()) if avail[k] >= 2 and k not in picks]
                if not free:
                    break
                picks.append(rng.choice(free))
            if len(picks) == length:
                for k in picks:
                    _take(counts, avail, k, 2)
                break
    members = list(ctx.members[c])
    for _ in range(loose_pairs):
        free = [k for k in members if avail[k] >= 2]
        if free:
            _take(counts, avail, rng.choice(free), 2)
    for _ in range(singles):
        free = [k for k in members if avail[k] >= 1]
        if free:
            _take(counts, avail, rng.choice(free))
    return counts


def _random_holding(rng, ctx, c):
    """4-14 cards of class ``c``: pairs around one or two windows, or several tractors."""
    if rng.random() < 0.5:
        return _random_cards(rng, ctx, c, rng.randint(4, 14), _fresh())
    tractors = rng.choice([(2, 2), (2, 2, 2), (3, 2), (3, 3), (4, 2), (3, 2, 2), (2, 3), (4,)])
    counts = _build(rng, ctx, c, tractors, rng.choice((0, 0, 1)), rng.choice((0, 1, 2)),
                    _fresh())
    cards = _cards(counts, ctx)
    while len(cards) > 14:
        cards.pop(rng.randrange(len(cards)))
    return _counts(cards)


def _fresh():
    return [2] * 54


def _cards(counts, ctx):
    return sorted((k for k, n in counts.items() for _ in range(n)), key=ctx.key.__getitem__,
                  reverse=True)


def _text(counts, ctx):
    return format_cards(_cards(counts, ctx))


def _counts(cards):
    out: dict[int, int] = {}
    for k in cards:
        out[k] = out.get(k, 0) + 1
    return out


def _random_lead_shape(rng):
    tractors = rng.choice(LEAD_SHAPES)
    pairs = sum(tractors) + rng.choice((0, 0, 0, 1, 1, 2, 3))
    if not tractors and pairs == 0:
        pairs = rng.choice((0, 1, 2))
    return tractors, pairs


# --- the oracle's own checks -------------------------------------------------------------------

def test_oracle_on_hand_worked_cases():
    """The oracle itself, on cases worked out by hand."""
    ctx = trump_context(3, 1)  # level 5, hearts trump
    c = _counts(parse_cards("AH AH 5C 5C 5S 5S 5H 5H"))
    assert oracle_match(c, ctx, (2, 2), 4) == ((2, 2), 4)
    assert oracle_match(c, ctx, (4,), 4) == ((3,), 4)  # AH 5C 5H: 5C 5S are equal, not a run
    assert oracle_match(c, ctx, (3,), 4) == ((3,), 4)
    assert oracle_match(c, ctx, (2,), 4) == ((2,), 4)
    c = _counts(parse_cards("AH AH 5C 5C 5S 5S 5H 5H LJ LJ"))
    assert oracle_match(c, ctx, (3, 2), 5) == ((3, 2), 5)
    assert oracle_match(c, ctx, (3, 3), 5) == ((3, 2), 5)
    assert oracle_match(c, ctx, (5,), 5) == ((4,), 5)  # AH 5C 5H LJ beats 3 + 2
    assert oracle_match(c, ctx, (4,), 5) == ((4,), 5)  # AH 5C (or 5S) 5H LJ
    ctx = trump_context(0, 0)  # level 2, spades trump: side hearts 3..A, no gap
    c = _counts(parse_cards("3H 3H 4H 4H 6H 6H 7H 7H 8H"))
    assert oracle_match(c, ctx, (3,), 3) == ((2,), 3)
    assert oracle_match(c, ctx, (2, 2), 4) == ((2, 2), 4)
    assert oracle_match(c, ctx, (), 2) == ((), 2)
    assert oracle_match(c, ctx, (2,), 0) == ((), 0)
    ctx = trump_context(3, 0)  # level 5: in hearts 4H and 6H are neighbours
    c = _counts(parse_cards("4H 4H 6H 6H 7H 7H"))
    assert oracle_match(c, ctx, (3,), 3) == ((3,), 3)


def test_oracle_on_no_trump_rung():
    ctx = trump_context(3, None)  # level 5 no-trump: 5S 5H 5D 5C on one rung, then LJ, BJ
    c = _counts(parse_cards("5S 5S 5H 5H 5D 5D 5C 5C LJ LJ BJ BJ"))
    assert oracle_match(c, ctx, (3,), 6) == ((3,), 6)
    assert oracle_match(c, ctx, (2, 2), 6) == ((2,), 6)  # both would need the LJ pair
    assert oracle_match(c, ctx, (3, 3), 6) == ((3,), 6)
    c = _counts(parse_cards("5S 5S 5H 5H LJ LJ"))
    assert oracle_match(c, ctx, (2, 2), 3) == ((2,), 3)
    assert oracle_match(c, ctx, (3,), 3) == ((2,), 3)


# --- structure_match against the oracle --------------------------------------------------------

def test_structure_match_agrees_with_brute_force():
    rng = random.Random(SEED)
    seen = {"tractor_placed": 0, "two_placed": 0, "rung_double": 0}
    for case in range(STRUCTURE_CASES):
        ctx = _contexts(rng)
        c = TRUMP if rng.random() < 0.6 else rng.choice(_classes(ctx))
        counts = _random_holding(rng, ctx, c)
        tractors, pairs_led = _random_lead_shape(rng)
        got = structure_match(dict(counts), ctx, tractors, pairs_led)
        want = oracle_match(counts, ctx, tractors, pairs_led)
        assert got == want, (
            f"case {case}, {ctx.describe()}: cards {_text(counts, ctx)} against led tractors "
            f"{tractors} and {pairs_led} pairs: structure_match {got}, brute force {want}")
        if want[0]:
            seen["tractor_placed"] += 1
        if len(want[0]) >= 2:
            seen["two_placed"] += 1
        if c == TRUMP and sum(1 for k, n in counts.items() if n >= 2 and k < 52
                              and k % 13 == ctx.level and k // 13 != ctx.suit) >= 2:
            seen["rung_double"] += 1
    print(f"structure_match: {STRUCTURE_CASES} cases, {seen}")
    # the generator reaches the hard spots
    assert seen["tractor_placed"] > STRUCTURE_CASES // 4, seen
    assert seen["two_placed"] > STRUCTURE_CASES // 20, seen
    assert seen["rung_double"] > STRUCTURE_CASES // 20, seen


# --- follow legality ---------------------------------------------------------------------------

def _random_plays(rng, held: dict[int, int], n: int, count: int):
    """``count`` plays of ``n`` cards from ``held``: some at random, most built from the held
    pairs (taken in a random order, or as neighbours) so that legal plays are frequent."""
    cards = [k for k, m in held.items() for _ in range(m)]
    pair_kinds = [k for k, m in held.items() if m >= 2]
    plays = []
    for _ in range(count):
        if rng.random() < 0.25 or not pair_kinds:
            plays.append(tuple(rng.sample(cards, n)))
            continue
        left = dict(held)
        play = []
        kinds = pair_kinds[:]
        rng.shuffle(kinds)
        if rng.random() < 0.5:
            kinds.sort()  # neighbours together more often
            start = rng.randrange(len(kinds))
            kinds = kinds[start:] + kinds[:start]
        for k in kinds[:rng.randint(0, len(kinds))]:
            if len(play) + 2 <= n:
                play += (k, k)
                left[k] -= 2
        rest = [k for k, m in left.items() for _ in range(m)]
        play += rng.sample(rest, n - len(play))
        plays.append(tuple(play))
    return plays


def test_follow_error_agrees_with_brute_force():
    rng = random.Random(SEED + 1)
    legal = illegal = checked = 0
    for case in range(FOLLOW_CASES):
        ctx = _contexts(rng)
        c = TRUMP if rng.random() < 0.55 else rng.choice(_classes(ctx))
        avail = _fresh()
        tractors, extra = _random_lead_shape(rng)
        lead = _build(rng, ctx, c, tractors, max(0, extra - sum(tractors)),
                      rng.choice((0, 0, 1, 2)), avail)
        lead_cards = _cards(lead, ctx)
        if len(lead_cards) < 2:
            continue
        fmt = lead_format(lead_cards, ctx)
        if fmt.pairs == 0:
            continue
        most = min(14, sum(avail[k] for k in ctx.members[c]))
        if most <= fmt.size:
            continue
        size = rng.randint(fmt.size + 1, most)
        if rng.random() < 0.5:
            held = _random_cards(rng, ctx, c, size, avail)
        else:  # tractors of its own, then other cards up to the size
            held = _build(rng, ctx, c, rng.choice([(2,), (3,), (2, 2), (3, 2), (2, 2, 2)]),
                          rng.choice((0, 1, 2)), 0, avail)
            while sum(held.values()) > size:
                k = rng.choice([k for k in held if held[k]])
                held[k] -= 1
                avail[k] += 1
            held = {k: m for k, m in held.items() if m}
            more = _random_cards(rng, ctx, c, size - sum(held.values()), avail)
            for k, m in more.items():
                held[k] = held.get(k, 0) + m
        if sum(held.values()) <= fmt.size:
            continue
        hand = [0] * 54
        for k, m in held.items():
            hand[k] = m
        others = [k for k in range(54) if ctx.cls[k] != c]
        for k in rng.sample(others, 5):  # some cards of other classes
            hand[k] += 1
        want = oracle_match(held, ctx, fmt.tractor_lengths, fmt.pairs)
        for play in _random_plays(rng, held, fmt.size, 10):
            got_measure = oracle_match(_counts(play), ctx, fmt.tractor_lengths, fmt.pairs)
            err = follow_error(fmt, hand, play, ctx)
            ok = got_measure == want
            assert (err is None) == ok, (
                f"case {case}, {ctx.describe()}: lead {format_cards(lead_cards)} (tractors "
                f"{fmt.tractor_lengths}, {fmt.pairs} pairs), holding {_text(held, ctx)}, play "
                f"{format_cards(sorted(play, key=ctx.key.__getitem__, reverse=True))}: engine "
                f"{'legal' if err is None else 'illegal: ' + err}; brute force: the holding owes "
                f"{want}, the play has {got_measure}")
            checked += 1
            legal += ok
            illegal += not ok
        # a card of another class while the class is held beyond the lead: never legal
        off = next(k for k in range(54) if ctx.cls[k] != c and hand[k])
        play = tuple(_cards(held, ctx)[:fmt.size - 1]) + (off,)
        assert follow_error(fmt, hand, play, ctx) is not None, (
            f"{ctx.describe()}: lead {format_cards(lead_cards)}, holding {_text(held, ctx)}: "
            f"{format_cards(play)} revokes")
    print(f"follow_error: {checked} plays, {legal} legal, {illegal} illegal")
    assert checked > FOLLOW_CASES * 3
    assert legal > checked // 10 and illegal > checked // 10, (legal, illegal)


# --- ruffing a throw ---------------------------------------------------------------------------

def _random_throw(rng, ctx):
    """A side-suit throw (several units), or None when the draw is not one."""
    sides = [c for c in _classes(ctx) if c != TRUMP]
    c = rng.choice(sides)
    tractors = rng.choice([(2,), (3,), (2, 2), (3, 2), (2, 2, 2), (4,), (), ()])
    loose = rng.choice((0, 1, 1, 2))
    singles = rng.choice((0, 1, 1, 2))
    counts = _build(rng, ctx, c, tractors, loose, singles, _fresh())
    cards = _cards(counts, ctx)
    if len(cards) < 2 or len(cards) > 12:
        return None
    fmt = lead_format(cards, ctx)
    return (cards, fmt) if fmt.kind == "throw" else None


def _random_ruff(rng, ctx, fmt):
    """``fmt.size`` trumps: often shaped like the throw, sometimes a near miss, sometimes any."""
    n = fmt.size
    avail = _fresh()
    r = rng.random()
    if r < 0.5:
        counts = _build(rng, ctx, TRUMP, fmt.tractor_lengths,
                        fmt.pairs - sum(fmt.tractor_lengths), 0, avail)
    elif r < 0.75:
        tractors = [t - rng.choice((0, 0, 1)) for t in fmt.tractor_lengths]
        counts = _build(rng, ctx, TRUMP, [t for t in tractors if t >= 2],
                        rng.randint(0, 3), 0, avail)
    else:
        counts = _random_cards(rng, ctx, TRUMP, n, avail)
    cards = _cards(counts, ctx)
    rng.shuffle(cards)
    cards = cards[:n]
    members = list(ctx.members[TRUMP])
    counts = _counts(cards)
    while len(cards) < n:
        k = rng.choice(members)
        if counts.get(k, 0) < 2:
            counts[k] = counts.get(k, 0) + 1
            cards.append(k)
    return tuple(cards)


def test_ruffs_of_throws_agree_with_brute_force():
    rng = random.Random(SEED + 2)
    stood = fell = throws = 0
    for case in range(RUFF_CASES):
        ctx = _contexts(rng)
        drawn = _random_throw(rng, ctx)
        if drawn is None:
            continue
        throw, fmt = drawn
        throws += 1
        ruffs = []
        for _ in range(6):
            ruff = _random_ruff(rng, ctx, fmt)
            has, top = oracle_ruff(_counts(ruff), ctx, fmt)
            key = play_key(fmt, ruff, ctx)
            where = (f"case {case}, {ctx.describe()}: throw {format_cards(throw)} (units "
                     f"{' / '.join(u.text() for u in fmt.units)}; tractors "
                     f"{fmt.tractor_lengths}, {fmt.pairs} pairs), ruff "
                     f"{format_cards(sorted(ruff, key=ctx.key.__getitem__, reverse=True))}")
            assert (key is not None) == has, (
                f"{where}: engine {'can win' if key is not None else 'cannot win'}, brute force: "
                f"{'has' if has else 'lacks'} the throw's whole structure (it has "
                f"{oracle_match(_counts(ruff), ctx, fmt.tractor_lengths, fmt.pairs)})")
            if has:
                assert key == (1, top), f"{where}: engine strength {key}, brute force (1, {top})"
                stood += 1
                ruffs.append((ruff, top))
            else:
                fell += 1
        # two ruffs: the stronger wins, the earlier on equal strength
        if len(ruffs) >= 2:
            (r1, t1), (r2, t2) = ruffs[0], ruffs[1]
            side = [k for k in range(54) if ctx.cls[k] not in (TRUMP, fmt.cls)]
            discard = tuple(rng.sample(side, fmt.size))
            winner = trick_winner([tuple(throw), r1, r2, discard], ctx)
            assert winner == (1 if t1 >= t2 else 2), (
                f"{ctx.describe()}: throw {format_cards(throw)}, ruffs {format_cards(r1)} "
                f"(top {t1}) then {format_cards(r2)} (top {t2}): winner {winner}")
    print(f"ruffs: {throws} throws, {stood} ruffs with the whole structure, {fell} without")
    assert throws > RUFF_CASES // 3
    assert stood > throws and fell > throws, (stood, fell, throws)


# --- regressions -------------------------------------------------------------------------------

def _hand(texts: str) -> list[int]:
    hand = [0] * 54
    for k in parse_cards(texts):
        hand[k] += 1
    return hand


def test_run_through_the_level_rung_supplies_two_tractors():
    ctx = trump_context(3, 1)  # level 5, hearts trump
    cards = parse_cards("AH AH 5C 5C 5S 5S 5H 5H")
    counts = _counts(cards)
    assert structure_match(counts, ctx, (2, 2), 4) == ((2, 2), 4), format_cards(cards)
    assert oracle_match(counts, ctx, (2, 2), 4) == ((2, 2), 4)
    five = parse_cards("AH AH 5C 5C 5S 5S 5H 5H LJ LJ")
    assert structure_match(_counts(five), ctx, (3, 2), 5) == ((3, 2), 5), format_cards(five)
    # the same holding following a trump throw of two 2-pair tractors: playing both is owed
    lead = parse_cards("8H 8H 9H 9H JH JH QH QH")
    fmt = lead_format(lead, ctx)
    assert fmt.kind == "throw" and fmt.tractor_lengths == (2, 2)
    hand = _hand("AH AH 5C 5C 5S 5S 5H 5H 3H 4H")
    assert follow_error(fmt, hand, cards, ctx) is None, format_cards(cards)
    broken = parse_cards("AH AH 5C 5C 5S 5S 3H 4H")  # one tractor and a pair
    assert follow_error(fmt, hand, broken, ctx) is not None, format_cards(broken)


def test_breaking_a_shorter_tractor_for_a_longer_led_one_is_illegal():
    ctx = trump_context(0, 1)  # level 2, hearts trump
    lead = parse_cards("3S 3S 4S 4S 5S 5S")
    fmt = lead_format(lead, ctx)
    assert fmt.kind == "tractor" and fmt.tractor_lengths == (3,)
    hand = _hand("9S 9S 10S 10S QS QS AS AS 6S 7S 3H")
    legal = [parse_cards("9S 9S 10S 10S QS QS"), parse_cards("9S 9S 10S 10S AS AS")]
    illegal = [parse_cards("QS QS AS AS 9S 10S"), parse_cards("QS QS AS AS 9S 9S"),
               parse_cards("9S 9S 10S 10S 6S 7S"), parse_cards("9S 10S QS QS AS AS")]
    for play in legal:
        assert follow_error(fmt, hand, play, ctx) is None, format_cards(play)
    for play in illegal:
        assert follow_error(fmt, hand, play, ctx) is not None, format_cards(play)
    held = {k: hand[k] for k in ctx.members[0] if hand[k]}
    assert structure_match(held, ctx, (3,), 3) == ((2,), 3) == oracle_match(held, ctx, (3,), 3)


def test_ruff_of_a_throw_needs_its_whole_structure_and_compares_the_largest_unit():
    ctx = trump_context(3, 1)  # level 5, hearts trump
    throw = parse_cards("QS QS KS KS 9S 9S 3S")  # a tractor, a pair, a single
    fmt = lead_format(throw, ctx)
    assert fmt.kind == "throw" and fmt.tractor_lengths == (2,) and fmt.pairs == 3
    low = parse_cards("3H 3H 4H 4H 8H 8H 2H")
    high = parse_cards("AH AH 5S 5S 2H 2H 3H")  # AH 5S: the tractor just below 5H
    flat = parse_cards("3H 3H 6H 6H 8H 8H 2H")  # no tractor: cannot win
    assert play_key(fmt, flat, ctx) is None, format_cards(flat)
    assert play_key(fmt, low, ctx) is not None and play_key(fmt, high, ctx) is not None
    assert trick_winner([throw, low, high, parse_cards("2D 3D 4D 6D 7D 8D 9D")], ctx) == 2
    same = parse_cards("AH AH 5D 5D 2H 2H 3H")  # 5D equal to 5S: the earlier ruff wins
    assert trick_winner([throw, high, same, parse_cards("2D 3D 4D 6D 7D 8D 9D")], ctx) == 1


@pytest.mark.parametrize("level,suit", [(3, 1), (3, None), (0, 2), (12, 3)])
def test_every_play_of_a_small_holding(level, suit):
    """Every distinct play of the lead's size from a few fixed holdings: the legal ones are
    exactly those the brute force accepts."""
    from itertools import combinations
    ctx = trump_context(level, suit)
    rng = random.Random(f"{SEED}:{level}:{suit}")
    for _ in range(12):
        avail = _fresh()
        tractors = rng.choice([(2,), (3,), (2, 2), (3, 2)])
        lead = _cards(_build(rng, ctx, TRUMP, tractors, rng.choice((0, 1)), 0, avail), ctx)
        if len(lead) < 4:
            continue
        fmt = lead_format(lead, ctx)
        held = _random_cards(rng, ctx, TRUMP, min(fmt.size + rng.randint(1, 4), 12), avail)
        if sum(held.values()) <= fmt.size:
            continue
        hand = [0] * 54
        for k, m in held.items():
            hand[k] = m
        want = oracle_match(held, ctx, fmt.tractor_lengths, fmt.pairs)
        cards = _cards(held, ctx)
        for play in set(combinations(cards, fmt.size)):
            ok = oracle_match(_counts(play), ctx, fmt.tractor_lengths, fmt.pairs) == want
            err = follow_error(fmt, hand, play, ctx)
            assert (err is None) == ok, (
                f"{ctx.describe()}: lead {format_cards(lead)}, holding {format_cards(cards)}, "
                f"play {format_cards(play)}: engine {err or 'legal'}, brute force owes {want}")
