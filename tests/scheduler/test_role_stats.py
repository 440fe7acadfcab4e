"""The statistics by role (``scheduler.stats.roles``) on small hand-made matches whose answers
are worked out by hand, its intervals against their formulas' values, and each deal's trump
kind (``scheduler.service.roles.deal_trumps``) against the golden records and against the
public events of random games of every variant."""

from __future__ import annotations

import json
from collections import namedtuple

import pytest

from conftest import ROOT
from referee.match.matchfile import MatchFile
from referee.play.selfplay import play
from referee.rules.families import presets
from scheduler.service.roles import deal_trumps
from scheduler.stats.roles import (TRUMP_KINDS, Mean, PlayedMatch, Role, bot_roles, t95,
                                   wilson)

Deal = namedtuple("Deal", "dealer attackers attacker_total gain")


# -- intervals -------------------------------------------------------------------------------
def test_the_wilson_interval_of_a_few_deals_is_the_formulas():
    # 3 of 4, z = 1.96: centre (0.75 + z^2/8) / (1 + z^2/4) = 0.62753, half 0.32688
    low, high = wilson(3, 4)
    assert (low, high) == (pytest.approx(0.30064, abs=1e-5), pytest.approx(0.95441, abs=1e-5))
    # none of 5: from 0 to 2 * (z^2/10) / (1 + z^2/5) = 0.43448; all of 5: its mirror
    assert wilson(0, 5) == (0.0, pytest.approx(0.43448, abs=1e-5))
    assert wilson(5, 5) == (pytest.approx(1 - 0.43448, abs=1e-5), 1.0)
    assert wilson(0, 0) is None


def test_a_means_interval_is_students_t():
    # 1 and 3: mean 2, s = sqrt(2), s / sqrt(2) = 1, t(1) = 12.706205
    assert Mean.of(2, 4, 10) == Mean(2, 2.0, 2 - 12.706205, 2 + 12.706205)
    # 2, 4, 6: mean 4, s = 2, s / sqrt(3) = 1.154701, t(2) = 4.302653: +- 4.968276
    m = Mean.of(3, 12, 56)
    assert (m.mean, m.low, m.high) == (4.0, pytest.approx(-0.968276, abs=1e-6),
                                       pytest.approx(8.968276, abs=1e-6))
    assert Mean.of(1, 7, 49) == Mean(1, 7.0, None, None)
    assert Mean.of(0, 0, 0) == Mean(0, None, None, None)
    assert Mean.of(3, 0, 0) == Mean(3, 0.0, 0.0, 0.0)
    # the table's end and the expansion beyond it (published 97.5% quantiles)
    assert t95(30) == 2.042272
    for df, t in ((31, 2.039513), (40, 2.021075), (60, 2.000298), (120, 1.979930)):
        assert t95(df) == pytest.approx(t, abs=1e-6)


# -- the groups ------------------------------------------------------------------------------
#: bot A's matches: with itself as partner (two), with partner X (one), on both teams (one:
#: skipped) and one without it
MATCHES = [
    PlayedMatch(("A", "B", "A", "B"), (Deal(0, 1, 40, (1, 0)), Deal(2, 1, 120, (0, 2))),
                ("hearts", "no-trump")),
    PlayedMatch(("B", "A", "B", "A"), (Deal(0, 1, 80, (0, 1)), Deal(1, 0, 0, (0, 0))),
                ("hearts", None)),
    PlayedMatch(("A", "C", "X", "C"), (Deal(2, 1, 60, (1, 0)), Deal(1, 0, 130, (1, 0))),
                ("spades", "spades")),
    PlayedMatch(("A", "A", "B", "B"), (Deal(0, 1, 40, (1, 0)),), ("clubs",)),
    PlayedMatch(("B", "C", "B", "C"), (Deal(0, 1, 40, (1, 0)),), ("clubs",)),
]


def test_a_bots_groups_by_role_are_counted_by_hand():
    got = bot_roles("A", MATCHES)
    assert (got.matches, got.deals, got.skipped) == (3, 6, 1)
    # A's net levels per deal: +1 -2 | +1 0 | +1 +1
    table = {(g.role, g.key): (g.matches, g.deals, g.wins, g.even) for g in got.groups}
    assert table == {
        (Role.ALL, None): (3, 6, 4, 1),
        (Role.ATTACKERS, None): (2, 2, 2, 0),
        (Role.DEFENDERS, None): (3, 4, 2, 1),
        (Role.DEALER_PARTNER, None): (1, 1, 1, 0),    # where X dealt (A across A: neither)
        (Role.TRUMP, "spades"): (1, 2, 2, 0),
        (Role.TRUMP, "hearts"): (2, 2, 2, 0),
        (Role.TRUMP, "no-trump"): (1, 1, 0, 0),       # (one deal's trump unknown: in none)
        (Role.PARTNER, "A"): (2, 4, 2, 1),
        (Role.PARTNER, "X"): (1, 2, 2, 0),
        (Role.OPPONENT, "B"): (2, 4, 2, 1),
        (Role.OPPONENT, "C"): (1, 2, 2, 0),
    }
    assert [(g.role, g.key) for g in got.groups] == list(table)  # in the shown order
    every = got.group(Role.ALL)
    assert every.win_rate == pytest.approx(4 / 6)
    assert (every.win_low, every.win_high) == wilson(4, 6)
    # nets: sum 2, squares 8; variance (6 * 8 - 4) / 30, t(5) = 2.570582
    assert (every.net.mean, every.net.low, every.net.high) == (
        pytest.approx(1 / 3), pytest.approx(-0.937596, abs=1e-5),
        pytest.approx(1.604262, abs=1e-5))
    # points taken attacking: 80 and 130; conceded defending: 40 120 0 60 (s = 50, t(3))
    assert (every.taken.n, every.taken.mean) == (2, 105.0)
    assert every.conceded == Mean(4, 55.0, pytest.approx(55 - 3.182446 * 25),
                                  pytest.approx(55 + 3.182446 * 25))
    attack = got.group(Role.ATTACKERS)
    assert attack.net == Mean(2, 1.0, 1.0, 1.0) and attack.conceded.n == 0
    assert got.group(Role.DEALER) is None
    assert got.group(Role.DEFENDERS).conceded == every.conceded
    assert got.to_dict()["groups"][0]["role"] == "all"
    json.dumps(got.to_dict())


def test_the_dealer_and_the_dealers_partner_are_told_apart_only_with_another_partner():
    """With its own process across (every partnership of the arena today) a defending bot is
    both the dealer and its partner: it is counted as defending only; with another bot
    across, by the seat that dealt."""
    got = bot_roles("A", [
        PlayedMatch(("A", "C", "X", "C"), (Deal(0, 1, 20, (0, 1)), Deal(2, 1, 30, (2, 0))),
                    ("diamonds", "clubs")),
        PlayedMatch(("A", "B", "A", "B"), (Deal(0, 1, 40, (1, 0)),), ("clubs",))])
    table = {(g.role, g.key): (g.matches, g.deals, g.wins, g.net.mean) for g in got.groups}
    assert table[(Role.DEFENDERS, None)] == (2, 3, 2, pytest.approx(2 / 3))
    assert table[(Role.DEALER, None)] == (1, 1, 0, -1.0)          # A dealt, X across
    assert table[(Role.DEALER_PARTNER, None)] == (1, 1, 1, 2.0)   # X dealt, A across


def test_a_bot_not_in_a_match_counts_nothing_and_a_mismatched_match_is_refused():
    got = bot_roles("Z", MATCHES)
    assert (got.matches, got.deals, got.groups) == (0, 0, ())
    with pytest.raises(ValueError, match="2 deals but 1 trump kinds"):
        PlayedMatch(("A", "B", "A", "B"), MATCHES[0].deals, ("hearts",))


# -- each deal's trump kind ------------------------------------------------------------------
def test_the_trump_kind_of_each_golden_deal():
    want = {"single-deck": ("hearts", "hearts", "hearts"),
            "three-deck": ("clubs", "spades", "clubs"),
            "two-deck-80": ("diamonds", "no-trump", "diamonds"),
            "two-deck-fry": ("spades", "hearts", "no-trump")}
    for variant, kinds in want.items():
        data = json.loads((ROOT / "tests" / "golden" / f"{variant}.json").read_text())
        match = MatchFile.from_dict(data["record"], variant)
        assert deal_trumps(match) == kinds, variant
        assert len(kinds) == len(match.summary().deals)


#: the events that name a trump (a suit, or none for no-trump)
_NAMING = {"Declared", "KittyOpened", "KittyCardDrawn", "TrumpSet"}
_BY_LETTER = dict(zip("SHDC", TRUMP_KINDS)) | {"none": "no-trump"}


def _last_named(events: list[dict]) -> list[str | None]:
    """Each deal's trump kind as its public events last named it before its first lead."""
    out: list[str | None] = []
    named, led = None, False
    for e in events:
        if e["event"] == "DealStarted":
            named, led = None, False
        elif e["event"] in _NAMING and not led:
            named = _BY_LETTER[e["trump"]]
        elif e["event"] == "Played":
            led = True
        elif e["event"] == "DealEnded":
            out.append(named)
    return out


@pytest.mark.parametrize("variant", list(presets()))
def test_the_replayed_trump_kind_is_the_one_the_events_last_named(variant):
    """In every variant the trump is fixed before the first lead, and it is the one the public
    events named last (a declaration, overturn, kitty flip or draw; a drawn joker that only
    asks for another draw is named over)."""
    rules = presets()[variant]
    seen = set()
    for seed in range(40):
        _, record, _ = play(rules, f"roles:{seed}", max_deals=3, record=True)
        match = MatchFile.from_dict(record.to_dict(), f"{variant} {seed}")
        kinds = deal_trumps(match)
        assert list(kinds) == _last_named(record.events), seed
        assert None not in kinds and len(kinds) == len(match.summary().deals)
        seen.update(kinds)
    assert len(seen) >= 3, seen
