"""The lab's PettingZoo AEC environment: the API test for every variant, and a deal played
through it ends with zero-sum rewards equal to the level gains the engine settled."""

import numpy as np
import pytest
from pettingzoo.test import api_test

from lab.env import FEATURES, MAX_ACTIONS, ShengjiEnv
from referee.rules import variant_ids

VARIANTS = list(variant_ids())


@pytest.mark.parametrize("variant", VARIANTS)
def test_api(variant):
    api_test(ShengjiEnv(variant), num_cycles=60, verbose_progress=False)


@pytest.mark.parametrize("variant", ["single-deck", "two-deck-80"])
def test_a_deal_through_the_env(variant):
    e = ShengjiEnv(variant)
    e.reset(seed=7)
    rng = np.random.default_rng(0)
    steps = 0
    rewards = {}
    for agent in e.agent_iter(5000):
        obs, reward, term, trunc, _ = e.last()
        if term or trunc:
            rewards[agent] = reward
            e.step(None)
            continue
        mask = obs["action_mask"]
        assert obs["observation"].shape == (FEATURES,) and mask.shape == (MAX_ACTIONS,)
        assert mask.sum() == len(e.legal_actions(agent)) > 0
        # the hand in the features is the agent's own
        seat = int(agent[-1])
        assert obs["observation"][:54].sum() == e.state.hand_size(seat)
        e.step(int(rng.choice(np.flatnonzero(mask))))
        steps += 1
    assert steps > 40 and e.state.is_terminal
    assert len(rewards) == 4 and sum(rewards.values()) == 0
    levels, start = e.state.levels, e._start_levels
    gain0 = (levels[0] - start[0]) - (levels[1] - start[1])
    assert rewards["seat_0"] == rewards["seat_2"] == gain0 == -rewards["seat_1"]
