"""The season contract: ``SeasonConfig`` reads every configuration stored so far, writes the
same bytes back, and is what the store's season row hands out."""

import json
import sqlite3
from dataclasses import replace

import pytest

from conftest import ROOT
from referee.match.spec import TimeControl
from referee.seats.sandbox import SandboxPolicy
from scheduler.season import load_season
from scheduler.season_config import LadderConfig, SeasonConfig, SeasonFormat
from scheduler.store.rows import SeasonRow

# Configurations as the code before ``SeasonConfig`` stored them (``Season.config()``): a
# gauntlet with every table set, and an open ladder with a field added later set.
STORED_GAUNTLET = (
    '{"name": "b", "variant": "single-deck", "format": "gauntlet", "duplicate": false, '
    '"deal_sets": 3, "deals_per_set": 4, "seed": "7", "start_levels": ["5", "K"], '
    '"gauntlet": "greedy", "options": {}, "time_control": {"per_decision_ms": 2000, '
    '"bank_ms": 500}, "fault_policy": {"max_strikes": 5, "reconnect_window_ms": 5000, '
    '"connect_timeout_ms": 15000, "max_reconnects": 0}, "bots": ["greedy", "random", "r2"], '
    '"sandbox": {"cpu_seconds": 600, "memory_mb": 1024, "processes": 256, "open_files": 256, '
    '"file_size_mb": 64, "tmpfs_mb": 64, "cpu_cores": 1.5}}')
STORED_LADDER = (
    '{"ladder": {"queue_ahead": 4, "placement_pairs": 3, "active_versions": 1, '
    '"bots_per_author": 2, "open_entry": true}, "name": "c", "variant": "two-deck-fry", '
    '"format": "ladder", "duplicate": true, "deal_sets": 2, "deals_per_set": 4, "seed": "c", '
    '"start_levels": ["2", "2"], "gauntlet": null, "options": {}, "time_control": '
    '{"per_decision_ms": 2000, "bank_ms": 10000}, "fault_policy": {"max_strikes": 3, '
    '"reconnect_window_ms": 5000, "connect_timeout_ms": 15000}, "bots": []}')


def _previous_release() -> str:
    """The configuration of the store kept from a release before max_reconnects."""
    with sqlite3.connect(ROOT / "tests" / "fixtures" / "store-previous-release.db") as c:
        return c.execute("SELECT config_json FROM seasons").fetchone()[0]


@pytest.mark.parametrize("text", [STORED_GAUNTLET, STORED_LADDER, _previous_release()],
                         ids=["gauntlet", "ladder", "previous-release"])
def test_a_stored_configuration_reads_back_and_writes_the_same_bytes(text):
    config = SeasonRow(name=json.loads(text)["name"], config_json=text).config
    assert isinstance(config, SeasonConfig)
    assert json.dumps(config.to_json()) == text


def test_the_old_fields_read_as_typed_values():
    gauntlet = SeasonConfig.from_json(json.loads(STORED_GAUNTLET))
    assert gauntlet.format is SeasonFormat.GAUNTLET and gauntlet.gauntlet == "greedy"
    assert (gauntlet.duplicate, gauntlet.deal_sets, gauntlet.seed) == (False, 3, "7")
    assert gauntlet.start_levels == ("5", "K") and gauntlet.bots == ("greedy", "random", "r2")
    assert gauntlet.time_control == TimeControl(bank_ms=500, max_strikes=5, max_reconnects=0)
    assert gauntlet.sandbox == SandboxPolicy(memory_mb=1024, cpu_cores=1.5)
    assert gauntlet.ladder is None and not gauntlet.is_ladder
    assert gauntlet.planned_matches() == 2 * 3
    ladder = SeasonConfig.from_json(json.loads(STORED_LADDER))
    assert ladder.is_ladder and ladder.planned_matches() == 0
    assert ladder.ladder == LadderConfig(queue_ahead=4, bots_per_author=2, open_entry=True)
    old = SeasonConfig.from_json(json.loads(_previous_release()))
    assert old.time_control.max_reconnects == 10  # stored before the field: its default
    assert (old.name, old.variant, old.deal_sets, old.deals_per_set) == (
        "previous-release", "two-deck-fry", 3, 2)
    assert old.planned_matches() == 1 * 3 * 2


def test_a_season_file_gives_the_configuration_it_stores(tmp_path):
    season = load_season(ROOT / "seasons" / "demo.toml")
    config = season.config
    assert config.bots == tuple(b.name for b in season.bots)
    assert SeasonConfig.from_json(json.loads(json.dumps(config.to_json()))) == config
    path = tmp_path / "ladder.toml"
    path.write_text('name = "open"\nvariant = "two-deck-fry"\nformat = "ladder"\n'
                    'bots = "every ready version"\nqueue_ahead = 4\n', encoding="utf-8")
    ladder = load_season(path).config
    assert ladder.ladder == LadderConfig(queue_ahead=4, open_entry=True)
    assert "bots_per_author" not in ladder.to_json()["ladder"]  # (added later: its default)
    changed = replace(ladder, ladder=replace(ladder.ladder, rest_pairs_per_hour=2))
    assert changed.to_json()["ladder"]["rest_pairs_per_hour"] == 2


def test_a_partial_configuration_takes_the_defaults_and_the_rows_name():
    row = SeasonRow.of({"name": "lab a vs b", "config_json": json.dumps(
        {"bots": ["a", "b"], "variant": "two-deck-fry", "duplicate": True})})
    assert row.config == SeasonConfig("lab a vs b", "two-deck-fry", "lab a vs b",
                                      bots=("a", "b"))


@pytest.mark.parametrize("data, message", [
    ({"variant": "two-deck-fry", "format": "swiss"}, "field 'format' = 'swiss'"),
    ({"variant": "two-deck-fry", "deal_sets": 0}, "field 'deal_sets' = 0"),
    ({"variant": "two-deck-fry", "fault_policy": {"max_strikes": "3"}}, "max_strikes"),
    ({"variant": "two-deck-fry", "ladder": {"queue_ahead": 4}}, "field 'ladder'"),
    ({"variant": "two-deck-fry", "colour": "red"}, "unknown field(s) ['colour']"),
    ({}, "field 'variant' = None"),
])
def test_an_unusable_stored_configuration_names_the_season_and_the_field(data, message):
    row = SeasonRow(name="spring", config_json=json.dumps(data))
    with pytest.raises(ValueError, match="season spring: config") as e:
        row.config
    assert message in str(e.value)
