"""The bot registry: bot versions, their archives, authors, and the version a season's bot is.

Revision ID: 0002_registry
Revises: 0001_baseline
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_registry"
down_revision = "0001_baseline"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "bot_versions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("version", sa.String(100), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("author", sa.String(100), nullable=True),
        sa.Column("protocol", sa.String(16), nullable=False),
        sa.Column("language", sa.String(40), nullable=True),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("files", sa.Integer, nullable=False),
        sa.Column("manifest_json", sa.Text, nullable=False),
        sa.Column("submitted_at", sa.Float, nullable=False),
        sa.UniqueConstraint("name", "version", name="uq_bot_versions_name_version"),
    )
    op.create_index("ix_bot_versions_content_hash", "bot_versions", ["content_hash"])
    op.create_table(
        "bot_archives",
        sa.Column("content_hash", sa.String(64), primary_key=True),
        sa.Column("data", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "authors",
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.add_column("bots", sa.Column("version_hash", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bots") as batch:  # SQLite rebuilds the table to drop a column
        batch.drop_column("version_hash")
    op.drop_table("authors")
    op.drop_table("bot_archives")
    op.drop_index("ix_bot_versions_content_hash", table_name="bot_versions")
    op.drop_table("bot_versions")
