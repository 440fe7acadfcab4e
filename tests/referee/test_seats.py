"""Seats and bot processes: the stdio seat against real programs, the environment a bot is
started with, manifests' ``pythonpath``, and matches with stdio bots."""

import asyncio
import json
import os
import sys
import time

import pytest
from conftest import ROOT
from google.protobuf import json_format
from shengji_arena.v1 import referee_pb2 as pb

from referee.match.local import run_match
from referee.match.spec import MatchSpec, TimeControl
from referee.rules.record import MatchRecord, verify
from referee.seats.launch import ENGINE, PROTOS, SDK, bot_environment, launch
from referee.seats.manifest import Manifest, ManifestError, load_manifest
from referee.seats.seat import INBOX_LIMIT, TIMED_OUT, Closed, RequestWatch, Unreadable
from referee.seats.stdio_seat import LINE_LIMIT, StdioSeat, json_line, read_answer
from referee.wire.protocol import action_from_pb

STDIO = load_manifest(ROOT / "sample_bots" / "stdio")
RANDOM = load_manifest(ROOT / "sample_bots" / "python" / "random")
GREEDY = load_manifest(ROOT / "sample_bots" / "python" / "greedy")
PLAY = pb.ACTION_KIND_PLAY


def _program(tmp_path, code: str, protocol: str = "stdio", **kw) -> Manifest:
    """A manifest for an inline Python program, in a folder a sandboxed seat's uid may enter."""
    folder = tmp_path / "program"
    folder.mkdir(mode=0o755, exist_ok=True)
    return Manifest(f"inline-{protocol}", "0", (sys.executable, "-c", code), protocol, folder,
                    **kw)


def _request(rid: int, *actions: pb.Action) -> pb.RefereeMessage:
    msg = pb.RefereeMessage()
    msg.request.request_id = rid
    msg.request.kind = pb.DECISION_KIND_FOLLOW
    msg.request.hint.actions.extend(actions)
    return msg


def _with_seat(manifest: Manifest, tmp_path, body):
    """Run ``body(seat)`` against ``manifest``'s program started for seat 0; the program is
    stopped afterwards, its log in ``tmp_path / "seat0.log"``."""
    async def go():
        proc = launch(manifest, seat=0, match_id="t", log_path=tmp_path / "seat0.log")
        seat = await StdioSeat.open(proc.popen.stdin, proc.popen.stdout)
        try:
            return await body(seat)
        finally:
            seat.close()
            await asyncio.to_thread(proc.stop, 10)
    return asyncio.run(go())


class Watch:
    """A request watch that counts stray messages and keeps the seat's inbox size at each."""

    def __init__(self, seat=None) -> None:
        self.strays, self.sizes, self.seat = 0, [], seat
        self.watch = RequestWatch(1000, self._stray, self._rejoined)

    def _stray(self) -> None:
        self.strays += 1
        if self.seat is not None:
            self.sizes.append(self.seat.inbox.qsize())

    def _rejoined(self) -> None:
        raise AssertionError("a pipe never reconnects")


# -- the stdio seat ---------------------------------------------------------------------------
def test_the_stdio_sample_answers_requests_and_ends_with_the_match(tmp_path):
    """The real sample program: a Welcome, two requests answered within their deadline (the
    action it prefers: the fewest cards), then the match's end, after which its output ends."""
    async def body(seat):
        await seat.connect(1.0)  # a program is there once started: nothing to wait for
        seat.notify(pb.RefereeMessage(welcome=pb.Welcome(seat=0, match_id="t")))
        deadline = time.monotonic() + 30
        first = await seat.request(_request(7, pb.Action(kind=PLAY, cards=["3H", "3H"]),
                                            pb.Action(kind=PLAY, cards=["9H"])), deadline)
        second = await seat.request(_request(8, pb.Action(kind=PLAY, cards=["KS"]),
                                             pb.Action(kind=pb.ACTION_KIND_PASS)), deadline)
        seat.notify(pb.RefereeMessage(match_end=pb.MatchEnd(reason="finished")))
        after = await seat.request(_request(9, pb.Action(kind=PLAY, cards=["KS"])),
                                   time.monotonic() + 30)
        return first, second, after
    first, second, after = _with_seat(STDIO, tmp_path, body)
    assert first == action_from_pb(pb.Action(kind=PLAY, cards=["9H"]))
    assert second == action_from_pb(pb.Action(kind=pb.ACTION_KIND_PASS))
    assert after == Closed("closed its standard output")


def test_the_json_lines_a_program_reads_keep_their_schema():
    """One line per message: "type" and the message's fields in the protobuf JSON mapping with
    the .proto's names, 64-bit integers as strings, enums by name, empty fields present."""
    line = json_line(_request(17, pb.Action(kind=PLAY, cards=["3H"])))
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    data = json.loads(line)
    assert data["type"] == "request" and data["request_id"] == "17"
    assert data["kind"] == "DECISION_KIND_FOLLOW" and data["time_left_ms"] == "0"
    assert data["hint"]["actions"] == [{"kind": "ACTION_KIND_PLAY", "cards": ["3H"], "suit": "",
                                        "take": []}]
    assert data["events"] == [] and "observation" not in data  # a message field: only when set
    end = json.loads(json_line(pb.RefereeMessage(match_end=pb.MatchEnd(reason="forfeit"))))
    assert end == {"type": "match_end", "reason": "forfeit", "result_json": ""}


def test_a_program_that_never_answers_times_out_at_the_deadline(tmp_path):
    silent = _program(tmp_path, "import sys\nfor line in sys.stdin:\n    pass\n")

    async def body(seat):
        started = time.monotonic()
        got = await seat.request(_request(1, pb.Action(kind=PLAY, cards=["3H"])),
                                 started + 0.3)
        return got, time.monotonic() - started
    got, waited = _with_seat(silent, tmp_path, body)
    assert got is TIMED_OUT
    assert 0.3 <= waited < 5


def test_a_program_that_exits_is_closed(tmp_path):
    gone = _program(tmp_path, "import sys\nsys.stderr.write('bye\\n')\nsys.exit(3)\n")

    async def body(seat):
        started = time.monotonic()
        got = await seat.request(_request(1, pb.Action(kind=PLAY, cards=["3H"])),
                                 started + 60)
        return got, time.monotonic() - started
    got, waited = _with_seat(gone, tmp_path, body)
    assert got == Closed("closed its standard output") and waited < 30
    assert (tmp_path / "seat0.log").read_bytes() == b"bye\n"  # stderr is the seat's log


ANSWERS = r"""
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] != "request":
        continue
    action = m["hint"]["actions"][0]
    rid = int(m["request_id"])
    if rid == 1:
        print("not json at all", flush=True)
    elif rid == 2:
        print("x" * (LIMIT + 10), flush=True)
        print(json.dumps({"request_id": "2", "action": action}), flush=True)
    elif rid == 3:  # a late answer to request 1, then one with no request_id
        print(json.dumps({"request_id": "1", "action": action}), flush=True)
        print(json.dumps({"action": action}), flush=True)
    elif rid == 4:  # a flood of late answers, written before the answer
        for _ in range(STRAYS):
            print(json.dumps({"request_id": 0, "action": action}))
        print(json.dumps({"request_id": "4", "action": action}), flush=True)
    elif rid == 5:
        print(json.dumps({"request_id": "6", "action": action}), flush=True)
"""


def test_what_a_program_writes_is_read_as_answers_garbage_or_strays(tmp_path):
    """An unreadable line, an overlong one (its rest skipped), a late answer (a stray), an answer
    without request_id (the open request), a flood held at the inbox limit, and an answer to a
    later request (garbage)."""
    strays = 5 * INBOX_LIMIT
    program = _program(tmp_path, ANSWERS.replace("LIMIT", str(LINE_LIMIT))
                       .replace("STRAYS", str(strays)))
    action = pb.Action(kind=PLAY, cards=["3H"])

    async def body(seat):
        deadline = time.monotonic() + 60
        out = []
        for rid in range(1, 6):
            watch = Watch(seat)
            out.append((await seat.request(_request(rid, action), deadline, watch.watch), watch))
        return out
    (r1, _), (r2, w2), (r3, w3), (r4, w4), (r5, _) = _with_seat(program, tmp_path, body)
    assert isinstance(r1, Unreadable) and "'not json at all'" in r1.reason, r1
    assert r2 == Unreadable(f"an answer line longer than {LINE_LIMIT} bytes")
    assert w2.strays == 0
    # the answer after the overlong line comes with the next request: a late one by then
    assert w3.strays == 2 and r3 == action_from_pb(action)
    assert w4.strays == strays and r4 == action_from_pb(action)
    assert max(w4.sizes) <= INBOX_LIMIT  # the pipe is not read past the limit
    assert r5 == Unreadable("answer to request 6, but the open request is 5")


def test_a_stdio_bot_that_quits_mid_match_forfeits_at_once(tmp_path):
    """A program whose output ends is gone: no reconnect window is waited out."""
    quitter = _program(tmp_path, r"""
import json, sys
n = 0
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "request":
        n += 1
        if n == 4:
            sys.exit(3)
        print(json.dumps({"request_id": m["request_id"], "action": m["hint"]["actions"][0]}),
              flush=True)
""")
    tc = TimeControl(per_decision_ms=1000, bank_ms=500, reconnect_window_ms=60_000)
    spec = MatchSpec(match_id="quit", variant="two-deck-fry", seed="q", max_deals=1,
                     time_control=tc)
    result, record, runner = run_match(spec, [quitter, RANDOM, RANDOM, RANDOM], tmp_path)
    assert result["forfeit"] == {"seat": 0, "team": 0, "reason": "disconnected"}
    assert [(f["kind"], f["reason"]) for f in record["faults"]] == [
        ("disconnect", "seat 0 closed its standard output; its process exited with status 3")]
    assert runner.elapsed_s < 30


def test_a_match_of_stdio_partners_against_grpc_bots(tmp_path):
    """Two stdio programs as partners (seats 0 and 2), greedy and random over gRPC: no fault,
    and the record verifies."""
    spec = MatchSpec(match_id="stdio", variant="single-deck", seed="5", max_deals=1)
    result, record, _ = run_match(spec, [STDIO, GREEDY, STDIO, RANDOM], tmp_path)
    assert result["forfeit"] is None and record["faults"] == [], record["faults"]
    assert record["bots"][0] == "stdio-sample@1.0.0" and len(result["deals"]) == 1
    for game in record["games"]:
        assert verify(MatchRecord.from_dict(json.loads(json.dumps(game)))) == []


# -- the bot's environment --------------------------------------------------------------------
def _paths(env) -> list[str]:
    return [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]


def test_a_bots_pythonpath_is_its_manifests_the_protocol_package_and_the_sdk():
    """The referee's own PYTHONPATH (the repository, as a league worker gives it) is not passed
    on: a gRPC bot gets what its manifest asks for and the protocol package, a Python bot (gRPC
    or stdio) the SDK and the protocol package, a stdio bot no gRPC address or token; the
    arena's folder (which shows only the rules engine) only in a sandbox."""
    base = {"PATH": "/usr/bin", "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "protos")]),
            "ARENA_TOKEN": "the referee's own"}
    env = bot_environment(RANDOM, seat=2, match_id="m1", address="unix:///s.sock", token="tok",
                          base=base)
    assert _paths(env) == [str(PROTOS), str(SDK)]
    assert str(ROOT) not in _paths(env) and PROTOS == ROOT / "protos"
    assert SDK == ROOT / "sdk" / "python" / "src" and (SDK / "arena_sdk").is_dir()
    assert (env["ARENA_REFEREE"], env["ARENA_SEAT"], env["ARENA_TOKEN"],
            env["ARENA_MATCH_ID"]) == ("unix:///s.sock", "2", "tok", "m1")
    assert env["PATH"] == "/usr/bin"
    sandboxed = bot_environment(RANDOM, seat=2, match_id="m1", address="unix:///s.sock",
                                token="tok", base=base, sandboxed=True)
    assert _paths(sandboxed) == [str(PROTOS), str(SDK), str(ROOT)]
    stdio = bot_environment(STDIO, seat=1, match_id="m1", base=base)
    assert _paths(stdio) == [str(SDK), str(PROTOS)] and "ARENA_TOKEN" not in stdio
    assert "ARENA_REFEREE" not in stdio and stdio["ARENA_SEAT"] == "1"
    with pytest.raises(ValueError, match="address"):
        bot_environment(RANDOM, seat=0, match_id="m1", base=base)


def test_the_python_samples_name_no_folder_for_the_sdk_or_the_engine():
    """greedy imports the SDK's cards (the rules engine), random the SDK alone: neither
    manifest names a folder for them; the engine a sandbox shows is its rules, play and wire."""
    assert GREEDY.pythonpath == () and RANDOM.pythonpath == ()
    assert [p.relative_to(ROOT).as_posix() for p in ENGINE] == [
        "referee/__init__.py", "referee/rules", "referee/play", "referee/wire", "house"]


def test_a_launched_bot_sees_only_what_its_manifest_asked_for(tmp_path, monkeypatch):
    """Started for real, from a referee whose PYTHONPATH holds the repository: the process's
    PYTHONPATH and sys.path hold the manifest's folder, the protocol package and the SDK, not
    the repository."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    (tmp_path / "lib").mkdir()
    (tmp_path / "bot.toml").write_text('name = "env"\nversion = "0"\ncommand = ["python3", "-c", '
                                       '"import json, os, sys; print(json.dumps({\'env\': '
                                       'dict(os.environ), \'path\': sys.path}))"]\n'
                                       'pythonpath = ["lib"]\n')
    manifest = load_manifest(tmp_path)
    proc = launch(manifest, seat=3, match_id="m9", log_path=tmp_path / "seat3.log",
                  address="unix:///nowhere.sock", token="t3")
    proc.stop(30)
    seen = json.loads((tmp_path / "seat3.log").read_text())
    lib = str((tmp_path / "lib").resolve())
    assert _paths(seen["env"]) == [lib, str(PROTOS), str(SDK)]
    assert str(ROOT) not in seen["path"] and lib in seen["path"]
    assert seen["env"]["ARENA_SEAT"] == "3" and seen["env"]["ARENA_TOKEN"] == "t3"


@pytest.mark.parametrize("value, expected", [
    ('"lib"', "field 'pythonpath': expected a list of folders"),
    ('[1]', "field 'pythonpath': expected a list of folders"),
    ('["lib", "missing"]', "field 'pythonpath'[1] = 'missing': no such folder"),
])
def test_a_bad_pythonpath_names_the_file_and_the_field(tmp_path, value, expected):
    (tmp_path / "lib").mkdir()
    path = tmp_path / "bot.toml"
    path.write_text(f'name = "b"\nversion = "0"\ncommand = ["./b"]\npythonpath = {value}\n')
    with pytest.raises(ManifestError) as e:
        load_manifest(path)
    assert str(path) in str(e.value) and expected in str(e.value)


def test_a_real_request_reads_back_from_its_json_line():
    """A decision request as the runner builds it reads back, through its JSON line, as the
    same message (the mapping loses nothing a program needs)."""
    from referee.play.chance import chance_action
    from referee.rules.engine import apply, new_game
    from referee.rules.state import CHANCE
    from referee.rules.variants import rules_for
    from referee.wire.hints import legal_hint
    from referee.wire.protocol import observation_to_pb
    state = new_game(rules_for("two-deck-fry"), max_deals=1)
    while state.turn == CHANCE:
        state, _ = apply(state, chance_action(state, "j"))
    msg = pb.RefereeMessage(request=pb.DecisionRequest(
        request_id=3, observation=observation_to_pb(state, state.turn),
        hint=legal_hint(state, "j")))
    data = json.loads(json_line(msg))
    assert data.pop("type") == "request"
    assert json_format.ParseDict(data, pb.DecisionRequest()) == msg.request


def test_valid_json_that_is_no_answer_object_is_garbage():
    """A line of valid JSON that is not an answer object (a list, a number, a string, an object
    without an action) is a garbage answer for the open request, not a broken pipe."""
    for line in (b"[1]", b"7", b'"play"', b'{"request_id": 1}', b"null"):
        got = read_answer(line, 1)
        assert isinstance(got, Unreadable) and "expected a JSON object" in got.reason, (line, got)
    ok = read_answer(b'{"request_id": 1, "action": {"kind": "ACTION_KIND_PASS"}}', 1)
    assert ok.answer.request_id == 1 and ok.answer.action.kind == pb.ACTION_KIND_PASS
