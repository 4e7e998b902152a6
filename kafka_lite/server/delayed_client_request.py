"""Client requests that arrive before the controller's first UpdateMetadata, and wait for it.

No Kafka twin: a ``DelayedOperation`` in Kafka's style (like ``DelayedCreateTopics``), for a gap
         Kafka closes differently
Book:    chapter 2, 2.3 (the server's start-up); chapter 7, 7.3.1 (the controller keeps each
         broker's metadata cache up to date)

The gap. A broker's metadata cache is empty until the controller sends it UpdateMetadata, and the
controller does that only after the broker has registered in ``/brokers/ids``, the last step of
``KafkaServer.startup``. Its port is open well before. A client that connects the moment the port
opens could get a Metadata response listing no brokers and no controller; librdkafka then waits on a
broker list that never arrives, and an ``AdminClient.create_topics`` sent that early goes unanswered.

Kafka 0.10 has the same gap. Kafka 2.0 narrows it: ``startup`` binds the port early but starts its
processors only at its very end, so no request is read before the broker is registered; the
controller's UpdateMetadata can still come after a client's first Metadata. kafka_lite goes one step
further and serves clients only once the broker has its first metadata from the controller. The
port cannot stay closed until then, because the controller reaches the broker through the same
listener: so every request is read, inter-broker ones (UpdateMetadata, LeaderAndIsr, StopReplica)
are handled at once, and a client request (every API but ApiVersions) arriving before the first
UpdateMetadata waits here, in a purgatory under the one key ``FIRST_METADATA``.

Waiting in a purgatory, not in a handler thread: a handler that blocked on the cache would be one
fewer thread for the UpdateMetadata that ends the wait, and ``num.io.threads`` early clients would
block them all. A ``DelayedClientRequest`` holds no thread; the first UpdateMetadata completes every
one of them (``check_and_complete(FIRST_METADATA)``) and each is then handled as if it had just
arrived. A controller that never comes bounds the wait at ``controller.socket.timeout.ms``, the
time the controller itself allows a broker to answer: after it the request is handled with what
the cache holds. ApiVersions never waits: it describes this broker, not the cluster, and librdkafka
gives up on a broker whose ApiVersions goes unanswered.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from kafka_lite.network.request_channel import Request
from kafka_lite.server.metadata_cache import MetadataCache
from kafka_lite.utils.delayed_operation import DelayedOperation

log = logging.getLogger(__name__)

FIRST_METADATA = "first-metadata"  # the one purgatory key: every early request waits on it


class DelayedClientRequest(DelayedOperation):
    def __init__(
        self,
        delay_ms: int,
        request: Request,
        metadata_cache: MetadataCache,
        handle: Callable[[Request], None],
    ) -> None:
        super().__init__(delay_ms)
        self.request = request
        self.metadata_cache = metadata_cache
        self.handle = handle

    def try_complete(self) -> bool:
        return self.force_complete() if self.metadata_cache.has_metadata() else False

    def on_complete(self) -> None:
        self.handle(self.request)

    def on_expiration(self) -> None:
        log.warning(
            "No UpdateMetadata from the controller within %d ms: handled %s from %s with an empty "
            "metadata cache",
            self.delay_ms, self.request.api.api_name, self.request.connection_id,
        )  # fmt: skip
