"""greedy: a sensible heuristic bot that uses the SDK's cards (the rules engine) for strength:
the SDK's ``arena_sdk.greedy`` (declare a long suit, bury weak side cards, lead sure winners,
win points cheaply, feed a winning partner). To change its play, copy
``sdk/python/src/arena_sdk/greedy.py`` into this folder, edit it, and import it from here.
"""

import sys

from arena_sdk import run
from arena_sdk.greedy import GreedyBot

if __name__ == "__main__":
    sys.exit(run(GreedyBot()))
