"""Punctuation by stream time: which processors asked to be called every N ms, and when next.

Mirrors: org.apache.kafka.streams.processor.internals.PunctuationQueue and PunctuationSchedule
         (streams/src/main/java/org/apache/kafka/streams/processor/internals/, Kafka 0.10.1)
Book:    chapter 9, 9.1.3 (punctuate: time-driven processing)

A processor calls ``context.schedule(interval)`` in ``init``; the task puts a schedule for that
node here, due at time 0, so it fires at the first stream time the task learns. After the task
processes a record it calls ``may_punctuate(stream_time)``, which fires every due schedule, oldest
first, and puts back its next one:

    interval 10, stream times seen: 3, 7, 14, 15, 41
    fires at 3 (first), next due 13; fires at 14, next due 23; fires at 41, next due 33,
    which is due too: fires again at 41, next due 43.

The first firing re-bases the schedule on the stream time it fires at (Kafka's ``next``: "when it
is firstly triggered ... reschedule based on the currTimestamp"); after that, a schedule moves by
whole intervals, so after a jump in stream time it catches up, once per missed interval, each call
passing the current stream time. Stream time moves only with records: with no input, nothing fires
(``may_punctuate``).
"""

from __future__ import annotations

import heapq
import itertools
from typing import Protocol

from kafka_lite.streams.processor.internals.processor_node import ProcessorNode
from kafka_lite.streams.processor.internals.stamped_record import Stamped


class Punctuator(Protocol):
    """What fires a schedule: the task (Kafka's ``Punctuator``)."""

    def punctuate(self, node: ProcessorNode, timestamp: int) -> None: ...


class PunctuationSchedule(Stamped):
    """A node, the stream time it is next due at (``timestamp``), and its interval."""

    def __init__(self, node: ProcessorNode, interval: int, time: int = 0) -> None:
        super().__init__(node, time)
        self.interval = interval

    def node(self) -> ProcessorNode:
        return self.value

    def next(self, curr_timestamp: int) -> PunctuationSchedule:
        # The first firing (due at 0) starts the rhythm at the current stream time.
        if self.timestamp == 0:
            return PunctuationSchedule(self.value, self.interval, curr_timestamp + self.interval)
        return PunctuationSchedule(self.value, self.interval, self.timestamp + self.interval)


class PunctuationQueue:
    """Kafka's ``PunctuationQueue``: the schedules of a task, by due time."""

    def __init__(self) -> None:
        # (due time, insertion number, schedule): the number keeps equal due times in schedule order.
        self.pq: list[tuple[int, int, PunctuationSchedule]] = []
        self._insertions = itertools.count()

    def schedule(self, sched: PunctuationSchedule) -> None:
        heapq.heappush(self.pq, (sched.timestamp, next(self._insertions), sched))

    def close(self) -> None:
        self.pq.clear()

    # --8<-- [start:may_punctuate]
    def may_punctuate(self, timestamp: int, punctuator: Punctuator) -> bool:
        """Fire every schedule due at or before ``timestamp``, a stream time; True if any fired.

        Stream time only, as 0.10.1 has it: wall-clock punctuation is Kafka 1.0's (KIP-138), so an
        application with no input punctuates nothing here."""
        punctuated = False
        while self.pq and self.pq[0][0] <= timestamp:
            sched = heapq.heappop(self.pq)[2]
            punctuator.punctuate(sched.node(), timestamp)
            self.schedule(sched.next(timestamp))
            punctuated = True
        return punctuated

    # --8<-- [end:may_punctuate]
