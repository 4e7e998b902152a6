"""Kafka Connect's distributed mode: workers in a group, their configs, offsets and statuses in topics.

Mirrors: org.apache.kafka.connect.runtime.distributed
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/distributed/, Kafka 0.10.1)
Book:    chapter 8, 8.3.3-8.3.6 (the herder, the worker, the config and status stores)

``DistributedHerder`` runs a worker as a member of a Connect group (``WorkerGroupMember``,
``WorkerCoordinator`` and ``ConnectProtocol``, on the consumer's group machinery); the group's
leader deals connectors and tasks over the members and alone writes the config topic.
``connect_distributed`` wires a worker together as ``kafka-lite connect distributed`` runs it.
"""
