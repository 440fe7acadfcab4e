"""The attack matrix of issue #13 (rows 1 and 2), with real processes: a hostile bot
(``tests/bots/hostile``) plays legally in one or two seats of a real local match and tries, at
start, to steal a seat, read other processes' memory and environment, share its hand with its
partner, reach the network and the store, read and write bots' folders, and leave processes,
memory, disk and CPU use behind. It writes what it saw as ``PROBE {json}`` lines in its seat's
log; each test asserts that the probe ran (its line is there: a probe that silently did nothing
fails the test), that every attack failed, and that the match was unaffected (it completes, its
record verifies, no other seat is charged a fault, no process of the hostile bot outlives it).

These tests state the secure outcome, with the bots sandboxed as ``run_match`` does by
default. To see that the probes work, run them unconfined: ``ARENA_ATTACKS_SANDBOX=none pytest
tests/referee/test_attacks.py``; then every test fails, and its message says what got through.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import secrets
import shutil
import signal
import socket
import sqlite3
import tempfile
import threading
import time
import uuid
import zlib
from pathlib import Path

import pytest
from conftest import ROOT

from referee.match.local import run_match
from referee.match.matchfile import MatchFile
from referee.match.spec import MatchSpec
from referee.seats.manifest import Manifest, load_manifest

HOSTILE_DIR = ROOT / "tests" / "bots" / "hostile"
HOSTILE = load_manifest(HOSTILE_DIR)
RANDOM = load_manifest(ROOT / "sample_bots" / "python" / "random")
SECRETS = {  # a worker's secrets, in the referee's environment during every test here
    "ARENA_DB": None,  # the store's URL: set per test (a real SQLite file)
    "DATABASE_URL": "postgresql://arena:pw-{u}@127.0.0.1:5432/arena",
    "CELERY_BROKER_URL": "redis://:broker-{u}@127.0.0.1:6379/0",
    "REDIS_URL": "redis://:redis-{u}@127.0.0.1:6379/1",
}
ALLOWED_ENV = {  # what a bot's environment may hold: its own ARENA_* and harmless basics
    "ARENA_REFEREE", "ARENA_SEAT", "ARENA_TOKEN", "ARENA_MATCH_ID", "ARENA_PROTO_DIR", "PYTHONPATH", "PATH",
    "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR", "TZ", "USER", "LOGNAME", "PWD",
    "SHLVL", "_", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONHASHSEED",
    "PYTHONNOUSERSITE", "PYTHONSAFEPATH", "PYTHONIOENCODING",
    "ARENA_ENGINE",  # which rules engine the SDK loads (the referee's choice: no secret)
}
UNCONFINED = os.environ.get("ARENA_ATTACKS_SANDBOX")
"""Set (to "none"): the bots run without a sandbox, to check the probes themselves."""
VICTIM_DELAY = ("import runpy, sys, time\n"
                "time.sleep(2.5)  # the thief's head start: its attack window\n"
                "sys.argv = ['bot.py']\n"
                "runpy.run_path('bot.py', run_name='__main__')\n")
"""A random bot that connects 2.5 s after it starts (its token is in its environment from the
start), so that a thief that can read it has time to use it first; a thief that lost the race
anyway is an error of the test (``ALREADY_EXISTS``), not a pass."""


# -- helpers ------------------------------------------------------------------------------------
def hostile(attacks: list[str], marker: str, *extra: str) -> Manifest:
    """The hostile bot trying ``attacks``; ``marker`` is in every command line it starts."""
    return dataclasses.replace(HOSTILE, command=tuple(HOSTILE.command) + (
        "--marker", marker, "--attacks", ",".join(attacks), *extra))


def wait_until(condition, timeout: float, step: float = 0.05):
    """``condition()``'s first true value within ``timeout`` seconds, else its last value."""
    end = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() >= end:
            return value
        time.sleep(step)  # (the poll of wait_until)


def processes_of(marker: str) -> dict[int, str]:
    """Live (not zombie) processes of the host whose command line holds ``marker`` (the hostile
    bot puts it in every one it starts; another run's bots have their own)."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(
                errors="replace")
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state in ("Z", "X"):
            continue
        if marker in cmd:
            found[int(name)] = cmd.strip()[:120]
    return found


def kill_all(pids) -> None:
    """End the processes this test's bots left behind, one by one by their id."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def probes(log: Path) -> list[dict]:
    out = []
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("PROBE "):
            out.append(json.loads(line[len("PROBE "):]))
    return out


@dataclasses.dataclass
class Played:
    result: dict
    record: dict
    logs: dict[int, str]
    probes: dict[int, list[dict]]
    left_behind: dict[int, str]

    def lines(self, seat: int, attack: str) -> list[dict]:
        return [p for p in self.probes[seat] if p["attack"] == attack]

    def one(self, seat: int, attack: str) -> dict:
        found = self.lines(seat, attack)
        assert found, (f"seat {seat}: no PROBE line for {attack!r}: the probe did not run. "
                       f"Log:\n{self.logs[seat][-3000:]}")
        return found[-1]

    def failed(self, seat: int, *attacks: str) -> None:
        """Every one of ``attacks`` ran in ``seat`` and failed."""
        through = {a: self.one(seat, a)["detail"] for a in attacks if self.one(seat, a)["ok"]}
        assert not through, "attacks that got through:\n" + "\n".join(
            f"  {a}: {d[:1500]}" for a, d in through.items())


def play(tmp_path: Path, name: str, bots: list[Manifest], hostile_seats: set[int],
         marker: str, variant: str = "two-deck-80", **kw) -> Played:
    """Play one deal between ``bots``; afterwards, wait (up to 10 s) for every process of the
    hostile bot to be gone, then kill (by id) and name any that is not. The match must have
    been unaffected: it verifies, and no seat but a hostile one is charged a fault."""
    workdir = tmp_path / "match"
    spec = MatchSpec(match_id=f"atk-{name}-{marker[-6:]}", variant=variant, seed="13",
                     max_deals=1)
    if UNCONFINED:
        kw["sandbox"] = UNCONFINED
    try:
        result, record, _ = run_match(spec, bots, workdir, **kw)
    finally:
        wait_until(lambda: not processes_of(marker), 10)
        left = processes_of(marker)
        kill_all(left)
    logs = {i: (workdir / f"seat{i}.log").read_text(errors="replace")
            if (workdir / f"seat{i}.log").exists() else "" for i in range(4)}
    played = Played(result, record, logs,
                    {i: probes(workdir / f"seat{i}.log") if logs[i] else [] for i in range(4)},
                    left)
    assert MatchFile.from_dict(json.loads(json.dumps(record))).verify() == []
    others = [f for f in record["faults"] if f.get("seat") not in hostile_seats]
    assert others == [], f"faults of the other seats: {others}"
    forfeit = result["forfeit"]
    assert forfeit is None or forfeit["seat"] in hostile_seats, forfeit
    return played


def assert_nothing_left(played: Played) -> None:
    left = played.left_behind
    assert not left, (f"{len(left)} processes of the hostile bot alive after the match (killed "
                      f"now), such as {sorted(set(left.values()))[:4]}")


@pytest.fixture
def marker():
    return f"hostile-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def worker_secrets(monkeypatch, tmp_path):
    """A worker's secrets in the referee's environment, and a real store (SQLite) it names."""
    u = uuid.uuid4().hex[:10]
    store = tmp_path / "store" / "arena.sqlite"
    store.parent.mkdir()
    with sqlite3.connect(store) as db:
        db.execute("create table season_secrets (season text, seed text)")
        db.execute("insert into season_secrets values ('s1', ?)", (f"deal-seed-{u}",))
    values = {k: (v or "").format(u=u) for k, v in SECRETS.items()}
    values["ARENA_DB"] = f"sqlite:///{store}"
    for k, v in values.items():
        monkeypatch.setenv(k, v)
    return {"values": values, "store": store, "seed": f"deal-seed-{u}"}


# -- row 1 --------------------------------------------------------------------------------------
def test_a_thief_cannot_read_an_opponents_token_or_take_its_seat(tmp_path, marker):
    """Seat 0 reads /proc/PID/environ for the other seats' ARENA_TOKEN, finds their sockets
    and presents an opponent's token (on the opponent's socket, then on its own) before the
    opponent's real bot connects (2.5 s later). Nothing is read, nothing reached, no seat
    taken: the real bots played their seats, and any stream of the thief's was refused."""
    late = dataclasses.replace(RANDOM, command=("python3", "-c", VICTIM_DELAY))
    played = play(tmp_path, "steal", [hostile(["steal"], marker), late, RANDOM, late], {0},
                  marker)
    assert_nothing_left(played)
    _no_seat_taken(played)
    played.failed(0, "environ_token", "socket_reach")


def test_a_leaked_token_takes_no_seat(tmp_path, marker):
    """Seat 0 is given both opponents' tokens (as if they had leaked) and presents them, on
    each opponent's socket if it can find one and on its own, before the opponents' real bots
    connect: every such stream is refused (the record lists them, as the thief's), and the
    real bots play their seats."""
    tokens = [secrets.token_urlsafe(24) for _ in range(4)]
    late = dataclasses.replace(RANDOM, command=("python3", "-c", VICTIM_DELAY))
    thief = hostile(["given_token"], marker, "--stolen", f"1:{tokens[1]}",
                    "--stolen", f"3:{tokens[3]}")
    played = play(tmp_path, "leaked", [thief, late, RANDOM, late], {0}, marker, tokens=tokens)
    assert_nothing_left(played)
    _no_seat_taken(played)
    for p in played.lines(0, "seat_takeover"):
        assert "PERMISSION_DENIED" in p["detail"], p["detail"]
    thief_refused = [r for r in played.record["refused_streams"] if r["bot"] == "hostile-thief"]
    assert thief_refused, "the referee's record does not list the thief's refused streams"


def _no_seat_taken(played: Played) -> None:
    """No seat_takeover line says welcomed; one for each opponent; the victims played."""
    takeovers = played.lines(0, "seat_takeover")
    lost_race = [p for p in takeovers if not p["ok"] and "ALREADY_EXISTS" in p["detail"]
                 and "PERMISSION_DENIED" not in p["detail"]]
    assert not lost_race, f"the victim connected before the thief tried: {lost_race}"
    taken = [p["detail"] for p in takeovers if p["ok"]]
    assert not taken, f"seats taken with a stolen token: {taken}"
    assert sorted(json.loads(p["detail"])["seat"] for p in takeovers) == [1, 3], (
        f"a takeover probe did not run:\n{played.logs[0][-3000:]}")
    for victim in (1, 3):  # the real bot played its seat: the SDK says nothing unless it failed
        assert "arena_bot:" not in played.logs[victim], (
            f"seat {victim}'s real bot did not play its seat:\n{played.logs[victim][-1000:]}")
    turned_away = [r for r in played.record["refused_streams"] if r["bot"] != "hostile-thief"]
    assert not turned_away, f"real bots refused (their seat was taken): {turned_away}"
    thief = [r for r in played.record["refused_streams"] if r["bot"] == "hostile-thief"]
    assert all("already connected" not in r["reason"] for r in thief), thief


def test_a_bot_cannot_read_the_referees_or_an_opponents_memory(tmp_path, marker):
    """/proc/PID/maps and /proc/PID/mem of the referee (the bot's parent) and of the other
    seats' bots, searched for card data: none of it can be read."""
    played = play(tmp_path, "memory", [hostile(["memory"], marker), RANDOM, RANDOM, RANDOM],
                  {0}, marker)
    assert_nothing_left(played)
    played.failed(0, "proc_memory")


COLLUSION_CHANNELS = ("collude_tmp_file", "collude_dev_shm", "collude_abstract_socket",
                      "collude_path_socket", "collude_loopback_tcp", "collude_posix_shm",
                      "collude_sysv_shm", "collude_signal", "collude_flock",
                      "collude_record_lock", "collude_inotify", "collude_page_cache")


def test_partners_cannot_share_a_hand_outside_the_referee(tmp_path, marker):
    """Seat 0 publishes its hand, before it connects, in /tmp, in /dev/shm, on an abstract
    Unix socket (``\\0arena-collude``), a path one and 127.0.0.1, in POSIX and SysV shared
    memory, in ``flock`` and record locks on files both partners see (its bot.py, the SDK's
    arena_bot.py), in opens of its bot.py that an inotify watch sees, in a page of its bot.py
    it keeps in the page cache, and signals its partner's pid; seat 2
    (the same bot, another process) looks on each channel once welcomed (so after seat 0
    published): it receives nothing."""
    bot = hostile(["collude"], marker)
    match_id = f"atk-collude-{marker[-6:]}"  # (as play() names it)
    try:
        played = play(tmp_path, "collude", [bot, RANDOM, bot, RANDOM], {0, 2}, marker)
    finally:
        for f in [*Path("/tmp").glob(f"arena-collude-{match_id}*"),
                  *Path("/dev/shm").glob(f"arena-collude-{match_id}*")]:
            f.unlink(missing_ok=True)
        _remove_sysv(zlib.crc32(f"arena-collude-{match_id}".encode()) & 0x7FFFFFFF)
    assert_nothing_left(played)
    played.one(0, "info_collude_send")
    played.failed(2, *COLLUSION_CHANNELS)


def _remove_sysv(key: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    shmid = libc.shmget(ctypes.c_int(key), ctypes.c_size_t(0), ctypes.c_int(0))
    if shmid >= 0:
        libc.shmctl(shmid, 0, None)  # IPC_RMID


def test_a_bots_environment_holds_none_of_the_workers_secrets(tmp_path, marker, worker_secrets):
    """The bot prints its whole environment and every other process's it can read: no
    secret of the referee's (the store's and broker's URLs) is there, and its own holds only its
    ARENA_* variables and harmless basics."""
    played = play(tmp_path, "environment",
                  [hostile(["environment"], marker), RANDOM, RANDOM, RANDOM], {0}, marker)
    assert_nothing_left(played)
    line = played.one(0, "environment")
    own = json.loads(line["detail"])["own"]
    log = played.logs[0]
    leaked = {k: v for k, v in worker_secrets["values"].items() if v in log}
    assert not leaked, f"secrets of the referee's environment in the bot's log: {sorted(leaked)}"
    named = sorted(set(worker_secrets["values"]) & set(own))
    assert not named, f"the bot's environment names the referee's {named}"
    extra = sorted(set(own) - ALLOWED_ENV)
    assert not extra, f"the bot's environment holds the referee's {extra}"
    played.failed(0, "environment")


def _host_address() -> str | None:
    """This machine's address on its network (not loopback), if it has one."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))  # no packet is sent: only a route is chosen
        address = s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()
    return None if address.startswith("127.") else address


def test_a_bot_reaches_no_service_and_no_network(tmp_path, marker):
    """Redis (127.0.0.1:6379, with a PING) and PostgreSQL (127.0.0.1:5432) on the host, their
    Unix sockets (and MariaDB's), a listener of this test's on the host's own network address,
    a public address and DNS: none is reached (and the test's listener saw no connection)."""
    listener, address = None, _host_address()
    accepted = []
    extra: tuple[str, ...] = ()
    if address is not None:
        listener = socket.create_server((address, 0))
        listener.settimeout(0.2)
        extra = ("--outbound", f"{address}:{listener.getsockname()[1]}")
        stop = threading.Event()

        def accept():
            while not stop.is_set():
                try:
                    conn, peer = listener.accept()
                except OSError:
                    continue
                accepted.append(peer)
                conn.close()
        t = threading.Thread(target=accept, daemon=True)
        t.start()
    try:
        played = play(tmp_path, "network",
                      [hostile(["network"], marker, *extra), RANDOM, RANDOM, RANDOM], {0},
                      marker)
    finally:
        if listener is not None:
            stop.set()
            t.join()
            listener.close()
    assert_nothing_left(played)
    attacks = ["redis_tcp", "postgres_tcp", "outbound_tcp", "outbound_dns", "unix_services"]
    played.failed(0, *attacks, *(["outbound_lan"] if address is not None else []))
    assert not accepted, f"the host's listener on {address} was reached from {accepted}"


# -- row 2 --------------------------------------------------------------------------------------
def test_a_bot_cannot_read_the_store_or_other_bots_nor_write_any_bots_folder(tmp_path, marker,
                                                                            worker_secrets):
    """The store (a SQLite file the referee's environment names, not the bot's) is looked for
    in every environment the bot can read, the working directory's parents (and their
    records/), /tmp, /var/tmp and /dev/shm; other bots' folders (the opponent's, a copy of the
    random bot in a folder of this test's, with a secret file; the repository's other bots) are
    read; the victim's folder and the bot's own are written to (the probe writes only into a
    folder marked ``.arena-victim``, never into real bots). Nothing is read, nothing written."""
    # (in /var/tmp, not under /tmp, which a sandbox has its own of: any folder of the host)
    victim = Path(tempfile.mkdtemp(prefix="arena-victim-", dir="/var/tmp"))
    victim.chmod(0o755)
    try:
        _store_and_folders(tmp_path, marker, worker_secrets, victim)
    finally:
        shutil.rmtree(victim, ignore_errors=True)


def _store_and_folders(tmp_path, marker, worker_secrets, victim: Path) -> None:
    shutil.copy(ROOT / "sample_bots" / "python" / "random" / "bot.py", victim / "bot.py")
    (victim / "bot.toml").write_text(
        'name = "victim"\nversion = "1.0.0"\ncommand = ["python3", "bot.py"]\n'
        f'protocol = "grpc"\npythonpath = ["{ROOT / "sample_bots" / "python"}"]\n')
    victim_secret = f"victim-secret-{uuid.uuid4().hex}"
    (victim / "secret.txt").write_text(victim_secret + "\n")
    (victim / ".arena-victim").write_text("the hostile bot may try to write here\n")
    before = sorted(os.listdir(victim))
    own_before = sorted(os.listdir(HOSTILE_DIR))
    played = play(tmp_path, "store", [hostile(["store", "folders"], marker),
                                      load_manifest(victim), RANDOM, RANDOM], {0}, marker)
    assert_nothing_left(played)
    played.failed(0, "store_read", "read_other_bot", "write_own_folder", "write_other_bot")
    log = played.logs[0]
    assert str(worker_secrets["store"]) not in log, "the bot found the store's path"
    assert worker_secrets["seed"] not in log
    assert victim_secret not in log, "the bot read the victim bot's folder"
    assert sorted(os.listdir(victim)) == before, "the bot wrote into the victim's folder"
    assert sorted(os.listdir(HOSTILE_DIR)) == own_before


def test_a_manifests_pythonpath_opens_no_folder_of_the_host(tmp_path, marker, worker_secrets):
    """A bot's author writes its manifest: one whose ``pythonpath`` names the store's folder
    and another bot's (a copy of the random bot with a secret file) gets neither read. Either
    the manifest is refused (when it is read, or the seat never plays) or the bot, which reads
    every file on its PYTHONPATH that is not code, finds nothing of them."""
    store_dir = worker_secrets["store"].parent
    work = Path(tempfile.mkdtemp(prefix="arena-pythonpath-", dir="/var/tmp"))
    try:
        work.chmod(0o755)
        victim, thief = work / "victim", work / "thief"
        victim.mkdir(mode=0o755)
        thief.mkdir(mode=0o755)
        victim_secret = f"victim-secret-{uuid.uuid4().hex}"
        (victim / "secret.txt").write_text(victim_secret + "\n")
        shutil.copy(HOSTILE_DIR / "bot.py", thief / "bot.py")
        sdk = ROOT / "sample_bots" / "python"
        (thief / "bot.toml").write_text(
            f'name = "hostile-pythonpath"\nversion = "1.0.0"\nprotocol = "grpc"\n'
            f'command = ["python3", "bot.py", "--marker", "{marker}", "--attacks", '
            f'"pythonpath"]\npythonpath = ["{sdk}", "{store_dir}", "{victim}"]\n')
        try:
            bot = load_manifest(thief)
            played = play(tmp_path, "pythonpath", [bot, RANDOM, RANDOM, RANDOM], {0}, marker)
        except ValueError as e:  # (ManifestError is one) refused before anything ran
            assert "pythonpath" in str(e), e
            return
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert_nothing_left(played)
    if not played.probes[0] and played.result["forfeit"]:
        return  # refused at launch: the seat never played
    line = played.one(0, "pythonpath_read")
    read = json.loads(line["detail"])
    opened = {e: files for e, files in read.items()
              if Path(e) in (store_dir, victim) and files}
    assert not opened, f"files read through the manifest's pythonpath: {opened}"
    assert worker_secrets["seed"] not in played.logs[0] and victim_secret not in played.logs[0]


def test_a_bot_leaves_no_process_file_or_load_behind_and_the_match_is_unaffected(tmp_path,
                                                                                 marker):
    """The bot double-forks a daemon into its own session, starts 200 children (half in
    their own process group), allocates and touches 1.5 GB, writes 200 MB in /tmp and starts a
    child that burns CPU, then plays. The match completes and verifies, no other seat is
    charged anything, and afterwards no process of the bot is alive and its file is not on the
    host."""
    played = play(tmp_path, "hog", [hostile(["leftovers", "hog"], marker), RANDOM, RANDOM,
                                    RANDOM], {0}, marker)
    hog_file = Path(f"/tmp/hostile-hog-{marker}.bin")
    on_host = hog_file.exists()
    hog_file.unlink(missing_ok=True)
    played.one(0, "info_leftovers")
    played.one(0, "info_hog")
    assert len(played.result["deals"]) == 1 or played.result["forfeit"] is not None
    assert_nothing_left(played)
    assert not on_host, f"{hog_file} (200 MB) was left on the host's disk"
