"""The SQLite sink's settings: where the database is, which table a topic goes to, what a row's key is.

No Kafka twin: modelled on Confluent's ``JdbcSinkConfig`` (the JDBC sink connector's settings).
Book:    chapter 8, 8.3
Differs: ``pk.mode`` is ``none`` or ``kafka`` (no ``record_key`` or ``record_value``), and it also
         picks the insert mode: ``kafka`` upserts, ``none`` inserts; no ``auto.evolve``.

The names and defaults are Confluent's, so a JDBC sink's properties file reads the same here. A
bad value is refused by ``ConfigDef.parse`` before the connector starts, with the setting's name.
"""

from __future__ import annotations

from kafka_lite.common.config import ConfigDef, Importance, Type, ValidString

CONNECTION_URL_CONFIG = "connection.url"
TABLE_NAME_FORMAT_CONFIG = "table.name.format"
TABLE_NAME_FORMAT_DEFAULT = "${topic}"
PK_MODE_CONFIG = "pk.mode"
AUTO_CREATE_CONFIG = "auto.create"

PK_MODE_NONE = "none"
PK_MODE_KAFKA = "kafka"

CONFIG_DEF = (
    ConfigDef()
    .define(CONNECTION_URL_CONFIG, Type.STRING, importance=Importance.HIGH,
            doc="The SQLite database: a file path, sqlite:///path or jdbc:sqlite:path.")
    .define(TABLE_NAME_FORMAT_CONFIG, Type.STRING, TABLE_NAME_FORMAT_DEFAULT, importance=Importance.MEDIUM,
            doc="The table a record goes to; ${topic} is replaced by the record's topic.")
    .define(PK_MODE_CONFIG, Type.STRING, PK_MODE_NONE, ValidString.in_(PK_MODE_NONE, PK_MODE_KAFKA),
            importance=Importance.HIGH,
            doc="none: rows have no key and are inserted; kafka: a row's key is its record's topic, "
                "partition and offset, and a redelivered record replaces its row.")
    .define(AUTO_CREATE_CONFIG, Type.BOOLEAN, False, importance=Importance.MEDIUM,
            doc="Create a missing table from the first record's value schema.")
)  # fmt: skip
