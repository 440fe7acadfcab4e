"""The README's blocks run as written (tools/readme_blocks.py), and that checker's extractor."""

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DEMO_GROUP

from tools.readme_blocks import check, extract, make_copy, run_blocks, strip_comment

ROOT = Path(__file__).resolve().parents[2]

SAMPLE = """\
# A project

```
make demo    # installs # and plays
make test
. .venv/bin/activate   # then `arena` is on the PATH
```

- **A list item**, with its block indented:

  ```
  echo "one # two"   # a comment
  ```

```toml
name = "demo"
```

```python
print("hello")
```

```console
$ echo hi
hi
```

````text
```
not a fence of its own
```
````
"""

FAILING = """\
```
make demo
```

```bash
echo first
false
echo never
```

```python
x = 1
raise ValueError("no")
```

```sh
echo ran after
```
"""


def test_blocks_found_with_their_lines_tags_and_kinds():
    found = [(b.line, b.info, b.kind) for b in extract(SAMPLE)]
    assert found == [(3, "", "setup"), (11, "", "shell"), (15, "toml", "none"),
                     (19, "python", "python"), (23, "console", "shell"),
                     (28, "text", "none")]


def test_commands_have_comments_stripped_and_indentation_removed():
    blocks = extract(SAMPLE)
    assert blocks[0].commands == ["make demo", "make test", ". .venv/bin/activate"]
    assert blocks[1].text == 'echo "one # two"   # a comment\n'
    assert blocks[1].commands == ['echo "one # two"']
    assert blocks[4].commands == ["echo hi"]
    assert strip_comment(r"echo a\ #b 'c # d' x#y # z") == r"echo a\ #b 'c # d' x#y"


def test_setup_block_is_the_first_with_a_setup_command():
    text = "```\necho before\n```\n\n```\nmake demo\n```\n\n```\nmake test\n```\n"
    assert [b.kind for b in extract(text)] == ["shell", "setup", "shell"]


@pytest.fixture
def fake_root(tmp_path):
    """A folder with the venv's two entry points the runner uses."""
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "activate").write_text("export ACTIVATED=yes\n")
    os.symlink(sys.executable, tmp_path / ".venv" / "bin" / "python")
    return tmp_path


def test_a_failing_block_is_reported_with_its_line(fake_root):
    out = io.StringIO()
    results = run_blocks(extract(FAILING), fake_root, out=out)
    shell, python, after = results
    assert shell.status != 0 and shell.failed_line == 7
    assert "first" in shell.output and "never" not in shell.output
    assert python.status != 0 and python.failed_line == 13
    assert after.status == 0 and "ran after" in after.output
    report = out.getvalue()
    assert "README.md:1 ```: setup, taken as done: make demo" in report
    assert "exit 1 at README.md:7" in report and "exit 1 at README.md:13" in report
    assert "  | ValueError: no" in report  # the output's tail


def test_shell_blocks_run_activated_in_the_root(fake_root):
    text = '```sh\ntest "$ACTIVATED" = yes\ntest "$PWD" = "' + str(fake_root) + '"\n```\n'
    [result] = run_blocks(extract(text), fake_root, out=io.StringIO())
    assert result.status == 0, result.output


def test_the_copy_holds_the_repository_files_and_links_the_venv(tmp_path):
    src, dest = tmp_path / "src", tmp_path / "dest"
    (src / ".venv" / "bin").mkdir(parents=True)
    (src / "records").mkdir()
    (src / "records" / "old.json").write_text("{}")
    (src / "tracked.txt").write_text("a")
    (src / "new.txt").write_text("b")
    (src / ".gitignore").write_text(".venv/\n/records/\n")
    subprocess.run(["git", "init", "-q", str(src)], check=True)
    subprocess.run(["git", "-C", str(src), "add", "tracked.txt", ".gitignore"], check=True)
    dest.mkdir()
    make_copy(src, dest)
    assert sorted(p.name for p in dest.iterdir()) == [".gitignore", ".venv", "new.txt",
                                                      "tracked.txt"]
    assert (dest / ".venv").is_symlink() and (dest / ".venv").resolve() == src / ".venv"


@pytest.mark.xdist_group(DEMO_GROUP)
def test_every_readme_block_exits_0(demo_season):
    """The real README, set-up taken as done, the default store starting as the demo's (its
    season, which the suite plays once, is resumed by the block that runs it, not played
    again: test_demo.py checks that playing)."""
    done, folder = demo_season
    assert done.returncode == 0, done.stderr[-3000:]
    before = {p for p in ("arena.db", "records") if (ROOT / p).exists()}
    out = io.StringIO()
    results = check(ROOT / "README.md", src=ROOT, store=folder / "demo.db", out=out)
    assert results and all(r.status == 0 for r in results), out.getvalue()
    assert {p for p in ("arena.db", "records") if (ROOT / p).exists()} == before
