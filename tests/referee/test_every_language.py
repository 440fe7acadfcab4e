"""Every sample language at one table: the Java, Go, Rust, C++ and Node.js samples, copied without
what a build makes, each built from source in the build sandbox into an empty bot cache
(``referee.seats.build.built``), then two matches in which they and the Python sample hold the
seats, sandboxed: no fault, no strike, every seat decided, and both records verify."""

import os
import shutil

import pytest
from conftest import ROOT

from referee.match.local import run_match
from referee.match.matchfile import MatchFile
from referee.match.spec import MatchSpec
from referee.seats import runtimes
from referee.seats.build import BUILT_MARK, built
from referee.seats.manifest import BUILD_OUTPUT, load_manifest
from referee.seats.sandbox import sandbox_problem

pytestmark = [pytest.mark.skipif(sandbox_problem() is not None,
                                 reason=f"no sandbox here: {sandbox_problem()}"),
              pytest.mark.xdist_group("test_every_language")]

SAMPLES = ROOT / "sample_bots"
COMPILED = ("java", "go", "rust", "cpp", "node")
NEEDS = {"java": runtimes.JAVA, "go": runtimes.GO, "rust": runtimes.RUST}


def _seat_decided(record: dict) -> set[int]:
    return {seat for seat, _ in record["timings"]}


def test_every_sample_language_is_built_from_source_and_plays(tmp_path):
    for language, runtime in NEEDS.items():
        if not runtime.installed():
            pytest.fail(f"{runtime.title} is not installed: `make bots` installs it")
    cache = tmp_path / "cache"
    bots = {}
    for language in COMPILED:
        source = tmp_path / "source" / language
        shutil.copytree(SAMPLES / language, source, ignore=shutil.ignore_patterns(*BUILD_OUTPUT))
        manifest = load_manifest(source)
        assert manifest.build, f"{language}: the sample has no build step"
        bots[language] = built(manifest, cache)
        folder = bots[language].folder
        assert folder.is_relative_to(cache) and (folder / BUILT_MARK).exists(), language
        assert not os.access(folder, os.W_OK) or os.geteuid() == 0, folder  # read-only
    bots["python"] = load_manifest(SAMPLES / "python" / "greedy")
    tables = [("java", "go", "rust", "cpp"), ("node", "python", "java", "rust")]
    for n, seats in enumerate(tables):
        spec = MatchSpec(match_id=f"languages-{n}", variant="two-deck-80", seed=f"lang-{n}",
                         max_deals=1, seat_names=list(seats))
        _, record, _ = run_match(spec, [bots[s] for s in seats], tmp_path / f"match{n}")
        logs = {s: log.read_text(errors="replace")[-1500:] if log.exists() else "(no log)"
                for s, log in ((s, tmp_path / f"match{n}" / f"seat{i}.log")
                               for i, s in enumerate(seats))}
        assert record["faults"] == [], (record["faults"], logs)
        assert record["result"]["strikes"] == [0, 0, 0, 0] and \
            record["result"]["forfeit"] is None, (record["result"], logs)
        assert record["sandbox"] == "bubblewrap"
        assert _seat_decided(record) == {0, 1, 2, 3}, logs
        assert MatchFile.from_dict(record, spec.match_id).verify() == []
