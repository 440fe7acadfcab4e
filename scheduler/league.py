"""Running a season: admit its bots, write its matches to the store, play them.

Two ways to play, one way to send a match (``dispatch.send_due``) and one match function
(``execute.execute_match``, run as a worker runs it):

- local (the default): process pools on this machine (``dispatch.LocalSender``), no servers;
- distributed: Celery tasks over Redis, played by ``arena worker`` processes on any machine
  that reaches the broker and the store.

Either way this process stays the reconciler: it sends in a bounded window and sends again
matches whose message was lost (a flushed or restarted broker) or whose lease expired (a
killed worker).

Either way a season is resumable: running it again plays only what is not done. A cancelled
season (``arena season cancel``) is not: a run in progress stops once the matches in play end.
"""

from __future__ import annotations

import contextlib
import random
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from house import settings
from referee.match.spec import DEFAULT_TIME_CONTROL, DealSpec, MatchSpec, SeatBot, TimeControl
from referee.seats.manifest import changed_files

from scheduler.dispatch import RESEND_S
from scheduler.execute import MatchFailed, play_again
from scheduler.season import Season, SeasonError, deal_seed, pairing_spec
from scheduler.season_config import LadderConfig, SeasonConfig
from scheduler.pinning import pin
from scheduler.states import FINISHED, MatchStatus
from scheduler.workers import process_alive
from scheduler.store import DEFAULT_LEASE_S, Store, plan_rows
from scheduler.store.rows import NewBot, StatusCounts

if TYPE_CHECKING:  # numpy: imported only where a test runs
    from referee.seats.sandbox import SandboxPolicy
    from scheduler.stats.power import SequentialResult

ROOT = Path(__file__).resolve().parent.parent
SMOKE_PARTNER = ROOT / "sample_bots" / "python" / "random"


def _progress(total: int, done: int, desc: str, enabled: bool, unit: str = "match"):
    from tqdm import tqdm
    return tqdm(total=total, initial=done, desc=desc, unit=unit, disable=not enabled,
                dynamic_ncols=True, file=sys.stderr, smoothing=0.1)


def here(bot) -> SeatBot:
    """SeasonBot ``bot`` as a seat plays it from its folder here (not a pinned version)."""
    return SeatBot.of(bot.name, bot.manifest)


@dataclass(frozen=True)
class CheckLike:
    """What the two matches of a check look like from a seat: a pair of the season ``season``
    (match ids ``{season}-{ordinal:05d}`` and the next, as its own), under its variant,
    options, time control and fault policy and sandbox limits, on ``deals`` (as many as one of
    its matches plays, from a secret of their own)."""

    season: str
    ordinal: int
    variant: str
    options: dict
    time_control: TimeControl
    deals: tuple[DealSpec, ...]
    sandbox: SandboxPolicy | None = None

    def match_ids(self) -> tuple[str, str]:
        return (f"{self.season}-{self.ordinal:05d}", f"{self.season}-{self.ordinal + 1:05d}")


def check_like(config: SeasonConfig, *, secret: str, rng: random.Random,
               played: int = 0) -> CheckLike:
    """A check that looks like a pair of matches of the season of ``config`` (its stored
    configuration): its rules, time control, fault policy, sandbox and
    deals per match, and the ids of one of its pairs: any pair it plans, or, in a ladder (or
    a season that plans none), one of the next ones after the ``played`` matches it has added.
    Its deals are keyed with ``secret`` (a season's: its first one is ``Season.check_deal``),
    and are no deal of the season's matches."""
    deals = tuple(DealSpec(deal_seed(secret, f"{config.seed}:check" + (str(j) if j else "")),
                           config.start_levels, j % 4)
                  for j in range(config.deals_per_set))
    planned = config.planned_matches()
    if planned >= 2:
        ordinal = 2 * rng.randrange(planned // 2)
    else:
        ahead = (config.ladder or LadderConfig()).queue_ahead
        ordinal = played + played % 2 + 2 * rng.randrange(max(1, ahead // 2))
    return CheckLike(config.name, ordinal, config.variant, dict(config.options),
                     config.time_control, deals, config.sandbox)


def season_check(season: Season, *, rng: random.Random | None = None,
                 played: int = 0) -> CheckLike:
    """``bots check`` as season ``season`` admits a bot: one of its pairs, on check deals keyed
    with its secret (``check_like``)."""
    return check_like(season.config, secret=season.secret, rng=rng or random.SystemRandom(),
                      played=played)


def smoke_partner():
    """The random sample bot, as a ``SeasonBot``: the opponent of a check with no house bot,
    and of a check match a house bot spoiled."""
    from referee.seats.manifest import load_manifest
    from scheduler.season import SeasonBot
    return SeasonBot("smoke-random", load_manifest(SMOKE_PARTNER))


def _play_all(specs: list[MatchSpec], workdir: Path) -> list:
    """Each spec played (``play_again``), at once, in ``workdir / MATCH_ID``: its match file,
    or the ``MatchFailed`` it raised."""
    from concurrent.futures import ThreadPoolExecutor

    def one(spec):
        try:
            return play_again(spec, workdir / spec.match_id)
        except MatchFailed as e:
            return e
    with ThreadPoolExecutor(max_workers=len(specs)) as pool:
        return list(pool.map(one, specs))


def smoke_check(bot, like: CheckLike, *, workdir: Path, opponent=None,
                rng: random.Random | None = None, infra_raises: bool = False) -> str | None:
    """``bots check``: a duplicate pair as ``like``'s season plays one (``CheckLike``: its
    match ids, rules, time control, sandbox limits and deals per match; a bot that cannot start
    under them fails its check, not every match), SeasonBot ``bot`` against ``opponent`` (a
    house bot; None: the random sample bot) on both sides of the same cards, in an order drawn
    by ``rng``. A match whose house bot faulted (its play ended or went astray) proves nothing:
    the pair is played again against the random sample bot. Returns None when the bot played
    both matches without a fault, else why not. ``infra_raises``: a match the infrastructure
    could not play (no bot's fault) raises ``MatchFailed`` instead of being a reason."""
    rng = rng or random.SystemRandom()
    first = rng.random() < 0.5
    for against in ([opponent] if opponent is not None else []) + [smoke_partner()]:
        layouts = [(bot, against), (against, bot)]
        if first:
            layouts.reverse()
        specs = [pairing_spec(mid, here(t0), here(t1), variant=like.variant,
                              options=like.options, deals=like.deals,
                              time_control=like.time_control, sandbox=like.sandbox)
                 for mid, (t0, t1) in zip(like.match_ids(), layouts)]
        spoiled = False
        for (t0, _), spec, match in zip(layouts, specs, _play_all(specs, workdir)):
            if isinstance(match, MatchFailed):
                if infra_raises:
                    raise match
                return f"the check match {spec.match_id} did not finish: {match}"
            team = 0 if t0 is bot else 1
            faults = [f for f in match.faults if f.seat % 2 == team]
            if faults:
                f = faults[0]
                log = match.extra.get("bot_logs", {}).get(str(f.seat), "").strip().splitlines()
                tail = f"; its output ends: {log[-1]}" if log else ""
                return (f"{f.kind}: {f.reason} ({len(faults)} fault(s) in match "
                        f"{spec.match_id}, {len(like.deals)} deal(s), seats {team} and "
                        f"{team + 2}){tail}")
            spoiled = spoiled or any(f.seat % 2 != team for f in match.faults)
        if not spoiled:
            return None
    return None


def startable(season: Season, i: int) -> None:
    """Raise SeasonError when the season's bot ``i`` cannot be started (a missing program, a
    folder its sandbox cannot read), naming the bot and the field."""
    from referee.seats.launch import check_startable
    from referee.seats.manifest import ManifestError
    bot = season.bots[i]
    try:
        check_startable(bot.loaded, sandboxed=settings.UNSANDBOXED.text() != "1",
                        unbuilt=bot.version_hash is None)
    except ManifestError as e:
        raise SeasonError(f"{season.path}: field bots[{i}].manifest: bot {bot.name!r} cannot "
                          f"be started: {e}") from None


def admit(season: Season, store: Store, *, workdir: Path, out=sys.stderr) -> dict[str, str]:
    """Check every bot not yet admitted at its current content; raise SeasonError if one fails.
    Writes nothing to the store; returns {bot name: content hash} of the bots it checked."""
    checked: dict[str, str] = {}
    stored = store.seasons.get(season.name) is not None
    known = {b.name: b for b in store.seasons.bots(season.name)} if stored else {}
    played = store.ladder.next_ordinal(season.name) if stored else 0  # (a ladder's matches so far)
    for i, bot in enumerate(season.bots):
        h = bot.loaded.content_hash()
        prior = known.get(bot.name)
        if prior and prior.version_hash and bot.version_hash:
            h = prior.content_hash  # a pinned version: its bytes are the same anywhere
        if prior and prior.content_hash != h:
            files = prior.manifest_fields.get("files")  # (older stores: none)
            what = (f"files {changed_files(files, bot.loaded.file_hashes())}" if files
                    is not None else f"content {prior.content_hash} -> {h}")
            raise SeasonError(f"{season.path}: field bots[{i}].manifest: bot {bot.name!r} "
                              f"changed since season {season.name!r} started ({what}, in "
                              f"{bot.loaded.folder}); results would mix versions: put it "
                              "back as it was, or give the season a new name")
        if (prior and prior.checked_hash == h) or h in checked.values():
            checked[bot.name] = h  # passed before, or the same bot under another name
            continue
        print(f"bots check {bot.name} ({bot.loaded.label}) ...", file=out, flush=True)
        why = smoke_check(bot, season_check(season, played=played),
                          workdir=workdir / f"check-{bot.name}")
        if why:
            raise SeasonError(f"{season.path}: field bots[{i}].manifest: bot {bot.name!r} "
                              f"({bot.loaded.path}) fails bots check: {why}")
        checked[bot.name] = h
    return checked


def _with_stored_secret(season: Season, store: Store, out) -> Season:
    """``season`` keyed with the secret its store keeps (a resumed season plays the same
    deals). A secret set in the file must be the stored one."""
    from dataclasses import replace
    stored = store.seasons.secret(season.name)
    if stored is None:  # stored before season secrets: its matches' deals are in the store
        print(f"note: season {season.name!r} was stored before deal secrets: its deals follow "
              "from its name, so a bot can tell its cards; give the season a new name for "
              "secret deals", file=out)
        return season
    if season.secret_given and season.secret != stored.secret:
        raise SeasonError(f"{season.path}: field 'secret': season {season.name!r} already "
                          "exists in the store with another secret (other deals); give the "
                          "season a new name to start another")
    return replace(season, secret=stored.secret, secret_given=stored.given)


def open_season(season: Season, store: Store, *, workdir: Path, check: bool = True,
                out=sys.stderr) -> int:
    """Create the season in the store (or confirm it matches the stored one); returns the
    number of matches still to play."""
    existing = store.seasons.get(season.name)
    cancel = store.cancels.cancelled(season.name) if existing else None
    if cancel:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(cancel.cancelled_at))
        raise SeasonError(f"{season.path}: season {season.name!r} was cancelled at {when}"
                          f"{' by ' + cancel.by if cancel.by else ''}; a cancelled "

                          "season is not played again: give the season a new name to start "
                          "another")
    if existing:
        season = _with_stored_secret(season, store, out)
    if existing and existing.config_hash != season.config_hash():
        stored = existing.config.to_json()
        now = season.config.to_json()
        diff = [k for k in now if now[k] != stored.get(k)]
        raise SeasonError(f"{season.path}: season {season.name!r} already exists in the store "
                          f"with a different {', '.join(repr(d) for d in diff)}; give the "
                          "season a new name to start another")
    for i, bot in enumerate(season.bots):  # a folder as it is here, before it is submitted
        if bot.manifest is not None:
            startable(season, i)
    given = season
    season = pin(season, store, out)  # every bot a registry version, materialised here
    for i, bot in enumerate(given.bots):  # a version by reference, as fetched here
        if bot.manifest is None:
            startable(season, i)
    checked = admit(season, store, workdir=workdir, out=out) if check else {}
    if not existing:
        bot_rows = [NewBot(b.name, b.loaded.version, b.loaded.content_hash(),
                           {**b.to_dict(), "files": b.loaded.file_hashes()},
                           b.version_hash, checked.get(b.name)) for b in season.bots]
        store.seasons.create(season.name, season.config, season.config_hash(),
                             str(season.path), bot_rows, plan_rows(season, season.plan()),
                             secret=season.secret, secret_given=season.secret_given)
    else:
        for name, h in checked.items():
            store.seasons.mark_checked(season.name, name, h)
        again = store.queue.retry_failed(season.name)
        if again:
            print(f"{again} failed match(es) will be tried again", file=out)
    c = store.seasons.counts(season.name)
    return c[MatchStatus.PENDING] + c[MatchStatus.RUNNING]


def _said_cancelled(store: Store, season_name: str, counts: StatusCounts) -> None:
    """Say that the run ended because its season was cancelled, and what was left unplayed."""
    if store.cancels.cancelled(season_name):
        print(f"season {season_name} was cancelled: {counts[MatchStatus.CANCELLED]} matches "
              f"not played, {counts[MatchStatus.DONE]} done stay counted", file=sys.stderr)


def _counted(store: Store, season_name: str, bar, shown: int) -> tuple[StatusCounts, int]:
    """The season's counts now, and its finished matches, the bar moved on by those finished
    since ``shown``."""
    counts = store.seasons.counts(season_name)
    finished = sum(counts[s] for s in FINISHED)
    if finished > shown:
        bar.update(finished - shown)
    return counts, max(shown, finished)


def run_local(store: Store, season_name: str, *, workers: int = 2,
              lease_s: float = DEFAULT_LEASE_S, progress: bool = True,
              max_attempts: int | None = None, poll_s: float = 0.5) -> StatusCounts:
    """Play the season's remaining matches in a process pool of this machine
    (``dispatch.LocalSender`` of ``workers`` match slots running ``dispatch.play_here``), sent
    as a worker's are (``dispatch.send_due``, at most ``workers`` in play); returns the final
    counts. A match held by a live process elsewhere is waited for; one whose attempt failed
    for the infrastructure's sake is played again, up to ``max_attempts`` (default
    ``ARENA_MAX_ATTEMPTS`` or 3), then set aside as failed. Once the season is cancelled no
    match starts: the run ends when the ones in play do. After a Ctrl-C the matches in play
    end, no other starts, and ``KeyboardInterrupt`` is raised."""
    from scheduler.dispatch import Lane, LocalSender, Resend, play_here, repeat, send_due
    store.queue.release_owned(season_name, process_alive)  # an interrupted earlier run's
    counts = store.seasons.counts(season_name)
    shown = sum(counts[s] for s in FINISHED)
    bar = _progress(counts.total, shown, f"{season_name} (local)", progress)
    # the sender holds every match it was sent: a pending one not in play here is due now
    resend = Resend(after_s=0.0, lease_s=lease_s)
    sender = LocalSender(store.url, play_here, match_slots=workers, intake_slots=0,
                         lease_s=lease_s, max_attempts=max_attempts)

    def step() -> float | None:
        nonlocal counts, shown
        if interrupted.is_set():  # Ctrl-C (told to the pools' processes too): nothing sent
            return 0.0
        if sender.failure is not None:  # (a match function that raised: a bug, or no store)
            raise sender.failure
        cancelled = store.cancels.cancelled(season_name) is not None
        if cancelled:
            store.cancels.settle(season_name)
        counts, shown = _counted(store, season_name, bar, shown)
        if counts[MatchStatus.PENDING] + counts[MatchStatus.RUNNING] == 0:
            return None
        if not cancelled and send_due(store, season_name, sender, Lane.SEASONS,
                                      window=workers, resend=resend,
                                      in_play=sender.busy()) is None:
            raise RuntimeError(f"season {season_name}: {sender.error}")
        sender.wait(poll_s)  # until a match in play here ends
        return 0.0

    with ctrl_c_between_steps() as interrupted:
        try:
            stopped = repeat(step, stop=interrupted)
            # the tasks in play end: at the season's end their matches are over already;
            # after a Ctrl-C the matches being played end, and no other starts
            sender.wait(every=True)
            if stopped:
                raise KeyboardInterrupt
        finally:
            sender.close()
            bar.close()
    _said_cancelled(store, season_name, counts)
    return counts


@contextlib.contextmanager
def ctrl_c_between_steps():
    """A Ctrl-C (SIGINT) while this holds sets the returned event instead of raising at once:
    the caller raises ``KeyboardInterrupt`` between its steps, never inside a store write or a
    broker publish. A second Ctrl-C raises at once (a step that hangs can still be left). Off
    the main thread, or where SIGINT is not the default handler, nothing changes."""
    asked = threading.Event()
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield asked
        return

    def ask(signum, frame):
        if asked.is_set():
            raise KeyboardInterrupt
        asked.set()

    before = signal.signal(signal.SIGINT, ask)
    try:
        yield asked
    finally:
        signal.signal(signal.SIGINT, before)


def run_distributed(store: Store, season_name: str, broker: str, *, window: int = 64,
                    lease_s: float = DEFAULT_LEASE_S, resend_after_s: float = RESEND_S,
                    poll_s: float = 1.0, progress: bool = True,
                    timeout_s: float | None = None) -> StatusCounts:
    """Send the season's matches to the workers on the seasons' lane (``dispatch.send_due``:
    at most ``window`` queued or playing; a lost message or an expired lease sent again) and
    reconcile until every one is done (or, in a season cancelled meanwhile, until the matches
    in play are over: a running match whose worker is gone is cancelled, not sent again)."""
    from scheduler.dispatch import BrokerSender, Lane, Resend, repeat, send_due
    sender, resend = BrokerSender(broker), Resend(resend_after_s, lease_s)
    broker_down = False
    counts = store.seasons.counts(season_name)
    total = counts.total
    shown = sum(counts[s] for s in FINISHED)
    bar = _progress(total, shown, f"{season_name} (distributed)", progress)
    started = time.monotonic()
    shown_at_start, hinted = shown, False

    def step() -> float | None:
        nonlocal counts, shown, broker_down, hinted
        if interrupted.is_set():
            raise KeyboardInterrupt
        store.cancels.settle(season_name)
        counts, shown = _counted(store, season_name, bar, shown)
        if counts[MatchStatus.PENDING] + counts[MatchStatus.RUNNING] == 0:
            return None
        sent = send_due(store, season_name, sender, Lane.SEASONS, window=window, resend=resend)
        if sent is None and not broker_down:
            bar.write(f"broker {broker}: {sender.error}; retrying")
            broker_down = True
        elif sent and broker_down:
            bar.write(f"broker {broker} reachable again")
            broker_down = False
        if not hinted and time.monotonic() - started > 30 and counts[MatchStatus.RUNNING] == 0 \
                and shown == shown_at_start:
            bar.write(f"no match has started in 30 s: is an `arena worker` running with "
                      f"--broker {broker} and --db {store.url}?")
            hinted = True
        return poll_s

    with ctrl_c_between_steps() as interrupted:
        try:
            if repeat(step, stop=interrupted, timeout_s=timeout_s,
                      timed_out=lambda: f"season {season_name!r} not finished after "
                                        f"{timeout_s} s: {counts}"):
                raise KeyboardInterrupt
        finally:
            bar.close()
    _said_cancelled(store, season_name, counts)
    return counts


def in_order(play, count: int, workers: int):
    """``play(k)`` for k = 0 .. count - 1, on threads (each plays its matches as referee
    processes), up to ``workers`` ahead, yielded in the order of k: a sequential test sees
    them as numbered. Those not asked for yet are cancelled when the caller stops."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=max(1, workers // 2)) as pool:
        futures = [pool.submit(play, k) for k in range(min(count, max(1, workers)))]
        nxt = len(futures)
        try:
            while futures:
                yield futures.pop(0).result()
                if nxt < count:
                    futures.append(pool.submit(play, nxt))
                    nxt += 1
        finally:
            for f in futures:
                f.cancel()


def run_sprt(a, b, *, variant: str, options: dict, sprt, deals_per_set: int = 4,
             max_pairs: int = 200, workers: int = 2, seed: str | None = None,
             time_control: TimeControl = DEFAULT_TIME_CONTROL, workdir: Path,
             progress: bool = True, out=sys.stderr) -> SequentialResult:
    """Duplicate pairs between SeasonBots ``a`` and ``b`` until ``sprt`` decides (or
    ``max_pairs``). Pairs are counted in order, so stopping is a sequential test."""
    from scheduler.stats.power import SequentialResult
    from scheduler.season import deal_seed, new_secret
    # the key of the deals' seeds: a fresh one (no bot can tell the cards) unless the user
    # gives a seed, to play the same deals again
    secret = new_secret() if seed is None else str(seed)
    tally = {"W": 0, "D": 0, "L": 0}
    bar = _progress(max_pairs, 0, f"sprt {a.name} vs {b.name}", progress, unit="pair")

    def pair_specs(k: int) -> list[MatchSpec]:
        deals = [DealSpec(deal_seed(secret, f"sprt:set{k}:deal{j}"), ("2", "2"), j % 4)
                 for j in range(deals_per_set)]
        return [pairing_spec(f"sprt-{k:04d}-{m}", here(t0), here(t1), variant=variant,
                             options=options, deals=deals, time_control=time_control)
                for m, (t0, t1) in enumerate(((a, b), (b, a)))]

    def play_pair(k: int) -> float:
        nets = 0
        for spec in pair_specs(k):
            s = play_again(spec, workdir / spec.match_id).summary()
            team_a = spec.seat_names.index(a.name)
            if s.forfeit_team is not None:
                return 0.0 if s.forfeit_team == team_a else 1.0
            nets += s.net[team_a]
        return 1.0 if nets > 0 else 0.0 if nets < 0 else 0.5

    def scored():
        for score in in_order(play_pair, max_pairs, workers):  # the test sees pairs as numbered
            tally["W" if score == 1.0 else "D" if score == 0.5 else "L"] += 1
            llr = sprt.llr(tally["W"], tally["D"], tally["L"])
            bar.set_postfix_str(f"W-D-L {tally['W']}-{tally['D']}-{tally['L']} LLR {llr:.2f} "
                                f"[{sprt.lower:.2f}, {sprt.upper:.2f}]")
            bar.update(1)
            yield score
    got = sprt.walk(scored(), max_pairs)  # (the stopping rule of every sequential run)
    bar.close()
    return SequentialResult(got.pairs, got.pairs * 2 * deals_per_set, got.wins, got.draws,
                            got.losses, got.llr, got.decision, got.pairs)
