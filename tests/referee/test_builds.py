"""Bots built from source (``referee.seats.build``): real builds in the sandbox, the Node.js and
C++ samples built from their own folders and played, and builds that fail, overrun, reach for
the network or write outside their folder."""

import json
import os
import shutil
import socket
import stat
import textwrap
import time
from pathlib import Path

import pytest
from conftest import ROOT

from referee.match.local import run_match
from referee.match.spec import MatchSpec, SeatBot
from referee.seats import build as build_module
from referee.seats.build import (BUILD_LOG, BuildFailed, build_bot, build_timeout, discard)
from referee.seats.manifest import Manifest, ManifestError, build_steps, load_manifest
from referee.seats.sandbox import UID_BASE, SandboxPolicy, sandbox_command, sandbox_problem

# its module fixtures are built once: pytest-xdist (--dist loadgroup) keeps the file on one worker
pytestmark = [pytest.mark.skipif(sandbox_problem() is not None,
                                 reason=f"no sandbox here: {sandbox_problem()}"),
              pytest.mark.xdist_group("test_builds")]

SAMPLES = ROOT / "sample_bots"
PY = SAMPLES / "python"
ROOT_USER = os.geteuid() == 0


def _bot(tmp_path: Path, build, files: dict[str, str] | None = None, name: str = "b") -> Manifest:
    """A bot folder of its own holding ``files`` and a manifest whose build is ``build``."""
    folder = tmp_path / f"src-{name}"
    folder.mkdir()
    for rel, text in (files or {}).items():
        (folder / rel).write_text(text)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "0.1"\ncommand = ["true"]\nbuild = {json.dumps(build)}\n')
    return load_manifest(folder)


def _modes(folder: Path):
    for p in [folder, *folder.rglob("*")]:
        st = os.lstat(p)
        if not stat.S_ISLNK(st.st_mode):
            yield p, st


# -- the samples, built once for the module --------------------------------------------------
@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The Node.js and C++ samples built from source, sandboxed: {name: BuildResult}."""
    out = {}
    where = tmp_path_factory.mktemp("built")
    for name in ("node", "cpp"):  # as the registry packs them: without what a build makes
        source = where / f"{name}-source"
        shutil.copytree(SAMPLES / name, source,
                        ignore=shutil.ignore_patterns("node_modules", "build", "__pycache__"))
        manifest = load_manifest(source)
        out[name] = build_bot(manifest, manifest.folder, where / name)
    yield out
    for result in out.values():
        discard(result.folder)


def test_the_node_and_cpp_bots_built_from_source_play_a_match(built, tmp_path):
    node, cpp = built["node"], built["cpp"]
    assert node.sandboxed and cpp.sandboxed
    assert (node.folder / "node_modules" / "@grpc" / "grpc-js").is_dir()
    assert os.access(cpp.folder / "build" / "arena_bot", os.X_OK)
    for name in ("node", "cpp"):  # built in the copy only
        source = node.folder.parent / f"{name}-source"
        assert not (source / "node_modules").exists() and not (source / "build").exists()
    for result in (node, cpp):
        assert (result.folder / BUILD_LOG).read_text() == result.log
        for path, st in _modes(result.folder):  # read-only for all, no set-id bits
            assert st.st_mode & 0o7222 == 0, (path, oct(st.st_mode))
            assert not ROOT_USER or st.st_uid == 0, path
    assert "added 33 packages" in node.log
    assert "$ make -j4" in cpp.log and "arena_bot" in cpp.log
    bots = [load_manifest(node.folder), load_manifest(PY / "random"),
            load_manifest(cpp.folder), load_manifest(PY / "greedy")]
    spec = MatchSpec(match_id="built", variant="two-deck-fry", seed="b", max_deals=1)
    result, record, runner = run_match(spec, bots, tmp_path)
    logs = {i: (tmp_path / f"seat{i}.log").read_text(errors="replace")[-500:] for i in range(4)}
    assert result["forfeit"] is None and record["faults"] == [], (record["faults"], logs)
    assert record["bots"][0] == "node-sample@1.0.0"
    assert record["bots"][2] == "cpp-sample@1.0.0"
    assert result["sandbox"] == "bubblewrap"


def test_a_build_gets_the_referees_protocol_file_read_only_and_the_samples_carry_none(tmp_path):
    proto = (ROOT / "protos" / "shengji_arena" / "v1" / "referee.proto").read_bytes()
    step = ('cp "$ARENA_PROTO_DIR/shengji_arena/v1/referee.proto" got.proto && '
            '{ touch "$ARENA_PROTO_DIR/x" 2>/dev/null && echo wrote || echo refused; } > try.txt')
    result = build_bot(_bot(tmp_path, ["sh", "-c", step]), tmp_path / "src-b", tmp_path / "out")
    assert (result.folder / "got.proto").read_bytes() == proto
    assert (result.folder / "try.txt").read_text().strip() == "refused"
    assert not (ROOT / "protos" / "x").exists()
    for name in ("node", "cpp"):  # built against the referee's: no copy to drift
        assert not list((SAMPLES / name).rglob("referee.proto")), f"{name} carries a copy"
    lock = json.loads((SAMPLES / "node" / "package-lock.json").read_text())["packages"]
    assert all(v.get("resolved") for k, v in lock.items() if k)  # tarballs only in the cache
    assert load_manifest(SAMPLES / "node").build and load_manifest(SAMPLES / "cpp").build


# -- what a build may do ---------------------------------------------------------------------
PROBE = textwrap.dedent("""\
    import json, os, sys
    out = {"uid": os.getuid(), "cwd": os.getcwd(), "wrote": {}, "sees": {}}
    targets, seen = json.loads(sys.argv[1])
    for target in targets:
        try:
            with open(target, "w") as f:
                f.write("x")
            out["wrote"][target] = True
        except OSError as e:
            out["wrote"][target] = e.strerror
    for path in seen:
        out["sees"][path] = os.path.exists(path)
    with open("report.json", "w") as f:
        json.dump(out, f)
    """)


def test_a_build_writes_its_own_folder_and_nothing_else(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    outside.chmod(0o777)
    host_tmp = Path("/tmp") / f"arena-build-test-{os.getpid()}"
    host_tmp.write_text("the host's")
    try:
        targets = ["mine.txt", "/tmp/private.txt", str(outside / "pwned"),
                   str(ROOT / "pwned"), str(tmp_path / "src-b" / "pwned")]
        # (a Python step sees the SDK and the rules engine it carries, nothing else of ROOT)
        seen = [str(host_tmp), str(ROOT / "README.md"), str(ROOT / "referee" / "seats"),
                str(tmp_path / "src-b"), "/home", "/root/.bashrc"]
        manifest = _bot(tmp_path, ["python3", "probe.py", json.dumps([targets, seen])],
                        {"probe.py": PROBE})
        for p in [manifest.folder, *manifest.folder.iterdir()]:  # as the registry unpacks it
            p.chmod(0o555 if p.is_dir() else 0o444)
        result = build_bot(manifest, manifest.folder, tmp_path / "into")
    finally:
        host_tmp.unlink()
    report = json.loads((result.folder / "report.json").read_text())
    assert report["cwd"] == str(result.folder)
    assert report["wrote"]["mine.txt"] is True and (result.folder / "mine.txt").exists()
    assert report["wrote"]["/tmp/private.txt"] is True  # its private /tmp
    for target in targets[2:]:
        assert report["wrote"][target] is not True, target
        assert not Path(target).exists(), target
    assert not any(report["sees"].values()), report["sees"]
    assert not ROOT_USER or report["uid"] >= UID_BASE  # a seat's uid, not root


def test_unsandboxed_a_build_is_a_plain_process_with_the_hosts_rights(tmp_path):
    """The control of the test above: without the sandbox the same writes land."""
    outside = tmp_path / "outside"
    outside.mkdir()
    manifest = _bot(tmp_path, ["python3", "probe.py", json.dumps([[str(outside / "open")],
                                                                  [str(ROOT / "README.md")]])],
                    {"probe.py": PROBE})
    result = build_bot(manifest, manifest.folder, tmp_path / "into", policy="none")
    assert not result.sandboxed and (outside / "open").exists()
    report = json.loads((result.folder / "report.json").read_text())
    assert report["uid"] == os.getuid() and report["sees"] == {str(ROOT / "README.md"): True}


@pytest.fixture
def listener():
    """A TCP port listening on the host's loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield s.getsockname()[1]


@pytest.mark.parametrize("policy", [None, "none"])
def test_a_build_has_no_network(tmp_path, listener, policy):
    code = f"import socket; socket.create_connection(('127.0.0.1', {listener}), timeout=5)"
    manifest = _bot(tmp_path, ["python3", "-c", code])
    if policy == "none":  # the control: the port is there to be reached
        build_bot(manifest, manifest.folder, tmp_path / "into", policy="none")
        return
    with pytest.raises(BuildFailed, match="exited with status 1") as e:
        build_bot(manifest, manifest.folder, tmp_path / "into")
    assert "ConnectionRefusedError" in str(e.value) or "unreachable" in str(e.value)


def test_a_failed_build_is_refused_with_its_name_command_status_and_log(tmp_path):
    steps = [["sh", "-c", "echo one > one.txt"],
             ["sh", "-c", "echo compiling; echo 'error: the last line' >&2; exit 3"],
             ["sh", "-c", "touch three.txt"]]
    manifest = _bot(tmp_path, steps, name="failing")
    into = tmp_path / "into"
    with pytest.raises(BuildFailed) as e:
        build_bot(manifest, manifest.folder, into)
    message = str(e.value)
    assert message.startswith("failing@0.1: build `sh -c 'echo compiling;")
    assert "exited with status 3" in message
    assert message.rstrip().endswith("error: the last line")
    assert e.value.command == tuple(steps[1]) and "$ sh -c 'echo one > one.txt'" in e.value.log
    assert not into.exists()  # a failed build leaves nothing to play


def test_a_failed_build_names_its_cause_line_and_keeps_its_whole_log(tmp_path):
    """A compiler's ``error:`` line followed by a trace longer than the tail shown: the
    message quotes the cause line, its tail starts at a whole line, and the whole log is kept
    beside the removed folder."""
    trace = "".join(f"    at frame.number{i:04d}(Source.java:{i})\n" for i in range(400))
    script = ("echo 'Note: some input files use unchecked operations.'; "
              "echo 'src/Bot.java:12: error: cannot find symbol Hand' >&2; "
              f"printf '%s' '{trace}' >&2; exit 1")
    manifest = _bot(tmp_path, [["sh", "-c", script]], name="traced")
    into = tmp_path / "cache" / "traced"
    with pytest.raises(BuildFailed) as e:
        build_bot(manifest, manifest.folder, into)
    message = str(e.value)
    assert e.value.cause == "src/Bot.java:12: error: cannot find symbol Hand"
    assert "; the cause: src/Bot.java:12: error: cannot find symbol Hand" in message
    tail = message.split("the end of its log:\n", 1)[1]
    assert tail.startswith("    at frame.number"), tail[:80]  # not cut mid-line
    assert len(tail) < len(trace)
    kept = tmp_path / "cache" / "traced.failed-build.log"
    assert e.value.log_path == kept and f"its whole log: {kept}" in message
    assert kept.read_text() == e.value.log and "frame.number0000(" in e.value.log
    assert not into.exists()


def test_a_bot_is_built_once_per_content_and_built_again_when_it_changes(tmp_path):
    """``built``: a bot with a build plays from its folder built in the cache under its content
    hash; the same content is not built again (the same folder, untouched); an edit is; a
    failed build keeps its whole log beside the folder it would have had, and builds again
    next time."""
    from referee.seats.build import BUILT_MARK, built
    step = ["sh", "-c", "mkdir -p build && cat source.txt > build/prog && date +%s%N > stamp"]
    manifest = _bot(tmp_path, [step], {"source.txt": "one"})
    cache = tmp_path / "cache"
    first = built(manifest, cache)
    assert first.folder.parent == cache / "local" and first.folder != manifest.folder
    assert (first.folder / "build" / "prog").read_text() == "one"
    assert (first.folder / BUILT_MARK).exists() and first.path == first.folder / "bot.toml"
    stamp = (first.folder / "stamp").read_text()
    assert built(manifest, cache).folder == first.folder
    assert (first.folder / "stamp").read_text() == stamp  # not built again
    (manifest.folder / "source.txt").write_text("two")
    second = built(manifest, cache)
    assert second.folder != first.folder
    assert (second.folder / "build" / "prog").read_text() == "two"
    plain = _bot(tmp_path, [], name="plain")
    assert built(plain, cache) is plain  # nothing to build
    failing = _bot(tmp_path, [["sh", "-c", "echo 'main.c:3: error: no main' >&2; exit 1"]],
                   name="failing")
    with pytest.raises(BuildFailed) as e:
        built(failing, cache)
    into = cache / "local" / f"failing-{failing.content_hash()}"
    assert e.value.log_path == into.with_name(into.name + ".failed-build.log")
    assert "main.c:3: error: no main" in e.value.log_path.read_text()
    assert e.value.cause == "main.c:3: error: no main" and not into.exists()
    with pytest.raises(BuildFailed):  # not remembered as built
        built(failing, cache)


def test_a_build_whose_program_is_missing_is_refused(tmp_path):
    manifest = _bot(tmp_path, ["no-such-build-tool", "all"])
    with pytest.raises(BuildFailed, match="cannot start 'no-such-build-tool'"):
        build_bot(manifest, manifest.folder, tmp_path / "into")


def test_a_build_past_its_time_limit_is_killed_with_everything_it_started(tmp_path):
    marker = "30.0417"  # a sleep of its own, to find on the host
    manifest = _bot(tmp_path, ["sh", "-c", f"id -u; sleep {marker} & sleep {marker}"],
                    name="slow")
    started = time.monotonic()
    with pytest.raises(BuildFailed, match=r"slow@0.1: build .* ran past 2 s") as e:
        build_bot(manifest, manifest.folder, tmp_path / "into", timeout_s=2)
    assert time.monotonic() - started < 20  # killed, not waited for
    assert "ran past 2 s" in e.value.reason
    uid = int(e.value.log.splitlines()[1])
    if ROOT_USER:
        # nothing it started is left (by its marker: once released, the uid may serve another
        # build or seat)
        assert uid >= UID_BASE
        assert not [p for p in Path("/proc").iterdir() if p.name.isdigit()
                    and marker in _cmdline(p)]
    assert not (tmp_path / "into").exists()


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def test_the_time_limit_reads_from_the_environment(monkeypatch):
    monkeypatch.delenv("ARENA_BUILD_TIMEOUT_S", raising=False)
    assert build_timeout() == 600
    monkeypatch.setenv("ARENA_BUILD_TIMEOUT_S", "42.5")
    assert build_timeout() == 42.5
    monkeypatch.setenv("ARENA_BUILD_TIMEOUT_S", "soon")
    with pytest.raises(ValueError, match="ARENA_BUILD_TIMEOUT_S"):
        build_timeout()


def test_a_build_log_is_bounded_and_keeps_its_end(tmp_path, monkeypatch):
    monkeypatch.setattr(build_module, "LOG_LIMIT", 4000)
    code = "print('x' * 100000); print('THE END')"
    result = build_bot(_bot(tmp_path, ["python3", "-c", code]),
                       tmp_path / "src-b", tmp_path / "into")
    assert len(result.log) < 4300 and result.log.rstrip().endswith("THE END")
    assert "bytes of the build's output dropped here" in result.log


def test_a_build_goes_into_a_fresh_folder_only(tmp_path):
    manifest = _bot(tmp_path, ["true"])
    (tmp_path / "into").mkdir()
    (tmp_path / "into" / "old").write_text("")
    with pytest.raises(ValueError, match="not an empty folder"):
        build_bot(manifest, manifest.folder, tmp_path / "into")


def test_only_a_build_binds_its_folder_writable(tmp_path):
    kw = dict(env={"PATH": "/usr/bin"}, workdir=tmp_path, folders=[], policy=SandboxPolicy())
    def binds(cmd):
        return [cmd[i:i + 3] for i in range(len(cmd)) if cmd[i] in ("--bind", "--ro-bind")
                and cmd[i + 1] == str(tmp_path)]
    seat = sandbox_command(["true"], **kw)
    assert "--bind" not in seat and binds(seat) == [["--ro-bind", str(tmp_path), str(tmp_path)]]
    build = sandbox_command(["true"], **kw, writable=tmp_path)
    assert build.count("--bind") == 1 and binds(build) == [["--bind", str(tmp_path),
                                                             str(tmp_path)]]
    with pytest.raises(ValueError, match="working directory"):
        sandbox_command(["true"], **kw, writable=tmp_path / "elsewhere")


# -- the manifest's field --------------------------------------------------------------------
def test_the_build_field_is_one_command_line_or_several(tmp_path):
    assert build_steps(["make", "-j4"], "m") == (("make", "-j4"),)
    assert build_steps("make -j4", "m") == (("make", "-j4"),)
    assert build_steps([["npm", "ci"], ["node", "gen.js"]], "m") == (("npm", "ci"),
                                                                    ("node", "gen.js"))
    assert build_steps([], "m") == ()
    for bad in ([["make"], 3], [[]], [""], {"make": 1}, [["make", 1]]):
        with pytest.raises(ManifestError, match=r"m: field 'build'"):
            build_steps(bad, "m")
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "bot.toml").write_text('name = "x"\nversion = "1"\ncommand = ["true"]\n'
                                     'build = 7\n')
    with pytest.raises(ManifestError, match=r"bot.toml: field 'build': expected a command"):
        load_manifest(folder)


def test_a_seat_bot_carries_its_build_and_old_specs_still_load(tmp_path):
    manifest = load_manifest(SAMPLES / "cpp")
    data = SeatBot.of("c", manifest).to_dict()
    assert data["build"] == [["make", "-j4"]]
    assert SeatBot.from_dict(json.loads(json.dumps(data))).manifest.build == manifest.build
    old = SeatBot.of("p", load_manifest(PY / "random")).to_dict()
    assert "build" not in old and SeatBot.from_dict(old).manifest.build == ()
    with pytest.raises(ValueError, match="field 'build'"):
        SeatBot.from_dict({**data, "build": ["make"]})


def test_a_seat_bot_carries_its_manifests_runtime_to_the_referee():
    """A Go bot's ``runtime = "go"`` crosses the spec to the referee process (it decides the
    seat's address-space limit); a manifest without one stays without; a bad one is named."""
    go = load_manifest(SAMPLES / "go")
    assert go.runtime == "go"
    data = json.loads(json.dumps(SeatBot.of("g", go).to_dict()))
    assert data["runtime"] == "go" and SeatBot.from_dict(data).manifest.runtime == "go"
    plain = SeatBot.of("p", load_manifest(PY / "random")).to_dict()
    assert "runtime" not in plain and SeatBot.from_dict(plain).manifest.runtime is None
    with pytest.raises(ValueError, match="field 'runtime'.*one of the arena's runtimes"):
        SeatBot.from_dict({**data, "runtime": "cobol"})


def test_build_output_is_left_out_of_the_content_hash(tmp_path):
    """What a build or a tool writes (Cargo's ``target/``, Gradle's ``out/``, ``build/``,
    ``.git/``) changes no hash; a source file does; and a bot kept under a folder that happens to
    be named ``build`` still hashes its own files."""
    (tmp_path / "build").mkdir()
    manifest = _bot(tmp_path / "build", [["cargo", "build"]], {"main.rs": "fn main() {}"})
    before = manifest.content_hash()
    for rel in ("target/release/bot", "out/Bot.class", "build/x.o", ".git/HEAD",
                "src/target/debug/y"):
        path = manifest.folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("made")
    assert manifest.content_hash() == before
    assert "main.rs" in manifest.file_hashes() and len(manifest.file_hashes()) == 2
    (manifest.folder / "main.rs").write_text("fn main() { }")
    assert manifest.content_hash() != before


def test_the_build_is_part_of_the_content_hash_only_when_there_is_one(tmp_path):
    import dataclasses
    manifest = _bot(tmp_path, ["make"])
    bare = dataclasses.replace(manifest, build=())
    assert manifest.content_hash() != bare.content_hash()
    assert dataclasses.replace(bare, build=(("make",),)).content_hash() == manifest.content_hash()


def test_an_unbuilt_bots_program_is_left_for_its_build_to_make(tmp_path):
    """A season takes a bot's source folder whose program its build makes (it is built where
    it plays); a built folder, or a bot without a build, must have its program."""
    from referee.seats.launch import check_startable
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "bot.toml").write_text('name = "made"\nversion = "0.1"\ncommand = ["build/prog"]\n'
                                     'build = ["make"]\nprotocol = "stdio"\n')
    made = load_manifest(folder)
    check_startable(made, sandboxed=False, unbuilt=True)
    with pytest.raises(ManifestError, match="cannot start 'build/prog'"):
        check_startable(made, sandboxed=False)
    (folder / "bot.toml").write_text('name = "plain"\nversion = "0.1"\ncommand = ["build/prog"]\n'
                                     'protocol = "stdio"\n')
    with pytest.raises(ManifestError, match="cannot start 'build/prog'"):
        check_startable(load_manifest(folder), sandboxed=False, unbuilt=True)
