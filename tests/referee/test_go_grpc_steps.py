"""The Go gRPC steps of docs/protocol.md section 12, run as written (the block marked
``<!-- steps: go-grpc -->``) in an empty folder outside the repository, in a shell with an
author's environment: the bot they make passes `arena bots check`, built in the sandbox,
offline, from a fresh bot cache; everything it builds from beyond Go's standard library is in
its folder (its vendor/), none of Debian's Go sources; and sample_bots/go-grpc is what the
steps make. The Debian packages they need are the ones the docs name and `make bots` installs
(tools/install-go-grpc.sh): missing, the test fails and says so."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from referee.seats import runtimes
from referee.seats.sandbox import sandbox_problem

pytestmark = pytest.mark.skipif(sandbox_problem() is not None,
                                reason=f"no sandbox here: {sandbox_problem()}")

DOC = ROOT / "docs" / "protocol.md"
SAMPLE = ROOT / "sample_bots" / "go-grpc"
INSTALL = ROOT / "tools" / "install-go-grpc.sh"
BOT = "my-go-bot"  # the folder the steps make


def _block(mark: str) -> str:
    """The shell block of docs/protocol.md marked ``<!-- steps: mark -->``."""
    found = re.findall(rf"<!-- steps: {re.escape(mark)} -->\n```sh\n(.*?)```", DOC.read_text(),
                       re.S)
    assert len(found) == 1, f"docs/protocol.md: {len(found)} blocks marked 'steps: {mark}'"
    return found[0]


def _packages(text: str, after: str) -> set[str]:
    """The Debian package names in ``text`` after ``after`` (continued lines joined)."""
    words = re.sub(r"\\\n", " ", text).split(after, 1)[1].splitlines()[0].split()
    return {w for w in words if re.fullmatch(r"[a-z0-9][a-z0-9+.-]+", w)}


def _missing(packages: set[str]) -> list[str]:
    status = {p: subprocess.run(["dpkg-query", "-W", "-f", "${Status}", p], text=True,
                                capture_output=True).stdout for p in packages}
    return sorted(p for p, s in status.items() if not s.endswith("ok installed"))


def test_the_go_grpc_steps_make_a_vendored_bot_that_passes_the_check(tmp_path):
    packages = _packages(_block("go-grpc packages"), "apt-get install")
    assert packages == _packages(INSTALL.read_text(), '"Go gRPC bots (the Go gRPC sample)"'), \
        "the docs' packages are not the ones tools/install-go-grpc.sh installs"
    missing = _missing(packages)
    if missing:
        pytest.fail(f"Debian's {', '.join(missing)} not installed: `make bots` installs them "
                    "(tools/install-go-grpc.sh)")
    if not runtimes.GO.installed():
        pytest.fail(f"{runtimes.GO.title} is not installed: `make bots` installs it")

    author = tmp_path / "author"  # outside the repository, empty
    (author / "home").mkdir(parents=True)
    shell = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
             "HOME": str(author / "home"), "LANG": "C.UTF-8", "ARENA": str(ROOT),
             "ARENA_BOT_CACHE": str(tmp_path / "cache")}  # a fresh cache: built here
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", _block("go-grpc")], cwd=author,
                          env=shell, capture_output=True, text=True, timeout=300)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert re.search(rf"^ok +{BOT}@1\.0\.0 .*no faults", done.stdout, re.M), said

    bot = author / BOT
    assert "\ngo 1.24.0\n" in (bot / "go.mod").read_text()
    # self-contained: regular files only, and the packages built are the bot's own, its
    # vendor/'s and Go's standard library (no GOPATH, no Debian's /usr/share/gocode)
    assert not [p for p in bot.rglob("*") if p.is_symlink()]
    go = str(runtimes.GO_COMMAND)
    listed = subprocess.run(
        [go, "list", "-mod=vendor", "-deps", "-f", "{{.Dir}}", "."], cwd=bot,
        capture_output=True, text=True, timeout=120,
        env={**shell, "GOPROXY": "off", "GOTOOLCHAIN": "local", "GOFLAGS": "",
             "GOPATH": str(tmp_path / "gopath")})
    assert listed.returncode == 0, listed.stderr
    goroot = subprocess.run([go, "env", "GOROOT"], capture_output=True, text=True,
                            env=shell).stdout.strip()
    dirs = [Path(d) for d in listed.stdout.split()]
    outside = [d for d in dirs if not (d.is_relative_to(bot) or d.is_relative_to(goroot))]
    assert not outside, outside
    assert bot / "vendor" / "google.golang.org" / "grpc" in dirs

    # the sample is what the steps make: the same generated code, go.mod and main.go
    for name in ("go.mod", "main.go", "vendor-debian.sh", "shengji_arena/v1/referee.pb.go",
                 "shengji_arena/v1/referee_grpc.pb.go"):
        assert (bot / name).read_bytes() == (SAMPLE / name).read_bytes(), \
            f"sample_bots/go-grpc/{name} is not what the steps make (docs/protocol.md section 12)"
