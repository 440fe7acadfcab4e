"""cheap: never declares, and always plays the lowest cards the hint offers (keeps its high
cards and points for later, which is not always wise)."""

import sys

from arena_sdk import Bot, pb, run

ORDER = {r: i for i, r in enumerate(["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q",
                                     "K", "A", "L", "B"])}  # LJ and BJ: the jokers


def cost(action) -> tuple:
    """Pass first, then the action whose cards rank lowest in sum, then fewest cards."""
    if action.kind == pb.ACTION_KIND_PASS:
        return (0, 0, 0)
    return (1, sum(ORDER.get(c[:-1], 0) for c in action.cards), len(action.cards))


class CheapBot(Bot):
    name = "cheap"

    def choose(self, request):
        return min(request.hint.actions, key=cost)


if __name__ == "__main__":
    sys.exit(run(CheapBot()))
