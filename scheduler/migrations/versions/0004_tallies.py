"""What the standings count of a result, in columns of its own (``scheduler.stats.scores.
match_tally``): a large season's standings and its bot-fault filter read these narrow numbers
instead of every stored summary. A result written before them keeps them null and is counted
from its summary.

Revision ID: 0004_tallies
Revises: 0003_scores
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_tallies"
down_revision = "0003_scores"
branch_labels = None
depends_on = None

COLUMNS = (("deal_count", sa.Integer), ("score_0", sa.Float), ("score_1", sa.Float),
           ("net_0", sa.Integer), ("net_1", sa.Integer), ("forfeit_team", sa.Integer),
           ("strikes_0", sa.Integer), ("strikes_1", sa.Integer), ("faults", sa.Integer),
           ("gain_0", sa.Integer), ("gain_1", sa.Integer), ("attacks_0", sa.Integer),
           ("attack_points_0", sa.Integer), ("attacks_1", sa.Integer),
           ("attack_points_1", sa.Integer), ("match_points_json", sa.Text))


def upgrade() -> None:
    for name, kind in COLUMNS:
        op.add_column("results", sa.Column(name, kind, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("results") as batch:  # SQLite rebuilds the table to drop a column
        for name, _ in reversed(COLUMNS):
            batch.drop_column(name)
