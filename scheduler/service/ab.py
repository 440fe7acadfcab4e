"""A/B tests: is one version stronger than another? Duplicate pairs on fresh secret deals until
a sequential probability ratio test on the pairs' win/draw/loss decides (the one ``Sprt`` of
``arena sprt``: ``scheduler.stats.ratings``), or a pair limit is reached.

Every version that becomes ready with an earlier ready version of the same bot by the same
author gets one against that predecessor (``ScrimmageKind.NEW_VERSION``: asked for by the
worker that checked it, ``for_new_version``); an author may ask for one between two of their
own versions, or against a house bot (``ask``). An A/B test is a scrimmage row of its own kind:
it is opened as a small season of ``max_pairs`` deal sets on the intake lane, its matches are
sent on the scrimmage lane within a share of their own (``AbSettings.window``), and after each
pass the service's dispatcher walks its scored pairs in deal-set order (``judge``); once the
test decides, the rest of its season is cancelled. The bounds are the service's settings
(``ARENA_AB_*``), kept in the row when the service takes the test up (``arm``), so a verdict is
always read with the bounds it was played under.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from house import settings as house
from scheduler.errors import Refusal, Refused
from scheduler.service.limits import Limits
from scheduler.service.visibility import Viewer
from scheduler.states import (AB_KINDS, SCRIMMAGE_OPEN, AbVerdict, ScrimmageKind,
                              ScrimmageState)
from scheduler.store.plain_rows import ScrimmageRow

if TYPE_CHECKING:  # (the statistics load numpy: imported where a test is judged)
    from scheduler.stats.ratings import Sprt, SprtState

#: the season of an A/B test is named this and its id
AB_PREFIX = "ab-"


@dataclass(frozen=True, slots=True)
class AbSettings:
    """The service's A/B tests: on or off, the test's bounds, the pair limit and their share
    of the workers (matches of all A/B tests in play at once)."""
    on: bool = True
    elo0: float = 0.0
    elo1: float = 50.0
    alpha: float = 0.05
    beta: float = 0.05
    max_pairs: int = 200
    window: int = 1

    @classmethod
    def from_env(cls) -> "AbSettings":
        """From ``ARENA_AB*``; settings that make no test raise ValueError naming them."""
        got = cls(house.AB.value(), house.AB_ELO0.value(), house.AB_ELO1.value(),
                  house.AB_ALPHA.value(), house.AB_BETA.value(), house.AB_MAX_PAIRS.value(),
                  house.AB_WINDOW.value())
        try:
            got.test()
        except ValueError as e:
            raise ValueError(f"{house.AB_ELO0.name}, {house.AB_ELO1.name}, {house.AB_ALPHA.name}"
                             f", {house.AB_BETA.name}: {e}") from None
        for s, v in ((house.AB_MAX_PAIRS, got.max_pairs), (house.AB_WINDOW, got.window)):
            if v < 1:
                raise ValueError(f"{s.name}={v}: expected 1 or more")
        return got

    def test(self) -> Sprt:
        from scheduler.stats.ratings import Sprt
        return Sprt(self.elo0, self.elo1, self.alpha, self.beta)

    def bounds(self) -> dict:
        """What a row keeps of these settings."""
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta,
                "pairs": self.max_pairs}


def predecessor(store, version):
    """The ready, not withdrawn version of the same bot by the same author submitted last
    before ``version`` (a registry row); None when there is none."""
    earlier = [r for r in store.registry.versions(version.name)
               if r.author == version.author and r.id < version.id]
    from scheduler.service.house import ready_of
    ready = ready_of(store, earlier)
    return max(ready, key=lambda r: r.id) if ready else None


def for_new_version(store, version, variant: str) -> int | None:
    """Ask for the A/B test of ``version`` (a registry row that just became ready) against
    its predecessor, once (``ARENA_AB``: 0, never); its id, None when none is asked for. The
    service sets its bounds when it takes it up (``arm``)."""
    if not house.AB.value() or version.author is None:
        return None
    before = predecessor(store, version)
    if before is None or any(t.kind == ScrimmageKind.NEW_VERSION
                             for t in store.scrimmages.tests_of(version.ref)):
        return None
    return store.scrimmages.add(kind=ScrimmageKind.NEW_VERSION, author=version.author,
                                bot=version.ref, opponent=before.ref,
                                opponent_author=before.author, pairs=0, variant=variant)


def arm(store, s: ScrimmageRow, config: AbSettings) -> bool:
    """Give a new version's A/B test the service's bounds before it is opened (once); with
    A/B tests off, cancel it instead. False when it is not to be opened."""
    if s.elo0 is not None:
        return True
    if not config.on:
        store.scrimmages.change(s.id, expect=(ScrimmageState.QUEUED,),
                                state=ScrimmageState.CANCELLED,
                                reason="A/B tests are off on this service")
        return False
    return store.scrimmages.change(s.id, expect=(ScrimmageState.QUEUED,), **config.bounds())


def ask(store, limits: Limits, config: AbSettings, variant: str, viewer: Viewer, bot: str,
        opponent: str, *, address: str | None = None) -> int:
    """An A/B test of ``viewer``'s ready version ``bot`` against another of their own ready
    versions or a house bot (``opponent``), with the service's bounds; its id."""
    from scheduler.service.scrimmages import opponent_of, version_of, within_flight
    from scheduler.service.house import house_bots
    mine = version_of(store, bot, "bot")
    if mine.author != viewer.name and not viewer.organiser:
        raise Refused(Refusal.FORBIDDEN, f"bot: {mine.ref} is not yours; an A/B test is asked "
                      "for by the author of its first bot")
    mine = version_of(store, bot, "bot", playable=True)
    theirs = opponent_of(store, opponent)
    if theirs.ref == mine.ref:
        raise Refused(Refusal.MALFORMED, "opponent: a version against itself tells nothing")
    house_refs = {r.ref for r in house_bots(store)}
    if theirs.author != mine.author and theirs.ref not in house_refs:
        raise Refused(Refusal.MALFORMED, "opponent: an A/B test is against another of your "
                      "own versions or a house bot; a scrimmage plays another author's")
    within_flight(store, limits, viewer, address)
    sid = store.scrimmages.add(kind=ScrimmageKind.AB, author=viewer.name, bot=mine.ref,
                               opponent=theirs.ref, opponent_author=theirs.author,
                               variant=variant, **config.bounds())
    store.audit.write("ab-ask", actor=viewer.name, subject=f"scrimmage {sid}",
                      detail=f"{mine.ref} v {theirs.ref}, at most {config.max_pairs} pairs",
                      address=address)
    return sid


def _deal_set(cluster: str) -> int:
    """A pair's deal set, from its cluster (``MatchPlan.cluster``: ``a|b#leg#set``)."""
    return int(cluster.rsplit("#", 1)[1])


def outcomes(store, s: ScrimmageRow) -> list[float]:
    """``s.bot``'s outcome in each scored pair of the test's season (1 won, 0.5 drawn, 0
    lost), in deal-set order up to the first pair not scored yet: the order the test takes
    them in, whichever worker finished first."""
    if not s.season:
        return []
    by_set = {_deal_set(p.cluster): (p.score_a if p.bot_a == s.bot else 1.0 - p.score_a)
              for p in store.results.pair_scores(s.season)}
    out: list[float] = []
    while len(out) in by_set:
        out.append(by_set[len(out)])
    return out


def state(s: ScrimmageRow) -> SprtState | None:
    """Where ``s`` (an A/B test with its bounds) stands, from the tally and verdict it
    keeps; None for a scrimmage or a test not armed yet."""
    from scheduler.stats.ratings import VERDICTS, Sprt, SprtState
    if s.kind not in AB_KINDS or s.elo0 is None or s.elo1 is None:
        return None
    test = Sprt(s.elo0, s.elo1, s.alpha or 0.05, s.beta or 0.05)
    w, d, lost = s.wins or 0, s.draws or 0, s.losses or 0
    n = w + d + lost
    decision = next((k for k, v in VERDICTS.items() if k and v == s.verdict), None)
    elo = test.elo_interval(w, d, lost) if n else (None, None, None)
    return SprtState(n, w, d, lost, test.llr(w, d, lost), test.lower, test.upper, decision,
                     s.verdict == VERDICTS[None], *elo)


def judge(store, s: ScrimmageRow) -> SprtState:
    """Walk the test over the pairs scored so far (``outcomes``) and keep its tally in the
    row; the state it reached (decided, at the pair limit, or running)."""
    from scheduler.stats.ratings import Sprt
    assert s.elo0 is not None and s.elo1 is not None  # (an armed test)
    test = Sprt(s.elo0, s.elo1, s.alpha or 0.05, s.beta or 0.05)
    got = test.walk(outcomes(store, s), s.pairs)
    if (got.wins, got.draws, got.losses) != (s.wins, s.draws, s.losses):
        store.scrimmages.change(s.id, expect=SCRIMMAGE_OPEN, wins=got.wins, draws=got.draws,
                                losses=got.losses, llr=got.llr)
    return got


def finish(store, s: ScrimmageRow, got: SprtState) -> None:
    """A decided test (or one at its pair limit) is done with its verdict; its season's
    remaining matches are cancelled."""
    if store.scrimmages.change(s.id, expect=(ScrimmageState.PLAYING,), state=ScrimmageState.DONE,
                               verdict=got.verdict):
        if got.decision is not None and s.season:
            store.cancels.cancel(s.season, by=f"its A/B test decided: {got.verdict}")


def view(s: ScrimmageRow) -> dict | None:
    """An A/B test's state as the service shows it (None for a scrimmage): the bounds, the
    tally, the LLR between its bounds, the Elo edge and interval, and the verdict in a line
    (``text``): "running", "stronger", "not stronger" or "stopped at the pair limit"."""
    got = state(s)
    if got is None:
        if s.kind not in AB_KINDS:
            return None
        return {"verdict": s.state, "text": f"{s.state}: its pairs are not played yet",
                "pairs": 0}
    verdict = s.verdict or (AbVerdict.RUNNING if s.state in SCRIMMAGE_OPEN else s.state)
    text = got.text()
    if not s.verdict:
        text = verdict + text[text.index(":"):]
    return {"verdict": verdict, "text": text, "opponent": s.opponent, "kind": s.kind,
            "elo0": s.elo0, "elo1": s.elo1, "alpha": s.alpha, "beta": s.beta,
            "max_pairs": s.pairs, "pairs": got.pairs, "wins": got.wins, "draws": got.draws,
            "losses": got.losses, "llr": round(got.llr, 4), "lower": round(got.lower, 4),
            "upper": round(got.upper, 4), "elo": _round(got.elo),
            "elo_low": _round(got.elo_low), "elo_high": _round(got.elo_high)}


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)
