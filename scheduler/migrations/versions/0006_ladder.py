"""A ladder's entries (joined, retired) and its versions' rating history.

Revision ID: 0006_ladder
Revises: 0005_service
"""

import sqlalchemy as sa
from alembic import op

revision = "0006_ladder"
down_revision = "0005_service"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ladder_entries",
        sa.Column("season", sa.String(100), sa.ForeignKey("seasons.name"), primary_key=True),
        sa.Column("bot", sa.String(100), primary_key=True),
        sa.Column("author", sa.String(100)),
        sa.Column("joined_at", sa.Float, nullable=False),
        sa.Column("retired_at", sa.Float),
    )
    op.create_table(
        "ladder_ratings",
        sa.Column("season", sa.String(100), sa.ForeignKey("seasons.name"), primary_key=True),
        sa.Column("cluster", sa.String(240), primary_key=True),
        sa.Column("bot", sa.String(100), primary_key=True),
        sa.Column("pair_index", sa.Integer, nullable=False),
        sa.Column("mu", sa.Float, nullable=False),
        sa.Column("sigma", sa.Float, nullable=False),
        sa.Column("pairs", sa.Integer, nullable=False),
        sa.Column("at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("ladder_ratings")
    op.drop_table("ladder_entries")
