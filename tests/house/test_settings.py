"""The settings table (``house.settings``): typed reads at call time, and ``arena settings``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from house import settings


def test_a_setting_is_read_when_asked_typed_with_its_default(monkeypatch):
    monkeypatch.delenv("ARENA_SCRIMMAGE_DEALS", raising=False)
    assert settings.SCRIMMAGE_DEALS.value() == 2
    assert settings.SCRIMMAGE_DEALS.text() is None
    monkeypatch.setenv("ARENA_SCRIMMAGE_DEALS", "")
    assert settings.SCRIMMAGE_DEALS.value() == 2
    monkeypatch.setenv("ARENA_SCRIMMAGE_DEALS", " 4 ")
    assert settings.setting("ARENA_SCRIMMAGE_DEALS") == 4
    assert settings.SCRIMMAGE_DEALS.text() == " 4 "
    monkeypatch.setenv("ARENA_WORKER_EVENTS", "1")
    assert settings.WORKER_EVENTS.value() is True
    monkeypatch.setenv("ARENA_BOT_CACHE", "/var/cache/arena/bots")
    assert settings.BOT_CACHE.value() == Path("/var/cache/arena/bots")


def test_a_value_not_of_its_type_and_an_unknown_name_are_refused(monkeypatch):
    monkeypatch.setenv("ARENA_LEASE_S", "soon")
    with pytest.raises(ValueError, match="ARENA_LEASE_S='soon': expected float"):
        settings.LEASE_S.value()
    with pytest.raises(KeyError, match="no setting 'ARENA_LEASE'; known: ARENA_AB, ARENA_AB_ALPHA"):
        settings.setting("ARENA_LEASE")


def test_every_setting_is_declared_once_with_help():
    assert all(name == s.name and name.startswith("ARENA_") and s.help
               for name, s in settings.TABLE.items())
    with pytest.raises(ValueError, match="declared twice"):
        settings._add("ARENA_DB", str, None, "again")


def test_the_settings_table_imports_nothing_heavy():
    code = ("import sys, house.settings; "
            "print(sorted(m for m in ('pydantic', 'sqlalchemy', 'celery', 'referee') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "[]"


def test_arena_settings_prints_the_table(capsys):
    from cli.main import main
    assert main(["settings"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:4] == ["name", "type", "set", "by"]
    assert len(lines) == 1 + len(settings.TABLE)
    assert any(line.split()[:4] == ["ARENA_BUILD_TIMEOUT_S", "float", "operator", "600.0"]
               for line in lines)
    assert main(["settings", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["name"] for r in rows} == set(settings.TABLE)
    assert {"name": "ARENA_DB", "type": "str", "default": "sqlite:///arena.db",
            "scope": "operator", "help": settings.DB.help} in rows
