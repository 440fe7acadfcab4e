"""A Botzone-style Tractor bot in plain Python (standard library only).

Each turn it reads one JSON line, ``{"requests": [...], "responses": [...]}`` (its own history),
and writes one line, ``{"response": [card ids]}``. With ``--keep-running`` it prints
``>>>BOTZONE_REQUEST_KEEP_RUNNING<<<`` after each answer and then reads each next request alone,
one JSON line a turn; without it, it answers once and exits.

It calls with its first level card when nobody has called, never snatches, buries its weakest
side cards, leads a single, and follows legally: as many of the led suit as it must, with as much
of the lead's pairs and tractors as its suit allows. ``--linked-levels`` counts tractors through
the level cards and jokers in trumps (our ``two-deck-80``); by default they do not run across
them, as on Botzone.
"""

import itertools
import json
import sys

KEEP_RUNNING = ">>>BOTZONE_REQUEST_KEEP_RUNNING<<<"
RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "0", "J", "Q", "K"]  # Botzone's id order
ORDER = ["2", "3", "4", "5", "6", "7", "8", "9", "0", "J", "Q", "K", "A"]  # weakest first
SUITS = ["s", "h", "c", "d"]
POINTS = {"5": 5, "0": 10, "K": 10}


class Table:
    """Card classes and strengths for one level and trump (major)."""

    def __init__(self, level, major, linked):
        self.level = level
        self.major = major  # "s" "h" "c" "d", "n" (no-trump) or "" (not fixed)
        side = [r for r in ORDER if r != level]
        self.side = {r: i for i, r in enumerate(side)}
        gap = 0 if linked else 1
        self.off_level = len(side) + gap
        self.trump_level = self.off_level + 1 + gap
        top = self.trump_level if major in SUITS else self.off_level
        self.little = top + 1 + gap
        self.big = self.little + 1

    @staticmethod
    def name(card):
        b = card % 54
        if b == 52:
            return ("jo", None)
        if b == 53:
            return ("Jo", None)
        return (RANKS[b // 4], SUITS[b % 4])

    def suit_class(self, card):
        rank, suit = self.name(card)
        if suit is None or rank == self.level or suit == self.major:
            return "trump"
        return suit

    def strength(self, card):
        rank, suit = self.name(card)
        if rank == "jo":
            return self.little
        if rank == "Jo":
            return self.big
        if rank == self.level:
            return self.trump_level if suit == self.major else self.off_level
        return self.side[rank]

    def kind(self, card):
        return card % 54


def placed(positions, room):
    """The best list of tractor lengths (longest first) these pair positions can place into
    led tractors with ``room`` pairs each (all >= 2)."""
    if not room or not positions:
        return ()
    counts = {}
    for p in positions:
        counts[p] = counts.get(p, 0) + 1
    best = ()
    for r_i, r in enumerate(room):
        for start in sorted(counts):
            length = 0
            while counts.get(start + length, 0) and length < r:
                length += 1
            for t in range(length, 1, -1):
                rest = list(positions)
                for p in range(start, start + t):
                    rest.remove(p)
                left = list(room[:r_i]) + list(room[r_i + 1:]) + ([r - t] if r - t >= 2 else [])
                left.sort(reverse=True)
                got = tuple(sorted((t,) + placed(rest, tuple(left)), reverse=True))
                best = max(best, got)
    return best


def tractor_lengths(cards, table):
    """The led tractors' lengths (in pairs), from maximal runs of pair strengths."""
    counts = {}
    for c in cards:
        counts[table.kind(c)] = counts.get(table.kind(c), 0) + 1
    by_pos = {}
    for k, n in counts.items():
        if n >= 2:
            p = table.strength(k)
            by_pos[p] = by_pos.get(p, 0) + n // 2
    lengths = []
    while by_pos:
        start = min(by_pos)
        run = 0
        while by_pos.get(start + run, 0):
            run += 1
        for p in range(start, start + run):
            by_pos[p] -= 1
            if not by_pos[p]:
                del by_pos[p]
        if run >= 2:
            lengths.append(run)
    return tuple(sorted(lengths, reverse=True)), sum(n // 2 for n in counts.values())


def pairs_of(cards, table):
    """(pair kind, the two ids) of every pair among ``cards``."""
    by_kind = {}
    for c in cards:
        by_kind.setdefault(table.kind(c), []).append(c)
    return [(k, ids[:2]) for k, ids in by_kind.items() if len(ids) >= 2]


def measure(pairs, table, lengths, pairs_led):
    positions = [table.strength(k) for k, _ in pairs]
    return (placed(positions, lengths), min(pairs_led, len(pairs)))


def weakest(cards, table):
    return sorted(cards, key=lambda c: (table.suit_class(c) == "trump",
                                        POINTS.get(table.name(c)[0], 0), table.strength(c), c))


def follow(hand, lead, table):
    n = len(lead)
    cls = table.suit_class(lead[0])
    suit = [c for c in hand if table.suit_class(c) == cls]
    if len(suit) <= n:
        rest = weakest([c for c in hand if c not in suit], table)
        return suit + rest[:n - len(suit)]
    lengths, pairs_led = tractor_lengths(lead, table)
    if pairs_led == 0:
        return weakest(suit, table)[:n]
    held = pairs_of(suit, table)
    want = measure(held, table, lengths, pairs_led)
    k = want[1]
    choice = None
    for chosen in itertools.combinations(held, k):
        if measure(list(chosen), table, lengths, pairs_led) == want:
            choice = chosen
            break
    play = [c for _, ids in choice for c in ids]
    rest = weakest([c for c in suit if c not in play], table)
    return play + rest[:n - len(play)]


class Bot:
    def __init__(self, linked):
        self.linked = linked
        self.requests = []
        self.responses = []

    def hand(self):
        cards = []
        for request in self.requests:
            if request.get("stage") in ("deal", "cover"):
                cards += request.get("deliver", [])
        for request, response in zip(self.requests, self.responses):
            if request.get("stage") in ("cover", "play"):
                for c in response:
                    if c in cards:
                        cards.remove(c)
        return cards

    def answer(self):
        request = self.requests[-1]
        g = request.get("global", {})
        banking = g.get("banking", {})
        table = Table(g.get("level", "2"), banking.get("major", ""), self.linked)
        hand = self.hand()
        stage = request.get("stage")
        if stage == "deal":
            if banking.get("called", -1) == -1:
                for c in hand:
                    if table.name(c)[0] == table.level:
                        return [c]
            return []
        if stage == "cover":
            return weakest(hand, table)[:len(request.get("deliver", []))]
        history = request.get("history", [[], [], -1, -1])
        current = history[1]
        if not current:
            return [weakest(hand, table)[0]]
        return follow(hand, current[0], table)


def main():
    keep = "--keep-running" in sys.argv
    bot = Bot("--linked-levels" in sys.argv)
    first = json.loads(sys.stdin.readline())
    bot.requests = list(first["requests"])
    bot.responses = list(first["responses"])
    while True:
        response = bot.answer()
        bot.responses.append(response)
        print(json.dumps({"response": response, "debug": f"{len(bot.hand())} cards"}),
              flush=True)
        if not keep:
            return
        print(KEEP_RUNNING, flush=True)
        line = sys.stdin.readline()
        if not line:
            return
        bot.requests.append(json.loads(line))


if __name__ == "__main__":
    main()
