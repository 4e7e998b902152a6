"""A KRaft node: the Raft manager of ``__cluster_metadata``, and the roles ``process.roles`` names.

Mirrors: kafka.server.KafkaRaftServer (core/src/main/scala/kafka/server/KafkaRaftServer.scala,
         Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: a broker role's request metrics only (no controller or Raft metrics); shutdown stops
         the broker, then the Raft manager, then the controller (the reasons below).

What ``kafka-lite broker start`` runs when ``process.roles`` is set, as Kafka's ``kafka.Kafka``
builds a ``KafkaRaftServer`` instead of a ``KafkaServer``. Building it does what must hold before
anything starts:

1. ``initialize_log_dirs``: every one of ``log.dirs`` and ``metadata.log.dir`` holds the same
   version-1 ``meta.properties``, written by ``kafka-lite storage format``, for this ``node.id``.
   A KRaft node never formats a directory itself (with no ZooKeeper to hand out a cluster id, a
   node that made one up would start a cluster of its own), so an unformatted directory stops it
   with an error naming the directory and the command.
2. ``bootstrap.checkpoint`` from ``metadata.log.dir``: the metadata.version an empty log starts at.
3. The Raft manager for ``__cluster_metadata``: its log in ``metadata.log.dir``, records read and
   written with the metadata record serde, and no listener of its own (the controller's socket
   server takes the voters' requests and ControllerApis hands them over).
4. The roles: a ``BrokerServer`` when ``process.roles`` has ``broker``, a ``ControllerServer`` when
   it has ``controller``; a node with both (*combined* mode) runs both over the one Raft manager. A
   broker-only node is not among ``controller.quorum.voters``: its Raft client is an *observer*,
   fetching the log from the voters and never voting.

``startup`` starts the Raft manager first, so that the controller and the broker register with a
running client, then the controller, then the broker (whose start-up waits for an active
controller). ``shutdown`` stops the broker first, while the controller it asks for its controlled
shutdown still runs; then the Raft manager, before the controller, because the controller's socket
server is the one the Raft manager's graceful resignation is answered through.
"""

from __future__ import annotations

import logging

from kafka_lite.common.metadata.metadata_record_serde import MetadataRecordSerde
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.metadata.bootstrap_directory import read_bootstrap_directory
from kafka_lite.raft.raft_config import RaftConfig
from kafka_lite.raft.tools.raft_manager import KafkaRaftManager
from kafka_lite.server.broker_metadata_checkpoint import initialize_log_dirs
from kafka_lite.server.broker_server import BrokerServer
from kafka_lite.server.controller_server import ControllerServer
from kafka_lite.server.kafka_config import BROKER_ROLE, CONTROLLER_ROLE, KafkaConfig

log = logging.getLogger(__name__)

METADATA_TOPIC = "__cluster_metadata"


class KafkaRaftServer:
    # --8<-- [start:init]
    def __init__(self, config: KafkaConfig, time: Time = SYSTEM) -> None:
        self.config = config
        self.time = time
        self.meta_properties = initialize_log_dirs(config.log_dirs, config.metadata_log_dir, config.node_id)
        # What the first active controller writes into an empty log: the metadata.version the
        # directory was formatted with (``storage format --release-version``).
        bootstrap_metadata = read_bootstrap_directory(config.metadata_log_dir)
        self.raft_manager = KafkaRaftManager(
            config.node_id, config.metadata_log_dir, RaftConfig.from_config(config.values),
            MetadataRecordSerde(), time, serve_own_listener=False,
            channel_builder=config.controller_channel_builder(),
        )  # fmt: skip
        self.broker = (
            BrokerServer(self.meta_properties, config, self.raft_manager, time)
            if BROKER_ROLE in config.process_roles
            else None
        )
        self.controller = (
            ControllerServer(self.meta_properties, config, self.raft_manager, time, bootstrap_metadata)
            if CONTROLLER_ROLE in config.process_roles
            else None
        )

    # --8<-- [end:init]

    # --8<-- [start:startup]
    def startup(self) -> None:
        self.raft_manager.startup()
        if self.controller is not None:
            self.controller.startup()
        if self.broker is not None:
            self.broker.startup()
        log.info("[KafkaRaftServer nodeId=%d] Kafka Server started", self.config.node_id)

    def shutdown(self) -> None:
        if self.broker is not None:
            self.broker.shutdown()
        self.raft_manager.shutdown()
        if self.controller is not None:
            self.controller.shutdown()

    # --8<-- [end:startup]
