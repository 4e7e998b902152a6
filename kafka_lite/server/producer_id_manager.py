"""Producer ids for idempotent producers, unique across the cluster.

Mirrors: kafka.coordinator.transaction.ProducerIdManager
         (core/src/main/scala/kafka/coordinator/transaction/ProducerIdManager.scala, Kafka 0.11.0)
Book:    (after the book: Kafka 0.11's idempotent producer, KIP-98)

Each broker reserves a block of ids in ZooKeeper (``/latest_producer_id_block``, with a conditional
write, so two brokers never get the same block) and hands them out one by one to InitProducerId
requests; when the block runs out it reserves the next. A KRaft broker (chapter 12) asks the active
controller for its blocks instead: ``RPCProducerIdManager``, below.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future

from kafka_lite.common.errors import Errors, KafkaException
from kafka_lite.common.protocol.controller_messages import ControllerApiKeys
from kafka_lite.server.broker_to_controller_channel_manager import (
    BrokerToControllerChannelManager,
    ControllerRequestCompletionHandler,
)
from kafka_lite.zk.zk_utils import ZkUtils


class ProducerIdManager:
    def __init__(self, broker_id: int, zk_utils: ZkUtils) -> None:
        self.broker_id = broker_id
        self.zk_utils = zk_utils
        self._lock = threading.Lock()
        self._next = 0
        self._end = -1  # the last id of the current block; none reserved yet

    def generate_producer_id(self) -> int:
        with self._lock:
            if self._next > self._end:
                self._next, self._end = self.zk_utils.get_new_producer_id_block(self.broker_id)
            pid = self._next
            self._next += 1
            return pid


class RPCProducerIdManager:
    """A KRaft broker's producer ids: blocks asked of the active controller with AllocateProducerIds.

    Mirrors kafka.coordinator.transaction.RPCProducerIdManager (ProducerIdManager.scala, Kafka
    3.3.0, KIP-730). The controller writes a ``ProducerIdsRecord`` for each block, so a block is
    the cluster's once it commits, as ``/latest_producer_id_block`` was once written. The caller
    (the transaction coordinator, on a request thread) waits for the block at most ``max_wait_ms``,
    as 3.3's does; it then raises, and InitProducerId answers COORDINATOR_NOT_AVAILABLE.

    Differs: the next block is asked for when the current one runs out, not prefetched at 90 %."""

    def __init__(
        self,
        broker_id: int,
        broker_epoch_supplier: Callable[[], int],
        channel_manager: BrokerToControllerChannelManager,
        max_wait_ms: int = 5_000,
    ) -> None:
        self.broker_id = broker_id
        self.broker_epoch_supplier = broker_epoch_supplier
        self.channel_manager = channel_manager
        self.max_wait_ms = max_wait_ms
        self._lock = threading.Lock()
        self._next = 0
        self._end = -1  # the last id of the current block; none received yet

    def generate_producer_id(self) -> int:
        with self._lock:
            if self._next > self._end:
                self._next, self._end = self._allocate_block()
            pid = self._next
            self._next += 1
            return pid

    def _allocate_block(self) -> tuple[int, int]:
        """The first and last id of a new block from the controller."""
        answer: Future[dict] = Future()
        self.channel_manager.send_request(
            ControllerApiKeys.ALLOCATE_PRODUCER_IDS,
            {"broker_id": self.broker_id, "broker_epoch": self.broker_epoch_supplier()},
            ControllerRequestCompletionHandler(
                on_complete=lambda response: answer.set_result(response.body),
                on_timeout=lambda: answer.set_exception(
                    KafkaException("Timed out waiting for the controller to allocate producer ids")
                ),
            ),
        )
        try:
            body = answer.result(timeout=self.max_wait_ms / 1000)
        except TimeoutError:
            raise KafkaException(
                f"Timed out waiting {self.max_wait_ms} ms for the next producer id block"
            ) from None
        error = Errors.for_code(body["error_code"])
        if error is not Errors.NONE:
            raise KafkaException(f"Error allocating producer ids: {error.name}")
        start = body["producer_id_start"]
        return start, start + body["producer_id_len"] - 1
