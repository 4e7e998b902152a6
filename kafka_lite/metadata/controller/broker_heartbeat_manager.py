"""The active controller's soft state of each broker: when it last heartbeat, which metadata
offset it has reached, and whether it is shutting down.

Mirrors: org.apache.kafka.controller.BrokerHeartbeatManager
         (metadata/src/main/java/org/apache/kafka/controller/BrokerHeartbeatManager.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft); chapter 7, 7.1.1-7.1.2 has the ZooKeeper controller learn a
         broker died from its ephemeral znode, whose ZooKeeper session is what this replaces
Differs: the unfenced brokers are a dict kept in last-contact order, where Kafka keeps a
         doubly linked list sorted by last contact: every contact happens "now", on a monotonic
         clock, so the order of contacts is the order by contact time. The active brokers are a
         set whose lowest offset is found by a scan (Kafka: a TreeSet), since it is asked only
         while a broker is shutting down.
Labs:    lab 19, stage 2 (``touch``, ``_has_valid_session``, ``find_one_stale_broker``,
         ``calculate_next_broker_state``) and stage 3 (``next_check_time_ns``)

Soft state is state that is not in the metadata log: heartbeats are far too frequent to write,
and they mean nothing to a standby. Only the active controller has a heartbeat manager (the
cluster control manager makes one in ``activate``); a newly active controller starts every
registered broker with a fresh session, so after a failover a dead broker takes up to one more
session timeout to be fenced. That is the price of a metadata log without heartbeats in it.

A broker's session is what keeps it unfenced: it lasts ``broker.session.timeout.ms`` from the
broker's last contact, and a broker whose session has expired is fenced by the controller. Each
heartbeat also moves the broker between the states of ``broker_control_states``; which heartbeat
moves it where is ``calculate_next_broker_state``'s to decide.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from kafka_lite.common.time import Time
from kafka_lite.metadata.controller.broker_control_states import BrokerControlState, BrokerControlStates
from kafka_lite.metadata.placement.usable_broker import UsableBroker

log = logging.getLogger(__name__)

LONG_MAX = 2**63 - 1
DEFAULT_SESSION_TIMEOUT_MS = 9000  # broker.session.timeout.ms


class BrokerHeartbeatState:
    def __init__(self, broker_id: int) -> None:
        self.id = broker_id
        # The last heartbeat, in monotonic nanoseconds.
        self.last_contact_ns = 0
        # The last metadata offset the broker reported.
        self.metadata_offset = -1
        # The offset at which the broker may finish its controlled shutdown, or -1 if it is not
        # shutting down.
        self.controlled_shut_down_offset = -1
        # True unless the broker is in the unfenced list (Kafka reads it off the list's links).
        self.fenced = True

    def shutting_down(self) -> bool:
        return self.controlled_shut_down_offset >= 0

    def __repr__(self) -> str:
        return (
            f"BrokerHeartbeatState(id={self.id}, last_contact_ns={self.last_contact_ns}, "
            f"metadata_offset={self.metadata_offset}, fenced={self.fenced}, "
            f"controlled_shut_down_offset={self.controlled_shut_down_offset})"
        )


class BrokerHeartbeatManager:
    def __init__(self, time: Time, session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS) -> None:
        self.time = time
        self.session_timeout_ns = session_timeout_ms * 1_000_000
        self.brokers: dict[int, BrokerHeartbeatState] = {}
        # The unfenced brokers, oldest contact first.
        self.unfenced: dict[int, BrokerHeartbeatState] = {}
        # The unfenced brokers that are not shutting down.
        self.active: set[int] = set()

    def fence(self, broker_id: int) -> None:
        """Take a broker out of the unfenced list: its session is over."""
        broker = self.brokers.get(broker_id)
        if broker is not None:
            self._untrack(broker)

    def remove(self, broker_id: int) -> None:
        broker = self.brokers.pop(broker_id, None)
        if broker is not None:
            self._untrack(broker)

    def _untrack(self, broker: BrokerHeartbeatState) -> None:
        if not broker.fenced:
            del self.unfenced[broker.id]
            broker.fenced = True
            self.active.discard(broker.id)

    def has_valid_session(self, broker_id: int) -> bool:
        broker = self.brokers.get(broker_id)
        return broker is not None and self._has_valid_session(broker)

    def _has_valid_session(self, broker: BrokerHeartbeatState) -> bool:
        """Whether the broker still has a session: it is unfenced, and its last contact is no longer
        ago than ``broker.session.timeout.ms``."""
        # BEGIN SOLUTION
        # Up to and including the timeout, as Kafka 3.3's hasValidSession compares (>=): the
        # timeout is the silence a broker is allowed, and at exactly the timeout it has not yet been
        # silent for longer. A fenced broker has no session to keep.
        if broker.fenced:
            return False
        return broker.last_contact_ns + self.session_timeout_ns >= self.time.nanoseconds()
        # END SOLUTION

    def is_broker_unfenced(self, broker_id: int) -> bool:
        broker = self.brokers.get(broker_id)
        return broker is not None and not broker.fenced

    def register(self, broker_id: int, fenced: bool) -> None:
        """Track a broker the log says is registered, and follow the log's fencing of it."""
        broker = self.brokers.get(broker_id)
        if broker is None:
            self.touch(broker_id, fenced, -1)
        elif broker.fenced != fenced:
            self.touch(broker_id, fenced, broker.metadata_offset)

    def touch(self, broker_id: int, fenced: bool, metadata_offset: int) -> None:
        """A heartbeat (or a registration): contact is now, at ``metadata_offset``, and the broker
        is ``fenced`` or not from now on. Afterwards ``unfenced`` and ``active`` hold the broker as
        they say, ``unfenced`` still in last-contact order."""
        # BEGIN SOLUTION
        # The unfenced dict's order is the order of contacts: a broker touched again is taken out
        # (_untrack) and put back at the end, which a dict does in O(1); setting an existing key
        # would leave it where it was.
        broker = self.brokers.get(broker_id)
        if broker is None:
            broker = self.brokers[broker_id] = BrokerHeartbeatState(broker_id)
        else:
            # Its place in the unfenced list depends on the contact time being changed: take it out,
            # and put it back at the end below.
            self._untrack(broker)
        broker.last_contact_ns = self.time.nanoseconds()
        broker.metadata_offset = metadata_offset
        if fenced:
            # A fenced broker leads nothing and is in no ISR: there is nothing left for a controlled
            # shutdown to wait for, so it leaves it. Its next heartbeat is answered as a fenced
            # broker's (going at once if it asks to shut down, unfenced once caught up), where a
            # broker still counted as shutting down could only ever shut down.
            broker.controlled_shut_down_offset = -1
        else:
            self.unfenced[broker_id] = broker
            broker.fenced = False
            if not broker.shutting_down():
                self.active.add(broker_id)
        # END SOLUTION

    def lowest_active_offset(self) -> int:
        """The lowest metadata offset an active broker has reported (LONG_MAX with none)."""
        if not self.active:
            return LONG_MAX
        return min(self.brokers[broker_id].metadata_offset for broker_id in self.active)

    def update_controlled_shutdown_offset(self, broker_id: int, controlled_shut_down_offset: int) -> None:
        """Mark a broker as shutting down: it may go once every active broker has reached
        ``controlled_shut_down_offset`` (the records moving its leaderships away)."""
        broker = self.brokers.get(broker_id)
        if broker is None:
            raise RuntimeError(f"Unable to locate broker {broker_id}")
        if broker.fenced:
            raise RuntimeError("Fenced brokers cannot enter controlled shutdown.")
        self.active.discard(broker_id)
        broker.controlled_shut_down_offset = controlled_shut_down_offset
        log.debug(
            "Updated the controlled shutdown offset for broker %d to %d.",
            broker_id,
            controlled_shut_down_offset,
        )

    def next_check_time_ns(self) -> int:
        """When the controller must next look for a stale broker: the last instant the oldest
        unfenced session is still valid (the controller checks one nanosecond later), or LONG_MAX
        (never) when no session can expire."""
        # BEGIN SOLUTION
        # The first unfenced broker is the oldest contact: its session ends first. With nobody
        # unfenced, LONG_MAX makes the controller cancel its check; the heartbeat or registration
        # that unfences a broker schedules it again.
        first = next(iter(self.unfenced.values()), None)
        if first is None:
            return LONG_MAX
        return first.last_contact_ns + self.session_timeout_ns
        # END SOLUTION

    def find_one_stale_broker(self) -> int | None:
        """A broker whose session has expired, if any, found without looking at every broker."""
        # BEGIN SOLUTION
        # Only the oldest contact, the first unfenced broker, can have expired first.
        first = next(iter(self.unfenced.values()), None)
        if first is not None and not self._has_valid_session(first):
            return first.id
        return None
        # END SOLUTION

    def usable_brokers(self, id_to_rack: Callable[[int], str | None]) -> Iterator[UsableBroker]:
        """The brokers a new replica may go to: every registered broker not shutting down."""
        for broker in list(self.brokers.values()):
            if not broker.shutting_down():
                yield UsableBroker(broker.id, id_to_rack(broker.id), broker.fenced)

    def current_broker_state(self, broker: BrokerHeartbeatState) -> BrokerControlState:
        if broker.shutting_down():
            return BrokerControlState.CONTROLLED_SHUTDOWN
        if broker.fenced:
            return BrokerControlState.FENCED
        return BrokerControlState.UNFENCED

    def calculate_next_broker_state(
        self,
        broker_id: int,
        request: dict[str, Any],
        register_broker_record_offset: int,
        has_leaderships: Callable[[], bool],
    ) -> BrokerControlStates:
        """Where a heartbeat moves its broker, from the state it is in (``current_broker_state``)
        to the state KIP-631's rules say: ``BrokerControlStates(current, next)``.

        ``request`` is a BrokerHeartbeat request (``want_fence``, ``want_shut_down``,
        ``current_metadata_offset``); ``register_broker_record_offset`` the offset of the broker's
        registration record, which it must have replayed before it serves anything;
        ``has_leaderships()`` whether the broker still leads a partition. A broker this manager
        holds no state for gets an answer too.
        """
        # BEGIN SOLUTION
        # Kafka 3.3's calculateNextBrokerState, one block per current state:
        #
        #   FENCED              -> SHUTDOWN_NOW         it wants to shut down (it leads nothing)
        #   FENCED              -> UNFENCED             it does not want to be fenced, and its
        #                                               offset has reached its registration record's
        #   FENCED              -> FENCED               otherwise
        #   UNFENCED            -> SHUTDOWN_NOW         it wants to be fenced and to shut down
        #   UNFENCED            -> FENCED               it wants to be fenced
        #                                               (or, elsewhere, its session expires)
        #   UNFENCED            -> CONTROLLED_SHUTDOWN  it wants to shut down and still leads
        #   UNFENCED            -> SHUTDOWN_NOW         it wants to shut down and leads nothing
        #   UNFENCED            -> UNFENCED             otherwise
        #   CONTROLLED_SHUTDOWN -> SHUTDOWN_NOW         it leads nothing any more, and every active
        #                                               broker has reached its controlled shutdown
        #                                               offset (with none active, nothing holds it:
        #                                               lowest_active_offset() is LONG_MAX)
        #   CONTROLLED_SHUTDOWN -> CONTROLLED_SHUTDOWN  otherwise
        #
        # A broker with no state here (sessions are soft state: one this controller never touched)
        # is a fresh one, fenced and not shutting down: it is answered by the FENCED rows.
        broker = self.brokers.get(broker_id) or BrokerHeartbeatState(broker_id)
        current = self.current_broker_state(broker)
        if current is BrokerControlState.FENCED:
            if request["want_shut_down"]:
                log.info("Fenced broker %d has requested and been granted an immediate shutdown.", broker_id)
                return BrokerControlStates(current, BrokerControlState.SHUTDOWN_NOW)
            if not request["want_fence"]:
                if request["current_metadata_offset"] >= register_broker_record_offset:
                    log.info(
                        "The request from broker %d to unfence has been granted because it has caught up with "
                        "the offset of its register broker record %d.",
                        broker_id,
                        register_broker_record_offset,
                    )
                    return BrokerControlStates(current, BrokerControlState.UNFENCED)
                log.debug(
                    "The request from broker %d to unfence cannot yet be granted because it has not caught "
                    "up with the offset of its register broker record %d. It is still at offset %d.",
                    broker_id,
                    register_broker_record_offset,
                    request["current_metadata_offset"],
                )
            return BrokerControlStates(current, BrokerControlState.FENCED)
        if current is BrokerControlState.UNFENCED:
            if request["want_fence"]:
                if request["want_shut_down"]:
                    log.info(
                        "Unfenced broker %d has requested and been granted an immediate shutdown.", broker_id
                    )
                    return BrokerControlStates(current, BrokerControlState.SHUTDOWN_NOW)
                log.info("Unfenced broker %d has requested and been granted fencing", broker_id)
                return BrokerControlStates(current, BrokerControlState.FENCED)
            if request["want_shut_down"]:
                if has_leaderships():
                    log.info(
                        "Unfenced broker %d has requested and been granted a controlled shutdown.", broker_id
                    )
                    return BrokerControlStates(current, BrokerControlState.CONTROLLED_SHUTDOWN)
                log.info(
                    "Unfenced broker %d has requested and been granted an immediate shutdown.", broker_id
                )
                return BrokerControlStates(current, BrokerControlState.SHUTDOWN_NOW)
            return BrokerControlStates(current, BrokerControlState.UNFENCED)
        if current is BrokerControlState.CONTROLLED_SHUTDOWN:
            if has_leaderships():
                log.debug(
                    "Broker %d is in controlled shutdown state, but can not shut down because more leaders "
                    "still need to be moved.",
                    broker_id,
                )
                return BrokerControlStates(current, BrokerControlState.CONTROLLED_SHUTDOWN)
            # It leads nothing. It may go once every active broker has seen the records that moved
            # its leaderships (their offsets have passed its controlled-shutdown offset), so no
            # client is sent to it by a broker with older metadata.
            lowest_active_offset = self.lowest_active_offset()
            if broker.controlled_shut_down_offset <= lowest_active_offset:
                log.info(
                    "The request from broker %d to shut down has been granted since the lowest active offset "
                    "%d is now greater than the broker's controlled shutdown offset %d.",
                    broker_id,
                    lowest_active_offset,
                    broker.controlled_shut_down_offset,
                )
                return BrokerControlStates(current, BrokerControlState.SHUTDOWN_NOW)
            log.debug(
                "The request from broker %d to shut down can not yet be granted because the lowest active "
                "offset %d is not greater than the broker's shutdown offset %d.",
                broker_id,
                lowest_active_offset,
                broker.controlled_shut_down_offset,
            )
            return BrokerControlStates(current, BrokerControlState.CONTROLLED_SHUTDOWN)
        return BrokerControlStates(current, BrokerControlState.SHUTDOWN_NOW)
        # END SOLUTION
