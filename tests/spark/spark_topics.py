"""What the Spark source tests share: producing test topics, reading ranges with kafka_lite's own
consumer (the oracle every Spark read is checked against), and Spark rows in the same shape."""

from __future__ import annotations

from collections.abc import Iterable

from kafka_lite import KafkaConsumer, KafkaProducer

# One record as the oracle and the Spark rows both give it:
# (topic, partition, offset, key, value, timestamp in ms, timestampType, headers as (key, value) pairs)
Record = tuple


def produce(bootstrap_servers: str, topic: str, records: Iterable[tuple]) -> None:
    """Send ``(key, value, headers, partition)`` tuples and wait until every one is acknowledged."""
    # Small batches, so that topics with small segments roll them often.
    producer = KafkaProducer(bootstrap_servers=bootstrap_servers, linger_ms=5, batch_size=300)
    try:
        futures = [
            producer.send(topic, value=value, key=key, headers=headers, partition=partition)
            for key, value, headers, partition in records
        ]
        producer.flush()
        for future in futures:
            future.get()
    finally:
        producer.close()


def consume(bootstrap_servers: str, ranges: dict[tuple[str, int], tuple[int, int]]) -> list[Record]:
    """Every record in ``{(topic, partition): (start, end)}`` ranges, read with kafka_lite's consumer."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap_servers, enable_auto_commit=False)
    try:
        consumer.assign(list(ranges))
        for tp, (start, _) in ranges.items():
            consumer.seek(tp, start)
        pending = {tp for tp, (start, end) in ranges.items() if end > start}
        records: list[Record] = []
        for _ in range(1000):
            if not pending:
                break
            for tp, batch in consumer.poll(timeout_ms=200).items():
                for r in batch:
                    if r.offset < ranges[tp][1]:
                        records.append(
                            (r.topic, r.partition, r.offset, r.key, r.value, r.timestamp, int(r.timestamp_type),
                             [(h.key, h.value) for h in r.headers])
                        )  # fmt: skip
            pending = {tp for tp in pending if consumer.position(tp) < ranges[tp][1]}
        assert not pending, f"the consumer did not reach the end of {sorted(pending)}"
        return sorted(records)
    finally:
        consumer.close()


def rows(df) -> list[Record]:
    """A Kafka-schema DataFrame's rows as the oracle's records (headers empty where not selected).
    Timestamps are compared as epoch milliseconds: a collected timestamp is a naive datetime in the
    driver's local zone."""
    from pyspark.sql import functions as F

    out = []
    for row in df.withColumn("ts_ms", F.unix_millis("timestamp")).collect():
        headers = [(h.key, _b(h.value)) for h in row.headers] if "headers" in row else []
        out.append(
            (
                row.topic,
                row.partition,
                row.offset,
                _b(row.key),
                _b(row.value),
                row.ts_ms,
                row.timestampType,
                headers,
            )
        )
    return sorted(out)


def _b(value) -> bytes | None:
    return None if value is None else bytes(value)


def read(spark, **options: str):
    """``spark.read.format("kafka_lite")`` with ``options`` (dotted names as keyword arguments via **)."""
    return spark.read.format("kafka_lite").options(**options).load()
