"""``arena web``: a read-only dashboard over the results store (pages and a JSON API)."""
