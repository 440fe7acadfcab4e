"""A bot in plain Python with no gRPC: it reads the referee's messages as JSON lines on
standard input and answers each request with one JSON line on standard output."""

import json
import sys


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "request":
            actions = message["hint"]["actions"]
            # prefer passing when allowed; otherwise the listed action with the fewest cards
            passing = [a for a in actions if a["kind"] == "ACTION_KIND_PASS"]
            choice = passing[0] if passing else min(actions, key=lambda a: len(a["cards"]))
            print(json.dumps({"request_id": message["request_id"], "action": choice}),
                  flush=True)
        elif message["type"] == "match_end":
            break


if __name__ == "__main__":
    main()
