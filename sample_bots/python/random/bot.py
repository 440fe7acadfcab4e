"""random: answers every decision with an action drawn uniformly from the referee's hint.

``--events-with-requests``: ask for the events only with the requests and at deal end."""

import os
import random
import sys

from arena_sdk import Bot, run


class RandomBot(Bot):
    name = "random"

    def __init__(self, seed: str) -> None:
        super().__init__()
        self.rng = random.Random(seed)

    def choose(self, request):
        return self.rng.choice(request.hint.actions)


if __name__ == "__main__":
    seed = f"{os.environ.get('ARENA_MATCH_ID', '')}:{os.environ.get('ARENA_SEAT', '')}"
    bot = RandomBot(os.environ.get("ARENA_BOT_SEED", seed))
    bot.events_with_requests = "--events-with-requests" in sys.argv[1:]
    sys.exit(run(bot))
