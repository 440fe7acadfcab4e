"""Golden match records: one committed record per variant (the seed, every action, every event
with who may see it, the result, and each seat's view at each of its decisions), replayed and
compared exactly. They pin the engine's behaviour event by event, whatever code produces it.

The records were made once by random legal play written here against the engine's public API
(``referee.rules``), so neither the records nor this file depend on where the rest of the code
lives; the test replays their actions. To make them again after a deliberate rule change (never to make a
failing test pass): ``python tests/rules/test_golden.py --write``.
"""

from __future__ import annotations

import enum
import hashlib
import itertools
import json
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from referee.rules import (CHANCE, Bury, DecisionKind, DrawKittyCard, Shuffle, apply, full_deck,  # noqa: E402
                           is_legal, legal_actions, new_game, observe, parse_action, rules_for)
from referee.rules.record import MatchRecord, replay, result_of  # noqa: E402

GOLDEN = ROOT / "tests" / "golden"
VARIANTS = ("two-deck-80", "two-deck-fry", "single-deck", "three-deck")
DEALS = 3
FULL_VIEW_EVERY = 40  # every 40th seat decision keeps the whole view, for a reader of the file


def _plain(value):
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, frozenset):
        return sorted(_plain(v) for v in value)
    return value


def _view(obs) -> dict:
    return {name: _plain(getattr(obs, name)) for name in obs.__dataclass_fields__}


def _digest(view: dict) -> str:
    return hashlib.sha256(json.dumps(view, sort_keys=True).encode()).hexdigest()[:20]


def _views(record: MatchRecord) -> tuple[list, dict]:
    """The digest of every seat's view at each of its decisions, and some whole views."""
    state = record.new_state()
    digests, full = [], {}
    for i, (seat, text) in enumerate(record.actions):
        if seat is not None:
            view = _view(observe(state, seat))
            digests.append([i, seat, _digest(view)])
            if len(digests) % FULL_VIEW_EVERY == 1:
                full[str(i)] = view
        state, _ = apply(state, parse_action(text), seat)
    return digests, full


def _random_action(state, rng: random.Random):
    """A random legal action for whoever acts (chance included), from the public API only."""
    if state.turn == CHANCE:
        if state.decision == DecisionKind.SHUFFLE:
            deck = list(full_deck(state.rules.decks))
            rng.shuffle(deck)
            return Shuffle(tuple(deck), rng.randrange(4))
        indexes = list(range(len(state.kitty)))
        rng.shuffle(indexes)
        return next(a for a in map(DrawKittyCard, indexes) if is_legal(state, a))
    seat = state.turn
    if state.decision == DecisionKind.BURY:
        hand = [k for k in range(54) for _ in range(state.hands[seat][k])]
        while True:
            action = Bury(tuple(rng.sample(hand, state.rules.kitty_size)))
            if is_legal(state, action, seat):
                return action
    options = list(itertools.islice(legal_actions(state), 400))
    return rng.choice(options)


def build(variant: str) -> dict:
    """A golden record made by random legal play (only when writing the files)."""
    rules = rules_for(variant)
    rng = random.Random(f"golden:{variant}")
    state = new_game(rules, max_deals=DEALS)
    record = MatchRecord(variant, {}, f"golden:{variant}", {"max_deals": DEALS})
    while not state.is_terminal:
        seat = None if state.turn == CHANCE else state.turn
        action = _random_action(state, rng)
        state, events = apply(state, action, seat)
        record.add(seat, action, events)
    record.finish(state)
    digests, full = _views(record)
    return {"record": record.to_dict(), "views": digests, "full_views": full}


def _load(variant: str) -> dict:
    return json.loads((GOLDEN / f"{variant}.json").read_text())


@pytest.mark.parametrize("variant", VARIANTS)
def test_golden_record_replays_exactly(variant):
    golden = _load(variant)
    record = MatchRecord.from_dict(golden["record"], f"golden/{variant}.json")
    assert record.result["deals"] == DEALS and len(record.actions) > 100
    state, events = replay(record)
    assert len(events) == len(record.events)
    for i, (got, want) in enumerate(zip(events, record.events)):
        assert got == want, f"event {i}: replayed {got}, golden {want}"
    assert result_of(state) == record.result


@pytest.mark.parametrize("variant", VARIANTS)
def test_golden_seat_views(variant):
    golden = _load(variant)
    record = MatchRecord.from_dict(golden["record"], f"golden/{variant}.json")
    digests, full = _views(record)
    for (i, seat, got), (j, seat_j, want) in zip(digests, golden["views"]):
        assert (i, seat) == (j, seat_j)
        if got != want:
            detail = full.get(str(i)) if str(i) in golden["full_views"] else ""
            pytest.fail(f"action {i}: seat {seat}'s view differs from the golden one {detail}")
    assert len(digests) == len(golden["views"])
    assert full == golden["full_views"]


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/rules/test_golden.py --write  (after a deliberate rule "
                         "change only)")
    GOLDEN.mkdir(exist_ok=True)
    for v in VARIANTS:
        data = build(v)
        (GOLDEN / f"{v}.json").write_text(json.dumps(data, ensure_ascii=False) + "\n")
        print(f"{v}: {len(data['record']['actions'])} actions, "
              f"{len(data['record']['events'])} events, {len(data['views'])} seat views")
