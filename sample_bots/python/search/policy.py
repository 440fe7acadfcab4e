"""search: determinized Monte Carlo search over the tricks, as a lab policy (docs/lab.md).

At a lead or a follow it samples worlds: the cards the seat has not seen dealt to the other hands
(and to the kitty when the seat has not seen it), consistent with what it saw: each seat's hand
size, the suits a seat showed void of by failing to follow, the declared cards still in hand
(every card played, its own hand and a kitty it buried or that was opened are known). Each world
is an engine state rebuilt from the view: a play-phase state of the variant with those hands,
the level, trump, dealer, tricks and points of the view, and the current trick replayed. Every
listed action is tried in each world and the deal is played out with random legal play; the
action with the best mean outcome (the attackers' points for the seat's side, and the level
gains) is played. The budget per decision comes from the clock (a part of this decision's
allowance, never the bank). Declarations, burials and the other decisions are the SDK's greedy
bot's (``arena_sdk.greedy``, which the greedy sample plays).
"""

from __future__ import annotations

import random
import time
from collections import Counter

from arena_sdk.greedy import GreedyBot
from referee.play.random_play import random_action
from referee.rules.actions import DecisionKind, Play
from referee.rules.cards import KINDS, POINTS, full_deck
from referee.rules.engine import apply, new_game
from referee.rules.events import DealEnded
from referee.rules.families import family_of
from referee.rules.state import CHANCE
from referee.rules.trump import TRUMP
from referee.rules.variants import rules_for

PLAY_KINDS = (DecisionKind.LEAD, DecisionKind.FOLLOW)
BUDGET_MS = 150          # at most this per decision
SHARE = 0.25             # of the decision's allowance
MIN_WORLDS = 4
LEVEL_WEIGHT = 40        # a level gained is worth this many points in a rollout's outcome
HORIZON = 6              # tricks a rollout plays beyond the current one before it is cut off


class SearchPolicy:
    """See the module docstring; ``budget_ms`` caps the time per decision, ``worlds`` (when
    given) fixes the number of sampled worlds instead (for reproducible play)."""

    name = "search"

    def __init__(self, budget_ms: float = BUDGET_MS, worlds: int | None = None,
                 seed: str = "search", horizon: int = HORIZON) -> None:
        self.budget_ms = budget_ms
        self.horizon = horizon
        self.worlds = worlds
        self.seed = seed
        self.rng = random.Random(seed)
        self.fallback = None
        self.seat = 0

    # -- hooks --------------------------------------------------------------------------
    def match_start(self, seat: int, match_id: str, variant: str) -> None:
        self.seat = seat
        self.rng = random.Random(f"{self.seed}:{match_id}:{seat}")
        self._fallback().match_start(seat, match_id, variant)

    def _fallback(self):
        if self.fallback is None:
            self.fallback = _BotAsPolicy(GreedyBot())
        return self.fallback

    # -- deciding -----------------------------------------------------------------------
    def act(self, view, legal):
        actions = legal.actions
        if legal.kind not in PLAY_KINDS or view.trump_fixed is False:
            return self._fallback().act(view, legal)
        if len(actions) == 1 and legal.complete:
            return actions[0]
        allowance = min(self.budget_ms, legal.time_left_ms * SHARE)
        deadline = time.perf_counter() + allowance / 1000
        totals = [0.0] * len(actions)
        tried = 0
        rules = rules_for(view.variant)
        failed = 0
        while True:
            world = self._world(view, rules)
            if world is None:  # a world the engine refused (a follow it judged impossible)
                failed += 1
                if failed > 2 * MIN_WORLDS or time.perf_counter() > deadline:
                    break
                continue
            for i, action in enumerate(actions):
                totals[i] += self._rollout(world, action, view.seat)
            tried += 1
            if self.worlds is not None:
                if tried >= self.worlds:
                    break
            elif tried >= MIN_WORLDS and time.perf_counter() > deadline:
                break
        if not tried:
            return self._fallback().act(view, legal)
        best = max(range(len(actions)), key=lambda i: totals[i])
        return actions[best]

    def _rollout(self, world, action, seat: int) -> float:
        """The outcome for ``seat``'s side of ``action`` then random play to the deal's end."""
        rng = self.rng
        s, events = apply(world, action, seat)
        follow, lead = _follower(world.rules)
        stop = len(world.tricks) + self.horizon
        while s.turn >= 0 and len(s.tricks) < stop:
            a = follow(s, rng) if s.decision is DecisionKind.FOLLOW else lead(s, rng)
            s, events = apply(s, a or random_action(s, rng), s.turn)
        if s.turn >= 0:  # cut off: the points taken meanwhile
            taken = s.attacker_points - world.attacker_points
            return taken if seat % 2 != world.dealer % 2 else -taken
        for e in events:
            if type(e) is DealEnded:
                mine = seat % 2
                attackers = 1 - world.dealer % 2
                points = e.attacker_total if mine == attackers else -e.attacker_total
                gain = (e.levels[mine] - world.levels[mine]) - \
                       (e.levels[1 - mine] - world.levels[1 - mine])
                return points + LEVEL_WEIGHT * gain
        return 0.0

    def _deal(self, pool, need, kitty_need, voids, seat, rng, tries: int = 12):
        """The unseen cards dealt to the other hands and the kitty, the voids kept where some
        deal of ``tries`` keeps them."""
        pool = [(c, self._cls[c]) for c in pool]
        for attempt in range(tries + 1):
            got = _deal_once(pool, need, kitty_need, voids, seat, rng, attempt < tries)
            if got is not None:
                return got
        return None

    # -- worlds -------------------------------------------------------------------------
    def _world(self, view, rules):
        """An engine state at this decision with the hidden cards dealt at random, consistent
        with the view (None when the view cannot be rebuilt)."""
        template = _template(rules)
        if template is None or view.dealer is None:
            return None
        family = family_of(rules)
        ctx = family.context(view.level, view.trump)
        seat = view.seat
        # the trick being played (at a lead, a trick shown is the one just won)
        trick = view.trick if view.decision is DecisionKind.FOLLOW else ()
        # what was seen: the hand, each seat's plays, a known kitty
        played = [Counter() for _ in range(4)]
        for plays, _ in view.tricks:
            for s_, cards in plays:
                played[s_].update(cards)
        for s_, cards in trick:
            played[s_].update(cards)
        # a kitty it buried, or single-deck's, buried face up; elsewhere a kitty shown to all
        # may be the one the dealer took up, not the one it buried: not known
        known_kitty = view.my_kitty or (
            view.public_kitty if rules.family == "single_deck"
            and len(view.public_kitty) == rules.kitty_size else ())
        unseen = Counter(full_deck(rules.decks))
        unseen.subtract(view.hand)
        for c in played:
            unseen.subtract(c)
        unseen.subtract(known_kitty)
        need = dict(enumerate(view.hand_sizes))  # the hidden cards each seat holds now
        need[seat] = 0
        kitty_need = 0 if known_kitty else rules.kitty_size
        pool = [c for c, n in unseen.items() if n > 0 for _ in range(n)]
        if len(pool) != sum(need.values()) + kitty_need:
            # what the view cannot account for exactly (three-deck's joker burials and
            # tributes move cards unseen): the kitty takes up the difference
            kitty_need = len(pool) - sum(need.values())
            if rules.family != "three_deck" or not 0 <= kitty_need <= 2 * rules.kitty_size:
                return None
        voids = _voids(view, ctx)
        self._cls = ctx.cls
        hands = [Counter() for _ in range(4)]
        hands[seat].update(view.hand)
        for s_, cards in trick:  # the current trick's plays go back to their hands
            hands[s_].update(cards)
        # declared cards not played since stay with their seat (unless it buried the kitty)
        rng = self.rng
        for s_, cards in view.declarations:
            if s_ == seat or s_ == view.kitty_holder:
                continue
            for c in Counter(cards) - played[s_] - hands[s_]:
                if need[s_] > 0 and c in pool:
                    pool.remove(c)
                    hands[s_][c] += 1
                    need[s_] -= 1
        dealt = self._deal(pool, need, kitty_need, voids, seat, rng)
        if dealt is None:
            return None
        for s_, cards in dealt[0].items():
            hands[s_].update(cards)
        kitty = list(known_kitty) + dealt[1]
        # the state: the template's play phase, with this deal's facts
        s = template.copy()
        s.hands = [[h[k] for k in range(KINDS)] for h in hands]
        s.levels = view.levels
        s.level = view.level
        s.dealer = view.dealer
        s.trump = view.trump
        s.ctx = ctx
        s.kitty = tuple(kitty)
        s.kitty_owner = view.kitty_holder if view.kitty_holder is not None else view.dealer
        s.tricks = view.tricks
        s.attacker_points = view.attacker_points
        s.penalties = view.penalties
        pbs = [0, 0, 0, 0]
        for plays, winner in view.tricks:
            pbs[winner] += sum(POINTS[c] for _, cards in plays for c in cards)
        s.points_by_seat = tuple(pbs)
        s.trick = ()
        s.trick_fmt = None
        s.trick_best = 0
        s.trick_key = None
        leader = trick[0][0] if trick else seat
        s.leader = leader
        s.turn = leader
        s.decision = DecisionKind.LEAD
        try:
            for s_, cards in trick:
                s, _ = apply(s, Play(cards), s_)
        except ValueError:
            return None
        if s.turn != seat or s.trick != trick:  # e.g. a throw that would fail in this world
            return None
        return s


def _deal_once(pool, need, kitty_need, voids, seat, rng, strict):
    """One random deal of ``pool``: each card to a seat with room (not void of its class when
    ``strict``) or to the kitty, weighted by the room left; None when a card has no place."""
    need = dict(need)
    hands: dict = {s_: [] for s_ in range(4) if s_ != seat}
    kitty: list = []
    order = list(pool)
    rng.shuffle(order)
    if strict:  # the cards fewest seats may hold first
        order.sort(key=lambda cc: -sum(cc[1] in voids[s_] for s_ in hands))
    for c, cls in order:
        places = [s_ for s_ in hands if need[s_] > 0 and not (strict and cls in voids[s_])]
        weights = [need[s_] for s_ in places]
        if kitty_need:
            places.append(None)
            weights.append(kitty_need)
        if not places:
            return None
        where = rng.choices(places, weights)[0]
        if where is None:
            kitty.append(c)
            kitty_need -= 1
        else:
            hands[where].append(c)
            need[where] -= 1
    return hands, kitty


class _BotAsPolicy:
    """The greedy SDK bot as a policy (the lab's ``BotPolicy``, without the lab)."""

    def __init__(self, bot) -> None:
        self.bot = bot

    def match_start(self, seat: int, match_id: str, variant: str) -> None:
        self.bot.seat = seat

    def act(self, view, legal):
        from shengji_arena.v1 import referee_pb2 as pb

        from referee.wire.protocol import (
            DECISION_TO_PB,
            action_from_pb,
            action_to_pb,
            observation_message,
        )
        request = pb.DecisionRequest(kind=DECISION_TO_PB[legal.kind],
                                     observation=observation_message(view, view.seat),
                                     time_left_ms=legal.time_left_ms,
                                     bank_left_ms=legal.bank_left_ms)
        request.hint.complete = legal.complete
        request.hint.actions.extend(action_to_pb(a) for a in legal.actions)
        return action_from_pb(self.bot.decide(request))


_FOLLOWERS: dict = {}


def _follower(rules):
    """The rollouts' follow (kept per variant): see ``_make_follower``."""
    f = _FOLLOWERS.get(rules.variant)
    if f is None:
        f = _FOLLOWERS[rules.variant] = _make_follower(rules)
    return f


def _make_follower(rules):
    """The rollouts' follow: the greedy sample's rule of thumb on the engine state (give points
    to a partner who is winning, win a trick with points as cheaply as possible, else throw the
    cheapest cards); None where it has no candidates to judge (random play then)."""
    family = family_of(rules)
    winner = family.trick_winner
    listing = family.plays
    if winner is None:
        return (lambda s, rng: None), (lambda s, rng: None)

    def follow(s, rng):
        seat = s.turn
        if listing is not None:
            options = list(listing(s, DecisionKind.FOLLOW, seat))
        else:
            options = [a.cards for a in family.actions(s, DecisionKind.FOLLOW, seat)]
        if not options:
            return None
        if len(options) == 1:
            return Play(options[0])
        if len(options) > 12:
            options = rng.sample(options, 12)
        ctx = s.ctx
        pos, cls = ctx.pos, ctx.cls
        plays = [cards for _, cards in s.trick]
        current = s.trick[s.trick_best][0]

        def cost(cards):
            return (sum(POINTS[c] for c in cards) * 100 + sum(pos[c] for c in cards)
                    + 50 * sum(cls[c] == TRUMP for c in cards))

        if current % 2 == seat % 2:
            best = max(options, key=lambda o: (sum(POINTS[c] for c in o), -cost(o)))
            return Play(best)
        on_table = sum(POINTS[c] for cards in plays for c in cards)
        if on_table or len(plays) == 3:
            winners = [o for o in options if winner(plays + [o], ctx) == len(plays)]
            if winners:
                return Play(min(winners, key=cost))
        return Play(min(options, key=cost))

    def lead(s, rng):
        if s.decision is not DecisionKind.LEAD or rng.random() < 0.2:
            return None
        seat = s.turn
        if listing is not None:
            options = list(listing(s, DecisionKind.LEAD, seat))
        else:
            options = [a.cards for a in family.actions(s, DecisionKind.LEAD, seat)]
        if not options:
            return None
        ctx = s.ctx
        pos, cls = ctx.pos, ctx.cls
        ace = 12 if s.level != 12 else 11
        side = [o for o in options if all(cls[c] != TRUMP for c in o)]
        strong = [o for o in side if len(o) >= 4 or any(c < 52 and c % 13 == ace for c in o)]
        if strong:
            return Play(max(strong, key=lambda o: (len(o), max(pos[c] for c in o))))
        cheap = [o for o in side if len(o) == 1 and not POINTS[o[0]]]
        if cheap:
            return Play(min(cheap, key=lambda o: pos[o[0]]))
        pool = side or options
        return Play(min(pool, key=lambda o: (max(pos[c] for c in o), len(o))))

    return follow, lead


def _voids(view, ctx) -> list[set]:
    """The suit classes each seat showed it holds no more of: it followed a lead of that class
    with cards of another."""
    voids: list[set] = [set() for _ in range(4)]
    tricks = list(view.tricks)
    if view.trick_leader is not None and view.trick:
        tricks.append((view.trick, None))
    for plays, _ in tricks:
        if not plays:
            continue
        led = ctx.cls[plays[0][1][0]]
        for s_, cards in plays[1:]:
            if any(ctx.cls[c] != led for c in cards):
                voids[s_].add(led)
    return voids


_TEMPLATES: dict = {}


def _template(rules):
    """A play-phase state of the variant (its family's own fields at their play-time values),
    reached by random play once and kept."""
    key = rules.variant
    if key in _TEMPLATES:
        return _TEMPLATES[key]
    from referee.play.chance import chance_action
    found = None
    for attempt in range(20):
        rng = random.Random(f"template:{attempt}")
        s = new_game(rules, levels=("2", "2"), dealer=0, max_deals=1)
        while not s.is_terminal and s.decision != DecisionKind.LEAD:
            if s.turn == CHANCE:
                s, _ = apply(s, chance_action(s, f"template:{attempt}"))
            else:
                s, _ = apply(s, random_action(s, rng), s.turn)
        if s.decision == DecisionKind.LEAD and not s.tricks:
            found = s
            break
    _TEMPLATES[key] = found
    return found
