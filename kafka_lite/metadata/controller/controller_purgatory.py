"""Where the active controller's answered-but-uncommitted writes wait for the log to commit them.

Mirrors: org.apache.kafka.controller.ControllerPurgatory and DeferredEvent
         (metadata/src/main/java/org/apache/kafka/controller/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft); chapter 6's (6.3) DelayedOperationPurgatory is the broker's
Differs: an ordered dict, since offsets are added in increasing order (Kafka's TreeMap).

The controller applies a write's records to its memory at once, but must not answer the request
until a majority of the quorum has them: an answer for records a new leader never saw would be a
promise the cluster cannot keep. So each write's event waits here under the offset of its last
record, and ``complete_up_to`` releases it when ``handle_commit`` reaches that offset. Offsets only
grow (one thread appends), so the entries are in order and releasing them stops at the first one
above the committed offset. Unlike the broker's purgatory there is no timer: a resignation fails
them all at once (``fail_all``).
"""

from __future__ import annotations

from typing import Protocol


class DeferredEvent(Protocol):
    def complete(self, exception: BaseException | None) -> None:
        """Answer the request: with its result when ``exception`` is None, else with the error."""


class ControllerPurgatory:
    def __init__(self) -> None:
        self._pending: dict[int, list[DeferredEvent]] = {}

    def complete_up_to(self, offset: int) -> None:
        """Complete every event waiting at or below ``offset``, the newly committed offset."""
        while self._pending:
            first = next(iter(self._pending))
            if first > offset:
                break
            for event in self._pending.pop(first):
                event.complete(None)

    def fail_all(self, exception: BaseException) -> None:
        pending, self._pending = self._pending, {}
        for events in pending.values():
            for event in events:
                event.complete(exception)

    def add(self, offset: int, event: DeferredEvent) -> None:
        highest = self.highest_pending_offset()
        if highest is not None and offset < highest:
            raise RuntimeError(
                f"There is already a purgatory event with offset {highest}.  We should not add one with an "
                f"offset of {offset} which is lower than that."
            )
        self._pending.setdefault(offset, []).append(event)

    def highest_pending_offset(self) -> int | None:
        return next(reversed(self._pending), None)

    def __len__(self) -> int:
        return sum(len(events) for events in self._pending.values())
