"""Errors the engine raises, each a ``ValueError``: input that cannot be read, an action the
rules do not allow now, a family that cannot be registered."""


class InvalidActionError(ValueError):
    """The action cannot be read: malformed card text, unknown action word, wrong shape."""


class IllegalActionError(ValueError):
    """The action is well formed but not allowed here; the message says why."""


class FamilyError(ValueError):
    """A game family that cannot be registered: a module named in ``ARENA_FAMILIES`` that cannot
    be imported or has no ``FAMILY``, or a family or variant id taken twice."""
