"""Small pieces of Java that Kafka's behaviour depends on, so that kafka_lite computes the same numbers.

No Kafka twin: these are ``java.lang.String.hashCode`` and ``org.apache.kafka.common.utils.Utils.abs``,
which Kafka uses wherever a name is spread over buckets (the replica fetcher a partition goes to, and
the ``__consumer_offsets`` partition of a group), and ``java.lang.Long.MAX_VALUE``, Kafka's "no
limit" for a time, a timeout or a count, beside ``Integer.MAX_VALUE``, the most an int32 holds.
"""

from __future__ import annotations

LONG_MAX = 2**63 - 1  # Java's Long.MAX_VALUE
INT32_MAX = 2**31 - 1  # Java's Integer.MAX_VALUE: the largest int32 a field or a config can hold


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode``: over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    utf16 = s.encode("utf-16-be")
    for i in range(0, len(utf16), 2):
        h = (31 * h + int.from_bytes(utf16[i : i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def abs_int(n: int) -> int:
    """Kafka's ``Utils.abs`` of the Java int ``n``: ``Math.abs(n)``, except 0 for Integer.MIN_VALUE
    (whose ``Math.abs`` is itself, still negative).

    ``n`` is first wrapped to a signed 32-bit int, as Java's int arithmetic would have wrapped it
    (``31 * topic.hashCode() + partition`` overflows in Java). This is not ``Utils.toPositive``
    (``n & 0x7fffffff``, the producer's partitioner): for -1 that gives 2147483647, ``abs`` gives 1.
    """
    n = (n + (1 << 31)) % (1 << 32) - (1 << 31)
    return 0 if n == -(1 << 31) else abs(n)
