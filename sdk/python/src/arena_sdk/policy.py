"""Policies: a strategy written as ``act(view, legal) -> action`` (the lab's interface,
docs/lab.md) played as a gRPC bot, and the pieces it is made of.

    from arena_sdk.policy import run_policy
    from mine import Mine
    run_policy(Mine())

- ``Legal``: the decision's kind, the listed legal actions (engine actions), whether the listing
  is complete, and the seat's clock.
- ``observation_from_pb``: the seat's engine ``Observation`` rebuilt from a request's
  ``Observation`` message, its kind, and the completed tricks ``TrickLog`` gathers from events.
- ``PolicyBot`` / ``run_policy``: the SDK loop around a policy. The policy's optional hooks
  ``match_start(seat, match_id, variant)``, ``deal_start(deal)`` and ``deal_end(outcome)`` are
  called from the Welcome and the DealStarted / DealEnded events.

The view and the actions are the rules engine's (the arena's ``referee.rules``), which comes with
the SDK: in every Python bot's sandbox, and in the SDK's package.
"""

from __future__ import annotations

import json
import sys
import traceback
from dataclasses import dataclass

from arena_sdk.bot import Bot, run
from shengji_arena.v1 import referee_pb2 as pb

from referee.rules.actions import Action, DecisionKind
from referee.rules.cards import RANK_TEXT, SUITS, Card
from referee.rules.observe import Observation
from referee.wire.protocol import DECISION_TO_PB, action_from_pb, action_to_pb

__all__ = ["KIND_OF_PB", "Legal", "PolicyBot", "TrickLog", "observation_from_pb",
           "run_policy"]


@dataclass(frozen=True, slots=True)
class Legal:
    """One decision: its kind, the listed legal actions (``complete``: every legal action is
    listed; throws never are), and the seat's clock in milliseconds (this decision's allowance
    and the time bank)."""

    kind: DecisionKind
    actions: tuple[Action, ...]
    complete: bool
    time_left_ms: int
    bank_left_ms: int

    def __iter__(self):
        return iter(self.actions)

    def __len__(self) -> int:
        return len(self.actions)

    def __getitem__(self, i: int) -> Action:
        return self.actions[i]


KIND_OF_PB = {v: k for k, v in DECISION_TO_PB.items()}
_RANK = {t: i for i, t in enumerate(RANK_TEXT)}
_SUIT = {t: i for i, t in enumerate(SUITS)}
_CARD: dict = {}


def _card(text: str) -> int:
    c = _CARD.get(text)
    if c is None:
        c = _CARD[text] = int(Card.parse(text))  # a plain int, as the engine keeps cards
    return c


def _cards(texts) -> tuple[int, ...]:
    return tuple(_card(t) for t in texts)


def _seat(x: int) -> int | None:
    return None if x < 0 else x


def observation_from_pb(o: pb.Observation, kind: DecisionKind | None,
                        tricks: tuple = ()) -> Observation:
    """The engine's ``Observation`` for this message, at the seat's own decision of ``kind``
    (the trump is None until it is fixed, as the message says); ``tricks``: the deal's completed
    tricks (``TrickLog.tricks``)."""
    return Observation(
        seat=o.seat, variant=o.variant, deal=o.deal, phase=o.phase,
        to_act=o.seat if kind is not None else None, decision=kind,
        levels=tuple(_RANK[x] for x in o.levels), dealer=_seat(o.dealer), level=_RANK[o.level],
        trump=_SUIT.get(o.trump), trump_fixed=o.trump != "",
        first_receiver=_seat(o.first_receiver), hand=_cards(o.hand),
        hand_sizes=tuple(o.hand_sizes), cards_dealt=o.cards_dealt,
        declarations=tuple((d.seat, _cards(d.cards)) for d in o.declarations),
        public_kitty=_cards(o.public_kitty),
        drawn_kitty_card=_card(o.drawn_kitty_card) if o.drawn_kitty_card else None,
        my_kitty=_cards(o.my_kitty), kitty_holder=_seat(o.kitty_holder), redeals=o.redeals,
        trick_leader=_seat(o.trick_leader),
        trick=tuple((p.seat, _cards(p.cards)) for p in o.trick), tricks=tuple(tricks),
        attacker_points=o.attacker_points, penalties=tuple(o.penalties), winner_team=None,
        hard_duns=tuple(o.hard_duns), dry_pot=o.dry_pot, match_points=tuple(o.match_points))


class TrickLog:
    """The deal's completed tricks as ``(((seat, cards), ...), winner)``, from the ``Played``
    and ``TrickWon`` events a seat is sent; ``feed`` also returns the deal's start and end for
    a policy's hooks: ``("start", deal)`` and ``("end", the DealEnded event's fields)``."""

    def __init__(self) -> None:
        self.tricks: tuple = ()
        self.current: list = []

    def feed(self, events) -> list[tuple[str, object]]:
        hooks = []
        for e in events:
            kind = e.kind
            if kind == "Played":
                self.current.append((e.seat, _cards(e.cards)))
            elif kind == "TrickWon":
                self.tricks = self.tricks + ((tuple(self.current), e.seat),)
                self.current = []
            elif kind == "DealStarted":
                self.tricks, self.current = (), []
                hooks.append(("start", json.loads(e.json)["deal"]))
            elif kind == "DealEnded":
                hooks.append(("end", json.loads(e.json)))
        return hooks


class PolicyBot(Bot):
    """Plays ``policy`` on one seat. A policy that raises answers an empty action: the referee
    counts a fault and plays its default, as the lab does."""

    def __init__(self, policy, name: str | None = None) -> None:
        super().__init__()
        self.policy = policy
        self.name = name or getattr(policy, "name", None) or type(policy).__name__
        self.log = TrickLog()
        self._hooks = {"start": getattr(policy, "deal_start", None),
                       "end": getattr(policy, "deal_end", None)}

    def on_welcome(self, welcome: pb.Welcome) -> None:
        start = getattr(self.policy, "match_start", None)
        if start is not None:
            start(welcome.seat, welcome.match_id, welcome.variant)

    def _feed(self, events) -> None:
        for what, value in self.log.feed(events):
            hook = self._hooks[what]
            if hook is not None:
                hook(value)

    def on_notice(self, notice: pb.Notice) -> None:
        self._feed(notice.events)

    def decide(self, request: pb.DecisionRequest) -> pb.Action:
        self._feed(request.events)
        kind = KIND_OF_PB[request.kind]
        view = observation_from_pb(request.observation, kind, self.log.tricks)
        legal = Legal(kind, tuple(action_from_pb(a) for a in request.hint.actions),
                      request.hint.complete, request.time_left_ms, request.bank_left_ms)
        try:
            return action_to_pb(self.policy.act(view, legal))
        except Exception:  # noqa: BLE001 - the policy's own failure: logged, and a fault
            traceback.print_exc(file=sys.stderr)
            return pb.Action()


def run_policy(policy, name: str | None = None) -> int:
    """Play one seat with ``policy`` until the match ends (``arena_sdk.run``)."""
    return run(PolicyBot(policy, name))
