"""Errors the engine raises. Both are ``ValueError``: one for input that cannot be read, one for
an action the rules do not allow now."""


class InvalidActionError(ValueError):
    """The action cannot be read: malformed card text, unknown action word, wrong shape."""


class IllegalActionError(ValueError):
    """The action is well formed but not allowed here; the message says why."""
