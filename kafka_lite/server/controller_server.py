"""The controller role of a KRaft node: its listener, the quorum controller, and the handlers between.

Mirrors: kafka.server.ControllerServer (core/src/main/scala/kafka/server/ControllerServer.scala,
         Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: no metrics, quotas, create-topic or alter-config policies; the socket server
         binds its ports when its processing starts (``SocketServer.startup``), where Kafka's binds
         them when it is built and starts processing at ``enableRequestProcessing``; of the
         bootstrap metadata the controller takes the metadata.version (the file holds no other
         record).

The socket server and the handler pool are chapter 2's (2.3), built for the controller's listener.
The Raft manager is built and started by ``KafkaRaftServer`` before this, so that the quorum
controller can register with its client as it is built. ``startup`` then builds, in Kafka's order::

    SocketServer(controller listeners, ListenerType.CONTROLLER)
      ──▶ the authorizer (authorizer.class.name: StandardAuthorizer)
      ──▶ QuorumController(raft_manager.client, on its own KafkaEventQueue)
      ──▶ ControllerApis(request channel, controller, raft manager)
      ──▶ KafkaRequestHandlerPool(num.io.threads)
      ──▶ the socket server's processing enabled

and ``shutdown`` undoes it in reverse: the controller's queue is told to stop first (so no new
write starts), then the listener, the handlers, and the controller's thread last.
"""

from __future__ import annotations

import logging

from kafka_lite.common.errors import ConfigException
from kafka_lite.common.protocol.listener_type import ListenerType, SimpleApiVersionManager
from kafka_lite.common.time import Time
from kafka_lite.metadata.bootstrap_directory import BootstrapMetadata
from kafka_lite.metadata.controller.quorum_controller import QuorumController
from kafka_lite.metadata.fault_handler import ProcessExitingFaultHandler
from kafka_lite.network.sasl_server_authenticator import AuthenticationStats
from kafka_lite.network.socket_server import SocketServer
from kafka_lite.queue.kafka_event_queue import KafkaEventQueue
from kafka_lite.raft.raft_config import quorum_voter_strings_to_nodes
from kafka_lite.raft.tools.raft_manager import KafkaRaftManager
from kafka_lite.server.broker_metadata_checkpoint import MetaProperties
from kafka_lite.server.controller_apis import ControllerApis
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.kafka_request_handler import KafkaRequestHandlerPool
from kafka_lite.server.process_status import ProcessStatus, ProcessStatusHolder
from kafka_lite.server.server_channel_builder import listeners_with_channel_builders

log = logging.getLogger(__name__)


class ControllerServer:
    def __init__(
        self,
        meta_properties: MetaProperties,
        config: KafkaConfig,
        raft_manager: KafkaRaftManager,
        time: Time,
        bootstrap_metadata: BootstrapMetadata,
    ) -> None:
        self.meta_properties = meta_properties
        self.bootstrap_metadata = bootstrap_metadata
        self.config = config
        self.raft_manager = raft_manager
        self.time = time
        self.process_status = ProcessStatusHolder()
        self.socket_server: SocketServer | None = None
        self.controller: QuorumController | None = None
        self.controller_apis: ControllerApis | None = None
        self.handler_pool: KafkaRequestHandlerPool | None = None
        self.authorizer = None
        self.authentication_stats = AuthenticationStats()  # SASL authentications, by framing and outcome

    @property
    def cluster_id(self) -> str:
        return self.meta_properties.cluster_id

    # --8<-- [start:startup]
    def startup(self) -> None:
        if not self.process_status.maybe_change_status(ProcessStatus.SHUTDOWN, ProcessStatus.STARTING):
            return
        config = self.config
        try:
            log.info("[ControllerServer id=%d] Starting controller", config.node_id)
            self.process_status.maybe_change_status(ProcessStatus.STARTING, ProcessStatus.STARTED)
            if not config.controller_listeners:
                raise ConfigException("No controller.listener.names defined for controller")
            api_version_manager = SimpleApiVersionManager(ListenerType.CONTROLLER)
            self.socket_server = SocketServer(
                num_network_threads=config.values["num.network.threads"],
                queued_max_requests=config.values["queued.max.requests"],
                listeners=listeners_with_channel_builders(
                    config,
                    config.controller_listeners,
                    api_version_manager.api_versions,
                    self.authentication_stats,
                ),
                listener_type=ListenerType.CONTROLLER,
                time=self.time,
            )
            # authorizer.class.name, as a broker builds it: the quorum controller replays the ACL
            # records into it as it commits them, and ControllerApis asks it of every request.
            self.authorizer = config.authorizer_class(time=self.time) if config.authorizer_class else None
            if self.authorizer is not None:
                self.authorizer.configure(config.values)
            self.controller = QuorumController(
                config.node_id, self.cluster_id, self.time,
                KafkaEventQueue(self.time, f"quorum-controller-{config.node_id}-"),
                self.raft_manager.client,
                fatal_fault_handler=ProcessExitingFaultHandler(),
                session_timeout_ms=config.values["broker.session.timeout.ms"],
                default_replication_factor=config.values["default.replication.factor"],
                default_num_partitions=config.values["num.partitions"],
                bootstrap_metadata_version=self.bootstrap_metadata.metadata_version,
                authorizer=self.authorizer,
            )  # fmt: skip
            self.controller_apis = ControllerApis(
                self.socket_server.request_channel, self.time, self.controller, self.raft_manager,
                config.node_id, config.values["delete.topic.enable"], api_version_manager,
                cluster_id=self.cluster_id,
                controller_nodes=quorum_voter_strings_to_nodes(config.quorum_voters),
                authorizer=self.authorizer,
            )  # fmt: skip
            self.handler_pool = KafkaRequestHandlerPool(
                self.socket_server.request_channel, self.controller_apis, config.values["num.io.threads"]
            )
            # Kafka's enableRequestProcessing: from here the listener reads requests.
            self.socket_server.startup()
        except BaseException:
            log.exception(
                "[ControllerServer id=%d] Fatal error during controller startup. Prepare to shutdown",
                config.node_id,
            )
            self.shutdown()
            raise

    # --8<-- [end:startup]

    def bound_port(self, listener_name: str | None = None) -> int:
        """The port of a controller listener (the first one by default)."""
        assert self.socket_server is not None
        return self.socket_server.bound_port(listener_name or self.config.controller_listener_names[0])

    # --8<-- [start:shutdown]
    def shutdown(self) -> None:
        if not self.process_status.maybe_change_status(ProcessStatus.STARTED, ProcessStatus.SHUTTING_DOWN):
            return
        try:
            log.info("[ControllerServer id=%d] shutting down", self.config.node_id)
            if self.controller is not None:
                self.controller.begin_shutdown()
            if self.socket_server is not None:
                self.socket_server.shutdown()
            if self.handler_pool is not None:
                self.handler_pool.shutdown()
            if self.controller is not None:
                self.controller.close()
        finally:
            self.process_status.maybe_change_status(ProcessStatus.SHUTTING_DOWN, ProcessStatus.SHUTDOWN)

    # --8<-- [end:shutdown]
