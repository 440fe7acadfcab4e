"""Match records: the rule set, the seed, the starting position and every action, in order.

A record replays without any bot: ``replay`` applies its actions to a new game and returns every
event and the final state; ``verify`` compares that with the events and result the record
states. Records are plain data (dicts, lists, strings) so that they serialise to JSON as they are;
reading and writing files is the caller's business.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .actions import Action, parse_action
from .cards import RANK_TEXT
from .engine import apply, new_game
from .families import family_of
from .state import State
from .variants import rules_for

FORMAT = "shengji-arena/record/1"


@dataclass
class MatchRecord:
    """Everything needed to replay a match, plus what it produced."""

    variant: str
    options: dict[str, Any]
    seed: int | str
    start: dict[str, Any] = field(default_factory=dict)
    actions: list[tuple[int | None, str]] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def new_state(self) -> State:
        rules = rules_for(self.variant, self.options)
        start = self.start
        return new_game(rules, levels=start.get("levels"), dealer=start.get("dealer"),
                        max_deals=start.get("max_deals"))

    def add(self, seat: int | None, action: Action, events, dicts=None) -> None:
        """Record ``action`` and its ``events``; ``dicts`` are their ``to_dict()`` forms when
        the caller has made them already."""
        self.actions.append((seat, action.text()))
        if dicts is None:
            dicts = [e.to_dict() for e in events]
        self.events.extend(d | {"visible_to": _visibility(e)} for e, d in zip(events, dicts))

    def finish(self, state: State) -> None:
        self.result = result_of(state)

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "variant": self.variant, "options": self.options,
                "seed": self.seed, "start": self.start,
                "actions": [[seat, text] for seat, text in self.actions],
                "events": self.events, "result": self.result, **self.extra}

    @classmethod
    def from_dict(cls, data: dict[str, Any], name: str = "record") -> "MatchRecord":
        if not isinstance(data, dict):
            raise ValueError(f"{name}: expected a JSON object")
        if data.get("format") != FORMAT:
            raise ValueError(f"{name}: field 'format' is {data.get('format')!r}, "
                             f"expected {FORMAT!r}")
        for f in ("variant", "seed", "actions"):
            if f not in data:
                raise ValueError(f"{name}: missing field {f!r}")
        extra = {k: v for k, v in data.items()
                 if k not in ("format", "variant", "options", "seed", "start", "actions",
                              "events", "result")}
        actions = []
        for i, item in enumerate(data["actions"]):
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], str)):
                raise ValueError(f"{name}: actions[{i}]: expected [seat or null, action text]")
            actions.append((item[0], item[1]))
        return cls(data["variant"], data.get("options") or {}, data["seed"],
                   data.get("start") or {}, actions, data.get("events") or [],
                   data.get("result") or {}, extra)


def _visibility(event) -> str | int | list[int]:
    """Who may see an event: "all", one seat, or a list of seats."""
    private = getattr(event, "private_to", None)
    if private is None:
        return "all"
    return list(private) if isinstance(private, tuple) else private


def result_of(state: State) -> dict[str, Any]:
    """The result part of a record: levels, winner, deals played, the last deal's settlement."""
    out = {
        "levels": [RANK_TEXT[x] for x in state.levels],
        "winner_team": state.winner_team,
        "deals": state.deal_no,
        "game_over": state.is_terminal,
    }
    out.update(family_of(state.rules).result_extras(state))
    return out


def replay(record: MatchRecord):
    """Apply every action of ``record``; returns (final state, list of event dicts)."""
    state = record.new_state()
    events: list[dict] = []
    for i, (seat, text) in enumerate(record.actions):
        action = parse_action(text)
        try:
            state, ev = apply(state, action, seat)
        except ValueError as e:
            raise ValueError(f"action {i} ({seat}: {text[:60]}): {e}") from None
        events.extend(e.to_dict() | {"visible_to": _visibility(e)} for e in ev)
    return state, events


def verify(record: MatchRecord) -> list[str]:
    """Differences between the record and its replay (empty: it verifies)."""
    state, events = replay(record)
    problems = []
    if len(events) != len(record.events):
        problems.append(f"{len(events)} events replayed, the record has {len(record.events)}")
    for i, (a, b) in enumerate(zip(events, record.events)):
        if a != b:
            problems.append(f"event {i}: replayed {a}, recorded {b}")
            break
    res = result_of(state)
    if record.result and res != record.result:
        problems.append(f"result: replayed {res}, recorded {record.result}")
    return problems

