"""The strategy lab: a policy is given exactly what a bot is sent, the lab's listing is the
referee's hint, the lab and a match through the referee agree, and a policy cannot reach other
seats' cards."""

import gc
import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from shengji_arena.v1 import referee_pb2 as pb
from test_hidden_information import _hidden_permuted

from lab.match import play_match, seat_inputs
from lab.policy import listed_actions, make_policy
from lab.sdkpolicy import KIND_OF_PB, TrickLog, observation_from_pb
from referee.match.matchfile import MatchFile
from referee.match.spec import DealSpec, MatchSpec
from referee.play.chance import chance_action
from referee.play.random_play import random_action
from referee.rules import observe, rules_for, variant_ids
from referee.rules.cards import Card
from referee.rules.engine import apply, new_game
from referee.rules.state import CHANCE, State
from referee.wire.hints import legal_hint
from referee.wire.protocol import (
    DECISION_TO_PB,
    action_from_pb,
    event_to_pb,
    observation_bytes,
)

VARIANTS = list(variant_ids())

HASH_POLICY = '''
import hashlib
import re


def _text(x):
    """repr with every Card (an int subclass) written as its number."""
    return re.sub(r"Card\\.parse\\('([^']*)'\\)", lambda m: str(_num(m.group(1))), repr(x))


def _num(text):
    from referee.rules.cards import Card
    return int(Card.parse(text))

class HashPolicy:
    """Picks a listed action by a hash of everything it is shown but the clock: any difference
    in what it is given changes its play."""

    def act(self, view, legal):
        text = _text(view) + repr(legal.kind) + repr(legal.actions) + repr(legal.complete)
        h = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
        return legal.actions[h % len(legal.actions)]
'''


def _text(x):
    """repr with every Card (an int subclass) written as its number (as HashPolicy reads)."""
    return re.sub(r"Card\.parse\('([^']*)'\)", lambda m: str(int(Card.parse(m.group(1)))),
                  repr(x))


def _games(variant, n, deals=2, seed="lab"):
    """States at every seat decision of ``n`` random games, with the events each seat saw."""
    rules = rules_for(variant)
    for g in range(n):
        s = new_game(rules, max_deals=deals)
        rng = random.Random(f"{seed}:{g}")
        logs = [TrickLog() for _ in range(4)]
        step = 0
        while not s.is_terminal:
            if s.turn == CHANCE:
                s, events = apply(s, chance_action(s, f"{seed}:{g}"))
            else:
                yield s, logs, f"{seed}:{g}:{step}"
                s, events = apply(s, random_action(s, rng), s.turn)
            for seat in range(4):
                logs[seat].feed([event_to_pb(e) for e in events if e.visible(seat)])
            step += 1


@pytest.mark.parametrize("variant", VARIANTS)
def test_listing_and_view_are_what_the_referee_sends(variant):
    """At every decision: the lab's listing is the hint's actions in its order, and the view
    rebuilt from the wire (observation message and events) equals ``observe``."""
    checked = 0
    for s, logs, seed in _games(variant, 3):
        hint = legal_hint(s, seed)
        actions, complete = listed_actions(s, seed)
        assert actions == tuple(action_from_pb(a) for a in hint.actions)
        assert complete == hint.complete
        seat = s.turn
        wire = pb.Observation.FromString(observation_bytes(s, seat))
        kind = KIND_OF_PB[DECISION_TO_PB[s.decision]]  # the request's kind, read back
        view, legal = seat_inputs(s, seed, 2000, 10000)
        rebuilt = observation_from_pb(wire, kind, logs[seat].tricks)
        assert rebuilt == view and _text(rebuilt) == _text(view)  # the same types too
        assert (legal.actions, legal.complete) == (actions, complete)
        checked += 1
    assert checked > 200


def _reachable(roots, limit=200_000):
    """Every object reachable from ``roots`` through references (a bounded walk)."""
    seen, todo = {}, list(roots)
    while todo and len(seen) < limit:
        o = todo.pop()
        if id(o) in seen or isinstance(o, type):
            continue
        seen[id(o)] = o
        todo.extend(gc.get_referents(o))
    return seen.values()


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_policy_cannot_reach_other_seats_cards(variant):
    """The observation invariance test applied to what a lab policy is given: with every card
    hidden from the seat shuffled among the hidden places, the view and the listing are the
    same; and no game state is reachable from them."""
    rng = random.Random(variant)
    checked = 0
    for s, _, seed in _games(variant, 4, seed="hidden"):
        if rng.random() > 0.15:
            continue
        given = seat_inputs(s, seed, 2000, 10000)
        for _ in range(2):
            permuted = _hidden_permuted(s, s.turn, rng)
            assert seat_inputs(permuted, seed, 2000, 10000) == given
        if checked % 10 == 0:
            assert not any(isinstance(o, State) for o in _reachable(given))
        checked += 1
    assert checked > 40


def test_the_permutation_changes_the_other_seats_inputs():
    """The test above would pass on an empty permutation: the seats whose cards moved see a
    change."""
    for s, _, seed in _games("two-deck-80", 1, seed="moved"):
        if s.phase == "play":
            break
    seat = s.turn
    other = (seat + 1) % 4
    permuted = _hidden_permuted(s, seat, random.Random(3))
    assert observe(permuted, other).hand != observe(s, other).hand


def _wrap(tmp_path: Path, spec: str, name: str) -> Path:
    out = tmp_path / name
    p = subprocess.run([sys.executable, "-m", "cli", "bots", "wrap", spec, "--out", str(out),
                        "--name", name], cwd=ROOT, capture_output=True, text=True, timeout=60,
                       check=False)
    assert p.returncode == 0, p.stderr
    return out / "bot.toml"


@pytest.mark.parametrize("variant", ["two-deck-80", "single-deck"])
def test_the_lab_and_the_referee_agree(tmp_path, variant):
    """The same policies and seeds, in the lab and through the referee (bot processes in their
    sandboxes): the same actions in every game and the same summary. Seats 0 and 2 play a
    policy wrapped as a bot; seats 1 and 3 the random sample bot, against the lab's random."""
    from referee.match.local import run_match
    from referee.seats.manifest import load_manifest
    policy_file = tmp_path / "hashpolicy.py"
    policy_file.write_text(HASH_POLICY)
    hashed = load_manifest(_wrap(tmp_path, f"{policy_file}:HashPolicy", "hashed"))
    rand = load_manifest(ROOT / "sample_bots" / "python" / "random" / "bot.toml")
    deals = [DealSpec(f"agree:{variant}:{j}", ("2", "2"), j) for j in range(2)]
    spec = MatchSpec(f"agree-{variant}", variant, deals=deals,
                     seat_names=["hashed", "random", "hashed", "random"])
    _, record, _ = run_match(spec, [hashed, rand, hashed, rand], tmp_path / "work")
    via_referee = MatchFile.from_dict(record)
    assert not record["faults"], record["faults"]
    lab = play_match(spec, [make_policy(f"{policy_file}:HashPolicy"), make_policy("random"),
                            make_policy(f"{policy_file}:HashPolicy"), make_policy("random")],
                     keep_actions=True)
    actions = [[(seat, text) for seat, text in g["actions"]] for g in record["games"]]
    assert lab.actions == actions
    assert lab.summary.to_dict() == via_referee.summary().to_dict()
    assert len(lab.summary.deals) == 2
    if variant == "two-deck-80":  # a wrapped policy is a bot like any other: it submits
        submitted = subprocess.run(
            [sys.executable, "-m", "cli", "bots", "submit", str(hashed.folder), "--db",
             f"sqlite:///{tmp_path}/registry.db"], cwd=ROOT, capture_output=True, text=True,
            timeout=120, check=False)
        assert submitted.returncode == 0, submitted.stdout + submitted.stderr
        assert submitted.stdout.startswith("hashed@1.0.0 "), submitted.stdout


def test_arena_lab_prints_a_seasons_standings(capsys):
    """``arena lab``: greedy against random, in two worker processes, rated as a season; the
    same seed gives the same standings with one worker."""
    from cli.main import main
    args = ["lab", "greedy", "random", "--variant", "single-deck", "--deals", "8",
            "--samples", "50", "--json"]
    assert main(args + ["--workers", "2"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert got["rated_units"] == 2 and got["deals"] == 16
    assert {b["name"] for b in got["bots"]} == {"greedy", "random"}
    for key in ("bots", "head_to_head", "deals"):
        assert got[key] == again[key]
    greedy = next(b for b in got["bots"] if b["name"] == "greedy")
    assert greedy["wins"] + greedy["draws"] + greedy["losses"] == 4


def test_a_policy_that_fails_is_faulted_like_a_bot():
    """An illegal answer and a crash are strikes with the referee's default action; the third
    strike forfeits the match for the team."""
    class Bad:
        def __init__(self):
            self.n = 0

        def act(self, view, legal):
            self.n += 1
            if self.n == 1:
                raise RuntimeError("boom")
            from referee.rules.actions import Play
            return Play((0, 0, 0, 0, 0))

    spec = MatchSpec("bad", "single-deck", deals=[DealSpec("bad:0", ("2", "2"), 0)],
                     seat_names=["bad", "random", "bad", "random"])
    m = play_match(spec, [Bad(), make_policy("random"), make_policy("random"),
                          make_policy("random")])
    assert [f["kind"] for f in m.faults] == ["garbage", "illegal", "illegal"]
    assert "boom" in m.faults[0]["reason"]
    assert m.summary.forfeit_team == 0 and m.summary.score == (0.0, 1.0)


def test_a_policy_that_reads_no_view_is_handed_none_and_plays_the_same():
    """``observes = False``: the lab hands the policy None for a view (and makes none); the same
    choices from the same listings give the same game as a policy handed every view."""
    from lab.policy import RandomPolicy
    from referee.rules.observe import Observation

    class Seen(RandomPolicy):
        observes = True

        def __init__(self):
            super().__init__()
            self.views = []

        def act(self, view, legal):
            self.views.append(view)
            return super().act(view, legal)

    class Blind(Seen):
        observes = False

    spec = MatchSpec("blind", "two-deck-80", deals=[DealSpec(f"blind:{j}", ("2", "2"), j)
                                                   for j in range(2)],
                     seat_names=["a", "b", "a", "b"])
    seen, blind = [Seen() for _ in range(4)], [Blind() for _ in range(4)]
    with_views = play_match(spec, seen, keep_actions=True, clock=False)
    without = play_match(spec, blind, keep_actions=True, clock=False)
    assert all(isinstance(v, Observation) and v.seat == seat
               for seat, p in enumerate(seen) for v in p.views)
    assert all(v is None for p in blind for v in p.views)
    assert sum(len(p.views) for p in blind) == without.decisions > 150
    assert without.actions == with_views.actions
    assert without.summary == with_views.summary
    assert RandomPolicy.observes is False  # the sample random policy is handed no view
