"""Draws from a ``random.Random``, exactly as its own methods make them: the same values and the
same generator state after. ``choice``, ``sample``, ``randint``, ``randrange`` and ``shuffle``
as CPython's ``random`` module writes them on ``getrandbits``; compiled with the engine, a draw
costs a call into C instead of several Python frames (the random players and a deal's shuffle
make millions). At import, a self-check draws with both and, should this Python draw any other
way, every function here passes the call on to the generator's own method.
"""

from __future__ import annotations

import math
import random
from typing import Any, MutableSequence, Sequence


def _below(rng: random.Random, n: int) -> int:
    """An int in ``[0, n)`` (``n > 0``): ``Random._randbelow_with_getrandbits``."""
    k = n.bit_length()
    r: int = rng.getrandbits(k)
    while r >= n:
        r = rng.getrandbits(k)
    return r


def choice(rng: random.Random, seq: Sequence[Any]) -> Any:
    """``rng.choice(seq)``."""
    if not _SAME:
        return rng.choice(seq)
    if not len(seq):
        raise IndexError("Cannot choose from an empty sequence")
    return seq[_below(rng, len(seq))]


def randrange(rng: random.Random, stop: int) -> int:
    """``rng.randrange(stop)``."""
    if not _SAME:
        return rng.randrange(stop)
    if stop <= 0:
        raise ValueError("empty range for randrange()")
    return _below(rng, stop)


def randint(rng: random.Random, a: int, b: int) -> int:
    """``rng.randint(a, b)``."""
    if not _SAME:
        return rng.randint(a, b)
    width = b + 1 - a
    if width <= 0:
        raise ValueError(f"empty range for randrange({a}, {b + 1}, {b + 1 - a})")
    return a + _below(rng, width)


def shuffle(rng: random.Random, x: MutableSequence[Any]) -> None:
    """``rng.shuffle(x)``."""
    if not _SAME:
        rng.shuffle(x)
        return
    for i in range(len(x) - 1, 0, -1):
        j = _below(rng, i + 1)
        x[i], x[j] = x[j], x[i]


def sample(rng: random.Random, population: Sequence[Any], k: int) -> list[Any]:
    """``rng.sample(population, k)`` (a sequence; no ``counts``)."""
    if not _SAME:
        return rng.sample(population, k)
    n = len(population)
    if not 0 <= k <= n:
        raise ValueError("Sample larger than population or is negative")
    result: list[Any] = [None] * k
    setsize = 21
    if k > 5:
        setsize += 4 ** math.ceil(math.log(k * 3, 4))
    if n <= setsize:
        pool = list(population)
        for i in range(k):
            j = _below(rng, n - i)
            result[i] = pool[j]
            pool[j] = pool[n - i - 1]
    else:
        selected: set[int] = set()
        for i in range(k):
            j = _below(rng, n)
            while j in selected:
                j = _below(rng, n)
            selected.add(j)
            result[i] = population[j]
    return result


_SAME = True


def _self_check() -> bool:
    """Whether the draws here are the generator's own, on a few of each kind (both branches of
    ``sample`` included)."""
    ours, theirs = random.Random("draws"), random.Random("draws")
    cards = list(range(108))
    for n in (1, 2, 5, 30, 108):
        seq = cards[:n]
        if choice(ours, seq) != theirs.choice(seq) or randrange(ours, n) != theirs.randrange(n):
            return False
        if randint(ours, 2, n + 2) != theirs.randint(2, n + 2):
            return False
        for k in (0, 1, min(n, 3), min(n, 7), n):
            if sample(ours, seq, k) != theirs.sample(seq, k):
                return False
        a, b = list(seq), list(seq)
        shuffle(ours, a)
        theirs.shuffle(b)
        if a != b:
            return False
    return ours.getstate() == theirs.getstate()


_SAME = _self_check()
