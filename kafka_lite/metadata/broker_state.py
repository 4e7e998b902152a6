"""The state of a KRaft broker, as its lifecycle manager moves it from start-up to shutdown.

Mirrors: org.apache.kafka.metadata.BrokerState
         (metadata/src/main/java/org/apache/kafka/metadata/BrokerState.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

The numbers are Kafka's and part of its public face: they are the value of the ``BrokerState``
metric and travel in some messages, so they keep the gaps (4 and 5 were ZooKeeper-mode states that
KRaft dropped). ``from_value`` maps a number nobody defined to ``UNKNOWN``, as Kafka's does, rather
than raising: a newer broker may report a state this one does not know.

The order a broker goes through them (``BrokerLifecycleManager`` makes each move)::

    NOT_RUNNING -> STARTING -> RECOVERY -> RUNNING -> PENDING_CONTROLLED_SHUTDOWN -> SHUTTING_DOWN

STARTING until the controller says the broker has caught up with the metadata log, RECOVERY until
the controller unfences it, RUNNING while it serves clients. A broker that is told to stop before it
is RUNNING skips straight to SHUTTING_DOWN.
"""

from __future__ import annotations

import enum


class BrokerState(enum.IntEnum):
    # The state the broker is in when it first starts up.
    NOT_RUNNING = 0
    # Registering with the controller and catching up with the cluster's metadata.
    STARTING = 1
    # Caught up with the metadata, but not yet unfenced by the controller.
    RECOVERY = 2
    # Registered, unfenced, and accepting client requests.
    RUNNING = 3
    # Asking the controller to move its leaderships away before it stops.
    PENDING_CONTROLLED_SHUTDOWN = 6
    # Shutting down.
    SHUTTING_DOWN = 7
    # A number this broker does not know.
    UNKNOWN = 127

    @staticmethod
    def from_value(value: int) -> BrokerState:
        try:
            return BrokerState(value)
        except ValueError:
            return BrokerState.UNKNOWN
