"""A/B tests: a scrimmage row may be an A/B test (``kind``), with its sequential test's bounds
and where it stands.

Revision ID: 0008_ab
Revises: 0007_unfinished
"""

import sqlalchemy as sa
from alembic import op

revision = "0008_ab"
down_revision = "0007_unfinished"
branch_labels = None
depends_on = None

FLOATS = ("elo0", "elo1", "alpha", "beta", "llr")
INTEGERS = ("wins", "draws", "losses")


def upgrade() -> None:
    op.add_column("scrimmages", sa.Column("kind", sa.String(16), nullable=False,
                                          server_default="scrimmage"))
    for name in FLOATS:
        op.add_column("scrimmages", sa.Column(name, sa.Float, nullable=True))
    for name in INTEGERS:
        op.add_column("scrimmages", sa.Column(name, sa.Integer, nullable=True))
    op.add_column("scrimmages", sa.Column("verdict", sa.String(32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("scrimmages") as batch:  # SQLite rebuilds the table to drop one
        for name in ("kind", *FLOATS, *INTEGERS, "verdict"):
            batch.drop_column(name)
