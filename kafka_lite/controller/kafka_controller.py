"""The controller: one broker, elected through ZooKeeper, that decides leaders and tells the others.

Mirrors: kafka.controller.KafkaController, ControllerContext and IsrChangeNotificationListener
         (core/src/main/scala/kafka/controller/KafkaController.scala, Kafka 0.10.1),
         PartitionStateMachine's PartitionModificationsListener, kafka.server.ZookeeperLeaderElector,
         KafkaController's SessionExpirationListener,
         and Kafka 0.11's
         ControllerEventManager (one thread processing the controller's events in order)
Book:    chapter 7, 7.1 (election 7.1.1, the controller context 7.1.2, ZooKeeper listeners 7.1.3),
         7.4 (the controller's side of a controlled shutdown)
Labs:    lab 13 (on_broker_failure)
Differs: election, failover, new topics, brokers joining and leaving, ISR-change notifications,
         topic deletion (``topic_deletion_manager.py``) and controlled shutdown; partition
         reassignment and preferred-replica election (with the auto leader rebalance) are delegated
         to ``partition_reassignment.py`` and ``preferred_replica_election.py``. The listeners are
         registered after the context is read, not before (kazoo's watches report the children at
         registration, see ``on_controller_failover``). Two later Kafkas' behaviours sit behind named
         helpers: ``bounced_brokers`` (Kafka 2.2) and ``read_all_topics`` (Kafka 1.1).

Election: every broker tries to create the ephemeral ``/controller`` znode; the one that succeeds is
the controller, bumps ``/controller_epoch`` (so brokers can ignore a deposed controller's requests)
and runs ``on_controller_failover``. The others watch ``/controller`` and try again when it vanishes
(its owner's ZooKeeper session ended).

Why one event thread: ZooKeeper watches fire on kazoo's thread, LeaderAndIsr responses on the channel
threads. Putting every event on one queue and handling them one at a time means the controller's
state (``ControllerContext``) is only ever touched by one thread: Kafka 0.11 replaced 0.10's
``controllerLock`` with exactly this.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Mapping
from time import monotonic
from typing import Any

from kafka_lite.common.errors import BrokerNotAvailableException, ControllerMovedException, Errors
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.controller.controller_channel_manager import (
    ControllerBrokerRequestBatch,
    ControllerChannelManager,
)
from kafka_lite.controller.partition_leader_selector import (
    ControlledShutdownLeaderSelector,
    OfflinePartitionLeaderSelector,
    PreferredReplicaPartitionLeaderSelector,
    ReassignedPartitionLeaderSelector,
    ReassignedPartitionsContext,
    StateChangeFailedException,
)
from kafka_lite.controller.partition_reassignment import PartitionReassignment
from kafka_lite.controller.partition_state_machine import PartitionState, PartitionStateMachine
from kafka_lite.controller.preferred_replica_election import PreferredReplicaElection
from kafka_lite.controller.replica_state_machine import PartitionAndReplica, ReplicaState, ReplicaStateMachine
from kafka_lite.controller.topic_deletion_manager import DeleteTopicsListener, TopicDeletionManager
from kafka_lite.log.log_config import LogConfig
from kafka_lite.network.channel_builders import PLAINTEXT_CHANNEL_BUILDER, ChannelBuilder
from kafka_lite.utils.scheduler import KafkaScheduler, Scheduler
from kafka_lite.zk.zk_utils import (
    BROKER_IDS_PATH,
    BROKER_TOPICS_PATH,
    CONTROLLER_PATH,
    DELETE_TOPICS_PATH,
    ISR_CHANGE_NOTIFICATION_PATH,
    Broker,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ZkUtils,
    topic_path,
)

log = logging.getLogger(__name__)


class ControllerContext:
    """What the controller knows of the cluster (read from ZooKeeper at failover, kept up by events)."""

    def __init__(self) -> None:
        self.live_brokers_by_id: dict[int, Broker] = {}
        # Brokers that asked for a controlled shutdown: still registered, no longer "live" to the
        # selectors and the metadata, so that no leadership moves onto them.
        self.shutting_down_broker_ids: set[int] = set()
        self.all_topics: set[str] = set()
        self.partition_replica_assignment: dict[TopicPartition, list[int]] = {}
        self.partition_leadership: dict[TopicPartition, tuple[LeaderAndIsr, int]] = {}
        self.partitions_being_reassigned: dict[TopicPartition, ReassignedPartitionsContext] = {}
        self.partitions_undergoing_preferred_replica_election: set[TopicPartition] = set()
        # Topics whose deletion has been asked for and not completed. Kafka 0.10.1 keeps this set on
        # its TopicDeletionManager; the state machines only ask whether a topic is in it.
        self.topics_to_be_deleted: set[str] = set()

    def clear(self) -> None:
        """Forget everything, as a new controller starts (the selectors keep this same object)."""
        self.__init__()

    def remove_topic(self, topic: str) -> None:
        """Forget a deleted topic (Kafka's ``ControllerContext.removeTopic``)."""
        for tp in [tp for tp in self.partition_replica_assignment if tp[0] == topic]:
            del self.partition_replica_assignment[tp]
            self.partition_leadership.pop(tp, None)
        self.all_topics.discard(topic)

    def live_broker_ids(self) -> set[int]:
        return set(self.live_brokers_by_id) - self.shutting_down_broker_ids

    def live_or_shutting_down_broker_ids(self) -> set[int]:
        return set(self.live_brokers_by_id)

    def live_brokers(self) -> list[Broker]:
        return sorted(
            (b for b in self.live_brokers_by_id.values() if b.id not in self.shutting_down_broker_ids),
            key=lambda b: b.id,
        )

    def live_or_shutting_down_brokers(self) -> list[Broker]:
        """What the brokers' metadata lists: a broker shutting down still serves until it stops, so
        clients and followers must still reach it (for the partitions it could not hand over)."""
        return sorted(self.live_brokers_by_id.values(), key=lambda b: b.id)

    def replicas_for_partitions(self, partitions) -> list[PartitionAndReplica]:
        return [(tp[0], tp[1], r) for tp in partitions for r in self.partition_replica_assignment.get(tp, [])]

    def replicas_for_topic(self, topic: str) -> list[PartitionAndReplica]:
        return self.replicas_for_partitions(tp for tp in self.partition_replica_assignment if tp[0] == topic)

    def replicas_on_brokers(self, broker_ids) -> list[PartitionAndReplica]:
        return [(tp[0], tp[1], b) for b in broker_ids for tp in self.partitions_on_broker(b)]

    def all_live_replicas(self) -> list[PartitionAndReplica]:
        return self.replicas_on_brokers(sorted(self.live_broker_ids()))

    def partitions_on_broker(self, broker_id: int) -> list[TopicPartition]:
        return [tp for tp, replicas in self.partition_replica_assignment.items() if broker_id in replicas]


class KafkaController:
    # What sends the controller's requests to the brokers. kafka_lite.testing's controller harness
    # puts a recorder here, so a notebook or a test sees each request without a broker to receive it.
    channel_manager_class = ControllerChannelManager

    def __init__(
        self,
        broker_id: int,
        zk: ZkUtils,
        socket_timeout_ms: int = 30_000,
        time: Time = SYSTEM,
        log_config_props: Mapping[str, Any] | None = None,
        auto_leader_rebalance_enable: bool = False,
        leader_imbalance_check_interval_seconds: int = 300,
        leader_imbalance_per_broker_percentage: int = 10,
        auto_rebalance_scheduler: Scheduler | None = None,
        delete_topic_enable: bool = False,
        channel_builder: ChannelBuilder = PLAINTEXT_CHANNEL_BUILDER,
        inter_broker_listener_name: str = "PLAINTEXT",
    ) -> None:
        """``log_config_props``: the broker's defaults of the topic settings (``KafkaConfig.log_config_props``),
        which a topic's overrides in ZooKeeper replace; the controller reads ``unclean.leader.election.enable``
        from them. The ``auto_leader_rebalance_*``/``leader_imbalance_*`` arguments are the broker's
        settings of those names; ``auto_rebalance_scheduler`` runs the rebalance check (a
        ``MockScheduler`` in tests; a ``KafkaScheduler`` on ``time`` by default).
        ``delete_topic_enable``: the broker's ``delete.topic.enable``. ``channel_builder``: how its
        connections to the brokers authenticate (``security.inter.broker.protocol``);
        ``inter_broker_listener_name``: the listener it connects to them on (Kafka 0.10.2's
        ``inter.broker.listener.name``)."""
        self.broker_id = broker_id
        self.zk = zk
        self.log_config_props = dict(log_config_props or {})
        self.time = time
        self.socket_timeout_ms = socket_timeout_ms
        self.channel_builder = channel_builder
        self.inter_broker_listener_name = inter_broker_listener_name
        self.epoch = 0
        self.active_controller_id = -1
        self.context = ControllerContext()
        self.channel_manager: ControllerChannelManager | None = None
        # The selectors hold the context, which a new controller clears rather than replaces.
        self.offline_partition_selector = OfflinePartitionLeaderSelector(
            self.context, self.unclean_leader_election_enabled
        )
        self.reassigned_partition_leader_selector = ReassignedPartitionLeaderSelector(self.context)
        self.preferred_replica_partition_leader_selector = PreferredReplicaPartitionLeaderSelector(
            self.context
        )
        self.controlled_shutdown_partition_leader_selector = ControlledShutdownLeaderSelector(self.context)
        self.partition_state_machine = PartitionStateMachine(self)
        self.replica_state_machine = ReplicaStateMachine(self)
        self.isr_change_notification_listener = IsrChangeNotificationListener(self, zk)
        self.partition_reassignment = PartitionReassignment(self)
        self.preferred_replica_election = PreferredReplicaElection(self)
        self.auto_leader_rebalance_enable = auto_leader_rebalance_enable
        self.leader_imbalance_check_interval_seconds = leader_imbalance_check_interval_seconds
        self.leader_imbalance_per_broker_percentage = leader_imbalance_per_broker_percentage
        self.auto_rebalance_scheduler = auto_rebalance_scheduler or KafkaScheduler(
            "controller-auto-rebalance", time
        )
        self._auto_rebalance_scheduled = False
        self.delete_topic_enable = delete_topic_enable
        self.topic_deletion_manager = TopicDeletionManager(self)  # made again at each failover
        self.delete_topics_listener = DeleteTopicsListener(self, zk)
        self._events: queue.Queue[tuple[str, Callable[[], None]] | None] = queue.Queue()
        self._thread = threading.Thread(
            target=self._process_events, name="controller-event-thread", daemon=True
        )
        self._watch_generation = 0  # watches registered under an older generation stop themselves
        self._running = True

    # -- the event thread -------------------------------------------------------------------------------------

    def _put(self, name: str, action: Callable[[], None]) -> None:
        if self._running:
            self._events.put((name, action))

    def put_event(self, name: str, action: Callable[[], None]) -> None:
        """Queue ``action`` for the event thread: how a callback on another thread (a StopReplica
        answer) changes the controller's state."""
        self._put(name, action)

    def take_event(self, timeout_s: float = 0) -> tuple[str, Callable[[], None]] | None:
        """The test harness's way in (``kafka_lite.testing.controller_harness``), and its only one:
        the next queued event as (name, action), not run, or None if none came within ``timeout_s``.

        Kafka's own controller tests step a controller whose event thread runs; kafka_lite's
        harness leaves the thread unstarted and runs each event on the caller's thread instead, so
        that a notebook, a lab grader or a test sees the controller's state between two events
        without a race. Everything else the harness does goes through the controller's public
        entry points (``elect``, ``handle_broker_change``, ``handle_topic_change``, ``shutdown``)."""
        try:
            return self._events.get(timeout=timeout_s) if timeout_s > 0 else self._events.get_nowait()
        except queue.Empty:
            return None

    def _process_events(self) -> None:
        while True:
            event = self._events.get()
            if event is None:
                return
            name, action = event
            try:
                action()
            except Exception:
                log.exception("Controller %d: error processing %s", self.broker_id, name)

    def startup(self) -> None:
        self._thread.start()
        self.register_session_expiration_listener()
        self.zk.watch_data(CONTROLLER_PATH, self._on_controller_znode)
        self._put("Startup", self.elect)

    def shutdown(self) -> None:
        self._running = False
        self._events.put(None)
        if self._thread.is_alive():  # a harness-stepped controller never started its thread
            self._thread.join(10)
        self.on_controller_resignation()

    def is_active(self) -> bool:
        return self.active_controller_id == self.broker_id and self._running

    # -- election ------------------------------------------------------------------------------------------------

    def _on_controller_znode(self, data, stat, *args) -> bool:
        if not self._running:
            return False
        self._put("ControllerChange", self.elect if data is None else self._maybe_resign)
        return True

    # --8<-- [start:elect]
    def elect(self) -> None:
        """Kafka's ``ZookeeperLeaderElector.elect``: the Startup event, and what a vanished
        ``/controller`` queues."""
        if self.zk.try_elect_controller(self.broker_id):
            self.active_controller_id = self.broker_id
            log.info("Broker %d is the controller", self.broker_id)
            try:
                self.on_controller_failover()
            except Exception:
                log.exception("Error while becoming the controller on broker %d", self.broker_id)
                self.resign()
        else:
            self.active_controller_id = self.zk.get_controller_id()
            log.info("Broker %d: the controller is broker %d", self.broker_id, self.active_controller_id)

    # --8<-- [end:elect]

    def resign(self) -> None:
        """Kafka's ``ZookeeperLeaderElector.resign``, taken when a failover fails half way (a ZooKeeper
        read lost its connection): a controller that kept ``/controller`` with a half-read context
        would count live brokers dead and refuse their controlled shutdowns, and no other broker would
        stand while its znode lived. So it lets go of everything it holds and deletes ``/controller``;
        every broker's watch then runs the election again, this one's included.

        Kafka's elector only forgets the leader id here and lets the next failover start afresh;
        kafka_lite clears the context and state machines at once, so that a broker that loses the
        next election holds nothing it read as controller."""
        self.active_controller_id = -1
        self.on_controller_resignation()
        self.zk.delete_controller_path(self.broker_id)

    # --8<-- [start:session_expiration]
    def register_session_expiration_listener(self) -> None:
        """Kafka's ``SessionExpirationListener``: hear when ZooKeeper expires this broker's session."""
        self.zk.client.add_listener(self._on_zk_session_state)

    def _on_zk_session_state(self, state) -> None:
        """ZooKeeper expired our session (kazoo's LOST): the ephemeral ``/controller`` went with it, and
        another broker may be the controller already. Resign first, ahead of anything the watches
        report once the new session is up (Kafka's ``handleNewSession`` runs before ZkClient fires its
        listeners again). A controller that went on handling those reports would write leaders and
        ISRs over the new controller's, whose cache would no longer match ZooKeeper. The
        ``/controller`` watch then runs the election again."""
        from kazoo.protocol.states import KazooState

        if state == KazooState.LOST:
            self._put("SessionExpiration", self._handle_session_expiration)

    def _handle_session_expiration(self) -> None:
        was_active = self.active_controller_id == self.broker_id
        self.active_controller_id = -1  # unknown until the /controller watch reads it again
        if was_active:
            self.on_controller_resignation()

    # --8<-- [end:session_expiration]

    def _maybe_resign(self) -> None:
        was_active = self.active_controller_id == self.broker_id
        self.active_controller_id = self.zk.get_controller_id()
        if was_active and self.active_controller_id != self.broker_id:
            self.on_controller_resignation()

    def _resign(self) -> None:
        self._watch_generation += 1
        self._stop_auto_rebalance()
        if self.channel_manager is not None:
            self.channel_manager.shutdown()
            self.channel_manager = None

    # --8<-- [start:on_controller_resignation]
    def on_controller_resignation(self) -> None:
        """Another broker is the controller now (or this one is stopping): drop everything a deposed
        controller holds (Kafka's ``onControllerResignation``). Its watches stop themselves (the
        generation moves on), both state machines forget their states, the channel manager's
        threads stop, and the context and epoch are cleared, so that nothing this broker decided
        as controller is acted on again; a later election reads it all from ZooKeeper afresh."""
        log.debug("Controller resigning, broker id %d", self.broker_id)
        self._resign()
        self.partition_state_machine.shutdown()
        self.replica_state_machine.shutdown()
        self.context.clear()
        self.epoch = 0
        log.info("Broker %d resigned as the controller", self.broker_id)

    # --8<-- [end:on_controller_resignation]

    # -- failover -----------------------------------------------------------------------------------------------

    # --8<-- [start:on_controller_failover]
    def on_controller_failover(self) -> None:
        """Become the controller, in Kafka's ``onControllerFailover`` order: a new epoch (read and
        incremented, so brokers can tell a deposed controller's requests), the cluster read from
        ZooKeeper, both state machines started, the reassignments and preferred elections left
        pending by the last controller resumed, every live broker told the current metadata, and
        last the topic deletions resumed.

        Kafka registers its listeners before reading the context, because a ZkClient listener only
        hears changes made after it is registered. A kazoo watch is called at once with the children
        as they are, and then on each change; registered after the context is read, its first call
        carries a list at least as new as the context, so a broker that registered in between is
        seen as new (registered before, the first call would carry an older list, and a broker read
        into the context would look dead)."""
        self._resign()  # a controller elected again (after its session expired) starts afresh
        self.epoch, _ = self.zk.increment_controller_epoch()
        log.info(
            "Broker %d starting become-controller state transition, epoch %d", self.broker_id, self.epoch
        )
        self._watch_generation += 1
        generation = self._watch_generation
        self._initialize_controller_context()
        # The rest of Kafka's initializeControllerContext: what a previous controller left in the admin
        # paths, read before the state machines start (which skip partitions of topics being deleted).
        self.partition_reassignment.initialize_partition_reassignment()
        self.preferred_replica_election.initialize_preferred_replica_election()
        self.initialize_topic_deletion()
        self.replica_state_machine.startup()
        self.partition_state_machine.startup()
        log.info(
            "Broker %d is ready to serve as the new controller with epoch %d", self.broker_id, self.epoch
        )
        self.partition_reassignment.maybe_trigger_partition_reassignment()
        self.preferred_replica_election.maybe_trigger_preferred_replica_election()
        self.send_update_metadata_request(sorted(self.context.live_or_shutting_down_broker_ids()))
        self.zk.watch_children(
            BROKER_IDS_PATH, self._watcher(generation, "BrokerChange", self.handle_broker_change)
        )
        self.zk.watch_children(
            BROKER_TOPICS_PATH, self._watcher(generation, "TopicChange", self.handle_topic_change)
        )
        for topic in sorted(self.context.all_topics):
            self.register_partition_modifications_listener(topic)
        # kazoo's watch reports the children present now: notifications written while no controller
        # was there to read them are processed as this failover's first event.
        self.zk.watch_children(
            ISR_CHANGE_NOTIFICATION_PATH,
            self._watcher(
                generation, "IsrChangeNotification", self.isr_change_notification_listener.handle_child_change
            ),
        )
        # The admin paths: what a previous controller left there was resumed above, so the watches'
        # first events find it in hand and skip it. 0.10.1 watches /admin/delete_topics only when
        # deletion is enabled.
        self.partition_reassignment.register_partitions_reassigned_listener()
        self.preferred_replica_election.register_preferred_replica_election_listener()
        if self.delete_topic_enable:
            self.zk.watch_children(
                DELETE_TOPICS_PATH,
                self._watcher(generation, "TopicDeletion", self.delete_topics_listener.handle_child_change),
            )
        self._start_auto_rebalance()
        self.topic_deletion_manager.resume_deletions()  # Kafka's deleteTopicManager.start(), last

    # --8<-- [end:on_controller_failover]

    # -- partition reassignment, preferred replica election, the auto rebalance -------------------------------

    def initiate_reassign_replicas_for_topic_partition(
        self, tp: TopicPartition, new_replicas: list[int]
    ) -> None:
        self.partition_reassignment.initiate_reassign_replicas_for_topic_partition(
            tp, ReassignedPartitionsContext(list(new_replicas))
        )

    def on_preferred_replica_election(self, partitions, is_triggered_by_auto_rebalance: bool = False) -> None:
        self.preferred_replica_election.on_preferred_replica_election(
            set(partitions), is_triggered_by_auto_rebalance
        )

    def check_and_trigger_partition_rebalance(self) -> None:
        self.preferred_replica_election.check_and_trigger_partition_rebalance(
            self.leader_imbalance_per_broker_percentage
        )

    def _start_auto_rebalance(self) -> None:
        """Kafka schedules the check 5 s after failover, then every
        ``leader.imbalance.check.interval.seconds``; it runs as an event on the controller's thread."""
        if not self.auto_leader_rebalance_enable:
            return
        log.info("Starting the partition rebalance scheduler")
        self.auto_rebalance_scheduler.startup()
        self._auto_rebalance_scheduled = True
        self.auto_rebalance_scheduler.schedule(
            "partition-rebalance-thread",
            lambda: self._put(
                "AutoPreferredReplicaLeaderElection", self.check_and_trigger_partition_rebalance
            ),
            delay_ms=5_000,
            period_ms=self.leader_imbalance_check_interval_seconds * 1000,
        )

    def _stop_auto_rebalance(self) -> None:
        if self._auto_rebalance_scheduled:
            self._auto_rebalance_scheduled = False
            self.auto_rebalance_scheduler.shutdown()

    def watch_data_events(
        self,
        path: str,
        name: str,
        handler: Callable[[], None],
        keep_watching: Callable[[], bool] = lambda: True,
    ) -> None:
        """Queue ``handler`` as the event ``name`` each time the znode at ``path`` is there (now, and
        after each change): the admin paths' listeners and a reassignment's ISR listener. The
        handler reads the znode itself when it runs. The watch ends with this failover's watches,
        or once ``keep_watching()`` is false (Kafka unsubscribes its listener then)."""
        generation = self._watch_generation

        def callback(data, stat, *args) -> bool:
            if not self._running or generation != self._watch_generation or not keep_watching():
                return False
            if data is not None:
                self._put(name, handler)
            return True

        self.zk.watch_data(path, callback)

    def initialize_topic_deletion(self) -> None:
        """Kafka's ``initializeTopicDeletion``: the topics marked in ZooKeeper, and which of them
        cannot proceed now (a replica's broker is down, a reassignment or preferred election)."""
        ctx = self.context
        queued = set(self.zk.get_topics_to_be_deleted())
        live = ctx.live_broker_ids()
        ineligible = {
            tp[0] for tp, replicas in ctx.partition_replica_assignment.items() if set(replicas) - live
        }
        ineligible |= {tp[0] for tp in ctx.partitions_being_reassigned}
        ineligible |= {tp[0] for tp in ctx.partitions_undergoing_preferred_replica_election}
        log.info("List of topics to be deleted: %s", ",".join(sorted(queued)))
        log.info("List of topics ineligible for deletion: %s", ",".join(sorted(ineligible)))
        self.topic_deletion_manager = TopicDeletionManager(self, queued, ineligible)

    def _watcher(self, generation: int, name: str, handler: Callable[[list[str]], None]):
        def callback(children) -> bool:
            if not self._running or generation != self._watch_generation:
                return False  # a newer failover (or a resignation) owns the watches now
            self._put(name, lambda: handler(list(children)))
            return True

        return callback

    def _inter_broker_address(self, broker: Broker) -> tuple[str, int]:
        """Where the controller reaches ``broker``: its inter-broker listener (Kafka 0.10.2's
        ``broker.getBrokerEndPoint(config.interBrokerListenerName)``)."""
        end_point = broker.end_point(self.inter_broker_listener_name)
        return end_point.host, end_point.port

    def _initialize_controller_context(self) -> None:
        ctx = self.context
        ctx.clear()
        self.channel_manager = self.channel_manager_class(
            self.broker_id, self.socket_timeout_ms, self.time, self.channel_builder
        )
        for broker in self.zk.get_all_brokers():
            ctx.live_brokers_by_id[broker.id] = broker
            self.channel_manager.add_broker(broker.id, *self._inter_broker_address(broker))
        for topic in self.zk.get_all_topics():
            self._load_topic(topic)
        self.partition_state_machine.shutdown()
        self.replica_state_machine.shutdown()

    def _load_topic(self, topic: str) -> list[TopicPartition]:
        ctx = self.context
        ctx.all_topics.add(topic)
        added = []
        for partition, replicas in sorted(self.zk.get_partition_assignment(topic).items()):
            tp = (topic, partition)
            ctx.partition_replica_assignment[tp] = list(replicas)
            state = self.zk.get_partition_state(topic, partition)
            if state is not None:
                ctx.partition_leadership[tp] = (state.leader_and_isr, state.controller_epoch)
            added.append(tp)
        return added

    def update_leader_and_isr_cache(self, partitions) -> None:
        """Re-read ``partitions``' leader, ISR and epochs from ZooKeeper into the context (Kafka's
        ``updateLeaderAndIsrCache``): a leader wrote its ISR there itself, so the context is behind."""
        for tp in partitions:
            state = self.zk.get_partition_state(tp[0], tp[1])
            if state is not None:
                self.context.partition_leadership[tp] = (state.leader_and_isr, state.controller_epoch)

    def new_batch(self) -> ControllerBrokerRequestBatch:
        batch = ControllerBrokerRequestBatch(self)
        batch.new_batch()
        return batch

    def send_update_metadata_request(self, broker_ids: list[int], partitions=None) -> None:
        batch = self.new_batch()
        batch.add_update_metadata_request_for_brokers(broker_ids, partitions)
        batch.send_requests_to_brokers(self.epoch)

    # -- ZooKeeper events --------------------------------------------------------------------------------------

    # --8<-- [start:on_topic_change]
    def handle_topic_change(self, topics: list[str]) -> None:
        """Kafka's ``TopicChangeListener.handleChildChange``: the children of ``/brokers/topics``
        changed; the topics the controller does not know are new (book 7.1.3)."""
        if not self.is_active():
            return
        topics = self.read_all_topics(topics)
        new_topics = sorted(set(topics) - self.context.all_topics)
        self.context.all_topics &= set(topics)
        new_partitions = []
        for topic in new_topics:
            new_partitions += self._load_topic(topic)
            self.register_partition_modifications_listener(topic)
        if new_partitions:
            log.info("New topics: %s, new partitions: %d", new_topics, len(new_partitions))
            self.on_new_partition_creation(new_partitions)

    def read_all_topics(self, watched: list[str]) -> list[str]:
        """The topics as ZooKeeper holds them now, read again rather than taken from the watch
        (``watched``): Kafka 1.1's TopicChange event reads them when it is processed.

        Kafka 0.10.1's listener is handed the children ZkClient read just before calling it, under
        the controller's lock, so the list is as new as the event. kafka_lite's watch reads the list
        when it fires and the event then waits in the queue; a topic deletion the controller
        completed meanwhile would come back from the older list as a new topic, which is why it
        borrows 1.1's read."""
        del watched  # read when the watch fired: possibly older than what this event must act on
        return self.zk.get_all_topics()

    def on_new_partition_creation(self, partitions: list[TopicPartition]) -> None:
        """New partitions go New -> Online with their replicas New -> Online (book 7.1.4)."""
        replicas = self.context.replicas_for_partitions(partitions)
        self.partition_state_machine.handle_state_changes(partitions, PartitionState.NEW)
        self.replica_state_machine.handle_state_changes(replicas, ReplicaState.NEW)
        self.partition_state_machine.handle_state_changes(partitions, PartitionState.ONLINE)
        self.replica_state_machine.handle_state_changes(replicas, ReplicaState.ONLINE)

    # --8<-- [end:on_topic_change]

    # --8<-- [start:partition_modifications]
    def register_partition_modifications_listener(self, topic: str) -> None:
        """Watch the topic's assignment, ``/brokers/topics/<topic>``: partitions added to it
        (``kafka-lite topics --alter --partitions``, CreatePartitions) appear there, not as a new child
        of ``/brokers/topics``. Kafka registers this listener per topic at failover and for each new
        topic (PartitionStateMachine's ``registerPartitionChangeListener``); the watch ends with the
        topic."""
        self.watch_data_events(
            topic_path(topic),
            "PartitionModifications",
            lambda: self.on_partition_modification(topic),
            keep_watching=lambda: topic in self.context.all_topics,
        )

    def on_partition_modification(self, topic: str) -> None:
        """The topic's assignment changed: the partitions the controller does not know are new, and go
        New -> Online like a new topic's (Kafka's ``PartitionModificationsListener``). A reassignment
        rewrites the assignment too, of partitions the controller knows: nothing to do for it."""
        if not self.is_active() or topic not in self.context.all_topics:
            return
        assignment = self.zk.get_partition_assignment(topic)
        known = self.context.partition_replica_assignment
        added = [(topic, p) for p in sorted(assignment) if (topic, p) not in known]
        if not added:
            return
        if self.is_topic_queued_up_for_deletion(topic):
            log.error("Skipping adding partitions %s for topic %s since it is currently being deleted",
                      [tp[1] for tp in added], topic)  # fmt: skip
            return
        for tp in added:
            known[tp] = list(assignment[tp[1]])
        log.info("New partitions to be added %s", {tp[1]: assignment[tp[1]] for tp in added})
        self.on_new_partition_creation(added)

    # --8<-- [end:partition_modifications]

    # --8<-- [start:on_broker_change]
    def handle_broker_change(self, ids: list[str]) -> None:
        """The broker-change listener (book 7.1.3; Kafka's ``BrokerChangeListener.handleChildChange``):
        the ids now under ``/brokers/ids`` against the context's live or shutting-down brokers. New
        ones start (``on_broker_startup``), vanished ones fail (``on_broker_failure``), in 0.10.1's
        order; a broker that registered again in between is ``bounced_brokers``' (Kafka 2.2)."""
        if not self.is_active():
            return
        ctx = self.context
        current = {int(i) for i in ids}
        known = ctx.live_or_shutting_down_broker_ids()
        new = sorted(current - known)
        dead = sorted(known - current)
        registered = {b: self.zk.get_broker(b) for b in current}
        bounced = self.bounced_brokers(registered)
        log.info(
            "Newly added brokers: %s, deleted brokers: %s, bounced brokers: %s, all live brokers: %s",
            new, dead, bounced, sorted(current),
        )  # fmt: skip
        for broker_id in new:
            self._add_live_broker(registered[broker_id])
        for broker_id in dead:
            ctx.live_brokers_by_id.pop(broker_id, None)
            self.channel_manager.remove_broker(broker_id)
        if new:
            self.on_broker_startup(new)
        if bounced:
            self.on_broker_bounce(bounced, registered)
        if dead:
            self.on_broker_failure(dead)

    def _add_live_broker(self, broker: Broker | None) -> None:
        if broker is not None:  # its znode went again before it was read: the next event sees it dead
            self.context.live_brokers_by_id[broker.id] = broker
            self.channel_manager.add_broker(broker.id, *self._inter_broker_address(broker))

    def bounced_brokers(self, registered: Mapping[int, Broker | None]) -> list[int]:
        """The brokers that died and registered again between two reads of ``/brokers/ids``: in both
        lists, but with a new registration epoch (the creation zxid of their znode). Kafka 2.2's
        bounced brokers (KIP-380).

        Kafka 0.10.1 compares ids only, so such a broker is neither new nor dead to it: it never gets
        the LeaderAndIsr a restarted broker needs, and its partitions stay without a replica there.
        kafka_lite borrows 2.2's check because its clusters restart brokers at once (``cluster
        restart``, the durability checker), which makes the case common rather than rare."""
        known = self.context.live_brokers_by_id
        return sorted(
            b for b, broker in registered.items()
            if broker is not None and b in known and broker.epoch != known[b].epoch
        )  # fmt: skip

    def on_broker_bounce(self, bounced: list[int], registered: Mapping[int, Broker | None]) -> None:
        """Kafka 2.2's handling of ``bounced_brokers``: each is a failure, then a startup, as if the
        controller had seen the two registrations apart."""
        for broker_id in bounced:
            self.context.live_brokers_by_id.pop(broker_id, None)
            self.channel_manager.remove_broker(broker_id)
        self.on_broker_failure(bounced)
        for broker_id in bounced:
            self._add_live_broker(registered[broker_id])
        self.on_broker_startup(bounced)

    # --8<-- [end:on_broker_change]

    def on_broker_startup(self, new_brokers: list[int]) -> None:
        """Tell everyone about the new brokers; bring their replicas online; elect leaders for
        partitions that had none (book 7.1.3, the broker-change listener)."""
        self.send_update_metadata_request(sorted(self.context.live_or_shutting_down_broker_ids()))
        replicas = self.context.replicas_on_brokers(new_brokers)
        self.replica_state_machine.handle_state_changes(replicas, ReplicaState.ONLINE)
        self.partition_state_machine.trigger_online_partition_state_change()
        # A returning broker holds replicas of topics being deleted: their deletion may proceed.
        to_be_deleted = {r[0] for r in replicas if self.is_topic_queued_up_for_deletion(r[0])}
        if to_be_deleted:
            log.info(
                "Some replicas for topics scheduled for deletion %s are on the newly restarted brokers %s. "
                "Signaling restart of topic deletion for these topics",
                ",".join(sorted(to_be_deleted)), new_brokers,
            )  # fmt: skip
            self.topic_deletion_manager.resume_deletion_for_topics(to_be_deleted)

    def on_broker_failure(self, dead_brokers: list[int]) -> None:
        """Partitions led by a dead broker go Offline, then Online with a new leader if one is in the ISR;
        the dead broker's replicas go Offline (book 7.1.3). Topics being deleted are left to their
        deletion."""
        # BEGIN SOLUTION
        ctx = self.context
        ctx.shutting_down_broker_ids -= set(dead_brokers)  # a shutdown that completed
        dead = set(dead_brokers)
        leaderless = [
            tp
            for tp, (lai, _) in ctx.partition_leadership.items()
            if lai.leader in dead and not self.is_topic_queued_up_for_deletion(tp[0])
        ]
        self.partition_state_machine.handle_state_changes(leaderless, PartitionState.OFFLINE)
        self.partition_state_machine.trigger_online_partition_state_change()
        replicas = [
            r for r in ctx.replicas_on_brokers(dead_brokers) if not self.is_topic_queued_up_for_deletion(r[0])
        ]
        self.replica_state_machine.handle_state_changes(replicas, ReplicaState.OFFLINE)
        # A replica of a topic being deleted cannot be deleted while its broker is down: it goes
        # DeletionIneligible (if its StopReplica was out) and the topic waits for the broker.
        being_deleted = {
            r for r in ctx.replicas_on_brokers(dead_brokers) if self.is_topic_queued_up_for_deletion(r[0])
        }
        if being_deleted:
            self.topic_deletion_manager.fail_replica_deletion(being_deleted)
        # With no partition to re-elect, nothing above told the brokers of the failure: an election's
        # or a smaller ISR's LeaderAndIsr carries UpdateMetadata for its partitions (and the live
        # brokers) in the same batch, so only then is a whole UpdateMetadata sent.
        if not leaderless:
            self.send_update_metadata_request(sorted(ctx.live_or_shutting_down_broker_ids()))
        # END SOLUTION

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        """Kafka's ``TopicDeletionManager.isTopicQueuedUpForDeletion``: the state machines leave such a
        topic's partitions and replicas to its deletion. (The set stays empty while deletion is
        disabled.)"""
        return topic in self.context.topics_to_be_deleted

    # --8<-- [start:shutdown_broker]
    def shutdown_broker(self, broker_id: int, timeout_s: float = 30) -> set[TopicPartition]:
        """A ControlledShutdown request's work (book 7.4): run on the event thread, the caller
        (a request handler thread) waiting for the answer. Returns the partitions the broker still
        leads; raises ``ControllerMovedException`` if this broker is not the controller and
        ``BrokerNotAvailableException`` if the broker is not registered."""
        done = threading.Event()
        result: list = []

        def shutdown() -> None:
            try:
                result.append(self.do_controlled_shutdown(broker_id))
            except Exception as e:
                result.append(e)
            done.set()

        if not self.is_active():
            raise ControllerMovedException("Controller moved to another broker. Aborting controlled shutdown")
        self._put("ControlledShutdown", shutdown)
        deadline = monotonic() + timeout_s
        while not done.wait(0.1):  # checking now and then that the event thread is still there to run it
            if not self._running:
                raise ControllerMovedException(
                    "The controller is shutting down. Aborting controlled shutdown"
                )
            if monotonic() > deadline:
                raise TimeoutError(f"the controlled shutdown of broker {broker_id} took over {timeout_s} s")
        if isinstance(result[0], Exception):
            raise result[0]
        return result[0]

    def do_controlled_shutdown(self, broker_id: int) -> set[TopicPartition]:
        """Kafka 0.10.1's ``shutdownBroker``, on the event thread. The broker counts as shutting
        down from now on: no leadership moves onto it, and the broker-change listener sees it
        neither new nor dead. Each partition with other replicas that it leads gets a new leader
        from the controlled-shutdown selector (the next in-sync replica; the broker leaves the
        ISR); where it follows, it is told to stop fetching (StopReplica, keeping the log) and its
        replica goes Offline, which takes it out of the ISR. A partition with one replica has
        nowhere to go and is left as it is. Returns the replicated partitions it still leads: those
        whose ISR held no other replica."""
        if not self.is_active():
            raise ControllerMovedException("Controller moved to another broker. Aborting controlled shutdown")
        ctx = self.context
        log.info("Shutting down broker %d", broker_id)
        if broker_id not in ctx.live_or_shutting_down_broker_ids():
            raise BrokerNotAvailableException(f"Broker id {broker_id} does not exist.")
        ctx.shutting_down_broker_ids.add(broker_id)
        log.debug(
            "All shutting down brokers: %s; live brokers: %s",
            sorted(ctx.shutting_down_broker_ids), sorted(ctx.live_broker_ids()),
        )  # fmt: skip
        for tp in sorted(ctx.partitions_on_broker(broker_id)):
            leadership = ctx.partition_leadership.get(tp)
            if leadership is None or len(ctx.partition_replica_assignment[tp]) <= 1:
                continue
            if leadership[0].leader == broker_id:
                self.partition_state_machine.handle_state_changes(
                    [tp], PartitionState.ONLINE, self.controlled_shutdown_partition_leader_selector
                )
            else:
                # StopReplica first: the ISR change below goes through ZooKeeper, and by the time the
                # leader hears of it the broker has (in most cases) stopped fetching.
                batch = self.new_batch()
                batch.add_stop_replica_request_for_brokers([broker_id], tp, delete=False)
                batch.send_requests_to_brokers(self.epoch)
                self.replica_state_machine.handle_state_changes(
                    [(tp[0], tp[1], broker_id)], ReplicaState.OFFLINE
                )
        remaining = {
            tp
            for tp, (lai, _) in ctx.partition_leadership.items()
            if lai.leader == broker_id and len(ctx.partition_replica_assignment.get(tp, [])) > 1
        }
        log.info(
            "Broker %d still leads %d replicated partitions: %s", broker_id, len(remaining), sorted(remaining)
        )
        return remaining

    # --8<-- [end:shutdown_broker]

    # --8<-- [start:remove_replica_from_isr]
    def remove_replica_from_isr(
        self, topic: str, partition: int, replica_id: int
    ) -> LeaderIsrAndControllerEpoch | None:
        """Take ``replica_id`` out of the partition's ISR in ZooKeeper (Kafka's ``removeReplicaFromIsr``):
        the leader becomes -1 if it was the replica, the leader epoch goes up, and with unclean leader
        election disabled an ISR that would become empty keeps its last member, so that only a
        replica known to be complete can lead again. Returns the partition's state now (as read, if
        the replica was not in the ISR), or None if the partition has no state znode."""
        tp = (topic, partition)
        while True:
            current = self.zk.get_partition_state(topic, partition)
            if current is None:
                return None
            if current.controller_epoch > self.epoch:
                raise StateChangeFailedException(
                    "Leader and isr path written by another controller. This probably means the current "
                    f"controller with epoch {self.epoch} went through a soft failure and another controller "
                    f"was elected with epoch {current.controller_epoch}. Aborting state change by this controller"
                )
            lai = current.leader_and_isr
            if replica_id not in lai.isr:
                log.warning(
                    "Cannot remove replica %d from ISR of partition [%s,%d] since it is not in the ISR. "
                    "Leader = %d ; ISR = %s",
                    replica_id, topic, partition, lai.leader, lai.isr,
                )  # fmt: skip
                self.context.partition_leadership[tp] = (lai, self.epoch)
                return LeaderIsrAndControllerEpoch(lai, self.epoch)
            leader = LeaderAndIsr.NO_LEADER if lai.leader == replica_id else lai.leader
            isr = [r for r in lai.isr if r != replica_id]
            if not isr and not self.unclean_leader_election_enabled(topic):
                isr = list(lai.isr)  # the last in-sync replica stays: it is the one that may lead again
            ok, version = self.zk.conditional_update_partition_state(
                topic, partition, LeaderAndIsr(leader, lai.leader_epoch + 1, isr, lai.zk_version), self.epoch
            )
            if ok:
                updated = LeaderAndIsr(leader, lai.leader_epoch + 1, isr, version)
                self.context.partition_leadership[tp] = (updated, self.epoch)
                return LeaderIsrAndControllerEpoch(updated, self.epoch)

    # --8<-- [end:remove_replica_from_isr]

    def unclean_leader_election_enabled(self, topic: str) -> bool:
        """The topic's ``unclean.leader.election.enable``: its override in ZooKeeper, else the broker's
        default. Read at each decision, as Kafka's controller reads the topic's config from ZooKeeper
        (``AdminUtils.fetchEntityConfig``) each time, so an altered setting counts from the next one."""
        config = LogConfig.from_broker(self.log_config_props, self.zk.get_topic_config(topic))
        return config.unclean_leader_election_enable

    def on_leader_and_isr_response(self, body: dict) -> None:
        for p in body.get("partitions", []):
            if Errors.for_code(p["error_code"]) is not Errors.NONE:
                log.info(
                    "LeaderAndIsr for %s-%d answered %s",
                    p["topic"],
                    p["partition"],
                    Errors.for_code(p["error_code"]).name,
                )


# --8<-- [start:isr_change_notification_listener]
class IsrChangeNotificationListener:
    """Leaders change their partitions' ISR in ZooKeeper themselves (``ZkUtils.update_leader_and_isr``)
    and then write a notification under ``/isr_change_notification``. This listener (book 7.1.3) is
    how the controller hears of it: it reads every notification, re-reads the named partitions'
    state into its context, sends UpdateMetadata for them to every live broker (so that Metadata
    answers show the ISR as it is), and deletes the notifications it read.

    Only partitions of topics the controller knows are re-read: a notification for a topic whose
    creation the controller has not processed yet is covered when it loads that topic from ZooKeeper.
    """

    def __init__(self, controller: KafkaController, zk: ZkUtils) -> None:
        self.controller = controller
        self.zk = zk

    def handle_child_change(self, children: list[str]) -> None:
        """Runs on the controller's event thread, with the children of ``/isr_change_notification``."""
        if not self.controller.is_active() or not children:
            return
        try:
            partitions: set[TopicPartition] = set()
            for child in children:
                partitions |= self.zk.get_isr_change_partitions(child)
            known = self.controller.context.partition_replica_assignment
            partitions = {tp for tp in partitions if tp in known}
            if partitions:
                self.controller.update_leader_and_isr_cache(partitions)
                self.process_update_notifications(partitions)
        finally:
            # Deleted even when processing failed, as Kafka does: a notification that made the
            # controller fail once would make it fail on every change after it.
            for child in children:
                self.zk.delete_isr_change_notification(child)

    def process_update_notifications(self, partitions: set[TopicPartition]) -> None:
        live_brokers = sorted(self.controller.context.live_or_shutting_down_broker_ids())
        log.debug("Sending UpdateMetadata to brokers %s for partitions %s", live_brokers, sorted(partitions))
        self.controller.send_update_metadata_request(live_brokers, sorted(partitions))


# --8<-- [end:isr_change_notification_listener]
