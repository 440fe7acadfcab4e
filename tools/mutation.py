"""Mutation check of the rules judges: does every rule the vectors cover have a vector or a test
that fails when the rule is broken?

Each mutation is a one-line change to one rule of the engine. ``run`` copies the project to a
temporary folder, applies one mutation at a time there (the checkout is never touched), runs
the project's rules vectors and, when they all still pass, the fast rules tests, and reports
which mutations were caught. A mutation nothing catches is a rule the suite does not guard.
Run by ``arena rules mutate`` (``make mutate``); not part of ``make test``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutation:
    """Replace ``old`` (found exactly once in ``path``) by ``new``: one broken rule."""

    rule: str
    path: str
    old: str
    new: str


R = "referee/rules/"
TWO = R + "families/two_deck/"
ONE = R + "families/single_deck/rules.py"
THREE = R + "families/three_deck/rules.py"
MUTATIONS: tuple[Mutation, ...] = (
    # -- two decks: combinations, following, tricks, throws
    Mutation("two-deck: a tractor is two or more pairs", TWO + "combos.py",
             "if length >= 2 and (best is None", "if length >= 3 and (best is None"),
    Mutation("two-deck: a follow owes the hand's best structure", TWO + "combos.py",
             "    if got == want:\n        return None\n    pairs_held",
             "    if got[1] == want[1]:\n        return None\n    pairs_held"),
    Mutation("two-deck: a shorter tractor is owed to a longer led one", TWO + "combos.py",
             "if r < t or r in seen_rooms:", "if r != t or r in seen_rooms:"),
    Mutation("two-deck: the match tries every placement of a tractor", TWO + "combos.py",
             "        for start in range(len(shape) - t + 1):",
             "        for start in range(min(1, len(shape) - t + 1)):"),
    Mutation("two-deck: a ruff needs the throw's whole structure", TWO + "combos.py",
             "!= full_structure(fmt):", "!= full_structure(fmt) and False:"),
    Mutation("two-deck: ruffs of a throw compare by the largest unit's shape", TWO + "combos.py",
             "    return (1, _ruff_top(counts, ctx, fmt))", "    return (1, 0)"),
    Mutation("two-deck: the first of equal plays wins", TWO + "combos.py",
             "if key is not None and key > best_key:", "if key is not None and key >= best_key:"),
    Mutation("two-deck: a throw fails on a stronger single", TWO + "combos.py",
             "beaten = any(t > u.top for t in tops_single)",
             "beaten = any(t >= u.top for t in tops_single)"),
    Mutation("two-deck: a throw fails on a longer-enough stronger tractor", TWO + "combos.py",
             "beaten = any(high > u.top and high - low + 1 >= u.pairs",
             "beaten = any(high > u.top and high - low + 1 > u.pairs"),
    Mutation("two-deck: the forced unit is the weakest beatable one", TWO + "combos.py",
             "return min(beatable, key=lambda u: (u.top, len(u.cards)))",
             "return max(beatable, key=lambda u: (u.top, len(u.cards)))"),
    Mutation("two-deck: the throw penalty is per card of the beatable units", TWO + "combos.py",
             "penalty_per_card * sum(len(u.cards) for u in beat)",
             "2 * penalty_per_card * sum(len(u.cards) for u in beat)"),
    # -- two decks: declaring
    Mutation("two-deck: an overturn must beat the standing declaration", TWO + "declare.py",
             "if strength < cur.strength or (strength == cur.strength and strength != 2):",
             "if strength < cur.strength:"),
    Mutation("two-deck: nobody overturns their own declaration", TWO + "declare.py",
             "    if seat == cur.seat:\n        return \"you cannot",
             "    if False:\n        return \"you cannot"),
    Mutation("two-deck-80: a level pair overturns once", TWO + "declare.py",
             "if strength == 2 and cards[0] in sit.shown:", "if False:"),
    Mutation("two-deck-fry: a declaration is a level card with its colour's joker",
             TWO + "declare.py", "return BIG_JOKER if suit in (1, 2) else LITTLE_JOKER",
             "return BIG_JOKER if suit in (0, 3) else LITTLE_JOKER"),
    Mutation("two-deck-fry: an attacker declares with its own level", TWO + "declare.py",
             "        return own_level\n", "        return deal_level\n"),
    Mutation("two-deck-fry: attackers declare only when the dealer team cannot",
             TWO + "declare.py", "if rules.attacker_declare == \"never\" or sit.dealer_team_can_declare:",
             "if rules.attacker_declare == \"never\":"),
    Mutation("two-deck: a burial is the kitty's size", TWO + "flow.py",
             "    if len(cards) != rules.kitty_size:\n        return f\"must bury",
             "    if len(cards) > rules.kitty_size:\n        return f\"must bury"),
    # -- two decks: scoring
    Mutation("two-deck-80: the kitty multiplier doubles per pair", TWO + "scoring.py",
             "return 2 ** (pairs + 1)", "return 2 ** pairs"),
    Mutation("two-deck-fry: the kitty multiplier is 4 per pair", TWO + "scoring.py",
             "    return 4 * pairs", "    return 2 * pairs"),
    Mutation("two-deck-80: a level per 20 points over 80", TWO + "scoring.py",
             "return True, (total - 80) // 20", "return True, (total - 80) // 10"),
    Mutation("two-deck-80: a level per 20 points under 80", TWO + "scoring.py",
             "return False, (80 - total) // 20", "return False, (80 - total) // 10"),
    Mutation("two-deck-fry: the upgrade table stops at +6", TWO + "scoring.py",
             "return True, min(6, (total - 120) // 40 + 1)",
             "return True, min(5, (total - 120) // 40 + 1)"),
    Mutation("two-deck-fry: 5 to 35 points give the dealer team +2", TWO + "scoring.py",
             "    if total < 40:\n        return False, 2", "    if total < 40:\n        return False, 1"),
    Mutation("two-deck-80: must-play ranks stop a gain", TWO + "scoring.py",
             "if level in must and not leaving_own and not (level == TWO and exempt_two):",
             "if level in must and not (level == TWO and exempt_two):"),
    Mutation("two-deck-80: a team the J reset sent to 2 need not play 2", TWO + "scoring.py",
             "not (level == TWO and exempt_two):", "not (level == TWO and False):"),
    Mutation("two-deck-80: the J-reset exemption lasts while the team sits at 2",
             TWO + "scoring.py", "return frozenset(t for t in exempt if levels[t] == TWO)",
             "return frozenset(t for t in exempt if levels[t] == TWO and t == 0)"),
    Mutation("two-deck-80: deductions never go below 2", TWO + "scoring.py",
             "return max(TWO, level - by)", "return max(TWO, level - by + 1)"),
    Mutation("two-deck-80: the J/A reset drops J to 2 and A to J", TWO + "scoring.py",
             "new[dt] = TWO if dl == JACK else JACK", "new[dt] = TWO"),
    Mutation("two-deck-80: 落实政策 restores under 40", TWO + "scoring.py",
             "if restore_level is not None and total < 40:",
             "if restore_level is not None and total < 80:"),
    Mutation("two-deck-fry: a level wraps after A", TWO + "scoring.py",
             "            if rules.after_ace == \"wrap\":", "            if False:"),
    Mutation("two-deck: a failed throw's penalty changes the attackers' total",
             TWO + "scoring.py", "attacker_points + bonus + penalties[0] - penalties[1]",
             "attacker_points + bonus + penalties[0] + penalties[1]"),
    # -- single-deck
    Mutation("single-deck: uprising eligibility", ONE,
             "            return trumps == 0", "            return trumps <= 1"),
    Mutation("single-deck: an attacker rises with no point card", ONE,
             "        return not any(hand[k] and POINTS[k] for k in range(KINDS))",
             "        return not any(hand[k] and POINTS[k] > 5 for k in range(KINDS))"),
    Mutation("single-deck: the handover limit", ONE,
             "return seat == dealer and trumps <= 3", "return seat == dealer and trumps <= 4"),
    Mutation("single-deck: a transfer is of exactly one trump", ONE,
             "        return trumps == 1", "        return trumps <= 2"),
    Mutation("single-deck: a hard dun is not of the level rank", ONE,
             "if r is None or r == level or r in hard_duns", "if r is None or r in hard_duns"),
    Mutation("single-deck: only the first reveal counts", ONE,
             "    if standing:\n        return \"only the first", "    if False:\n        return \"only the first"),
    Mutation("single-deck: the opponents' level rank makes them dealer", ONE,
             "        return (seat + 1) % 4\n    return seat", "        return seat\n    return seat"),
    Mutation("single-deck: with equal levels a reveal is the revealer's own",
             ONE, "uprising_levels[0] != uprising_levels[1] \\",
             "True \\"),
    Mutation("single-deck: the forced card of a failed throw is the lowest",
             ONE, "return (min(cards, key=ctx.key.__getitem__),), 0",
             "return (max(cards, key=ctx.key.__getitem__),), 0"),
    Mutation("single-deck: a throw fails on any stronger card of the suit", ONE,
             "low = min(ctx.pos[k] for k in cards)", "low = max(ctx.pos[k] for k in cards)"),
    Mutation("single-deck: kitty points never count", ONE,
             "return DealOutcome(p, (new[0], new[1])",
             "return DealOutcome(p + kitty_points, (new[0], new[1])"),
    Mutation("single-deck: 80 and the last trick give +2", ONE,
             "elif p >= 80 and k:", "elif p >= 70 and k:"),
    Mutation("single-deck: the J demotion drops to 2, the Q to 6", ONE,
             "new[dt] = TWO if dl == JACK else SIX", "new[dt] = TWO if dl == JACK else TWO"),
    Mutation("single-deck: the demotion card is the trump-suit J / Q", ONE,
             "if c % 13 == dl and (rules.demotion_card == \"any_level\" or c // 13 == trump):",
             "if c % 13 == dl:"),
    Mutation("single-deck: a flipped kitty names the lowest card's suit", ONE,
             "if k < 52 and (best is None or k % 13 < best % 13):",
             "if k < 52 and (best is None or k % 13 > best % 13):"),
    Mutation("single-deck: a burial holds at most 25 points", ONE,
             "if points > rules.kitty_points_cap:", "if points >= rules.kitty_points_cap:"),
    Mutation("single-deck: a burial keeps the side suits held", ONE,
             "    if voided and _some_burial_keeps_suits(", "    if False and _some_burial_keeps_suits("),
    Mutation("single-deck: a gold dun is followed by the four highest trumps",
             ONE, "!= sorted(pos[k] for k in trumps[:want]):",
             "!= sorted(pos[k] for k in trumps[-want:]):"),
    Mutation("single-deck: a seat holding a dun must play it", ONE,
             "            if dun_rank(play) is None:\n                shown",
             "            if False:\n                shown"),
    Mutation("single-deck: the dealer's dun is soft unless shown", ONE,
             "return HARD if (not by_dealer or revealed) else SOFT", "return HARD"),
    Mutation("single-deck: two ruffs of a throw compare by the highest trump",
             ONE, "return (1, max(ctx.pos[k] for k in play))",
             "return (1, min(ctx.pos[k] for k in play))"),
    # -- three-deck
    Mutation("three-deck: an overturn is strictly stronger", THREE,
             "if current is not None and strength <= current.strength:",
             "if current is not None and strength < current.strength:"),
    Mutation("three-deck: three BJ beat three LJ", THREE,
             "return (4 if k == LITTLE_JOKER else 5), suit", "return 4, suit"),
    Mutation("three-deck: a pair lead owes a pair (死棒)", THREE,
             "        if pairs and biggest < 2:\n            return (\"must follow the pair",
             "        if False:\n            return (\"must follow the pair"),
    Mutation("three-deck: a triple lead owes a triple (死棒)", THREE,
             "    if triples and biggest < 3:", "    if False:"),
    Mutation("three-deck: the first of equal plays wins", THREE,
             "        if k is not None and k > key:", "        if k is not None and k >= key:"),
    Mutation("three-deck: another shape than the lead is small", THREE,
             "    if any(k != play[0] for k in play):\n        return None",
             "    if False:\n        return None"),
    Mutation("three-deck: the lowest (or highest) flip deals", THREE,
             "pick = min if mode == \"lowest\" else max", "pick = max if mode == \"lowest\" else min"),
    Mutation("three-deck: jokers and 2s do not break a dry pot", THREE,
             "(k // 13 == suit and k % 13 != 0))", "(k // 13 == suit) or k % 13 == 0)"),
    Mutation("three-deck: a kitty of trumps only is a dry pot", THREE,
             "    if all(cls[k] == TRUMP for k in kitty):\n        return True",
             "    if False:\n        return True"),
    Mutation("three-deck: tribute counts the kitty's jokers", THREE,
             "        return (80 - s) // 10 + joker_units", "        return (80 - s) // 10"),
    Mutation("three-deck: tribute over 150", THREE,
             "    return (s - 150) // 10 + joker_units", "    return (s - 150) // 20 + joker_units"),
    Mutation("three-deck: three BJ with the giver reverse the tribute", THREE,
             "return count, TO_GIVER if giver_three_bj else TO_DEALER", "return count, TO_DEALER"),
    Mutation("three-deck: three BJ with the giver's partner cancel the tribute",
             THREE, "if count <= 0 or giver_partner_three_bj:", "if count <= 0:"),
    Mutation("three-deck: equal tribute cards go S, H, D, C", THREE,
             "key=lambda k: (cls[k] != TRUMP, -pos[k], k))",
             "key=lambda k: (cls[k] != TRUMP, -pos[k], -k))"),
    Mutation("three-deck: side tribute cards by rank whatever their suit", THREE,
             "key=lambda k: (cls[k] != TRUMP, -pos[k], k))",
             "key=lambda k: (cls[k] != TRUMP, -cls[k], -pos[k], k))"),
    Mutation("three-deck: the tribute is the giver's highest cards", THREE,
             "    return tuple(order[:count])", "    return tuple(order[-count:] if count else ())"),
    Mutation("three-deck: take back the lowest, 3 < ... < A < 2 < level card",
             THREE, "value = 13 if r == ctx.level else 12 if r == 0 else r - 1",
             "value = r"),
    Mutation("three-deck: take back side before trump on a tie", THREE,
             "return (value, 1 if ctx.cls[k] == TRUMP else 0)", "return (value, 0)"),
    Mutation("three-deck: big jokers are buried first", THREE,
             "if LITTLE_JOKER in cards and hand[BIG_JOKER] >", "if False and hand[BIG_JOKER] >"),
    Mutation("three-deck: other seats bury big jokers first", THREE,
             "if need.get(LITTLE_JOKER) and hand[BIG_JOKER] > need.get(BIG_JOKER, 0):",
             "if False:"),
    Mutation("three-deck: nothing is buried into a dry pot", THREE,
             "    if dry_pot:\n        return \"the kitty is a dry pot",
             "    if False:\n        return \"the kitty is a dry pot"),
    # (no mutation of "no joker burying after the dealer buried only points and jokers": such a
    # kitty has no card to take back, so the take-back rule refuses the same burials)
    Mutation("three-deck: a dug kitty counts double", THREE,
             "total = attacker_points + (2 * kitty_points if attackers_won_last else 0)",
             "total = attacker_points + (3 * kitty_points if attackers_won_last else 0)"),
    Mutation("three-deck: a dry pot's jokers add no levels", THREE,
             "bonus = 0 if dry_pot else joker_units(kitty)", "bonus = joker_units(kitty)"),
    Mutation("three-deck: a dealer team at J whose kitty is dug restarts at 3",
             THREE, "        new[dt] = THREE", "        new[dt] = levels[dt]"),
    Mutation("three-deck: taking over without going up is +1 each", THREE,
             "team_points[at] = 1 + 3 * gain_at", "team_points[at] = 3 * gain_at"),
    Mutation("three-deck: 120 changes the next dealer", THREE,
             "\"next_dealer\": (dealer + 2) % 4 if total < 120", "\"next_dealer\": (dealer + 2) % 4 if total <= 120"),
    Mutation("three-deck: titles by cumulative match points", THREE,
             "        if points >= threshold:", "        if points > threshold:"),
    Mutation("three-deck: the tribute is returned with side non-point cards", THREE,
             "if given_side < min(count, side_n) or given_plain < min(count, plain_n):",
             "if given_plain < min(count, plain_n):"),
)

#: The fast rules tests, run when a mutation leaves every vector passing.
TESTS = ("tests/test_conformance.py", "tests/test_structure_match.py",
         "tests/test_actions_and_records.py", "tests/test_hidden_information.py",
         "tests/test_greedy_bot.py")
VECTORS = ("single-deck", "three-deck", "two-deck-80", "two-deck-fry")


@dataclass(frozen=True)
class Outcome:
    mutation: Mutation
    caught_by: str  # "" when nothing failed
    seconds: float


def _copy_project(dest: Path) -> None:
    ignore = shutil.ignore_patterns(".git", ".venv", "node_modules", "build", "__pycache__",
                                    "*.egg-info", "records", "*.db")
    for name in ("referee", "scheduler", "tools", "protos", "tests", "sample_bots", "seasons"):
        src = ROOT / name
        if src.exists():
            shutil.copytree(src, dest / name, ignore=ignore)
    for name in ("pyproject.toml",):
        shutil.copy2(ROOT / name, dest / name)


def _vectors_fail(work: Path) -> int:
    """How many vector cases fail in the copy (-1: the runner itself broke)."""
    files = [f"tests/vectors/{v}.json" for v in VECTORS]
    out = subprocess.run([sys.executable, "-m", "cli", "rules", "check", *files],
                         cwd=work, capture_output=True, text=True, env=_env(work))
    failed = sum(1 for line in out.stdout.splitlines() if line.startswith("FAIL"))
    if out.returncode != 0 and failed == 0:
        return -1
    return failed


class NotGreen(RuntimeError):
    """The unmutated project already fails: a mutation's failure would prove nothing."""


def _tests_fail(work: Path) -> str:
    tests = [t for t in TESTS if (work / t).exists()]
    out = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                          *tests], cwd=work, capture_output=True, text=True, env=_env(work))
    if out.returncode == 0:
        return ""
    failed = [line.split()[1] for line in out.stdout.splitlines() if line.startswith("FAILED")]
    return failed[0] if failed else f"pytest exit {out.returncode}"


def _env(work: Path) -> dict:
    import os
    env = dict(os.environ)
    env["PYTHONPATH"] = str(work)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run(mutations=MUTATIONS, progress=print) -> list[Outcome]:
    """Apply each mutation alone to a copy of the project and say what caught it."""
    results = []
    with tempfile.TemporaryDirectory(prefix="arena-mutate-") as tmp:
        work = Path(tmp) / ROOT.name
        work.mkdir()
        _copy_project(work)
        beside = ROOT.parent / "shared"  # the tests read what lies beside the project, if any
        if beside.is_dir():
            (Path(tmp) / "shared").symlink_to(beside)
        where = subprocess.run([sys.executable, "-c", "import referee; print(referee.__file__)"],
                               cwd=work, capture_output=True, text=True, env=_env(work))
        if not where.stdout.strip().startswith(str(work)):
            raise RuntimeError(f"the copy's engine is not the one imported: {where.stdout!r}")
        if _vectors_fail(work):
            raise NotGreen("the rules vectors fail before any mutation (arena rules check "
                           "tests/vectors/*.json): make them pass first")
        tests_green = None
        for i, m in enumerate(mutations, 1):
            path = work / m.path
            original = path.read_text()
            n = original.count(m.old)
            start = time.perf_counter()
            if n != 1:
                caught = f"STALE: the line to change occurs {n} times in {m.path}"
            else:
                path.write_text(original.replace(m.old, m.new))
                try:
                    failed = _vectors_fail(work)
                    if failed > 0:
                        caught = f"{failed} vector case{'s' if failed != 1 else ''}"
                    elif failed < 0:
                        caught = "the vector runner fails"
                    else:
                        if tests_green is None:  # once, on the unmutated copy
                            path.write_text(original)
                            failing = _tests_fail(work)
                            if failing:
                                raise NotGreen(f"the fast rules tests fail before any "
                                               f"mutation ({failing})")
                            tests_green = True
                            path.write_text(original.replace(m.old, m.new))
                        test = _tests_fail(work)
                        caught = f"test {test}" if test else ""
                finally:
                    path.write_text(original)
            out = Outcome(m, caught, time.perf_counter() - start)
            results.append(out)
            mark = "caught" if caught and not caught.startswith("STALE") else "MISSED"
            progress(f"[{i:2}/{len(mutations)}] {mark:6} {m.rule}: {caught or 'nothing failed'}")
    return results
