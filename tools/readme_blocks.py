"""Run the README's fenced blocks as written, in a scratch copy of the repository.

``python -m tools.readme_blocks [--setup] [--keep] [README]`` (``make readme``) finds every
``` fence of the README (indented ones too) and decides by its info string, the first word
after the backticks:

- none, ``sh``, ``bash``, ``shell``: a shell block. Every line is a command; it runs as one
  script with ``bash -e`` after ``. .venv/bin/activate``. A ``console`` block is a shell block
  whose commands are the lines starting with ``$ `` (the rest is output).
- ``python`` or ``py``: run with the venv's Python.
- anything else (``toml``, ``text``, ``json``, ``output``, ``proto``, ...): shown, never run.
  A block that is not a command must carry such a tag.

The setup block is the first shell block with a setup command (``make demo``, ``make test``:
the README's first block, with the venv's activation). With ``--setup`` it runs too, first,
in a copy with nothing built, as in a fresh clone. Without it, set-up is taken as done: the
copy links the source tree's ``.venv`` and copies ``sample_bots/node/node_modules`` and
``sample_bots/cpp/build``; when a block names the demo's store (``records/demo.db``), the
demo's season (``arena demo``, what ``make demo`` runs once installed) is played in the copy
first.

The copy holds the repository's files (``git ls-files``: tracked and untracked, not ignored),
so the working tree gets no ``arena.db`` or ``records/``; every block runs with the copy's
root as its working directory and the copy's code first on ``PYTHONPATH``, without the
caller's ``ARENA_*`` variables. Each block prints its commands, exit status and time, and on
failure the README line of the failing command and the output's tail. Exit status 1 when a
block fails.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHELL_TAGS = {"", "sh", "bash", "shell"}
CONSOLE_TAGS = {"console"}
PYTHON_TAGS = {"python", "py"}
SETUP_COMMANDS = ("make demo", "make test")
LINKED = (".venv",)
COPIED = ("sample_bots/node/node_modules", "sample_bots/cpp/build")
DEMO_STORE = "records/demo.db"
TAIL = 40
SETUP_TIMEOUT = 3600
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<info>[^`]*)$")


@dataclass
class Block:
    """One fenced block: the README line of its opening fence, its info string's first word,
    its text as written (fence indentation removed) and its kind."""
    line: int
    info: str
    text: str
    kind: str
    """``setup``, ``shell``, ``python`` or ``none`` (not run)."""

    @property
    def commands(self) -> list[str]:
        """The block's commands: comments and blank lines dropped (``console``: the ``$ ``
        lines, prompt removed)."""
        lines = self.text.splitlines()
        if self.info in CONSOLE_TAGS:
            lines = [ln[2:] for ln in lines if ln.startswith("$ ")]
        return [c for c in (strip_comment(ln).strip() for ln in lines) if c]

    def script(self) -> str:
        """What runs: the text as written, or a console block's commands one per line, each
        on the README line it came from."""
        if self.info not in CONSOLE_TAGS:
            return self.text
        return "\n".join(ln[2:] if ln.startswith("$ ") else "" for ln in self.text.splitlines())


@dataclass
class Result:
    """A block's outcome: exit status, seconds, output, and the README line that failed."""
    block: Block
    status: int
    seconds: float
    output: str
    failed_line: int | None = None


def strip_comment(line: str) -> str:
    """``line`` without its ``#`` comment: a ``#`` that starts a word, outside quotes, as the
    shell reads it."""
    quote, escaped, word_start = None, False, True
    for i, ch in enumerate(line):
        if escaped:
            escaped = word_start = False
        elif ch == "\\" and quote != "'":
            escaped, word_start = True, False
        elif quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote, word_start = ch, False
        elif ch in " \t":
            word_start = True
        elif ch == "#" and word_start:
            return line[:i].rstrip()
        else:
            word_start = False
    return line


def _kind(info: str) -> str:
    if info in SHELL_TAGS or info in CONSOLE_TAGS:
        return "shell"
    return "python" if info in PYTHON_TAGS else "none"


def extract(text: str) -> list[Block]:
    """The fenced blocks of a Markdown ``text``, in order; the first shell block with a setup
    command (``make demo``, ``make test``) is ``setup``.
    A fence closes at a line of at least as many backticks; an unclosed one runs to the end."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, indent, width = i, len(m["indent"]), len(m["fence"])
        info = m["info"].strip().split()[0].lower() if m["info"].strip() else ""
        body: list[str] = []
        i += 1
        while i < len(lines):
            close = _FENCE.match(lines[i])
            if close and len(close["fence"]) >= width and not close["info"].strip():
                break
            ln = lines[i]
            cut = len(ln) - len(ln.lstrip(" \t"))
            body.append(ln[min(cut, indent):])
            i += 1
        i += 1
        blocks.append(Block(start + 1, info, "\n".join(body) + "\n", _kind(info)))
    for b in blocks:
        if b.kind == "shell" and any(c in SETUP_COMMANDS for c in b.commands):
            b.kind = "setup"
            break
    return blocks


def _repo_files(src: Path) -> list[Path] | None:
    try:
        out = subprocess.run(["git", "-C", str(src), "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [Path(p) for p in out.decode().split("\0") if p]


def make_copy(src: Path, dest: Path, *, built: bool = True) -> None:
    """The repository's files from ``src`` into ``dest`` (as a clone has them, with the
    working tree's edits); with ``built``, what set-up built in ``src`` too: a symlink to its
    ``.venv``, and copies of the sample bots' builds (a sandboxed bot sees only its own
    folder, so a link out of it would not resolve)."""
    files = _repo_files(src)
    if files is None:
        skip = shutil.ignore_patterns(".git", ".venv", "node_modules", "build", "records",
                                      "arena.db*", "__pycache__", "*.egg-info")
        shutil.copytree(src, dest, symlinks=True, ignore=skip, dirs_exist_ok=True)
    else:
        for rel in files:
            s = src / rel
            if not (s.exists() or s.is_symlink()) or s.is_dir():
                continue
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(s, dest / rel, follow_symlinks=False)
    if not built:
        return
    for part in LINKED + COPIED:
        if (src / part).exists() and not (dest / part).exists():
            (dest / part).parent.mkdir(parents=True, exist_ok=True)
            if part in LINKED:
                (dest / part).symlink_to((src / part).resolve(), target_is_directory=True)
            else:
                shutil.copytree(src / part, dest / part, symlinks=True)


def environment(root: Path) -> dict[str, str]:
    """The blocks' environment: the caller's, without ``ARENA_*`` or a virtualenv of its
    own, with ``root``'s code first on ``PYTHONPATH``."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ARENA_") and k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(root / "protos")])
    return env


def run_block(block: Block, root: Path, scratch: Path, *, timeout: float = 600) -> Result:
    """Run one block in ``root``; ``scratch`` holds its script."""
    script = scratch / f"block-{block.line}"
    marker = scratch / f"block-{block.line}.line"
    if block.kind == "python":
        script.write_text(block.script())
        cmd = [str(root / ".venv" / "bin" / "python"), str(script)]
    else:
        # one line of prelude, so a script line k is README line block.line + k - 1; the
        # setup block makes the venv and activates it itself
        activate = "" if block.kind == "setup" else ". .venv/bin/activate; "
        script.write_text(f"{activate}trap 'echo $LINENO > \"{marker}\"' ERR\n"
                          + block.script())
        cmd = ["bash", "-e", str(script)]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=root, env=environment(root), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
        status, output = p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        status = 124
        output = (e.stdout or b"").decode(errors="replace") + f"\n(timed out after {timeout}s)"
    seconds = time.monotonic() - t0
    line = None
    if status != 0:
        if block.kind == "python":
            hits = re.findall(rf'File "{re.escape(str(script))}", line (\d+)', output)
            line = block.line + int(hits[-1]) if hits else None
        elif marker.exists():
            k = int(marker.read_text().split()[0])
            line = block.line + k - 1 if k > 1 else None
    return Result(block, status, seconds, output, line)


def run_blocks(blocks: list[Block], root: Path, *, setup: bool = False, readme: str = "README.md",
               timeout: float = 600, out=sys.stdout) -> list[Result]:
    """Run ``blocks`` in order in ``root`` (the setup block only with ``setup``), printing
    each one's commands, status and time; the results of the blocks that ran."""
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="readme-scripts-") as tmp:
        for b in blocks:
            head = f"{readme}:{b.line} ```{b.info}"
            if b.kind == "none":
                print(f"{head}: not run", file=out)
                continue
            if b.kind == "setup" and not setup:
                print(f"{head}: setup, taken as done: {'; '.join(b.commands)}", file=out)
                continue
            print(head, file=out)
            for c in (b.commands if b.kind != "python" else b.text.splitlines()[:3] + ["..."]):
                print(f"  $ {c}" if b.kind != "python" else f"  >>> {c}", file=out)
            out.flush()
            r = run_block(b, root, Path(tmp),
                          timeout=max(timeout, SETUP_TIMEOUT) if b.kind == "setup" else timeout)
            results.append(r)
            where = f" at {readme}:{r.failed_line}" if r.failed_line else ""
            print(f"  -> exit {r.status}{where}, {r.seconds:.1f}s", file=out)
            if r.status != 0:
                for ln in r.output.rstrip().splitlines()[-TAIL:]:
                    print(f"  | {ln}", file=out)
            out.flush()
    return results


def demo_store(root: Path, timeout: float = 600, out=sys.stdout) -> Result:
    """The demo's season played in ``root``, as ``make demo`` plays it once installed."""
    demo = Block(0, "sh", "arena demo\n", "shell")
    print("(the demo's season, for the blocks that read its store)\n  $ arena demo", file=out)
    out.flush()
    with tempfile.TemporaryDirectory(prefix="readme-scripts-") as tmp:
        r = run_block(demo, root, Path(tmp), timeout=timeout)
    print(f"  -> exit {r.status}, {r.seconds:.1f}s", file=out)
    if r.status != 0:
        for ln in r.output.rstrip().splitlines()[-TAIL:]:
            print(f"  | {ln}", file=out)
    return r


def check(readme: Path = ROOT / "README.md", *, src: Path = ROOT, setup: bool = False,
          keep: bool = False, timeout: float = 600, store: Path | None = None,
          out=sys.stdout) -> list[Result]:
    """Copy ``src``, run ``readme``'s blocks in the copy; the results (the demo's season
    first, when it was played). ``store``: a SQLite store the copy starts with as its default
    store (``arena.db``), e.g. one where the demo's season was played already: a block that
    runs that season then resumes it, finds nothing left to play and prints its standings."""
    blocks = extract(readme.read_text())
    copy = Path(tempfile.mkdtemp(prefix="readme-copy-"))
    print(f"copy of {src} at {copy}", file=out)
    try:
        make_copy(src, copy, built=not setup)
        if store is not None:  # (with the write-ahead log of a store not checkpointed yet)
            for part in store.parent.glob(store.name + "*"):
                shutil.copy2(part, copy / ("arena.db" + part.name[len(store.name):]))
            print(f"  the default store starts as {store}", file=out)
        results: list[Result] = []
        if not setup and not (copy / ".venv" / "bin" / "activate").exists():
            raise SystemExit(f"{src}: no .venv: run `make demo` first, or check with --setup")
        if not setup and any(DEMO_STORE in b.text for b in blocks
                             if b.kind in ("shell", "python")):
            results.append(demo_store(copy, timeout, out))
            if results[-1].status != 0:
                return results
        results += run_blocks(blocks, copy, setup=setup, readme=readme.name, timeout=timeout,
                              out=out)
        return results
    finally:
        if keep:
            print(f"kept {copy}", file=out)
        else:
            shutil.rmtree(copy, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="readme_blocks", description=__doc__.splitlines()[0])
    p.add_argument("readme", nargs="?", default=str(ROOT / "README.md"))
    p.add_argument("--setup", action="store_true",
                   help="run the setup commands (make demo, make test) too, in a bare copy")
    p.add_argument("--keep", action="store_true", help="keep the scratch copy")
    p.add_argument("--timeout", type=float, default=600, help="seconds per block")
    args = p.parse_args(argv)
    readme = Path(args.readme).resolve()
    results = check(readme, src=readme.parent, setup=args.setup, keep=args.keep,
                    timeout=args.timeout)
    bad = [r for r in results if r.status != 0]
    total = sum(r.seconds for r in results)
    print(f"{len(results) - len(bad)} of {len(results)} blocks exit 0 ({total:.1f}s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
