"""The greedy heuristic, a bot to start from and a baseline to beat (the ``greedy`` sample plays
it; the ``search`` sample falls back on it).

Declares a suit it is long in; buries its weakest side cards without points, voiding short
suits where the variant allows; leads sure winners from the side suits and keeps its trumps;
wins a trick with points as cheaply as it can, gives points to a partner who is winning, and
throws its cheapest card otherwise. To change it, copy this file into your bot's folder and
import your copy instead.
"""

from arena_sdk.bot import Bot, pb
from arena_sdk.cards import (POINTS, SUITS, TRUMP, Card, bury_limits, card_order, rules_of,
                             trick_winner)

PASS = pb.ACTION_KIND_PASS


def _cards(texts):
    return tuple(Card.parse(t) for t in texts)


class GreedyBot(Bot):
    name = "greedy"

    def _ctx(self, obs):
        return card_order(obs.variant, obs.level, obs.trump)

    def _pass_or_first(self, request):
        for a in request.hint.actions:
            if a.kind == PASS:
                return a
        return request.hint.actions[0]

    choose = _pass_or_first

    def on_declare(self, request):
        obs = request.observation
        hand = _cards(obs.hand)
        best, best_n = None, 0
        for a in request.hint.actions:
            if a.kind != pb.ACTION_KIND_DECLARE:
                continue
            suit = a.suit or next((c[-1] for c in a.cards if c not in ("LJ", "BJ")), None)
            if suit is None:
                continue
            n = sum(1 for c in hand if c < 52 and SUITS[c // 13] == suit)
            if n > best_n:
                best, best_n = a, n
        if best is not None and best_n * 4 >= len(hand) + 2:
            return best
        return self._pass_or_first(request)

    def on_bury(self, request):
        obs = request.observation
        ctx = self._ctx(obs)
        hand = list(_cards(obs.hand))
        want = rules_of(obs.variant).kitty_size
        no_void, points_cap = bury_limits(obs.variant)
        side = [c for c in hand if ctx.cls[c] != TRUMP]
        by_suit = {}
        for c in side:
            by_suit.setdefault(ctx.cls[c], []).append(c)
        left = {s: len(v) for s, v in by_suit.items()}
        chosen = []

        def take(c) -> bool:
            """Bury ``c`` unless the variant's limits forbid it (single-deck 000 3.6: no side
            suit left void, at most 25 points)."""
            if no_void and ctx.cls[c] != TRUMP and left[ctx.cls[c]] == 1:
                return False
            points = sum(POINTS[x] for x in chosen) + POINTS[c]
            if points_cap is not None and points > points_cap:
                return False
            chosen.append(c)
            if ctx.cls[c] != TRUMP:
                left[ctx.cls[c]] -= 1
            return True

        # the weakest side cards without points first, from the shortest suits
        for c in sorted(side, key=lambda c: (POINTS[c] > 0, len(by_suit[ctx.cls[c]]),
                                             ctx.pos[c])):
            if len(chosen) == want:
                break
            take(c)
        # then whatever costs least: cards without points, side cards before trumps
        rest = sorted(hand, key=lambda c: (POINTS[c] > 0, c >= 52, ctx.cls[c] == TRUMP,
                                           ctx.pos[c]))
        for c in rest:
            if len(chosen) == want:
                break
            if hand.count(c) > chosen.count(c):
                take(c)
        if len(chosen) < want:  # no burial of ours keeps the rules: the referee's hint does
            return request.hint.actions[0]
        return pb.Action(kind=pb.ACTION_KIND_BURY, cards=[str(Card(c)) for c in chosen])

    def on_lead(self, request):
        obs = request.observation
        ctx = self._ctx(obs)
        plays = [a for a in request.hint.actions if a.kind == pb.ACTION_KIND_PLAY]
        ace = 12 if obs.level != "A" else 11

        def top(a):
            return max(ctx.pos[c] for c in _cards(a.cards))

        side = [a for a in plays if all(ctx.cls[c] != TRUMP for c in _cards(a.cards))]
        strong = [a for a in side if any(c < 52 and c % 13 == ace for c in _cards(a.cards))
                  or len(a.cards) >= 4]
        if strong:
            return max(strong, key=lambda a: (len(a.cards), top(a)))
        cheap = [a for a in side if len(a.cards) == 1 and not POINTS[_cards(a.cards)[0]]]
        if cheap:
            return min(cheap, key=top)
        if side:
            return min(side, key=lambda a: (len(a.cards), top(a)))
        return min(plays, key=lambda a: (top(a), len(a.cards)))

    def _winner(self, obs, ctx, plays):
        return trick_winner(obs.variant, ctx, plays)

    def on_follow(self, request):
        obs = request.observation
        ctx = self._ctx(obs)
        trick = [(p.seat, _cards(p.cards)) for p in obs.trick]
        plays = [a for a in request.hint.actions if a.kind == pb.ACTION_KIND_PLAY]
        partner = (obs.seat + 2) % 4
        current = trick[self._winner(obs, ctx, [c for _, c in trick])][0]
        on_table = sum(POINTS[c] for _, cards in trick for c in cards)
        last = len(trick) == 3

        def cost(a):
            cards = _cards(a.cards)
            return (sum(POINTS[c] for c in cards), sum(ctx.cls[c] == TRUMP for c in cards),
                    sum(ctx.pos[c] for c in cards))

        if current == partner:
            return max(plays, key=lambda a: (sum(POINTS[c] for c in _cards(a.cards)),
                                             -cost(a)[1], -cost(a)[2]))
        winners = [a for a in plays
                   if self._winner(obs, ctx, [c for _, c in trick] + [_cards(a.cards)])
                   == len(trick)]
        if winners and (on_table or last or any(POINTS[c] for c in _cards(winners[0].cards))):
            return min(winners, key=lambda a: (cost(a)[1], cost(a)[2]))
        return min(plays, key=cost)

    def on_return(self, request):
        obs = request.observation
        ctx = self._ctx(obs)
        return min(request.hint.actions,
                   key=lambda a: sum(POINTS[c] * 100 + ctx.pos[c] for c in _cards(a.cards)))

