"""A Connect worker's membership of its group: a network client of its own and a WorkerCoordinator.

Mirrors: org.apache.kafka.connect.runtime.distributed.WorkerGroupMember
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/distributed/WorkerGroupMember.java,
         Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: no metrics or JMX registration.

Kafka's consumer without the consumer: the same ``Metadata``, ``NetworkClient`` and
``ConsumerNetworkClient`` a ``KafkaConsumer`` builds, driving a ``WorkerCoordinator`` instead of a
``ConsumerCoordinator`` and fetching nothing. The herder's thread calls ``poll``; the coordinator's
heartbeat thread keeps the session alive between polls, and ``wakeup`` (from any thread) makes a
poll return early, which is how a REST request gets the herder's attention.
"""

from __future__ import annotations

import itertools
import logging

from kafka_lite.clients.client_utils import create_channel_builder, parse_bootstrap
from kafka_lite.clients.metadata import Metadata
from kafka_lite.clients.network_client import NetworkClient
from kafka_lite.common.errors import IllegalArgumentException
from kafka_lite.common.time import Time
from kafka_lite.connect.runtime.distributed.distributed_config import (
    CLIENT_ID_CONFIG,
    GROUP_ID_CONFIG,
    HEARTBEAT_INTERVAL_MS_CONFIG,
    METADATA_MAX_AGE_CONFIG,
    REBALANCE_TIMEOUT_MS_CONFIG,
    RECONNECT_BACKOFF_MS_CONFIG,
    REQUEST_TIMEOUT_MS_CONFIG,
    RETRY_BACKOFF_MS_CONFIG,
    SESSION_TIMEOUT_MS_CONFIG,
    DistributedConfig,
)
from kafka_lite.connect.runtime.distributed.worker_coordinator import WorkerCoordinator
from kafka_lite.connect.runtime.distributed.worker_rebalance_listener import WorkerRebalanceListener
from kafka_lite.connect.runtime.worker_config import BOOTSTRAP_SERVERS_CONFIG
from kafka_lite.connect.storage.config_backing_store import ConfigBackingStore
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId
from kafka_lite.consumer.internals.consumer_network_client import ConsumerNetworkClient
from kafka_lite.network.selector import Selector

log = logging.getLogger(__name__)

_CONNECT_CLIENT_ID_SEQUENCE = itertools.count(1)
MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION = 100  # Kafka's "a fixed large enough value will suffice"


class WorkerGroupMember:
    """The herder's handle on the group: every call but ``wakeup`` comes from the herder's thread,
    as the network client under it is not safe to share."""

    def __init__(
        self,
        config: DistributedConfig,
        rest_url: str,
        config_storage: ConfigBackingStore,
        listener: WorkerRebalanceListener,
        time: Time,
    ) -> None:
        self.time = time
        self.client_id = config.get(CLIENT_ID_CONFIG) or f"connect-{next(_CONNECT_CLIENT_ID_SEQUENCE)}"
        retry_backoff_ms = config.get(RETRY_BACKOFF_MS_CONFIG)
        request_timeout_ms = config.get(REQUEST_TIMEOUT_MS_CONFIG)
        self.metadata = Metadata(refresh_backoff_ms=retry_backoff_ms,
                                 metadata_expire_ms=config.get(METADATA_MAX_AGE_CONFIG), time=time)  # fmt: skip
        self.metadata.bootstrap(parse_bootstrap(config.get(BOOTSTRAP_SERVERS_CONFIG)), time.milliseconds())
        # The worker's own login (its top-level security settings): the group is the worker's.
        channel_builder = create_channel_builder(config.values, self.client_id)
        network = NetworkClient(
            Selector(time=time, channel_builder=channel_builder),
            self.client_id,
            max_in_flight_requests_per_connection=MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION,
            reconnect_backoff_ms=config.get(RECONNECT_BACKOFF_MS_CONFIG),
            request_timeout_ms=request_timeout_ms,
            time=time,
            metadata=self.metadata,
        )
        self.client = ConsumerNetworkClient(
            network, self.metadata, time, retry_backoff_ms, request_timeout_ms
        )
        self.coordinator = WorkerCoordinator(
            self.client,
            config.get(GROUP_ID_CONFIG),
            config.get(REBALANCE_TIMEOUT_MS_CONFIG),
            config.get(SESSION_TIMEOUT_MS_CONFIG),
            config.get(HEARTBEAT_INTERVAL_MS_CONFIG),
            time,
            retry_backoff_ms,
            rest_url,
            config_storage,
            listener,
        )
        self.stopped = False
        log.debug("Connect group member created")

    def stop(self) -> None:
        """Leave the group (LeaveGroup, so the others rebalance at once) and close the connections."""
        if self.stopped:
            return
        self.stopped = True
        try:
            self.coordinator.close()
        finally:
            self.client.close()
        log.debug("The Connect group member has stopped.")

    def ensure_active(self) -> None:
        # A poll that waits for nothing: it joins (and rebalances) if needed, then returns, so the
        # herder can act on an assignment before it sleeps in the tick's real poll.
        self.coordinator.poll(0)

    def poll(self, timeout_ms: int) -> None:
        if timeout_ms < 0:
            raise IllegalArgumentException("Timeout must not be negative")
        self.coordinator.poll(timeout_ms)

    def wakeup(self) -> None:
        # The one call from other threads (REST, the config store's): the herder's poll raises
        # WakeupException and its tick looks at what was queued.
        self.client.wakeup()

    def member_id(self) -> str:
        return self.coordinator.member_id()

    def request_rejoin(self) -> None:
        self.coordinator.request_rejoin()

    def maybe_leave_group(self) -> None:
        # A LeaveGroup, so the others rebalance now rather than after this member's session timeout.
        self.coordinator.maybe_leave_group()

    def owner_url(self, id: str | ConnectorTaskId) -> str | None:
        # Only the leader saw the whole assignment; a follower answers None and forwards to the leader.
        return self.coordinator.owner_url(id)
