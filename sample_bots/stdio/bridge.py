"""The stdio bridge: lets a program with no gRPC library play through JSON lines.

The referee starts ``bridge.py -- COMMAND...`` for a bot whose manifest says
``protocol = "stdio"``. The bridge connects to the referee for the seat (the ARENA_* variables)
and starts COMMAND with pipes. Every message the referee sends becomes one JSON line on the
program's standard input; the program answers each request with one JSON line on its standard
output. The schema is in this folder's README.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from arena_bot import Bot, run  # noqa: E402
from google.protobuf import json_format  # noqa: E402
from shengji_arena.v1 import referee_pb2 as pb  # noqa: E402


def _dict(message) -> dict:
    return json_format.MessageToDict(message, preserving_proto_field_name=True,
                                     always_print_fields_with_no_presence=True)


class StdioBridge(Bot):
    """Forwards every message to the child program and reads its answers."""

    name = "stdio-bridge"

    def __init__(self, command: list[str]) -> None:
        super().__init__()
        self.child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True, bufsize=1)

    def _send(self, kind: str, message) -> None:
        line = json.dumps({"type": kind, **_dict(message)}, ensure_ascii=False)
        self.child.stdin.write(line + "\n")
        self.child.stdin.flush()

    def decide(self, request):
        self._send("request", request)
        line = self.child.stdout.readline()
        if not line:
            raise SystemExit("stdio bridge: the program closed its output")
        try:
            answer = json.loads(line)
            action = json_format.ParseDict(answer["action"], pb.Action())
        except (ValueError, KeyError, json_format.ParseError) as e:
            # pass the unreadable answer on as an empty action: the referee records the fault
            print(f"stdio bridge: unreadable answer {line.strip()[:200]!r}: {e}", file=sys.stderr)
            return pb.Action()
        return action

    def on_welcome(self, welcome): self._send("welcome", welcome)
    def on_notice(self, notice): self._send("notice", notice)
    def on_rejection(self, rejection): self._send("rejection", rejection)
    def on_match_end(self, end): self._send("match_end", end)


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        print("usage: bridge.py -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    bridge = StdioBridge(argv[argv.index("--") + 1:])
    try:
        return run(bridge)
    finally:
        if bridge.child.stdin:
            bridge.child.stdin.close()
        try:
            bridge.child.wait(timeout=2)
        except subprocess.TimeoutExpired:
            bridge.child.kill()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
