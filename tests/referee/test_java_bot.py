"""Java bots (``referee.seats.runtimes``): the Java sample (``sample_bots/java``) built from its
sources by its manifest's ``javac`` step in the build sandbox, then played sandboxed in every
variant, under the default policy and a 512 MiB seat, with and without a seat cgroup; and the
runtime table's part in a sandbox's command line and in refusing a bot whose runtime is not
installed."""

import dataclasses
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from test_builds import _modes

import referee.seats.launch as launch_module
from referee.match.local import run_match
from referee.match.matchfile import MatchFile
from referee.match.spec import MatchSpec
from referee.rules.variants import variant_ids
from referee.seats import runtimes
from referee.seats.build import BUILD_LOG, BuildFailed, build_bot, discard
from referee.seats.launch import check_startable
from referee.seats.manifest import Manifest, ManifestError, load_manifest
from referee.seats.sandbox import SandboxPolicy, SeatCgroup, sandbox_command, sandbox_problem

# its module fixture is built once: pytest-xdist (--dist loadgroup) keeps the file on one worker
pytestmark = [pytest.mark.skipif(sandbox_problem() is not None,
                                 reason=f"no sandbox here: {sandbox_problem()}"),
              pytest.mark.xdist_group("test_java_bot")]

SAMPLE = ROOT / "sample_bots" / "java"
PY = ROOT / "sample_bots" / "python"
ROOT_USER = os.geteuid() == 0
SESSION = re.compile(r"\[java-sample\] INFO seat \d of match \S+, session "
                     r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}, max heap "
                     r"(\d+) MiB")


@pytest.fixture(scope="module")
def java_bot(tmp_path_factory):
    """The Java sample built from source, sandboxed, into a fresh folder (nothing of an earlier
    build: its source copied as the registry packs it, without build/)."""
    where = tmp_path_factory.mktemp("java")
    source = where / "source"
    shutil.copytree(SAMPLE, source, ignore=shutil.ignore_patterns("build"))
    result = build_bot(load_manifest(source), source, where / "built")
    yield result
    discard(result.folder)


def _play(java, tmp_path: Path, variant: str, seat: int, policy: SandboxPolicy) -> tuple:
    """One deal of ``variant``: the Java bot at ``seat``, Python samples elsewhere; the record
    (checked: no fault, no strike, no forfeit, verified) and the Java seat's log."""
    others = iter([load_manifest(PY / "random"), load_manifest(PY / "greedy"),
                   load_manifest(PY / "random")])
    bots = [java if i == seat else next(others) for i in range(4)]
    spec = MatchSpec(match_id=f"java-{variant}", variant=variant, seed="java", max_deals=1)
    _, record, _ = run_match(spec, bots, tmp_path, sandbox=policy)
    log = (tmp_path / f"seat{seat}.log").read_text(errors="replace")
    assert record["faults"] == [] and record["result"]["forfeit"] is None, (record["faults"],
                                                                             log[-2000:])
    assert record["result"]["strikes"] == [0, 0, 0, 0]
    assert record["bots"][seat] == "java-sample@1.0.0" and record["sandbox"] == "bubblewrap"
    assert MatchFile.from_dict(record).verify() == []
    assert any(s == seat for s, _ in record["timings"])  # it decided
    return record, log


def test_the_java_sample_is_built_from_source_with_javac_in_the_build_sandbox(java_bot):
    assert java_bot.sandboxed
    assert (java_bot.folder / "build" / "Bot.class").is_file()
    assert (java_bot.folder / "build" / "ArenaStdio.class").is_file()
    assert not (java_bot.folder.parent / "source" / "build").exists()  # built in the copy only
    assert "$ javac -encoding UTF-8" in java_bot.log and "error" not in java_bot.log.lower()
    assert "Picked up JAVA_TOOL_OPTIONS" in java_bot.log  # the arena's flags reach javac too
    assert (java_bot.folder / BUILD_LOG).read_text() == java_bot.log
    for path, st in _modes(java_bot.folder):  # read-only for all, no set-id bits
        assert st.st_mode & 0o7222 == 0, (path, oct(st.st_mode))
    manifest = load_manifest(SAMPLE)
    assert manifest.runtime == "java" and manifest.protocol == "stdio"
    assert runtimes.runtime_of(manifest) is runtimes.JAVA


@pytest.mark.parametrize("variant", variant_ids())
def test_the_java_sample_plays_a_deal_of_every_variant(java_bot, tmp_path, variant):
    seat = variant_ids().index(variant) % 4
    _, log = _play(load_manifest(java_bot.folder), tmp_path, variant, seat, SandboxPolicy())
    # UUID.randomUUID (SecureRandom) and java.util.logging: both read the JDK's configuration
    # in /etc/java-17-openjdk; the JVM's banner went to stderr, the seat's log
    assert SESSION.search(log), log[-2000:]
    assert "Picked up JAVA_TOOL_OPTIONS: -XX:+DisplayVMOutputToStderr" in log
    assert re.search(r"\[java-sample\] INFO done: [1-9]\d* decisions", log), log[-2000:]


@pytest.mark.parametrize("memory_mb, cgroup", [(2048, False), (512, True), (512, False)],
                         ids=["default-no-cgroup", "512-cgroup", "512-no-cgroup"])
def test_the_java_bot_starts_under_the_default_policy_and_in_512_mib(
        java_bot, tmp_path, monkeypatch, memory_mb, cgroup):
    """With a seat cgroup (a root launcher) the JVM may reserve more address space than the
    seat's memory (its RLIMIT_AS is larger, the cgroup bounds what it uses) and gets half of
    it as heap; without one (a launcher that is not root), RLIMIT_AS is ``memory_mb`` and the
    arena's flags make it fit. (The default policy with a cgroup: every variant's test.)"""
    if cgroup and not ROOT_USER:
        pytest.skip("only a root launcher gives a seat a memory cgroup")
    if not cgroup:
        monkeypatch.setattr(launch_module.SeatCgroup, "make",
                            classmethod(lambda cls, name, policy: None))
    _, log = _play(load_manifest(java_bot.folder), tmp_path, "two-deck-80", 1,
                   SandboxPolicy(memory_mb=memory_mb))
    heap = runtimes.java_heap_mb(memory_mb, cgroup)
    assert f"-XX:MaxRAM={memory_mb}m -Xmx{heap}m" in log
    found = SESSION.search(log)
    # (the JVM's maximum is the heap less a survivor space)
    assert found and 0.9 * heap <= int(found.group(1)) <= heap, log[-2000:]


# -- the runtime table -------------------------------------------------------------------------
def test_a_runtime_is_named_by_the_manifest_or_inferred_from_the_command(tmp_path):
    for program, name in (("java", "java"), ("javac", "java"), ("python3", "python"),
                          ("/usr/bin/python3.11", "python"), ("node", "node"), ("npm", "node"),
                          ("go", "go"), ("cargo", "rust"), ("g++-12", "cpp"),
                          ("build/arena_bot", "native"), ("./target/release/bot", "native")):
        assert runtimes.infer(program).name == name, program
    assert runtimes.runtime_of(load_manifest(ROOT / "sample_bots" / "node")) is runtimes.NODE
    assert runtimes.runtime_of(load_manifest(PY / "random")) is runtimes.PYTHON
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "bot.toml").write_text('name = "b"\nversion = "1"\ncommand = ["./run.sh"]\n'
                                     'runtime = "java"\n')
    manifest = load_manifest(folder)
    assert runtimes.runtime_of(manifest) is runtimes.JAVA
    # a manifest rebuilt from a match spec carries its runtime; its file is not read again
    assert runtimes.runtime_of(Manifest.from_fields(manifest.to_fields())) is runtimes.JAVA
    assert runtimes.runtime_of(dataclasses.replace(manifest, runtime=None)) is runtimes.NATIVE
    (folder / "bot.toml").write_text('name = "b"\nversion = "1"\ncommand = ["./b"]\n'
                                     'runtime = "cobol"\n')
    with pytest.raises(ManifestError, match=r"bot.toml: field 'runtime' = 'cobol': expected "
                                            r"one of python, java, node, go, rust, cpp"):
        load_manifest(folder)


def test_only_a_java_sandbox_binds_the_jdks_configuration_and_reserves_address_space(tmp_path):
    kw = dict(env={"PATH": "/usr/bin"}, workdir=tmp_path, folders=[],
              policy=SandboxPolicy(memory_mb=512))

    def binds(cmd):
        return {cmd[i + 1] for i, a in enumerate(cmd) if a in ("--ro-bind", "--bind")}

    def address_space(cmd):
        return next(int(a.split("=")[1]) // 2**20 for a in cmd if a.startswith("--as="))

    seat = SeatCgroup("v1", [])  # (a seat's cgroup, as the command line names it)
    java = sandbox_command(["java", "Bot"], **kw, runtimes=[runtimes.JAVA], cgroup=seat)
    python = sandbox_command(["python3", "bot.py"], **kw, runtimes=[runtimes.PYTHON],
                             cgroup=seat)
    assert "/etc/java-17-openjdk" in binds(java) and "/etc/java-17-openjdk" not in binds(python)
    venv = sys.prefix
    assert venv in binds(python) and venv not in binds(java)  # the arena's Python: not Java's
    assert address_space(java) == runtimes.reserved_address_space_mb(512) == 2048
    assert address_space(python) == 512
    alone = sandbox_command(["java", "Bot"], **kw, runtimes=[runtimes.JAVA])  # no cgroup
    assert address_space(alone) == 512
    assert address_space(sandbox_command(["true"], **kw)) == 512  # as before the table


def test_a_bot_whose_runtime_is_missing_is_refused_naming_its_debian_package(
        tmp_path, monkeypatch):
    monkeypatch.setitem(runtimes.RUNTIMES, "java",
                        dataclasses.replace(runtimes.JAVA, probe=(str(tmp_path / "no-jdk"),)))
    said = (r"its runtime 'java' \(Java 17, Debian's OpenJDK\) is not installed on this "
            r"machine: install Debian's openjdk-17-jdk-headless \(apt-get install "
            r"openjdk-17-jdk-headless\)")
    manifest = load_manifest(SAMPLE)
    with pytest.raises(ManifestError, match=re.escape(str(manifest.path)) + ": " + said):
        check_startable(manifest, sandboxed=True)
    with pytest.raises(BuildFailed, match=r"java-sample@1.0.0: build `javac .*` cannot run: "
                                          + said):
        build_bot(manifest, SAMPLE, tmp_path / "built")
    assert not (tmp_path / "built").exists()
