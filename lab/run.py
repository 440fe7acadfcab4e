"""Duplicate pairs between two policies in process, and their standings as a season's.

A pair is two matches on the same deals with the partnerships swapped (A on seats 0 and 2, then
B there), as a duplicate season plays them; each deal's seed comes from the run's seed and its
place (``scheduler.season.deal_seed``). The results are match rows of the form the store keeps,
so ``scheduler.reports.season_standings`` rates them as it rates a season.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

from lab.match import play_match
from lab.policy import make_policy, policy_factory
from referee.match.spec import DEFAULT_TIME_CONTROL, DealSpec, MatchSpec, TimeControl
from scheduler.season import deal_seed
from scheduler.store.rows import SeasonRow, StandingsRow


def pair_specs(k: int, a: str, b: str, *, variant: str, options: dict, seed: str,
               deals_per_set: int, time_control: TimeControl = DEFAULT_TIME_CONTROL
               ) -> list[MatchSpec]:
    """The two matches of pair ``k`` between seat names ``a`` and ``b``."""
    deals = [DealSpec(deal_seed(seed, f"lab:set{k}:deal{j}"), ("2", "2"), j % 4)
             for j in range(deals_per_set)]
    return [MatchSpec(f"lab-{k:05d}-{m}", variant, options, deals=deals,
                      time_control=time_control, seat_names=[t0, t1, t0, t1])
            for m, (t0, t1) in enumerate(((a, b), (b, a)))]


def names_of(a: str, b: str) -> tuple[str, str]:
    """Seat names for policies ``a`` and ``b`` (the same policy twice: ``-b`` on the second)."""
    short = [x.rpartition(":")[2] or x for x in (a, b)]
    if short[0] == short[1]:
        short[1] += "-b"
    return short[0], short[1]


def _play_pairs(job) -> list[dict]:
    """Play pairs ``ks`` (in a worker process or here): their match rows."""
    ks, a, b, names, variant, options, seed, deals_per_set, tc = job
    make = {names[0]: policy_factory(a), names[1]: policy_factory(b)}
    rows = []
    for k in ks:
        for spec in pair_specs(k, *names, variant=variant, options=options, seed=seed,
                               deals_per_set=deals_per_set, time_control=tc):
            policies = [make[n]() for n in spec.seat_names]
            m = play_match(spec, policies)
            rows.append({"row": StandingsRow.of_played(spec.match_id, f"pair-{k:05d}",
                                                       spec.seat_names, m.summary.to_dict()),
                         "decisions": m.decisions, "faults": m.faults})
    return rows


def run_lab(a: str, b: str, *, variant: str, pairs: int, deals_per_set: int = 4,
            workers: int = 1, seed: str = "0", options: dict | None = None,
            time_control: TimeControl = DEFAULT_TIME_CONTROL) -> tuple[SeasonRow, list[dict]]:
    """Play ``pairs`` duplicate pairs of policy ``a`` against ``b`` (``workers`` processes);
    returns the season's row and each match's: its ``row`` (what
    ``scheduler.reports.season_standings`` rates), ``decisions`` and ``faults``."""
    make_policy(a), make_policy(b)  # fail early, here, on a name that does not load
    names = names_of(a, b)
    options = options or {}
    ks = list(range(pairs))
    if workers <= 1:
        rows = _play_pairs((ks, a, b, names, variant, options, seed, deals_per_set,
                            time_control))
    else:
        chunks = [ks[i::workers * 4] for i in range(min(len(ks), workers * 4))]
        jobs = [(c, a, b, names, variant, options, seed, deals_per_set, time_control)
                for c in chunks]
        with ProcessPoolExecutor(max_workers=workers) as pool:
            rows = [r for part in pool.map(_play_pairs, jobs) for r in part]
        rows.sort(key=lambda r: r["row"].id)
    season = SeasonRow.of_config(f"lab {names[0]} vs {names[1]}",
                                 {"bots": list(names), "variant": variant, "duplicate": True})
    return season, rows


def cpu_count() -> int:
    """The cores this process may use (1 when the system cannot tell)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
