"""``arena botzone log RECORD --seat N``: a match as a Botzone bot at seat N saw it.

Prints one JSON line per Botzone game (each deal of the record's games), ``{"requests": [...],
"responses": [...]}``: the requests the seat was sent and the responses that stood (a default
action where the bot's own answer was refused), what a Botzone bot reads on its last turn. A bot
author feeds a line to the bot to reproduce any of its turns.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cli.text import visible


def register(sub) -> None:
    bz = sub.add_parser("botzone", help="Botzone bots: logs of their matches")
    bsub = bz.add_subparsers(dest="botzone_command", required=True)
    log = bsub.add_parser("log", help="the Botzone requests and responses of one seat of a "
                          "match record, one JSON line per deal",
                          epilog="exit status: 0 printed; 2 the record cannot be read (named "
                          "on stderr)")
    log.add_argument("record", help="a match record file (arena match --out, a league's "
                     "records folder)")
    log.add_argument("--seat", type=int, required=True, choices=range(4))
    log.add_argument("--out", help="write the lines to this file instead of standard output")
    log.set_defaults(func=cmd_botzone_log)


def cmd_botzone_log(args) -> int:
    from referee.match.matchfile import MatchFile
    from referee.seats.botzone_seat import botzone_log

    path = Path(args.record)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        match = MatchFile.from_dict(data, str(path))
        lines = [json.dumps(game, separators=(",", ":"))
                 for record in match.games for game in botzone_log(record, args.seat)]
    except OSError as e:
        print(f"{visible(path, one_line=True)}: cannot be read: {e.strerror}", file=sys.stderr)
        return 2
    except ValueError as e:  # not JSON, a field the record format does not accept
        print(visible(f"{path}: {e}"), file=sys.stderr)  # e quotes the record (and its path)
        return 2
    text = "".join(line + "\n" for line in lines)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"{len(lines)} Botzone game(s) of seat {args.seat} written to "
              f"{visible(args.out, one_line=True)}")
    else:
        sys.stdout.write(text)
    return 0
