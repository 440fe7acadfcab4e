"""Matches between policies in process: the referee's match of a deal list, without the wire.

``play_match`` plays a ``MatchSpec``'s deals as the match runner does (chance from each deal's
seed, each seat's listing sampled from the runner's seed, the same fault policy for an answer
that is not legal), with four policy objects, one per seat, and returns the ``MatchSummary``
the standings count, as ``MatchFile.summary`` gives it for a match through the referee.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from lab.policy import Legal, listed_actions, new_legal, play_listing
from referee.match.faults import (GARBAGE, ILLEGAL, Forfeited, action_for, add_strike,
                                  forfeit_if_out)
from referee.match.results import DealFold, MatchSummary, per_seat
from referee.match.spec import MatchSpec
from referee.play.chance import chance_action
from referee.rules.actions import Action
from referee.rules.engine import apply, new_game
from referee.rules.events import DealEnded, DealerSet, DealStarted
from referee.rules.families import family_of
from referee.rules.observe import Observation, observe
from referee.rules.options import AfterAce
from referee.rules.state import CHANCE
from referee.rules.variants import rules_for


@dataclass
class LabMatch:
    """What ``play_match`` gives: the summary, the faults (as the referee records them), the
    actions of each game as (seat or None, action text) when asked for, and decisions made."""

    summary: MatchSummary
    faults: list[dict] = field(default_factory=list)
    actions: list[list[tuple]] | None = None
    decisions: int = 0


_set = object.__setattr__
_WATCHED = frozenset((DealStarted, DealerSet, DealEnded))
"""The events a lab match reads (the deal's start, its dealer and its end)."""


def seat_inputs(state, sample_seed: str, time_left_ms: int, bank_left_ms: int
                ) -> tuple[Observation, Legal]:
    """All a policy is given at the decision of the seat to act: its ``observe`` view and the
    listing (the referee's hint, sampled from ``sample_seed``) with its clock. Both are frozen
    values made anew; neither refers to ``state``."""
    return _inputs(state, listed_actions(state, sample_seed), time_left_ms, bank_left_ms)


def _inputs(state, listing: tuple, time_left_ms: int, bank_left_ms: int
            ) -> tuple[Observation, Legal]:
    """``seat_inputs`` with the listing already made."""
    view = observe(state, state.turn)
    # as the wire gives them: the phase as plain text, no trump until it is fixed (a fresh
    # frozen value of ours, set in place)
    _set(view, "phase", str(view.phase))
    if view.trump is not None and not view.trump_fixed:
        _set(view, "trump", None)
    return view, new_legal(state.decision, listing[0], listing[1], time_left_ms,
                           bank_left_ms)


def play_match(spec: MatchSpec, policies: list, *, keep_actions: bool = False,
               clock: bool = True) -> LabMatch:
    """Play ``spec`` (a deal-list match) between ``policies`` (seat order, four objects; one
    may be shared on purpose only). ``clock``: spend each seat's time bank by the time its
    policy took, as the referee does (a lab match never defaults a slow answer)."""
    if spec.deals is None:
        raise ValueError(f"match spec {spec.match_id}: the lab plays deal lists only")
    rules = rules_for(spec.variant, spec.options)
    wraps = rules.after_ace == AfterAce.WRAP
    tc = spec.time_control
    per_ms, bank = tc.per_decision_ms, [float(tc.bank_ms)] * 4
    bank_ms = [int(tc.bank_ms)] * 4  # as the policy is told it: whole ms
    strikes = [0, 0, 0, 0]
    faults: list[dict] = []
    hooks_start = [getattr(p, "deal_start", None) for p in policies]
    hooks_end = [getattr(p, "deal_end", None) for p in policies]
    any_end = any(hook is not None for hook in hooks_end)
    for at, p in enumerate(policies):
        start = getattr(p, "match_start", None)
        if start is not None:
            start(at, spec.match_id, rules.variant)
    acts = [p.act for p in policies]
    # a policy that says it reads no view (``observes = False``) is handed None: no view made
    observes = [getattr(p, "observes", True) is not False for p in policies]
    extras = family_of(rules).result_extras
    seat_points = None
    fold = DealFold(wraps)
    deals = fold.deals
    all_actions: list[list[tuple]] = []
    decisions = 0
    forfeit = None
    perf = time.perf_counter
    try:
        for index, deal in enumerate(spec.deals):
            state = new_game(rules, levels=list(deal.levels), dealer=deal.dealer, max_deals=1)
            game_actions: list[tuple] = []
            if keep_actions:
                all_actions.append(game_actions)
            steps = 0
            seed = deal.seed
            while not state.is_terminal:
                seat: int | None
                if state.turn == CHANCE:
                    seat = None
                    action = chance_action(state, seed)
                    state, events = apply(state, action, None)
                    if keep_actions:
                        game_actions.append((seat, action.text()))
                else:
                    seat = state.turn
                    # the seed of the hint's sample, made only where a sample may be drawn
                    listing: tuple[tuple[Action, ...], bool] | None = play_listing(state)
                    if listing is None:
                        listing = listed_actions(state, f"{seed}:{steps}")
                    if observes[seat]:
                        view, legal = _inputs(state, listing, per_ms, bank_ms[seat])
                    else:
                        view = None
                        legal = new_legal(state.decision, listing[0], listing[1], per_ms,
                                          bank_ms[seat])
                    t = perf() if clock else 0.0
                    try:
                        action = acts[seat](view, legal)
                        error = None
                    except Exception as exc:  # noqa: BLE001 - a crash is a fault, as a bot's
                        action, error = None, f"{type(exc).__name__}: {exc}"
                    if clock:
                        used = (perf() - t) * 1000
                        if used > per_ms:
                            bank[seat] = max(0.0, bank[seat] - (used - per_ms))
                            bank_ms[seat] = int(bank[seat])
                    decisions += 1
                    try:
                        if error is not None:
                            raise ValueError(error)
                        state_events = apply(state, action, seat)
                    except ValueError as exc:
                        kind = GARBAGE if error is not None else ILLEGAL
                        state_events = _fault(state, seat, f"{seed}:{steps}", kind, str(exc),
                                              index, steps, strikes, faults, tc.max_strikes)
                        action = state_events[2]
                    state, events = state_events[0], state_events[1]
                    if keep_actions:
                        game_actions.append((seat, action.text()))
                if _WATCHED.isdisjoint(map(type, events)):  # most actions' events
                    steps += 1
                    continue
                for e in events:
                    fold.see(e)
                    cls = type(e)
                    if cls is DealStarted:
                        for hook in hooks_start:
                            if hook is not None:
                                hook(e.deal)
                    elif cls is DealEnded and any_end:
                        outcome = json.loads(json.dumps(e.to_dict()))
                        for hook in hooks_end:
                            if hook is not None:
                                hook(outcome)
                steps += 1
            points = extras(state).get("match_points")
            if points:
                seat_points = [a + b for a, b in zip(seat_points or [0] * 4, points)]
    except Forfeited as f:
        forfeit = f.seat % 2
    net0 = sum(d.gain[0] - d.gain[1] for d in deals)
    if forfeit is not None:
        score = (0.0, 1.0) if forfeit == 0 else (1.0, 0.0)
    else:
        score = (1.0, 0.0) if net0 > 0 else (0.0, 1.0) if net0 < 0 else (0.5, 0.5)
    summary = MatchSummary(tuple(deals), (net0, -net0), score, forfeit, per_seat(strikes),
                           len(faults), None if seat_points is None else per_seat(seat_points),
                           per_seat(spec.seat_names))
    return LabMatch(summary, faults, all_actions if keep_actions else None, decisions)


def _fault(state, seat, sample_seed, kind, reason, game, steps, strikes, faults, max_strikes):
    """The referee's answer to an action that is not legal (``referee.match.faults``): a
    strike and the action played for the seat; at ``max_strikes`` its team forfeits."""
    add_strike(strikes, seat)
    action = action_for(state, seat, sample_seed)
    applied = apply(state, action, seat)
    faults.append({"seat": seat, "kind": kind, "reason": reason, "strikes": strikes[seat],
                   "game": game, "action": steps, "default_action": action.text()})
    forfeit_if_out(strikes, seat, max_strikes)
    return applied[0], applied[1], action
