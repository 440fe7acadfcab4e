"""Conformance judges of single-deck: each calls the engine's own function for its rule."""

from __future__ import annotations

from collections import Counter

from referee.conformance import (CaseError, check_keys, class_text, count_vector, deal_common,
                                 diff, legal_expect, only, read_cards, text, verdict)
from referee.rules.cards import POINTS, RANK_TEXT, SUITS, parse_cards, parse_rank
from referee.rules.families.single_deck import combos, declare, flow, scoring



def _sd_dun_kinds(case, plays, ctx):
    kinds = case.get("dun_kinds")
    if kinds is not None and (not isinstance(kinds, list) or len(kinds) != len(plays)):
        raise CaseError("dun_kinds: expected a list as long as trick")
    out: list[str | None] = []
    for i, p in enumerate(plays):
        r = combos.dun_rank(p)
        given = kinds[i] if kinds else None
        if given not in (None, combos.SOFT, combos.HARD, combos.GOLD):
            raise CaseError(f"dun_kinds[{i}] = {given!r}: expected soft, hard, gold or null")
        if r is None:
            out.append(None)
        else:
            out.append(given or (combos.GOLD if r == ctx.level else combos.HARD))
    return out


def _sd_trick(case, ctx):
    """Plays, the lead's format, the strongest dun kind so far, and the winner index."""
    plays = [read_cards(p, "trick") for p in case["trick"]]
    kinds = _sd_dun_kinds(case, plays, ctx)
    lead_kind, c = combos.lead_format(plays[0], ctx)
    if lead_kind == combos.INVALID:
        raise CaseError(f"the lead {text(plays[0])} is not a legal lead")
    best, req = combos.trick_winner(plays, ctx, kinds)
    return plays, lead_kind, c, req, best


def _sd_format(rules, ctx, case, expect):
    if not isinstance(expect, dict):
        raise CaseError("expect: expected an object")
    check_keys(expect, {"format", "suit", "units", "dun"})
    cards = read_cards(case["cards"], "cards")
    kind, c = combos.lead_format(cards, ctx)
    diffs = []
    if kind != expect.get("format"):
        diffs.append(f"format {kind!r}, expected {expect.get('format')!r}")
    if ("suit" in expect and kind not in (combos.INVALID, combos.DUN)
            and class_text(c) != expect["suit"]):
        diffs.append(f"suit {class_text(c)!r}, expected {expect['suit']!r}")
    if "units" in expect:
        units = combos.lead_units(cards, ctx)
        want = [Counter(read_cards(u, "units")) for u in expect["units"]]
        if [Counter(u) for u in units] != want:
            diffs.append(f"units {[text(u) for u in units]}, expected {expect['units']}")
    if "dun" in expect:
        r = combos.dun_rank(cards)
        holder = case.get("holder", "other")
        if holder not in ("dealer", "other"):
            raise CaseError(f"holder {holder!r}: expected dealer or other")
        got = None if r is None else combos.dun_kind(r, ctx, holder == "dealer",
                                                     bool(case.get("revealed", False)))
        if got != expect["dun"]:
            diffs.append(f"dun {got!r}, expected {expect['dun']!r}")
    return "; ".join(diffs) or None


def _sd_follow(rules, ctx, case, expect):
    legal_expect(expect)
    plays, lead_kind, c, req, _ = _sd_trick(case, ctx)
    hand = read_cards(case["hand"], "hand")
    play = read_cards(case["play"], "play")
    if Counter(play) - Counter(hand):
        raise CaseError(f"play {text(play)} is not part of hand {text(hand)}")
    reason = combos.follow_error(plays[0], lead_kind, c, req, count_vector(hand), play, ctx)
    return verdict(reason is None, reason, expect)


def _sd_winner(rules, ctx, case, expect):
    *_, best = _sd_trick(case, ctx)
    return None if best == expect else f"winner {best}, expected {expect}"


def _sd_throw(rules, ctx, case, expect):
    if not isinstance(expect, dict):
        raise CaseError("expect: expected an object")
    check_keys(expect, {"ok", "forced", "penalty"})
    lead = read_cards(case["lead"], "lead")
    kind, c = combos.lead_format(lead, ctx)
    if kind == combos.INVALID:
        raise CaseError(f"the lead {text(lead)} is not one suit")
    others = [count_vector(read_cards(h, "others")) for h in case["others"]]
    forced, penalty = (combos.judge_throw(lead, c, others, ctx) if kind == combos.THROW
                       else (None, 0))
    diffs = []
    if (forced is None) != expect.get("ok"):
        diffs.append(f"ok {forced is None}, expected {expect.get('ok')}")
    if forced is not None:
        want = Counter(read_cards(expect["forced"], "forced")) if "forced" in expect else None
        if want is not None and Counter(forced) != want:
            diffs.append(f"forced {text(forced)}, expected {expect['forced']}")
        if "penalty" in expect and expect["penalty"] != penalty:
            diffs.append(f"penalty {penalty}, expected {expect['penalty']}")
    return "; ".join(diffs) or None


def _sd_deal_result(rules, ctx, case, expect):
    deal, dealer, dt, levels, dug = deal_common(
        rules, case, expect, {"dealer", "levels", "attacker_points", "kitty", "last_trick"},
        {"attacker_total", "levels", "next_dealer", "game_over", "winner"})
    kitty = read_cards(deal["kitty"], "kitty")
    wc = deal["last_trick"].get("winning_card")
    card = parse_cards([wc])[0] if wc else None
    out = scoring.settle(
        rules, dealer=dealer, levels=levels, attacker_points=deal["attacker_points"],
        kitty_points=sum(POINTS[k] for k in kitty), attackers_won_last=dug,
        last_winning_card=card, trump=ctx.suit)
    new, nxt, over, win = out.levels, out.next_dealer, out.game_over, out.winner_team
    got = {"attacker_total": out.attacker_total,
           "levels": {"dealer_team": RANK_TEXT[new[dt]], "attackers": RANK_TEXT[new[1 - dt]]},
           "next_dealer": nxt, "game_over": over,
           "winner": None if win is None else ("dealer_team" if win == dt else "attackers")}
    return diff(expect, got)


def _sd_declare(rules, ctx, case, expect):
    legal_expect(expect)
    only(case, "single-deck declarations", "shown_before", "dealer_team_can_declare",
          "kitty_opened", "overturned", "suit")
    seat = case["seat"]
    cards = read_cards(case["cards"], "cards")
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
    reason = declare.reveal_error(cards, ctx.level, bool(case.get("current")),
                                  phase == "dealing", uprising_levels)
    got = verdict(reason is None, reason, expect)
    if got or reason is not None:
        return got
    if "trump" in case and SUITS[cards[0] // 13] != case["trump"]:
        return f"trump {SUITS[cards[0] // 13]!r}, expected {case['trump']!r}"
    if "new_dealer" in case:
        nd = declare.reveal_dealer(seat, cards[0], None if first or uprising_levels else dealer,
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
    legal_expect(expect)
    hand = read_cards(case["hand"], "hand")
    bury = read_cards(case["bury"], "bury")
    if Counter(bury) - Counter(hand):
        return verdict(False, "the burial is not part of the hand", expect)
    counts = count_vector(hand)
    reason = flow.bury_error(rules, counts, bury, ctx, flow.side_suits_held(counts, ctx))
    return verdict(reason is None, reason, expect)


_PRE_KITTY_STEPS = {"uprising": "uprising", "handover": "handover", "transfer": "transfer",
                    "hard_dun": "dun_reveal"}


def _sd_pre_kitty(rules, ctx, case, expect):
    legal_expect(expect)
    action = case["action"]
    if action not in _PRE_KITTY_STEPS:
        raise CaseError(f"action {action!r}: expected uprising, handover, transfer or hard_dun")
    if action != "hard_dun" and "cards" in case:
        raise CaseError("'cards' are the four cards of a hard_dun reveal")
    seat, dealer = case["seat"], case["dealer"]
    hand = count_vector(read_cards(case["hand"], "hand"))
    ok = flow.pre_kitty_eligible(_PRE_KITTY_STEPS[action], seat, dealer, hand, ctx)
    reason = None
    if ok and action == "hard_dun":
        shown = read_cards(case.get("cards") or [], "cards")
        reason = flow.dun_reveal_error(shown, hand, ctx.level)
        ok = reason is None
    return verdict(ok, reason, expect)


def _sd_kitty_flip(rules, ctx, case, expect):
    if not isinstance(expect, dict):
        raise CaseError("expect: expected an object")
    check_keys(expect, {"trump"})
    suit = declare.flip_suit(read_cards(case["kitty"], "kitty"), ctx.level)
    return None if SUITS[suit] == expect["trump"] else \
        f"trump {SUITS[suit]!r}, expected {expect['trump']!r}"


KINDS = {
    "format": _sd_format, "follow": _sd_follow, "winner": _sd_winner, "throw": _sd_throw,
    "deal_result": _sd_deal_result, "declare": _sd_declare, "bury": _sd_bury,
    "pre_kitty": _sd_pre_kitty, "kitty_flip": _sd_kitty_flip,
}
