"""Conformance case judges for single-deck and three-deck (see ``conformance``)."""

from __future__ import annotations

from collections import Counter

from .conformance import (CaseError, _cards, _check_keys, _class_text, _counts, _text)
from .rules import single_deck as sd
from .rules import three_deck as td
from .rules.cards import BIG_JOKER, POINTS, RANK_TEXT, SUITS, parse_cards, parse_rank, parse_suit
from .rules.declare import Declaration
from .rules.trump import TRUMP, trump_context


def _legal(expect) -> None:
    if expect not in ("legal", "illegal"):
        raise CaseError(f"expect: {expect!r}, expected 'legal' or 'illegal'")


def _verdict(ok: bool, reason: str | None, expect: str) -> str | None:
    got = "legal" if ok else "illegal"
    if got != expect:
        return f"got {got}" + (f" ({reason})" if reason else "") + f", expected {expect}"
    return None


def _only(case, kind: str, *fields):
    for f in fields:
        if f in case:
            raise CaseError(f"field {f!r} does not apply to {kind}")


# -- single-deck ------------------------------------------------------------------------------

def _sd_dun_kinds(case, plays, ctx):
    kinds = case.get("dun_kinds")
    if kinds is not None and (not isinstance(kinds, list) or len(kinds) != len(plays)):
        raise CaseError("dun_kinds: expected a list as long as trick")
    out = []
    for i, p in enumerate(plays):
        r = sd.dun_rank(p)
        given = kinds[i] if kinds else None
        if given not in (None, sd.SOFT, sd.HARD, sd.GOLD):
            raise CaseError(f"dun_kinds[{i}] = {given!r}: expected soft, hard, gold or null")
        if r is None:
            out.append(None)
        else:
            out.append(given or (sd.GOLD if r == ctx.level else sd.HARD))
    return out


def _sd_trick(case, ctx):
    """Plays, the lead's format, the strongest dun kind so far, and the winner index."""
    plays = [_cards(p, "trick") for p in case["trick"]]
    kinds = _sd_dun_kinds(case, plays, ctx)
    lead_kind, c = sd.lead_format(plays[0], ctx)
    if lead_kind == sd.INVALID:
        raise CaseError(f"the lead {_text(plays[0])} is not a legal lead")
    of = lambda i: (lambda r: kinds[i])  # noqa: E731
    best, key = 0, sd.lead_key(lead_kind, c, plays[0], ctx, of(0))
    req = kinds[0]
    for i in range(1, len(plays)):
        k = sd.play_key(lead_kind, c, plays[i], ctx, of(i))
        if k is not None and k > key:
            best, key = i, k
            if lead_kind == sd.DUN:
                req = kinds[i]
    return plays, lead_kind, c, req, best


def _sd_format(rules, ctx, case, expect):
    if not isinstance(expect, dict):
        raise CaseError("expect: expected an object")
    _check_keys(expect, {"format", "suit", "units", "dun"})
    cards = _cards(case["cards"], "cards")
    kind, c = sd.lead_format(cards, ctx)
    diffs = []
    if kind != expect.get("format"):
        diffs.append(f"format {kind!r}, expected {expect.get('format')!r}")
    if "suit" in expect and kind not in (sd.INVALID, sd.DUN) and _class_text(c) != expect["suit"]:
        diffs.append(f"suit {_class_text(c)!r}, expected {expect['suit']!r}")
    if "units" in expect:
        units = sd.lead_units(cards, ctx)
        if [Counter(u) for u in units] != [Counter(_cards(u, "units")) for u in expect["units"]]:
            diffs.append(f"units {[_text(u) for u in units]}, expected {expect['units']}")
    if "dun" in expect:
        r = sd.dun_rank(cards)
        holder = case.get("holder", "other")
        if holder not in ("dealer", "other"):
            raise CaseError(f"holder {holder!r}: expected dealer or other")
        got = None if r is None else sd.dun_kind(r, ctx, holder == "dealer",
                                                 bool(case.get("revealed", False)))
        if got != expect["dun"]:
            diffs.append(f"dun {got!r}, expected {expect['dun']!r}")
    return "; ".join(diffs) or None


def _sd_follow(rules, ctx, case, expect):
    _legal(expect)
    plays, lead_kind, c, req, _ = _sd_trick(case, ctx)
    hand = _cards(case["hand"], "hand")
    play = _cards(case["play"], "play")
    if Counter(play) - Counter(hand):
        raise CaseError(f"play {_text(play)} is not part of hand {_text(hand)}")
    reason = sd.follow_error(plays[0], lead_kind, c, req, _counts(hand), play, ctx)
    return _verdict(reason is None, reason, expect)


def _sd_winner(rules, ctx, case, expect):
    *_, best = _sd_trick(case, ctx)
    return None if best == expect else f"winner {best}, expected {expect}"


def _sd_throw(rules, ctx, case, expect):
    if not isinstance(expect, dict):
        raise CaseError("expect: expected an object")
    _check_keys(expect, {"ok", "forced", "penalty"})
    lead = _cards(case["lead"], "lead")
    kind, c = sd.lead_format(lead, ctx)
    if kind == sd.INVALID:
        raise CaseError(f"the lead {_text(lead)} is not one suit")
    others = [_counts(_cards(h, "others")) for h in case["others"]]
    forced, penalty = (sd.judge_throw(lead, c, others, ctx) if kind == sd.THROW
                       else (None, 0))
    diffs = []
    if (forced is None) != expect.get("ok"):
        diffs.append(f"ok {forced is None}, expected {expect.get('ok')}")
    if forced is not None:
        if "forced" in expect and Counter(forced) != Counter(_cards(expect["forced"], "forced")):
            diffs.append(f"forced {_text(forced)}, expected {expect['forced']}")
        if "penalty" in expect and expect["penalty"] != penalty:
            diffs.append(f"penalty {penalty}, expected {expect['penalty']}")
    return "; ".join(diffs) or None


def _deal_common(rules, case, expect, allowed_deal, allowed_expect):
    deal = case["deal"]
    unknown = set(deal) - allowed_deal
    if unknown:
        raise CaseError(f"unknown deal field(s) {sorted(unknown)} for {rules.variant}")
    if not isinstance(expect, dict):
        raise CaseError("expect: expected an object")
    _check_keys(expect, allowed_expect)
    dealer = deal["dealer"]
    dt = dealer % 2
    levels = [0, 0]
    levels[dt] = parse_rank(deal["levels"]["dealer_team"])
    levels[1 - dt] = parse_rank(deal["levels"]["attackers"])
    last = deal["last_trick"]
    if last["winner_team"] not in ("dealer_team", "attackers"):
        raise CaseError("last_trick.winner_team: expected dealer_team or attackers")
    return deal, dealer, dt, (levels[0], levels[1]), last["winner_team"] == "attackers"


def _diff(expect: dict, got: dict) -> str | None:
    diffs = [f"{k} {got[k]!r}, expected {v!r}" for k, v in expect.items() if got[k] != v]
    return "; ".join(diffs) or None


def _sd_deal_result(rules, ctx, case, expect):
    deal, dealer, dt, levels, dug = _deal_common(
        rules, case, expect, {"dealer", "levels", "attacker_points", "kitty", "last_trick"},
        {"attacker_total", "levels", "next_dealer", "game_over", "winner"})
    kitty = _cards(deal["kitty"], "kitty")
    wc = deal["last_trick"].get("winning_card")
    card = parse_cards([wc])[0] if wc else None
    out = sd.settle(
        rules, dealer=dealer, levels=levels, attacker_points=deal["attacker_points"],
        kitty_points=sum(POINTS[k] for k in kitty), attackers_won_last=dug,
        last_winning_card=card, trump=ctx.suit)
    new, nxt, over, win = out.levels, out.next_dealer, out.game_over, out.winner_team
    got = {"attacker_total": out.attacker_total,
           "levels": {"dealer_team": RANK_TEXT[new[dt]], "attackers": RANK_TEXT[new[1 - dt]]},
           "next_dealer": nxt, "game_over": over,
           "winner": None if win is None else ("dealer_team" if win == dt else "attackers")}
    return _diff(expect, got)


def _sd_declare(rules, ctx, case, expect):
    _legal(expect)
    _only(case, "single-deck declarations", "shown_before", "dealer_team_can_declare",
          "kitty_opened", "overturned", "suit")
    seat = case["seat"]
    cards = _cards(case["cards"], "cards")
    first = bool(case.get("first_deal", False))
    dealer = case.get("dealer")
    uprising_levels = None
    if case.get("uprising"):
        # there is no dealer in the uprising redeal: 'dealer' (if given) is the one before it,
        # which names the teams of 'levels'
        if not case.get("levels"):
            raise CaseError("an uprising case needs 'levels'")
        uprising_levels = _team_levels(case["levels"], dealer)
    elif case.get("levels") and dealer is not None and \
            parse_rank(case["levels"]["dealer_team"]) != ctx.level:
        raise CaseError("levels.dealer_team contradicts context.level: the level played is the "
                        "dealer team's")
    phase = case.get("phase", "dealing")
    if phase not in ("dealing", "after_burial"):
        raise CaseError(f"phase {phase!r}: expected 'dealing' or 'after_burial'")
    reason = sd.reveal_error(cards, ctx.level, bool(case.get("current")), phase == "dealing",
                             uprising_levels)
    got = _verdict(reason is None, reason, expect)
    if got or reason is not None:
        return got
    if "trump" in case and SUITS[cards[0] // 13] != case["trump"]:
        return f"trump {SUITS[cards[0] // 13]!r}, expected {case['trump']!r}"
    if "new_dealer" in case:
        nd = sd.reveal_dealer(seat, cards[0], None if first or uprising_levels else dealer,
                              uprising_levels)
        if nd != case["new_dealer"]:
            return f"new dealer {nd}, expected {case['new_dealer']}"
    return None


def _team_levels(lv: dict, dealer) -> tuple[int, int]:
    if dealer is None:
        if set(lv) - {"0", "1", "dealer_team", "attackers"}:
            raise CaseError("levels: expected dealer_team / attackers")
    if dealer is not None:
        out = [0, 0]
        out[dealer % 2] = parse_rank(lv["dealer_team"])
        out[1 - dealer % 2] = parse_rank(lv["attackers"])
        return out[0], out[1]
    if "0" in lv:
        return parse_rank(lv["0"]), parse_rank(lv["1"])
    raise CaseError("an uprising case without a dealer needs levels by team: {'0': r, '1': r}")


def _sd_bury(rules, ctx, case, expect):
    _legal(expect)
    hand = _cards(case["hand"], "hand")
    bury = _cards(case["bury"], "bury")
    if Counter(bury) - Counter(hand):
        return _verdict(False, "the burial is not part of the hand", expect)
    counts = _counts(hand)
    reason = sd.bury_error(rules, counts, bury, ctx, sd.side_suits_held(counts, ctx))
    return _verdict(reason is None, reason, expect)


_PRE_KITTY_STEPS = {"uprising": "uprising", "handover": "handover", "transfer": "transfer",
                    "hard_dun": "dun_reveal"}


def _sd_pre_kitty(rules, ctx, case, expect):
    _legal(expect)
    action = case["action"]
    if action not in _PRE_KITTY_STEPS:
        raise CaseError(f"action {action!r}: expected uprising, handover, transfer or hard_dun")
    if action != "hard_dun" and "cards" in case:
        raise CaseError("'cards' are the four cards of a hard_dun reveal")
    seat, dealer = case["seat"], case["dealer"]
    hand = _counts(_cards(case["hand"], "hand"))
    ok = sd.pre_kitty_eligible(_PRE_KITTY_STEPS[action], seat, dealer, hand, ctx)
    reason = None
    if ok and action == "hard_dun":
        reason = sd.dun_reveal_error(_cards(case.get("cards") or [], "cards"), hand, ctx.level)
        ok = reason is None
    return _verdict(ok, reason, expect)


def _sd_kitty_flip(rules, ctx, case, expect):
    if not isinstance(expect, dict):
        raise CaseError("expect: expected an object")
    _check_keys(expect, {"trump"})
    suit = sd.flip_suit(_cards(case["kitty"], "kitty"), ctx.level)
    return None if SUITS[suit] == expect["trump"] else \
        f"trump {SUITS[suit]!r}, expected {expect['trump']!r}"


SINGLE_DECK_KINDS = {
    "format": _sd_format, "follow": _sd_follow, "winner": _sd_winner, "throw": _sd_throw,
    "deal_result": _sd_deal_result, "declare": _sd_declare, "bury": _sd_bury,
    "pre_kitty": _sd_pre_kitty, "kitty_flip": _sd_kitty_flip,
}


# -- three-deck -------------------------------------------------------------------------------

def _td_format(rules, ctx, case, expect):
    if not isinstance(expect, dict):
        raise CaseError("expect: expected an object")
    _check_keys(expect, {"format", "suit", "units"})
    _only(case, "three-deck", "holder", "revealed")
    cards = _cards(case["cards"], "cards")
    kind, c = td.lead_format(cards, ctx)
    diffs = []
    if kind != expect.get("format"):
        diffs.append(f"format {kind!r}, expected {expect.get('format')!r}")
    if "suit" in expect and kind != td.INVALID and _class_text(c) != expect["suit"]:
        diffs.append(f"suit {_class_text(c)!r}, expected {expect['suit']!r}")
    if "units" in expect and kind != td.INVALID:
        if [Counter(_cards(u, "units")) for u in expect["units"]] != [Counter(cards)]:
            diffs.append(f"units {[_text(cards)]}, expected {expect['units']}")
    return "; ".join(diffs) or None


def _td_follow(rules, ctx, case, expect):
    _legal(expect)
    _only(case, "three-deck", "dun_kinds")
    trick = [_cards(p, "trick") for p in case["trick"]]
    if td.lead_format(trick[0], ctx)[0] == td.INVALID:
        raise CaseError(f"the lead {_text(trick[0])} is not a legal lead")
    hand = _cards(case["hand"], "hand")
    play = _cards(case["play"], "play")
    if Counter(play) - Counter(hand):
        raise CaseError(f"play {_text(play)} is not part of hand {_text(hand)}")
    reason = td.follow_error(trick[0], _counts(hand), play, ctx, rules.pair_following == "live")
    return _verdict(reason is None, reason, expect)


def _td_winner(rules, ctx, case, expect):
    _only(case, "three-deck", "dun_kinds")
    got = td.trick_winner([_cards(p, "trick") for p in case["trick"]], ctx)
    return None if got == expect else f"winner {got}, expected {expect}"


def _td_deal_result(rules, ctx, case, expect):
    deal, dealer, dt, levels, dug = _deal_common(
        rules, case, expect,
        {"dealer", "levels", "attacker_points", "kitty", "last_trick", "dry_pot", "tribute"},
        {"attacker_total", "levels", "next_dealer", "game_over", "winner", "match_points"})
    tribute = None
    if deal.get("tribute"):
        t = deal["tribute"]
        if set(t) - {"giver", "receiver", "count"}:
            raise CaseError("deal.tribute: expected giver, receiver, count")
        tribute = (t["giver"], t["receiver"], t["count"])
    out = td.settle(rules, dealer=dealer, levels=levels,
                    attacker_points=deal["attacker_points"], kitty=_cards(deal["kitty"], "kitty"),
                    attackers_won_last=dug, dry_pot=bool(deal.get("dry_pot")), tribute=tribute)
    new = out["levels"]
    win = out["winner_team"]
    got = {"attacker_total": out["total"],
           "levels": {"dealer_team": RANK_TEXT[new[dt]], "attackers": RANK_TEXT[new[1 - dt]]},
           "next_dealer": out["next_dealer"], "game_over": out["game_over"],
           "winner": None if win is None else ("dealer_team" if win == dt else "attackers"),
           "match_points": {str(i): out["match_points"][i] for i in range(4)}}
    return _diff(expect, got)


def _td_declare(rules, ctx, case, expect):
    _legal(expect)
    _only(case, "three-deck declarations", "shown_before", "dealer_team_can_declare",
          "kitty_opened", "overturned", "uprising", "levels")
    seat = case["seat"]
    cards = _cards(case["cards"], "cards")
    suit = parse_suit(case["suit"]) if "suit" in case else None
    first = bool(case.get("first_deal", False))
    cur = case.get("current")
    current = None
    if cur:
        if set(cur) - {"seat", "cards", "suit"}:
            raise CaseError("current: expected seat, cards and suit")
        cc = _cards(cur["cards"], "current.cards")
        csuit = parse_suit(cur["suit"]) if "suit" in cur else None
        if not first:
            shape = td.declaration_shape(cc, ctx.level, csuit)
            if shape is None:
                raise CaseError(f"current {_text(cc)} is not a three-deck declaration")
            current = Declaration(cur["seat"], cc, shape[0], shape[1], False)
    reason, decl = td.judge_declaration(first, bool(cur) and first, current, seat, cards, suit,
                                        ctx.level)
    got = _verdict(reason is None, reason, expect)
    if got or decl is None:
        return got
    if "trump" in case and not first:
        t = "none" if decl.suit is None else SUITS[decl.suit]
        if t != case["trump"]:
            return f"trump {t!r}, expected {case['trump']!r}"
    if "new_dealer" in case and first and case["new_dealer"] != seat:
        return f"new dealer {seat}, expected {case['new_dealer']}"
    return None


def _td_bury(rules, ctx, case, expect):
    _legal(expect)
    hand = _cards(case["hand"], "hand")
    bury = _cards(case["bury"], "bury")
    reason = ("the burial is not part of the hand" if Counter(bury) - Counter(hand)
              else td.bury_error(rules, _counts(hand), bury))
    return _verdict(reason is None, reason, expect)


def _td_tribute(rules, ctx, case, expect):
    if not isinstance(expect, dict):
        raise CaseError("expect: expected an object")
    _check_keys(expect, {"count", "direction", "cards"})
    prev = case["previous"]
    if set(prev) - {"attacker_total", "kitty"}:
        raise CaseError("previous: expected attacker_total and kitty")
    hand = case.get("giver_hand")
    if ("cards" in expect) != (hand is not None):
        raise CaseError("expect.cards and giver_hand go together: the cards given are read off "
                        "the giver's hand")
    count, direction = td.tribute_plan(
        prev["attacker_total"], td.joker_units(_cards(prev["kitty"], "kitty")),
        bool(case.get("giver_three_bj")), bool(case.get("giver_partner_three_bj")))
    got = {"count": count, "direction": direction}
    if hand is not None:
        counts = _counts(_cards(hand, "giver_hand"))
        if case.get("giver_three_bj") != (counts[BIG_JOKER] >= 3):
            raise CaseError("giver_three_bj contradicts giver_hand")
        given = td.tribute_cards(counts, count, ctx)
        want = Counter(_cards(expect["cards"], "expect.cards"))
        got["cards"] = expect["cards"] if Counter(given) == want else _text(given)
    return _diff(expect, got)


def _td_tribute_return(rules, ctx, case, expect):
    _legal(expect)
    hand = _cards(case["hand"], "hand")
    cards = _cards(case["cards"], "cards")
    if Counter(cards) - Counter(hand):
        raise CaseError(f"cards {_text(cards)} are not part of hand {_text(hand)}")
    reason = td.return_error(_counts(hand), cards, case["count"], ctx)
    return _verdict(reason is None, reason, expect)


def _td_first_dealer(rules, ctx, case, expect):
    if not isinstance(expect, dict):
        raise CaseError("expect: expected an object")
    _check_keys(expect, {"dealer", "trump"})
    dealer, suit = td.first_dealer(_cards(case["kitty"], "kitty"), case["first_seat"],
                                   rules.first_flip)
    return _diff(expect, {"dealer": dealer, "trump": SUITS[suit] if suit is not None else None})


def _td_dry_pot(rules, ctx, case, expect):
    if not isinstance(expect, bool):
        raise CaseError("expect: expected true or false")
    got = td.is_dry_pot(_cards(case["kitty"], "kitty"), ctx)
    return None if got == expect else f"dry pot {got}, expected {expect}"


def _td_joker_bury(rules, ctx, case, expect):
    _legal(expect)
    kitty = _cards(case["kitty"], "kitty")
    reason = td.joker_bury_error(kitty, kitty, _counts(_cards(case["hand"], "hand")),
                                 _cards(case["jokers"], "jokers"), _cards(case["take"], "take"),
                                 ctx, bool(case.get("dry_pot")), case["seat"] == case["dealer"])
    return _verdict(reason is None, reason, expect)


def _td_title(rules, ctx, case, expect):
    got = td.title(case["match_points"])
    return None if got == expect else f"title {got!r}, expected {expect!r}"


THREE_DECK_KINDS = {
    "format": _td_format, "follow": _td_follow, "winner": _td_winner,
    "deal_result": _td_deal_result, "declare": _td_declare, "bury": _td_bury,
    "tribute": _td_tribute, "tribute_return": _td_tribute_return,
    "first_dealer": _td_first_dealer, "dry_pot": _td_dry_pot,
    "joker_bury": _td_joker_bury, "title": _td_title,
}

__all__ = ["SINGLE_DECK_KINDS", "THREE_DECK_KINDS", "trump_context", "parse_rank"]
