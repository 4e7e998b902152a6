"""Which partition a record goes to: a hash of its key, or turns over the available partitions.

Mirrors: org.apache.kafka.clients.producer.internals.DefaultPartitioner and
         org.apache.kafka.common.utils.Utils.murmur2 / toPositive (clients/src/main/java/.../producer/
         internals/DefaultPartitioner.java and .../common/utils/Utils.java, Kafka 0.11.0)
Book:    chapter 2, 2.1.1 (choosing the partition in send)

A keyed record goes to ``toPositive(murmur2(key)) % numPartitions``: the same key always lands on
the same partition (while the partition count stays the same), which is what gives Kafka per-key
order. The hash must be bit-for-bit Java's, so that a Python producer and a Java (or librdkafka
``murmur2_random``) producer writing the same key agree on its partition. Java's ``int`` arithmetic
wraps at 32 bits and ``>>>`` shifts in zeros; here every step is masked to 32 unsigned bits and the
result is turned back into a signed int at the end.

A record without a key goes round-robin: one counter per topic, starting at a random value, taken
modulo the partitions that have a leader right now, so null-keyed records never wait for a
partition that cannot take them.
"""

from __future__ import annotations

import itertools
import random
import threading
from collections.abc import Callable

from kafka_lite.clients.metadata import Cluster

_MASK32 = 0xFFFFFFFF
_SEED = 0x9747B28C
# 'm' and 'r' are the mixing constants of Austin Appleby's MurmurHash2.
_M = 0x5BD1E995
_R = 24


def murmur2(data: bytes | bytearray | memoryview) -> int:
    """Kafka's 32-bit murmur2 of ``data``, as the signed int Java's ``Utils.murmur2`` returns."""
    length = len(data)
    h = (_SEED ^ length) & _MASK32
    length4 = length // 4
    for i in range(length4):
        i4 = i * 4
        k = data[i4] | (data[i4 + 1] << 8) | (data[i4 + 2] << 16) | (data[i4 + 3] << 24)
        k = (k * _M) & _MASK32
        k ^= k >> _R
        k = (k * _M) & _MASK32
        h = (h * _M) & _MASK32
        h ^= k
    # The last one to three bytes; Java's switch falls through from case 3 to case 1.
    tail = length & ~3
    extra = length % 4
    if extra == 3:
        h ^= data[tail + 2] << 16
    if extra >= 2:
        h ^= data[tail + 1] << 8
    if extra >= 1:
        h ^= data[tail]
        h = (h * _M) & _MASK32
    h ^= h >> 13
    h = (h * _M) & _MASK32
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def to_positive(number: int) -> int:
    """Java's ``Utils.toPositive``: clear the sign bit (not ``abs``, which fails for ``MIN_VALUE``)."""
    return number & 0x7FFFFFFF


class DefaultPartitioner:
    """Kafka's default ``Partitioner``: murmur2 of the key, else round-robin over available partitions."""

    def __init__(self, random_start: Callable[[], int] | None = None) -> None:
        # Each topic's counter starts at a random int (Kafka's ThreadLocalRandom.nextInt), so many
        # producers started together do not all begin on partition 0. Tests pass a fixed start.
        self._random_start = random_start or (lambda: random.randint(-(2**31), 2**31 - 1))
        self._topic_counter_map: dict[str, itertools.count] = {}
        self._lock = threading.Lock()

    def partition(
        self,
        topic: str,
        key: object,
        key_bytes: bytes | None,
        value: object,
        value_bytes: bytes | None,
        cluster: Cluster,
    ) -> int:
        """The partition for this record: ``to_positive(murmur2(key_bytes)) % partitions`` for a key;
        else the topic's next counter value over the partitions with a leader (over all of them when
        none has one). ``key`` and ``value`` are the unserialized objects, unused here (Kafka's
        interface passes them for partitioners that look inside a record)."""
        # BEGIN SOLUTION
        if key_bytes is None:
            next_value = to_positive(self._next_value(topic))
            available = cluster.available_partitions_for_topic(topic)
            if available:
                return available[next_value % len(available)].partition
            # No partition has a leader: hand out one anyway; the accumulator holds it until one does.
            return next_value % len(cluster.partitions_for_topic(topic))
        # A keyed record goes to its key's partition even while that partition has no leader: moving
        # the key elsewhere would break its order.
        return to_positive(murmur2(key_bytes)) % len(cluster.partitions_for_topic(topic))
        # END SOLUTION

    def _next_value(self, topic: str) -> int:
        counter = self._topic_counter_map.get(topic)
        if counter is None:
            with self._lock:
                counter = self._topic_counter_map.setdefault(topic, itertools.count(self._random_start()))
        # Java's AtomicInteger wraps at 32 bits; to_positive of the unbounded count gives the same
        # partition sequence, because both keep the low 31 bits.
        return next(counter)  # itertools.count's next() is atomic under the GIL

    def close(self) -> None:
        """Kafka's ``Partitioner.close``; the default partitioner holds nothing to release."""
