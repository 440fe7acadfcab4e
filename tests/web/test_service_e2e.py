"""The submission service end to end, every part a real process: ``arena serve`` and two
``arena worker``s in this machine's network namespace, beside Redis and the store; the
participant in a network namespace of their own, joined to this one by a veth pair, with
nothing but the server's URL, a token file and a bot folder (no store, no broker, no
environment of the arena's). The participant submits, watches the version reach ready, and
reads its state, the season it played and its seat logs; the organiser names the bot by name
in a season and never touches the folder."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from league_helpers import (BOTS, REDIS_URL, Worker, arena, env, flush_redis, stop_all,
                            wait_for)

from conftest import ROOT


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


@contextlib.contextmanager
def participant_namespace():
    """A network namespace joined to this one by a veth pair on a /30 of its own: (its name,
    this side's address, its address). Removed afterwards."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.fail("this test makes a network namespace: it needs root and `ip` (iproute2)")
    tag = uuid.uuid4().hex[:8]
    ns, here, there = f"arena-{tag}", f"ah{tag}", f"ap{tag}"
    net = int(tag[:4], 16) % 16000
    host_ip = f"10.{200 + net // 4000}.{(net // 16) % 250}.{(net % 16) * 4 + 1}"
    peer_ip = host_ip.rsplit(".", 1)[0] + f".{int(host_ip.rsplit('.', 1)[1]) + 1}"
    try:
        _ip("netns", "add", ns)
        _ip("link", "add", here, "type", "veth", "peer", "name", there)
        _ip("link", "set", there, "netns", ns)
        _ip("addr", "add", f"{host_ip}/30", "dev", here)
        _ip("link", "set", here, "up")
        _ip("netns", "exec", ns, "ip", "addr", "add", f"{peer_ip}/30", "dev", there)
        _ip("netns", "exec", ns, "ip", "link", "set", there, "up")
        _ip("netns", "exec", ns, "ip", "link", "set", "lo", "up")
        yield ns, host_ip, peer_ip
    finally:
        _ip("netns", "del", ns, check=False)
        _ip("link", "del", here, check=False)


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class Participant:
    """Commands run in the participant's namespace, in their folder, with a bare
    environment: PATH, HOME and where Python finds the ``arena`` command, nothing else."""

    def __init__(self, ns: str, home: Path, server: str, token_file: Path) -> None:
        self.ns, self.home, self.server, self.token_file = ns, home, server, token_file
        self.env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
                    "PYTHONPATH": env()["PYTHONPATH"]}

    def run(self, *argv: str, timeout: float = 240) -> subprocess.CompletedProcess:
        return subprocess.run(["ip", "netns", "exec", self.ns, *argv], cwd=self.home,
                              env=self.env, capture_output=True, text=True, timeout=timeout)

    def arena(self, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
        return self.run(sys.executable, "-m", "cli", *args, "--server", self.server,
                        "--token-file", str(self.token_file), timeout=timeout)


def test_a_participant_submits_and_follows_their_bot_from_another_network(tmp_path):
    flush_redis()
    db = f"sqlite:///{tmp_path / 'store' / 'arena.db'}"
    (tmp_path / "store").mkdir()
    token = arena("authors", "add", "alice", "--db", db, check=True).stdout.strip()
    # the participant's side: a folder of their own with their bot and their token
    home = tmp_path / "participant"
    bot = home / "alice-bot"
    shutil.copytree(BOTS / "random", bot, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (bot / "bot.toml").read_text()
    (bot / "bot.toml").write_text(re.sub(r'(?m)^name = .*$', 'name = "alice-bot"', toml))
    code = (bot / "bot.py").read_text()
    (bot / "bot.py").write_text(code.replace(
        'if __name__ == "__main__":\n',
        'if __name__ == "__main__":\n    print("alice-bot is playing", file=sys.stderr, '
        'flush=True)\n'))
    (home / "token").write_text(token + "\n")
    (home / "token").chmod(0o600)
    workers = []
    service = None
    with participant_namespace() as (ns, host_ip, peer_ip):
        port = _free_port(host_ip)
        server = f"http://{host_ip}:{port}"
        try:
            log = open(tmp_path / "serve.log", "wb")
            service = subprocess.Popen(
                [sys.executable, "-m", "cli", "serve", "--db", db, "--host", host_ip,
                 "--port", str(port), "--broker", REDIS_URL], cwd=ROOT, env=env(),
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            for i in range(2):
                (tmp_path / f"w{i}").mkdir()
                workers.append(Worker(db, tmp_path / f"w{i}.log", cwd=tmp_path / f"w{i}",
                                      intake=1))
            for w in workers:
                w.wait_ready()

            def answers() -> bool:
                try:
                    socket.create_connection((host_ip, port), timeout=1).close()
                    return True
                except OSError:
                    assert service.poll() is None, (tmp_path / "serve.log").read_text()
                    return False
            wait_for(answers, 60, "the service to answer")
            me = Participant(ns, home, server, home / "token")
            # the participant reaches the service, and nothing else of the arena's
            reach = me.run(sys.executable, "-c", f"""
import socket
for host, port in (("{host_ip}", {port}), ("{host_ip}", 6379), ("127.0.0.1", 6379),
                   ("127.0.0.1", 5432), ("{host_ip}", 5432)):
    try:
        socket.create_connection((host, port), timeout=2).close()
        print(host, port, "open")
    except OSError:
        print(host, port, "closed")
""")
            assert reach.stdout.split("\n")[:5] == [
                f"{host_ip} {port} open", f"{host_ip} 6379 closed", "127.0.0.1 6379 closed",
                "127.0.0.1 5432 closed", f"{host_ip} 5432 closed"], reach.stdout + reach.stderr
            # submit, and follow the build and check to ready
            sub = me.arena("bots", "submit", "alice-bot", "--wait")
            assert sub.returncode == 0, sub.stdout + sub.stderr
            assert "alice-bot@1.0.0" in sub.stdout and "queued" in sub.stdout
            assert sub.stdout.rstrip().endswith("ready"), sub.stdout
            # the organiser's season names the bot by name (a house bot beside it)
            season = tmp_path / "open.toml"
            season.write_text('name = "open-e2e"\nvariant = "two-deck-fry"\ndeal_sets = 1\n'
                              'deals_per_set = 1\n[[bots]]\nbot = "alice-bot"\n[[bots]]\n'
                              f'manifest = "{BOTS / "random"}"\nname = "house"\n')
            arena("season", "run", str(season), "--db", db, "--broker", REDIS_URL,
                  "--no-progress", timeout=300, check=True)
            # the participant sees it played, and reads their seats' logs
            st = me.arena("bots", "status", "alice-bot")
            assert st.returncode == 0, st.stdout + st.stderr
            assert "alice-bot@1.0.0: ready" in st.stdout and "seasons: open-e2e" in st.stdout
            played = re.findall(r"match (open-e2e-\d+) done", st.stdout)
            assert len(played) == 2, st.stdout
            logs = me.arena("bots", "logs", "alice-bot@1.0.0", "--match", played[0])
            assert logs.returncode == 0, logs.stdout + logs.stderr
            assert logs.stdout.count("alice-bot is playing") == 2, logs.stdout  # seats 0, 2
            assert logs.stdout.count("== match") == 2
        finally:
            stop_all(workers)
            if service is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(service.pid, 15)
                service.wait(20)
    # the organiser's store holds the version the participant sent, built and checked
    audit = arena("audit", "--db", db, check=True).stdout
    assert re.search(r"submit +alice +alice-bot@1\.0\.0 .* from " + re.escape(peer_ip), audit), \
        audit
