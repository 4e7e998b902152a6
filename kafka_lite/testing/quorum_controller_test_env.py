"""Quorum controllers over one LocalLogManager log, each on a deterministic event queue: what the
controller tests and chapter 12's notebook step.

Mirrors: org.apache.kafka.controller.QuorumControllerTestEnv (metadata/src/test/java/org/apache/kafka/
         controller/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: ``poll()`` runs the log's deliveries and every controller's queue on the caller's thread
         until nothing is left to do at the current MockTime; Kafka's environment runs threads and
         waits on futures. It also sends a broker's registration and heartbeats, which Kafka's
         ``QuorumControllerTest`` builds in helpers of its own (``sendBrokerheartbeat``).
"""

from __future__ import annotations

import uuid
from concurrent.futures import Future
from typing import Any

from kafka_lite.common.time import MockTime
from kafka_lite.metadata.controller.quorum_controller import QuorumController
from kafka_lite.testing.deterministic_event_queue import DeterministicEventQueue
from kafka_lite.testing.local_log_manager import LocalLogManager, SharedLogData
from kafka_lite.testing.mock_fault_handler import MockFaultHandler

CLUSTER_ID = "06B-K3N1TBCNYFgruEVP0Q"


class QuorumControllerTestEnv:
    def __init__(
        self, num_controllers: int = 3, time: MockTime | None = None, **controller_args: Any
    ) -> None:
        self.time = time or MockTime()
        self.shared = SharedLogData(self.time)
        self.controller_args = controller_args
        # One for every controller, as in Kafka's environment: a fault is recorded, not fatal.
        self.fatal_fault_handler = MockFaultHandler("fatalFaultHandler")
        self.queues: dict[int, DeterministicEventQueue] = {}
        self.controllers: dict[int, QuorumController] = {}
        self.raft_clients: dict[int, LocalLogManager] = {}
        for node_id in range(num_controllers):
            self.add_controller(node_id)

    def add_controller(self, node_id: int) -> QuorumController:
        """A controller on the shared log (a new one, or one restarted with empty memory)."""
        queue = DeterministicEventQueue(self.time)
        raft_client = LocalLogManager(node_id, self.shared)
        controller = QuorumController(
            node_id, CLUSTER_ID, self.time, queue, raft_client,
            fatal_fault_handler=self.fatal_fault_handler, **self.controller_args,
        )  # fmt: skip
        self.queues[node_id] = queue
        self.raft_clients[node_id] = raft_client
        self.controllers[node_id] = controller
        return controller

    def stop(self, node_id: int) -> None:
        """Stop a controller: its log client leaves the quorum and its queue shuts down."""
        raft_client = self.raft_clients.pop(node_id)
        raft_client.shutdown(0)
        self.shared.managers.remove(raft_client)
        self.controllers.pop(node_id).close()
        del self.queues[node_id]

    def poll(self) -> int:
        """Deliver and run until quiet; how many callbacks and events ran."""
        total = 0
        while True:
            done = self.shared.poll_all()
            done += sum(queue.run_pending() for queue in self.queues.values())
            if done == 0:
                return total
            total += done

    def elect(self, node_id: int) -> QuorumController:
        """Make ``node_id`` the leader and let it take over; the active controller."""
        self.shared.elect_leader(node_id)
        self.poll()
        return self.controllers[node_id]

    def active(self) -> QuorumController | None:
        return next((c for c in self.controllers.values() if c.is_active()), None)

    def advance(self, ms: int) -> None:
        self.time.sleep(ms)
        self.poll()

    # -- what a broker sends, as dicts of the requests' fields ------------------------------------------------

    def register_broker(self, broker_id: int, incarnation: int) -> Future:
        """A BrokerRegistration to the active controller, for a broker process whose start is
        ``incarnation`` (each start has a new incarnation id); the future holds its answer once the
        registration has committed (run ``poll``)."""
        return self.active().register_broker({
            "broker_id": broker_id, "cluster_id": CLUSTER_ID, "incarnation_id": uuid.UUID(int=incarnation),
            "listeners": [{"name": "PLAINTEXT", "host": "localhost", "port": 9092 + broker_id, "security_protocol": 0}],
            "features": [{"name": "metadata.version", "min_supported_version": 1, "max_supported_version": 7}],
            "rack": None,
        })  # fmt: skip

    def heartbeat(
        self,
        broker_id: int,
        broker_epoch: int,
        metadata_offset: int | None = None,
        want_shut_down: bool = False,
    ) -> Any:
        """One BrokerHeartbeat, sent to the active controller and answered; ``metadata_offset`` is how
        far the broker has replayed the log (by default, all that is committed)."""
        active = self.active()
        if metadata_offset is None:
            metadata_offset = active.last_committed_offset()
        future = active.process_broker_heartbeat({
            "broker_id": broker_id, "broker_epoch": broker_epoch, "current_metadata_offset": metadata_offset,
            "want_fence": False, "want_shut_down": want_shut_down,
        })  # fmt: skip
        self.poll()
        return future.result(timeout=0)
