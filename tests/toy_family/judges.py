"""Conformance judges of the toy family: ``winner`` through the family's own trick winner."""

from referee.conformance import read_cards

from . import rules


def _winner(rules_set, ctx, case, expect):
    trick = [read_cards(p, "trick") for p in case["trick"]]
    got = rules.trick_winner([p[0] for p in trick], ctx)
    return None if got == expect else f"winner {got}, expected {expect}"


KINDS = {"winner": _winner}
