"""Finer scores: each result's continuous deal outcomes, and a duplicate pair's paired
difference beside its win/draw/loss (``scheduler/stats/power.py``).

Revision ID: 0003_scores
Revises: 0002_registry
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_scores"
down_revision = "0002_registry"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("results", sa.Column("deal_scores_json", sa.Text, nullable=True))
    op.create_table(
        "pair_scores",
        sa.Column("season", sa.String(100), sa.ForeignKey("seasons.name"), primary_key=True),
        sa.Column("cluster", sa.String(240), primary_key=True),
        sa.Column("bot_a", sa.String(100), nullable=False),
        sa.Column("bot_b", sa.String(100), nullable=False),
        sa.Column("deals", sa.Integer, nullable=False),
        sa.Column("score_a", sa.Float, nullable=False),
        sa.Column("diff_a", sa.Float, nullable=False),
        sa.Column("deal_diffs_json", sa.Text, nullable=False),
        sa.Column("written_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("pair_scores")
    with op.batch_alter_table("results") as batch:  # SQLite rebuilds the table to drop a column
        batch.drop_column("deal_scores_json")
