"""Producer ids for idempotent producers, unique across the cluster.

Mirrors: kafka.coordinator.transaction.ProducerIdManager
         (core/src/main/scala/kafka/coordinator/transaction/ProducerIdManager.scala, Kafka 0.11.0)
Book:    (after the book: Kafka 0.11's idempotent producer, KIP-98)

Each broker reserves a block of ids in ZooKeeper (``/latest_producer_id_block``, with a conditional
write, so two brokers never get the same block) and hands them out one by one to InitProducerId
requests; when the block runs out it reserves the next.
"""

from __future__ import annotations

import threading

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
