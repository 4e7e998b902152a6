"""The SQLite source connector: new rows of SQLite tables written to Kafka topics, a topic per table.

No Kafka twin: it plays the part of Confluent's JDBC source connector (``JdbcSourceConnector``, not
         part of Apache Kafka) in ``mode=incrementing``; Kafka's own example source is
         ``FileStreamSourceConnector``.
Book:    chapter 8, 8.3
Differs: the tables are read from ``table.whitelist`` once, at start; Confluent's connector watches
         the database for new tables and asks for new task configs when they appear.

A table is a source partition: a stream of rows with its own offset. So the connector splits the
tables among at most ``tasks.max`` tasks (Kafka's ``ConnectorUtils.groupPartitions``: contiguous
groups, as even as they can be), and a table is read by one task only.
"""

from __future__ import annotations

from kafka_lite.common.config import ConfigDef
from kafka_lite.connect.source.source_connector import SourceConnector
from kafka_lite.connect.sqlite.sqlite_source_config import CONFIG_DEF, TABLE_WHITELIST_CONFIG, TABLES_CONFIG
from kafka_lite.connect.sqlite.sqlite_source_task import SqliteSourceTask


class SqliteSourceConnector(SourceConnector):
    def __init__(self) -> None:
        super().__init__()
        self.config_props: dict[str, str] = {}
        self.tables: list[str] = []

    def version(self) -> str:
        return "0.10.1.0"

    def start(self, props: dict[str, str]) -> None:
        self.tables = CONFIG_DEF.parse(props, allow_unknown=True)[TABLE_WHITELIST_CONFIG]
        self.config_props = dict(props)

    def task_class(self) -> type:
        return SqliteSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self.config_props, TABLES_CONFIG: ",".join(group)}
                for group in group_partitions(self.tables, max_tasks)]  # fmt: skip

    def stop(self) -> None:
        pass  # the tasks hold the connections

    def config(self) -> ConfigDef:
        return CONFIG_DEF


def group_partitions(elements: list[str], num_groups: int) -> list[list[str]]:
    """``elements`` in at most ``num_groups`` contiguous groups whose sizes differ by at most one
    (Kafka's ``ConnectorUtils.groupPartitions``, without its empty groups)."""
    num_groups = min(num_groups, len(elements))
    per_group, leftover = divmod(len(elements), num_groups) if num_groups else (0, 0)
    groups, start = [], 0
    for group in range(num_groups):
        size = per_group + (1 if group < leftover else 0)
        groups.append(elements[start : start + size])
        start += size
    return groups
