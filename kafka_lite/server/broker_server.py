"""The broker role of a KRaft node: chapter 2's broker, with the metadata log where ZooKeeper was.

Mirrors: kafka.server.BrokerServer (core/src/main/scala/kafka/server/BrokerServer.scala, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft); the parts are chapter 2's (2.3)
Differs: the socket server's processors start with its acceptors, and requests wait in the request
         channel until the handler pool is built (Kafka starts the processors at
         ``enableRequestProcessing``); SASL PLAIN only (no SCRAM: ``KafkaConfig`` says why);
         ``metric.reporters`` hear of the
         broker's requests only (Kafka's one ``Metrics`` per node also holds the controller's and
         the Raft client's); no delegation tokens, client-quota or SCRAM records, or broker-side
         metadata snapshots; the log manager, replica manager and coordinators start before the
         first publish (the publisher says why).

What a ZooKeeper broker (``KafkaServer``) reads from and writes to ZooKeeper, a KRaft broker learns
from the metadata log and asks the active controller for. The parts it builds are chapter 2's log
manager, socket server, quotas, replica manager, coordinators, ``KafkaApis`` and handler pool, with
chapter 12's in the places ZooKeeper had:

    ZooKeeper broker                          KRaft broker
    /brokers/ids/<id> (ephemeral)             BrokerLifecycleManager: BrokerRegistration, heartbeats
    UpdateMetadata, LeaderAndIsr, StopReplica BrokerMetadataListener -> BrokerMetadataPublisher
    MetadataCache                             KRaftMetadataCache (the metadata image)
    ISR written to the partition's znode      AlterPartitionManager -> the controller
    AdminManager writes /brokers/topics/...   ForwardingManager -> the controller
    /latest_producer_id_block                 RPCProducerIdManager -> AllocateProducerIds

``startup`` in 3.3's order::

    lifecycle manager (built)      scheduler, quotas, KRaftMetadataCache, log manager (built)
    forwarding channel started     -> ForwardingManager
    socket server                  its ports bound, so the registration can name them; the
                                   metric.reporters added to its request metrics
    AlterPartitionManager started  -> ReplicaManager
    group and transaction coordinators (producer ids from the controller)
    BrokerMetadataListener         the lifecycle manager started (registration, heartbeats), the
                                   listener registered with the Raft manager
    KafkaApis                      with a KRaftAdminManager that describes configs from the image
    wait: initial catch-up         the controller says the broker has replayed the log to its
                                   registration
    start publishing, and wait     the first image: the cache filled, partitions led and followed
    handler pool                   requests handled from here (Kafka's enableRequestProcessing)
    set ready to unfence, and wait the controller unfences the broker: clients' metadata names it

``shutdown`` is a controlled shutdown first: the lifecycle manager asks to shut down in its
heartbeats, the controller moves this broker's leaderships away, and answers that it may go once the
brokers clients will ask instead have seen the move. Then everything stops, the request path first
and the logs last.
"""

from __future__ import annotations

import logging

from kafka_lite.common.protocol.api_keys import api_versions
from kafka_lite.common.protocol.listener_type import ListenerType
from kafka_lite.common.protocol.raft_messages import RaftApiKeys
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.utils import LONG_MAX
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_manager import LogManager
from kafka_lite.metadata.metadata_version import (
    LATEST_METADATA_VERSION,
    METADATA_VERSION_FEATURE_NAME,
    MINIMUM_KRAFT_VERSION,
)
from kafka_lite.metadata.version_range import VersionRange
from kafka_lite.network.sasl_server_authenticator import AuthenticationStats
from kafka_lite.network.socket_server import SocketServer
from kafka_lite.queue.kafka_event_queue import KafkaEventQueue
from kafka_lite.raft.tools.raft_manager import KafkaRaftManager
from kafka_lite.server import quota_factory
from kafka_lite.server.alter_partition_manager import AlterPartitionManager
from kafka_lite.server.broker_lifecycle_manager import BrokerLifecycleManager
from kafka_lite.server.broker_metadata_checkpoint import MetaProperties
from kafka_lite.server.broker_to_controller_channel_manager import (
    BrokerToControllerChannelManager,
    RaftControllerNodeProvider,
)
from kafka_lite.server.config_handler import BrokerConfigHandler, TopicConfigHandler
from kafka_lite.server.config_helper import KRaftAdminManager
from kafka_lite.server.forwarding_manager import ForwardingChannelManager, ForwardingManager
from kafka_lite.server.kafka_apis import KafkaApis
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.kafka_request_handler import KafkaRequestHandlerPool
from kafka_lite.server.kafka_server import (
    add_metric_reporters,
    build_add_partitions_to_txn_manager,
    build_group_coordinator,
    build_transaction_coordinator,
)
from kafka_lite.server.metadata.broker_metadata_listener import BrokerMetadataListener
from kafka_lite.server.metadata.broker_metadata_publisher import BrokerMetadataPublisher
from kafka_lite.server.metadata.kraft_metadata_cache import KRaftMetadataCache
from kafka_lite.server.metadata_cache import SECURITY_PROTOCOL_IDS
from kafka_lite.server.process_status import ProcessStatus, ProcessStatusHolder
from kafka_lite.server.producer_id_manager import RPCProducerIdManager
from kafka_lite.server.quota_factory import QuotaManagers
from kafka_lite.server.replica_manager import ReplicaManager
from kafka_lite.server.server_channel_builder import listeners_with_channel_builders
from kafka_lite.utils.scheduler import KafkaScheduler

log = logging.getLogger(__name__)

# How long a forwarded request may follow the controller from node to node (3.3's "forwarding"
# channel's retryTimeoutMs).
FORWARDING_RETRY_TIMEOUT_MS = 60_000
# How long shutdown waits for the controller to let this broker go (3.3: five minutes).
CONTROLLED_SHUTDOWN_TIMEOUT_S = 300


class BrokerServer:
    def __init__(
        self,
        meta_properties: MetaProperties,
        config: KafkaConfig,
        raft_manager: KafkaRaftManager,
        time: Time = SYSTEM,
    ) -> None:
        self.meta_properties = meta_properties
        self.config = config
        self.raft_manager = raft_manager
        self.time = time
        self.broker_id = config.node_id
        self.process_status = ProcessStatusHolder()
        self.lifecycle_manager: BrokerLifecycleManager | None = None
        self.scheduler: KafkaScheduler | None = None
        self.quota_managers: QuotaManagers | None = None
        self.metadata_cache: KRaftMetadataCache | None = None
        self.log_manager: LogManager | None = None
        self.client_to_controller_channel_manager: ForwardingChannelManager | None = None
        self.forwarding_manager: ForwardingManager | None = None
        self.socket_server: SocketServer | None = None
        self.alter_partition_manager: AlterPartitionManager | None = None
        self.replica_manager: ReplicaManager | None = None
        self.producer_id_manager: RPCProducerIdManager | None = None
        self.group_coordinator = None
        self.transaction_coordinator = None
        self.metadata_listener: BrokerMetadataListener | None = None
        self.metadata_publisher: BrokerMetadataPublisher | None = None
        self.admin_manager: KRaftAdminManager | None = None
        self.apis: KafkaApis | None = None
        self.request_handler_pool: KafkaRequestHandlerPool | None = None
        self.authentication_stats = AuthenticationStats()  # SASL authentications, by framing and outcome

    @property
    def cluster_id(self) -> str:
        return self.meta_properties.cluster_id

    # --8<-- [start:startup]
    def startup(self) -> None:
        if not self.process_status.maybe_change_status(ProcessStatus.SHUTDOWN, ProcessStatus.STARTING):
            return
        c, time, broker_id = self.config, self.time, self.broker_id
        try:
            log.info("[BrokerServer id=%d] Starting broker", broker_id)
            self.lifecycle_manager = BrokerLifecycleManager(
                c, time, KafkaEventQueue(time, f"broker-{broker_id}-lifecycle-manager-")
            )
            self.scheduler = KafkaScheduler(time=time)
            self.scheduler.startup()
            self.quota_managers = quota_factory.instantiate(c, time)
            self.metadata_cache = KRaftMetadataCache(broker_id, c.inter_broker_listener_name)
            # Built, not started: its logs open once the broker has caught up with the metadata log.
            self.log_manager = LogManager(
                c.log_dirs, LogConfig.from_broker(c.log_config_props()), self.scheduler,
                flush_check_ms=c["log.flush.scheduler.interval.ms"],
                flush_checkpoint_ms=c["log.flush.offset.checkpoint.interval.ms"],
                retention_check_ms=c["log.retention.check.interval.ms"],
                cleaner_enable=c["log.cleaner.enable"], cleaner_backoff_ms=c["log.cleaner.backoff.ms"],
                time=time, initial_task_delay_ms=c["log.initial.task.delay.ms"],
            )  # fmt: skip
            controller_nodes = RaftControllerNodeProvider.voter_nodes(c.quorum_voters)
            controller_node_provider = RaftControllerNodeProvider(
                self.raft_manager.client, controller_nodes, c.controller_listener_names[0]
            )
            # Every channel to the controllers logs in as controller.listener.names' first listener asks.
            to_controller = c.controller_channel_builder()
            self.client_to_controller_channel_manager = ForwardingChannelManager(
                controller_node_provider, time, broker_id, FORWARDING_RETRY_TIMEOUT_MS,
                channel_builder=to_controller,
            )  # fmt: skip
            self.client_to_controller_channel_manager.start()
            self.forwarding_manager = ForwardingManager(self.client_to_controller_channel_manager)
            # Bound now, so that the registration names the ports; requests wait for the handlers.
            self.socket_server = SocketServer(
                listeners=listeners_with_channel_builders(
                    c, [e for e in c.listeners if e.listener_name not in c.controller_listener_names],
                    api_versions((*KafkaApis.HANDLED, RaftApiKeys.DESCRIBE_QUORUM)),
                    self.authentication_stats,
                ),
                num_network_threads=c["num.network.threads"],
                queued_max_requests=c["queued.max.requests"],
                socket_request_max_bytes=c["socket.request.max.bytes"],
                time=time,
                listener_type=ListenerType.BROKER,
            )  # fmt: skip
            self.socket_server.startup()
            # metric.reporters. Kafka 3.3's KafkaRaftServer builds one Metrics for the whole node, its
            # reporters in it, and hands it to each role's socket server; kafka_lite's reporters hang
            # off the broker's socket server's request metrics, so they are added here, once it is
            # bound, as KafkaServer adds them. The reporter's producer sends to this broker's own
            # inter-broker listener, whose requests wait in the channel until the handlers start.
            add_metric_reporters(
                c, self.socket_server.metrics,
                {listener["name"]: f"{listener['host']}:{listener['port']}"
                 for listener in self._registration_listeners()},
            )  # fmt: skip
            self.alter_partition_manager = AlterPartitionManager(
                BrokerToControllerChannelManager(
                    controller_node_provider, time, broker_id, "alterPartition", retry_timeout_ms=LONG_MAX,
                    channel_builder=to_controller,
                ),
                self.scheduler, time, broker_id, lambda: self.lifecycle_manager.broker_epoch,
            )  # fmt: skip
            self.alter_partition_manager.start()
            self.replica_manager = ReplicaManager(
                c, time, None, self.scheduler, self.log_manager, self.metadata_cache.topic_config,
                self.metadata_cache, quota_manager=self.quota_managers.follower,
                alter_partition_manager=self.alter_partition_manager,
                add_partitions_to_txn_manager_factory=lambda: build_add_partitions_to_txn_manager(
                    broker_id, c, self.metadata_cache, time
                ),
            )  # fmt: skip
            self.producer_id_manager = RPCProducerIdManager(
                broker_id,
                lambda: self.lifecycle_manager.broker_epoch,
                self.client_to_controller_channel_manager,
            )
            # The coordinators are chapter 5's and 10's, built from the same settings the ZooKeeper
            # broker reads.
            self.group_coordinator = build_group_coordinator(
                broker_id, c, self.replica_manager, self.scheduler, time
            )
            self.transaction_coordinator = build_transaction_coordinator(
                broker_id, c, self.scheduler, self.replica_manager, self.metadata_cache,
                self.producer_id_manager, time,
            )  # fmt: skip
            self.metadata_listener = BrokerMetadataListener(
                broker_id, time, KafkaEventQueue(time, f"broker-{broker_id}-metadata-loader-")
            )
            self.lifecycle_manager.start(
                self.metadata_listener.highest_metadata_offset,
                BrokerToControllerChannelManager(
                    controller_node_provider, time, broker_id, "heartbeat", channel_builder=to_controller
                ),
                self.cluster_id,
                self._registration_listeners(),
                {METADATA_VERSION_FEATURE_NAME: VersionRange(
                    MINIMUM_KRAFT_VERSION.feature_level, LATEST_METADATA_VERSION.feature_level
                )},
            )  # fmt: skip
            # From here the Raft client hands the metadata log's batches to the listener.
            self.raft_manager.register(self.metadata_listener)
            # DescribeConfigs is answered here, from the image (Kafka 3.3's ConfigHelper over the
            # KRaftMetadataCache); every admin request that writes is forwarded to the controller.
            self.admin_manager = KRaftAdminManager(c, self.metadata_cache, time)
            # authorizer.class.name, as the ZooKeeper broker builds it: KRaft's StandardAuthorizer takes
            # its ACLs from the metadata the publisher hands it (KIP-801).
            self.authorizer = c.authorizer_class(time=time) if c.authorizer_class is not None else None
            if self.authorizer is not None:
                self.authorizer.configure(c.values)
            self.apis = KafkaApis(
                self.socket_server.request_channel, self.replica_manager, self.admin_manager,
                self.group_coordinator, self.transaction_coordinator, None, self.metadata_cache,
                self.producer_id_manager, self.quota_managers, c, self.cluster_id, time,
                forwarding_manager=self.forwarding_manager, authorizer=self.authorizer,
            )  # fmt: skip
            # Block until the controller says we have replayed the log up to our registration.
            self.lifecycle_manager.initial_catch_up_future.result()
            self.log_manager.startup()
            self.replica_manager.startup()
            self.group_coordinator.startup()
            self.transaction_coordinator.startup(
                c["transaction.abort.timed.out.transaction.cleanup.interval.ms"]
            )
            self.metadata_publisher = BrokerMetadataPublisher(
                broker_id, self.metadata_cache, self.log_manager, self.replica_manager,
                self.group_coordinator, self.transaction_coordinator,
                {
                    "topics": TopicConfigHandler(
                        self.log_manager, c.log_config_props(), broker_id, self.quota_managers
                    ),
                    "brokers": BrokerConfigHandler(broker_id, self.quota_managers, self.replica_manager),
                },
                self.authorizer,
            )  # fmt: skip
            # The first publish: the cache filled, this broker's partitions led and followed.
            self.metadata_listener.start_publishing(self.metadata_publisher).result()
            # Kafka's enableRequestProcessing: the requests waiting in the channel are handled from
            # here, every one against the published image.
            self.request_handler_pool = KafkaRequestHandlerPool(
                self.socket_server.request_channel, self.apis, c["num.io.threads"]
            )
            # Ready: the controller unfences us at our next heartbeat, and clients are told of us.
            self.lifecycle_manager.set_ready_to_unfence().result()
            self.process_status.maybe_change_status(ProcessStatus.STARTING, ProcessStatus.STARTED)
            log.info("[BrokerServer id=%d] Broker started (cluster %s)", broker_id, self.cluster_id)
        except BaseException:
            self.process_status.maybe_change_status(ProcessStatus.STARTING, ProcessStatus.STARTED)
            log.exception(
                "[BrokerServer id=%d] Fatal error during broker startup. Prepare to shutdown", broker_id
            )
            self.shutdown()
            raise

    # --8<-- [end:startup]

    def _registration_listeners(self) -> list[dict]:
        """BrokerRegistration's listeners: each advertised listener, port 0 replaced by the bound one."""
        assert self.socket_server is not None
        listeners = []
        for e in self.config.advertised_listeners:
            host = e.host if e.host not in ("", "0.0.0.0") else "127.0.0.1"
            port = e.port or self.socket_server.bound_port(e.listener_name)
            listeners.append(
                {"name": e.listener_name, "host": host, "port": port,
                 "security_protocol": SECURITY_PROTOCOL_IDS[e.security_protocol]}
            )  # fmt: skip
        return listeners

    def bound_port(self, listener_name: str | None = None) -> int:
        """The port of a client listener (the first one by default)."""
        assert self.socket_server is not None
        return self.socket_server.bound_port(
            listener_name or self.config.advertised_listeners[0].listener_name
        )

    # --8<-- [start:shutdown]
    def shutdown(self) -> None:
        if not self.process_status.maybe_change_status(ProcessStatus.STARTED, ProcessStatus.SHUTTING_DOWN):
            return
        try:
            log.info("[BrokerServer id=%d] shutting down", self.broker_id)
            if self.socket_server is not None:
                # The reporters first, as KafkaServer closes them (Kafka closes its Metrics last): a
                # reporter that publishes through the brokers sends its last samples while this
                # broker still answers, and before the controlled shutdown moves its leaderships.
                self.socket_server.metrics.close()
            lifecycle = self.lifecycle_manager
            if self.config["controlled.shutdown.enable"] and lifecycle is not None:
                if self.replica_manager is not None:
                    self.replica_manager.begin_controlled_shutdown()
                lifecycle.begin_controlled_shutdown()
                try:
                    lifecycle.controlled_shutdown_future.result(timeout=CONTROLLED_SHUTDOWN_TIMEOUT_S)
                except Exception:
                    log.error("Timed out waiting for the controller to approve controlled shutdown")
            if self.metadata_listener is not None:
                self.metadata_listener.begin_shutdown()
            if lifecycle is not None:
                lifecycle.begin_shutdown()
            # The request path first: no request starts against parts being stopped.
            for step in (
                self.request_handler_pool and self.request_handler_pool.shutdown,
                self.apis and self.apis.shutdown,
                self.admin_manager and self.admin_manager.shutdown,
                self.metadata_listener and self.metadata_listener.close,
                self.scheduler and self.scheduler.shutdown,
                self.transaction_coordinator and self.transaction_coordinator.shutdown,
                self.group_coordinator and self.group_coordinator.shutdown,
                self.replica_manager and self.replica_manager.shutdown,
                self.alter_partition_manager and self.alter_partition_manager.shutdown,
                self.client_to_controller_channel_manager
                and self.client_to_controller_channel_manager.shutdown,
                self.log_manager and self.log_manager.shutdown,
                self.socket_server and self.socket_server.shutdown,
                lifecycle and lifecycle.close,
            ):
                if step:
                    try:
                        step()
                    except Exception:  # Kafka's CoreUtils.swallow: one part failing stops no other
                        log.exception("[BrokerServer id=%d] error while shutting down", self.broker_id)
        finally:
            self.process_status.maybe_change_status(ProcessStatus.SHUTTING_DOWN, ProcessStatus.SHUTDOWN)

    # --8<-- [end:shutdown]
