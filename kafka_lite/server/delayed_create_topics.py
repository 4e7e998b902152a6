"""A CreateTopics request waiting for its new partitions to have leaders.

Mirrors: kafka.server.DelayedCreateTopics (core/src/main/scala/kafka/server/DelayedCreateTopics.scala,
         Kafka 0.10.1)
Book:    chapter 6, 6.3 (delayed operations); chapter 7, 7.1.3 (the controller creates the partitions)

Writing a topic's assignment to ZooKeeper is only the start: the controller's topic watch fires, it
elects a leader for every new partition and sends UpdateMetadata to the brokers. The CreateTopics
response waits in the ``AdminManager``'s purgatory, under each new topic's name, until this broker's
metadata cache shows a leader for every partition it created (each UpdateMetadata re-checks it), or
until the request's ``timeout``, when the topics still without leaders get REQUEST_TIMED_OUT.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kafka_lite.common.errors import Errors
from kafka_lite.server.metadata_cache import MetadataCache
from kafka_lite.utils.delayed_operation import DelayedOperation
from kafka_lite.zk.zk_utils import LeaderAndIsr

# topic -> (error, error message); the message is None when the error is NONE.
CreateTopicsResults = dict[str, tuple[Errors, str | None]]


@dataclass(frozen=True)
class CreateTopicMetadata:
    """Kafka's ``CreateTopicMetadata``: what the admin manager did for one topic of the request."""

    topic: str
    partitions: tuple[int, ...]  # the partition ids written to ZooKeeper (empty after an error)
    error: Errors
    message: str | None = None


class DelayedCreateTopics(DelayedOperation):
    def __init__(
        self,
        delay_ms: int,
        create_metadata: list[CreateTopicMetadata],
        metadata_cache: MetadataCache,
        response_callback: Callable[[CreateTopicsResults], None],
    ) -> None:
        super().__init__(delay_ms)
        self.create_metadata = create_metadata
        self.metadata_cache = metadata_cache
        self.response_callback = response_callback

    def try_complete(self) -> bool:
        """Complete once no created partition is missing its leader."""
        leaderless = sum(
            self._missing_leader_count(m) for m in self.create_metadata if m.error is Errors.NONE
        )
        return self.force_complete() if leaderless == 0 else False

    def on_complete(self) -> None:
        results: CreateTopicsResults = {}
        for m in self.create_metadata:
            if m.error is Errors.NONE and self._missing_leader_count(m) > 0:
                results[m.topic] = (Errors.REQUEST_TIMED_OUT, "Timed out waiting for the topic's leaders")
            else:
                results[m.topic] = (m.error, m.message)
        self.response_callback(results)

    def _missing_leader_count(self, m: CreateTopicMetadata) -> int:
        return sum(1 for p in m.partitions if self._is_missing_leader(m.topic, p))

    def _is_missing_leader(self, topic: str, partition: int) -> bool:
        state = self.metadata_cache.partition_state(topic, partition)
        return state is None or state.leader == LeaderAndIsr.NO_LEADER
