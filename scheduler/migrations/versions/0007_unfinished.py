"""The matches of a season by status: its unfinished ones (whether a record is sealed, what a
ladder has in play) found without a pass over its thousands of finished ones.

Revision ID: 0007_unfinished
Revises: 0006_ladder
"""

from alembic import op

revision = "0007_unfinished"
down_revision = "0006_ladder"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_matches_season_status", "matches", ["season", "status"])


def downgrade() -> None:
    op.drop_index("ix_matches_season_status", table_name="matches")
