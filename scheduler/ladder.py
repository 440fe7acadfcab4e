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
Results are written once per match and pairs scored once (``store.results.finish``,
``score_pair``), so a killed worker's match is played again and counted once, as in seasons.
"""

from __future__ import annotations

import dataclasses
import random
import sys
import threading
import time
from typing import TYPE_CHECKING

from scheduler.season import MatchPlan, Season, SeasonBot, SeasonError
from scheduler.season_config import LadderConfig, SeasonFormat
from scheduler.states import MatchStatus, VersionState
from scheduler.stats.matchmaking import Ladder, Rest
from scheduler.store import DEFAULT_LEASE_S
from scheduler.store.rows import NewBot, RatingRow, StatusCounts

if TYPE_CHECKING:
    from scheduler.dispatch import Sender


@dataclasses.dataclass(frozen=True)
class Roster:
    """Who is in an open ladder: the refs (name@version) that play, and why each other ready
    version does not (``why_out``: ref -> a sentence for its author)."""
    playing: tuple[str, ...]
    why_out: dict[str, str]


def roster(store, active_versions: int, bots_per_author: int = 0) -> Roster:
    """Every ready, not withdrawn version that plays: the newest ``active_versions`` of each
    bot (author and name; an organiser's: per name), and of each author at most
    ``bots_per_author`` bots (0: any number), their most recently updated bots first. A
    suspended version (the crash limit: ``scheduler.crash_limit.after_forfeit``) is out, and
    ``why_out`` gives its suspension's reason."""
    rows = store.registry.versions()  # in the order submitted
    states = {s.version_id: s for s in store.versions.states([r.id for r in rows])}
    bots_of: dict[tuple, list] = {}
    why: dict[str, str] = {}
    for r in rows:
        st = states.get(r.id)
        if st is not None and st.state == VersionState.SUSPENDED and st.withdrawn_at is None:
            why[f"{r.name}@{r.version}"] = f"suspended: {st.reason}"
        if st is not None and (st.state != VersionState.READY or st.withdrawn_at is not None):
            continue
        bots_of.setdefault((r.author, r.name), []).append(r)
    per_author: dict[str | None, list[tuple]] = {}
    for key, versions in bots_of.items():
        newest = versions[-active_versions:]
        for r in versions[:-active_versions]:
            why[f"{r.name}@{r.version}"] = (
                f"retired: a newer version of {r.name} plays "
                f"({', '.join(v.version for v in newest)}; active_versions = {active_versions})")
        per_author.setdefault(key[0], []).append((newest[-1].submitted_at, key, newest))
    playing: list[str] = []
    for author, bots in per_author.items():
        bots.sort(key=lambda b: b[0], reverse=True)
        cap = len(bots) if author is None or bots_per_author == 0 else bots_per_author
        for _, _, newest in bots[:cap]:
            playing += [f"{r.name}@{r.version}" for r in newest]
        for _, _, newest in bots[cap:]:
            for r in newest:
                why[f"{r.name}@{r.version}"] = (
                    f"out: {author} has {len(bots)} bots ready and the ladder takes "
                    f"{bots_per_author} of each author (bots_per_author), the most recently "
                    "updated first")
    return Roster(tuple(playing), why)


#: a resting ladder looks for new versions and results this often (seconds)
REST_POLL_S = 5.0


class LadderRun:
    """One process keeping a ladder going: ``step`` is one pass (admit, rate, fill, send);
    ``run`` repeats it until the ladder is cancelled and nothing it sent is still playing."""

    def __init__(self, store, season: Season, *, broker: str | None = None, workers: int = 2,
                 lease_s: float = DEFAULT_LEASE_S, out=sys.stderr,
                 seed: int | None = None,
                 clock=time.monotonic) -> None:
        if season.format is not SeasonFormat.LADDER:
            raise SeasonError(f"{season.path}: not a ladder (format "
                              f"{season.format.value!r})")
        self.store, self.season, self.broker, self.workers = store, season, broker, workers
        self.lease_s, self.out = lease_s, out
        secret = store.seasons.secret(season.name)  # the deals' key, as the store keeps it
        if secret is not None:
            self.season = dataclasses.replace(season, secret=secret.secret,
                                              secret_given=secret.given)
        self.rng = random.Random(seed)
        cfg = season.config.ladder or LadderConfig()
        self.queue_ahead = cfg.queue_ahead
        self.active_versions = cfg.active_versions
        self.bots_per_author = cfg.bots_per_author
        self.model = Ladder(placement_pairs=cfg.placement_pairs)
        self.rest = Rest(pairs_per_hour=cfg.rest_pairs_per_hour)
        self.clock = clock
        self.rated: set[str] = set()
        self._rated_since: float | None = None  # the newest pair score rated so far
        self.sender: Sender | None = None
        self.max_in_play = 0   # the most matches seen queued or playing at once
        self.resting = False
        self._last_added: float | None = None  # when the last pair was added (clock)
        self._restore()

    # -- memory ------------------------------------------------------------------------
    def _restore(self) -> None:
        """The joined versions pinned as they were, the retired ones retired, the scored pairs
        replayed into the ratings, and the pairs in play scheduled."""
        from scheduler.pinning import pin
        name = self.season.name
        entries = {e.bot: e for e in self.store.ladder.entries(name)}
        stored = [b.name for b in self.store.seasons.bots(name)]
        listed = {b.name for b in self.season.bots}
        extra = tuple(SeasonBot(n, None, ref=n) for n in stored if n not in listed)
        self.season = pin(dataclasses.replace(self.season, bots=self.season.bots + extra),
                          self.store)
        missing = [n for n in stored if n not in entries]
        if missing:  # the bots its file names, entered when it opened
            self.store.ladder.add_entries(name, missing)
            entries = {e.bot: e for e in self.store.ladder.entries(name)}
        for bot in stored:
            self.model.enter(bot)
            if (e := entries.get(bot)) is not None and e.retired_at is not None:
                self.model.retire(bot)
        self._rate_new()
        for m in self.store.pages.matches(name):
            if m.status in (MatchStatus.PENDING, MatchStatus.RUNNING) and not m.mirror:
                a, b = m.pairing.split("|")
                self.model.schedule(a, b)

    # -- one pass ----------------------------------------------------------------------
    def admit(self) -> list[str]:
        """Versions that became playable join; those no longer active retire."""
        ladder = self.season.config.ladder
        if ladder is None or not ladder.open_entry:
            return []
        from scheduler.pinning import pin_joining
        r = roster(self.store, self.active_versions, self.bots_per_author)
        want = list(r.playing)
        have = {e.bot: e for e in self.store.ladder.entries(self.season.name)}
        new = [ref for ref in want if ref not in have]
        for bot, e in have.items():
            if e.retired_at is None and bot not in want and \
                    bot not in {b.name for b in self.season.bots if b.ref is None}:
                self.store.ladder.retire(self.season.name, bot)
                self.model.retire(bot)
                print(f"ladder {self.season.name}: {bot} {r.why_out.get(bot, 'withdrawn')}",
                      file=self.out, flush=True)
            elif e.retired_at is not None and bot in want and bot in self.model.entrants:
                self.store.ladder.rejoin(self.season.name, bot)  # its newer one withdrawn
                self.model.entrants[bot].active = True
                print(f"ladder {self.season.name}: {bot} plays again", file=self.out,
                      flush=True)
        if not new:
            return []
        joining = pin_joining(self.store, new, f"ladder {self.season.name}")
        rows, authors = [], {}
        for b in joining:
            rows.append(NewBot(b.name, b.loaded.version, b.loaded.content_hash(),
                               {**b.to_dict(), "files": b.loaded.file_hashes()},
                               b.version_hash))
            name, _, version = b.name.partition("@")
            row = self.store.registry.version(name, version)
            authors[b.name] = row.author if row is not None else None
        self.store.ladder.join(self.season.name, rows, authors)
        self.season = dataclasses.replace(self.season, bots=self.season.bots + joining)
        for b in joining:
            self.model.enter(b.name)
            print(f"ladder {self.season.name}: {b.name} joins (placement: "
                  f"{self.model.placement_pairs} pairs)", file=self.out, flush=True)
        return new

    def _rate_new(self) -> int:
        """Rate the pairs scored since the last pass, in the order they were written."""
        got = sorted((p for p in self.store.results.pair_scores(self.season.name,
                                                                since=self._rated_since)
                      if p.cluster not in self.rated), key=lambda p: (p.written_at, p.cluster))
        for p in got:
            for bot in (p.bot_a, p.bot_b):
                if bot not in self.model.entrants:
                    self.model.enter(bot)
            index = len(self.rated)
            self.model.rate(p.bot_a, p.bot_b, p.score_a)
            self.rated.add(p.cluster)
            a, b = self.model.entrants[p.bot_a], self.model.entrants[p.bot_b]
            self.store.ladder.record_ratings(self.season.name, p.cluster, index,
                                             [(e.name, e.mu, e.sigma, e.pairs) for e in (a, b)])
            self._rated_since = p.written_at
        return len(got)

    def fill(self) -> int:
        """Add duplicate pairs while fewer than ``queue_ahead`` matches are in play; once the
        ranking is settled (``Rest``), one pair at a time at the rest's rate."""
        from scheduler.store import plan_rows
        name = self.season.name
        in_play = self.store.ladder.in_play(name)
        resting = self.rest.settled(self.model)
        if resting != self.resting:
            self.resting = resting
            print(f"ladder {name}: " + (
                f"the ranking is settled: resting ({self.rest.pairs_per_hour} pairs an hour)"
                if resting else "playing at full rate again"), file=self.out, flush=True)
        added = 0
        while in_play + 2 <= self.queue_ahead:
            if resting and (in_play or not self.rest.due(self._last_added, self.clock())):
                break
            pair = self.model.next_pair(self.rng)
            if pair is None:
                break
            a, b = pair
            ordinal = self.store.ladder.next_ordinal(name)
            k = ordinal // 2
            deals = self.season.deal_set(0, k)
            plans = [MatchPlan(match_id=f"{name}-{ordinal + i:05d}", ordinal=ordinal + i,
                               pairing=f"{a}|{b}", leg=0, deal_set=k, mirror=bool(i),
                               seats=(t0, t1, t0, t1), deals=deals)
                     for i, (t0, t1) in enumerate(((a, b), (b, a)))]
            self.store.ladder.add_matches(name, plan_rows(self.season, plans))
            self.model.schedule(a, b)
            self._last_added = self.clock()
            in_play += 2
            added += 1
        self.max_in_play = max(self.max_in_play, in_play)
        return added

    def send(self) -> None:
        """Distributed: the due matches to the workers' ladder lane (``dispatch.send_due``,
        at most ``queue_ahead`` queued or playing). Local: play what is in play here, to the
        end."""
        name = self.season.name
        if self.broker is None:
            from scheduler.league import run_local
            run_local(self.store, name, workers=self.workers, lease_s=self.lease_s,
                      progress=False)
            return
        from scheduler.dispatch import BrokerSender, Lane, Resend, send_due
        if self.sender is None:
            self.sender = BrokerSender(self.broker)
        if send_due(self.store, name, self.sender, Lane.LADDERS, window=self.queue_ahead,
                    resend=Resend(lease_s=self.lease_s)) is None:
            print(f"ladder {name}: {self.sender.error}; trying again", file=self.out,
                  flush=True)

    def step(self) -> bool:
        """One pass; False once the ladder is cancelled and nothing is left playing."""
        name = self.season.name
        if self.store.cancels.cancelled(name):
            self.store.cancels.settle(name)
            self._rate_new()
            c = self.store.seasons.counts(name)
            return c[MatchStatus.RUNNING] > 0
        self.admit()
        self._rate_new()
        self.fill()
        self.send()
        self._rate_new()
        return True

    def run(self, *, poll_s: float = 1.0, stop: threading.Event | None = None,
            timeout_s: float | None = None) -> StatusCounts:
        """Passes (``step``) every ``poll_s`` seconds (resting: every ``REST_POLL_S`` at
        least) until the ladder is over or ``stop`` is set; its counts then."""
        from scheduler.dispatch import repeat

        def step() -> float | None:
            if not self.step():
                return None
            return max(poll_s, REST_POLL_S) if self.resting else poll_s
        repeat(step, stop=stop or threading.Event(), timeout_s=timeout_s,
               timed_out=lambda: f"ladder {self.season.name!r} still running after "
                                 f"{timeout_s} s")
        return self.store.seasons.counts(self.season.name)


def ladder_table(store, season: str) -> list[dict]:
    """Each version of the ladder: its latest openskill rating (mu, sigma; shown as mu - 3
    sigma with mu +- 2 sigma as its interval), pairs, when it last played, joined, retired."""
    latest: dict[str, RatingRow] = {}
    for h in store.ladder.rating_history(season):
        latest[h.bot] = h
    from openskill.models import PlackettLuce
    prior = PlackettLuce().rating()
    out = []
    for e in store.ladder.entries(season):
        h = latest.get(e.bot)
        mu, sigma = (h.mu, h.sigma) if h else (prior.mu, prior.sigma)
        out.append({"bot": e.bot, "author": e.author, "rating": mu - 3 * sigma,
                    "mu": mu, "sigma": sigma, "low": mu - 2 * sigma, "high": mu + 2 * sigma,
                    "pairs": h.pairs if h else 0, "last_played": h.at if h else None,
                    "joined_at": e.joined_at, "retired_at": e.retired_at})
    out.sort(key=lambda r: (r["retired_at"] is not None, -r["rating"], r["bot"]))
    return out


def ladder_history(store, season: str) -> list[dict]:
    """The ratings over the ladder: after each rated pair, every version's latest conservative
    rating (mu - 3 sigma) so far, for ``web.pages.history_plot``."""
    current: dict[str, float] = {}
    out: list[dict] = []
    for h in store.ladder.rating_history(season):
        current[h.bot] = h.mu - 3 * h.sigma
        if out and out[-1]["units"] == h.pair_index + 1:
            out[-1]["ratings"] = dict(current)
        else:
            out.append({"units": h.pair_index + 1, "ratings": dict(current)})
    return out


def ladder_places(store, refs) -> dict[str, list[dict]]:
    """Where each version of ``refs`` stands in every open ladder, for its author: playing,
    in placement (k of N pairs), waiting to join, or why it is out (``roster``); a ladder
    that does not name it is left out. One roster and one table a ladder."""
    out: dict[str, list[dict]] = {ref: [] for ref in refs}
    for season in store.seasons.names():
        row = store.seasons.get(season)
        cfg = row.config.ladder if row else None
        if cfg is None or not cfg.open_entry or store.cancels.cancelled(season):
            continue
        r = roster(store, cfg.active_versions, cfg.bots_per_author)
        table = {e["bot"]: e for e in ladder_table(store, season)}
        for ref in out:
            status = _place(ref, cfg, r, table.get(ref))
            if status is not None:
                out[ref].append({"season": season, "status": status})
    return out


def _place(ref: str, cfg: LadderConfig, r: Roster, entry: dict | None) -> str | None:
    if entry is not None and entry["retired_at"] is None:
        if entry["pairs"] < cfg.placement_pairs:
            return f"placement: {entry['pairs']} of {cfg.placement_pairs} pairs played"
        return "playing"
    if ref in r.why_out:
        return r.why_out[ref]
    if ref in r.playing:
        return "ready: joins at the ladder's next pass"
    return "retired" if entry is not None else None
