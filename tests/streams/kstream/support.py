"""Running a DSL topology in the test driver and reading back everything a topic received."""

from __future__ import annotations

from kafka_lite.streams.serialization import Serdes
from kafka_lite.streams.test_utils import TopologyTestDriver

APPLICATION_ID = "app"
STRING = Serdes.String()
LONG = Serdes.Long()


# The drivers a test made, closed after it (conftest.py): a driver left to the garbage collector
# removes its state directory while its stores may still hold files open there.
OPEN_DRIVERS: list[TopologyTestDriver] = []


def driver_for(builder, **config) -> TopologyTestDriver:
    """A driver for ``builder``, closed once the test ends; ``config`` adds settings, dotted names
    spelled with underscores (``cache_max_bytes_buffering=0``)."""
    settings = {name.replace("_", "."): value for name, value in config.items()}
    driver = TopologyTestDriver(builder, {"application.id": APPLICATION_ID, **settings})
    OPEN_DRIVERS.append(driver)
    return driver


def read_all(driver: TopologyTestDriver, topic: str, key_serde=STRING, value_serde=STRING) -> list[tuple]:
    """Every ``(key, value)`` written to ``topic`` since the last read, deserialized with the serdes."""
    records = []
    while (record := driver.read_output(topic)) is not None:
        key = None if record.key is None else key_serde.deserializer().deserialize(topic, record.key)
        value = None if record.value is None else value_serde.deserializer().deserialize(topic, record.value)
        records.append((key, value))
    return records


def pipe(
    driver: TopologyTestDriver, topic: str, key: str | None, value: str | None, timestamp: int = 0
) -> None:
    """Pipe one record with a UTF-8 key and value (None stays None)."""
    driver.pipe_input(
        topic, None if key is None else key.encode(), None if value is None else value.encode(), timestamp
    )
