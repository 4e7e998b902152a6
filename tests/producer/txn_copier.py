"""A consume-transform-produce worker for tests/producer/test_transactions_crash.py, run in its own
process so the test can SIGKILL it: it copies every record of an input topic to an output topic,
upper-cased, one transaction per poll, with the consumed offsets sent to the same transaction.

    python -m tests.producer.txn_copier BOOTSTRAP INPUT OUTPUT PARTITIONS GROUP TRANSACTIONAL_ID [--pause]

It prints ``ready`` once ``init_transactions`` returned, ``in-transaction N`` once a transaction's
N records are written (flushed, not committed) and ``committed`` after each commit. With
``--pause`` it reads a line from stdin before each commit, so the test decides whether the
transaction commits (it writes a line) or dies open (it kills the process).
"""

from __future__ import annotations

import sys

from kafka_lite import KafkaConsumer, KafkaProducer
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata


def main(argv: list[str]) -> None:
    bootstrap, source, sink, partitions, group, transactional_id = argv[:6]
    pause = "--pause" in argv
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
        max_poll_records=7,
    )
    tps = [TopicPartition(source, p) for p in range(int(partitions))]
    consumer.assign(tps)
    producer = KafkaProducer(
        bootstrap_servers=bootstrap, transactional_id=transactional_id, max_block_ms=30_000
    )
    producer.init_transactions()
    print("ready", flush=True)
    while True:
        batch = consumer.poll(timeout_ms=200)
        if not batch:
            continue
        producer.begin_transaction()
        count = 0
        for tp, records in batch.items():
            for record in records:
                producer.send(sink, record.value.upper(), key=record.key, partition=tp.partition)
                count += 1
        offsets = {tp: OffsetAndMetadata(consumer.position(tp)) for tp in batch}
        producer.send_offsets_to_transaction(offsets, group)
        producer.flush()
        print(f"in-transaction {count}", flush=True)
        if pause and not sys.stdin.readline():
            return
        producer.commit_transaction()
        print("committed", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
