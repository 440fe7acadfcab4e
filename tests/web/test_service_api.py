"""The submission service over HTTP (the real app, in process): what a second author, an
anonymous caller and a revoked token are refused; the limits and the login limit, each saying
which limit and when it resets; the audit log; a season taking an author's latest ready
version; hostile input to every new endpoint; and Schemathesis over the new API."""

from __future__ import annotations

import io
import re
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from league_helpers import BOTS, arena

from scheduler.registry import submissions
from scheduler.registry.archives import RegistryError
from scheduler.registry.owners import add_author, revoke_token, rotate_token
from scheduler.service.config import ServiceConfig
from scheduler.service.intake import check_version
from scheduler.service.limits import Limits
from scheduler.store import open_store
from web.app import create_app

HELLO = "says hello from its seat"


def bot_folder(where: Path, name: str, version: str = "1.0.0", description: str = "",
               hello: bool = True) -> Path:
    """The random sample bot as ``name@version``; it writes one line to its log at start."""
    folder = where / f"{name}-{version}"
    shutil.copytree(BOTS / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "with-requests.toml").unlink()
    toml = (folder / "bot.toml").read_text()
    toml = re.sub(r'(?m)^name = .*$', f'name = "{name}"', toml)
    toml = re.sub(r'(?m)^version = .*$', f'version = "{version}"', toml)
    if description:
        toml = re.sub(r'(?m)^description = .*$', f"description = '{description}'", toml)
    (folder / "bot.toml").write_text(toml)
    if hello:
        code = (folder / "bot.py").read_text()
        code = code.replace('if __name__ == "__main__":\n',
                            f'if __name__ == "__main__":\n    print("{name} {HELLO}", '
                            'file=sys.stderr, flush=True)\n')
        (folder / "bot.py").write_text(code)
    return folder


def archive(folder: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(folder, arcname=".")
    return buf.getvalue()


class Service:
    """The app over a fresh store, with authors alice, bob and carol and an organiser."""

    def __init__(self, tmp: Path, limits: Limits | None = None) -> None:
        self.tmp = tmp
        self.db = f"sqlite:///{tmp / 'arena.db'}"
        self.store = open_store(self.db)
        self.tokens = {n: add_author(self.store, n) for n in ("alice", "bob", "carol")}
        self.tokens["org"] = add_author(self.store, "org", role="organiser")
        self.app = create_app(self.db, ServiceConfig(limits=limits or Limits()))
        self.client = TestClient(self.app)

    def auth(self, who: str) -> dict:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def upload(self, who: str, folder: Path):
        return self.client.post("/api/v1/bots", content=archive(folder), headers=self.auth(who))

    def ready(self, who: str, folder: Path) -> str:
        """Upload and let a worker's check run here (in process): name@version, ready."""
        got = self.upload(who, folder)
        assert got.status_code == 202, got.text
        v = got.json()
        row = self.store.registry.version(v["name"], v["version"])
        assert check_version(self.store, row.id) == "ready", self.store.versions.state(row.id)
        return f"{v['name']}@{v['version']}"


@pytest.fixture()
def svc(tmp_path):
    return Service(tmp_path)


def play_season(svc: Service, name: str, bots: list[str]) -> list[str]:
    """A season naming registry bots by name, played here; its match ids."""
    lines = [f'name = "{name}"', 'variant = "two-deck-fry"', "deal_sets = 1",
             "deals_per_set = 1"]
    for b in bots:
        lines += ["[[bots]]", f'bot = "{b}"']
    path = svc.tmp / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    arena("season", "run", str(path), "--db", svc.db, "--no-progress", "--workers", "2",
          check=True)
    return [m.id for m in svc.store.pages.matches(name)]


# -- another author, nobody, a revoked token ------------------------------------------------
def test_a_second_author_cannot_touch_the_first_authors_bot(svc, tmp_path):
    alice = svc.ready("alice", bot_folder(tmp_path, "alice-bot"))
    house = tmp_path / "house"
    submissions.submit(svc.store, bot_folder(house, "house", hello=False))
    match_id = play_season(svc, "s1", ["alice-bot", "house"])[0]
    seats = svc.store.pages.match(match_id).seats
    mine = seats.index("alice-bot")
    c = svc.client
    # alice reads her own things
    assert c.get("/api/v1/bots/alice-bot/1.0.0", headers=svc.auth("alice")).json()["state"] \
        == "ready"
    log = c.get(f"/api/v1/matches/{match_id}/logs/{mine}", headers=svc.auth("alice"))
    assert log.status_code == 200 and f"alice-bot {HELLO}" in log.text
    got = c.get("/api/v1/bots/alice-bot/1.0.0/archive", headers=svc.auth("alice"))
    assert got.status_code == 200
    with tarfile.open(fileobj=io.BytesIO(got.content)) as tar:
        assert f"alice-bot {HELLO}" in tar.extractfile("bot.py").read().decode()
    # bob: a version of her bot, her state, build log, archive and seat log are refused
    refused = svc.upload("bob", bot_folder(tmp_path / "b", "alice-bot", "2.0.0"))
    assert refused.status_code == 400
    assert "belongs to author 'alice'" in refused.json()["detail"]
    assert svc.store.registry.version("alice-bot", "2.0.0") is None
    same = svc.upload("bob", bot_folder(tmp_path / "c", "alice-bot"))  # her very version
    assert same.status_code == 400 and "belongs to author 'alice'" in same.json()["detail"]
    for path in ("/api/v1/bots/alice-bot/1.0.0", "/api/v1/bots/alice-bot/1.0.0/build-log",
                 "/api/v1/bots/alice-bot/1.0.0/archive",
                 f"/api/v1/matches/{match_id}/logs/{mine}"):
        got = c.get(path, headers=svc.auth("bob"))
        assert got.status_code == 403, (path, got.text)
        assert HELLO not in got.text
    assert [v["name"] for v in c.get("/api/v1/bots", headers=svc.auth("bob")).json()] == []
    # the public match page shows no log tail of hers to bob nor to anyone
    assert HELLO not in c.get(f"/api/matches/{match_id}", headers=svc.auth("bob")).text
    # the organiser sees it all
    assert c.get(f"/api/v1/matches/{match_id}/logs/{mine}",
                 headers=svc.auth("org")).status_code == 200
    # scrimmages: bob's bot is the opponent; he sees it but cannot cancel it; carol neither
    bob = svc.ready("bob", bot_folder(tmp_path / "d", "bob-bot"))
    s = c.post("/api/v1/scrimmages", json={"bot": alice, "opponent": bob, "pairs": 1},
               headers=svc.auth("alice"))
    assert s.status_code == 202, s.text
    sid = s.json()["id"]
    assert c.get(f"/api/v1/scrimmages/{sid}", headers=svc.auth("bob")).status_code == 200
    no = c.post(f"/api/v1/scrimmages/{sid}/cancel", headers=svc.auth("bob"))
    assert no.status_code == 403 and "another author" in no.json()["detail"]
    assert c.get(f"/api/v1/scrimmages/{sid}", headers=svc.auth("carol")).status_code == 403
    assert c.post(f"/api/v1/scrimmages/{sid}/cancel",
                  headers=svc.auth("carol")).status_code == 403
    assert svc.store.scrimmages.get(sid).state == "queued"
    # bob cannot ask for a scrimmage of alice's bot either
    assert c.post("/api/v1/scrimmages", json={"bot": alice, "opponent": bob, "pairs": 1},
                  headers=svc.auth("bob")).status_code == 403
    ok = c.post(f"/api/v1/scrimmages/{sid}/cancel", headers=svc.auth("alice"))
    assert ok.status_code == 200 and ok.json()["state"] == "cancelled"


def test_unauthenticated_writes_are_refused(svc, tmp_path):
    c = svc.client
    data = archive(bot_folder(tmp_path, "anon-bot"))
    for method, path, kw in (("POST", "/api/v1/bots", {"content": data}),
                             ("POST", "/api/v1/scrimmages",
                              {"json": {"bot": "a@1", "opponent": "b@1", "pairs": 1}}),
                             ("POST", "/api/v1/scrimmages/1/cancel", {}),
                             ("POST", "/api/v1/admin/authors/bob/disable", {}),
                             ("GET", "/api/v1/bots", {}), ("GET", "/api/v1/me", {})):
        got = c.request(method, path, **kw)
        assert got.status_code == 401, (path, got.text)
        assert got.headers["www-authenticate"] == "Bearer"
        wrong = c.request(method, path, headers={"Authorization": "Bearer not-a-token"}, **kw)
        assert wrong.status_code == 401, (path, wrong.text)
    # the pages' forms: no session, then a session without its CSRF token
    assert c.post("/me/upload", files={"archive": ("a.tar.gz", data)}).status_code == 401
    c.post("/login", data={"token": svc.tokens["alice"]}, follow_redirects=False)
    assert c.cookies.get("arena_session")
    no_csrf = c.post("/me/upload", files={"archive": ("a.tar.gz", data)})
    assert no_csrf.status_code == 403 and "CSRF" in no_csrf.text
    forged = c.post("/me/upload", data={"csrf": "forged"}, files={"archive": ("a.tar.gz", data)})
    assert forged.status_code == 403
    # a cookie is no key to the API's writes (no cross-site write rides on it)
    assert c.post("/api/v1/bots", content=data).status_code == 401
    assert svc.store.registry.versions() == []
    # organiser's endpoints refuse an author
    assert c.get("/api/v1/admin/queue", headers=svc.auth("bob")).status_code == 403


def test_a_revoked_rotated_or_disabled_token_stops_working(svc):
    c = svc.client
    assert c.get("/api/v1/me", headers=svc.auth("alice")).json()["name"] == "alice"
    c.post("/login", data={"token": svc.tokens["alice"]})
    assert c.get("/me").status_code == 200
    revoke_token(svc.store, "alice")
    assert c.get("/api/v1/me", headers=svc.auth("alice")).status_code == 401
    assert c.get("/me", follow_redirects=False).status_code == 303  # her session ended: to /login
    new = rotate_token(svc.store, "alice")
    assert c.get("/api/v1/me", headers=svc.auth("alice")).status_code == 401
    assert c.get("/api/v1/me", headers={"Authorization": f"Bearer {new}"}).status_code == 200
    # the organiser disables bob over the API; his token stops working
    assert c.get("/api/v1/me", headers=svc.auth("bob")).status_code == 200
    assert c.post("/api/v1/admin/authors/bob/disable",
                  headers=svc.auth("org")).status_code == 200
    assert c.get("/api/v1/me", headers=svc.auth("bob")).status_code == 401
    assert {e.action for e in svc.store.audit.entries()} >= {"login", "disable"}


# -- limits and the audit log ---------------------------------------------------------------
def test_each_limit_refuses_with_its_name_and_reset(tmp_path):
    svc = Service(tmp_path, Limits(versions_per_day=3, builds_in_flight=1,
                                   scrimmages_in_flight=1, archive_bytes=20000,
                                   scrimmage_pairs=3, logins=3))
    c = svc.client
    first = svc.ready("alice", bot_folder(tmp_path, "alice-bot", "1.0.0"))
    queued = svc.upload("alice", bot_folder(tmp_path, "alice-bot", "2.0.0"))
    assert queued.status_code == 202 and queued.json()["state"] == "queued"
    # builds in flight: 2.0.0 is queued
    v3 = bot_folder(tmp_path, "alice-bot", "3.0.0")
    busy = svc.upload("alice", v3)
    assert busy.status_code == 429 and "1 of your versions are queued" in busy.json()["detail"]
    assert int(busy.headers["retry-after"]) >= 1
    row = svc.store.registry.version("alice-bot", "2.0.0")
    assert check_version(svc.store, row.id) == "ready"
    # versions per day: three today
    assert svc.upload("alice", v3).status_code == 202
    day = svc.upload("alice", bot_folder(tmp_path, "alice-bot", "4.0.0"))
    assert day.status_code == 429
    assert re.search(r"3 versions per author per 24 hours; it resets at \d{4}-\d\d-\d\d "
                     r"\d\d:\d\d:\d\d UTC", day.json()["detail"]), day.json()
    assert 86000 < int(day.headers["retry-after"]) <= 86400
    # the archive's size, before anything is read into the registry
    big = bot_folder(tmp_path / "big", "bob-bot")
    (big / "noise.bin").write_bytes(__import__("os").urandom(40000))
    too_big = svc.upload("bob", big)
    assert too_big.status_code == 413 and "19.5 KiB" in too_big.json()["detail"]
    # scrimmages: pairs, then in flight
    house = submissions.submit(svc.store, bot_folder(tmp_path / "h", "house", hello=False)).version
    many = c.post("/api/v1/scrimmages", json={"bot": first, "opponent": house.ref,
                                              "pairs": 4}, headers=svc.auth("alice"))
    assert many.status_code == 400 and "from 1 to 3" in many.json()["detail"]
    assert c.post("/api/v1/scrimmages", json={"bot": first, "opponent": house.ref, "pairs": 1},
                  headers=svc.auth("alice")).status_code == 202
    second = c.post("/api/v1/scrimmages", json={"bot": first, "opponent": house.ref,
                                                "pairs": 1}, headers=svc.auth("alice"))
    assert second.status_code == 429 and "scrimmages and A/B tests are queued or playing" in \
        second.json()["detail"]
    # logins: three failures from one address, then even the right token waits
    for _ in range(3):
        assert c.post("/login", data={"token": "wrong"}).status_code == 401
    locked = c.post("/login", data={"token": svc.tokens["bob"]}, follow_redirects=False)
    assert locked.status_code == 429 and "failed logins from your address" in locked.text
    assert 1 <= int(locked.headers["retry-after"]) <= 900
    assert "arena_session" not in locked.headers.get("set-cookie", "")
    actions = [e.action for e in svc.store.audit.entries(500)]
    assert actions.count("login-failed") == 3
    details = {e.detail for e in svc.store.audit.entries(500, action="limit")}
    assert details >= {"builds in flight", "versions per day", "scrimmages in flight",
                       "failed logins from your address"}
    assert actions.count("submit") == 3 and actions.count("scrimmage") == 1


def test_the_audit_log_records_submissions_revocations_and_admin_actions(svc, tmp_path):
    ref = svc.ready("alice", bot_folder(tmp_path, "alice-bot"))
    arena("authors", "revoke", "bob", "--db", svc.db, check=True)
    arena("authors", "rotate", "carol", "--db", svc.db, check=True)
    name, _, version = ref.partition("@")
    got = svc.client.post(f"/api/v1/admin/bots/{name}/{version}/withdraw",
                          headers=svc.auth("org"))
    assert got.status_code == 200
    entries = svc.store.audit.entries()
    seen = {(e.action, e.subject) for e in entries}
    assert {("submit", ref), ("revoke", "bob"), ("rotate", "carol"),
            ("withdraw", ref)} <= seen
    shown = arena("audit", "--db", svc.db, check=True).stdout
    assert "withdraw" in shown and "revoke" in shown and ref in shown
    assert svc.client.get("/api/v1/admin/audit", headers=svc.auth("org")).json()[0]["action"] \
        == "withdraw"


# -- what a season plays ----------------------------------------------------------------------
def test_a_season_names_the_latest_ready_version(svc, tmp_path):
    svc.ready("alice", bot_folder(tmp_path, "alice-bot", "1.0.0"))
    svc.upload("alice", bot_folder(tmp_path, "alice-bot", "2.0.0"))
    assert submissions.resolve(svc.store, "alice-bot", playable=True).version == "1.0.0"
    with pytest.raises(RegistryError, match="alice-bot@2.0.0: not ready to play: queued"):
        submissions.resolve(svc.store, "alice-bot@2.0.0", playable=True)
    assert submissions.resolve(svc.store, "alice-bot").version == "2.0.0"  # (bots show)
    row = svc.store.registry.version("alice-bot", "2.0.0")
    assert check_version(svc.store, row.id) == "ready"
    assert submissions.resolve(svc.store, "alice-bot", playable=True).version == "2.0.0"
    svc.client.post("/api/v1/admin/bots/alice-bot/2.0.0/withdraw", headers=svc.auth("org"))
    assert submissions.resolve(svc.store, "alice-bot", playable=True).version == "1.0.0"
    arena("bots", "withdraw", "alice-bot@1.0.0", "--reason", "a rule broken", "--db", svc.db,
          check=True)
    with pytest.raises(RegistryError, match="no version of alice-bot is ready to play: "
                       "1.0.0 withdrawn by the organiser; 2.0.0 withdrawn"):
        submissions.resolve(svc.store, "alice-bot", playable=True)
    v = svc.client.get("/api/v1/bots/alice-bot/1.0.0", headers=svc.auth("alice")).json()
    assert v["withdrawn"] and v["reason"] == "withdrawn by the organiser: a rule broken"


def test_a_version_whose_smoke_match_faults_is_refused_with_the_reason(svc, tmp_path):
    folder = bot_folder(tmp_path, "crash-bot")
    (folder / "bot.py").write_text("import sys\nprint('no luck', file=sys.stderr)\n"
                                   "sys.exit(3)\n")
    got = svc.upload("alice", folder)
    row = svc.store.registry.version("crash-bot", "1.0.0")
    assert got.json()["state"] == "queued"
    assert check_version(svc.store, row.id) == "refused"
    v = svc.client.get("/api/v1/bots/crash-bot/1.0.0", headers=svc.auth("alice")).json()
    assert v["state"] == "refused" and "the smoke match failed" in v["reason"]
    with pytest.raises(RegistryError, match="not ready to play: refused"):
        submissions.resolve(svc.store, "crash-bot@1.0.0", playable=True)


# -- hostile input ----------------------------------------------------------------------------
MARKUP = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def test_hostile_input_to_every_new_endpoint_is_refused_or_escaped(svc, tmp_path):
    c = svc.client
    a = svc.auth("alice")
    # bad archives: garbage, a zip with a path out of its folder, an empty body
    assert c.post("/api/v1/bots", content=b"\x00garbage" * 100, headers=a).status_code == 400
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("../../evil.txt", "x")
        z.writestr("bot.toml", 'name = "z"\nversion = "1"\ncommand = ["true"]\n')
    out = c.post("/api/v1/bots", content=buf.getvalue(), headers=a)
    assert out.status_code == 400, out.text
    assert not (tmp_path.parent / "evil.txt").exists()
    assert c.post("/api/v1/bots", content=b"", headers=a).status_code == 400
    # oversized bodies: the upload and a JSON body, by their declared and their actual size
    huge = b"x" * (Limits().archive_bytes + 1)
    assert c.post("/api/v1/bots", content=huge, headers=a).status_code == 413
    big = c.post("/api/v1/scrimmages", content=b"{" + b" " * 10_000_000 + b"}",
                 headers={**a, "Content-Type": "application/json"})
    assert big.status_code == 413 and str(Limits().body_bytes) in big.json()["detail"]
    assert c.post("/login", data={"token": "x" * 100_000}).status_code == 413
    # bad tokens: long, odd bytes, another scheme
    for bad in ("x" * 100_000, "\u00e9\u00e9", "Basic YWxpY2U6eA==", "Bearer"):
        got = c.get("/api/v1/me", headers={"Authorization": bad.encode("utf-8")})
        assert got.status_code == 401, (bad[:20], got.status_code)
    # markup in every text field: a name (refused by the name rule), a manifest field (kept,
    # shown escaped), a scrimmage's fields, a registration name, the login form
    named = bot_folder(tmp_path / "m", "fine-bot", description=MARKUP)
    toml = (named / "bot.toml").read_text().replace('name = "fine-bot"', f"name = '{MARKUP}'")
    bad_name = tmp_path / "n"
    shutil.copytree(named, bad_name)
    (bad_name / "bot.toml").write_text(toml)
    got = c.post("/api/v1/bots", content=archive(bad_name), headers=a)
    assert got.status_code == 400 and "expected 1 to 64 ASCII" in got.json()["detail"]
    svc.ready("alice", named)
    c.post("/login", data={"token": svc.tokens["alice"]})
    page = c.get("/me/bots/fine-bot/1.0.0").text
    assert "<script>" not in page and "<img" not in page
    for body in ({"bot": MARKUP, "opponent": "x@1", "pairs": 1},
                 {"bot": "fine-bot@1.0.0", "opponent": MARKUP + "@1", "pairs": 1}):
        got = c.post("/api/v1/scrimmages", json=body, headers=a)
        assert got.status_code == 400, got.text
    form = c.post("/me/scrimmages", data={"csrf": _csrf(c), "bot": "fine-bot@1.0.0",
                                          "opponent": "<script>alert(1)</script>@1",
                                          "pairs": "1"})
    assert form.status_code == 400 and "<script>" not in form.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;@1" in form.text  # echoed, escaped
    assert c.post("/api/v1/register", json={"name": MARKUP}).status_code == 403  # (off)
    (tmp_path / "reg").mkdir()
    reg = Service(tmp_path / "reg")
    reg.app.state.service = ServiceConfig(self_registration=True)
    r = reg.client.post("/api/v1/register", json={"name": MARKUP[:60]})
    assert r.status_code == 400 and "<script>" not in r.headers.get("content-type", "")
    ok = reg.client.post("/api/v1/register", json={"name": "dave"})
    assert ok.status_code == 202 and ok.json()["status"].startswith("pending")
    pending = {"Authorization": f"Bearer {ok.json()['token']}"}
    assert reg.client.get("/api/v1/me", headers=pending).status_code == 401
    arena("authors", "approve", "dave", "--db", reg.db, check=True)
    assert reg.client.get("/api/v1/me", headers=pending).status_code == 200
    login = c.post("/login", data={"token": MARKUP})
    assert login.status_code == 401 and "<script>" not in login.text
    # path parameters with markup
    assert c.get(f"/api/v1/bots/{MARKUP}/1", headers=a).status_code in (400, 404)
    assert "<script>" not in c.get(f"/me/bots/{MARKUP}/1").text


def _csrf(client) -> str:
    page = client.get("/me").text
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


# -- the schema ------------------------------------------------------------------------------
SERVICE_API = {"/api/v1/me", "/api/v1/bots", "/api/v1/bots/{name}/{version}",
               "/api/v1/bots/{name}/{version}/build-log", "/api/v1/bots/{name}/{version}/archive",
               "/api/v1/bots/{name}/{version}/results", "/api/v1/bots/{name}/{version}/roles",
               "/api/v1/matches/{match_id}/record",
               "/api/v1/matches/{match_id}/logs/{seat}", "/api/v1/scrimmages",
               "/api/v1/scrimmages/{sid}", "/api/v1/scrimmages/{sid}/cancel",
               "/api/v1/register", "/api/v1/admin/authors", "/api/v1/admin/authors/{name}/disable",
               "/api/v1/admin/bots/{name}/{version}/withdraw", "/api/v1/admin/queue",
               "/api/v1/admin/audit"}


@pytest.mark.parametrize("who", ["alice", "org"])
def test_the_service_api_schema(svc, tmp_path, who):
    """Schemathesis' checks over every new operation, as an author and as the organiser: no
    server error, every response as the schema says."""
    import schemathesis
    from schemathesis.specs.openapi.checks import positive_data_acceptance
    svc.ready("alice", bot_folder(tmp_path, "alice-bot"))
    # bytes the schema allows but no archive, and refs to versions that are not there: 400
    by_content = {("POST", "/api/v1/bots"), ("POST", "/api/v1/scrimmages")}
    schema = schemathesis.openapi.from_asgi("/openapi.json", svc.app)
    ops = [op for op in (r.ok() for r in schema.get_all_operations())
           if op.path.startswith("/api/v1/")]
    assert {op.path for op in ops} == SERVICE_API
    for op in ops:
        if op.path == "/api/v1/admin/authors/{name}/disable" and who == "org":
            continue  # (it would disable the organiser's own name when drawn)

        @given(case=op.as_strategy())
        @settings(max_examples=8, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def check(case):
            case.call_and_validate(
                headers=svc.auth(who),
                excluded_checks=[positive_data_acceptance]
                if (op.method.upper(), op.path) in by_content else None)
        check()


# -- what the service sends the workers --------------------------------------------------------
def test_the_dispatcher_sends_checks_and_scrimmages_on_lanes_of_their_own(svc, tmp_path):
    """Checks and scrimmages' openings go to the intake lane (``arena.intake``), scrimmages'
    matches to theirs (``arena.scrimmage``): the seasons' queue (``arena``) stays empty, so
    that a worker's match slots take from each lane in turn and its intake lane from none of
    them."""
    import json

    import redis
    from league_helpers import REDIS_URL, flush_redis

    from scheduler.service.intake import Dispatcher, open_scrimmage
    flush_redis()
    mine = svc.ready("alice", bot_folder(tmp_path, "alice-bot"))
    house = submissions.submit(svc.store, bot_folder(tmp_path / "h", "house", hello=False)).version
    queued = svc.upload("alice", bot_folder(tmp_path, "alice-bot", "2.0.0")).json()
    sid = svc.client.post("/api/v1/scrimmages", json={"bot": mine, "opponent": house.ref,
                                                      "pairs": 1},
                          headers=svc.auth("alice")).json()["id"]
    r = redis.Redis.from_url(REDIS_URL)
    sent = Dispatcher(svc.store, REDIS_URL)
    sent.step()  # the check of 2.0.0 and the scrimmage's opening

    def tasks(key: bytes) -> list[tuple[str, list]]:
        out = []
        for raw in r.lrange(key, 0, -1):
            m = json.loads(raw)
            out.append((m["headers"]["task"], json.loads(__import__("base64").b64decode(
                m["body"]))[0]))
        return sorted(out)
    row = svc.store.registry.version(queued["name"], queued["version"])
    assert tasks(b"arena.intake") == [("arena.check_version", [row.id]),
                                      ("arena.open_scrimmage", [sid])]
    assert r.llen(b"arena") == 0 and r.llen(b"arena.scrimmage") == 0
    assert open_scrimmage(svc.store, sid) == "playing"  # (what the worker does with it)
    sent.step()
    ids = sorted(m.id for m in svc.store.pages.matches(f"scrimmage-{sid}"))
    assert len(ids) == 2
    assert tasks(b"arena.scrimmage") == [("arena.play_match", [i]) for i in ids]
    assert r.llen(b"arena") == 0
    sent.step()  # sent once: nothing more until their lease would have run out
    assert r.llen(b"arena.scrimmage") == 2 and r.llen(b"arena.intake") == 2
    # the scrimmage's season is no one else's to see
    assert svc.client.get(f"/api/seasons/scrimmage-{sid}").status_code == 404
    assert svc.client.get(f"/api/seasons/scrimmage-{sid}",
                          headers=svc.auth("bob")).status_code == 404
    assert svc.client.get(f"/api/seasons/scrimmage-{sid}",
                          headers=svc.auth("alice")).status_code == 200
    assert f"scrimmage-{sid}" not in svc.client.get("/api/seasons").text
    assert svc.client.get(f"/api/matches/{ids[0]}").status_code == 404
    assert svc.client.get(f"/api/matches?season=scrimmage-{sid}").json()["total"] == 0
