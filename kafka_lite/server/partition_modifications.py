"""The controller's watch on each topic's assignment: partitions added to an existing topic.

Mirrors: kafka.controller.PartitionModificationsListener (core/src/main/scala/kafka/controller/
         KafkaController.scala, Kafka 0.11.0: the ``PartitionModifications`` event)
Book:    chapter 7, 7.1.3 (the controller's listeners on ZooKeeper), 7.1.4 (new partitions go
         New -> Online)
Differs: Kafka's controller registers this watch on each topic itself, in ``onControllerFailover``
         and ``onNewTopicCreation``; here every broker watches and hands the event to its controller
         only while that controller is the active one, so the controller's own module stays as it
         is. No check for a topic being deleted or a reassignment in progress (kafka_lite has
         neither).

Adding partitions to a topic (``kafka-lite topics --alter --partitions``, CreatePartitions) rewrites
the topic's whole assignment in ``/brokers/topics/<topic>``. The controller's topic-change watch sees
only new topics (children of ``/brokers/topics``); this watch on each topic's data sees the new
partitions, which then go through the same path as a new topic's: ``on_new_partition_creation``.
"""

from __future__ import annotations

import logging
import threading

from kafka_lite.controller.kafka_controller import KafkaController
from kafka_lite.zk.zk_utils import BROKER_TOPICS_PATH, ZkUtils, topic_path

log = logging.getLogger(__name__)


class PartitionModificationsListener:
    def __init__(self, zk_utils: ZkUtils, controller: KafkaController) -> None:
        self.zk_utils = zk_utils
        self.controller = controller
        self._watched: set[str] = set()
        self._lock = threading.Lock()
        self._running = False

    def startup(self) -> None:
        self._running = True
        self.zk_utils.watch_children(BROKER_TOPICS_PATH, self._on_topics)

    def shutdown(self) -> None:
        self._running = False

    def _on_topics(self, topics: list[str]) -> bool:
        if not self._running:
            return False
        with self._lock:
            new = set(topics) - self._watched
            self._watched &= set(topics)
            self._watched |= new
        for topic in sorted(new):
            self.zk_utils.watch_data(topic_path(topic), self._watcher(topic))
        return True

    def _watcher(self, topic: str):
        def on_data(data, stat, *args) -> bool:
            if not self._running or data is None:
                with self._lock:
                    self._watched.discard(topic)
                return False  # the topic is gone: its watch goes with it
            # Kazoo also calls a new watch at once with the data as it is: harmless, since the
            # controller compares the assignment with what it knows, and it closes the gap between
            # the topic's appearance and this watch.
            if self.controller.is_active():
                # on the controller's event thread, as every controller decision
                self.controller._put(
                    "PartitionModifications", lambda: on_partition_modification(self.controller, topic)
                )
            return True

        return on_data


# --8<-- [start:on_partition_modification]
def on_partition_modification(controller: KafkaController, topic: str) -> None:
    """The topic's assignment changed: the partitions the controller does not know yet are new, and
    go New -> Online like a new topic's (Kafka's ``PartitionModifications.process``)."""
    if not controller.is_active() or topic not in controller.context.all_topics:
        return  # a topic still being created: the topic-change listener handles all its partitions
    assignment = controller.zk.get_partition_assignment(topic)
    known = controller.context.partition_replica_assignment
    added = [(topic, p) for p in sorted(assignment) if (topic, p) not in known]
    if not added:
        return
    for tp in added:
        known[tp] = list(assignment[tp[1]])
    log.info("New partitions to be added %s", {tp[1]: assignment[tp[1]] for tp in added})
    controller.on_new_partition_creation(added)


# --8<-- [end:on_partition_modification]
