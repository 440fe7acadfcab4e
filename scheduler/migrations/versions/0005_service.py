"""The submission service: authors' roles and status, the states of versions the service took
in (built and checked by a worker), dashboard sessions, scrimmages, the audit log and the
events rate limits count.

Revision ID: 0005_service
Revises: 0004_tallies
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_service"
down_revision = "0004_tallies"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("authors", sa.Column("role", sa.String(16), nullable=False,
                                       server_default="author"))
    op.add_column("authors", sa.Column("status", sa.String(16), nullable=False,
                                       server_default="active"))
    op.add_column("authors", sa.Column("changed_at", sa.Float, nullable=True))
    op.create_table(
        "version_states",
        sa.Column("version_id", sa.Integer, sa.ForeignKey("bot_versions.id"), primary_key=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("build_log", sa.Text),
        sa.Column("claimed_by", sa.String(200)),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("sent_at", sa.Float),
        sa.Column("withdrawn_at", sa.Float),
    )
    op.create_table(
        "sessions",
        sa.Column("id_hash", sa.String(64), primary_key=True),
        sa.Column("author", sa.String(100), sa.ForeignKey("authors.name"), nullable=False),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
    )
    op.create_index("ix_sessions_author", "sessions", ["author"])
    op.create_table(
        "scrimmages",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("author", sa.String(100), nullable=False),
        sa.Column("bot", sa.String(210), nullable=False),
        sa.Column("opponent", sa.String(210), nullable=False),
        sa.Column("opponent_author", sa.String(100)),
        sa.Column("pairs", sa.Integer, nullable=False),
        sa.Column("variant", sa.String(60), nullable=False),
        sa.Column("season", sa.String(100), unique=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("sent_at", sa.Float),
    )
    op.create_index("ix_scrimmages_author", "scrimmages", ["author"])
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", sa.Float, nullable=False),
        sa.Column("actor", sa.String(100)),
        sa.Column("action", sa.String(40), nullable=False),
        sa.Column("subject", sa.String(250)),
        sa.Column("detail", sa.Text),
        sa.Column("address", sa.String(64)),
    )
    op.create_index("ix_audit_log_at", "audit_log", ["at"])
    op.create_table(
        "limit_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("at", sa.Float, nullable=False),
    )
    op.create_index("ix_limit_events_key", "limit_events", ["key"])


def downgrade() -> None:
    for table in ("limit_events", "audit_log", "scrimmages", "sessions", "version_states"):
        op.drop_table(table)
    with op.batch_alter_table("authors") as batch:
        for column in ("changed_at", "status", "role"):
            batch.drop_column(column)
