"""The broker registrations a run of records changes on top of a ClusterImage.

Mirrors: org.apache.kafka.image.ClusterDelta
         (metadata/src/main/java/org/apache/kafka/image/ClusterDelta.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

A change is a whole new ``BrokerRegistration`` (registrations are immutable; fencing is
``clone_with(fenced=True)``) or None for an unregistered broker. A fence or unfence names the broker
epoch it was decided for; one that does not match the registration is a broken log, so it raises
rather than applying to a newer incarnation of the broker.
"""

from __future__ import annotations

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.common.metadata.records import (
    BrokerRegistrationChangeRecord,
    FenceBrokerRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from kafka_lite.metadata.broker_registration import BrokerRegistration
from kafka_lite.metadata.image.cluster_image import ClusterImage

# BrokerRegistrationChangeRecord's tagged fields (Kafka's BrokerRegistrationFencingChange and
# BrokerRegistrationInControlledShutdownChange): the value on the wire -> the new state, None for
# "no change".
FENCING_CHANGES = {-1: False, 0: None, 1: True}
IN_CONTROLLED_SHUTDOWN_CHANGES = {0: None, 1: True}


class ClusterDelta:
    def __init__(self, image: ClusterImage) -> None:
        self.image = image
        self.changed_brokers: dict[int, BrokerRegistration | None] = {}  # None: unregistered

    def broker(self, node_id: int) -> BrokerRegistration | None:
        if node_id in self.changed_brokers:
            return self.changed_brokers[node_id]
        return self.image.broker(node_id)

    def finish_snapshot(self) -> None:
        for broker_id in self.image.brokers:
            self.changed_brokers.setdefault(broker_id, None)

    def replay(self, record: object) -> None:
        if isinstance(record, RegisterBrokerRecord):
            broker = BrokerRegistration.from_record(record)
            self.changed_brokers[broker.id] = broker
        elif isinstance(record, UnregisterBrokerRecord):
            self.changed_brokers[record.broker_id] = None
        elif isinstance(record, FenceBrokerRecord):
            current = self._get_broker_or_throw(record.id, record.epoch, "fence")
            self.changed_brokers[record.id] = current.clone_with(fenced=True)
        elif isinstance(record, UnfenceBrokerRecord):
            current = self._get_broker_or_throw(record.id, record.epoch, "unfence")
            self.changed_brokers[record.id] = current.clone_with(fenced=False)
        elif isinstance(record, BrokerRegistrationChangeRecord):
            self._replay_registration_change(record)
        else:
            raise TypeError(f"ClusterDelta cannot replay {type(record).__name__}")

    def _replay_registration_change(self, record: BrokerRegistrationChangeRecord) -> None:
        current = self._get_broker_or_throw(record.broker_id, record.broker_epoch, "change")
        if record.fenced not in FENCING_CHANGES:
            raise IllegalStateException(
                f"Unable to replay {record}: unknown value for fenced field: {record.fenced}"
            )
        if record.in_controlled_shutdown not in IN_CONTROLLED_SHUTDOWN_CHANGES:
            raise IllegalStateException(
                f"Unable to replay {record}: unknown value for inControlledShutdown field: "
                f"{record.in_controlled_shutdown}"
            )
        changed = current.clone_with(
            fenced=FENCING_CHANGES[record.fenced],
            in_controlled_shutdown=IN_CONTROLLED_SHUTDOWN_CHANGES[record.in_controlled_shutdown],
        )
        if changed != current:
            self.changed_brokers[record.broker_id] = changed

    def _get_broker_or_throw(self, broker_id: int, epoch: int, action: str) -> BrokerRegistration:
        broker = self.broker(broker_id)
        if broker is None:
            raise IllegalStateException(
                f"Tried to {action} broker {broker_id}, but that broker was not registered."
            )
        if broker.epoch != epoch:
            raise IllegalStateException(
                f"Tried to {action} broker {broker_id}, but the given epoch, {epoch}, did not match "
                f"the current broker epoch, {broker.epoch}"
            )
        return broker

    def apply(self) -> ClusterImage:
        brokers = dict(self.image.brokers)
        for broker_id, registration in self.changed_brokers.items():
            if registration is None:
                brokers.pop(broker_id, None)
            else:
                brokers[broker_id] = registration
        return ClusterImage(brokers)

    def __repr__(self) -> str:
        return f"ClusterDelta(changed_brokers={self.changed_brokers})"
