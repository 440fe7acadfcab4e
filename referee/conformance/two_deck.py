"""Conformance judges of the two-deck family (two-deck-80, two-deck-fry): each calls the
engine's own function for its rule."""

from __future__ import annotations

from collections import Counter
from typing import Any

from referee.conformance import CaseError, check_keys, class_text, count_vector, read_cards, text
from referee.rules.cards import RANK_TEXT, SUITS, parse_cards, parse_rank
from referee.rules.families.two_deck import combos
from referee.rules.options import FailedThrow
from referee.rules.families.two_deck.declare import (AFTER_BURIAL, DEALING, Situation, declaration_shape,
                                                     declaring_level, judge_declaration)
from referee.rules.families.two_deck.flow import bury_error, follow_error
from referee.rules.families.two_deck.scoring import settle_deal
from referee.rules.state import Declaration
from referee.rules.trump import trump_context

_DEAL_FIELDS = {"dealer", "levels", "attacker_points", "kitty", "last_trick", "penalties",
                "restore_level", "two_exempt", "kitty_jokers", "dry_pot", "tribute"}
_EXPECT_RESULT = {"attacker_total", "levels", "next_dealer", "game_over", "restore_level",
                  "two_exempt",
                  "winner", "match_points"}



def _two_deck_only(case, *fields):
    for f in fields:
        if f in case:
            raise CaseError(f"field {f!r} does not apply to the two-deck variants")


def _format(rules, ctx, case, expect):
    if not isinstance(expect, dict):
        raise CaseError("expect: expected an object")
    check_keys(expect, {"format", "suit", "units"})
    if "holder" in case or "revealed" in case:
        raise CaseError("'holder' / 'revealed' describe a dun, which two-deck variants do not have")
    fmt = combos.lead_format(read_cards(case["cards"], "cards"), ctx)
    diffs = []
    if fmt.kind != expect.get("format"):
        diffs.append(f"format {fmt.kind!r}, expected {expect.get('format')!r}")
    if "suit" in expect and fmt.kind != combos.INVALID:
        if class_text(fmt.cls) != expect["suit"]:
            diffs.append(f"suit {class_text(fmt.cls)!r}, expected {expect['suit']!r}")
    if "units" in expect:
        # units in order from the strongest; within a unit the cards are one multiset whatever
        # order they are written in (FORMAT.md writes a tractor weakest first)
        want = [Counter(read_cards(u, "expect.units")) for u in expect["units"]]
        if [Counter(u.cards) for u in fmt.units] != want:
            got = [text(u.cards) for u in fmt.units]
            diffs.append(f"units {got}, expected {expect['units']}")
    return "; ".join(diffs) or None


def _follow(rules, ctx, case, expect):
    _two_deck_only(case, "dun_kinds")
    if expect not in ("legal", "illegal"):
        raise CaseError(f"expect: {expect!r}, expected 'legal' or 'illegal'")
    trick = [read_cards(p, "trick") for p in case["trick"]]
    hand = read_cards(case["hand"], "hand")
    play = read_cards(case["play"], "play")
    if Counter(play) - Counter(hand):
        raise CaseError(f"play {text(play)} is not part of hand {text(hand)}")
    fmt = combos.lead_format(trick[0], ctx)
    if fmt.kind == combos.INVALID:
        raise CaseError(f"the lead {text(trick[0])} is not a legal lead")
    reason = follow_error(rules, fmt, count_vector(hand), play, ctx)
    got = "legal" if reason is None else "illegal"
    if got != expect:
        return f"got {got}" + (f" ({reason})" if reason else "") + f", expected {expect}"
    return None


def _winner(rules, ctx, case, expect):
    _two_deck_only(case, "dun_kinds")
    trick = [read_cards(p, "trick") for p in case["trick"]]
    got = combos.trick_winner(trick, ctx)
    return None if got == expect else f"winner {got}, expected {expect}"


def _throw(rules, ctx, case, expect):
    if not isinstance(expect, dict):
        raise CaseError("expect: expected an object")
    check_keys(expect, {"ok", "forced", "penalty"})
    lead = read_cards(case["lead"], "lead")
    others = [count_vector(read_cards(h, "others")) for h in case["others"]]
    fmt = combos.lead_format(lead, ctx)
    if fmt.kind == combos.INVALID:
        raise CaseError(f"the lead {text(lead)} is not one suit")
    judged = combos.judge_throw(fmt, others, ctx, rules.throw_penalty,
                                rules.failed_throw is FailedThrow.FIRST_CARD)
    diffs = []
    forced, penalty = judged.forced, judged.penalty
    ok = forced is None
    if ok != expect.get("ok"):
        diffs.append(f"ok {ok}, expected {expect.get('ok')}")
    if forced is not None:
        if "forced" in expect and (Counter(forced.cards)
                                   != Counter(read_cards(expect["forced"], "forced"))):
            diffs.append(f"forced {text(forced.cards)}, expected {expect['forced']}")
        if "penalty" in expect and penalty != expect["penalty"]:
            diffs.append(f"penalty {penalty}, expected {expect['penalty']}")
    return "; ".join(diffs) or None


def _deal_result(rules, ctx, case, expect):
    deal = case["deal"]
    unknown = set(deal) - _DEAL_FIELDS
    if unknown:
        raise CaseError(f"unknown deal field(s) {sorted(unknown)}")
    for f in ("kitty_jokers", "dry_pot", "tribute"):
        if f in deal:
            raise CaseError(f"deal field {f!r} belongs to three-deck, not {rules.variant}")
    if not isinstance(expect, dict):
        raise CaseError("expect: expected an object")
    check_keys(expect, _EXPECT_RESULT - {"match_points"})
    dealer = deal["dealer"]
    dt = dealer % 2
    lv = deal["levels"]
    levels = [0, 0]
    levels[dt] = parse_rank(lv["dealer_team"])
    levels[1 - dt] = parse_rank(lv["attackers"])
    last = deal["last_trick"]
    winner_team = last["winner_team"]
    if winner_team not in ("dealer_team", "attackers"):
        raise CaseError(f"last_trick.winner_team {winner_team!r}: expected dealer_team or attackers")
    # the level played is the dealer team's level (FORMAT.md)
    ctx = trump_context(levels[dt], ctx.suit, linked_levels=rules.level_tractors)
    last_cards = read_cards(last["cards"], "last_trick.cards")
    fmt = combos.lead_format(last_cards, ctx)
    wc = parse_cards([last["winning_card"]])[0] if last.get("winning_card") else None
    pen = deal.get("penalties") or {}
    unknown = set(pen) - {"dealer_team", "attackers"}
    if unknown:
        raise CaseError(f"unknown penalties field(s) {sorted(unknown)}")
    restore = deal.get("restore_level")
    exempt = _exempt_teams(deal, "deal.two_exempt", dt)
    if restore is not None:
        if restore not in ("J", "A"):
            raise CaseError(f"deal.restore_level {restore!r}: expected 'J' or 'A'")
        reset_to = "2" if restore == "J" else "J"
        if lv["dealer_team"] != reset_to:
            raise CaseError(f"deal.restore_level {restore!r} contradicts deal.levels: a dealer "
                            f"team reset from {restore} sits at {reset_to}, not "
                            f"{lv['dealer_team']}")
        if restore == "J" and "two_exempt" in deal and dt not in exempt:
            raise CaseError("deal.two_exempt contradicts deal.restore_level 'J': the dealer team "
                            "the J reset restarted at 2 is exempt")
        if restore == "J":
            exempt = exempt | {dt}
    for team in exempt:
        if levels[team] != 0:
            role = "dealer_team" if team == dt else "attackers"
            raise CaseError(f"deal.two_exempt names {role!r}, which is at "
                            f"{RANK_TEXT[levels[team]]}: only a team sitting at 2 is exempt")
    kitty = read_cards(deal["kitty"], "kitty")
    if len(kitty) != rules.kitty_size:
        raise CaseError(f"kitty has {len(kitty)} cards, expected {rules.kitty_size}")
    out = settle_deal(
        rules, dealer=dealer, levels=(levels[0], levels[1]),
        attacker_points=deal["attacker_points"],
        kitty_points=sum(c.points for c in kitty),
        attackers_won_last=winner_team == "attackers",
        last_lead_pairs=combos.dig_pairs(fmt) if fmt.units else 0,
        last_winning_rank=None if wc is None or wc >= 52 else wc % 13,
        penalties=(pen.get("dealer_team", 0), pen.get("attackers", 0)),
        restore_level=None if restore is None else parse_rank(restore),
        two_exempt=frozenset(exempt))
    got = {
        "attacker_total": out.attacker_total,
        "levels": {"dealer_team": RANK_TEXT[out.levels[dt]],
                   "attackers": RANK_TEXT[out.levels[1 - dt]]},
        "next_dealer": out.next_dealer,
        "game_over": out.game_over,
        "restore_level": None if out.restore_level is None else RANK_TEXT[out.restore_level],
        "winner": (None if out.winner_team is None else
                   "dealer_team" if out.winner_team == dt else "attackers"),
        "two_exempt": _exempt_text(out.two_exempt, dt),
    }
    if "two_exempt" in expect:
        expect = dict(expect, two_exempt=_exempt_text(
            _exempt_teams(expect, "expect.two_exempt", dt), dt))
    if "winner" in expect and expect["winner"] is not None and expect.get("game_over") is False:
        raise CaseError("expect.winner contradicts expect.game_over false")
    diffs = [f"{k} {got[k]!r}, expected {v!r}" for k, v in expect.items() if got[k] != v]
    return "; ".join(diffs) or None


_ROLES = ("dealer_team", "attackers")


def _exempt_teams(obj: dict, field: str, dt: int) -> frozenset[int]:
    """Teams named by role in ``two_exempt`` (a role, a list of roles, or null)."""
    value = obj.get("two_exempt")
    if value is None:
        return frozenset()
    roles = value if isinstance(value, list) else [value]
    for r in roles:
        if r not in _ROLES:
            raise CaseError(f"{field} {value!r}: expected 'dealer_team', 'attackers', a list "
                            "of them, or null")
    return frozenset(dt if r == "dealer_team" else 1 - dt for r in roles)


def _exempt_text(teams: frozenset[int], dt: int):
    roles = [r for r, t in zip(_ROLES, (dt, 1 - dt)) if t in teams]
    return None if not roles else roles[0] if len(roles) == 1 else roles


def _declare(rules, ctx, case, expect):
    if expect not in ("legal", "illegal"):
        raise CaseError(f"expect: {expect!r}, expected 'legal' or 'illegal'")
    phase = case.get("phase", DEALING)
    if phase not in (DEALING, AFTER_BURIAL):
        raise CaseError(f"phase {phase!r}: expected {DEALING!r} or {AFTER_BURIAL!r}")
    if "suit" in case:
        raise CaseError("'suit' names the suit of a three-joker declaration (three-deck only)")
    _two_deck_only(case, "uprising", "new_dealer")
    seat = case["seat"]
    dealer = case.get("dealer")
    cur = case.get("current")
    if case.get("overturned") and not cur:
        raise CaseError("'overturned' true contradicts 'current' null: an overturn leaves a "
                        "declaration standing")
    if case.get("kitty_opened") and cur:
        raise CaseError("'kitty_opened' true contradicts 'current': the kitty is opened only "
                        "when nobody declared")
    first = bool(case.get("first_deal", False))
    deal_level = own_level = ctx.level
    if case.get("levels"):
        lv = case["levels"]
        deal_level = parse_rank(lv["dealer_team"])
        attacker = dealer is not None and seat % 2 != dealer % 2
        own_level = parse_rank(lv["attackers"]) if attacker else deal_level
    current = None
    if cur:
        unknown = set(cur) - {"seat", "cards", "suit"}
        if unknown:
            raise CaseError(f"unknown current field(s) {sorted(unknown)}")
        cur_cards = read_cards(cur["cards"], "current.cards")
        shape = declaration_shape(cur_cards, deal_level, rules)
        if shape is None:
            raise CaseError(f"current {text(cur_cards)} is not a declaration of {rules.variant}")
        current = Declaration(cur["seat"], cur_cards, shape[0], shape[1], False)
    level = declaring_level(rules, deal_level, own_level, seat, dealer, current, first)
    shown = frozenset(c for c in read_cards(case.get("shown_before") or [], "shown_before"))
    sit = Situation(rules=rules, level=level, phase=phase, first_deal=first, dealer=dealer,
                    current=current, shown=shown, kitty_opened=bool(case.get("kitty_opened")),
                    dealer_team_can_declare=case.get("dealer_team_can_declare", True))
    cards = read_cards(case["cards"], "cards")
    reason, decl = judge_declaration(sit, seat, cards)
    got = "legal" if reason is None else "illegal"
    if got != expect:
        return f"got {got}" + (f" ({reason})" if reason else "") + f", expected {expect}"
    if decl is not None and "trump" in case:
        t = "none" if decl.suit is None else SUITS[decl.suit]
        if t != case["trump"]:
            return f"trump {t!r}, expected {case['trump']!r}"
    return None


def _bury(rules, ctx, case, expect):
    if expect not in ("legal", "illegal"):
        raise CaseError(f"expect: {expect!r}, expected 'legal' or 'illegal'")
    hand = read_cards(case["hand"], "hand")
    bury = read_cards(case["bury"], "bury")
    reason = ("the burial is not part of the hand" if Counter(bury) - Counter(hand)
              else bury_error(rules, bury))
    got = "legal" if reason is None else "illegal"
    if got != expect:
        return f"got {got}" + (f" ({reason})" if reason else "") + f", expected {expect}"
    return None


def _tribute(rules, ctx, case, expect):
    raise CaseError(f"tribute (进贡) belongs to three-deck, not {rules.variant}")


KINDS: dict[str, Any] = {
    "format": _format, "follow": _follow, "winner": _winner, "throw": _throw,
    "deal_result": _deal_result, "declare": _declare, "bury": _bury, "tribute": _tribute,
}
