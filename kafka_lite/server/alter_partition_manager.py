"""A KRaft leader's ISR changes, sent to the controller as AlterPartition requests.

Mirrors: kafka.server.AlterPartitionManager and DefaultAlterPartitionManager
         (core/src/main/scala/kafka/server/AlterPartitionManager.scala, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft); chapter 6, 6.2.2 has the ZooKeeper broker's way
Differs: ``submit`` takes the partition's callback instead of returning a CompletableFuture: a
         Future completed before the caller attaches to it runs the callback on the caller's
         thread, inside the partition's ISR lock, which in Java is reentrant and here is not. A
         callback is only ever called from the response path, never from ``submit``. Requests carry
         both the topic's name and its id, as Kafka's builder fills both; the channel sends the
         version it speaks (by id from v2) and the answer is read by that version.

Chapter 6's leader writes a new ISR straight into the partition's znode, conditional on the znode
version it read, and then tells the controller through ``/isr_change_notification``. A KRaft broker
cannot write metadata: only the controller appends to the metadata log. So the leader *asks*: an
AlterPartition request names the partition, the leader epoch, the ISR it wants and the partition
epoch it last saw (the znode version's successor: the controller refuses a request made from an
older state with INVALID_UPDATE_VERSION, and one from an old leader with FENCED_LEADER_EPOCH).

Batching, as Kafka does it: each partition has at most one change waiting here (a second is refused
until the first is answered), and one request is in flight at a time, carrying every change waiting
when it is sent. An answer clears the partitions it names and calls their callbacks; a partition it
leaves out is sent again. A top-level error (a stale broker epoch, say) sends everything again 50 ms
later; a partition's own error goes to its callback, and the partition decides (``Partition``'s
ISR path): most of them mean "wait for the metadata log to bring the controller's state".
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafka_lite.clients.network_client import ClientResponse
from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.controller_messages import ControllerApiKeys
from kafka_lite.common.protocol.types import ZERO_UUID
from kafka_lite.common.time import Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.metadata.leader_recovery_state import LeaderRecoveryState
from kafka_lite.server.broker_to_controller_channel_manager import (
    BrokerToControllerChannelManager,
    ControllerRequestCompletionHandler,
)
from kafka_lite.utils.scheduler import Scheduler
from kafka_lite.zk.zk_utils import LeaderAndIsr

log = logging.getLogger(__name__)

# How long to wait before sending again after a top-level error (Kafka's 50 ms).
RETRY_BACKOFF_MS = 50

# What a partition hears: the controller's state of the partition (``zk_version`` holding the
# partition epoch) and NONE, or None and the partition's error.
AlterPartitionCallback = Callable[[LeaderAndIsr | None, Errors], None]


@dataclass(frozen=True)
class AlterPartitionItem:
    topic_partition: TopicPartition
    topic_id: uuid.UUID
    leader_and_isr: LeaderAndIsr  # the ISR asked for; zk_version is the partition epoch last seen
    callback: AlterPartitionCallback


class AlterPartitionManager:
    def __init__(
        self,
        channel_manager: BrokerToControllerChannelManager,
        scheduler: Scheduler,
        time: Time,
        broker_id: int,
        broker_epoch_supplier: Callable[[], int],
    ) -> None:
        self.channel_manager = channel_manager
        self.scheduler = scheduler
        self.time = time
        self.broker_id = broker_id
        self.broker_epoch_supplier = broker_epoch_supplier
        self._lock = threading.Lock()
        # One waiting change per partition, keyed by name: a topic deleted and created again under
        # the same name must not have two.
        self.unsent_isr_updates: dict[TopicPartition, AlterPartitionItem] = {}
        self._in_flight = False  # one request at a time

    def start(self) -> None:
        self.channel_manager.start()

    def shutdown(self) -> None:
        self.channel_manager.shutdown()

    # --8<-- [start:submit]
    def submit(
        self,
        topic_partition: TopicPartition,
        topic_id: uuid.UUID | None,
        leader_and_isr: LeaderAndIsr,
        callback: AlterPartitionCallback,
    ) -> bool:
        """Queue a partition's ISR change; False (Kafka's OPERATION_NOT_ATTEMPTED) if a change of
        that partition is already waiting for its answer."""
        item = AlterPartitionItem(
            TopicPartition(*topic_partition), topic_id or ZERO_UUID, leader_and_isr, callback
        )
        with self._lock:
            if item.topic_partition in self.unsent_isr_updates:
                log.info(
                    "Failed to enqueue ISR change state %s for partition %s-%d",
                    leader_and_isr,
                    *topic_partition,
                )
                return False
            self.unsent_isr_updates[item.topic_partition] = item
        self.maybe_propagate_isr_changes()
        return True

    def maybe_propagate_isr_changes(self) -> None:
        """Send every waiting change, unless a request is already in flight: its answer sends the
        rest. The items stay waiting until an answer names them."""
        with self._lock:
            if not self.unsent_isr_updates or self._in_flight:
                return
            self._in_flight = True
            items = list(self.unsent_isr_updates.values())
        self._send_request(items)

    # --8<-- [end:submit]

    def build_request(self, items: list[AlterPartitionItem], broker_epoch: int) -> dict[str, Any]:
        """The AlterPartition request for ``items``, grouped by topic, each topic by name and by id."""
        topics: dict[str, dict[str, Any]] = {}
        for item in items:
            topic = topics.setdefault(
                item.topic_partition.topic,
                {"topic_name": item.topic_partition.topic, "topic_id": item.topic_id, "partitions": []},
            )
            topic["partitions"].append(
                {
                    "partition_index": item.topic_partition.partition,
                    "leader_epoch": item.leader_and_isr.leader_epoch,
                    "new_isr": list(item.leader_and_isr.isr),
                    "leader_recovery_state": int(LeaderRecoveryState.RECOVERED),
                    "partition_epoch": item.leader_and_isr.zk_version,
                }
            )
        return {"broker_id": self.broker_id, "broker_epoch": broker_epoch, "topics": list(topics.values())}

    def _send_request(self, items: list[AlterPartitionItem]) -> None:
        broker_epoch = self.broker_epoch_supplier()
        request = self.build_request(items, broker_epoch)
        # To map topic ids back to names in a v2 answer: the metadata cache may not know the id yet.
        names_by_id = {item.topic_id: item.topic_partition.topic for item in items}
        log.debug("Sending AlterPartition to controller %s", request)

        def on_complete(response: ClientResponse) -> None:
            try:
                if response.body is None:
                    error = Errors.NETWORK_EXCEPTION  # no answer: try again, as for an auth failure
                else:
                    version = response.request.version if response.request is not None else 1
                    error = self.handle_alter_partition_response(
                        version, response.body, broker_epoch, items, names_by_id
                    )
            finally:
                self._clear_in_flight()
            if error is Errors.NONE:
                self.maybe_propagate_isr_changes()  # whatever was submitted meanwhile
            else:
                self.scheduler.schedule(
                    "send-alter-partition", self.maybe_propagate_isr_changes, RETRY_BACKOFF_MS
                )

        def on_timeout() -> None:
            # Kafka sends with no retry timeout and calls this impossible; a finite one here just
            # sends everything again.
            log.warning("AlterPartition to the controller timed out; sending again")
            self._clear_in_flight()
            self.scheduler.schedule(
                "send-alter-partition", self.maybe_propagate_isr_changes, RETRY_BACKOFF_MS
            )

        self.channel_manager.send_request(
            ControllerApiKeys.ALTER_PARTITION,
            request,
            ControllerRequestCompletionHandler(on_complete, on_timeout),
        )

    def _clear_in_flight(self) -> None:
        with self._lock:
            if not self._in_flight:
                log.warning(
                    "Attempting to clear AlterPartition in-flight flag when no apparent request is in-flight"
                )
            self._in_flight = False

    # --8<-- [start:handle_alter_partition_response]
    def handle_alter_partition_response(
        self,
        version: int,
        body: dict[str, Any],
        sent_broker_epoch: int,
        items: list[AlterPartitionItem],
        names_by_id: dict[uuid.UUID, str],
    ) -> Errors:
        """Hand each partition its answer; return the top-level error."""
        error = Errors.for_code(body["error_code"])
        if error is Errors.STALE_BROKER_EPOCH:
            log.warning("Broker had a stale broker epoch (%d), retrying.", sent_broker_epoch)
            return error
        if error is not Errors.NONE:
            log.warning(
                "Controller returned an unexpected top-level error for AlterPartition: %s", error.name
            )
            return error
        answers: dict[TopicPartition, tuple[LeaderAndIsr | None, Errors]] = {}
        for topic in body["topics"]:
            # From v2 the answer names topics by id.
            name = topic.get("topic_name") if version <= 1 else names_by_id.get(topic.get("topic_id"))
            if not name:
                log.error(
                    "Received an unexpected topic %s in the alter partition response, ignoring it.", topic
                )
                continue
            for p in topic["partitions"]:
                tp = TopicPartition(name, p["partition_index"])
                partition_error = Errors.for_code(p["error_code"])
                if partition_error is not Errors.NONE:
                    answers[tp] = (None, partition_error)
                elif p.get("leader_recovery_state", 0) not in (0, 1):
                    log.error("Controller returned an invalid leader recovery state for %s-%d: %s", *tp, p)
                    answers[tp] = (None, Errors.UNKNOWN)
                else:
                    state = LeaderAndIsr(
                        p["leader_id"], p["leader_epoch"], list(p["isr"]), p["partition_epoch"]
                    )
                    answers[tp] = (state, Errors.NONE)
        # Over what was sent rather than what came back, so that a partition the answer left out is
        # sent again rather than forgotten.
        for item in items:
            answer = answers.get(item.topic_partition)
            if answer is None:
                log.warning(
                    "Partition %s-%d was sent but not included in the response", *item.topic_partition
                )
                continue
            # Cleared before the callback runs, so that the callback may submit a new change.
            with self._lock:
                self.unsent_isr_updates.pop(item.topic_partition, None)
            item.callback(*answer)
        return Errors.NONE

    # --8<-- [end:handle_alter_partition_response]
