"""What several of the ``arena`` command's modules share: the variant choice, the sandbox
switch."""

from __future__ import annotations

import os
import sys

VARIANT_HELP = "the variant (default two-deck-fry; `arena rules variants` lists them)"


def sandbox_or_refuse(args) -> None:
    """With --unsandboxed, the referee processes started from here play the bots
    unsandboxed; without it, a machine where bwrap cannot run refuses to play (SeasonError)."""
    from scheduler.season import SeasonError
    from referee.seats.sandbox import UNSANDBOXED_ENV, require_sandbox, SandboxUnavailable
    if getattr(args, "unsandboxed", False):
        os.environ[UNSANDBOXED_ENV] = "1"
        print("note: --unsandboxed: the bots run with this user's rights and the whole host "
              "in reach", file=sys.stderr)
        return
    try:
        require_sandbox()
    except SandboxUnavailable as e:
        raise SeasonError(str(e)) from None


def unsandboxed_option(parser) -> None:
    parser.add_argument("--unsandboxed", action="store_true",
                        help="play the bots without their sandboxes (with the referee's rights "
                             "and the whole host in reach; docs/security.md)")


def variant_ids_or_exit() -> tuple[str, ...]:
    from referee.rules import variant_ids
    try:
        return variant_ids()
    except ValueError as e:  # a family named in ARENA_FAMILIES that cannot be loaded
        raise SystemExit(f"arena: {e}") from None
