"""What a connector has been asked to be: started or paused.

Mirrors: org.apache.kafka.connect.runtime.TargetState
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/TargetState.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: none.

``PUT /connectors/{name}/pause`` sets a connector's target state to PAUSED; the worker running it
stops calling its tasks (a source task's ``poll``, a sink task's ``put``, whose consumer pauses its
partitions) without stopping them, so ``resume`` goes on from where they were. In distributed mode
the target state is a record in the config topic, so every worker sees it and it survives a restart.
"""

from __future__ import annotations

import enum


class TargetState(enum.Enum):
    STARTED = "STARTED"
    PAUSED = "PAUSED"
