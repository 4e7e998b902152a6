"""uReplicator's idea: a controller assigns topic-partitions to mirror workers, one by one.

No Kafka twin: modelled on Uber's uReplicator, its HelixMirrorMakerManager (the controller) and
         WorkerInstance (a mirror worker) on Apache Helix, with Helix's OnlineOffline state model
         between them
Book:    chapter 8, 8.2 (uReplicator: Apache Helix, the Helix controller, Helix workers)
Differs: no Helix and no ZooKeeper: the controller is an object in the workers' process, its ideal
         state a dict, a transition a direct call that the worker applies between two polls
         (Helix sends messages through ZooKeeper), and the balancing the obvious one (fewest
         partitions first). A worker leaves by ``remove_worker`` (a clean stop); the controller does
         not watch for crashed workers, but a transition sent to one fails at once. Workers copy
         with MirrorMaker's consumer wrapper, producer and thread, so flush-then-commit is
         MirrorMaker's.

MirrorMaker (``mirror_maker.py``) shares the source partitions through a consumer group: when one
consumer leaves or joins, the group rebalances, and under 0.10.1's protocol *every* consumer gives up
*all* its partitions (flush, commit), waits for the group to agree, and starts again on a new
assignment. For a while nothing is copied at all. Uber's uReplicator takes the assignment away from
the group: a controller decides which worker copies which partition, and tells each worker only
about its own changes. Each worker's consumer uses ``assign``, never ``subscribe``, so there is no
group protocol to stop it::

    HelixMirrorMakerManager: the ideal state, partition -> worker
        │                          │                          │
        │ t-0: OFFLINE -> ONLINE   │ t-3: ONLINE -> OFFLINE   │ (no message)
        ▼                          ▼                          ▼
    worker-0                   worker-1                   worker-2
    assigns t-0                flushes, commits t-3,      keeps copying
                               unassigns it

    each worker: a consumer (assign) -> a producer; flush, then commit to the source, one group.id

A partition is, on each worker, in one of Helix's OnlineOffline states. ONLINE means the worker's
consumer has it assigned. Going OFFLINE, the worker flushes its producer and commits what it sent,
as MirrorMaker's rebalance listener does; only then does the controller tell the next worker to take
the partition ONLINE, and that worker's consumer starts from the committed offset. So a move copies
nothing twice and loses nothing, and the workers not named in a move never stop.

When a worker leaves, only its partitions move, each to the worker with the fewest (ties to the
lowest id, so a run is repeatable). When one joins, the controller moves partitions to it from the
workers with the most until the counts differ by at most one. Offsets go to the source cluster
under one ``group.id`` shared by every worker; no two workers ever commit the same partition,
because no two have it ONLINE at once.
"""

from __future__ import annotations

import enum
import logging
import queue
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafka_lite.common.errors import IllegalStateException, KafkaException, WakeupException
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener
from kafka_lite.consumer.consumer_record import ConsumerRecord
from kafka_lite.consumer.kafka_consumer import KafkaConsumer
from kafka_lite.producer.kafka_producer import KafkaProducer
from kafka_lite.tools.mirror_maker import (
    DEFAULT_OFFSET_COMMIT_INTERVAL_MS,
    POLL_TIMEOUT_MS,
    DefaultMirrorMakerMessageHandler,
    MirrorMakerMessageHandler,
    MirrorMakerNewConsumer,
    MirrorMakerProducer,
    MirrorMakerState,
    MirrorMakerThread,
    consumer_configs,
    producer_config,
)

log = logging.getLogger(__name__)

# How long the controller waits for a worker to finish one transition (a flush and a commit at most).
TRANSITION_TIMEOUT_MS = 30_000


class PartitionState(enum.Enum):
    """Helix's OnlineOffline state model, one partition on one worker."""

    OFFLINE = "OFFLINE"
    ONLINE = "ONLINE"


# The state model as data: each state and the states a partition may enter it from.
VALID_PREVIOUS_STATES = {
    PartitionState.ONLINE: {PartitionState.OFFLINE},
    PartitionState.OFFLINE: {PartitionState.ONLINE},
}


@dataclass
class Transition:
    """One message from the controller: take ``partition`` to ``to_state``. ``done`` is set once
    the worker has applied it (Helix's current state catching up with the ideal state)."""

    partition: TopicPartition
    to_state: PartitionState
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None


# -- the worker -------------------------------------------------------------------------------------


class AssignedMirrorMakerConsumer(MirrorMakerNewConsumer):
    """MirrorMaker's consumer wrapper with the controller's assignment instead of a group's: the
    worker thread applies the transitions waiting for it before each poll, when every record of the
    last poll has been handed to the producer, so a partition given up has nothing left to send."""

    def __init__(self, consumer: KafkaConsumer) -> None:
        super().__init__(consumer, whitelist="")  # no subscription: the controller names partitions
        self.transitions: queue.Queue[Transition] = queue.Queue()
        self.woken = threading.Event()  # a transition (or a stop) is waiting
        self.stopping = False  # stop() was called: a wakeup from now on means "stop"
        self.current_state: dict[TopicPartition, PartitionState] = {}  # Helix's CurrentState
        self.listener: ConsumerRebalanceListener | None = None

    def init(self, listener: ConsumerRebalanceListener) -> None:
        # MirrorMaker's flush-then-commit listener, called here for a partition going OFFLINE.
        self.listener = listener

    def assignment(self) -> set[TopicPartition]:
        return {tp for tp, s in self.current_state.items() if s is PartitionState.ONLINE}

    def poll(self) -> Iterator[ConsumerRecord]:
        self.apply_transitions()
        if not self.assignment():
            # Nothing to copy: wait for the controller (a consumer with no partitions cannot poll).
            self.woken.wait(POLL_TIMEOUT_MS / 1000)
            return iter(())
        return super().poll()

    def wake(self) -> None:
        """A transition is waiting: cut short a poll waiting for records (or for the controller), so
        that the transition waits for no timeout."""
        self.woken.set()
        self.consumer.wakeup()

    def stop(self) -> None:
        self.stopping = True
        self.wake()

    def commit(self) -> None:
        # The consumer's wakeup() has two callers here, where MirrorMaker has one: the thread's stop
        # and the controller's wake(). MirrorMaker's commit_offsets reads a wakeup in a commit as a
        # stop: it commits again and re-raises, and the thread ends. A transition's wakeup that
        # lands in a commit (the copy loop commits every interval, and a slow commit makes the window
        # wide) must not end the worker, whose partitions would then stop being copied and whose
        # transitions nobody would apply: commit again and go on; the transition waits in its queue
        # for the next poll, which comes first thing.
        while True:
            try:
                super().commit()
            except WakeupException:
                if self.stopping:
                    raise  # commit_offsets commits again, then lets the stop happen
                continue
            return

    def apply_transitions(self) -> None:
        self.woken.clear()
        while True:
            try:
                transition = self.transitions.get_nowait()
            except queue.Empty:
                return
            try:
                self.apply(transition)
            except BaseException as e:
                transition.error = e
                raise
            finally:
                transition.done.set()

    # --8<-- [start:apply_transition]
    def apply(self, transition: Transition) -> None:
        tp, to_state = transition.partition, transition.to_state
        state = self.current_state.get(tp, PartitionState.OFFLINE)
        if state not in VALID_PREVIOUS_STATES[to_state]:
            raise IllegalStateException(
                f"Partition {tp} should be in the {sorted(s.value for s in VALID_PREVIOUS_STATES[to_state])} "
                f"states before moving to {to_state.value} state. Instead it is in {state.value} state"
            )
        if to_state is PartitionState.OFFLINE:
            # Flush, then commit, before anyone else may start from the committed offset.
            assert self.listener is not None
            try:
                self.listener.on_partitions_revoked([tp])
            except WakeupException:
                # A stop's wakeup landed in the commit, which has been made again (see commit). The
                # stop is not lost: the thread's loop checks its flag before the next poll.
                pass
        self.current_state[tp] = to_state
        # assign() keeps the position of every partition it keeps; a new one starts from the
        # group's committed offset, or auto.offset.reset without one.
        self.consumer.assign(sorted(self.assignment()))
        log.info("%s %s -> %s", tp, state.value, to_state.value)

    # --8<-- [end:apply_transition]


class WorkerInstance:
    """One mirror worker (uReplicator's ``WorkerInstance``, a Helix participant): a consumer with
    partitions assigned by the controller, a producer to the target, and MirrorMaker's copy loop
    in a thread. In uReplicator each worker is a process of its own, so each has its own producer
    and its own failure state here too."""

    def __init__(
        self,
        instance_id: str,
        consumer: KafkaConsumer,
        producer: KafkaProducer,
        message_handler: MirrorMakerMessageHandler | None = None,
        offset_commit_interval_ms: int = DEFAULT_OFFSET_COMMIT_INTERVAL_MS,
        abort_on_send_failure: bool = True,
        time: Time = SYSTEM,
    ) -> None:
        self.instance_id = instance_id
        self.state = MirrorMakerState()
        self.producer = MirrorMakerProducer(producer, abort_on_send_failure, self.state)
        self.consumer = AssignedMirrorMakerConsumer(consumer)
        self.thread = MirrorMakerThread(
            self.consumer, 0, self.producer, message_handler or DefaultMirrorMakerMessageHandler(),
            offset_commit_interval_ms, self.state, on_abnormal_exit=self._fail_transitions, time=time,
        )  # fmt: skip
        self.thread.name = f"mirror-worker-{instance_id}"

    @classmethod
    def from_configs(
        cls,
        instance_id: str,
        consumer_props: Mapping[str, str],
        producer_props: Mapping[str, str],
        **options: Any,
    ) -> WorkerInstance:
        """A worker from configs by Kafka's names, with MirrorMaker's no-data-loss defaults."""
        config = consumer_configs(consumer_props, 1)[0]
        config["client.id"] = f"{config['group.id']}-{instance_id}"
        producer = KafkaProducer(**producer_config(producer_props))
        try:
            consumer = KafkaConsumer(**config)
        except BaseException:
            producer.close(0)
            raise
        return cls(instance_id, consumer, producer, **options)

    def start(self) -> None:
        self.thread.start()

    def on_become_online_from_offline(self, partition: TopicPartition) -> Transition:
        return self._send(Transition(partition, PartitionState.ONLINE))

    def on_become_offline_from_online(self, partition: TopicPartition) -> Transition:
        return self._send(Transition(partition, PartitionState.OFFLINE))

    def _send(self, transition: Transition) -> Transition:
        self.consumer.transitions.put(transition)
        self.consumer.wake()
        # Checked after the put: a thread that stops on an error sets the flag, then fails what is
        # queued, so one of the two sees this transition.
        if self.state.exited_abnormally:
            self._fail_transitions()
        return transition

    def _fail_transitions(self) -> None:
        """The thread stopped on an error (a failed send, say): fail every transition waiting for it,
        so that the controller hears now, not after ``TRANSITION_TIMEOUT_MS`` (Helix's controller
        sees a participant's ZooKeeper session end)."""
        error = KafkaException(f"worker {self.instance_id} stopped: {self.state.failure!r}")
        while True:
            try:
                transition = self.consumer.transitions.get_nowait()
            except queue.Empty:
                return
            transition.error = error
            transition.done.set()

    def assignment(self) -> set[TopicPartition]:
        return self.consumer.assignment()

    def shutdown(self) -> None:
        """Stop cleanly: the thread flushes and commits, then closes its consumer; then the producer."""
        self.state.is_shutting_down = True
        self.thread.shutdown()
        self.thread.await_shutdown()
        self.producer.close()


# -- the controller ---------------------------------------------------------------------------------


class HelixMirrorMakerManager:
    """The controller (uReplicator's ``HelixMirrorMakerManager`` with Helix's rebalancer folded in):
    which worker copies which partition, and the transitions that make it so. Every change waits
    for each OFFLINE before the matching ONLINE, so no partition is ever ONLINE on two workers."""

    def __init__(self) -> None:
        self.workers: dict[str, WorkerInstance] = {}
        self.ideal_state: dict[TopicPartition, str] = {}  # partition -> instance id
        self._lock = threading.Lock()  # one change at a time, as Helix's controller runs one pipeline

    def assignment(self) -> dict[str, set[TopicPartition]]:
        """Each worker's partitions, as the controller wants them."""
        with self._lock:
            return self._assignment()

    def _assignment(self) -> dict[str, set[TopicPartition]]:
        result: dict[str, set[TopicPartition]] = {instance: set() for instance in self.workers}
        for tp, instance in self.ideal_state.items():
            result[instance].add(tp)
        return result

    def add_topic_to_mirror_maker(self, topic: str, num_partitions: int) -> None:
        """Mirror ``topic``: each partition to the worker with the fewest."""
        with self._lock:
            if not self.workers:
                raise IllegalStateException(f"no worker to mirror {topic} with: add a worker first")
            self._bring_online([TopicPartition(topic, p) for p in range(num_partitions)])

    def add_worker(self, worker: WorkerInstance) -> None:
        """A live instance joined: start it, then move partitions to it from the busiest workers
        until the counts differ by at most one. Only the partitions that move stop, each briefly."""
        with self._lock:
            if worker.instance_id in self.workers:
                raise IllegalStateException(f"worker {worker.instance_id} is already live")
            worker.start()
            self.workers[worker.instance_id] = worker
            moves: list[TopicPartition] = []
            assignment = self._assignment()
            while True:
                busiest = max(sorted(assignment), key=lambda i: len(assignment[i]))
                if len(assignment[busiest]) - len(assignment[worker.instance_id]) <= 1:
                    break
                tp = max(assignment[busiest])
                assignment[busiest].remove(tp)
                assignment[worker.instance_id].add(tp)
                moves.append(tp)
            self._wait(self.workers[self.ideal_state[tp]].on_become_offline_from_online(tp) for tp in moves)
            for tp in moves:
                self.ideal_state[tp] = worker.instance_id
            self._wait(worker.on_become_online_from_offline(tp) for tp in moves)

    # --8<-- [start:remove_worker]
    def remove_worker(self, instance_id: str) -> None:
        """A live instance leaves: it stops cleanly (its partitions go OFFLINE with a flush and a
        commit), then only its partitions go ONLINE elsewhere."""
        with self._lock:
            worker = self.workers.pop(instance_id, None)
            if worker is None:
                raise IllegalStateException(
                    f"there is no live worker {instance_id} (live: {sorted(self.workers)})"
                )
            orphans = sorted(tp for tp, owner in self.ideal_state.items() if owner == instance_id)
            worker.shutdown()
            for tp in orphans:
                del self.ideal_state[tp]
            if orphans and not self.workers:
                log.warning("No worker left: %d partitions are not mirrored", len(orphans))
                return
            self._bring_online(orphans)

    def _bring_online(self, partitions: Iterable[TopicPartition]) -> None:
        assignment = self._assignment()
        transitions = []
        for tp in partitions:
            instance = min(sorted(assignment), key=lambda i: len(assignment[i]))
            assignment[instance].add(tp)
            self.ideal_state[tp] = instance
            transitions.append(self.workers[instance].on_become_online_from_offline(tp))
        self._wait(transitions)

    # --8<-- [end:remove_worker]
    def _wait(self, transitions: Iterable[Transition]) -> None:
        for t in list(transitions):
            if not t.done.wait(TRANSITION_TIMEOUT_MS / 1000):
                raise KafkaException(
                    f"{t.partition} did not go {t.to_state.value} within {TRANSITION_TIMEOUT_MS} ms"
                )
            if t.error is not None:
                raise KafkaException(
                    f"{t.partition} could not go {t.to_state.value}: {t.error!r}"
                ) from t.error

    def shutdown(self) -> None:
        """Stop every worker cleanly (each flushes and commits)."""
        with self._lock:
            for worker in self.workers.values():
                worker.shutdown()
            self.workers.clear()
