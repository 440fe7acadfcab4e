"""Deals are secret until played (issue #13): a season's deal seeds are keyed with a secret its
store keeps, so nothing a bot sees (the season's name, every match id, the variant) tells the
cards; a duplicate pair's records stay sealed until both matches are over."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from league_helpers import BOTS, PG_URL, arena, unique
from referee.play.chance import chance_action
from referee.rules import new_game, rules_for
from scheduler.execute import execute_match
from scheduler.league import _with_stored_secret, open_season, run_sprt
from scheduler.season import SeasonError, deal_seed, load_season
from scheduler.pinning import pin
from scheduler.store import Store
from scheduler.store.rows import SeasonSecret

GREEDY = BOTS / "greedy"
RANDOM = BOTS / "random"
VARIANT = "two-deck-fry"


def _season_file(folder: Path, name: str, *, deal_sets: int = 1, deals_per_set: int = 2,
                 extra: str = "") -> Path:
    """A duplicate season of greedy and random; no ``seed`` field (it defaults to the name)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.toml"
    path.write_text(f'name = "{name}"\nvariant = "{VARIANT}"\ndeal_sets = {deal_sets}\n'
                    f'deals_per_set = {deals_per_set}\n{extra}\n'
                    f'[[bots]]\nmanifest = "{GREEDY}"\n[[bots]]\nmanifest = "{RANDOM}"\n',
                    encoding="utf-8")
    return path


def _shuffle(seed: str, levels=("2", "2"), dealer=0) -> str:
    """The cards (the shuffle, as a record writes it) of a deal played from ``seed``."""
    state = new_game(rules_for(VARIANT), levels=tuple(levels), dealer=dealer, max_deals=1)
    return chance_action(state, seed).text()


def _deal_seeds(store: Store, season: str) -> list[str]:
    return [d["seed"] for r in store.pages.matches(season)
            for d in json.loads(r.spec_json)["deals"]]


def _what_a_bot_could_try(name: str, match_ids: list[str], legs=1, sets=1, deals=2) -> set[str]:
    """Seeds a bot could derive from what it sees: the season's name (the old default seed),
    the match ids, the variant, and the old labels made of them, also hashed or keyed with
    them."""
    import hashlib
    import hmac
    bases = {name, VARIANT, "", "0", "1", *match_ids}
    labels = set(bases)
    for base in bases:
        for leg in range(legs):
            for k in range(sets):
                for j in range(deals):
                    labels |= {f"{base}:leg{leg}:set{k}:deal{j}", f"{base}:set{k}:deal{j}",
                               f"{base}:deal{j}", f"{base}:{j}"}
    out = set(labels)
    for label in labels:
        out.add(hashlib.sha256(label.encode()).hexdigest())
        for key in bases:
            out.add(hmac.new(key.encode(), label.encode(), hashlib.sha256).hexdigest())
    return out


# its module fixtures are built once: pytest-xdist (--dist loadgroup) keeps the file on one worker
pytestmark = pytest.mark.xdist_group("test_secret_deals")


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """A season of one duplicate pair, played one match at a time, with what `arena replay`
    said of the first match's record between the two."""
    tmp = tmp_path_factory.mktemp("pair")
    name = unique("secret")
    path = _season_file(tmp, name)
    store = Store(f"sqlite:///{tmp}/arena.db")
    open_season(load_season(path), store, workdir=tmp / "checks", check=False)
    first, mirror = (r.id for r in store.pages.matches(name))
    assert execute_match(store.url, first) == "done"
    sealed = arena("replay", first, "--db", store.url, "--verify")
    pending = arena("replay", mirror, "--db", store.url)
    assert execute_match(store.url, mirror) == "done"
    served = arena("replay", first, "--db", store.url, "--verify")
    return SimpleNamespace(name=name, path=path, store=store, first=first, mirror=mirror,
                           sealed=sealed, pending=pending, served=served)


def test_a_pair_first_record_is_sealed_until_its_mirror_is_over(pair):
    assert pair.sealed.returncode == 3, pair.sealed
    assert (f"sealed until its mirror match {pair.mirror} (pending) is over"
            in pair.sealed.stderr), pair.sealed.stderr
    assert pair.sealed.stdout == ""  # not one event of it
    assert pair.pending.returncode != 0 and "no match record" in pair.pending.stderr
    assert pair.served.returncode == 0 and "verified: 2 game(s)" in pair.served.stdout, \
        pair.served


def test_no_deal_follows_from_what_a_bot_sees(pair):
    """Knowing the season's name, every match id and the variant, the old derivations (and a
    few more) give other cards than each stored record's."""
    store, name = pair.store, pair.name
    ids = [pair.first, pair.mirror]
    tries = _what_a_bot_could_try(name, ids)
    predicted = {_shuffle(s, dealer=j) for s in tries for j in range(2)}
    secret = store.seasons.secret(name)
    assert re.fullmatch(r"[0-9a-f]{64}", secret.secret) and not secret.given
    games = 0
    for mid in ids:
        record = store.results.record(mid)
        for j, game in enumerate(record.games):
            dealt = game.actions[0][1]
            assert dealt.startswith("shuffle ")
            assert dealt == _shuffle(game.seed, game.start["levels"], j)  # as replayed
            assert dealt not in predicted, (mid, j)
            assert game.seed not in tries
            # the documented derivation, with the stored secret
            assert game.seed == deal_seed(secret.secret, f"{name}:leg0:set0:deal{j}")
            games += 1
    assert games == 4


def test_mirrors_share_their_cards(pair):
    first, mirror = (pair.store.results.record(m) for m in (pair.first, pair.mirror))
    assert [g.seed for g in first.games] == [g.seed for g in mirror.games]
    assert [g.actions[0] for g in first.games] == [g.actions[0] for g in mirror.games]
    assert first.seats[0] == mirror.seats[1] and first.seats[1] == mirror.seats[0]


@pytest.fixture()
def pg():
    try:
        store = Store(PG_URL)
        store.seasons.names()
    except Exception as e:  # a missing server is a failure here, as in the league tests
        pytest.fail(f"PostgreSQL at {PG_URL} is needed for this test: {e}")
    return store


def test_two_seasons_from_one_file_get_other_deals(tmp_path, pg):
    name = unique("twice")
    path = _season_file(tmp_path, name, deal_sets=2)
    stores = [Store(f"sqlite:///{tmp_path}/a.db"), pg]
    try:
        for store in stores:
            open_season(load_season(path), store, workdir=tmp_path, check=False)
        a, b = (_deal_seeds(s, name) for s in stores)
        assert len(a) == len(b) == 2 * 2 * 2
        assert not set(a) & set(b)
        assert not {_shuffle(s) for s in a} & {_shuffle(s) for s in b}
        assert stores[0].seasons.secret(name) != stores[1].seasons.secret(name)
    finally:
        pg.seasons.delete(name)
    assert pg.seasons.secret(name) is None  # deleted with its season


@pytest.mark.parametrize("where", ["sqlite", "postgresql"])
def test_a_resumed_season_plays_the_same_deals(tmp_path, where, request):
    name = unique("resume")
    path = _season_file(tmp_path, name, deal_sets=2)
    store = request.getfixturevalue("pg") if where == "postgresql" else \
        Store(f"sqlite:///{tmp_path}/s.db")
    try:
        open_season(load_season(path), store, workdir=tmp_path, check=False)
        before = [r.spec_json for r in store.pages.matches(name)]
        secret = store.seasons.secret(name)
        again = load_season(path)  # a fresh object: a fresh secret of its own, until opened
        assert again.plan()[0].deals[0].seed not in _deal_seeds(store, name)
        open_season(again, store, workdir=tmp_path, check=False)
        assert [r.spec_json for r in store.pages.matches(name)] == before
        assert store.seasons.secret(name) == secret
        resumed = pin(_with_stored_secret(again, store, None), store)  # what open_season
        # plays with: the stored secret, the pinned bot versions
        assert [json.dumps(resumed.match_spec(p).to_dict(), ensure_ascii=False)
                for p in resumed.plan()] == before
        # the bots check deal of the season: from the secret too, and no deal of a match
        check = resumed.check_deal().seed
        assert check == deal_seed(secret.secret, f"{name}:check")
        assert check not in _deal_seeds(store, name)
    finally:
        if where == "postgresql":
            store.seasons.delete(name)


def test_a_season_file_secret_reproduces_its_deals(tmp_path):
    name = unique("research")
    secret = "reproducible research, 2026-12"
    path = _season_file(tmp_path, name, deal_sets=2, extra=f'secret = "{secret}"')
    stores = [Store(f"sqlite:///{tmp_path}/{x}.db") for x in "ab"]
    for store in stores:
        open_season(load_season(path), store, workdir=tmp_path, check=False)
    a, b = (_deal_seeds(s, name) for s in stores)
    assert a == b
    assert a[:2] == [deal_seed(secret, f"{name}:leg0:set0:deal{j}") for j in range(2)]
    assert stores[0].seasons.secret(name) == SeasonSecret(secret, True)
    assert secret not in repr(load_season(path))  # never shown with the season
    # the stored season is played on the stored secret: another one in the file is refused
    path.write_text(path.read_text().replace(secret, "another secret of some length"))
    with pytest.raises(SeasonError, match="field 'secret'"):
        open_season(load_season(path), stores[0], workdir=tmp_path, check=False)
    path.write_text(path.read_text().replace('secret = "another secret of some length"',
                                             'secret = "short"'))
    with pytest.raises(SeasonError, match="field 'secret' = '...': expected a string of 16"):
        load_season(path)


def test_a_store_made_before_season_secrets_is_read_and_its_seasons_resume(tmp_path):
    """An old store gains the secrets table when opened; its seasons (stored with deals that
    followed from their names) are read as before and resume on their stored deals, with a
    note that those deals are predictable."""
    from alembic import command
    from sqlalchemy import create_engine, inspect

    from scheduler import migrations
    from scheduler import store as store_mod
    name = unique("old")
    path = _season_file(tmp_path, name)
    url = f"sqlite:///{tmp_path}/old.db"
    engine = create_engine(url)
    with engine.connect() as c:  # the schema before migrations, secrets, attempts and cancels
        command.upgrade(migrations.config(c), migrations.BASELINE)
        for table in ("alembic_version", "attempts", "season_cancels", "season_secrets"):
            c.exec_driver_sql(f"DROP TABLE {table}")
        c.commit()
    season = load_season(path)
    rows = store_mod.plan_rows(season, season.plan())
    with engine.begin() as c:
        c.execute(store_mod.seasons.insert().values(
            name=name, config_json=json.dumps(season.config.to_json()),
            config_hash=season.config_hash(), file=str(path), created_at=0.0))
        c.execute(store_mod.matches.insert(), [dict(r.columns(), season=name,
                                                    status="pending", attempts=0) for r in rows])
    engine.dispose()
    assert "season_secrets" not in inspect(create_engine(url)).get_table_names()
    store = Store(url)
    assert "season_secrets" in inspect(store.engine).get_table_names()
    assert store.seasons.get(name).config_hash == season.config_hash()
    assert store.seasons.secret(name) is None
    said = io.StringIO()
    assert open_season(load_season(path), store, workdir=tmp_path, check=False, out=said) == 2
    assert "stored before deal secrets" in said.getvalue()
    assert [r.spec_json for r in store.pages.matches(name)] == [r.columns()["spec_json"]
                                                               for r in rows]


def test_sprt_deals_are_fresh_each_run_unless_a_seed_is_given(tmp_path, monkeypatch):
    """(The matches are not played here: each is a win for A, so the test decides at once.)"""
    from scheduler import league
    from scheduler.stats.ratings import Sprt
    from scheduler.season import SeasonBot
    from referee.seats.manifest import load_manifest
    played: list = []

    def fake_play(spec, workdir):
        played.append(spec)
        team_a = spec.seat_names.index("a")
        net = [0, 0]
        net[team_a] = 1
        return SimpleNamespace(summary=lambda: SimpleNamespace(forfeit_team=None, net=net))
    for name in ("play", "play_again"):  # whichever the pairs are played with
        monkeypatch.setattr(league, name, fake_play, raising=False)
    a, b = (SeasonBot(n, load_manifest(m)) for n, m in (("a", GREEDY), ("b", RANDOM)))

    def seeds(seed):
        played.clear()
        run_sprt(a, b, variant=VARIANT, options={}, sprt=Sprt(0, 50, 0.05, 0.05),
                 deals_per_set=2, max_pairs=4, workers=2, seed=seed, workdir=tmp_path,
                 progress=False)
        got = [d.seed for spec in played for d in spec.deals]
        assert got
        return set(got)
    first, second = seeds(None), seeds(None)
    assert not first & second
    assert not first & _what_a_bot_could_try("sprt", [f"sprt-{k:04d}-{m}" for k in range(4)
                                                      for m in range(2)], sets=4)
    assert seeds("mine") == seeds("mine")


def test_arena_match_without_a_seed_draws_a_fresh_one():
    from cli.main import build_parser
    args = ["match", "a", "b", "c", "d"]
    assert build_parser().parse_args(args).seed is None
    assert build_parser().parse_args(args + ["--seed", "7"]).seed == "7"
    assert build_parser().parse_args(["bots", "check", "x"]).seed is None
    assert build_parser().parse_args(["sprt", "x", "y"]).seed is None


def test_arena_match_records_the_fresh_seed_it_drew(tmp_path):
    out = tmp_path / "m.json"
    arena("match", *[str(RANDOM)] * 4, "--deals", "1", "--out", str(out), check=True)
    seed = json.loads(out.read_text())["games"][0]["seed"]
    assert re.fullmatch(r"[0-9a-f]{32}", seed), seed
    again = arena("replay", str(out), "--verify", check=True)  # it replays from the record
    assert "verified: 1 game(s)" in again.stdout


def test_a_record_stays_sealed_while_another_pairing_has_its_cards_to_play(tmp_path):
    """Every pairing meets the same deal sets: a pair's records also wait for the other
    pairings' matches on the same cards. A plain season's match has no mirror."""
    from sqlalchemy import update

    from scheduler.reports import sealed_reason as _sealed_reason
    from scheduler.store import matches
    name = unique("three")
    path = _season_file(tmp_path, name, extra="")
    path.write_text(path.read_text() + f'[[bots]]\nmanifest = "{GREEDY}"\nname = "g2"\n')
    store = Store(f"sqlite:///{tmp_path}/s.db")
    open_season(load_season(path), store, workdir=tmp_path, check=False)
    ids = [r.id for r in store.pages.matches(name)]
    assert len(ids) == 6

    def done(*which):
        with store.engine.begin() as c:
            c.execute(update(matches).where(matches.c.id.in_(which)).values(status="done"))
    done(ids[0], ids[1])  # a whole duplicate pair
    waiting = store.pages.sealed_by(ids[0])
    assert [m.id for m in waiting] == ids[2:] and not any(m.mirror for m in waiting)
    assert _sealed_reason(waiting).startswith(
        f"sealed until the other match(es) on the same cards: {ids[2]} (pending), {ids[3]} "
        f"(pending), {ids[4]} (pending) and 1 more are over")
    done(*ids[2:])
    assert store.pages.sealed_by(ids[0]) == []

    plain = unique("plain")
    path = _season_file(tmp_path, plain, deal_sets=2, extra="duplicate = false")
    open_season(load_season(path), store, workdir=tmp_path, check=False)
    first, second = (r.id for r in store.pages.matches(plain))
    done(first)
    assert store.pages.sealed_by(first) == []  # the other match has other cards
