"""The four states the active controller keeps a broker in, and the pair (current, next) a
heartbeat moves it between.

Mirrors: org.apache.kafka.controller.BrokerControlState and BrokerControlStates
         (metadata/src/main/java/org/apache/kafka/controller/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft); chapter 7, 7.4 reads the ZooKeeper controller's
         controlled shutdown, which CONTROLLED_SHUTDOWN replaces

Each state answers the three questions a heartbeat reply carries: is the broker fenced, is it in
controlled shutdown, should it shut down now. Which heartbeat moves a broker from one state to
another is ``BrokerHeartbeatManager.calculate_next_broker_state``'s to decide; it is lab 19's
stage 2, and its transition table is written out inside it, in the lab's answer.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class BrokerControlState(enum.Enum):
    # (fenced, should_shut_down)
    FENCED = (True, False)
    UNFENCED = (False, False)
    CONTROLLED_SHUTDOWN = (False, False)
    SHUTDOWN_NOW = (True, True)

    def __new__(cls, fenced: bool, should_shut_down: bool) -> BrokerControlState:
        # UNFENCED and CONTROLLED_SHUTDOWN share their flags: give each member its own value, or
        # enum would make the second an alias of the first.
        member = object.__new__(cls)
        member._value_ = len(cls.__members__)
        member._fenced = fenced
        member._should_shut_down = should_shut_down
        return member

    def fenced(self) -> bool:
        return self._fenced

    def should_shut_down(self) -> bool:
        return self._should_shut_down

    def in_controlled_shutdown(self) -> bool:
        return self is BrokerControlState.CONTROLLED_SHUTDOWN


@dataclass(frozen=True)
class BrokerControlStates:
    current: BrokerControlState
    next: BrokerControlState
