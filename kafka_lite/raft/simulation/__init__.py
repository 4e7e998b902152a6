"""A deterministic simulation of a Raft quorum: many KafkaRaftClients, one clock, one seed.

Mirrors: org.apache.kafka.raft.RaftEventSimulationTest
         (raft/src/test/java/org/apache/kafka/raft/RaftEventSimulationTest.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: a package, not one test class, so that a lab and the command line can run the scenarios;
         messages travel with a seeded latency; three more scenarios from MIT 6.5840's Raft lab
         (figure_8_unreliable, churn, snapshot_install) and a log cleaner for the last.

Kafka tests its Raft by running whole quorums inside one thread: every node's ``poll``, every
message delivery and every append is an event on one priority queue, ordered by simulated time
and then by the order it was scheduled. Given the seed, the run is the same every time, so a failure
found on seed 1234 is replayed exactly (``python -m kafka_lite.raft.simulation <scenario> --seed 1234``).
After every event the invariants are checked (``invariants.py``); a broken one stops the run with
the seed, the simulated time and the nodes involved.

The parts: ``event_scheduler.py`` (the queue and the clock), ``cluster.py`` (nodes, their persistent
state, kill and restart), ``message_router.py`` (delivery and the network filters),
``replicated_counter.py`` (the state machine, which snapshots itself every few records),
``invariants.py`` and ``scenarios.py``. ``python -m kafka_lite.raft.simulation all --seeds 0..499``
runs every scenario on five hundred seeds.
"""

from kafka_lite.raft.simulation.cluster import Cluster, RaftNode
from kafka_lite.raft.simulation.event_scheduler import EventScheduler, SimulationFailure
from kafka_lite.raft.simulation.message_router import (
    DropAllTraffic,
    DropOutboundRequestsFrom,
    MessageRouter,
    PermitAllTraffic,
    UnreliableNetwork,
)
from kafka_lite.raft.simulation.scenarios import SCENARIOS

__all__ = [
    "SCENARIOS",
    "Cluster",
    "DropAllTraffic",
    "DropOutboundRequestsFrom",
    "EventScheduler",
    "MessageRouter",
    "PermitAllTraffic",
    "RaftNode",
    "SimulationFailure",
    "UnreliableNetwork",
]
