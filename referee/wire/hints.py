"""The legal-action hint that goes with every request (``LegalHint``): every legal action where
there are at most ``HINT_LIMIT`` and the listing is complete, else a sample that always holds one
legal action, with a note that says which."""

from __future__ import annotations

import random
from itertools import islice

from shengji_arena.v1 import referee_pb2 as pb

from referee.play.random_play import random_action
from referee.rules.actions import DecisionKind, Play
from referee.rules.families import family_of
from referee.rules.legal import legal_actions
from referee.rules.state import State
from referee.wire.protocol import CACHE_MAX, hint_entry

HINT_LIMIT = 100  # most actions listed in a hint; beyond it the hint is a sample
SAMPLE_SIZE = 8  # random actions drawn for a sample (the distinct ones are listed)

HINT_NOTES = {
    DecisionKind.BURY: "bury any {n} cards of your hand that the variant allows (a sample is listed)",
    DecisionKind.LEAD: "throws (several units of one suit) are not listed but may be led",
}


def legal_hint(state: State, rng_seed: str) -> pb.LegalHint:
    """Legal actions for the seat to act: all of them where there are at most ``HINT_LIMIT``
    (and the listing is complete), else a sample that always includes one legal action."""
    kind = state.decision
    family = family_of(state.rules)
    if kind in _PLAY_KINDS and family.plays is not None:
        hint = _play_hint(state, kind, family)
        if hint is not None:
            return hint
    actions, complete = listed_actions(state, rng_seed)
    note = HINT_NOTES.get(kind, "") if kind != DecisionKind.LEAD or family.throws else ""
    if kind == DecisionKind.BURY:
        note = note.format(n=state.rules.kitty_size)
    if not complete and kind == DecisionKind.FOLLOW:
        note = FOLLOW_SAMPLE_NOTE
    # the listed actions from their cached encodings: what action_to_pb would give, parsed once
    hint = pb.LegalHint(complete=complete, note=note)
    hint.MergeFromString(b"".join(map(hint_entry, actions)))
    return hint


def listed_actions(state: State, rng_seed: str) -> tuple[list, bool]:
    """The actions a hint lists, outside the lead-and-follow fast path: every legal action
    (at most ``HINT_LIMIT``) and whether that is all of them; for a burial (never listed) or
    where the listing has nothing, a sample drawn with ``rng_seed`` instead."""
    kind = state.decision
    listing = legal_actions(state)
    actions: list = []
    complete = listing.complete
    if kind == DecisionKind.BURY:
        complete = False
    else:
        for a in listing:
            if len(actions) == HINT_LIMIT:
                complete = False
                break
            actions.append(a)
    if not actions or kind == DecisionKind.BURY:
        rng = random.Random(rng_seed)
        seen = set(actions)
        burials = family_of(state.rules).random_burials if kind == DecisionKind.BURY else None
        drawn = (burials(state, rng, SAMPLE_SIZE) if burials is not None
                 else [random_action(state, rng) for _ in range(SAMPLE_SIZE)])
        for a in drawn:
            if a not in seen:
                seen.add(a)
                actions.append(a)
    return actions, complete


_PLAY_KINDS = (DecisionKind.LEAD, DecisionKind.FOLLOW)
_PLAY_ENTRY_CACHE: dict = {}  # a play's cards as the engine lists them -> its entry
FOLLOW_SAMPLE_NOTE = f"more than {HINT_LIMIT} legal follows: a sample is listed"


def _play_hint(state: State, kind, family) -> pb.LegalHint | None:
    """``legal_hint`` of a lead or follow, from the family's card tuples without making
    ``Play`` actions: the same actions, in the same order, as ``legal_actions``."""
    plays = family.plays(state, kind, state.turn)
    complete = kind != DecisionKind.LEAD or not family.throws  # throws are not listed
    entries = list(islice(plays, HINT_LIMIT + 1))
    if not entries:
        return None
    if len(entries) > HINT_LIMIT:
        del entries[HINT_LIMIT:]
        complete = False
    cache = _PLAY_ENTRY_CACHE
    for i, cards in enumerate(entries):
        entry = cache.get(cards)
        if entry is None:
            entry = hint_entry(Play(cards))
            if len(cache) >= CACHE_MAX:
                cache.clear()
            cache[cards] = entry
        entries[i] = entry
    if kind == DecisionKind.LEAD:
        note = HINT_NOTES[kind] if family.throws else ""
    else:
        note = "" if complete else FOLLOW_SAMPLE_NOTE
    hint = pb.LegalHint(complete=complete, note=note)
    hint.MergeFromString(b"".join(entries))
    return hint
