"""A controller on real ZooKeeper whose requests are recorded instead of sent, stepped one event at a time.

No Kafka twin: Kafka's ``ControllerIntegrationTest`` and ``PartitionStateMachineTest`` build the same
thing, a real controller over a ZooKeeper whose broker requests a mock channel manager swallows.
Here the controller is kafka_lite's own ``KafkaController``; ``RecordingChannelManager`` stands in
for its ``ControllerChannelManager`` and keeps each LeaderAndIsr, UpdateMetadata and StopReplica it
was handed, so a notebook, a lab or a test sees what the controller decided without a broker process.

Brokers "start" and "die" by their ``/brokers/ids`` znode appearing and going. The controller's event
thread is not started: ``ControllerHarness`` hands the controller each event on the caller's thread,
in order, as the event thread would (``broker_change``, ``create_topic``, ``delete_topic``), through
the controller's public entry points (``elect``, ``handle_broker_change``, ``handle_topic_change``),
or runs the events the controller's own ZooKeeper watches queued (``run_events``: reassignment and
preferred replica election go through their admin znodes, as the tools write them), which it takes
off the queue with ``KafkaController.take_event``, the controller's one seam for this harness. A controlled shutdown goes
through ``shutdown_broker`` from a second thread, as a ControlledShutdown request's handler calls it.
Book:    chapter 7, 7.1 (the controller's listeners, stepped by hand), 7.1.4-7.1.6 (the state machines,
         topic deletion, reassignment), 7.4 (a controlled shutdown's ``shutdownBroker``)
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import MockTime
from kafka_lite.controller.kafka_controller import KafkaController
from kafka_lite.controller.partition_state_machine import PartitionState
from kafka_lite.controller.replica_state_machine import ReplicaState
from kafka_lite.zk.zk_utils import BROKER_IDS_PATH, LeaderAndIsr, ZkUtils


@dataclass
class Sent:
    """A request the controller handed its channel manager, with the callback its answer would run."""

    broker_id: int
    api: ApiKeys
    body: dict
    callback: Callable[[dict], None] | None


class RecordingChannelManager:
    """``ControllerChannelManager``'s interface; appends each request to ``sent`` instead of sending it."""

    def __init__(self, sent: list[Sent]) -> None:
        self.sent = sent
        self.brokers: set[int] = set()

    def add_broker(self, broker_id: int, host: str, port: int) -> None:
        self.brokers.add(broker_id)

    def remove_broker(self, broker_id: int) -> None:
        self.brokers.discard(broker_id)

    def send_request(self, broker_id, api, version, body, callback=None) -> None:
        self.sent.append(Sent(broker_id, api, body, callback))

    def shutdown(self) -> None:
        self.brokers.clear()


class ControllerHarness:
    """A controller (broker 0) and the ``/brokers/ids`` znodes of brokers that come and go.

    ``controller_args`` go to ``KafkaController`` (``time`` is a ``MockTime`` and ``delete_topic_enable``
    is on unless given: the harness is for watching the controller, deletion included). Every
    transition either state machine takes is appended to ``transitions`` as (machine, key, from, to),
    and every request sent to ``sent``."""

    def __init__(self, zk: ZkUtils, **controller_args: Any) -> None:
        self.zk = zk
        self.sent: list[Sent] = []
        controller_args.setdefault("time", MockTime())
        controller_args.setdefault("delete_topic_enable", True)
        self.time = controller_args["time"]
        self.controller = KafkaController(0, zk, **controller_args)
        self.controller.channel_manager_class = lambda *_: RecordingChannelManager(self.sent)
        self.transitions: list[tuple[str, object, object, object]] = []
        self.controller.partition_state_machine.add_transition_listener(self._recorder("partition"))
        self.controller.replica_state_machine.add_transition_listener(self._recorder("replica"))

    def _recorder(self, machine: str):
        def record(key, source, target) -> None:
            self.transitions.append((machine, key, source, target))

        return record

    # -- events ---------------------------------------------------------------------------------------------

    def elect(self) -> None:
        """The Startup event: broker 0 creates ``/controller`` and fails over."""
        self.controller.elect()
        assert self.controller.is_active(), "broker 0 did not become the controller"

    def failover_again(self) -> None:
        """A controller that lost its session and won the election again starts afresh."""
        self.controller.on_controller_failover()

    def start(self, *broker_ids: int) -> None:
        """Brokers register (``/brokers/ids/N``), and the broker-change event reaches the controller."""
        for b in broker_ids:
            self.zk.register_broker(b, "127.0.0.1", 9000 + b)
        self.broker_change()

    def kill(self, *broker_ids: int) -> None:
        """Brokers' sessions end (their znodes go), and the broker-change event reaches the controller."""
        for b in broker_ids:
            self.zk.client.delete(f"{BROKER_IDS_PATH}/{b}")
        self.broker_change()

    def broker_change(self) -> None:
        if self.controller.is_active():
            self.controller.handle_broker_change(self.zk.client.get_children(BROKER_IDS_PATH))

    def create_topic(self, topic: str, assignment: dict[int, list[int]]) -> None:
        """``kafka-topics --create``: the assignment under ``/brokers/topics``, and the topic-change event."""
        self.zk.create_topic(topic, assignment)
        self.controller.handle_topic_change(self.zk.get_all_topics())

    def run_events(self, *names: str, timeout_s: float = 10) -> list[str]:
        """Run the events named ``names`` that the controller's ZooKeeper watches queued, in order,
        waiting (up to ``timeout_s``) for at least one; return the names run. Events of other names
        are dropped: the caller hands the controller those itself, as they happen."""
        ran: list[str] = []
        deadline = time.monotonic() + timeout_s
        while True:
            event = self.controller.take_event(0 if ran else 0.05)
            if event is None:
                if ran:
                    return ran
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"no {names} event within {timeout_s} s")
                continue
            name, action = event
            if name in names:
                action()
                ran.append(name)

    def delete_topic(self, topic: str) -> None:
        """``kafka-topics --delete``: the mark, and the DeleteTopicsListener's event."""
        self.zk.create_delete_topic_path(topic)
        if self.controller.delete_topic_enable:  # 0.10.1 watches the path only then
            self.controller.delete_topics_listener.handle_child_change(self.zk.get_topics_to_be_deleted())

    def brokers_answer(
        self, failing: set[tuple[str, int, int]] = frozenset(), live: set[int] | None = None
    ) -> None:
        """Each broker answers its StopReplica (delete), with an error for the replicas in ``failing``;
        then the controller handles the answers its callback queued, in order. Brokers not in ``live``
        (when given) died before answering: their requests are dropped."""
        for sent in [s for s in self.requests(ApiKeys.STOP_REPLICA) if s.body["delete_partitions"]]:
            if live is not None and sent.broker_id not in live:
                continue
            [p] = sent.body["partitions"]
            error = Errors.UNKNOWN if (p["topic"], p["partition"], sent.broker_id) in failing else Errors.NONE
            sent.callback({"error_code": 0, "partitions": [{**p, "error_code": error.code}]})
        self.forget_requests()
        self.run_stop_replica_answers()

    def run_stop_replica_answers(self) -> None:
        """The StopReplica answers the callbacks put on the event queue, run on this thread. The
        queue's other events (the ZooKeeper watches') are dropped: the caller hands the controller
        those itself."""
        while (event := self.controller.take_event()) is not None:
            if event[0] == "TopicDeletionStopReplicaResult":
                event[1]()

    def controlled_shutdown(self, broker_id: int):
        """A ControlledShutdown request: its handler's thread calls ``shutdown_broker`` and waits;
        this thread handles the event it queued. Returns what ``shutdown_broker`` returned or raised."""
        outcome: list = []

        def handler() -> None:
            try:
                outcome.append(self.controller.shutdown_broker(broker_id, timeout_s=10))
            except Exception as e:
                outcome.append(e)

        caller = threading.Thread(target=handler, name=f"controlled-shutdown-{broker_id}")
        caller.start()
        self.handle_event("ControlledShutdown")
        caller.join(10)
        if caller.is_alive():
            raise TimeoutError(f"shutdown_broker({broker_id}) did not answer within 10 s")
        return outcome[0]

    def handle_event(self, name: str) -> None:
        """Take events off the controller's queue until the one named ``name``, and handle it. The
        ones before it are what the watches queued, which the caller hands over itself."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            event = self.controller.take_event(0.05)
            if event is not None and event[0] == name:
                event[1]()
                return
        raise TimeoutError(f"no {name} event within 10 s")

    def follower_catches_up(self, topic: str, partition: int, isr: list[int]) -> None:
        """The leader writes a larger ISR (as ``Partition.maybe_expand_isr`` does) and the controller
        re-reads it (its ISR-change notification listener)."""
        current = self.leader_and_isr(topic, partition)
        written, _ = self.zk.update_leader_and_isr(
            topic,
            partition,
            LeaderAndIsr(current.leader, current.leader_epoch, isr, current.zk_version),
            self.controller.epoch,
        )
        if not written:
            raise RuntimeError(f"the ISR of [{topic},{partition}] changed under the harness")
        self.controller.update_leader_and_isr_cache([(topic, partition)])

    # -- what the controller decided ----------------------------------------------------------------------

    def stop_replica_deletes(self) -> list[tuple[int, str, int]]:
        """(broker, topic, partition) of each StopReplica (delete) sent and not yet answered."""
        return self.stop_replicas(delete=True)

    def stop_replicas(self, delete: bool) -> list[tuple[int, str, int]]:
        """(broker, topic, partition) of each StopReplica sent that deletes the log (or keeps it), in
        the order sent."""
        return [
            (s.broker_id, p["topic"], p["partition"])
            for s in self.requests(ApiKeys.STOP_REPLICA)
            if s.body["delete_partitions"] == delete
            for p in s.body["partitions"]
        ]

    def sent_to(self, api: ApiKeys) -> set[int]:
        """The brokers that were sent at least one ``api`` request."""
        return {s.broker_id for s in self.requests(api)}

    def states_sent(self, api: ApiKeys, broker_id: int) -> dict[tuple[str, int], tuple[int, list[int], int]]:
        """What the LeaderAndIsr (or UpdateMetadata) requests sent to ``broker_id`` said of each
        partition, the last word counting: (leader, ISR, leader epoch)."""
        return {
            (s["topic"], s["partition"]): (s["leader"], s["isr"], s["leader_epoch"])
            for r in self.requests(api, broker_id)
            for s in r.body["partition_states"]
        }

    def taken(self, machine: str) -> list[tuple[object, str, str]]:
        """The transitions ``machine`` ("partition" or "replica") took, as (key, from, to) names."""
        return [(k, s.value, t.value) for m, k, s, t in self.transitions if m == machine]

    def leader_and_isr(self, topic: str, partition: int = 0) -> LeaderAndIsr:
        return self.zk.get_partition_state(topic, partition).leader_and_isr

    def partition_state(self, topic: str, partition: int = 0) -> PartitionState:
        return self.controller.partition_state_machine.states.get(
            (topic, partition), PartitionState.NON_EXISTENT
        )

    def replica_state(self, topic: str, partition: int, broker: int) -> ReplicaState:
        return self.controller.replica_state_machine.states.get(
            (topic, partition, broker), ReplicaState.NON_EXISTENT
        )

    def requests(self, api: ApiKeys, broker_id: int | None = None) -> list[Sent]:
        return [s for s in self.sent if s.api is api and broker_id in (None, s.broker_id)]

    def forget_requests(self) -> None:
        self.sent.clear()

    def next_step(self) -> None:
        """Forget the requests and transitions so far: what the harness holds next is one step's."""
        self.transitions.clear()
        self.forget_requests()

    def summary(self) -> list[tuple[str, list[int], str]]:
        """The requests sent since the last step, in the order sent, as (API, brokers, what it says):
        one row per body, the brokers a body went to one after another gathered in one row (a
        batch sends one UpdateMetadata body to every live broker)."""
        rows: list[tuple[str, list[int], str]] = []
        last_body = None
        for s in self.sent:
            api = s.api.api_name
            if s.api is ApiKeys.STOP_REPLICA:
                api += f"(delete={str(s.body['delete_partitions']).lower()})"
            if rows and rows[-1][0] == api and s.body == last_body:
                rows[-1][1].append(s.broker_id)
            else:
                rows.append((api, [s.broker_id], _describe(s)))
            last_body = s.body
        return rows

    def partition_rows(self, topic: str) -> list[tuple[str, ...]]:
        """Each partition of ``topic`` the partition machine holds, as (partition, its state, leader,
        ISR and leader epoch as ZooKeeper holds them, the assignment, each replica's state), one row
        per partition."""
        rows = []
        ctx = self.controller.context
        for t, p in sorted(tp for tp in self.controller.partition_state_machine.states if tp[0] == topic):
            state = self.zk.get_partition_state(t, p)
            lai = state.leader_and_isr if state else None
            replicas = sorted(
                (r, s.value) for (rt, rp, r), s in self.controller.replica_state_machine.states.items()
                if (rt, rp) == (t, p)
            )  # fmt: skip
            rows.append(
                (
                    f"{t}-{p}",
                    self.partition_state(t, p).value,
                    "-" if lai is None else str(lai.leader),
                    "-" if lai is None else str(lai.isr),
                    "-" if lai is None else str(lai.leader_epoch),
                    str(ctx.partition_replica_assignment.get((t, p), "-")),
                    ", ".join(f"{r} {s}" for r, s in replicas) or "-",
                )
            )
        return rows

    def close(self) -> None:
        self.controller.shutdown()
        self.zk.close()


def _describe(sent: Sent) -> str:
    """A request's partitions, one line each: the state a LeaderAndIsr or UpdateMetadata carries
    (leader, ISR, leader epoch, replicas), or just the name for a StopReplica."""
    if sent.api is ApiKeys.STOP_REPLICA:
        return ", ".join(f"{p['topic']}-{p['partition']}" for p in sent.body["partitions"])
    return "\n".join(
        f"{s['topic']}-{s['partition']}: leader {s['leader']}, isr {s['isr']}, epoch {s['leader_epoch']}, "
        f"replicas {s['replicas']}"
        for s in sent.body["partition_states"]
    )


@contextmanager
def running_controller(
    connect_string: str,
    make: Callable[[ZkUtils], ControllerHarness] = ControllerHarness,
    name: str = "controller",
    brokers: tuple[int, ...] = (0, 1, 2, 3),
) -> Iterator[ControllerHarness]:
    """``brokers`` registered in a ZooKeeper chroot of their own and broker 0's controller elected,
    its requests recorded; ``make(zk)`` builds the harness. The harness is closed on the way out."""
    zk = ZkUtils(f"{connect_string}/{name}_{uuid.uuid4().hex}")
    zk.setup_common_paths()
    harness = make(zk)
    for b in brokers:
        zk.register_broker(b, "127.0.0.1", 9000 + b)
    harness.elect()
    try:
        yield harness
    finally:
        harness.close()
