"""One value in the record cache, with the record context of the update that wrote it.

Mirrors: org.apache.kafka.streams.state.internals.LRUCacheEntry
         (streams/src/main/java/.../state/internals/LRUCacheEntry.java, Kafka 0.10.1)
Book:    chapter 9, 9.1.4 (the record cache, KIP-63)

An entry is *dirty* when a processor put it and the store under the cache has not seen it yet; a
*clean* entry was read from that store (a cache miss fills the cache) or has been flushed. A dirty
entry keeps the offset, timestamp, partition and topic of the record being processed when it was
put: when the cache later flushes it, the forwarded record carries that context (its timestamp is
the one the sink writes), not the context of whatever record happens to be in hand at the flush.

``size`` is Kafka's estimate of what the entry costs, counted against ``cache.max.bytes.buffering``:
the value's bytes plus its fixed fields (a flag, two longs, an int) and the topic's characters.
"""

from __future__ import annotations

from kafka_lite.streams.processor.internals.processor_record_context import ProcessorRecordContext

# isDirty (1) + timestamp (8) + offset (8) + partition (4), as LRUCacheEntry counts them.
_FIXED_SIZE = 1 + 8 + 8 + 4


class LRUCacheEntry:
    """A cached value (None: a delete waiting to be flushed) and the context it was put in."""

    __slots__ = ("_size", "is_dirty", "record_context", "value")

    def __init__(
        self,
        value: bytes | None,
        is_dirty: bool = False,
        offset: int = -1,
        timestamp: int = -1,
        partition: int = -1,
        topic: str = "",
    ) -> None:
        self.value = value
        self.is_dirty = is_dirty
        # Kafka's entry *is* a RecordContext; here it holds one, the type the task sets in its context.
        self.record_context = ProcessorRecordContext(timestamp, offset, partition, topic)
        self._size = (0 if value is None else len(value)) + _FIXED_SIZE + len(topic or "")

    def mark_clean(self) -> None:
        self.is_dirty = False

    def size(self) -> int:
        return self._size

    def __repr__(self) -> str:
        dirty = "dirty" if self.is_dirty else "clean"
        return f"LRUCacheEntry({self.value!r}, {dirty}, offset={self.record_context.offset})"
