"""A PettingZoo AEC environment of one deal, for every variant (``ShengjiEnv(variant)``).

Agents ``seat_0`` .. ``seat_3`` act in the engine's turn order (chance is played inside, from the
episode's seed). An episode is one deal from levels 2/2 with seat 0 dealing (``options``:
``levels``, ``dealer``). Each agent's observation is a dict:

- ``observation``: float32 array of ``FEATURES`` numbers (below), from the seat's own view only
  (``observe``; the same values a bot is sent), seats relative to the observer (0 = itself);
- ``action_mask``: int8 array of ``MAX_ACTIONS``; ``1`` at index ``i`` when the ``i``-th listed
  action is legal now (only for the agent to act);
- ``actions``: float32 array ``(MAX_ACTIONS, 54)``: the card counts of each listed action.

The action is an index into the decision's listed actions, ``env.legal_actions(agent)`` (the
referee's hint: every legal action where there are at most 100 and the listing is complete,
else a sample; ``Pass`` has no cards). Features, in order: the hand's counts per card (54), the
cards each seat has played this deal (4 x 54), the current trick per seat (4 x 54), the level
(13, one-hot), the trump (5: S H D C no-trump; all 0 until fixed), the dealer (4, relative;
all 0 before one is known), the kitty holder (4), the hand sizes (4), the attackers' points
/ 100, the decision kind (``KINDS``, one-hot), the phase (``PHASES``, one-hot) and the team
levels (2: own team first, rank index / 12).

Rewards come at the deal's end: the agent's team's level gain minus the other team's (a zero
sum); every agent then terminates.
"""

from __future__ import annotations

import random

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from lab.match import seat_inputs
from lab.policy import Legal
from referee.play.chance import chance_action
from referee.rules.actions import DecisionKind
from referee.rules.engine import apply, new_game
from referee.rules.events import DealEnded
from referee.rules.observe import Observation
from referee.rules.state import CHANCE, State
from referee.rules.variants import rules_for

MAX_ACTIONS = 108  # the hint's 100, and up to 8 sampled
CARDS = 54
KINDS = [k for k in DecisionKind if k not in (DecisionKind.SHUFFLE,
                                              DecisionKind.DRAW_KITTY_CARD,
                                              DecisionKind.GAME_OVER)]
PHASES = ["dealing", "declare_round", "draw_kitty_card", "redeal_offers", "bury", "play",
          "game_over", "other"]
FEATURES = CARDS * 9 + 13 + 5 + 4 + 4 + 4 + 1 + len(KINDS) + len(PHASES) + 2


class ShengjiEnv(AECEnv):
    """One deal of ``variant`` as an AEC environment (see the module docstring)."""

    metadata = {"name": "shengji_v0", "render_modes": ["ansi"],  # noqa: RUF012 (the API's)
                "is_parallelizable": False}

    def __init__(self, variant: str = "two-deck-fry", render_mode: str | None = None) -> None:
        super().__init__()
        self.variant = variant
        self.rules = rules_for(variant)
        self.render_mode = render_mode
        self.possible_agents = [f"seat_{i}" for i in range(4)]
        self._obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, 400.0, (FEATURES,), np.float32),
            "action_mask": spaces.Box(0, 1, (MAX_ACTIONS,), np.int8),
            "actions": spaces.Box(0.0, 3.0, (MAX_ACTIONS, CARDS), np.float32),
        })
        self._act_space = spaces.Discrete(MAX_ACTIONS)
        self.state: State | None = None
        self._legal: tuple[Observation, Legal] | None = None

    def observation_space(self, agent):
        return self._obs_space

    def action_space(self, agent):
        return self._act_space

    # -- episode ------------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        options = options or {}
        self.seed_text = str(seed if seed is not None else random.randrange(1 << 30))
        self.state = new_game(self.rules, levels=list(options.get("levels", ("2", "2"))),
                              dealer=options.get("dealer", 0), max_deals=1)
        self.steps = 0
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict] = {a: {} for a in self.agents}
        self._start_levels = self.state.levels
        self._advance([])

    def _advance(self, events) -> None:
        """Play chance until a seat must act or the deal is over; settle the end."""
        s = self._now()
        events = list(events)
        while s.turn == CHANCE:
            s, ev = apply(s, chance_action(s, self.seed_text))
            events.extend(ev)
            self.steps += 1
        self.state = s
        self._legal = None
        for e in events:
            if type(e) is DealEnded:
                for a in self.agents:
                    team = int(a[-1]) % 2
                    gain = [e.levels[t] - self._start_levels[t] for t in (0, 1)]
                    self.rewards[a] = float(gain[team] - gain[1 - team])
                    self.infos[a] = {"attacker_total": e.attacker_total}
        if s.turn < 0:  # the deal (the game) is over
            for a in self.agents:
                self.terminations[a] = True
            self.agent_selection = self.agents[0]
        else:
            self.agent_selection = f"seat_{s.turn}"

    def legal_actions(self, agent: str):
        """The listed actions of ``agent``'s decision (empty when it is not to act)."""
        turn = self._now().turn
        if turn < 0 or agent != f"seat_{turn}":
            return ()
        return self._inputs()[1].actions

    def _inputs(self):
        if self._legal is None:
            s = self._now()
            self._legal = seat_inputs(s, f"{self.seed_text}:{self.steps}", 2000, 10000)
        return self._legal

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        actions = self.legal_actions(agent)
        if action is None or not 0 <= int(action) < len(actions):
            raise ValueError(f"action {action!r} of {agent}: expected an index into its "
                             f"{len(actions)} listed actions (see the action mask)")
        self._cumulative_rewards[agent] = 0.0
        for a in self.agents:
            self.rewards[a] = 0.0
        now = self._now()
        s, events = apply(now, actions[int(action)], now.turn)
        self.state = s
        self.steps += 1
        self._advance(events)
        self._accumulate_rewards()

    # -- observing ----------------------------------------------------------------------
    def observe(self, agent: str):
        seat = int(agent[-1])
        s = self._now()
        mask = np.zeros(MAX_ACTIONS, np.int8)
        acts = np.zeros((MAX_ACTIONS, CARDS), np.float32)
        if s.turn == seat:
            view, legal = self._inputs()
            for i, a in enumerate(legal.actions[:MAX_ACTIONS]):
                mask[i] = 1
                for c in getattr(a, "cards", ()) or ():
                    acts[i, c] += 1
        else:
            from referee.rules.observe import observe
            view = observe(s, seat)
        return {"observation": features(view), "action_mask": mask, "actions": acts}

    def render(self):
        s = self._now()
        return f"deal {s.deal_no} phase {s.phase} turn {s.turn} points {s.attacker_points}"

    def close(self):
        pass

    def _now(self) -> State:
        """The deal's state (``reset`` makes it)."""
        assert self.state is not None, "reset() the environment first"
        return self.state


def features(view) -> np.ndarray:
    """The ``observation`` array of a seat's view (see the module docstring)."""
    seat = view.seat
    out = np.zeros(FEATURES, np.float32)
    for c in view.hand:
        out[c] += 1
    base = CARDS
    for plays, _ in view.tricks:
        for s_, cards in plays:
            for c in cards:
                out[base + ((s_ - seat) % 4) * CARDS + c] += 1
    base += 4 * CARDS
    if view.trick_leader is not None:
        for s_, cards in view.trick:
            for c in cards:
                out[base + ((s_ - seat) % 4) * CARDS + c] += 1
    i = base + 4 * CARDS
    out[i + view.level] = 1
    i += 13
    if view.trump_fixed:
        out[i + (4 if view.trump is None else view.trump)] = 1
    i += 5
    if view.dealer is not None:
        out[i + (view.dealer - seat) % 4] = 1
    i += 4
    if view.kitty_holder is not None:
        out[i + (view.kitty_holder - seat) % 4] = 1
    i += 4
    for s_ in range(4):
        out[i + (s_ - seat) % 4] = view.hand_sizes[s_]
    i += 4
    out[i] = view.attacker_points / 100
    i += 1
    if view.decision in KINDS:
        out[i + KINDS.index(view.decision)] = 1
    i += len(KINDS)
    phase = str(view.phase)
    out[i + (PHASES.index(phase) if phase in PHASES else len(PHASES) - 1)] = 1
    i += len(PHASES)
    out[i] = view.levels[seat % 2] / 12
    out[i + 1] = view.levels[1 - seat % 2] / 12
    return out


def env(variant: str = "two-deck-fry", render_mode: str | None = None) -> ShengjiEnv:
    """The environment, as PettingZoo's ``env()`` convention makes it."""
    return ShengjiEnv(variant, render_mode)
