"""People's games in the browser: one row a game, its record once it is over.

Revision ID: 0009_human
Revises: 0008_ab
"""

import sqlalchemy as sa
from alembic import op

revision = "0009_human"
down_revision = "0008_ab"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "human_games",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("person", sa.String(100), nullable=False, index=True),
        sa.Column("variant", sa.String(60), nullable=False),
        sa.Column("seat", sa.Integer, nullable=False),
        *(sa.Column(f"name_{i}", sa.String(240), nullable=False) for i in range(4)),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("match_id", sa.String(120), nullable=False, unique=True),
        sa.Column("record", sa.LargeBinary),
        sa.Column("logs", sa.LargeBinary),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("ended_at", sa.Float),
    )


def downgrade() -> None:
    op.drop_table("human_games")
