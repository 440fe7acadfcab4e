"""``arena authors add NAME --token-file OUT``: the token goes to a new file only its owner may
read, never to stdout; an existing file is refused and kept, and no author is added."""

from __future__ import annotations

import json
import stat

from fastapi.testclient import TestClient
from league_helpers import arena

from web.app import create_app
from scheduler.service.config import ServiceConfig


def test_the_token_file_is_new_private_and_holds_a_working_token(tmp_path):
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    out = tmp_path / "alice.token"
    p = arena("authors", "add", "alice", "--token-file", str(out), "--db", db, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    token = out.read_text().strip()
    assert token and token not in p.stdout + p.stderr and str(out) in p.stderr
    client = TestClient(create_app(db, ServiceConfig()))
    me = client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200 and me.json()["name"] == "alice", me.text

    kept = tmp_path / "bob.token"
    kept.write_text("not to be overwritten\n")
    p = arena("authors", "add", "bob", "--token-file", str(kept), "--db", db, cwd=tmp_path)
    assert p.returncode == 2 and str(kept) in p.stderr and "exists" in p.stderr, p.stderr
    assert kept.read_text() == "not to be overwritten\n" and p.stdout == ""
    names = [a["name"] for a in json.loads(arena("authors", "list", "--json", "--db", db,
                                                 check=True).stdout)]
    assert names == ["alice"]  # no author whose token nobody has
