"""Conformance judges of three-deck: each calls the engine's own function for its rule."""

from __future__ import annotations

from collections import Counter

from referee.conformance import (CaseError, check_keys, class_text, count_vector, deal_common,
                                 diff, legal_expect, only, read_cards, text, verdict)
from referee.rules.cards import BIG_JOKER, RANK_TEXT, SUITS, parse_suit
from referee.rules.state import Declaration
from referee.rules.families.three_deck import combos, declare, flow, scoring



def _td_format(rules, ctx, case, expect):
    if not isinstance(expect, dict):
        raise CaseError("expect: expected an object")
    check_keys(expect, {"format", "suit", "units"})
    only(case, "three-deck", "holder", "revealed")
    cards = read_cards(case["cards"], "cards")
    kind, c = combos.lead_format(cards, ctx)
    diffs = []
    if kind != expect.get("format"):
        diffs.append(f"format {kind!r}, expected {expect.get('format')!r}")
    if "suit" in expect and kind != combos.INVALID and class_text(c) != expect["suit"]:
        diffs.append(f"suit {class_text(c)!r}, expected {expect['suit']!r}")
    if "units" in expect and kind != combos.INVALID:
        if [Counter(read_cards(u, "units")) for u in expect["units"]] != [Counter(cards)]:
            diffs.append(f"units {[text(cards)]}, expected {expect['units']}")
    return "; ".join(diffs) or None


def _td_follow(rules, ctx, case, expect):
    legal_expect(expect)
    only(case, "three-deck", "dun_kinds")
    trick = [read_cards(p, "trick") for p in case["trick"]]
    if combos.lead_format(trick[0], ctx)[0] == combos.INVALID:
        raise CaseError(f"the lead {text(trick[0])} is not a legal lead")
    hand = read_cards(case["hand"], "hand")
    play = read_cards(case["play"], "play")
    if Counter(play) - Counter(hand):
        raise CaseError(f"play {text(play)} is not part of hand {text(hand)}")
    reason = combos.follow_error(trick[0], count_vector(hand), play, ctx,
                                 rules.pair_following == "live")
    return verdict(reason is None, reason, expect)


def _td_winner(rules, ctx, case, expect):
    only(case, "three-deck", "dun_kinds")
    got = combos.trick_winner([read_cards(p, "trick") for p in case["trick"]], ctx)
    return None if got == expect else f"winner {got}, expected {expect}"


def _td_deal_result(rules, ctx, case, expect):
    deal, dealer, dt, levels, dug = deal_common(
        rules, case, expect,
        {"dealer", "levels", "attacker_points", "kitty", "last_trick", "dry_pot", "tribute"},
        {"attacker_total", "levels", "next_dealer", "game_over", "winner", "match_points"})
    tribute = None
    if deal.get("tribute"):
        t = deal["tribute"]
        if set(t) - {"giver", "receiver", "count"}:
            raise CaseError("deal.tribute: expected giver, receiver, count")
        tribute = (t["giver"], t["receiver"], t["count"])
    out = scoring.settle(rules, dealer=dealer, levels=levels,
                         attacker_points=deal["attacker_points"],
                         kitty=read_cards(deal["kitty"], "kitty"), attackers_won_last=dug,
                         dry_pot=bool(deal.get("dry_pot")), tribute=tribute)
    new = out.levels
    win = out.winner_team
    got = {"attacker_total": out.attacker_total,
           "levels": {"dealer_team": RANK_TEXT[new[dt]], "attackers": RANK_TEXT[new[1 - dt]]},
           "next_dealer": out.next_dealer, "game_over": out.game_over,
           "winner": None if win is None else ("dealer_team" if win == dt else "attackers"),
           "match_points": {str(i): out.match_points[i] for i in range(4)}}
    return diff(expect, got)


def _td_declare(rules, ctx, case, expect):
    legal_expect(expect)
    only(case, "three-deck declarations", "shown_before", "dealer_team_can_declare",
          "kitty_opened", "overturned", "uprising", "levels")
    seat = case["seat"]
    cards = read_cards(case["cards"], "cards")
    suit = parse_suit(case["suit"]) if "suit" in case else None
    first = bool(case.get("first_deal", False))
    cur = case.get("current")
    current = None
    if cur:
        if set(cur) - {"seat", "cards", "suit"}:
            raise CaseError("current: expected seat, cards and suit")
        cc = read_cards(cur["cards"], "current.cards")
        csuit = parse_suit(cur["suit"]) if "suit" in cur else None
        if not first:
            shape = declare.declaration_shape(cc, ctx.level, csuit)
            if shape is None:
                raise CaseError(f"current {text(cc)} is not a three-deck declaration")
            current = Declaration(cur["seat"], cc, shape[0], shape[1], False)
    sit = declare.Situation(first_deal=first, grabbed=bool(cur) and first, current=current,
                            level=ctx.level)
    reason, decl = declare.judge_declaration(sit, seat, cards, suit)
    got = verdict(reason is None, reason, expect)
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
    legal_expect(expect)
    hand = read_cards(case["hand"], "hand")
    bury = read_cards(case["bury"], "bury")
    reason = ("the burial is not part of the hand" if Counter(bury) - Counter(hand)
              else flow.bury_error(rules, count_vector(hand), bury))
    return verdict(reason is None, reason, expect)


def _td_tribute(rules, ctx, case, expect):
    if not isinstance(expect, dict):
        raise CaseError("expect: expected an object")
    check_keys(expect, {"count", "direction", "cards"})
    prev = case["previous"]
    if set(prev) - {"attacker_total", "kitty"}:
        raise CaseError("previous: expected attacker_total and kitty")
    hand = case.get("giver_hand")
    if ("cards" in expect) != (hand is not None):
        raise CaseError("expect.cards and giver_hand go together: the cards given are read off "
                        "the giver's hand")
    count, direction = flow.tribute_plan(
        prev["attacker_total"], scoring.joker_units(read_cards(prev["kitty"], "kitty")),
        bool(case.get("giver_three_bj")), bool(case.get("giver_partner_three_bj")))
    got = {"count": count, "direction": direction}
    if hand is not None:
        counts = count_vector(read_cards(hand, "giver_hand"))
        if case.get("giver_three_bj") != (counts[BIG_JOKER] >= 3):
            raise CaseError("giver_three_bj contradicts giver_hand")
        given = flow.tribute_cards(counts, count, ctx)
        want = Counter(read_cards(expect["cards"], "expect.cards"))
        got["cards"] = expect["cards"] if Counter(given) == want else text(given)
    return diff(expect, got)


def _td_tribute_return(rules, ctx, case, expect):
    legal_expect(expect)
    hand = read_cards(case["hand"], "hand")
    cards = read_cards(case["cards"], "cards")
    if Counter(cards) - Counter(hand):
        raise CaseError(f"cards {text(cards)} are not part of hand {text(hand)}")
    reason = flow.return_error(count_vector(hand), cards, case["count"], ctx)
    return verdict(reason is None, reason, expect)


def _td_first_dealer(rules, ctx, case, expect):
    if not isinstance(expect, dict):
        raise CaseError("expect: expected an object")
    check_keys(expect, {"dealer", "trump"})
    dealer, suit = declare.first_dealer(read_cards(case["kitty"], "kitty"), case["first_seat"],
                                        rules.first_flip)
    return diff(expect, {"dealer": dealer, "trump": SUITS[suit] if suit is not None else None})


def _td_dry_pot(rules, ctx, case, expect):
    if not isinstance(expect, bool):
        raise CaseError("expect: expected true or false")
    got = flow.is_dry_pot(read_cards(case["kitty"], "kitty"), ctx)
    return None if got == expect else f"dry pot {got}, expected {expect}"


def _td_joker_bury(rules, ctx, case, expect):
    legal_expect(expect)
    kitty = read_cards(case["kitty"], "kitty")
    reason = flow.joker_bury_error(kitty, kitty, count_vector(read_cards(case["hand"], "hand")),
                                   read_cards(case["jokers"], "jokers"),
                                   read_cards(case["take"], "take"), ctx,
                                   bool(case.get("dry_pot")), case["seat"] == case["dealer"])
    return verdict(reason is None, reason, expect)


def _td_title(rules, ctx, case, expect):
    got = scoring.title(case["match_points"])
    return None if got == expect else f"title {got!r}, expected {expect!r}"


KINDS = {
    "format": _td_format, "follow": _td_follow, "winner": _td_winner,
    "deal_result": _td_deal_result, "declare": _td_declare, "bury": _td_bury,
    "tribute": _td_tribute, "tribute_return": _td_tribute_return,
    "first_dealer": _td_first_dealer, "dry_pot": _td_dry_pot,
    "joker_bury": _td_joker_bury, "title": _td_title,
}
