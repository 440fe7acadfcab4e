"""The ``arena`` command line: one entry point for everything a user runs. Each command group
is a module of ``cli/`` that registers its own subcommands (``register(sub)``).

A command imports only the groups it needs: ``arena seasons`` does not load the rules engine,
the HTTP client or the benchmarks to build a parser it never shows (``COMMANDS``); ``arena``
alone, ``--help`` or an unknown command builds every group."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

GROUPS = ("rules", "bench", "play", "season", "bots", "serve", "sprt", "dashboard", "demo",
          "lab", "ops", "study", "botzone", "export")
"""The command groups (modules of ``cli/``), in the order ``arena --help`` lists their commands
(a group that adds to another's subcommands, ``bench lab`` or ``bots wrap``, comes after it)."""

COMMANDS = {
    "rules": ("rules",), "bench": ("bench", "lab", "ops"), "soak": ("play",),
    "replay": ("play",), "match": ("play",), "season": ("season",), "seasons": ("season",),
    "worker": ("season",), "sweep": ("season",), "standings": ("season",),
    "matches": ("season",), "logs": ("season",), "bots": ("bots", "lab"), "serve": ("serve",),
    "authors": ("serve",), "audit": ("serve",), "scrimmage": ("serve",), "sprt": ("sprt",),
    "web": ("dashboard",), "demo": ("demo",), "lab": ("lab",), "workers": ("ops",),
    "settings": ("ops",), "runtimes": ("ops",), "study": ("study",), "botzone": ("botzone",),
    "export": ("export",),
}
"""Each command and the groups that register it or add subcommands to it (checked against the
whole parser by tests/house/test_cli_startup.py)."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command`` alone (with what other groups add)."""
    p = argparse.ArgumentParser(prog="arena", description="Shengji Arena")
    sub = p.add_subparsers(dest="command", required=True)
    wanted = COMMANDS.get(command or "", GROUPS)
    for group in GROUPS:
        if group in wanted:
            importlib.import_module(f"cli.{group}").register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # the reader went away (`arena standings S | head`): not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # (no second error as Python flushes at exit)
        return 0
    except ValueError as e:  # a family in ARENA_FAMILIES that cannot be loaded: said plainly
        errors = sys.modules.get("referee.rules.errors")  # (loaded with the engine, if it was)
        if errors is not None and isinstance(e, errors.FamilyError):
            raise SystemExit(f"arena: {e}") from None
        raise


if __name__ == "__main__":
    sys.exit(main())
