"""A broker: every part started in Kafka's order, and stopped in the reverse.

Mirrors: kafka.server.KafkaServer (core/src/main/scala/kafka/server/KafkaServer.scala, Kafka 0.10.1)
         and kafka.server.KafkaHealthcheck (the broker's ephemeral registration)
Book:    chapter 2, 2.3 (the server's start-up), 5.2 (the group coordinator in every broker),
         7.1 (the controller inside every broker), 7.4 (shutting down: the controlled shutdown,
         then every part stopped in the reverse order)
Differs: of the dynamic configs, topics', brokers' (the replication throttle) and client
         ids' (client quotas); Kafka 0.11 also has users'. The controlled shutdown speaks only through
         ``NetworkClient`` (Kafka 0.10.1 keeps a ``BlockingChannel`` path for inter-broker protocols
         before 0.9) and does not wait after its last failed attempt. Client requests that arrive before the
         controller's first UpdateMetadata wait for it (``server/delayed_client_request.py``). The
         group coordinator's parts (its ``GroupConfig``, ``OffsetConfig``, purgatories and
         ``GroupMetadataManager``) are built here, where Kafka's ``GroupCoordinator.apply`` builds
         them, so that each is passed in explicitly.

Start-up order, as ``KafkaServer.startup``: scheduler, ZooKeeper (creating the chroot), cluster id,
log manager (loading and, after an unclean stop, recovering every log, each with its topic's
overrides from ZooKeeper), metadata cache, socket server and the ``metric.reporters`` on its request
metrics, the quota managers (clients' and replication's), replica manager, producer id manager,
controller, admin manager, group coordinator, transaction coordinator, request handlers, the dynamic
config manager (which applies later config changes to the live logs), and last the registration in
``/brokers/ids``: a broker is announced only once it can answer. ``KafkaApis`` gets each part it
uses, never the server. Shutdown starts with the controlled shutdown (the controller moves this
broker's leaderships to other brokers while it still serves), then goes the other way, in Kafka's
order (the transaction coordinator, then the group coordinator, after the replica and admin
managers, before the log manager); the log manager's shutdown writes the clean-shutdown marker so
the next start skips recovery.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from kafka_lite.clients.network_client import ClientRequest, ClientResponse, NetworkClient
from kafka_lite.common.errors import Errors, KafkaException
from kafka_lite.common.protocol.api_keys import ApiKeys, api_versions
from kafka_lite.common.security.scram.scram_credential_utils import CredentialCache
from kafka_lite.common.security.scram.scram_sasl_server import ScramSaslServer
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.controller.kafka_controller import KafkaController
from kafka_lite.coordinator.group_coordinator import GroupConfig, GroupCoordinator
from kafka_lite.coordinator.group_metadata_manager import GroupMetadataManager, OffsetConfig
from kafka_lite.coordinator.transaction.transaction_coordinator import TransactionCoordinator
from kafka_lite.coordinator.transaction.transaction_marker_channel_manager import (
    TransactionMarkerChannelManager,
)
from kafka_lite.coordinator.transaction.transaction_state_manager import (
    TransactionConfig,
    TransactionStateManager,
)
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_manager import LogManager
from kafka_lite.network.request_metrics import RequestMetrics
from kafka_lite.network.sasl_server_authenticator import AuthenticationStats
from kafka_lite.network.selector import Selector
from kafka_lite.network.socket_server import Listener, SocketServer
from kafka_lite.security.auth.authorizer import Authorizer
from kafka_lite.server import quota_factory
from kafka_lite.server.add_partitions_to_txn_manager import AddPartitionsToTxnManager
from kafka_lite.server.admin_manager import AdminManager
from kafka_lite.server.broker_metadata_checkpoint import (
    BROKER_ID_KEY,
    META_PROPERTIES,
    BrokerMetadataCheckpoint,
    ZkMetaProperties,
    get_broker_metadata,
)
from kafka_lite.server.config_handler import (
    BrokerConfigHandler,
    ClientIdConfigHandler,
    TopicConfigHandler,
    UserConfigHandler,
)
from kafka_lite.server.dynamic_config_manager import DynamicConfigManager
from kafka_lite.server.kafka_apis import KafkaApis
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.kafka_request_handler import KafkaRequestHandlerPool
from kafka_lite.server.metadata_cache import MetadataCache
from kafka_lite.server.producer_id_manager import ProducerIdManager
from kafka_lite.server.replica_manager import ReplicaManager
from kafka_lite.server.server_channel_builder import listeners_with_channel_builders
from kafka_lite.utils.delayed_operation import DelayedOperationPurgatory
from kafka_lite.utils.scheduler import KafkaScheduler
from kafka_lite.zk.zk_utils import (
    CONFIG_TYPE_BROKER,
    CONFIG_TYPE_CLIENT,
    CONFIG_TYPE_TOPIC,
    CONFIG_TYPE_USER,
    Broker,
    EndPoint,
    ZkUtils,
)

log = logging.getLogger(__name__)


class InconsistentBrokerIdException(KafkaException):
    pass


class KafkaServer:
    def __init__(self, config: KafkaConfig, time: Time = SYSTEM) -> None:
        self.config = config
        self.time = time
        self.broker_id = config.broker_id
        self.cluster_id: str | None = None
        self.zk: ZkUtils | None = None
        self.scheduler = KafkaScheduler(time=time)
        self.log_manager: LogManager | None = None
        self.metadata_cache = MetadataCache(self.broker_id, config.inter_broker_listener_name)
        self.socket_server: SocketServer | None = None
        self.authentication_stats = AuthenticationStats()  # SASL authentications, by framing and outcome
        self.credential_cache = CredentialCache()  # SCRAM credentials, kept current from /config/users
        self.replica_manager: ReplicaManager | None = None
        self.controller: KafkaController | None = None
        self.admin_manager: AdminManager | None = None
        self.group_coordinator: GroupCoordinator | None = None
        self.transaction_coordinator: TransactionCoordinator | None = None
        self.apis: KafkaApis | None = None
        self.request_handler_pool: KafkaRequestHandlerPool | None = None
        self.producer_id_manager: ProducerIdManager | None = None
        self.dynamic_config_manager: DynamicConfigManager | None = None
        self.authorizer: Authorizer | None = None
        self._started = False
        self._shutting_down = False
        self._shutdown_lock = threading.Lock()
        self._shutdown_done = threading.Event()
        self._session_lost = False  # ZooKeeper expired our session; register again on reconnecting

    # --8<-- [start:startup]
    def startup(self) -> None:
        c = self.config
        log.info("Broker %d starting", self.broker_id)
        self.scheduler.startup()
        self.zk = ZkUtils(
            c.zk_connect, c["zookeeper.session.timeout.ms"], c["zookeeper.connection.timeout.ms"]
        )
        self.zk.setup_common_paths()
        self.cluster_id = self.zk.get_or_create_cluster_id()
        self._check_broker_id()
        self.log_manager = LogManager(
            c.log_dirs,
            LogConfig.from_broker(c.log_config_props()),
            self.scheduler,
            topic_configs=self._topic_configs(),
            flush_check_ms=c["log.flush.scheduler.interval.ms"],
            flush_checkpoint_ms=c["log.flush.offset.checkpoint.interval.ms"],
            retention_check_ms=c["log.retention.check.interval.ms"],
            cleaner_enable=c["log.cleaner.enable"],
            cleaner_backoff_ms=c["log.cleaner.backoff.ms"],
            time=self.time,
            initial_task_delay_ms=c["log.initial.task.delay.ms"],
        )
        self.log_manager.startup()
        self.socket_server = SocketServer(
            listeners=self._listeners(),
            num_network_threads=c["num.network.threads"],
            queued_max_requests=c["queued.max.requests"],
            socket_request_max_bytes=c["socket.request.max.bytes"],
            max_connections_per_ip=c["max.connections.per.ip"],
            max_connections_per_ip_overrides=c.max_connections_per_ip_overrides,
            connections_max_idle_ms=c["connections.max.idle.ms"],
            send_buffer_bytes=c["socket.send.buffer.bytes"],
            receive_buffer_bytes=c["socket.receive.buffer.bytes"],
            time=self.time,
        )
        self.socket_server.startup()
        add_metric_reporters(
            c,
            self.socket_server.metrics,
            {e.listener_name: f"{e.host}:{e.port}" for e in self.advertised_endpoints()},
        )
        self.quota_managers = quota_factory.instantiate(c, self.time)
        self.replica_manager = ReplicaManager(
            c,
            self.time,
            self.zk,
            self.scheduler,
            self.log_manager,
            self.zk.get_topic_config,
            self.metadata_cache,
            quota_manager=self.quota_managers.follower,
            add_partitions_to_txn_manager_factory=lambda: build_add_partitions_to_txn_manager(
                self.broker_id, c, self.metadata_cache, self.time
            ),
        )
        self.replica_manager.startup()
        self.producer_id_manager = ProducerIdManager(self.broker_id, self.zk)
        self.controller = KafkaController(
            self.broker_id,
            self.zk,
            c["controller.socket.timeout.ms"],
            self.time,
            c.log_config_props(),
            auto_leader_rebalance_enable=c["auto.leader.rebalance.enable"],
            leader_imbalance_check_interval_seconds=c["leader.imbalance.check.interval.seconds"],
            leader_imbalance_per_broker_percentage=c["leader.imbalance.per.broker.percentage"],
            delete_topic_enable=c["delete.topic.enable"],
            channel_builder=c.inter_broker_channel_builder(),
            inter_broker_listener_name=c.inter_broker_listener_name,
        )
        self.controller.startup()
        self.admin_manager = AdminManager(c, self.metadata_cache, self.zk, self.time)
        self.group_coordinator = build_group_coordinator(
            self.broker_id, c, self.replica_manager, self.scheduler, self.time
        )
        self.group_coordinator.startup()
        self.transaction_coordinator = build_transaction_coordinator(
            self.broker_id, c, self.scheduler, self.replica_manager, self.metadata_cache,
            self.producer_id_manager, self.time,
        )  # fmt: skip
        self.transaction_coordinator.startup(c["transaction.abort.timed.out.transaction.cleanup.interval.ms"])
        # Kafka's ``authorizer``: built from authorizer.class.name and configured with every setting
        self.authorizer = self._authorizer()
        self.apis = KafkaApis(
            self.socket_server.request_channel,
            self.replica_manager,
            self.admin_manager,
            self.group_coordinator,
            self.transaction_coordinator,
            self.controller,
            self.metadata_cache,
            self.producer_id_manager,
            self.quota_managers,
            c,
            self.cluster_id,
            self.time,
            authorizer=self.authorizer,
        )
        self.request_handler_pool = KafkaRequestHandlerPool(
            self.socket_server.request_channel, self.apis, c["num.io.threads"]
        )
        self.dynamic_config_manager = DynamicConfigManager(
            self.zk,
            {
                CONFIG_TYPE_TOPIC: TopicConfigHandler(
                    self.log_manager, c.log_config_props(), self.broker_id, self.quota_managers
                ),
                CONFIG_TYPE_BROKER: BrokerConfigHandler(
                    self.broker_id, self.quota_managers, self.replica_manager
                ),
                CONFIG_TYPE_CLIENT: ClientIdConfigHandler(self.quota_managers),
                CONFIG_TYPE_USER: UserConfigHandler(self.credential_cache),
            },
            self.time,
        )
        self.dynamic_config_manager.startup()
        self._register()
        self.zk.client.add_listener(self._on_zk_state)
        self._started = True
        log.info(
            "Broker %d started on %s (cluster %s)", self.broker_id,
            ",".join(e.connection_string for e in self.advertised_endpoints()), self.cluster_id,
        )  # fmt: skip

    # --8<-- [end:startup]

    # --8<-- [start:listeners]
    def _listeners(self) -> list[Listener]:
        """Each of ``listeners`` with the channel builder of its security protocol (Kafka 0.10.2's
        ``SocketServer.startup`` builds one per end point)."""
        return listeners_with_channel_builders(
            self.config,
            self.config.listeners,
            api_versions(KafkaApis.HANDLED),
            self.authentication_stats,
            scram_server=lambda: ScramSaslServer(self.credential_cache.get),
        )

    def advertised_endpoints(self) -> list[EndPoint]:
        """``advertised.listeners`` (or ``listeners``) as registered: port 0 becomes the port the
        listener bound (Kafka's ``boundPort(listenerName)``), and a host that binds every interface
        becomes 127.0.0.1 (Kafka asks for the machine's canonical host name)."""
        endpoints = []
        for e in self.config.advertised_listeners:
            host = e.host if e.host not in ("", "0.0.0.0") else "127.0.0.1"
            port = e.port or self.socket_server.bound_port(e.listener_name)
            endpoints.append(EndPoint(host, port, e.listener_name, e.security_protocol))
        return endpoints

    def _register(self) -> None:
        """Kafka 0.10.2's ``KafkaHealthcheck.register`` (KIP-103): every advertised end point with its
        listener name, and at the top level the first PLAINTEXT one for readers older than end points
        (or the first of all, where Kafka writes none)."""
        endpoints = self.advertised_endpoints()
        first = next((e for e in endpoints if e.security_protocol == "PLAINTEXT"), endpoints[0])
        self.zk.register_broker(
            self.broker_id, first.host, first.port, self.config["broker.rack"], endpoints=endpoints
        )

    # --8<-- [end:listeners]

    def _topic_configs(self) -> dict[str, LogConfig]:
        """Every topic's overrides from ZooKeeper, so that each log opens with its topic's settings
        (Kafka's ``fetchAllTopicConfigs`` in ``createLogManager``). An override set that does not
        parse is logged and the topic keeps the broker's defaults, rather than stopping the broker."""
        defaults = self.config.log_config_props()
        configs = {}
        for topic, overrides in self.zk.fetch_all_topic_configs().items():
            if overrides:
                try:
                    configs[topic] = LogConfig.from_broker(defaults, overrides)
                except KafkaException as e:
                    log.error("Ignoring the config overrides of topic %s in ZooKeeper: %s", topic, e)
        return configs

    # --8<-- [start:new_session]
    def _on_zk_state(self, state) -> None:
        """Kazoo's connection states. LOST means ZooKeeper expired our session: our ephemeral
        ``/brokers/ids/N`` is gone and the controller counts us dead. Kazoo then opens a new session;
        when it is CONNECTED, register again (Kafka's ``KafkaHealthcheck.handleNewSession``); the
        controller's watch on ``/controller`` re-runs the election by itself."""
        from kazoo.protocol.states import KazooState

        if self._shutting_down:
            return  # our own close ends the session too: nothing to recover
        if state == KazooState.LOST:
            log.warning("Broker %d: ZooKeeper session expired", self.broker_id)
            self._session_lost = True
        elif state == KazooState.CONNECTED and self._session_lost:
            self._session_lost = False
            # A listener must not block kazoo's thread: re-register from a thread of our own.
            threading.Thread(target=self._register_again, name="zk-session-handler", daemon=True).start()

    def _register_again(self) -> None:
        if self._shutdown_done.is_set():
            return
        try:
            self._register()
            log.info("Broker %d re-registered in ZooKeeper under a new session", self.broker_id)
        except Exception as e:  # kazoo's errors are many; the next session change retries
            log.warning("Broker %d could not re-register in ZooKeeper: %s", self.broker_id, e)

    # --8<-- [end:new_session]

    @property
    def running(self) -> bool:
        """Started, and not (yet) shut down."""
        return self._started and not self._shutting_down

    @property
    def port(self) -> int:
        return self.socket_server.port

    def _check_broker_id(self) -> None:
        """Each log directory remembers the broker id it belongs to (``meta.properties``, version 0):
        starting a broker with another id on the same data is refused, as Kafka refuses it, and so is
        a directory formatted for a KRaft node (version 1). A directory without the file gets one."""
        stored = get_broker_metadata(self.config.log_dirs, ignore_missing=True)
        if stored.version != 0:
            raise KafkaException(
                f"Found unexpected version in loaded `meta.properties`: {stored}. Zk-based brokers only "
                f"support version 0 (which is implicit when the `version` field is missing)."
            )
        if stored.props and stored.require(BROKER_ID_KEY, stored.broker_id) != self.broker_id:
            raise InconsistentBrokerIdException(
                f"Configured broker.id {self.broker_id} doesn't match stored broker.id {stored.broker_id} in "
                f"{stored.source}. If you moved your data, make sure your configured broker.id matches."
            )
        for d in self.config.log_dirs:
            d.mkdir(parents=True, exist_ok=True)
            checkpoint = BrokerMetadataCheckpoint(Path(d) / META_PROPERTIES, self.time)
            if not checkpoint.file.exists():
                checkpoint.write(ZkMetaProperties(self.broker_id).to_properties())

    # --8<-- [start:controlled_shutdown]
    def controlled_shutdown(self) -> bool:
        """Ask the controller to move this broker's leaderships away before it stops (book 7.4,
        Kafka's ``KafkaServer.controlledShutdown``): find the controller in ZooKeeper, send it a
        ControlledShutdown request, and try again (up to ``controlled.shutdown.max.retries``
        attempts, ``controlled.shutdown.retry.backoff.ms`` apart) while it fails or the answer lists
        partitions this broker still leads. The controller may move while this runs: each attempt
        asks ZooKeeper afresh. Returns whether it succeeded; if not, the shutdown goes on anyway and
        the controller handles this broker's leaderships as a failure when its registration goes.

        The last broker of a cluster to stop leads replicated partitions whose other replicas are
        all stopped: no attempt can move them, and it shuts down after its last attempt."""
        c = self.config
        if not c["controlled.shutdown.enable"]:
            return False
        log.info("Broker %d starting controlled shutdown", self.broker_id)
        replicated, alone = self._partitions_led()
        succeeded = self._network_client_controlled_shutdown(c["controlled.shutdown.max.retries"])
        if succeeded:
            # The controller answered "none remaining": every replicated partition led here has a new leader.
            log.info(
                "Controlled shutdown succeeded: leadership of %d partitions moved to other brokers: %s",
                len(replicated), _tps(replicated),
            )  # fmt: skip
            if alone:
                log.info("%d partitions with no other replica go offline: %s", len(alone), _tps(alone))
        else:
            log.warning(
                "Proceeding to do an unclean shutdown as all the controlled shutdown attempts failed "
                "(its leaderships not moved; its logs still close cleanly)"
            )
        return succeeded

    def _controller_address(self, controller: Broker) -> EndPoint:
        """Where the controlled shutdown reaches the controller: its end point on the inter-broker
        listener, found by the listener's name as Kafka 0.10.2 finds it (KIP-103); 0.10.1 finds it by
        the inter-broker security protocol. kafka_lite's brokers register their end points by
        listener name (``cluster up --secure`` names the brokers' own ``INTERNAL``), so the name is
        what finds it."""
        return controller.end_point(self.config.inter_broker_listener_name)

    def _network_client_controlled_shutdown(self, retries: int) -> bool:
        c = self.config
        timeout_ms = c["controller.socket.timeout.ms"]
        client = NetworkClient(
            Selector(time=self.time, channel_builder=c.inter_broker_channel_builder()),
            f"broker-{self.broker_id}-controlled-shutdown", request_timeout_ms=timeout_ms,
            time=self.time,
        )  # fmt: skip
        prev_controller: Broker | None = None
        io_error = False
        try:
            for attempt in range(1, retries + 1):
                # 1. The controller as ZooKeeper has it now: it may have moved since the last attempt.
                controller = self._current_controller()
                if controller is not None and (io_error or controller != prev_controller):
                    io_error = False
                    if prev_controller is not None:
                        client.close(str(prev_controller.id))
                    prev_controller = controller
                    address = self._controller_address(controller)
                    client.set_node(str(controller.id), address.host, address.port)
                # 2. The request, and the partitions it still leads.
                if prev_controller is not None:
                    response = _blocking_send_and_receive(
                        client, str(prev_controller.id), ApiKeys.CONTROLLED_SHUTDOWN, 1,
                        {"broker_id": self.broker_id}, timeout_ms, self.time,
                    )  # fmt: skip
                    if response is None:
                        io_error = True
                        log.warning(
                            "Error during controlled shutdown, possibly because leader movement took longer "
                            "than the configured controller.socket.timeout.ms (%d ms)", timeout_ms,
                        )  # fmt: skip
                    else:
                        remaining = [(p["topic"], p["partition"]) for p in response["partitions_remaining"]]
                        if response["error_code"] == Errors.NONE.code and not remaining:
                            return True
                        log.info(
                            "Remaining partitions to move: %s",
                            ",".join(f"[{t},{p}]" for t, p in remaining),
                        )
                        log.info("Error code from controller: %d", response["error_code"])
                if attempt < retries:
                    self.time.sleep(c["controlled.shutdown.retry.backoff.ms"])
                    log.warning("Retrying controlled shutdown after the previous attempt failed...")
            return False
        finally:
            client.close_all()

    def _current_controller(self) -> Broker | None:
        try:
            controller_id = self.zk.get_controller_id()
            return self.zk.get_broker(controller_id) if controller_id >= 0 else None
        except Exception as e:  # kazoo's errors are many: a session being lost, a connection timing out
            log.warning("Broker %d cannot read the controller from ZooKeeper: %s", self.broker_id, e)
            return None

    def _partitions_led(self) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
        """The partitions this broker leads, as the controller last told every broker: those with
        other replicas (the controller moves them), and those without."""
        cache = self.metadata_cache
        led = [
            ((topic, partition), state)
            for topic in cache.topics()
            for partition, state in sorted(cache.partitions(topic).items())
            if state.leader == self.broker_id
        ]
        return [tp for tp, s in led if len(s.replicas) > 1], [tp for tp, s in led if len(s.replicas) <= 1]

    # --8<-- [end:controlled_shutdown]

    def _authorizer(self) -> Authorizer | None:
        """The authorizer ``authorizer.class.name`` names, configured with the broker's settings, or
        None (every request allowed)."""
        if self.config.authorizer_class is None:
            return None
        authorizer = self.config.authorizer_class(time=self.time)
        authorizer.configure(self.config.values)
        return authorizer

    # --8<-- [start:shutdown]
    def shutdown(self) -> None:
        with self._shutdown_lock:  # once, whoever calls it (a signal handler and a test may both)
            if self._shutting_down:
                log.debug("Broker %d: shutdown called again", self.broker_id, stack_info=True)
                return
            self._shutting_down = True
        log.info("Broker %d shutting down", self.broker_id)
        if self.socket_server is not None:
            # Kafka closes its Metrics (and so its reporters) last; a reporter that publishes through
            # the brokers is closed first here, while this broker still answers its last sends, and
            # before the controlled shutdown: a broker shutting down is given no new replica, so a
            # topic the last flush creates could not be placed on it.
            self.socket_server.metrics.close()
        if self._started:
            self.controlled_shutdown()
        if self.socket_server is not None:
            self.socket_server.shutdown()
        if self.request_handler_pool is not None:
            self.request_handler_pool.shutdown()
        if self.dynamic_config_manager is not None:
            self.dynamic_config_manager.shutdown()
        self.scheduler.shutdown()
        if self.apis is not None:
            self.apis.shutdown()
        if self.replica_manager is not None:
            self.replica_manager.shutdown()
        if self.admin_manager is not None:
            self.admin_manager.shutdown()
        if self.transaction_coordinator is not None:
            self.transaction_coordinator.shutdown()
        if self.group_coordinator is not None:
            self.group_coordinator.shutdown()
        if self.log_manager is not None:
            self.log_manager.shutdown()
        if self.controller is not None:
            self.controller.shutdown()
        if self.authorizer is not None:
            self.authorizer.close()
        if self.zk is not None:
            self.zk.close()
        self._shutdown_done.set()
        log.info("Broker %d shut down", self.broker_id)

    # --8<-- [end:shutdown]


def add_metric_reporters(config: KafkaConfig, metrics: RequestMetrics, own_addresses: dict[str, str]) -> None:
    """An instance of each class in ``metric.reporters``, configured with the broker's settings and
    added to the socket server's request ``metrics`` (Kafka's ``getConfiguredInstances`` and
    ``new Metrics(metricConfig, reporters, time)``). A reporter that sends somewhere is told this
    broker's own address, unless ``request.metrics.reporter.bootstrap.servers`` names another: the
    inter-broker listener's, from ``own_addresses`` (listener name -> ``host:port``, as advertised),
    since the reporter logs in as the broker's own connections do.

    A ZooKeeper broker and a KRaft broker load their reporters alike; Kafka 3.3 shares this step
    between its two servers as ``Server.initializeMetrics``."""
    configs = dict(config.values)
    if not configs["request.metrics.reporter.bootstrap.servers"]:
        configs["request.metrics.reporter.bootstrap.servers"] = own_addresses.get(
            config.inter_broker_listener_name, next(iter(own_addresses.values()))
        )
    for cls in config.metric_reporter_classes:
        reporter = cls()
        reporter.configure(configs)
        metrics.add_reporter(reporter)


# --8<-- [start:group_coordinator]
def build_group_coordinator(
    broker_id: int, config: KafkaConfig, replica_manager: ReplicaManager, scheduler, time: Time
) -> GroupCoordinator:
    """The group coordinator and its storage, from the broker's ``group.*`` and ``offset*``
    settings (Kafka's ``GroupCoordinator.apply``): its own purgatories for delayed heartbeats
    and joins, and a group manager that keeps groups and offsets in ``__consumer_offsets``
    through the replica manager. A ZooKeeper broker and a KRaft broker build it alike."""
    c = config
    offset_config = OffsetConfig(
        max_metadata_size=c["offset.metadata.max.bytes"],
        offsets_retention_ms=c["offsets.retention.minutes"] * 60 * 1000,
        offsets_retention_check_interval_ms=c["offsets.retention.check.interval.ms"],
        offsets_topic_num_partitions=c["offsets.topic.num.partitions"],
        offsets_topic_segment_bytes=c["offsets.topic.segment.bytes"],
        offset_commit_timeout_ms=c["offsets.commit.timeout.ms"],
        offset_commit_required_acks=c["offsets.commit.required.acks"],
    )
    group_config = GroupConfig(
        group_min_session_timeout_ms=c["group.min.session.timeout.ms"],
        group_max_session_timeout_ms=c["group.max.session.timeout.ms"],
        group_initial_rebalance_delay_ms=c["group.initial.rebalance.delay.ms"],
    )
    group_manager = GroupMetadataManager(broker_id, offset_config, replica_manager, time, scheduler)
    return GroupCoordinator(
        broker_id,
        group_config,
        group_manager,
        DelayedOperationPurgatory("Heartbeat", time, broker_id=broker_id),
        DelayedOperationPurgatory("Rebalance", time, broker_id=broker_id),
        time,
    )


# --8<-- [end:group_coordinator]


def build_add_partitions_to_txn_manager(
    broker_id: int, config: KafkaConfig, metadata_cache, time: Time
) -> AddPartitionsToTxnManager:
    """KIP-890 part 1's sender of verifications (Kafka 3.6 builds it beside the replica manager), with
    a network client of its own to the coordinators, started."""
    network_client = NetworkClient(
        Selector(time=time, channel_builder=config.inter_broker_channel_builder()),
        f"broker-{broker_id}-add-partitions-to-txn-sender",
        max_in_flight_requests_per_connection=1,
        request_timeout_ms=TransactionConfig.request_timeout_ms,  # Kafka's request.timeout.ms, 30 s
        time=time,
    )
    manager = AddPartitionsToTxnManager(broker_id, metadata_cache, network_client, time)
    manager.start()
    return manager


def build_transaction_coordinator(
    broker_id: int,
    config: KafkaConfig,
    scheduler,
    replica_manager: ReplicaManager,
    metadata_cache,
    producer_id_manager,
    time: Time,
) -> TransactionCoordinator:
    """The transaction coordinator and its parts, from the broker's ``transaction*`` settings
    (Kafka's ``TransactionCoordinator.apply``): a state manager over ``__transaction_state``, and
    a marker channel manager with its own network client to the other brokers."""
    c = config
    txn_config = TransactionConfig(
        transactional_id_expiration_ms=c["transactional.id.expiration.ms"],
        transaction_max_timeout_ms=c["transaction.max.timeout.ms"],
        transaction_log_num_partitions=c["transaction.state.log.num.partitions"],
        transaction_log_replication_factor=c["transaction.state.log.replication.factor"],
        transaction_log_segment_bytes=c["transaction.state.log.segment.bytes"],
        transaction_log_min_insync_replicas=c["transaction.state.log.min.isr"],
        abort_timed_out_transactions_interval_ms=c[
            "transaction.abort.timed.out.transaction.cleanup.interval.ms"
        ],
        remove_expired_transactional_ids_interval_ms=c[
            "transaction.remove.expired.transaction.cleanup.interval.ms"
        ],
    )
    txn_state_manager = TransactionStateManager(broker_id, scheduler, replica_manager, txn_config, time)
    network_client = NetworkClient(
        Selector(time=time, channel_builder=config.inter_broker_channel_builder()),
        f"broker-{broker_id}-txn-marker-sender",
        max_in_flight_requests_per_connection=1,
        request_timeout_ms=txn_config.request_timeout_ms,
        time=time,
    )
    txn_marker_channel_manager = TransactionMarkerChannelManager(
        broker_id, metadata_cache, network_client, txn_state_manager, time
    )
    return TransactionCoordinator(
        broker_id,
        scheduler,
        producer_id_manager,
        txn_state_manager,
        txn_marker_channel_manager,
        time,
    )


def _tps(partitions: list[tuple[str, int]]) -> str:
    return ", ".join(f"{t}-{p}" for t, p in partitions) or "none"


def _blocking_send_and_receive(
    client: NetworkClient, node: str, api: ApiKeys, version: int, body: dict, timeout_ms: int, time: Time
) -> dict | None:
    """Connect to ``node``, send one request and wait for its answer (Kafka's
    ``NetworkClientBlockingOps.blockingReady`` and ``blockingSendAndReceive``); None if the connection
    could not be made, dropped, or nothing came back within ``timeout_ms``."""
    deadline = time.milliseconds() + timeout_ms
    while not client.ready(node, time.milliseconds()):
        if time.milliseconds() >= deadline or client.connection_failed(node):
            return None
        client.poll(min(100, max(0, deadline - time.milliseconds())))
    done: list[ClientResponse] = []
    client.send(ClientRequest(node, api, version, body, callback=done.append), time.milliseconds())
    while not done:
        if time.milliseconds() >= deadline:
            return None
        client.poll(min(100, max(0, deadline - time.milliseconds())))
    return None if done[0].disconnected else done[0].body
