"""A ladder: an open season that runs until cancelled. Versions enter as they become ready
(``bots = "every ready version"``: the newest ``active_versions`` of each author; the older
ones retire and keep their history), or as its file names them; each new one plays placement
pairs against a spread of ratings, and from then on the matchmaking
(``scheduler.stats.matchmaking``) picks the duplicate pair that tells the most. The unit is the
duplicate pair on secret deals, as in seasons (its cards keyed by the season's secret and the
pair's number); at most ``queue_ahead`` matches are queued or playing at any time, so nothing
piles up in the broker; every scored pair updates the openskill ratings, recorded after each
pair (``ladder_ratings``).

The store is the ladder's memory: a ladder run again (after a crash, on another machine)
rebuilds its ratings by replaying the scored pairs in the order they were written, and goes on.
Results are written once per match and pairs scored once (``Store.finish``, ``score_pair``), so
a killed worker's match is played again and counted once, as in seasons.
"""

from __future__ import annotations

import dataclasses
import json
import random
import sys
import threading
import time

from scheduler.season import MatchPlan, Season, SeasonBot, SeasonError
from scheduler.stats.matchmaking import Ladder


def playable_versions(store, active_versions: int) -> list[str]:
    """The refs (name@version) of every ready, not withdrawn version that stays active: each
    author's newest ``active_versions`` (an organiser's version: per bot name)."""
    rows = store.bot_versions()
    states = store.version_states([r.id for r in rows])
    groups: dict[str, list] = {}
    for r in rows:
        st = states.get(r.id)
        if st is not None and (st["state"] != "ready" or st["withdrawn_at"] is not None):
            continue
        groups.setdefault(r.author or f"(organiser) {r.name}", []).append(r)
    keep = []
    for versions in groups.values():
        keep += [f"{r.name}@{r.version}" for r in versions[-active_versions:]]
    return keep


#: a pending match sent this long ago and not started is sent again (its message was lost)
REQUEUE_S = 600.0


class LadderRun:
    """One process keeping a ladder going: ``step`` is one pass (admit, rate, fill, send);
    ``run`` repeats it until the ladder is cancelled and nothing it sent is still playing."""

    def __init__(self, store, season: Season, *, broker: str | None = None, workers: int = 2,
                 lease_s: float = 120.0, out=sys.stderr, seed: int | None = None) -> None:
        if season.format != "ladder":
            raise SeasonError(f"{season.path}: not a ladder (format {season.format!r})")
        self.store, self.season, self.broker, self.workers = store, season, broker, workers
        self.lease_s, self.out = lease_s, out
        secret = store.season_secret(season.name)  # the deals' key, as the store keeps it
        if secret is not None:
            self.season = dataclasses.replace(season, secret=secret["secret"],
                                              secret_given=secret["given"])
        self.rng = random.Random(seed)
        cfg = season.ladder or {}
        self.queue_ahead = cfg["queue_ahead"]
        self.active_versions = cfg["active_versions"]
        self.model = Ladder(placement_pairs=cfg["placement_pairs"])
        self.rated: set[str] = set()
        self.app = None
        self.max_in_play = 0   # the most matches seen queued or playing at once
        self._restore()

    # -- memory ------------------------------------------------------------------------
    def _restore(self) -> None:
        """The joined versions pinned as they were, the retired ones retired, the scored pairs
        replayed into the ratings, and the pairs in play scheduled."""
        from scheduler.pinning import pin
        name = self.season.name
        entries = {e["bot"]: e for e in self.store.ladder_entries(name)}
        stored = [b.name for b in self.store.bots(name)]
        listed = {b.name for b in self.season.bots}
        extra = tuple(SeasonBot(n, None, ref=n) for n in stored if n not in listed)
        self.season = pin(dataclasses.replace(self.season, bots=self.season.bots + extra),
                          self.store)
        missing = [n for n in stored if n not in entries]
        if missing:  # the bots its file names, entered when it opened
            self.store.add_ladder_entries(name, missing)
            entries = {e["bot"]: e for e in self.store.ladder_entries(name)}
        for bot in stored:
            self.model.enter(bot)
            if entries.get(bot, {}).get("retired_at") is not None:
                self.model.retire(bot)
        self._rate_new()
        for m in self.store.matches(name):
            if m.status in ("pending", "running") and not m.mirror:
                a, b = m.pairing.split("|")
                self.model.schedule(a, b)

    # -- one pass ----------------------------------------------------------------------
    def admit(self) -> list[str]:
        """Versions that became playable join; those no longer active retire."""
        if not self.season.open_entry:
            return []
        from scheduler.pinning import pin_joining
        want = playable_versions(self.store, self.active_versions)
        have = {e["bot"]: e for e in self.store.ladder_entries(self.season.name)}
        new = [ref for ref in want if ref not in have]
        for bot, e in have.items():
            if e["retired_at"] is None and bot not in want and \
                    bot not in {b.name for b in self.season.bots if b.ref is None}:
                self.store.retire_from_ladder(self.season.name, bot)
                self.model.retire(bot)
                print(f"ladder {self.season.name}: {bot} retired (a newer version is active, "
                      "or it was withdrawn)", file=self.out, flush=True)
        if not new:
            return []
        joining = pin_joining(self.store, new, f"ladder {self.season.name}")
        rows, authors = [], {}
        for b in joining:
            rows.append({"name": b.name, "version": b.manifest.version,
                         "content_hash": b.manifest.content_hash(),
                         "manifest_json": json.dumps({**b.to_dict(),
                                                      "files": b.manifest.file_hashes()}),
                         "version_hash": b.version_hash, "checked_hash": None})
            name, _, version = b.name.partition("@")
            row = self.store.bot_version(name, version)
            authors[b.name] = row.author if row is not None else None
        self.store.join_ladder(self.season.name, rows, authors)
        self.season = dataclasses.replace(self.season, bots=self.season.bots + joining)
        for b in joining:
            self.model.enter(b.name)
            print(f"ladder {self.season.name}: {b.name} joins (placement: "
                  f"{self.model.placement_pairs} pairs)", file=self.out, flush=True)
        return new

    def _rate_new(self) -> int:
        """Rate the pairs scored since the last pass, in the order they were written."""
        got = sorted((p for p in self.store.pair_scores(self.season.name)
                      if p.cluster not in self.rated), key=lambda p: (p.written_at, p.cluster))
        for p in got:
            for bot in (p.bot_a, p.bot_b):
                if bot not in self.model.entrants:
                    self.model.enter(bot)
            index = len(self.rated)
            self.model.rate(p.bot_a, p.bot_b, p.score_a)
            self.rated.add(p.cluster)
            a, b = self.model.entrants[p.bot_a], self.model.entrants[p.bot_b]
            self.store.record_ratings(self.season.name, p.cluster, index,
                                      [(e.name, e.mu, e.sigma, e.pairs) for e in (a, b)])
        return len(got)

    def fill(self) -> int:
        """Add duplicate pairs while fewer than ``queue_ahead`` matches are in play."""
        from scheduler.store import plan_rows
        name = self.season.name
        in_play = self.store.ladder_matches_in_play(name)
        added = 0
        while in_play + 2 <= self.queue_ahead:
            pair = self.model.next_pair(self.rng)
            if pair is None:
                break
            a, b = pair
            ordinal = self.store.next_ordinal(name)
            k = ordinal // 2
            deals = self.season.deal_set(0, k)
            plans = [MatchPlan(match_id=f"{name}-{ordinal + i:05d}", ordinal=ordinal + i,
                               pairing=f"{a}|{b}", leg=0, deal_set=k, mirror=bool(i),
                               seats=(t0, t1, t0, t1), deals=deals)
                     for i, (t0, t1) in enumerate(((a, b), (b, a)))]
            self.store.add_matches(name, plan_rows(self.season, plans))
            self.model.schedule(a, b)
            in_play += 2
            added += 1
        self.max_in_play = max(self.max_in_play, in_play)
        return added

    def send(self) -> None:
        """Distributed: the due matches to the workers (at most ``queue_ahead`` queued or
        playing). Local: play what is in play here, to the end."""
        name = self.season.name
        if self.broker is None:
            from scheduler.league import run_local
            run_local(self.store, name, workers=self.workers, lease_s=self.lease_s,
                      progress=False)
            return
        from kombu.exceptions import OperationalError
        if self.app is None:
            from scheduler.celery_app import make_app
            self.app = make_app(self.broker)
        c = self.store.counts(name)
        room = max(0, self.queue_ahead - c["running"] - self.store.queued(name, REQUEUE_S))
        # a message waits in the broker until a worker takes it: sent again only after
        # REQUEUE_S (the broker lost it); a match whose worker died, once its lease ran out
        due = self.store.due(name, REQUEUE_S, limit=room, lost_after_s=self.lease_s)
        for i, match_id in enumerate(due):
            try:
                self.app.send_task("arena.play_match", args=[match_id], queue="arena",
                                   retry=False)
            except OperationalError as e:
                self.store.unmark(due[i:])
                print(f"ladder {name}: broker unreachable ({e}); trying again", file=self.out,
                      flush=True)
                return

    def step(self) -> bool:
        """One pass; False once the ladder is cancelled and nothing is left playing."""
        name = self.season.name
        if self.store.cancelled(name):
            self.store.settle_cancelled(name)
            self._rate_new()
            c = self.store.counts(name)
            return c["running"] > 0
        self.admit()
        self._rate_new()
        self.fill()
        self.send()
        self._rate_new()
        return True

    def run(self, *, poll_s: float = 1.0, stop: threading.Event | None = None,
            timeout_s: float | None = None) -> dict[str, int]:
        stop = stop or threading.Event()
        started = time.monotonic()
        while self.step():
            if timeout_s is not None and time.monotonic() - started > timeout_s:
                raise TimeoutError(f"ladder {self.season.name!r} still running after "
                                   f"{timeout_s} s")
            if stop.wait(poll_s):
                break
        return self.store.counts(self.season.name)


def ladder_table(store, season: str) -> list[dict]:
    """Each version of the ladder: its latest openskill rating (mu, sigma; shown as mu - 3
    sigma with mu +- 2 sigma as its interval), pairs, when it last played, joined, retired."""
    latest: dict[str, dict] = {}
    for h in store.rating_history(season):
        latest[h["bot"]] = h
    from openskill.models import PlackettLuce
    prior = PlackettLuce().rating()
    out = []
    for e in store.ladder_entries(season):
        h = latest.get(e["bot"])
        mu, sigma = (h["mu"], h["sigma"]) if h else (prior.mu, prior.sigma)
        out.append({"bot": e["bot"], "author": e["author"], "rating": mu - 3 * sigma,
                    "mu": mu, "sigma": sigma, "low": mu - 2 * sigma, "high": mu + 2 * sigma,
                    "pairs": h["pairs"] if h else 0, "last_played": h["at"] if h else None,
                    "joined_at": e["joined_at"], "retired_at": e["retired_at"]})
    out.sort(key=lambda r: (r["retired_at"] is not None, -r["rating"], r["bot"]))
    return out


def ladder_history(store, season: str) -> list[dict]:
    """The ratings over the ladder: after each rated pair, every version's latest conservative
    rating (mu - 3 sigma) so far, for ``web.pages.history_plot``."""
    current: dict[str, float] = {}
    out = []
    for h in store.rating_history(season):
        current[h["bot"]] = h["mu"] - 3 * h["sigma"]
        if out and out[-1]["units"] == h["pair_index"] + 1:
            out[-1]["ratings"] = dict(current)
        else:
            out.append({"units": h["pair_index"] + 1, "ratings": dict(current)})
    return out
