"""What a controller operation decides: the records to append to the metadata log, and the answer
to give once they are committed.

Mirrors: org.apache.kafka.controller.ControllerResult and ControllerResultAndOffset
         (metadata/src/main/java/org/apache/kafka/controller/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

Every write in the quorum controller has the same two halves. A control manager reads its state
and returns a ``ControllerResult`` without changing anything; the controller then appends the
records, replays them into the managers (so the next operation sees them), and answers the request
only once the log has committed them. ``is_atomic`` asks for the records to go into one batch, so
that a standby or a broker replaying the log never sees half of them (a topic without all of its
partitions); a non-atomic result may be split across batches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion

T = TypeVar("T")


@dataclass(frozen=True)
class ControllerResult(Generic[T]):
    records: list[ApiMessageAndVersion] = field(default_factory=list)
    response: T | None = None
    is_atomic: bool = True

    @staticmethod
    def of(records: list[ApiMessageAndVersion], response: T) -> ControllerResult[T]:
        return ControllerResult(list(records), response, True)

    @staticmethod
    def at_least_once(records: list[ApiMessageAndVersion], response: T) -> ControllerResult[T]:
        return ControllerResult(list(records), response, False)


@dataclass(frozen=True)
class ControllerResultAndOffset(Generic[T]):
    """A result whose records were appended: ``offset`` is the last one's, the offset the
    controller waits to see committed before it completes the request's future."""

    offset: int
    records: list[ApiMessageAndVersion]
    response: T | None
