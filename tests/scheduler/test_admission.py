"""A version's admission check cannot be told from play, and a crash limit stands behind it
(issue #44, item 9), with real bot processes in the real sandbox, a real store (a SQLite file)
and the service on a real uvicorn server.

The probe bot below plays (uniformly over the referee's hint) only when its match id starts with
a given prefix, else its process ends at once and its team forfeits; it writes what it was
given (its environment, the Welcome, the deals it saw, its limits) to its seat's log:

- a bot that plays only under a match id ``check-...`` passed the check of every upload and the
  organiser's own ``arena bots check`` and ``arena season run``, then forfeited every real
  match: now each check plays a pair as a season does, and it fails them;
- a bot that passes its check and then forfeits its ladder matches is suspended after three of
  its last five: it leaves the ladder, its author reads the state and the reason, no scrimmage
  takes it, the audit log says so, and the organiser lifts it;
- the check's match ids, environment, Welcome, deals and limits, as a bot reads them, are those
  of the ladder's real matches.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import httpx
from browser_helpers import serving
from league_helpers import BOTS, arena

from scheduler.execute import execute_match
from scheduler.ladder import LadderRun, roster
from scheduler.league import open_season
from scheduler.registry.owners import add_author
from scheduler.registry.submissions import submit
from scheduler.season import load_season
from scheduler.service.config import ServiceConfig
from scheduler.service.intake import check_version
from scheduler.store import open_store
from web.app import create_app

PROBE = '''"""probe: plays at random under a match id starting with PLAYS, else ends at once."""
import json, os, random, resource, sys
from arena_sdk import Bot, run

PLAYS = {plays!r}
LIMITS = ("RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_NOFILE", "RLIMIT_CPU", "RLIMIT_FSIZE")


def say(what, value):
    print(what + " " + json.dumps(value, sort_keys=True), file=sys.stderr, flush=True)


class Probe(Bot):
    name = "probe"

    def __init__(self):
        super().__init__()
        self.rng = random.Random()

    def on_welcome(self, w):
        tc = w.time_control
        say("WELCOME", {{"match_id": w.match_id, "seat": w.seat, "variant": w.variant,
                        "options": json.loads(w.options_json or "{{}}"),
                        "time_control": [tc.per_decision_ms, tc.bank_ms, tc.max_strikes,
                                         tc.reconnect_window_ms, tc.max_reconnects]}})

    def choose(self, request):
        return self.rng.choice(request.hint.actions)

    def on_match_end(self, end):
        say("DEALS", len(json.loads(end.result_json)["deals"]))


if __name__ == "__main__":
    if not os.environ.get("ARENA_MATCH_ID", "").startswith(PLAYS):
        sys.exit(0)  # no show: its team forfeits
    say("ENV", dict(os.environ))
    say("LIMITS", {{k: resource.getrlimit(getattr(resource, k)) for k in LIMITS}})
    sys.exit(run(Probe()))
'''


def probe(where: Path, name: str, plays: str) -> Path:
    """The probe bot as ``name@1.0.0``, playing under match ids that start with ``plays``."""
    folder = where / name
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(f'name = "{name}"\nversion = "1.0.0"\n'
                                     'command = ["python3", "bot.py"]\nprotocol = "grpc"\n')
    (folder / "bot.py").write_text(PROBE.format(plays=plays))
    return folder


def house_bot(where: Path) -> Path:
    """The random sample bot as ``house@1.0.0``: the organiser's (a house bot)."""
    folder = where / "house"
    shutil.copytree(BOTS / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "with-requests.toml").unlink()
    toml = (folder / "bot.toml").read_text()
    (folder / "bot.toml").write_text(re.sub(r'(?m)^name = .*$', 'name = "house"', toml))
    return folder


def ladder_file(where: Path, name: str, deals: int = 1, extra: str = "") -> Path:
    """A ladder every ready version enters: ``deals`` a match, two pairs in play at once."""
    path = where / f"{name}.toml"
    path.write_text(f'name = "{name}"\nformat = "ladder"\nvariant = "two-deck-fry"\n'
                    f'deals_per_set = {deals}\nqueue_ahead = 4\nplacement_pairs = 2\n'
                    f'bots = "every ready version"\n{extra}')
    return path


class Service:
    """A store with the organiser's house bot and author alice, and the service over it."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.db = f"sqlite:///{tmp / 'arena.db'}"
        self.store = open_store(self.db)
        self.token = add_author(self.store, "alice")
        submit(self.store, house_bot(tmp / "org"))  # no author: the organiser's, ready
        self.app = create_app(self.db, ServiceConfig())

    def upload(self, base: str, folder: Path) -> int:
        """alice uploads ``folder`` through the API: its version id, queued."""
        import io
        import tarfile
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            tar.add(folder, arcname=".")
        got = httpx.post(f"{base}/api/v1/bots", content=buf.getvalue(), timeout=30,
                         headers={"Authorization": f"Bearer {self.token}"})
        assert got.status_code == 202 and got.json()["state"] == "queued", got.text
        return self.store.registry.version(got.json()["name"], got.json()["version"]).id

    def version(self, base: str, name: str) -> dict:
        got = httpx.get(f"{base}/api/v1/bots/{name}/1.0.0", timeout=30,
                        headers={"Authorization": f"Bearer {self.token}"})
        assert got.status_code == 200, got.text
        return got.json()


def said(log: str, what: str) -> list:
    """Every value the probe said under ``what`` in a seat's log."""
    return [json.loads(line[len(what) + 1:]) for line in log.splitlines()
            if line.startswith(what + " ")]


# -- the check cannot be recognised ---------------------------------------------------------
def test_a_bot_that_plays_only_under_a_check_match_id_is_refused_everywhere(tmp_path):
    """It played its check (``check-NAME``: one deal) and was ready, then forfeited every real
    match; now the upload's check, ``arena bots check`` and a season's admission refuse it."""
    svc = Service(tmp_path)
    hostile = probe(tmp_path / "alice", "sly", plays="check-")
    with serving(svc.app) as base:
        vid = svc.upload(base, hostile)
        started = time.monotonic()
        assert check_version(svc.store, vid) == "refused", svc.store.versions.state(vid)
        took = time.monotonic() - started
        v = svc.version(base, "sly")
    assert v["state"] == "refused" and v["reason"].startswith("the smoke match failed: "), v
    assert "never_connected" in v["reason"] or "forfeit" in v["reason"], v["reason"]
    assert took < 60, f"the check took {took:.1f} s"
    cli = arena("bots", "check", str(hostile), "--workdir", str(tmp_path / "w"))
    assert cli.returncode == 1 and cli.stdout.startswith("FAIL sly@1.0.0"), \
        cli.stdout + cli.stderr
    path = tmp_path / "spring.toml"
    path.write_text('name = "spring"\nvariant = "two-deck-fry"\ndeal_sets = 1\n'
                    f'deals_per_set = 1\n[[bots]]\nmanifest = "{BOTS / "random"}"\n'
                    f'[[bots]]\nmanifest = "{hostile}"\n')
    run = arena("season", "run", str(path), "--db", f"sqlite:///{tmp_path / 's.db'}",
                "--no-progress", cwd=tmp_path)
    assert run.returncode == 2 and "fails bots check" in run.stderr, run.stdout + run.stderr


def test_the_check_looks_like_the_ladders_matches_from_the_seat(tmp_path):
    """A version uploaded while a ladder runs is checked on a pair that looks, from its seats,
    like one of the ladder's: match ids of its form, the same environment (but its seat, match
    id and token), the same Welcome (variant, options, time control and fault policy), as many
    deals and the same limits; on both sides of the table."""
    svc = Service(tmp_path)
    extra = ('[time_control]\nper_decision_ms = 1500\nbank_ms = 9000\n'
             '[fault_policy]\nmax_strikes = 4\n[sandbox]\nopen_files = 200\n')
    season = load_season(ladder_file(tmp_path, "ladder-a", deals=3, extra=extra))
    open_season(season, svc.store, workdir=tmp_path / "open")
    with serving(svc.app) as base:
        vid = svc.upload(base, probe(tmp_path / "alice", "mirror", plays=""))
        assert check_version(svc.store, vid, workdir=tmp_path / "c") == "ready", \
            svc.store.versions.state(vid)
    checked = {}  # seat -> its log, in each check match
    for folder in sorted((tmp_path / "c" / "check").iterdir()):
        for seat in range(4):
            log = (folder / "logs" / f"seat{seat}.log").read_text(errors="replace")
            if said(log, "ENV"):
                checked[(folder.name, seat)] = log
    runner = LadderRun(svc.store, season, seed=3)
    runner.admit()
    runner.fill()  # its first pairs: mirror against the house bot
    first = svc.store.pages.matches("ladder-a")[0]
    assert execute_match(svc.db, first.id) == "done"
    record = svc.store.results.record(first.id)
    real = {(first.id, seat): record.extra["bot_logs"][str(seat)]
            for seat, name in enumerate(first.seats) if name == "mirror@1.0.0"}
    assert len(checked) == 4 and len(real) == 2, (checked.keys(), real.keys())
    form = re.compile(r"ladder-a-\d{5}")
    assert all(form.fullmatch(mid) for mid, _ in checked), checked.keys()
    assert {seat % 2 for _, seat in checked} == {0, 1}  # both sides of the table

    def seen(log: str) -> dict:
        env = said(log, "ENV")[0]
        welcome = said(log, "WELCOME")[0]
        assert env["ARENA_MATCH_ID"] == welcome["match_id"]
        assert env["ARENA_SEAT"] == str(welcome["seat"])
        return {"env": {k: v for k, v in env.items()
                        if k not in ("ARENA_MATCH_ID", "ARENA_SEAT", "ARENA_TOKEN")},
                "welcome": {k: v for k, v in welcome.items() if k not in ("match_id", "seat")},
                "form": bool(form.fullmatch(welcome["match_id"])),
                "deals": said(log, "DEALS")[0], "limits": said(log, "LIMITS")[0]}
    in_checks = [seen(log) for log in checked.values()]
    in_play = [seen(log) for log in real.values()]
    assert in_play[0]["welcome"]["time_control"][:3] == [1500, 9000, 4]
    assert in_play[0]["deals"] == 3 and in_play[0]["limits"]["RLIMIT_NOFILE"][0] == 200
    for got in in_checks:
        assert got == in_play[0], (got, in_play[0])


# -- the crash limit -----------------------------------------------------------------------
def test_a_version_that_forfeits_its_matches_is_suspended_and_leaves_the_ladder(tmp_path):
    """It passes its check (taken before any season, in a scrimmage's form) and then forfeits
    every ladder match: after three of its last five it is suspended, with a reason naming
    them; the ladder retires it, its author reads it on the API and ``arena bots status``, no
    scrimmage takes it, an audit entry says so; the organiser lifts it."""
    svc = Service(tmp_path)
    with serving(svc.app) as base:
        vid = svc.upload(base, probe(tmp_path / "alice", "flaky", plays="scrimmage-"))
        assert check_version(svc.store, vid) == "ready", svc.store.versions.state(vid)
        season = load_season(ladder_file(tmp_path, "ladder-b"))
        open_season(season, svc.store, workdir=tmp_path / "open")
        runner = LadderRun(svc.store, season, seed=5)
        runner.admit()
        runner.fill()  # two pairs, flaky against the house bot, played by a worker
        played = [m.id for m in svc.store.pages.matches("ladder-b")]
        assert len(played) == 4
        for match_id in played:  # four forfeits, one after the other
            assert execute_match(svc.db, match_id) == "done"
        v = svc.version(base, "flaky")
        assert v["state"] == "suspended", v
        assert v["reason"] == f"forfeited 3 of its last 3 matches: {', '.join(played[:3])}"
        runner.admit()
        entry = {e.bot: e for e in svc.store.ladder.entries("ladder-b")}["flaky@1.0.0"]
        assert entry.retired_at is not None
        assert roster(svc.store, 1).why_out["flaky@1.0.0"] == f"suspended: {v['reason']}"
        ask = httpx.post(f"{base}/api/v1/scrimmages", timeout=30,
                         json={"bot": "flaky@1.0.0", "opponent": "house@1.0.0", "pairs": 1},
                         headers={"Authorization": f"Bearer {svc.token}"})
        assert ask.status_code == 400 and "suspended" in ask.text, ask.text
        token_file = tmp_path / "token"
        token_file.write_text(svc.token)
        token_file.chmod(0o600)
        status = arena("bots", "status", "flaky@1.0.0", "--server", base, "--token-file",
                       str(token_file))
    assert status.returncode == 1, status.stdout + status.stderr
    assert "flaky@1.0.0: suspended" in status.stdout and v["reason"] in status.stdout, \
        status.stdout
    audit = svc.store.audit.entries(action="suspend")
    assert [(a.subject, a.actor) for a in audit] == [("flaky@1.0.0", "crash limit")]
    assert v["reason"] in audit[0].detail
    lift = arena("bots", "unsuspend", "flaky@1.0.0", "--db", svc.db)
    assert lift.returncode == 0, lift.stdout + lift.stderr
    assert svc.store.versions.state(vid).state == "ready"
    assert [a.subject for a in svc.store.audit.entries(action="unsuspend")] == ["flaky@1.0.0"]
    assert "flaky@1.0.0" in roster(svc.store, 1).playing
