"""What the SQLite connectors need to know about SQLite: its URLs, its types, and the SQL they run.

No Kafka twin: modelled on Confluent's ``SqliteDatabaseDialect`` and ``DbStructure`` (the JDBC
         connector's SQLite dialect and its table creation), which are not part of Apache Kafka.
Book:    chapter 8, 8.3
Differs: one dialect, no JDBC: Python's ``sqlite3`` module speaks to the database file directly.
Labs:    lab 15, stage 1 (``column_type``)

A Connect schema and a SQLite table describe the same row twice, and this module translates. Going
in (the sink), each field's ``Schema.Type`` picks a column type, and an optional field a column
that may be NULL::

    INT8, INT16, INT32, INT64, BOOLEAN -> INTEGER      FLOAT32, FLOAT64 -> REAL
    STRING -> TEXT                                     BYTES -> BLOB

SQLite stores every integer in up to 8 bytes, so all of Connect's integer widths fit one column type,
and it has no boolean: a BOOLEAN is 0 or 1. Arrays, maps and nested structs have no column type
and are refused, as Confluent's JDBC sink refuses them. Going out (the source), a column's
declared type gives its *affinity* by SQLite's own rules (a type containing ``INT`` is INTEGER,
one containing ``CHAR``, ``CLOB`` or ``TEXT`` is TEXT, and so on), and the affinity a Connect
type. Identifiers are always quoted, so a topic named ``page-views`` is a valid table name.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from kafka_lite.connect.data.schema import Schema, SchemaBuilder, Type
from kafka_lite.connect.errors import ConnectException, DataException

# The columns that make a row's key when ``pk.mode=kafka``: where its record was in Kafka
# (Confluent's defaults for ``pk.fields`` in that mode).
KAFKA_PK_COLUMNS = ("__connect_topic", "__connect_partition", "__connect_offset")
URL_PREFIXES = ("sqlite:///", "jdbc:sqlite:")


def database_path(url: str) -> str:
    """The file a ``connection.url`` names: a path, ``jdbc:sqlite:path`` (the JDBC driver's URL) or
    ``sqlite:///path`` (SQLAlchemy's: ``sqlite:///out.db`` is relative, ``sqlite:////tmp/out.db`` absolute)."""
    for prefix in URL_PREFIXES:
        if url.startswith(prefix):
            return url[len(prefix) :]
    if "://" in url:
        raise ConnectException(
            f"connection.url {url!r} is not a SQLite database: give a file path, "
            "sqlite:///path or jdbc:sqlite:path"
        )
    return url


def connect(url: str) -> sqlite3.Connection:
    """A connection in which the caller says where transactions begin and end (``BEGIN``, ``COMMIT``):
    ``sqlite3`` otherwise opens them behind the caller's back, before the first INSERT."""
    return sqlite3.connect(database_path(url), isolation_level=None)


def quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def column_type(schema: Schema) -> str:
    """The SQLite column type for a field of ``schema``; DataException for a type without one."""
    # BEGIN SOLUTION
    if schema.type in (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.BOOLEAN):
        return "INTEGER"
    if schema.type in (Type.FLOAT32, Type.FLOAT64):
        return "REAL"
    if schema.type is Type.STRING:
        return "TEXT"
    if schema.type is Type.BYTES:
        return "BLOB"
    raise DataException(f"No SQLite column type for a field of type {schema.type.name}")
    # END SOLUTION


def create_table_sql(table: str, schema: Schema, pk_columns: Sequence[str]) -> str:
    """``CREATE TABLE`` with a column for each field of the struct ``schema``, then the key columns."""
    columns = []
    for field in schema.fields():
        null = "NULL" if field.schema.optional else "NOT NULL"
        columns.append(f"{quote(field.name)} {column_type(field.schema)} {null}")
    if pk_columns:
        kinds = {"__connect_topic": "TEXT", "__connect_partition": "INTEGER", "__connect_offset": "INTEGER"}
        columns += [f"{quote(c)} {kinds[c]} NOT NULL" for c in pk_columns]
        columns.append(f"PRIMARY KEY({', '.join(quote(c) for c in pk_columns)})")
    return f"CREATE TABLE {quote(table)} (\n  " + ",\n  ".join(columns) + "\n)"


def insert_sql(table: str, columns: Sequence[str], upsert: bool) -> str:
    """An INSERT of one row into ``columns``; with ``upsert``, a row of the same key is replaced
    (SQLite's ``INSERT OR REPLACE``, which Confluent's SQLite dialect uses for ``insert.mode=upsert``)."""
    verb = "INSERT OR REPLACE INTO" if upsert else "INSERT INTO"
    names = ", ".join(quote(c) for c in columns)
    return f"{verb} {quote(table)} ({names}) VALUES ({', '.join('?' for _ in columns)})"


def table_columns(connection: sqlite3.Connection, table: str) -> list[tuple[str, str, bool]]:
    """``(name, declared type, nullable)`` of each column of ``table``, in order; [] if there is no such table."""
    rows = connection.execute(f"PRAGMA table_info({quote(table)})").fetchall()
    # table_info's rows: (cid, name, type, notnull, dflt_value, pk)
    return [(name, declared, not notnull) for _, name, declared, notnull, _, _ in rows]


def connect_type(table: str, column: str, declared: str) -> Type:
    """The Connect type of a column, from its declared type's affinity (SQLite's rules, in its order)."""
    upper = declared.upper()
    if "INT" in upper:
        return Type.INT64
    if any(s in upper for s in ("CHAR", "CLOB", "TEXT")):
        return Type.STRING
    if "BLOB" in upper or not upper:
        return Type.BYTES
    if any(s in upper for s in ("REAL", "FLOA", "DOUB")):
        return Type.FLOAT64
    raise DataException(
        f"Column {column} of table {table} is declared {declared}, which has NUMERIC affinity: its values "
        "may be integers or reals, so no one Connect type fits; declare it INTEGER, REAL, TEXT or BLOB"
    )


def table_schema(table: str, columns: Sequence[tuple[str, str, bool]]) -> Schema:
    """The struct schema of a row of ``table``, named after the table (as Confluent's source names it)."""
    builder = SchemaBuilder.struct().name(table)
    for name, declared, nullable in columns:
        field = SchemaBuilder(connect_type(table, name, declared))
        builder.field(name, (field.optional() if nullable else field).build())
    return builder.build()
