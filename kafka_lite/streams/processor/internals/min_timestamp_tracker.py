"""The smallest timestamp among the records a queue holds, in O(1) per added or removed record.

Mirrors: org.apache.kafka.streams.processor.internals.TimestampTracker and MinTimestampTracker
         (streams/src/main/java/org/apache/kafka/streams/processor/internals/, Kafka 0.10.1)
Book:    chapter 9, 9.1.3 (a partition's time is its buffered records' minimum timestamp)

Records leave a queue in arrival order (first in, first out), but their timestamps are out of
order. The tracker keeps only the records that could still become the minimum: a strictly
increasing run, from the oldest such record to the newest. A new record removes every kept record
whose timestamp is not smaller than its own (while the newer record is buffered, those can never
be the minimum again), then joins the end. Removing the oldest buffered record removes it from the
front if it is there. The minimum is then the front of the run.

    arrivals 5, 3, 8, 4    kept after each: [5] -> [3] -> [3, 8] -> [3, 4]     min = 3
    poll 5, then 3         kept: [3, 4] -> [4]                                   min = 4

When the queue empties, the tracker remembers the last removed timestamp (``last_known_time``),
so a partition that is drained between two polls does not report "not known" again.
"""

from __future__ import annotations

from collections import deque

from kafka_lite.streams.processor.internals.stamped_record import Stamped

# Kafka's TimestampTracker.NOT_KNOWN: no record has been seen yet.
NOT_KNOWN = -1


class MinTimestampTracker:
    """Kafka's ``MinTimestampTracker``: the minimum timestamp of the elements added and not yet removed."""

    def __init__(self) -> None:
        self.descending_subsequence: deque[Stamped] = deque()  # Kafka's name; the run it keeps
        self.last_known_time = NOT_KNOWN

    def add_element(self, elem: Stamped) -> None:
        if elem is None:
            raise ValueError("elem must not be None")
        while self.descending_subsequence and self.descending_subsequence[-1].timestamp >= elem.timestamp:
            self.descending_subsequence.pop()
        self.descending_subsequence.append(elem)

    def remove_element(self, elem: Stamped) -> None:
        # Elements are removed oldest first; the oldest is kept only if it was the minimum.
        if elem is not None and self.descending_subsequence and self.descending_subsequence[0] is elem:
            self.descending_subsequence.popleft()
        if not self.descending_subsequence:
            self.last_known_time = elem.timestamp

    def size(self) -> int:
        return len(self.descending_subsequence)

    def get(self) -> int:
        if not self.descending_subsequence:
            return self.last_known_time
        return self.descending_subsequence[0].timestamp
