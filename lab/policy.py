"""The policy interface of the strategy lab: what a strategy sees and how it answers.

A policy is any object with ``act(view, legal) -> action``:

- ``view`` is the seat's ``Observation`` (``referee.rules.observe``): the same per-seat view the
  referee encodes for a bot, as frozen values (tuples and numbers, cards as ints). It holds no
  reference to the game state.
- ``legal`` is a ``Legal``: the decision's kind, the listed legal actions (the referee's hint:
  every action where there are at most 100 and the listing is complete, else a sample; throws
  are never listed, any legal lead is accepted), and the seat's clock.

A policy whose choices never read the view may say so with a class attribute ``observes =
False``: the lab then hands it ``None`` instead of a view and makes none (the sample ``random``
and ``first`` policies do; a view is 40% to 50% of the lab's cost of a decision beyond the
engine's). Through the SDK it is handed the view all the same.

The answer is an engine action (``referee.rules.actions``: ``Play``, ``Declare``, ``Pass``, ...);
an action that is not legal is a fault, as through the referee. Optional hooks, called when
present:

- ``match_start(seat, match_id, variant)`` before the first decision of a match;
- ``deal_start(deal)`` at each deal's start, ``deal_end(outcome)`` at its end (``outcome`` is
  the ``DealEnded`` event as the wire's JSON gives it: ``attacker_total``, ``levels``, ...).

The same object plays in the lab (``lab.match``) and as a gRPC bot (the SDK's ``arena_sdk.policy``,
``arena bots wrap``); both hand it equal views and listings.
"""

from __future__ import annotations

import importlib
import importlib.util
import random
import sys
from itertools import islice
from pathlib import Path
from typing import Protocol, runtime_checkable

from referee.rules.actions import Action, DecisionKind, Play
from referee.rules.families import family_of
from referee.rules.frozen import slot_constructor
from referee.rules.observe import Observation
from referee.rules.state import State
from referee.wire.hints import HINT_LIMIT
from referee.wire.hints import listed_actions as hint_listing

from lab.paths import ROOT, SAMPLES, SDK, on_path  # noqa: E402

on_path(SDK)
from arena_sdk.policy import Legal  # noqa: E402 - the SDK's: a bot is handed the same values

new_legal = slot_constructor(Legal)
"""``Legal(kind, actions, complete, time_left_ms, bank_left_ms)`` made quickly (the lab makes
one at every decision)."""


@runtime_checkable
class Policy(Protocol):
    """A strategy: see the module docstring."""

    def act(self, view: Observation | None, legal: Legal) -> Action: ...


class _PlayCache(dict):
    """A play's cards -> its ``Play`` action (actions are values), made on first use."""

    def __missing__(self, cards: tuple[int, ...]) -> Play:
        action = self[cards] = Play(cards)
        return action


_PLAYS = _PlayCache()
_play_of = _PLAYS.__getitem__


def listed_actions(state: State, sample_seed: str) -> tuple[tuple[Action, ...], bool]:
    """The actions the referee's hint lists at this decision, in its order, and whether the
    listing is complete (``referee.wire.hints.legal_hint``, without the wire form)."""
    listing = play_listing(state)
    if listing is not None:
        return listing
    actions, complete = hint_listing(state, sample_seed)
    return tuple(actions), complete


def play_listing(state: State) -> tuple[tuple[Play, ...], bool] | None:
    """``listed_actions`` of a lead or follow from the family's quick ``plays`` listing (the
    hint's own path, which needs no sample seed); None at any other decision, or where that
    listing is empty (the hint then samples)."""
    kind = state.decision
    if kind is not _FOLLOW and kind is not _LEAD:
        return None
    quick = _QUICK.get(state.rules.family)
    if quick is None:
        family = family_of(state.rules)
        quick = _QUICK[state.rules.family] = (family.plays, not family.throws)
    plays, complete_leads = quick
    if plays is None:
        return None
    entries = list(islice(plays(state, kind, state.turn), _MORE))
    if len(entries) < _MORE:
        if not entries:
            return None
        complete = kind is _FOLLOW or complete_leads
    else:
        del entries[HINT_LIMIT:]
        complete = False
    if len(_PLAYS) >= 50_000:
        _PLAYS.clear()
    return tuple(map(_play_of, entries)), complete


_FOLLOW, _LEAD = DecisionKind.FOLLOW, DecisionKind.LEAD
_MORE = HINT_LIMIT + 1
_QUICK: dict = {}
"""A family's name -> its quick ``plays`` listing and whether its listing of leads is complete
(no throws)."""


def legal_of(state: State, sample_seed: str, time_left_ms: int, bank_left_ms: int) -> Legal:
    """The ``Legal`` of the seat to act (``sample_seed``: the referee's seed of its sample)."""
    actions, complete = listed_actions(state, sample_seed)
    return new_legal(state.decision, actions, complete, time_left_ms, bank_left_ms)


# -- sample policies ----------------------------------------------------------------------------
class RandomPolicy:
    """Uniform over the listed actions: the ``random`` sample bot's play (same generator seed,
    ``MATCH_ID:SEAT``, so the same choices in the lab and through the referee)."""

    name = "random"
    observes = False  # it reads the listing only

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def match_start(self, seat: int, match_id: str, variant: str) -> None:
        self.rng = random.Random(f"{match_id}:{seat}")

    def act(self, view: Observation, legal: Legal) -> Action:
        return self.rng.choice(legal.actions)


class FirstPolicy:
    """The first listed action (a pass where one is listed first): deterministic and quick."""

    name = "first"
    observes = False

    def act(self, view: Observation, legal: Legal) -> Action:
        return legal.actions[0]


def _sample_bot_class(name: str, cls: str):
    """The SDK bot class of a sample bot folder (its ``bot.py``)."""
    path = SAMPLES / name / "bot.py"
    on_path(SDK)
    on_path(ROOT)
    module_name = f"_arena_sample_{name}"
    module = sys.modules.get(module_name)
    if module is None:
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None  # a ``.py`` file always has both
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return getattr(module, cls)


def _greedy():
    from arena_sdk.greedy import GreedyBot

    from lab.sdkpolicy import BotPolicy
    return BotPolicy(GreedyBot())


def _cheap():
    from lab.sdkpolicy import BotPolicy
    return BotPolicy(_sample_bot_class("cheap", "CheapBot")())


def _search():
    module = _load_module(str(SAMPLES / "search" / "policy.py"))
    return module.SearchPolicy()


SHORT_NAMES = {"random": RandomPolicy, "first": FirstPolicy, "greedy": _greedy,
               "cheap": _cheap, "search": _search}
"""Policies by short name: the Python samples (``greedy``, the SDK's ``arena_sdk.greedy``, and
``cheap`` are SDK bots played through ``lab.sdkpolicy.BotPolicy``) and ``first``."""


class PolicyError(ValueError):
    """A policy name that cannot be loaded; the message says which and why."""


def _load_module(where: str):
    if where.endswith(".py") or "/" in where:
        path = Path(where).resolve()
        if not path.is_file():
            raise PolicyError(f"policy {where!r}: no such file {path}")
        name = "_arena_policy_" + "_".join(path.with_suffix("").parts[-3:])
        module = sys.modules.get(name)
        if module is None:
            if str(path.parent) not in sys.path:
                sys.path.insert(0, str(path.parent))
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise PolicyError(f"policy {where!r}: {path} is not a Python module (.py)")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except Exception as e:  # noqa: BLE001 - any failure of its import is reported
                del sys.modules[name]
                raise PolicyError(f"policy {where!r}: importing {path} failed: "
                                  f"{type(e).__name__}: {e}") from None
        return module
    try:
        return importlib.import_module(where)
    except ImportError as e:
        raise PolicyError(f"policy {where!r}: cannot import module {where!r}: {e}") from None


def policy_factory(name: str):
    """A function making a fresh policy for ``name``: a short name (``random``, ``greedy``,
    ``cheap``, ``first``, ``search``) or ``MODULE:CLASS`` (a module on the path, or a ``.py``
    file) whose class takes no arguments."""
    if name in SHORT_NAMES:
        return SHORT_NAMES[name]
    where, sep, attr = name.rpartition(":")
    if not sep or not where or not attr:
        raise PolicyError(f"policy {name!r}: expected a short name ({', '.join(SHORT_NAMES)}) "
                          "or MODULE:CLASS (e.g. mypkg.strategy:Mine or path/to/file.py:Mine)")
    module = _load_module(where)
    factory = getattr(module, attr, None)
    if factory is None:
        raise PolicyError(f"policy {name!r}: module {where!r} has no attribute {attr!r}")
    if not callable(factory):
        raise PolicyError(f"policy {name!r}: {attr!r} is not a class or function")
    return factory


def make_policy(name: str):
    """A fresh policy for ``name`` (see ``policy_factory``); it must have ``act``."""
    policy = policy_factory(name)()
    if not callable(getattr(policy, "act", None)):
        raise PolicyError(f"policy {name!r}: the object it makes has no act(view, legal) method")
    return policy


__all__ = [
    "SHORT_NAMES",
    "FirstPolicy",
    "Legal",
    "Policy",
    "PolicyError",
    "RandomPolicy",
    "legal_of",
    "listed_actions",
    "make_policy",
    "new_legal",
    "play_listing",
    "policy_factory",
]
