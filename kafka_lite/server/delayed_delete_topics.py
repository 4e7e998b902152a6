"""A DeleteTopics request waiting for its topics to leave this broker's metadata cache.

Mirrors: kafka.server.DelayedDeleteTopics (core/src/main/scala/kafka/server/DelayedDeleteTopics.scala,
         Kafka 0.10.1)
Book:    chapter 6, 6.3 (delayed operations); chapter 7, 7.1.5 (the controller deletes the topic)

Writing ``/admin/delete_topics/<topic>`` only asks: the controller's watch fires, it sends every broker
an UpdateMetadata marking the topic's partitions with leader -2, and each broker drops the topic
from its metadata cache. The response waits in the ``AdminManager``'s purgatory, under each topic's
name, until the cache here no longer has any of the topics (each UpdateMetadata re-checks it), or
until the request's ``timeout``, when the topics still there get REQUEST_TIMED_OUT. "Gone from the
cache" is when clients stop seeing the topic; the replicas' files may still be on a broker that is
down, and go when it returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kafka_lite.common.errors import Errors
from kafka_lite.server.metadata_cache import MetadataCache
from kafka_lite.utils.delayed_operation import DelayedOperation

# topic -> error
DeleteTopicsResults = dict[str, Errors]


@dataclass(frozen=True)
class DeleteTopicMetadata:
    """Kafka's ``DeleteTopicMetadata``: what the admin manager did for one topic of the request."""

    topic: str
    error: Errors


class DelayedDeleteTopics(DelayedOperation):
    def __init__(
        self,
        delay_ms: int,
        delete_metadata: list[DeleteTopicMetadata],
        metadata_cache: MetadataCache,
        response_callback: Callable[[DeleteTopicsResults], None],
    ) -> None:
        super().__init__(delay_ms)
        self.delete_metadata = delete_metadata
        self.metadata_cache = metadata_cache
        self.response_callback = response_callback

    def try_complete(self) -> bool:
        """Complete once no topic marked without error is still in the cache."""
        existing = sum(
            1 for m in self.delete_metadata if m.error is Errors.NONE and self._topic_exists(m.topic)
        )
        return self.force_complete() if existing == 0 else False

    def on_complete(self) -> None:
        results: DeleteTopicsResults = {}
        for m in self.delete_metadata:
            if m.error is Errors.NONE and self._topic_exists(m.topic):
                results[m.topic] = Errors.REQUEST_TIMED_OUT
            else:
                results[m.topic] = m.error
        self.response_callback(results)

    def _topic_exists(self, topic: str) -> bool:
        return self.metadata_cache.contains(topic)
