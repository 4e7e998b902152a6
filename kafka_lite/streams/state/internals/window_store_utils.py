"""The key a window store keeps: the serialized key, then the timestamp, then a sequence number.

Mirrors: org.apache.kafka.streams.state.internals.WindowStoreUtils and WindowKeySchema's ranges
         (streams/src/main/java/.../state/internals/, Kafka 0.11.0)
Book:    chapter 9, 9.1.4

::

    | serialized key (n bytes) | timestamp (int64, big-endian) | seqnum (int32, big-endian) |

RocksDB sorts these bytes, so one key's entries lie together in timestamp order, and a fetch of
``key`` between two times is one seek to ``key + from + 0`` and a scan to ``key + to + MAX_INT``.
The sequence number is 0 unless the store retains duplicates (a stream-stream join keeps every
record, and two records of one key may share a timestamp): then each put counts it up, so the
second record gets a key of its own instead of overwriting the first.

The scan may also meet other keys: ``b"a"`` + a timestamp can sort between ``b"a\\x00..."`` and
its neighbours, since keys have no fixed length. So each entry found is checked: its key part must
be the key asked for and its time within the range (``WindowKeySchema.hasNextCondition``).
"""

from __future__ import annotations

import struct

TIMESTAMP_SIZE = 8
SEQNUM_SIZE = 4
SUFFIX_SIZE = TIMESTAMP_SIZE + SEQNUM_SIZE
INT_MAX = 0x7FFFFFFF
_SUFFIX = struct.Struct(">qi")


def to_binary_key(serialized_key: bytes, timestamp: int, seqnum: int) -> bytes:
    return serialized_key + _SUFFIX.pack(timestamp, seqnum)


def key_from_binary_key(binary_key: bytes) -> bytes:
    return binary_key[:-SUFFIX_SIZE]


def timestamp_from_binary_key(binary_key: bytes) -> int:
    return _SUFFIX.unpack_from(binary_key, len(binary_key) - SUFFIX_SIZE)[0]


def lower_range_fixed_size(key: bytes, time_from: int) -> bytes:
    """The first binary key ``key`` can have at ``time_from`` or later."""
    return to_binary_key(key, max(0, time_from), 0)


def upper_range_fixed_size(key: bytes, time_to: int) -> bytes:
    """The last binary key ``key`` can have at ``time_to`` or earlier."""
    return to_binary_key(key, time_to, INT_MAX)
