"""SQLite connectors: a sink that writes records into tables, a source that reads new rows of tables.

No Kafka twin: they play the part of Confluent's JDBC connectors (not part of Apache Kafka), on SQLite.
Book:    chapter 8, 8.3
"""
