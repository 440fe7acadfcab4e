"""What the registry's test files share: an empty store at this code's schema, made once per
module and copied for each test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sqlalchemy import func, select

from scheduler.store import Store, bot_versions


@pytest.fixture(scope="module")
def migrated(tmp_path_factory) -> Path:
    """An empty store at this code's schema, made once: each test starts from a copy."""
    path = tmp_path_factory.mktemp("store") / "arena.db"
    Store(f"sqlite:///{path}").engine.dispose()
    return path


@pytest.fixture(autouse=True)
def fresh_store(tmp_path, migrated) -> None:
    """The test's own copy of the empty store, at ``tmp_path / "arena.db"``."""
    shutil.copyfile(migrated, tmp_path / "arena.db")


def sqlite_store(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path / 'arena.db'}")


def versions_stored(store: Store) -> int:
    with store.engine.connect() as c:
        return c.execute(select(func.count()).select_from(bot_versions)).scalar_one()
