"""`arena CMD` builds the parser of CMD alone (``cli.main.COMMANDS``): every command is a fresh
interpreter, often many a minute from scripts and workers, and the groups it never shows cost
it their imports (the rules engine, the HTTP client, the benchmarks)."""

import argparse
import subprocess
import sys

from conftest import ROOT

from cli.main import COMMANDS, build_parser


def _shape(parser: argparse.ArgumentParser) -> dict:
    """What a parser accepts: each option's strings and choices, each subcommand's own shape."""
    shape: dict = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            shape["commands"] = {name: _shape(p) for name, p in action.choices.items()}
        else:
            choices = action.choices if action.choices is None else sorted(map(str,
                                                                               action.choices))
            shape[action.dest] = (tuple(action.option_strings), action.nargs, choices,
                                  action.default if isinstance(action.default,
                                                               (str, int, float)) else None)
    return shape


def test_each_command_alone_parses_as_in_the_whole_parser():
    whole = _shape(build_parser())["commands"]
    assert sorted(COMMANDS) == sorted(whole)
    for command in COMMANDS:
        alone = _shape(build_parser(command))["commands"]
        assert alone[command] == whole[command], command


def test_a_store_command_loads_neither_the_engine_nor_the_http_client(tmp_path):
    """`arena seasons` runs without the engine; the parsers of `bots` (its --variant
    read when given) and `lab` (added to `bots`) load none either."""
    code = ("import sys\nfrom cli.main import build_parser, main\n"
            "for command in ('bots', 'lab'):\n"
            "    build_parser(command)\n"
            "try:\n"
            f"    main(['seasons', '--db', 'sqlite:///{tmp_path}/none.db'])\n"
            "except SystemExit as e:\n    print(e.code)\n"
            "print(sorted(m for m in sys.modules if m in ('referee.rules', "
            "'urllib.request', 'grpc', 'cli.bench', 'scheduler.store')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    said, loaded = out.stdout.rstrip("\n").split("\n")[-2:]
    assert "there is no store at" in said, (out.stdout, out.stderr)
    assert loaded == "['scheduler.store']", (out.stdout, out.stderr)
