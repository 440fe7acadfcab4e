"""The bot registry: immutable bot versions that any worker can fetch and run.

A version is a bot's folder stored under ``name@version`` as a canonical tar (``packing``):
entries sorted by path, every time and owner zeroed, modes normalised, without
``node_modules``, ``build``, ``__pycache__`` and ``.git``. Its content hash (the tar's sha256)
names the bytes: a season pins it (``bots.version_hash``), a worker fetches it. A version never
changes (``submissions``): the same name@version with other content is refused; the same
content under another version shares the archive. A name belongs to its first version's author
(``owners``: names, lookalikes, authors and their tokens).

Archives are blobs in the store (``LargeBinary``: bytea on PostgreSQL, BLOB on SQLite), not
PostgreSQL large objects: a version's row and its archive are written in the same transaction
as everything else, the same code runs on both databases, and an archive is bounded by the size
limit (64 MiB uncompressed by default, ``ARENA_BOT_SIZE_LIMIT`` in bytes), well within a column.
An archive submitted is read within bounds (``archives``).

A worker keeps fetched versions in a local cache (``cache``), verified on every fetch; a
version whose manifest says how to build it is built from its fetched folder into a place of
its own (``versions``: materialised where it plays).

Each module exports its own names; import a name from the module that defines it.
"""
