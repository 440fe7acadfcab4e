"""The sandbox per seat (bubblewrap), with real processes: what a sandboxed bot sees and can
reach, its limits, and that nothing of a seat outlives its match."""

import dataclasses
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

from referee.match.local import run_match
from referee.match.matchfile import MatchFile
from referee.match.spec import MatchSpec, TimeControl
from referee.seats.launch import LOG_LIMIT, PROTOS, SDK, launch
from referee.seats.manifest import Manifest, load_manifest
from referee.seats.sandbox import (SEAT_ADDRESS, UID_BASE, SandboxPolicy, SandboxUnavailable,
                                   LOCK_DIR, SeatCgroup, policy_of, sandbox_command,
                                   sandbox_problem, uid_processes)

pytestmark = pytest.mark.skipif(sandbox_problem() is not None,
                                reason=f"no sandbox here: {sandbox_problem()}")

PY = ROOT / "sample_bots" / "python"
RANDOM = load_manifest(PY / "random")
PROBE = ROOT / "tests" / "bots" / "sandbox_probe.py"
QUICK = TimeControl(per_decision_ms=2000, bank_ms=2000, max_strikes=3,
                    reconnect_window_ms=1000, connect_timeout_ms=60000)
TIGHT = SandboxPolicy(cpu_seconds=3, memory_mb=1024, processes=64, open_files=64,
                      file_size_mb=8, tmpfs_mb=16)


def _probe(tmp_path: Path, *args: str, protocol: str = "grpc", name: str = "bot",
           pythonpath=()) -> Manifest:
    """The probe copied into a folder of its own (nothing of the repository in it)."""
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    shutil.copy(PROBE, folder / "probe.py")
    return Manifest(f"probe-{name}", "0", ("python3", "probe.py", *args), protocol,
                    folder.resolve(), pythonpath=tuple(pythonpath))


def _report(tmp_path: Path, manifest: Manifest, seat: int = 0, match_id: str = "m1") -> dict:
    """Run a ``report`` probe sandboxed (the default policy) and read what it printed."""
    sockets = tmp_path / f"sock{seat}"
    sockets.mkdir(exist_ok=True)
    log = tmp_path / f"seat{seat}-{match_id}.log"
    proc = launch(manifest, seat=seat, match_id=match_id, log_path=log, token="tok",
                  sandbox=SandboxPolicy(), socket_dir=sockets)
    if proc.popen.stdin is not None:  # a stdio probe: its input ends at once
        proc.popen.stdin.close()
        proc.popen.stdout.close()
    proc.stop(60)
    text = log.read_text()
    assert text.strip(), "the probe printed nothing"
    return json.loads(text.strip().splitlines()[-1])


def uid_processes_unclaimed(uid: int) -> list[int]:
    """The processes of seat uid ``uid``, read while holding its claim: once a match releases
    the uid, a match of another test worker may take it and start its own bots under it."""
    fd = os.open(LOCK_DIR / f"arena-uid-{uid}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # waits while another match holds the uid
        return uid_processes(uid)
    finally:
        os.close(fd)


def _no_process_left(procs) -> None:
    """No process of any seat's uid (a root launcher), nor any bwrap process of the seats."""
    for p in procs:
        assert p.popen.poll() is not None
        if p.seat_uid is not None:
            assert uid_processes_unclaimed(p.seat_uid) == [], p.seat_uid
        assert not Path(f"/proc/{p.pid}").exists() or _zombie(p.pid)


def _zombie(pid: int) -> bool:
    try:
        return "State:\tZ" in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True


def test_a_sandboxed_bot_sees_exactly_its_built_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("ARENA_ENGINE", raising=False)  # (passed on: tested below)
    monkeypatch.setenv("ARENA_DB", "postgresql://secret@127.0.0.1/arena")
    monkeypatch.setenv("ARENA_BROKER", "redis://127.0.0.1:6379/0")
    grpc = _report(tmp_path, _probe(tmp_path, "report", pythonpath=[PY]))
    assert grpc["env"] == {
        "ARENA_SEAT": "0", "ARENA_MATCH_ID": "m1", "ARENA_REFEREE": SEAT_ADDRESS,
        "ARENA_TOKEN": "tok", "ARENA_PROTO_DIR": str(PROTOS),
        "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp",
        "LANG": "C.UTF-8", "ARENA_ENGINE": "auto", "PYTHONPATH": f"{PY}:{PROTOS}:{SDK}:{ROOT}",
        "PWD": str((tmp_path / "bot").resolve())}
    stdio = _report(tmp_path, _probe(tmp_path, "report", protocol="stdio", name="plain"))
    assert set(stdio["env"]) == {"ARENA_SEAT", "ARENA_MATCH_ID", "PATH", "HOME", "LANG", "PWD",
                                 "PYTHONPATH", "ARENA_ENGINE"}
    assert stdio["env"]["PYTHONPATH"] == f"{SDK}:{PROTOS}:{ROOT}"  # a Python bot: the SDK


ENGINE_PROBE = """import json, referee.rules, referee.rules.engine as e
print(json.dumps({"engine": referee.rules.ENGINE, "file": e.__file__}))
"""


@pytest.mark.parametrize("asked", [None, "pure"])
def test_a_sandboxed_python_bot_runs_the_referees_engine(tmp_path, monkeypatch, asked):
    """The SDK's rules engine in the sandbox is the compiled one where it is built and fresh
    (bound beside the source), as the referee's would be; ``ARENA_ENGINE=pure`` in the
    referee's environment reaches the bot and keeps it on the source."""
    from referee.rules.compiled import BUILD, stale
    try:
        fresh = not stale(json.loads((BUILD / "manifest.json").read_text()))
    except OSError:
        fresh = False  # (no C compiler here: make compiled built nothing)
    if asked is None:
        monkeypatch.delenv("ARENA_ENGINE", raising=False)
    else:
        monkeypatch.setenv("ARENA_ENGINE", asked)
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.py").write_text(ENGINE_PROBE)
    manifest = Manifest("engine-probe", "0", ("python3", "bot.py"), "grpc", folder.resolve())
    got = _report(tmp_path, manifest)
    expected = "compiled" if fresh and asked is None else "pure"
    assert got["engine"] == expected, got
    assert got["file"].startswith(str(BUILD if expected == "compiled" else ROOT / "referee"))


def test_a_sandboxed_bot_has_no_network(tmp_path):
    seen = _report(tmp_path, _probe(tmp_path, "report"))
    for port in ("6379", "5432"):  # Redis and PostgreSQL on the host's loopback
        assert seen["connect"][port] != "connected"
        assert "Connection refused" in seen["connect"][port] or "unreachable" in \
            seen["connect"][port], seen["connect"][port]


def test_a_sandboxed_bot_reads_only_its_own_and_writes_only_its_tmp(tmp_path):
    store = tmp_path / "store.db"
    store.write_text("secret")
    other = tmp_path / "other"
    other.mkdir()
    (other / "bot.py").write_text("secret")
    paths = [str(ROOT / "README.md"), str(ROOT / "referee" / "seats"),
             str(ROOT / "scheduler" / "store.py"), str(ROOT / "sdk" / "python" / "pyproject.toml"),
             str(PY / "random" / "bot.py"), str(other / "bot.py"), str(store),
             "/etc/passwd", "/etc/shadow", "/home", "/var", "/root/.ssh", str(tmp_path / "other")]
    engine, sdk = str(ROOT / "referee"), str(ROOT / "sdk" / "python")
    seen = _report(tmp_path, _probe(tmp_path, "report", *paths, "/", "/root", str(ROOT), engine,
                                    sdk, str(ROOT / "build")))
    # the folders on the way to what is bound are there, holding that and nothing else: the
    # system folders this host has, and the first folder of each Python and repository path
    system = {n for n in ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
              if (Path("/") / n).exists()}
    bound = {Path(p).parts[1] for p in (sys.prefix, sys.base_prefix, os.path.realpath(
        sys.executable), PROTOS, ROOT.resolve())}
    assert seen["listed"]["/"] == sorted({"dev", "etc", "proc", "run", "tmp", "usr"} | system |
                                         bound)
    assert set(seen["listed"].get("/root", [])) <= {".pyenv"}
    # the repository's own: its venv, the protocol package, the SDK's modules, the rules engine
    assert set(seen["listed"][str(ROOT)]) <= {".venv", "protos", "sdk", "referee", "house",
                                              "build"}
    assert set(seen["listed"].get(str(ROOT / "build"), [])) <= {"compiled"}  # the engine's
    assert set(seen["listed"][engine]) == {"__init__.py", "rules", "play", "wire"}
    assert seen["listed"][sdk] == ["src"]
    for path in paths:
        assert seen["read"][path].startswith(("FileNotFoundError", "PermissionError")), \
            (path, seen["read"][path])
    bot = str((tmp_path / "bot").resolve())
    assert seen["cwd"] == bot
    assert seen["write"][f"{bot}/written"].startswith("OSError: Read-only") or \
        seen["write"][f"{bot}/written"].startswith("PermissionError")
    assert seen["write"]["/etc/x"] != "written" and seen["write"]["/x"] != "written"
    assert seen["write"]["/tmp/mark"] == "written"
    assert not (tmp_path / "bot" / "written").exists()


def test_a_sandboxed_bot_sees_only_its_own_processes(tmp_path):
    seen = _report(tmp_path, _probe(tmp_path, "report"))
    assert max(seen["pids"]) < 10 and len(seen["pids"]) <= 4, seen["pids"]
    if os.geteuid() == 0:  # its own unprivileged uid
        assert UID_BASE <= seen["uid"] < UID_BASE + 2000


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the seccomp filter is x86_64's")
def test_locks_watches_and_the_page_cache_of_shared_files_are_no_channel(tmp_path):
    """Partners can both read some files (the runtime, a shared folder): a lock on one
    succeeds without locking anything, no inotify watch can be made on it, and its pages can
    be neither evicted nor probed."""
    seen = _report(tmp_path, _probe(tmp_path, "report"))
    assert seen["inotify"] == "Operation not permitted" and seen["flock"] == "done"
    # the page cache: no evicting a file (fadvise is a no-op), no asking whether a page is in
    assert seen["nowait_read"] == "Operation not supported" and seen["plain_read"] == 1
    assert seen["fcntl_flags"] == os.O_RDONLY | getattr(os, "O_LARGEFILE", 0) or \
        isinstance(seen["fcntl_flags"], int)  # fcntl itself works
    # (two partners at once: tests/referee/test_attacks.py::test_partners_cannot_share_a_hand_...)


def test_nothing_a_bot_writes_in_tmp_is_kept_for_the_next_match(tmp_path):
    bot = _probe(tmp_path, "report")
    first = _report(tmp_path, bot, match_id="m1")
    assert first["write"]["/tmp/mark"] == "written" and not first["mark_before"]
    second = _report(tmp_path, bot, match_id="m2")
    assert second["write"]["/tmp/mark"] == "written" and not second["mark_before"]
    assert "mark" not in os.listdir("/tmp") or not _owned_by_probe("/tmp/mark")


def _owned_by_probe(path: str) -> bool:
    return Path(path).stat().st_uid >= UID_BASE


def _hostile_match(tmp_path, mode: str, policy: SandboxPolicy = TIGHT):
    """A match of three random bots and a probe misbehaving in ``mode`` at seat 3."""
    probe = _probe(tmp_path, mode, pythonpath=[PY])
    spec = MatchSpec(match_id=f"hostile-{mode}", variant="two-deck-fry", seed="h",
                     max_deals=1, time_control=QUICK)
    result, record, runner = run_match(spec, [RANDOM, RANDOM, RANDOM, probe], tmp_path,
                                       sandbox=policy)
    _no_process_left(runner.bot_processes)
    assert [f for f in record["faults"] if f["seat"] != 3] == []  # the other seats unaffected
    assert record["sandbox"] == "bubblewrap" and result["sandbox"] == "bubblewrap"
    return result, record, (tmp_path / "seat3.log").read_text()


def test_a_fork_bomb_meets_its_process_limit(tmp_path):
    result, record, log = _hostile_match(tmp_path, "forkbomb")
    assert "probe: fork refused: Resource temporarily unavailable" in log, log[-2000:]
    counted = int(log.split("processes")[0].rsplit(";", 1)[1])
    assert counted <= TIGHT.processes + 1  # and bwrap's init, not of the seat's uid
    assert result["forfeit"] is None, record["faults"]


def test_a_memory_bomb_meets_its_address_space_limit(tmp_path):
    result, _, log = _hostile_match(tmp_path, "memory")
    line = next(x for x in log.splitlines() if x.startswith("probe: memory refused"))
    assert int(line.split("after ")[1].split()[0]) < TIGHT.memory_mb
    assert result["forfeit"] is None


def _no_cgroup() -> bool:
    cgroup = SeatCgroup.make("arena-seat-probe", TIGHT)
    if cgroup is None:
        return True
    cgroup.remove()
    return False


@pytest.mark.skipif(_no_cgroup(), reason="no cgroup per seat here (a root launcher, and the "
                    "memory and pids controllers)")
def test_a_tree_of_memory_hogs_meets_the_seats_memory_limit(tmp_path):
    """Each process under its address-space limit, together over the seat's memory: the
    seat's cgroup kills some; the other seats and the host are unaffected."""
    result, _, log = _hostile_match(tmp_path, "treebomb")
    line = next(x for x in log.splitlines() if x.startswith("probe: tree memory"))
    assert int(line.split(": ")[2].split()[0]) >= 1, log[-2000:]
    assert result["forfeit"] is None


@pytest.mark.skipif(_no_cgroup(), reason="no cgroup per seat here (a root launcher, and the "
                    "memory and pids controllers)")
def test_a_seat_cgroup_left_by_a_killed_launcher_is_made_anew_with_the_new_limits():
    """A referee killed mid-match leaves its seats' cgroups; the next seat of that uid gets its
    own limits all the same (a lower memory and swap limit left behind made them unwritable,
    and the seat ran without its cgroup; a CPU cap left behind is gone), and a process left
    inside (each of its folders, the CPU one too) is killed."""
    name = f"arena-seat-test-{os.getpid()}"
    left = SeatCgroup.make(name, dataclasses.replace(TIGHT, memory_mb=256, cpu_cores=0.5))
    assert left is not None
    stray = subprocess.Popen(left.enter() + ["sleep", "60"])
    try:
        for d in left.dirs:
            _wait_listed(d, stray.pid)
        seat = SeatCgroup.make(name, TIGHT)  # (the first was never removed)
        assert seat is not None
        limits = {d / f for d in seat.dirs for f in ("memory.limit_in_bytes", "memory.max")
                  if (d / f).exists()}
        assert limits and {int(f.read_text()) for f in limits} == {TIGHT.memory_mb * 1024 * 1024}
        cpu = [d for d in seat.dirs if (d / "cpu.shares").exists() or (d / "cpu.weight").exists()]
        if _has_cpu_controller():  # its CPU folder too: an equal share, the cap left gone
            assert len(cpu) == 1, seat.dirs  # (v1: the cpu hierarchy's; v2: its one folder)
            shares = {"cpu.shares": "1024", "cpu.weight": "100", "cpu.cfs_quota_us": "-1"}
            assert all((cpu[0] / f).read_text().split()[0] == v for f, v in shares.items()
                       if (cpu[0] / f).exists())
            if (cpu[0] / "cpu.max").exists():
                assert (cpu[0] / "cpu.max").read_text().split()[0] == "max"
        assert stray.wait(timeout=10) == -9  # the dead seat's process, killed
        assert all((d / "cgroup.procs").read_text().split() == [] for d in seat.dirs)
        seat.remove()
    finally:
        if stray.poll() is None:
            stray.kill()
            stray.wait()
        left.remove()


def _has_cpu_controller() -> bool:
    """Whether this machine's cgroups have the cpu controller (v1 ``cpu``, or v2 ``cpu`` among
    the root's controllers)."""
    fs = Path("/sys/fs/cgroup")
    return (fs / "cpu" / "cpu.shares").exists() or "cpu" in (
        (fs / "cgroup.controllers").read_text().split()
        if (fs / "cgroup.controllers").exists() else [])


def _wait_listed(d: Path, pid: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while str(pid) not in (d / "cgroup.procs").read_text().split():
        assert time.monotonic() < deadline, f"{pid} never entered {d}"
        time.sleep(0.01)  # (the poll of a wait on cgroup.procs)


def test_a_file_flood_meets_the_file_size_and_tmpfs_limits(tmp_path):
    result, _, log = _hostile_match(tmp_path, "fsize")
    assert f"probe: /tmp/big: write refused after {TIGHT.file_size_mb} MiB: File too large" \
        in log, log[-2000:]
    assert f"probe: /dev/shm/big: write refused after {TIGHT.file_size_mb} MiB" in log
    assert "probe: /tmp: full after" in log and "No space left on device" in log
    assert result["forfeit"] is None


def test_a_cpu_burner_is_killed_at_its_cpu_limit(tmp_path):
    result, _, log = _hostile_match(tmp_path, "cpu")
    assert "probe: cpu burner ended by signal 24" in log or \
        "probe: cpu burner ended by signal 9" in log, log[-2000:]  # SIGXCPU, else SIGKILL
    assert result["forfeit"] is None


def test_processes_that_ignore_sigterm_do_not_outlive_the_match(tmp_path):
    result, _, log = _hostile_match(tmp_path, "sigterm")
    assert "probe: children ignoring SIGTERM started" in log
    assert result["forfeit"] is None


def test_a_stdout_flood_is_cut_at_the_log_limit(tmp_path):
    """200 MiB of prints: the seat's log keeps its limit and says how much it dropped; the bot
    plays on, the others are unaffected."""
    result, _, log = _hostile_match(tmp_path, "stdout")
    size = (tmp_path / "seat3.log").stat().st_size
    assert LOG_LIMIT <= size < LOG_LIMIT + 1000, size
    dropped = int(log.rsplit("[arena: ", 1)[1].split()[0])
    assert dropped >= 200 * 1024 * 1024 - LOG_LIMIT, dropped
    assert result["forfeit"] is None


def test_a_segfault_is_charged_to_its_seat_alone_and_leaves_no_process(tmp_path):
    """A crash at its fifth decision (after forking a child that would live on): its team
    forfeits for its disconnection, nobody else is charged, and nothing of the seat is left."""
    result, record, log = _hostile_match(tmp_path, "segfault")
    assert "probe: segfault now" in log, log[-2000:]
    assert result["forfeit"]["seat"] == 3 and result["winner_team"] == 0, result
    assert [f["kind"] for f in record["faults"]] == ["disconnect"], record["faults"]


def test_every_sample_language_plays_sandboxed_and_the_record_says_so(tmp_path):
    bots = [load_manifest(PY / "greedy"), load_manifest(ROOT / "sample_bots" / "node"),
            load_manifest(ROOT / "sample_bots" / "stdio"),
            load_manifest(ROOT / "sample_bots" / "cpp")]
    if not (ROOT / "sample_bots" / "cpp" / "build" / "arena_bot").exists():
        pytest.skip("the C++ sample is not built (make bots)")
    spec = MatchSpec(match_id="languages", variant="two-deck-fry", seed="l", max_deals=1)
    result, record, runner = run_match(spec, bots, tmp_path)
    assert record["faults"] == [] and result["forfeit"] is None
    match = MatchFile.from_dict(json.loads(json.dumps(record)))
    assert match.result.sandbox == "bubblewrap" and match.sandbox == "bubblewrap"
    # which rules engine judged it: the one this process loaded (compiled where it is built)
    from referee.rules.compiled import loaded_from_extension
    from referee.rules import engine
    assert match.engine == ("compiled" if loaded_from_extension(engine) else "pure")
    assert match.verify() == []
    _no_process_left(runner.bot_processes)
    uids = {p.seat_uid for p in runner.bot_processes}
    assert len(uids) == 4 or uids == {None}  # a uid per seat (a root launcher)


def test_unsandboxed_play_is_chosen_and_recorded(tmp_path):
    spec = MatchSpec(match_id="open", variant="two-deck-fry", seed="o", max_deals=1)
    result, record, _ = run_match(spec, [RANDOM] * 4, tmp_path, sandbox="none")
    assert result["sandbox"] == "none" and record["sandbox"] == "none"


def test_where_bwrap_cannot_run_a_match_is_refused(tmp_path, monkeypatch):
    import referee.match.local as local
    monkeypatch.setattr(local, "require_sandbox", _refuse)
    spec = MatchSpec(match_id="refused", variant="two-deck-fry", seed="r", max_deals=1)
    with pytest.raises(SandboxUnavailable, match="--unsandboxed"):
        run_match(spec, [RANDOM] * 4, tmp_path)
    assert not (tmp_path / "seat0.log").exists()  # nothing started


def _refuse():
    raise SandboxUnavailable("bots cannot be sandboxed: test; pass --unsandboxed")


def test_the_policy_reads_from_a_spec_and_names_a_bad_field():
    assert policy_of(None) == SandboxPolicy() and policy_of("none") is None
    assert policy_of({"memory_mb": 512}).memory_mb == 512
    with pytest.raises(ValueError, match="field 'memroy_mb': unknown"):
        SandboxPolicy.from_dict({"memroy_mb": 1})
    with pytest.raises(ValueError, match="'processes' = 0"):
        SandboxPolicy.from_dict({"processes": 0})
    spec = MatchSpec.from_dict({"match_id": "x", "variant": "two-deck-fry",
                                "sandbox": {"cpu_seconds": 9}})
    assert MatchSpec.from_dict(spec.to_dict()).sandbox == SandboxPolicy(cpu_seconds=9).to_dict()
    assert "ponder_cores" not in SandboxPolicy().to_dict()  # (stored settings as before)
    assert policy_of({"ponder_cores": 0}).ponder_cores == 0.0
    assert SandboxPolicy.from_dict(SandboxPolicy(ponder_cores=0.5).to_dict()).ponder_cores == 0.5
    for bad in (-1, 0.001, True, "0.1"):
        with pytest.raises(ValueError, match=r"field 'ponder_cores' = "):
            SandboxPolicy.from_dict({"ponder_cores": bad})


def test_the_command_line_binds_nothing_of_the_host_but_what_the_seat_needs(tmp_path):
    cmd = sandbox_command(["python3", "bot.py"], env={"ARENA_SEAT": "1"},
                          workdir=Path("/srv/bots/a"), folders=[Path("/srv/lib")],
                          policy=SandboxPolicy(), uid=64005, socket_dir=Path("/tmp/s/seat1"))
    binds = {cmd[i + 2]: cmd[i + 1] for i, a in enumerate(cmd) if a in ("--ro-bind", "--bind")}
    assert binds["/srv/bots/a"] == "/srv/bots/a" and binds["/srv/lib"] == "/srv/lib"
    assert binds["/run/arena"] == "/tmp/s/seat1" and "/work" not in binds
    assert not any(str(ROOT) == k or k.startswith(str(ROOT) + "/") and
                   not k.startswith((str(ROOT / ".venv"), sys.prefix)) for k in binds), binds
    assert "--clearenv" in cmd and "--unshare-net" in cmd and "--die-with-parent" in cmd
    assert "--reuid=64005" in cmd and cmd[0] == "prlimit"
    hidden = sandbox_command(["bot"], env={"ARENA_TOKEN": "secret-token"}, workdir=Path("/srv"),
                             folders=[], policy=SandboxPolicy(), env_fd=7)
    assert "secret-token" not in " ".join(hidden) and "--args" in hidden  # (as launch does)


def test_a_season_files_sandbox_table_reaches_every_match_spec(tmp_path):
    from scheduler.season import SeasonError, load_season
    bots = "\n".join(f'[[bots]]\nmanifest = "{PY / name}"\n' for name in ("random", "greedy"))
    path = tmp_path / "s.toml"
    path.write_text(f'name = "s"\nvariant = "two-deck-fry"\n[sandbox]\nmemory_mb = 1024\n{bots}')
    season = load_season(path)
    spec = season.match_spec(season.plan()[0])
    assert MatchSpec.from_dict(spec.to_dict()).sandbox == SandboxPolicy(memory_mb=1024).to_dict()
    assert season.config.to_json()["sandbox"] == SandboxPolicy(memory_mb=1024).to_dict()
    path.write_text(f'name = "s"\nvariant = "two-deck-fry"\n[sandbox]\nram = 1\n{bots}')
    with pytest.raises(SeasonError, match=r"s.toml: field 'sandbox': field 'ram': unknown"):
        load_season(path)


def test_the_cli_refuses_to_play_unsandboxed_unless_told(tmp_path, monkeypatch, capsys):
    import referee.match.local as local
    import referee.seats.sandbox as sandbox
    from cli.main import main
    monkeypatch.setattr(local, "require_sandbox", _refuse)
    monkeypatch.setattr(sandbox, "require_sandbox", _refuse)
    bots = [str(PY / "random")] * 4
    assert main(["match", *bots, "--deals", "1", "--out", str(tmp_path / "m.json")]) == 2
    assert "--unsandboxed" in capsys.readouterr().err
    assert main(["season", "run", str(ROOT / "seasons" / "demo.toml"),
                 "--db", f"sqlite:///{tmp_path / 'a.db'}"]) == 2
    assert "--unsandboxed" in capsys.readouterr().err
    assert main(["match", *bots, "--deals", "1", "--out", str(tmp_path / "m.json"),
                 "--unsandboxed"]) == 0
    assert json.loads((tmp_path / "m.json").read_text())["sandbox"] == "none"


def test_a_pythonpath_may_name_only_the_bots_folder_the_sdk_and_the_engine(tmp_path):
    from referee.seats.launch import SDK, engine_folders, sandbox_pythonpath
    from referee.seats.manifest import ManifestError
    assert sandbox_pythonpath(load_manifest(PY / "greedy")) == []  # the SDK: always there
    assert sandbox_pythonpath(load_manifest(PY / "search")) == []  # greedy: the SDK's
    assert sandbox_pythonpath(_probe(tmp_path, pythonpath=[PY])) == [PY]  # the samples' folder
    assert sandbox_pythonpath(_probe(tmp_path, pythonpath=[SDK, ROOT])) == [SDK, *engine_folders()]
    (tmp_path / "lib").mkdir()
    assert sandbox_pythonpath(_probe(tmp_path, pythonpath=[tmp_path / "bot"])) == \
        [tmp_path / "bot"]
    with pytest.raises(ManifestError, match=r"field 'pythonpath'\[1\] = '/etc': outside"):
        sandbox_pythonpath(_probe(tmp_path, pythonpath=[PY, Path("/etc")]))
    spec = MatchSpec(match_id="pp", variant="two-deck-fry", seed="p", max_deals=1)
    result, record, _ = run_match(spec, [RANDOM, RANDOM, RANDOM,
                                         _probe(tmp_path, pythonpath=[tmp_path])], tmp_path)
    assert result["forfeit"] == {"seat": 3, "team": 1, "reason": "never connected"}
    assert "could not be started" in record["faults"][0]["reason"] and \
        "outside the bot's folder" in record["faults"][0]["reason"], record["faults"]
