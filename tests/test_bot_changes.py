"""A bot changed in the middle of its season is refused, and the error names the files."""

import shutil

from conftest import ROOT
from league_helpers import arena, season_file

from referee.seats.manifest import changed_files

PY = ROOT / "sample_bots" / "python"


def test_changed_files_are_named_by_what_happened_to_them():
    before = {"bot.py": "a", "lib/x.py": "b", "old.txt": "c"}
    now = {"bot.py": "a2", "lib/x.py": "b", "cache.db": "d"}
    assert changed_files(before, now) == "bot.py (changed), cache.db (added), old.txt (removed)"
    many = {f"f{i}": "x" for i in range(10)}
    assert changed_files({}, many, most=3) == "f0 (added), f1 (added), f2 (added) and 7 more"


def test_a_bot_changed_mid_season_is_refused_naming_its_changed_files(tmp_path):
    mine = tmp_path / "mine"
    shutil.copytree(PY / "random", mine, ignore=shutil.ignore_patterns("__pycache__"))
    mine.chmod(0o755)
    (mine / "bot.toml").write_text((mine / "bot.toml").read_text().replace(
        'pythonpath = [".."]', f'pythonpath = ["{PY}"]').replace('name = "random"',
                                                                  'name = "mine"'))
    path = season_file(tmp_path, "changing", [str(PY / "random"), str(mine)], deal_sets=1,
                       deals_per_set=1)
    db = f"sqlite:///{tmp_path}/changing.db"
    first = arena("season", "run", str(path), "--db", db, "--no-progress", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    (mine / "bot.py").write_text((mine / "bot.py").read_text() + "\n# tuned\n")
    (mine / "stats.json").write_text("{}")
    again = arena("season", "run", str(path), "--db", db, "--no-progress", cwd=tmp_path)
    assert again.returncode == 2
    assert (f"field bots[1].manifest: bot 'mine' changed since season 'changing' started "
            f"(files bot.py (changed), stats.json (added), in {mine})") in again.stderr, \
        again.stderr
