"""What the workers do for the submission service, and what the service sends them.

A version an author uploads is stored ``queued``; a worker takes it (``check_version``): fetches
it from the store, builds it in the sandbox (``building``), plays its check (``checking``) and
leaves it ``ready`` or ``refused`` with the reason and its build log. The check cannot be told
from play: a duplicate pair as one of the service's seasons plays it (``check_like_here``: an
open ladder's, else the newest season's, else the next scrimmage's match ids, rules, time
control, fault policy, sandbox limits and deals per match) against a house bot
(``house.house_bots``: the organiser's ready versions; none: the random sample bot). A bot
that behaves only when it is checked is caught by the crash limit (``scheduler.crash_limit``,
run by the worker that stored a forfeited match): a ready version that forfeited ``limit`` of
its last ``window`` matches is ``suspended`` (out of the ladders, refused for new scrimmages and
seasons) until the organiser lifts it (``arena bots unsuspend``). A version that becomes ready
asks for its A/B test against its predecessor (``scheduler.service.ab``). A scrimmage, and an
A/B test, is a season of its own (``open_scrimmage``: opened on a worker, which builds what it
needs), whose matches the service's dispatcher sends on the scrimmage lane (``Dispatcher``; the
lanes and their shares: ``scheduler.dispatch``). The web process never builds nor plays a bot.
"""

from __future__ import annotations

import random
import tempfile
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from typing import TYPE_CHECKING

from house.settings import CHECK_VARIANT, SCRIMMAGE_DEALS
from scheduler.states import AB_KINDS, MatchStatus, ScrimmageKind, ScrimmageState, VersionState

if TYPE_CHECKING:
    from scheduler.store.rows import ScrimmageRow


#: characters of a build log kept for its author (its end, from a whole line)
BUILD_LOG_KEPT = 64 * 1024
#: a version whose worker fell silent this long is taken again
STALE_CLAIM_S = 1800.0
#: the variant and deals a check and a scrimmage play unless the service says otherwise
DEFAULT_VARIANT: str = CHECK_VARIANT.default
SCRIMMAGE_PREFIX = "scrimmage-"


@dataclass(frozen=True)
class IntakeSettings:
    """What the workers' checks and scrimmages play, from the workers' environment:
    ``ARENA_CHECK_VARIANT`` (the variant of scrimmages, and of a check when the store has no
    season to take it from) and ``ARENA_SCRIMMAGE_DEALS`` (deals per scrimmage match)."""
    variant: str = DEFAULT_VARIANT
    scrimmage_deals: int = 2

    @classmethod
    def from_env(cls) -> "IntakeSettings":
        return cls(variant=CHECK_VARIANT.value(), scrimmage_deals=SCRIMMAGE_DEALS.value())


def _tail(log: str) -> str:
    if len(log) <= BUILD_LOG_KEPT:
        return log
    tail = log[-BUILD_LOG_KEPT:]
    return "[...]\n" + tail[tail.find("\n") + 1:]


def check_like_here(store, settings: IntakeSettings, rng: random.Random):
    """What a check looks like on this service (``scheduler.league.CheckLike``): a pair of
    one of its open ladders (each ready version enters them; one drawn at random), else of its
    newest season that is not cancelled nor a scrimmage, else of the next scrimmage (what is
    left to play), on deals of a fresh secret."""
    from scheduler.league import check_like
    from scheduler.season import load_season, new_secret
    scrimmages = store.scrimmages.seasons()
    ladders, others = [], []
    for name in store.seasons.names():  # oldest first
        if name in scrimmages or store.cancels.cancelled(name):
            continue
        config = store.seasons.get(name).config
        if config.ladder is not None and config.ladder.open_entry:
            ladders.append(config)
        else:
            others.append(config)
    if ladders or others:
        config = rng.choice(ladders) if ladders else others[-1]
        played = store.ladder.next_ordinal(config.name)
    else:  # the form a scrimmage's season file gives it
        done = [s for s in store.scrimmages.of() if s.kind == ScrimmageKind.SCRIMMAGE]
        like = _Scrimmage(max((x.id for x in done), default=0) + 1, settings.variant,
                          done[0].pairs if done else 1, "a", "b")
        with tempfile.TemporaryDirectory(prefix="arena-intake-") as tmp:
            path = Path(tmp) / "scrimmage.toml"
            path.write_text(scrimmage_season_text(like, settings.scrimmage_deals),
                            encoding="utf-8")
            config, played = load_season(path).config, 0
    return check_like(config, secret=new_secret(), rng=rng, played=played)


#: house bots tried as a check's opponent before the random sample bot is taken instead
HOUSE_TRIES = 3


def house_opponent(store, besides: str, rng: random.Random, held: ExitStack):
    """A house bot drawn at random, as a ``SeasonBot`` materialised here (its build done once
    per machine) and held in the cache by ``held`` (no eviction takes it while it plays);
    None when there is none, or none of ``HOUSE_TRIES`` could be placed."""
    from referee.match.spec import SeatBot
    from scheduler.registry.cache import using
    from scheduler.registry.versions import BuildError, materialise, pin_portable
    from scheduler.season import SeasonBot
    from scheduler.service.house import house_bots
    house = house_bots(store, besides=besides)
    for v in rng.sample(house, min(len(house), HOUSE_TRIES)):
        held.enter_context(using(v.content_hash))
        try:
            seat = materialise(store, SeatBot(v.ref, pin_portable(v, v.ref),
                                              version_hash=v.content_hash))
        except (BuildError, ValueError, OSError):
            continue
        return SeasonBot(v.ref, seat.manifest)
    return None


def check_version(store, version_id: int, *, settings: IntakeSettings | None = None,
                  workdir: Path | None = None, rng: random.Random | None = None) -> str:
    """Build and check the queued version ``version_id`` on this machine (``workdir``: where
    the check's matches keep their files; by default a temporary folder); returns its final
    state (or "not queued" when another worker has it or it is done). The version and its
    opponent are held in the worker's cache while the check plays them."""
    with ExitStack() as held:
        return _check_version(store, version_id, held, settings=settings, workdir=workdir,
                              rng=rng)


def _check_version(store, version_id: int, held: ExitStack, *, settings, workdir,
                   rng) -> str:
    from referee.match.spec import SeatBot
    from scheduler.registry.cache import using
    from scheduler.execute import MatchFailed
    from scheduler.league import smoke_check
    from referee.seats.build import BUILD_LOG
    from scheduler.registry.versions import BuildError, materialise, pin_portable
    from scheduler.season import SeasonBot
    from scheduler.store import worker_name
    settings = settings or IntakeSettings.from_env()
    rng = rng or random.SystemRandom()
    me = worker_name()
    if not store.versions.claim(version_id, me, STALE_CLAIM_S):
        return "not queued"
    v = store.registry.version_by_id(version_id)
    if v is None:
        return "not queued"
    held.enter_context(using(v.content_hash))
    try:
        manifest = pin_portable(v, v.ref)
        seat = materialise(store, SeatBot(v.name, manifest, version_hash=v.content_hash))
    except BuildError as e:
        store.versions.set_state(version_id, VersionState.REFUSED,
                                 reason=f"the build failed: {e}"[:4000],
                                 build_log=_tail(e.log), worker=me)
        return VersionState.REFUSED
    except (ValueError, OSError) as e:
        store.versions.set_state(version_id, VersionState.REFUSED,
                                 reason=f"cannot be placed: {e}"[:4000], worker=me)
        return VersionState.REFUSED
    log = ""
    if getattr(manifest, "build", ()):
        try:
            log = (seat.manifest.folder / BUILD_LOG).read_text(encoding="utf-8", errors="replace")
        except OSError:
            log = ""
    like = check_like_here(store, settings, rng)
    opponent = house_opponent(store, v.content_hash, rng, held)
    store.versions.set_state(version_id, VersionState.CHECKING, build_log=_tail(log), worker=me)
    with tempfile.TemporaryDirectory(prefix="arena-intake-") as tmp:
        try:
            why = smoke_check(SeasonBot(v.ref, seat.manifest), like, opponent=opponent, rng=rng,
                              workdir=Path(workdir or tmp) / "check", infra_raises=True)
        except MatchFailed as e:  # the machine's fault, not the bot's: queued again
            store.versions.set_state(version_id, VersionState.QUEUED, worker=me,
                                     reason=f"a worker could not play its check ({e}); it "
                                     "is tried again"[:4000])
            return VersionState.QUEUED
    if why:
        store.versions.set_state(version_id, VersionState.REFUSED,
                                 reason=f"the smoke match failed: {why}"[:4000], worker=me)
        return VersionState.REFUSED
    store.versions.set_state(version_id, VersionState.READY, worker=me)
    from scheduler.service.ab import for_new_version
    for_new_version(store, v, settings.variant)
    return VersionState.READY


def run_here(store_url: str, task: str, arg, lease_s: float,
             max_attempts: int | None = None) -> str:
    """One task as a worker runs it, in a process of this machine (``dispatch.LocalSender``:
    ``arena serve`` with no broker, a season's local run); a match is tried at most
    ``max_attempts`` times (None: ``ARENA_MAX_ATTEMPTS`` or 3)."""
    from scheduler.dispatch import Task, play_here
    from scheduler.store import open_store
    if task == Task.PLAY_MATCH.value:
        return play_here(store_url, task, arg, lease_s, max_attempts)
    if task == Task.CHECK_VERSION.value:
        return check_version(open_store(store_url), int(arg))
    return open_scrimmage(open_store(store_url), int(arg))


@dataclass(frozen=True, slots=True)
class _Scrimmage:
    """What a scrimmage's season file is made of (a ``ScrimmageRow`` has it too)."""
    id: int
    variant: str
    pairs: int
    bot: str
    opponent: str
    kind: str = ScrimmageKind.SCRIMMAGE


def scrimmage_season_text(scrimmage: ScrimmageRow | _Scrimmage, deals: int) -> str:
    """The season file of a scrimmage: its two versions, duplicate, on fresh secret deals (an
    A/B test's: on the deals of ``ARENA_AB_SECRET`` when it is set)."""
    import json

    from house.settings import AB_SECRET
    from scheduler.service.ab import AB_PREFIX
    ab = scrimmage.kind in AB_KINDS
    name = f"{AB_PREFIX if ab else SCRIMMAGE_PREFIX}{scrimmage.id}"
    pinned = AB_SECRET.value() if ab else None
    return "\n".join([
        f"name = {json.dumps(name)}", f"variant = {json.dumps(scrimmage.variant)}",
        'format = "round_robin"', "duplicate = true", f"deal_sets = {scrimmage.pairs}",
        f"deals_per_set = {deals}", f"seed = {json.dumps(name)}",
        *([f"secret = {json.dumps(pinned)}"] if pinned else []), "",
        "[[bots]]", f"bot = {json.dumps(scrimmage.bot)}",
        f"name = {json.dumps(scrimmage.bot)}", "",
        "[[bots]]", f"bot = {json.dumps(scrimmage.opponent)}",
        f"name = {json.dumps(scrimmage.opponent)}", ""])


def open_scrimmage(store, scrimmage_id: int, *, settings: IntakeSettings | None = None) -> str:
    """Open scrimmage ``scrimmage_id``'s season in the store (its versions built here, as a
    season's would be); its matches are then the dispatcher's to send. Returns its state."""
    from scheduler.league import open_season
    from scheduler.season import SeasonError, load_season
    settings = settings or IntakeSettings.from_env()
    s = store.scrimmages.get(scrimmage_id)
    if s is None or s.state != ScrimmageState.QUEUED:
        return s.state if s else "gone"
    with tempfile.TemporaryDirectory(prefix="arena-scrimmage-") as tmp:
        path = Path(tmp) / "scrimmage.toml"
        path.write_text(scrimmage_season_text(s, settings.scrimmage_deals), encoding="utf-8")
        try:
            season = load_season(path)
            open_season(season, store, workdir=Path(tmp), check=False, out=None)
        except (SeasonError, ValueError, OSError) as e:
            store.scrimmages.change(scrimmage_id, expect=(ScrimmageState.QUEUED,),
                                    state=ScrimmageState.FAILED,
                                    reason=str(e).replace(str(path), "the scrimmage")[:2000])
            return ScrimmageState.FAILED
    if not store.scrimmages.change(scrimmage_id, expect=(ScrimmageState.QUEUED,),
                                   state=ScrimmageState.PLAYING, season=season.name):
        store.cancels.cancel(season.name, by="its scrimmage was cancelled")
        return ScrimmageState.CANCELLED
    return ScrimmageState.PLAYING


class Dispatcher:
    """The service's sender, on the lanes of ``scheduler.dispatch``: queued versions to the
    intake lane (authors in turn, at most ``intake_window`` sent and unfinished), queued
    scrimmages to be opened there, and the due matches of the scrimmages in play to the
    scrimmage lane (at most ``window`` of each); a scrimmage whose matches are over is
    ``done``. ``intake_window`` (None: the intake slots the sender knows of, at least one):
    the versions sent and unfinished at once, so that authors take turns at the slots rather
    than in the broker's queue. A/B tests (``scheduler.service.ab``) are scrimmages too: they
    are given the bounds of ``ab`` (None: ``ARENA_AB_*``) before they are opened, their
    matches together hold at most ``ab.window`` slots, and each pass judges them. ``sender``: a
    broker's URL (the workers) or a ``Sender`` (``LocalSender``: this machine's pools).
    ``step`` is one pass; ``start`` runs passes on a thread every ``every_s`` seconds."""

    def __init__(self, store, sender, *, window: int = 4, every_s: float = 1.0,
                 lease_s: float | None = None, intake_window: int | None = None,
                 resend_after_s: float | None = None, ab=None) -> None:
        from scheduler.dispatch import BrokerSender, Resend
        from scheduler.service.ab import AbSettings
        self.store, self.window, self.intake_window = store, window, intake_window
        self.ab = AbSettings.from_env() if ab is None else ab
        self.sender = BrokerSender(sender) if isinstance(sender, str) else sender
        self.every_s = every_s
        default = Resend()
        self.resend = Resend(default.after_s if resend_after_s is None else resend_after_s,
                             default.lease_s if lease_s is None else lease_s)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.broker_error: str | None = None

    def _dispatch(self, task, lane, due, **marks) -> bool:
        from scheduler.dispatch import dispatch
        sent = dispatch(self.sender, task, lane, due, **marks)
        self.broker_error = self.sender.error
        return sent is not None

    def step(self) -> None:
        from scheduler.dispatch import Lane, Task, intake_order
        store = self.store
        queue = store.versions.intake_queue(self.resend.after_s, STALE_CLAIM_S)
        window = self.intake_window or max(1, self.sender.intake_slots())
        if not self._dispatch(Task.CHECK_VERSION, Lane.INTAKE, intake_order(queue, window),
                              sent=store.versions.mark_sent):
            return
        from scheduler.service.ab import arm
        due = [s.id for s in store.scrimmages.of(states=(ScrimmageState.QUEUED,))
               if self.resend.due(s.sent_at)
               and (s.kind not in AB_KINDS or arm(store, s, self.ab))]
        if not self._dispatch(Task.OPEN_SCRIMMAGE, Lane.INTAKE, due, sent=lambda sid:
                              store.scrimmages.change(sid, expect=(ScrimmageState.QUEUED,),
                                                      sent_at=time.time())):
            return
        playing = store.scrimmages.of(states=(ScrimmageState.PLAYING,))[::-1]  # oldest first
        tests = [s for s in playing if s.kind in AB_KINDS]
        for s in playing:
            if s.kind not in AB_KINDS and not self._play(s, self.window):
                return
        # the A/B tests' share: ``ab.window`` matches of them all in play, the oldest first
        in_play = {s.id: self._in_play(s.season) for s in tests}
        room = self.ab.window - sum(in_play.values())
        for s in tests:
            sent = self._play(s, in_play[s.id] + max(0, room))
            if sent is None:
                return
            room -= sent

    def _in_play(self, season: str | None) -> int:
        if season is None:
            return 0
        c = self.store.seasons.counts(season)
        return c[MatchStatus.RUNNING] + self.store.queue.queued(season, self.resend.after_s)

    def _play(self, s: ScrimmageRow, window: int) -> int | None:
        """Send the due matches of scrimmage ``s`` (at most ``window`` in play), an A/B
        test judged first; how many were sent, None when the sender failed."""
        from scheduler.dispatch import Lane, send_due
        store, season = self.store, s.season
        assert season is not None  # (a scrimmage in play has its season)
        store.cancels.settle(season)
        if s.kind in AB_KINDS and self._judged(s, open_matches=True):
            return 0
        c = store.seasons.counts(season)
        if c[MatchStatus.PENDING] + c[MatchStatus.RUNNING] == 0:
            if s.kind in AB_KINDS and self._judged(s, open_matches=False):
                return 0
            played = c[MatchStatus.DONE] > 0 and s.kind not in AB_KINDS
            store.scrimmages.change(
                s.id, expect=(ScrimmageState.PLAYING,),
                state=ScrimmageState.DONE if played else ScrimmageState.FAILED,
                reason=None if played else "no match could be played" if not c[
                    MatchStatus.DONE] else "a pair of it could not be played: no verdict")
            return 0
        sent = send_due(store, season, self.sender, Lane.SCRIMMAGES, window=window,
                        resend=self.resend)
        self.broker_error = self.sender.error
        return sent

    def _judged(self, s: ScrimmageRow, *, open_matches: bool) -> bool:
        """Judge A/B test ``s`` on its pairs scored so far; True when it is over (decided or
        at its pair limit: ``ab.finish``). With every match over (``open_matches`` False), a
        pair a worker stored and did not score yet is scored here first."""
        from scheduler.service.ab import finish, judge
        if not open_matches:
            from scheduler.stats.scores import score_pair
            scored = {p.cluster for p in self.store.results.pair_scores(s.season)}
            for m in self.store.pages.matches(s.season):
                if m.status == MatchStatus.DONE and m.cluster not in scored:
                    score_pair(self.store, m.id)
        got = judge(self.store, s)
        if got.decision is None and not got.at_limit:
            return False
        finish(self.store, s, got)
        return True

    def start(self) -> "Dispatcher":
        from scheduler.dispatch import repeat

        def step() -> float:
            try:
                self.step()
            except Exception as e:  # the service stays up; the next pass tries again
                self.broker_error = f"{type(e).__name__}: {e}"
            return self.every_s
        self._thread = threading.Thread(target=repeat, args=(step,), kwargs={"stop": self._stop},
                                        name="arena-dispatcher", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
