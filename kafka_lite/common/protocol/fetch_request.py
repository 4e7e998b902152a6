"""The body of a Fetch request, as each of its senders builds it: a consumer, a follower, a tool.

Mirrors: org.apache.kafka.common.requests.FetchRequest (its Builder's ``forConsumer`` and
         ``forReplica``) and kafka.api.Request's replica ids (Kafka 0.11.0)
Book:    chapter 4, 4.1.5 (the consumer's fetch); chapter 6, 6.2.2 (a follower's fetch)

One request names, per topic, each partition with the offset to read from and the most bytes to
return for it; ``replica_id`` says who asks, and so how far the leader lets it read: a consumer
(-1) up to the high watermark, a follower (its broker id) up to the log end offset, and Kafka's
*debugging consumer* (-2) as a consumer, but from any replica, the leader's or a follower's.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafka_lite.common.topic_partition import TopicPartition

FETCH_VERSION = 5  # Kafka 0.11's: the answer carries the log start offset too
CONSUMER_REPLICA_ID = -1  # a consumer's fetch
DEBUGGING_CONSUMER_ID = -2  # may read from a follower (Kafka's SimpleConsumerShell, the replica verifier)
READ_UNCOMMITTED = 0  # the isolation level without transactions
READ_COMMITTED = 1  # Kafka 0.11: only below the last stable offset, with the aborted transactions named


def fetch_request_body(
    replica_id: int,
    *,
    max_wait_ms: int,
    min_bytes: int,
    max_bytes: int,
    offsets: Mapping[TopicPartition, int],
    partition_max_bytes: int,
    isolation_level: int = READ_UNCOMMITTED,
    log_start_offsets: Mapping[TopicPartition, int] | None = None,
) -> dict:
    """A Fetch v5 body for ``offsets`` (each partition's fetch offset), grouped by topic in the order
    given: at most ``partition_max_bytes`` from each partition and ``max_bytes`` in all, waiting up
    to ``max_wait_ms`` for ``min_bytes``. A follower gives ``log_start_offsets``, its own log's, so the
    leader knows when a DeleteRecords is done on every replica (KIP-107); a consumer sends -1."""
    topics: dict[str, list[dict[str, int]]] = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append(
            {
                "partition": partition,
                "fetch_offset": offset,
                "log_start_offset": (log_start_offsets or {}).get((topic, partition), -1),
                "max_bytes": partition_max_bytes,
            }
        )
    return {
        "replica_id": replica_id,
        "max_wait_time": max_wait_ms,
        "min_bytes": min_bytes,
        "max_bytes": max_bytes,
        "isolation_level": isolation_level,
        "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
    }
