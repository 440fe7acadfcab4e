"""The referee's per-decision fast paths give exactly what the plain code gave: the encoded
observation, the two-deck hints built from the engine's card tuples, the lazily enumerated
follows, the cached conversions, and the seat mailboxes."""

import asyncio
import functools
import itertools
import json
import random
import re
import subprocess
import sys

import pytest

from conftest import ROOT
from referee.wire import encode, hints, protocol
from referee.play.chance import chance_action
from referee.play.random_play import random_action
from referee.rules.families.two_deck import combos
from referee.rules.actions import DecisionKind, Play
from referee.rules.errors import InvalidActionError
from referee.rules.families.two_deck.legal import iter_follows, lead_units, legal_follows
from referee.rules.families import family_of, presets
from referee.rules.legal import legal_actions
from referee.rules.multisets import multiset_combinations as _multiset_combinations
from referee.rules.observe import observe
from referee.rules.variants import rules_for
from referee.rules.engine import new_game
from referee.rules.state import CHANCE
from referee.rules.engine import apply, is_legal
from referee.rules.trump import trump_context
from referee.seats.mailbox import Mailbox
from referee.seats.seat import TIMED_OUT
from shengji_arena.v1 import referee_pb2 as pb

VARIANTS = list(presets())


def _states(variant, games=2, deals=3):
    """Every seat decision of a few randomly played games."""
    for g in range(games):
        s = new_game(rules_for(variant), max_deals=deals)
        rng = random.Random(f"{variant}:{g}")
        while not s.is_terminal:
            if s.turn == CHANCE:
                s, _ = apply(s, chance_action(s, f"fast:{g}"))
                continue
            yield s
            s, _ = apply(s, random_action(s, rng), s.turn)


def _check_hint(state, seed):
    """The hint lists legal actions, each as ``action_to_pb`` writes it: all of them, in the
    listing's order, when the listing is complete and short; else a sample that says so."""
    hint = hints.legal_hint(state, seed)
    listing = legal_actions(state)
    listed = list(itertools.islice(listing, hints.HINT_LIMIT + 1))
    got = [protocol.action_from_pb(a) for a in hint.actions]
    assert got and all(is_legal(state, a, state.turn) for a in got)
    assert list(hint.actions) == [protocol.action_to_pb(a) for a in got]
    kind = state.decision
    if kind == DecisionKind.BURY:
        assert not hint.complete and str(state.rules.kitty_size) in hint.note
    elif listing.complete and len(listed) <= hints.HINT_LIMIT:
        assert hint.complete and got == listed
    else:
        assert not hint.complete
        if len(listed) > hints.HINT_LIMIT:
            assert got[:hints.HINT_LIMIT] == listed[:hints.HINT_LIMIT]
        if kind == DecisionKind.FOLLOW:
            assert "sample" in hint.note
    if hint.complete:  # a complete listing has no note that says something is left out
        assert not any(w in hint.note for w in ("sample", "not listed", "may be")), hint.note
    if kind == DecisionKind.LEAD:  # a note on throws only where throws exist (and are unlisted)
        assert ("throws" in hint.note) == family_of(state.rules).throws
        assert hint.complete or family_of(state.rules).throws
    return hint


def _reference_follows(s, seat):
    """legal_follows as it was: every multiset of the right size, judged by follow_error."""
    fmt, ctx, hand, n = s.trick_fmt, s.ctx, s.hands[seat], s.trick_fmt.size
    suit = {k: hand[k] for k in ctx.members[fmt.cls] if hand[k]}
    held = sum(suit.values())
    if held <= n:
        base = tuple(k for k, c in suit.items() for _ in range(c))
        rest = {k: c for k, c in enumerate(hand) if c and k not in suit}
        return [base + extra for extra in _multiset_combinations(rest, n - held)]
    return [c for c in _multiset_combinations(suit, n)
            if combos.follow_error(fmt, hand, c, ctx) is None]


@pytest.mark.parametrize("variant", VARIANTS)
def test_observations_and_hints_are_what_the_constructors_give(variant):
    checked = 0
    for i, s in enumerate(_states(variant)):
        for seat in range(4):
            o = observe(s, seat)
            assert protocol.observation_to_pb(s, seat) == protocol.observation_message(o, seat)
        _check_hint(s, f"{variant}:{i}")
        checked += 1
    assert checked > 100


def test_observation_encoding_of_unusual_values():
    """Negative and large numbers, lists instead of tuples, every optional piece present."""
    s = next(iter(_states("three-deck", games=1, deals=1)))
    o = observe(s, 2)
    odd = o.__class__(**{**{f: getattr(o, f) for f in o.__slots__},
                         "dealer": None, "first_receiver": None, "trick_leader": 3,
                         "kitty_holder": None, "deal": 300, "redeals": 2,
                         "cards_dealt": 1000, "attacker_points": 145,
                         "penalties": [-40, 80], "hard_duns": [3, 12],
                         "match_points": (-7, 7, -300, 300), "dry_pot": True,
                         "drawn_kitty_card": 53, "public_kitty": (0, 53, 52),
                         "my_kitty": (1, 1), "trick": ((0, (5, 5)), (1, [6, 7])),
                         "declarations": ((2, (52, 52)), (0, (13,)))})
    encoded = pb.Observation.FromString(encode.encode_observation(odd, 2))
    assert encoded == protocol.observation_message(odd, 2)
    assert encoded.dealer == -1 and encoded.match_points[0] == -7 and encoded.trick[1].seat == 1


def test_hand_order_is_the_trump_order():
    for s in _states("two-deck-80", games=1, deals=2):
        for seat in range(4):
            cards = [k for k in range(54) for _ in range(s.hands[seat][k])]
            if s.ctx is not None:
                cards.sort(key=s.ctx.key.__getitem__)
            assert s.hand(seat) == tuple(cards)


@functools.cache
def _a_two_deck_state():
    return next(_states("two-deck-fry", games=1, deals=1))


def _two_deck_state(ctx, hand, trick_fmt=None):
    """A real two-deck ``State`` (the compiled engine takes no stand-in) whose seat 0 holds
    ``hand`` under ``ctx``, to follow ``trick_fmt``."""
    s = _a_two_deck_state().copy()
    s.ctx, s.hands, s.turn = ctx, [hand, [0] * 54, [0] * 54, [0] * 54], 0
    if trick_fmt is not None:
        s.trick_fmt = trick_fmt
    return s


def test_follows_match_the_follow_rule_for_many_leads():
    rng = random.Random(5)
    shapes = set()
    for _ in range(3000):
        ctx = trump_context(rng.randrange(13), rng.choice([None, 0, 1, 2, 3]))
        deck = list(range(54)) * 2
        rng.shuffle(deck)
        size = rng.randint(1, 25)
        hand, other = [0] * 54, [0] * 54
        for k in deck[:size]:
            hand[k] += 1
        for k in deck[size:size + 25]:
            other[k] += 1
        units = lead_units(_two_deck_state(ctx, other), 0)
        if rng.random() < 0.5:
            lead = rng.choice([u for u in units if len(u) >= 2] or units)
        else:
            c = rng.randrange(5)
            cards = [k for k in ctx.members[c] for _ in range(other[k])]
            if not cards:
                continue
            lead = tuple(rng.sample(cards, rng.randint(1, min(len(cards), 8))))
        fmt = combos.lead_format(lead, ctx)
        held = sum(hand[k] for k in ctx.members[fmt.cls])
        if sum(hand) < fmt.size or (held <= fmt.size and fmt.size - held > 3):
            continue  # too few cards, or very many follows: kept quick
        s = _two_deck_state(ctx, hand, fmt)
        assert legal_follows(s, 0) == _reference_follows(s, 0)
        shapes.add((fmt.kind, held > fmt.size))
    assert len(shapes) >= 8  # singles, pairs, tractors and throws, short and long in the suit


def _void_follower():
    """A two-deck follow where the seat holds none of the led suit and a long tractor was led:
    a great many legal follows."""
    for s in _states("two-deck-fry", games=3, deals=3):
        if s.decision == DecisionKind.FOLLOW:
            break
    ctx = s.ctx
    side = next(c for c in range(4) if len(ctx.members[c]) >= 5)
    run = sorted(ctx.members[side], key=ctx.pos.__getitem__)[:4]
    if [ctx.pos[k] for k in run] != list(range(ctx.pos[run[0]], ctx.pos[run[0]] + 4)):
        pytest.skip("no four consecutive side cards in this context")
    lead = tuple(k for k in run for _ in (0, 1))
    n = s.copy()
    n.trick_fmt = combos.lead_format(lead, ctx)
    assert n.trick_fmt.kind == combos.TRACTOR
    hands = [list(h) for h in n.hands]
    others = [k for k in range(54) if ctx.cls[k] != side]
    hands[n.turn] = [0] * 54
    for k in others[:20]:
        hands[n.turn][k] = 1
    n.hands = hands
    return n


def test_a_huge_follow_listing_is_cut_the_same_way():
    s = _void_follower()
    hint = _check_hint(s, "x")
    assert not hint.complete and len(hint.actions) == hints.HINT_LIMIT
    assert "sample" in hint.note
    # lazily: the first follows come without listing them all
    first = [c for _, c in zip(range(5), iter_follows(s, s.turn))]
    assert first == legal_follows(s, s.turn)[:5]
    for a in hint.actions:
        assert legal_actions(s).__contains__(protocol.action_from_pb(a))


def test_action_reading_is_cached_but_errors_are_not():
    a = pb.Action(kind=pb.ACTION_KIND_PLAY, cards=["AH", "10h"])
    first = protocol.action_from_pb(a)
    assert first == Play((protocol.Card.parse("AH"), protocol.Card.parse("10H")))
    assert protocol.action_from_pb(pb.Action.FromString(a.SerializeToString())) == first
    bad = pb.Action(kind=pb.ACTION_KIND_PLAY, cards=["1X"])
    for _ in range(2):
        with pytest.raises(InvalidActionError, match=r"Action.cards\[0\]"):
            protocol.action_from_pb(bad)


def test_events_convert_the_same_from_the_cache():
    for s in _states("single-deck", games=1, deals=1):
        _, events = apply(s, random_action(s, random.Random(1)), s.turn)
        for e in events:
            protocol.clear_caches()
            fresh = protocol.event_to_pb(e)
            assert fresh.kind == type(e).__name__ and json.loads(fresh.json) == e.to_dict()
            assert protocol.event_to_pb(e) == fresh  # from the cache


def test_mailbox_order_wakeup_and_timeout():
    async def go():
        box = Mailbox()
        box.put_nowait(1)
        box.put_nowait(2)
        assert await box.get() == 1 and await box.get(0.5) == 2
        assert await box.get(0.01) is TIMED_OUT
        loop = asyncio.get_running_loop()
        loop.call_later(0.01, box.put_nowait, None)
        assert await box.get(5) is None  # a put wakes the waiting reader
        task = asyncio.ensure_future(box.get())
        await asyncio.sleep(0)  # (a yield to the loop, not a wait)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        box.put_nowait(3)  # a cancelled reader leaves the box usable
        assert box.qsize() == 1 and await box.get(1) == 3 and box.empty()
        for item in (4, 5):
            box.put_nowait(item)
        for take in (box.get_nowait, box.get):  # either way of taking wakes a waiting writer
            writer = asyncio.ensure_future(box.wait_taken())
            await asyncio.sleep(0)  # (a yield to the loop, not a wait)
            assert not writer.done()
            got = take()
            got = await got if asyncio.iscoroutine(got) else got
            await asyncio.sleep(0)  # (a yield to the loop, not a wait)
            assert writer.done() and got in (4, 5)
        assert box.empty()
    asyncio.run(go())


def test_the_link_benchmark_reports_every_figure():
    """`arena bench link` runs end to end (a referee with four bot processes once for each way
    of taking events, the echo and the four-client relay) and prints each figure it promises,
    as positive numbers, the referee's for each way; bots that take their events with their
    requests are sent fewer messages per decision."""
    out = subprocess.run([sys.executable, "-m", "cli", "bench", "link", "--deals", "1"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for label in ("command", "machine", "message", "echo", "relay"):
        assert len(re.findall(rf"^{label} ", text, re.M)) == 1, (label, text)
    modes = ("notices", "with-requests")
    for label in ("referee", "messages", "cpu", "ratio", "deal", "against it", "game work",
                  "floor"):
        for mode in modes:
            assert re.search(rf"^{label} +{mode}: ", text, re.M), (label, mode, text)
    decisions = [int(re.search(rf"^referee +{mode}: (\d+) decisions", text, re.M).group(1))
                 for mode in modes]
    relay = re.search(r"^relay .*: (\d+) round trips, median ([0-9.]+) ms", text, re.M)
    assert int(relay.group(1)) == max(200, *decisions) and float(relay.group(2)) > 0
    ratios = re.findall(r"= ([0-9.]+) \(goal <= 1.5\)|ratio ([0-9.]+) \(goal <= 1.5\)", text)
    # per way: the CPU, the round trip and the deal against their goals
    assert len(ratios) == 6 and all(float(a or b) > 0 for a, b in ratios), text
    sent = [float(re.search(rf"^messages +{mode}: ([0-9.]+) per decision", text, re.M).group(1))
            for mode in modes]
    assert 2 < sent[1] < sent[0], sent
    for mode in modes:
        work = re.search(rf"^game work +{mode}: .*?(\d+) decisions\): referee ([0-9.]+) ms .*?, "
                         r"([0-9.]+) ms recording .*seats ([0-9.]+) ms", text, re.M)
        assert work and int(work.group(1)) > 0 and all(float(work.group(i)) > 0
                                                       for i in (2, 3, 4)), (mode, text)
        floor = re.search(rf"^floor +{mode}: .*= ([0-9.]+) x echo; .* = ([0-9.]+) x decisions",
                          text, re.M)
        # the deal's floor adds the game work and the seat to the relay's mean round trip, so
        # it lies above mean relay / mean echo (means against means: a stall of the echo moves
        # its mean, not its median)
        means = [float(re.search(rf"^{label} .*, mean ([0-9.]+) ms", text, re.M).group(1))
                 for label in ("relay", "echo")]
        assert floor and float(floor.group(1)) > 0, text
        assert float(floor.group(2)) > means[0] / means[1], (means, text)


def test_a_padded_action_reads_as_itself_and_is_never_kept():
    """An answer may carry unknown fields (protobuf keeps them): it reads as the action it
    holds, but its bytes do not go into the action cache, which a bot could otherwise fill
    with 64 KiB keys one legal answer at a time."""
    from referee.rules.cards import Card
    from shengji_arena.v1 import referee_pb2 as pb
    plain = protocol.action_to_pb(Play((Card.parse("AS"), Card.parse("AS"))))
    unknown = b"\x9a\x06" + b"\xe8\x07" + b"x" * 1000  # field 99, 1000 bytes
    padded = pb.Action.FromString(plain.SerializeToString() + unknown)
    assert len(padded.SerializeToString()) > 1000  # the unknown field is kept
    protocol.clear_caches()
    assert protocol.action_from_pb(padded) == protocol.action_from_pb(plain)
    assert protocol.cache_sizes()["actions"] == 1  # the plain message's, not the padded one's
    protocol.action_from_pb(padded)
    assert protocol.cache_sizes()["actions"] == 1


def test_a_long_text_from_a_bot_is_cut_in_the_error_that_names_it():
    from shengji_arena.v1 import referee_pb2 as pb
    for action, field in ((pb.Action(kind=pb.ACTION_KIND_PLAY, cards=["AS", "Z" * 5000]),
                           "Action.cards[1]"),
                          (pb.Action(kind=pb.ACTION_KIND_DECLARE, suit="Q" * 5000),
                           "Action.suit")):
        with pytest.raises(InvalidActionError) as e:
            protocol.action_from_pb(action)
        assert str(e.value).startswith(field) and "(5000 characters)" in str(e.value)
        assert len(str(e.value)) < 120
