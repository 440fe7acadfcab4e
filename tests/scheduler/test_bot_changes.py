"""What changed in a bot's folder, in words (a season pinned to its version says so)."""

from referee.seats.manifest import changed_files


def test_changed_files_are_named_by_what_happened_to_them():
    before = {"bot.py": "a", "lib/x.py": "b", "old.txt": "c"}
    now = {"bot.py": "a2", "lib/x.py": "b", "cache.db": "d"}
    assert changed_files(before, now) == "bot.py (changed), cache.db (added), old.txt (removed)"
    many = {f"f{i}": "x" for i in range(10)}
    assert changed_files({}, many, most=3) == "f0 (added), f1 (added), f2 (added) and 7 more"
