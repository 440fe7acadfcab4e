"""What a bot's folder leaves out wherever it is in it: the folders a build or a tool makes.
Standard library only (the participant's client carries it)."""

BUILD_OUTPUT = frozenset({"build", "target", "out", "node_modules", "__pycache__", ".git"})
"""Folders a bot's content hash and its registry archive leave out, wherever they are in its
folder: what a build or a tool makes (``build/``, Cargo's and Maven's ``target/``, Gradle's
``out/``, npm's ``node_modules/``, Python's ``__pycache__/``) and Git's ``.git/``. A bot with a
build step gets them back from its build; a bot without one must not keep its program there."""
