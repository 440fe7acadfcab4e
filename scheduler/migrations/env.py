"""Alembic's environment: migrate the connection handed over in ``config.attributes``, or the
URL set as ``sqlalchemy.url`` (command-line use)."""

from alembic import context
from sqlalchemy import create_engine

connection = context.config.attributes.get("connection")
if context.is_offline_mode():
    context.configure(url=context.config.get_main_option("sqlalchemy.url"),
                      literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
elif connection is not None:
    context.configure(connection=connection)
    with context.begin_transaction():
        context.run_migrations()
else:
    url = context.config.get_main_option("sqlalchemy.url")
    assert url is not None, "no connection handed over and no sqlalchemy.url set"
    engine = create_engine(url)
    with engine.connect() as conn:
        context.configure(connection=conn)
        with context.begin_transaction():
            context.run_migrations()
        conn.commit()
