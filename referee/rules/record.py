"""Match records: the rule set, the seed, the starting position and every action, in order.

A record replays without any bot: ``replay`` applies its actions to a new game and returns every
event and the final state; ``verify`` compares that with the events and result the record
states. Records are plain data (dicts, lists, strings) so that they serialise to JSON as they are;
reading and writing files is the caller's business.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from .actions import Action, parse_action
from .cards import RANK_TEXT
from .engine import apply, new_game
from .events import Event
from .families import family_of
from .options import RuleSet
from .state import State
from .variants import rules_for

FORMAT = "shengji-arena/record/1"


class RecordError(ValueError):
    """A record that cannot be read: the message names the record, the field, what it holds
    and what was expected."""


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
    def from_dict(cls, data: Any, name: str = "record") -> "MatchRecord":
        """The record ``data`` describes; a field that cannot be read raises ``RecordError``
        naming ``name``, the field, what it holds and what was expected."""
        if not isinstance(data, dict):
            raise RecordError(f"{name}: expected a JSON object, got {short(data)}")
        _need(data.get("format") == FORMAT, name, "format", data.get("format"), repr(FORMAT))
        for f in ("variant", "seed", "actions"):
            if f not in data:
                raise RecordError(f"{name}: missing field {f!r}")
        variant, options = data["variant"], _or_empty(data, "options")
        _need(isinstance(variant, str), name, "variant", variant, "a variant id")
        _need(isinstance(options, dict), name, "options", options, "an object of rule options")
        rules_of(variant, options, name)
        seed = data["seed"]
        _need(isinstance(seed, (int, str)) and not isinstance(seed, bool), name, "seed", seed,
              "a seed, an integer or a string")
        start = _or_empty(data, "start")
        _need(isinstance(start, dict), name, "start", start,
              "an object with the starting levels, dealer and max_deals")
        _check_start(start, f"{name}: start")
        _need(isinstance(data["actions"], list), name, "actions", data["actions"],
              "a list of [seat or null, action text]")
        actions = []
        for i, item in enumerate(data["actions"]):
            _need(isinstance(item, list) and len(item) == 2 and _seat_or_chance(item[0])
                  and isinstance(item[1], str), name, f"actions[{i}]", item,
                  "[a seat 0-3 or null for chance, an action's text]")
            actions.append((item[0], item[1]))
        events, result = _or_empty(data, "events", []), _or_empty(data, "result")
        _need(isinstance(events, list), name, "events", events, "a list of event objects")
        for i, e in enumerate(events):
            _need(isinstance(e, dict), name, f"events[{i}]", e, "an event object")
        _need(isinstance(result, dict), name, "result", result,
              "an object: the levels, winner and deals the game ended with")
        extra = {k: v for k, v in data.items()
                 if k not in ("format", "variant", "options", "seed", "start", "actions",
                              "events", "result")}
        return cls(variant, options, seed, start, actions, events, result, extra)


def short(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to about ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit - 5]} ...{text[-1]}"


def _need(ok: bool, where: str, name: str, value: Any, expected: str) -> None:
    if not ok:
        raise RecordError(f"{where}: field '{name}' = {short(value)}: expected {expected}")


def _or_empty(data: dict, name: str, empty: Any = None) -> Any:
    """``data[name]``; missing or null: ``empty`` (an empty object unless given)."""
    value = data.get(name)
    return ({} if empty is None else empty) if value is None else value


def _seat_or_chance(v: Any) -> bool:
    return v is None or (isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 4)


def _check_start(start: dict, where: str) -> None:
    """The starting position a game is replayed from (what ``new_game`` takes)."""
    unknown = sorted(set(start) - {"levels", "dealer", "max_deals"})
    if unknown:
        raise RecordError(f"{where}: unknown field(s) {unknown}; expected levels, dealer, "
                          "max_deals")
    levels = start.get("levels")
    _need(levels is None or (isinstance(levels, list) and len(levels) == 2 and all(
        isinstance(x, str) and x.upper() in RANK_TEXT for x in levels)), where, "levels", levels,
          f"null or two ranks, team 0's and team 1's, from {', '.join(RANK_TEXT)}")
    _need(_seat_or_chance(start.get("dealer")), where, "dealer", start.get("dealer"),
          "a seat 0-3, or null for the first deal to decide")
    deals = start.get("max_deals")
    _need(deals is None or (isinstance(deals, int) and not isinstance(deals, bool)
                            and deals >= 1), where, "max_deals", deals,
          "null or a number of deals, 1 or more")


_KINDS = ((bool, "true or false"), (int, "an integer"), (str, "a string"),
          (tuple, "a list of ranks"))


def rules_of(variant: Any, options: Any, where: str) -> RuleSet:
    """The rule set a record names (``rules_for``); an unknown variant, option name or value
    raises ``RecordError`` with the rules' own words, after ``where`` and the field."""
    try:
        preset = rules_for(variant)
    except (ValueError, TypeError) as e:
        raise RecordError(f"{where}: field 'variant': {e}") from None
    for name, value in options.items():
        default = getattr(preset, name, None) if name != "variant" else None
        kind = next(((t, text) for t, text in _KINDS if isinstance(default, t)), None)
        if kind is None:
            continue
        t, text = kind
        if t is tuple:
            ok = isinstance(value, (list, tuple)) and all(isinstance(x, str) for x in value)
        else:
            ok = isinstance(value, t) and (t is bool or not isinstance(value, bool))
        if not ok:
            raise RecordError(f"{where}: field 'options': option {name!r} = {short(value)} "
                              f"is not allowed; expected {text}")
    try:
        return rules_for(variant, options)
    except (ValueError, TypeError) as e:
        raise RecordError(f"{where}: field 'options': {e}") from None


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


def replayed(record: MatchRecord) -> Iterator[tuple[State, tuple[Event, ...]]]:
    """Apply ``record``'s actions in turn: (the state after each, its events); an action the
    engine refuses raises ``ValueError`` naming it."""
    state = record.new_state()
    for i, (seat, text) in enumerate(record.actions):
        try:
            state, ev = apply(state, parse_action(text), seat)
        except ValueError as e:
            raise ValueError(f"action {i} ({seat}: {text[:60]}): {e}") from None
        yield state, ev


def replay(record: MatchRecord):
    """Apply every action of ``record``; returns (final state, list of event dicts)."""
    state = record.new_state()
    events: list[dict] = []
    for state, ev in replayed(record):
        events.extend(e.to_dict() | {"visible_to": _visibility(e)} for e in ev)
    return state, events


def verify(record: MatchRecord) -> list[str]:
    """Differences between the record and its replay (empty: it verifies). A record states
    the result of a game that ended; only a game cut short (a forfeit) has none."""
    state, events = replay(record)
    problems = []
    if len(events) != len(record.events):
        problems.append(f"{len(events)} events replayed, the record has {len(record.events)}")
    for i, (a, b) in enumerate(zip(events, record.events)):
        if a != b:
            problems.append(f"event {i}: replayed {a}, recorded {b}")
            break
    res = result_of(state)
    if not record.result:
        if state.is_terminal:
            problems.append(f"result: missing: the game ended with {res}, the record states "
                            "no result")
    elif res != record.result:
        problems.append(f"result: replayed {res}, recorded {record.result}")
    return problems
