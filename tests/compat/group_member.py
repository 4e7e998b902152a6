"""A kafka_lite consumer group member in a process of its own, for tests that SIGKILL a member: killed,
it sends no LeaveGroup, and the coordinator removes it only when its session expires.

It subscribes to one topic and polls until killed, committing synchronously after every poll that
returned records. It reports to a file, one JSON object a line, flushed at once so that what it
wrote before the kill is all there:

- ``{"assigned": [partitions], "generation": g}`` from its rebalance listener;
- ``{"records": [[partition, offset], ...]}`` after a poll, before the commit;
- ``{"committed": {partition: offset}}`` after a commit succeeds (the positions it committed).

Usage: ``python -m tests.compat.group_member BOOTSTRAP TOPIC GROUP CLIENT_ID REPORT_FILE``
"""

from __future__ import annotations

import json
import sys

from kafka_lite import KafkaConsumer
from kafka_lite.consumer import CommitFailedException
from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener

SESSION_TIMEOUT_MS = 3000  # short: the test waits for this member's session to expire


def main(bootstrap: str, topic: str, group: str, client_id: str, report_path: str) -> None:
    report = open(report_path, "a", buffering=1)  # line buffered: every line reaches the file

    def write(event: dict) -> None:
        report.write(json.dumps(event) + "\n")
        report.flush()

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        client_id=client_id,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=SESSION_TIMEOUT_MS,
        heartbeat_interval_ms=300,
        max_poll_interval_ms=20_000,
        request_timeout_ms=25_000,
        fetch_max_wait_ms=100,
    )

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, partitions) -> None:
            pass

        def on_partitions_assigned(self, partitions) -> None:
            generation = consumer.coordinator.generation()
            write({"assigned": sorted(p for _, p in partitions), "generation": generation.generation_id})

    consumer.subscribe([topic], listener=Listener())
    write({"started": client_id})
    while True:
        batches = consumer.poll(timeout_ms=100)
        read = [[r.partition, r.offset] for records in batches.values() for r in records]
        if not read:
            continue
        write({"records": read})
        positions = {tp: consumer.position(tp) for tp in consumer.assignment()}
        try:
            consumer.commit_sync(positions)
        except CommitFailedException:
            continue  # the group rebalanced; the next owner reads from the last commit
        write({"committed": {str(tp[1]): offset for tp, offset in positions.items()}})


if __name__ == "__main__":
    main(*sys.argv[1:])
