"""A consumer program written as for kafka-python: only its import line names kafka_lite.

No Kafka twin: the chapter 4 guide's poll loop, in kafka-python's idiom. Replace the import with
``from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition`` and it runs on kafka-python
unchanged; ``tests/consumer/test_order_totals_example.py`` runs it both ways against one broker.

Each record of the ``orders`` topic is a customer (the key) and an amount in cents (the value).
``order_totals`` adds them up per customer, committing after each partition's records are
handled (at least once: a crash before the commit hands the records out again).
"""

from __future__ import annotations

from kafka_lite.consumer import KafkaConsumer, OffsetAndMetadata, TopicPartition


def cents(value: bytes) -> int:
    return int(value.decode())


def order_totals(bootstrap_servers: str, topic: str, group_id: str, expected: int) -> dict[str, int]:
    """Read ``expected`` records of ``topic`` in group ``group_id``: each customer's total."""
    # --8<-- [start:poll_loop]
    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap_servers,
        group_id=group_id,
        auto_offset_reset="earliest",  # no committed offset yet: start at the log's beginning
        enable_auto_commit=False,  # commit by hand, after the records are handled
        key_deserializer=bytes.decode,
        value_deserializer=cents,
    )
    totals: dict[str, int] = {}
    seen = 0
    try:
        while seen < expected:
            records = consumer.poll(timeout_ms=1000, max_records=100)
            for tp, batch in records.items():
                for record in batch:
                    totals[record.key] = totals.get(record.key, 0) + record.value
                seen += len(batch)
                # The committed offset is the next one to read: one past the last record handled.
                consumer.commit({tp: OffsetAndMetadata(batch[-1].offset + 1, "", -1)})
    finally:
        consumer.close()
    # --8<-- [end:poll_loop]
    return totals


def reread(bootstrap_servers: str, topic: str, group_id: str) -> dict[str, object]:
    """What a second consumer of the group sees: committed offsets, then every record again."""
    # --8<-- [start:reread]
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap_servers,
        group_id=group_id,
        enable_auto_commit=False,
        consumer_timeout_ms=2000,  # iteration stops after 2 s without a record
    )
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    committed = consumer.committed(tp)  # an int, as kafka-python returns it
    with_metadata = consumer.committed(tp, metadata=True)  # the OffsetAndMetadata
    end = consumer.end_offsets([tp])[tp]
    consumer.seek_to_beginning(tp)  # the partitions named
    first = consumer.position(tp)
    consumer.seek(tp, end)
    consumer.seek_to_beginning()  # no partitions named: every assigned one
    offsets = [msg.offset for msg in consumer]  # for msg in consumer: until consumer_timeout_ms
    consumer.commit()  # the positions now held
    after = consumer.committed(tp)
    assignment = consumer.assignment()
    consumer.close()
    # --8<-- [end:reread]
    return {
        "committed": committed,
        "with_metadata": with_metadata,
        "end": end,
        "first": first,
        "offsets": offsets,
        "after": after,
        "assignment": assignment,
    }
