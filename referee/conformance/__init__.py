"""The rules conformance runner: judges each case of a vector file with the engine and says
``ok`` or what it got instead. The format is the shared one (``FORMAT.md``) plus the project's
extensions documented in ``tests/vectors/README.md``. A field the runner does not know fails the
case: a vector is never passed by ignoring part of it."""

from __future__ import annotations

from dataclasses import dataclass

import importlib

from referee.rules.cards import SUITS, TEXT, Card, parse_cards, parse_rank, parse_suit
from referee.rules.families import family_of
from referee.rules.trump import TRUMP
from referee.rules.variants import rules_for


@dataclass(frozen=True)
class CaseResult:
    file: str
    case_id: str
    ok: bool
    detail: str = ""

    def line(self) -> str:
        if self.ok:
            return f"ok {self.case_id}"
        return f"FAIL {self.case_id} ({self.file}): {self.detail}"


class CaseError(Exception):
    """A case that cannot be judged as written."""


_COMMON = {"id", "kind", "expect", "note", "context", "options"}
SHARED_FIELDS = {
    "pre_kitty": {"action", "dealer", "seat", "hand", "cards"},
    "kitty_flip": {"kitty"},
    "first_dealer": {"first_seat", "kitty"},
    "dry_pot": {"kitty"},
    "joker_bury": {"dealer", "seat", "kitty", "hand", "jokers", "take", "dry_pot"},
    "title": {"match_points"},
    "format": {"cards", "holder", "revealed"},
    "follow": {"trick", "hand", "play", "dun_kinds"},
    "winner": {"trick", "dun_kinds"},
    "throw": {"lead", "others"},
    "deal_result": {"deal"},
    "declare": {"first_deal", "dealer", "phase", "current", "seat", "cards", "suit", "trump",
                "shown_before", "levels", "dealer_team_can_declare", "kitty_opened",
                "overturned", "uprising", "new_dealer"},
    "bury": {"hand", "bury"},
    "tribute": {"previous", "giver_three_bj", "giver_partner_three_bj", "giver_hand"},
    "tribute_return": {"hand", "count", "cards"},
}
def run_file(data: dict, name: str = "<vectors>") -> list[CaseResult]:
    """Judge every case of one parsed vector file."""
    out = []
    variant = data.get("variant")
    extra = set(data) - {"variant", "options", "context", "cases", "note", "description"}
    cases = data.get("cases")
    if not isinstance(cases, list):
        return [CaseResult(name, "<file>", False, "field 'cases': expected a list of cases")]
    for i, case in enumerate(cases):
        cid = case.get("id", f"#{i}") if isinstance(case, dict) else f"#{i}"
        if extra:
            out.append(CaseResult(name, cid, False, f"unknown file field(s) {sorted(extra)}"))
            continue
        try:
            got = _judge(variant, data.get("options") or {}, data.get("context") or {}, case)
        except CaseError as e:
            out.append(CaseResult(name, cid, False, str(e)))
            continue
        except (ValueError, KeyError, TypeError, IndexError) as e:
            out.append(CaseResult(name, cid, False, f"cannot judge the case: {e!r}"))
            continue
        out.append(CaseResult(name, cid, got is None, got or ""))
    return out


def _judge(variant: object, file_options: dict, file_context: dict, case: dict) -> str | None:
    """None when the engine agrees with the case, else what differs."""
    if not isinstance(variant, str):
        raise CaseError(f"file field 'variant' = {variant!r}: expected a variant id")
    kind = case.get("kind")
    options = dict(file_options)
    options.update(case.get("options") or {})
    rules = rules_for(variant, options)
    family = family_of(rules)
    judges = importlib.import_module(family.judges)
    fields = SHARED_FIELDS | getattr(judges, "FIELDS", {})
    if kind not in fields:
        raise CaseError(f"unknown kind {kind!r}; expected one of {', '.join(fields)}")
    unknown = set(case) - _COMMON - fields[kind]
    if unknown:
        raise CaseError(f"unknown field(s) {sorted(unknown)} for kind {kind!r}")
    context = case.get("context") or file_context
    level = parse_rank(context.get("level", "2"))
    trump = parse_suit(context.get("trump", "none"))
    ctx = family.context_for(rules, level, trump)
    expect = case.get("expect")
    handler = judges.KINDS.get(kind)
    if handler is None:
        raise CaseError(f"kind {kind!r} does not apply to {rules.variant}")
    return handler(rules, ctx, case, expect)


def read_cards(value, field: str) -> tuple[Card, ...]:
    if not isinstance(value, list):
        raise CaseError(f"field {field!r}: expected a list of cards")
    return parse_cards(value)


def count_vector(cards) -> list[int]:
    hand = [0] * 54
    for c in cards:
        hand[c] += 1
    return hand


def text(cards) -> list[str]:
    return [TEXT[c] for c in cards]


def check_keys(expect: dict, allowed: set[str]) -> None:
    unknown = set(expect) - allowed
    if unknown:
        raise CaseError(f"unknown expect field(s) {sorted(unknown)}")


def class_text(c: int) -> str:
    return "trump" if c == TRUMP else SUITS[c]



def legal_expect(expect) -> None:
    if expect not in ("legal", "illegal"):
        raise CaseError(f"expect: {expect!r}, expected 'legal' or 'illegal'")


def verdict(ok: bool, reason: str | None, expect: str) -> str | None:
    got = "legal" if ok else "illegal"
    if got != expect:
        return f"got {got}" + (f" ({reason})" if reason else "") + f", expected {expect}"
    return None


def only(case, kind: str, *fields):
    for f in fields:
        if f in case:
            raise CaseError(f"field {f!r} does not apply to {kind}")


def deal_common(rules, case, expect, allowed_deal, allowed_expect):
    deal = case["deal"]
    unknown = set(deal) - allowed_deal
    if unknown:
        raise CaseError(f"unknown deal field(s) {sorted(unknown)} for {rules.variant}")
    if not isinstance(expect, dict):
        raise CaseError("expect: expected an object")
    check_keys(expect, allowed_expect)
    dealer = deal["dealer"]
    dt = dealer % 2
    levels = [0, 0]
    levels[dt] = parse_rank(deal["levels"]["dealer_team"])
    levels[1 - dt] = parse_rank(deal["levels"]["attackers"])
    last = deal["last_trick"]
    if last["winner_team"] not in ("dealer_team", "attackers"):
        raise CaseError("last_trick.winner_team: expected dealer_team or attackers")
    return deal, dealer, dt, (levels[0], levels[1]), last["winner_team"] == "attackers"


def diff(expect: dict, got: dict) -> str | None:
    diffs = [f"{k} {got[k]!r}, expected {v!r}" for k, v in expect.items() if got[k] != v]
    return "; ".join(diffs) or None
