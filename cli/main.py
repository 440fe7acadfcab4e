"""The ``arena`` command line: one entry point for everything a user runs. Each command group
is a module of ``cli/`` that registers its own subcommands (``register(sub)``)."""

from __future__ import annotations

import argparse
import os
import sys

from cli import (bench, bots, botzone, dashboard, demo, lab, ops, play, rules, season, serve,
                 sprt, study)

GROUPS = (rules, bench, play, season, bots, serve, sprt, dashboard, demo, lab, ops, study,
          botzone)
"""The command groups, in the order ``arena --help`` lists their commands (a group that adds
to another's subcommands, ``bench lab`` or ``bots wrap``, comes after it)."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="arena", description="Shengji Arena")
    sub = p.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # the reader went away (`arena standings S | head`): not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # (no second error as Python flushes at exit)
        return 0


if __name__ == "__main__":
    sys.exit(main())
