"""The SQLite source's settings: the database, the tables to read, the column that numbers their rows.

No Kafka twin: modelled on Confluent's ``JdbcSourceConfig`` and ``JdbcSourceTaskConfig`` (the JDBC
         source connector's settings), in its ``mode=incrementing``.
Book:    chapter 8, 8.3
Differs: only ``mode=incrementing``, so there is no ``mode`` setting; ``table.whitelist`` is required
         (Confluent's reads every table without it).

The names and defaults are Confluent's. ``tables`` is set by the connector, not the user: each
task's share of ``table.whitelist``.
"""

from __future__ import annotations

from kafka_lite.common.config import ConfigDef, Importance, Range, Type

CONNECTION_URL_CONFIG = "connection.url"
TABLE_WHITELIST_CONFIG = "table.whitelist"
INCREMENTING_COLUMN_NAME_CONFIG = "incrementing.column.name"
TOPIC_PREFIX_CONFIG = "topic.prefix"
POLL_INTERVAL_MS_CONFIG = "poll.interval.ms"
BATCH_MAX_ROWS_CONFIG = "batch.max.rows"
TABLES_CONFIG = "tables"  # the task's tables, as the connector assigns them


def _config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(CONNECTION_URL_CONFIG, Type.STRING, importance=Importance.HIGH,
                doc="The SQLite database: a file path, sqlite:///path or jdbc:sqlite:path.")
        .define(TABLE_WHITELIST_CONFIG, Type.LIST, importance=Importance.HIGH,
                doc="The tables to read, comma separated.")
        .define(INCREMENTING_COLUMN_NAME_CONFIG, Type.STRING, "id", importance=Importance.MEDIUM,
                doc="A strictly increasing integer column of each table: a row is new when its value is "
                    "larger than the last one read.")
        .define(TOPIC_PREFIX_CONFIG, Type.STRING, importance=Importance.HIGH,
                doc="Prepended to a table's name to make the topic its rows go to.")
        .define(POLL_INTERVAL_MS_CONFIG, Type.INT, 5000, Range.at_least(0), importance=Importance.HIGH,
                doc="How long poll waits for new rows when there were none.")
        .define(BATCH_MAX_ROWS_CONFIG, Type.INT, 100, Range.at_least(1), importance=Importance.LOW,
                doc="At most this many rows of a table per poll.")
    )  # fmt: skip


CONFIG_DEF = _config_def()
# A task's settings are the connector's and its share of the tables (Confluent's JdbcSourceTaskConfig).
TASK_CONFIG_DEF = _config_def().define(
    TABLES_CONFIG, Type.LIST, importance=Importance.HIGH, doc="The tables this task reads."
)
