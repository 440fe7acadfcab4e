"""Declaring the trump (亮主 / 报主) and overturning it (反主, 炒地皮).

``judge_declaration`` decides one declaration from the facts of the moment; the deal state and the
conformance runner both call it. ``declaration_options`` lists what a hand could show now.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...cards import BIG_JOKER, LITTLE_JOKER, SUITS, TEXT
from ...options import RuleSet
from ...state import Declaration

DEALING = "dealing"
AFTER_BURIAL = "after_burial"

# Strength ladder (both two-deck variants): 1 a declaration (single level card, or level card +
# joker), 2 a level pair (+ joker in 004), 3 the little-joker pair, 4 the big-joker pair.


@dataclass(frozen=True, slots=True)
class Situation:
    """The facts a declaration is judged on."""

    rules: RuleSet
    level: int                       # rank index the seat declares with
    phase: str                       # DEALING or AFTER_BURIAL
    first_deal: bool                 # no dealer yet (抢庄 / 抢报)
    dealer: int | None
    current: Declaration | None
    shown: frozenset = frozenset()   # level-pair kinds that already overturned once (003 §7)
    kitty_opened: bool = False
    dealer_team_can_declare: bool = True


def declaring_level(rules: RuleSet, deal_level: int, own_level: int, seat: int,
                    dealer: int | None, current: "Declaration | None", first_deal: bool) -> int:
    """The level rank a seat declares with: the deal's (the dealer team's), except that on a
    later 004 deal an attacker declaring with nothing standing (allowed only when neither
    dealer-team seat can, 报主 2) declares with its own team's level rank and becomes dealer."""
    if (rules.attacker_declare != "never" and not first_deal and dealer is not None
            and current is None and seat % 2 != dealer % 2):
        return own_level
    return deal_level


def _joker_for(suit: int) -> int:
    """004: the big joker goes with the red suits, the little joker with the black."""
    return BIG_JOKER if suit in (1, 2) else LITTLE_JOKER


def declaration_shape(cards: tuple[int, ...], level: int, rules: RuleSet):
    """(strength, suit, is_joker_pair) of a shown set of cards, or None if it is no declaration
    shape of this variant."""
    cs = sorted(cards)
    n = len(cs)
    if n == 2 and cs[0] == cs[1] and cs[0] in (LITTLE_JOKER, BIG_JOKER):
        return (3 if cs[0] == LITTLE_JOKER else 4), None, True
    if rules.declaration == "level_single":
        if n == 1 and cs[0] < 52 and cs[0] % 13 == level:
            return 1, cs[0] // 13, False
        if n == 2 and cs[0] == cs[1] and cs[0] < 52 and cs[0] % 13 == level:
            return 2, cs[0] // 13, False
        return None
    # level_joker (004): level card(s) of one suit plus the joker of its colour
    suited = [c for c in cs if c < 52]
    jokers = [c for c in cs if c >= 52]
    if len(jokers) != 1 or not suited or len(suited) > 2:
        return None
    k = suited[0]
    if any(c != k for c in suited) or k % 13 != level or jokers[0] != _joker_for(k // 13):
        return None
    return len(suited), k // 13, False


def judge_declaration(sit: Situation, seat: int, cards: tuple[int, ...], suit: int | None = None):
    """``(None, Declaration)`` when ``seat`` may show ``cards`` now, else ``(reason, None)``.
    Every family judges declarations with this signature; with two decks the cards name the
    suit, so ``suit`` is not read."""
    rules = sit.rules
    shape = declaration_shape(cards, sit.level, rules)
    shown = " ".join(TEXT[c] for c in cards)
    if shape is None:
        if rules.declaration == "level_single":
            want = (f"a level card ({'/'.join(_lv(sit.level, s) for s in range(4))}), a pair of "
                    "identical level cards, or a joker pair")
        else:
            want = ("a level card with the joker of its colour (BJ with H/D, LJ with S/C), a "
                    "level pair with that joker, or a joker pair")
        return f"{shown} is not a declaration: expected {want}", None
    strength, suit, joker_pair = shape
    cur = sit.current
    if sit.kitty_opened:
        return "the kitty was opened to fix the trump: no declaration or overturn now", None
    if cur is None:
        if joker_pair or (rules.declaration == "level_single" and strength != 1):
            return ("nobody has declared yet: the first declaration is "
                    + ("a single level card" if rules.declaration == "level_single"
                       else "a level card (or a level pair) with the joker of its colour")), None
        if sit.phase != DEALING:
            return "declaring happens while the cards are dealt", None
        if rules.declaration == "level_joker" and not sit.first_deal and sit.dealer is not None:
            if seat % 2 != sit.dealer % 2:
                if rules.attacker_declare == "never" or sit.dealer_team_can_declare:
                    return ("only the dealer's team may declare on this deal; an attacker may "
                            "only when neither dealer-team seat can"), None
        return None, Declaration(seat, tuple(cards), strength, suit, False)
    # an overturn
    if seat == cur.seat:
        return "you cannot overturn your own declaration", None
    if rules.overturn == "once":
        if cur.overturn or cur.strength >= 2:  # (a pair stands only as the snatch)
            return "the trump was snatched already: one snatch a deal", None
        if sit.phase != DEALING:
            return "a snatch comes while the cards are dealt", None
        if strength < 2:
            return ("a snatch needs a pair of identical level cards or an identical joker pair"
                    ), None
        return None, Declaration(seat, tuple(cards), strength, suit, True)
    if rules.overturn == "pair_joker":
        if sit.first_deal and sit.phase != DEALING:
            return "on the first deal an overturn must come before the kitty is taken", None
        if not sit.first_deal and sit.phase != AFTER_BURIAL:
            return "on this deal an overturn (炒底) comes after the dealer has buried", None
        if strength < 2:
            return "an overturn needs a level pair with the joker of its colour, or a joker pair", None
        if strength <= cur.strength:
            return (f"{shown} does not beat the standing {' '.join(TEXT[c] for c in cur.cards)}: "
                    "an overturn must be strictly stronger (level pair + joker < LJ pair < BJ pair)"
                    ), None
    else:
        if strength < 2:
            return "an overturn needs a pair of identical level cards or a joker pair", None
        if strength < cur.strength or (strength == cur.strength and strength != 2):
            return (f"{shown} does not beat the standing {' '.join(TEXT[c] for c in cur.cards)} "
                    "(single < level pair < LJ pair < BJ pair)"), None
        if strength == 2 and cards[0] in sit.shown:
            return f"the pair {shown} has already overturned once (一对主牌不能重复反)", None
    return None, Declaration(seat, tuple(cards), strength, suit, True)


def _lv(level: int, suit: int) -> str:
    return TEXT[suit * 13 + level]


def declaration_options(sit: Situation, seat: int, hand: list[int]) -> list[tuple[int, ...]]:
    """Every distinct set of cards ``seat`` could legally show now, from ``hand`` (counts)."""
    rules = sit.rules
    level = sit.level
    cands: list[tuple[int, ...]] = []
    for s in range(4):
        k = s * 13 + level
        n = hand[k]
        if not n:
            continue
        if rules.declaration == "level_single":
            cands.append((k,))
            if n >= 2:
                cands.append((k, k))
        else:
            j = _joker_for(s)
            if hand[j]:
                cands.append((k, j))
                if n >= 2:
                    cands.append((k, k, j))
    if hand[LITTLE_JOKER] >= 2:
        cands.append((LITTLE_JOKER, LITTLE_JOKER))
    if hand[BIG_JOKER] >= 2:
        cands.append((BIG_JOKER, BIG_JOKER))
    return [c for c in cands if judge_declaration(sit, seat, c)[0] is None]


def suit_text(suit: int | None) -> str:
    return "none" if suit is None else SUITS[suit]
