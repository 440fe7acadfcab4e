"""The store as it was before migrations: seasons, their secrets and cancels, bots, matches,
results, records and attempts.

A store made before migrations existed is adopted: each of these tables it has must have these
columns, and the ones it lacks (``season_secrets``, ``season_cancels``, in stores older than
them) are created.

Revision ID: 0001_baseline
Revises:
"""

import sqlalchemy as sa
from alembic import op

from scheduler.migrations import StoreVersionError

revision = "0001_baseline"
down_revision = None
branch_labels = None
depends_on = None


def _tables() -> list[tuple[str, list, list[tuple[str, list[str]]]]]:
    """(table, columns and constraints, indexes) in the order they are created."""
    return [
        ("seasons", [
            sa.Column("name", sa.String(100), primary_key=True),
            sa.Column("config_json", sa.Text, nullable=False),
            sa.Column("config_hash", sa.String(32), nullable=False),
            sa.Column("file", sa.Text),
            sa.Column("created_at", sa.Float, nullable=False),
        ], []),
        ("season_secrets", [
            sa.Column("season", sa.String(100), sa.ForeignKey("seasons.name"),
                      primary_key=True),
            sa.Column("secret", sa.String(200), nullable=False),
            sa.Column("given", sa.Boolean, nullable=False),
        ], []),
        ("season_cancels", [
            sa.Column("season", sa.String(100), sa.ForeignKey("seasons.name"),
                      primary_key=True),
            sa.Column("cancelled_at", sa.Float, nullable=False),
            sa.Column("by", sa.String(200)),
        ], []),
        ("bots", [
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("season", sa.String(100), sa.ForeignKey("seasons.name"), nullable=False),
            sa.Column("name", sa.String(100), nullable=False),
            sa.Column("version", sa.String(100), nullable=False),
            sa.Column("content_hash", sa.String(64), nullable=False),
            sa.Column("manifest_json", sa.Text, nullable=False),
            sa.Column("checked_hash", sa.String(64)),
            sa.UniqueConstraint("season", "name"),
        ], []),
        ("matches", [
            sa.Column("id", sa.String(120), primary_key=True),
            sa.Column("season", sa.String(100), sa.ForeignKey("seasons.name"), nullable=False),
            sa.Column("ordinal", sa.Integer, nullable=False),
            sa.Column("pairing", sa.String(210), nullable=False),
            sa.Column("cluster", sa.String(240), nullable=False),
            sa.Column("mirror", sa.Boolean, nullable=False),
            sa.Column("seats_json", sa.Text, nullable=False),
            sa.Column("spec_json", sa.Text, nullable=False),
            sa.Column("status", sa.String(16), nullable=False),
            sa.Column("attempts", sa.Integer, nullable=False),
            sa.Column("lease_owner", sa.String(200)),
            sa.Column("lease_until", sa.Float),
            sa.Column("enqueued_at", sa.Float),
            sa.Column("started_at", sa.Float),
            sa.Column("finished_at", sa.Float),
            sa.Column("error", sa.Text),
        ], [("ix_matches_season", ["season"]), ("ix_matches_status", ["status"])]),
        ("results", [
            sa.Column("match_id", sa.String(120), sa.ForeignKey("matches.id"),
                      primary_key=True),
            sa.Column("season", sa.String(100), nullable=False),
            sa.Column("result_json", sa.Text, nullable=False),
            sa.Column("summary_json", sa.Text, nullable=False),
            sa.Column("duration_s", sa.Float, nullable=False),
            sa.Column("worker", sa.String(200)),
            sa.Column("written_at", sa.Float, nullable=False),
        ], [("ix_results_season", ["season"])]),
        ("records", [
            sa.Column("match_id", sa.String(120), sa.ForeignKey("matches.id"),
                      primary_key=True),
            sa.Column("data", sa.LargeBinary, nullable=False),
        ], []),
        ("attempts", [
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("match_id", sa.String(120), sa.ForeignKey("matches.id"), nullable=False),
            sa.Column("season", sa.String(100), nullable=False),
            sa.Column("attempt", sa.Integer, nullable=False),
            sa.Column("worker", sa.String(200)),
            sa.Column("started_at", sa.Float, nullable=False),
            sa.Column("ended_at", sa.Float),
            sa.Column("outcome", sa.String(16), nullable=False),
            sa.Column("reason", sa.Text),
        ], [("ix_attempts_match_id", ["match_id"]), ("ix_attempts_season", ["season"])]),
    ]


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    there = set(inspector.get_table_names())
    for name, parts, indexes in _tables():
        if name in there:  # a store made before migrations: adopted as it is
            want = {p.name for p in parts if isinstance(p, sa.Column)}
            have = {c["name"] for c in inspector.get_columns(name)}
            if have != want:
                missing, extra = sorted(want - have), sorted(have - want)
                raise StoreVersionError(
                    f"table {name!r} is not the one of a store made before migrations "
                    f"(missing columns {missing}, unknown columns {extra}); it cannot be "
                    "adopted")
            continue
        op.create_table(name, *parts)
        for index, columns in indexes:
            op.create_index(index, name, columns)


def downgrade() -> None:
    for name, _, indexes in reversed(_tables()):
        for index, _ in indexes:
            op.drop_index(index, table_name=name)
        op.drop_table(name)
