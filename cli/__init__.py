"""The `arena` command: parse, one call, print."""
