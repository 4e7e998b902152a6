"""A registered broker as the controller and the brokers hold it: what its RegisterBrokerRecord says,
and whether it is fenced or shutting down now.

Mirrors: org.apache.kafka.metadata.BrokerRegistration, with org.apache.kafka.common.Endpoint
         (metadata/src/main/java/org/apache/kafka/metadata/ and clients/.../common/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: ``to_record`` takes the RegisterBrokerRecord version where Kafka takes the metadata.version
         and asks it which; an endpoint's security protocol stays the record's id (0 PLAINTEXT, 1 SSL,
         2 SASL_PLAINTEXT, 3 SASL_SSL) rather than becoming an enum.

Chapter 7's broker registers by writing an ephemeral znode with its end points; the znode vanishes
with its session. A KRaft broker registers with the controller instead (a BrokerRegistration RPC),
which writes this registration as a record; the broker then keeps it alive with heartbeats, and a
broker that stops heartbeating is *fenced* (a FenceBrokerRecord), not removed: it stays registered,
with its listeners known, and only leaves the ISRs and the leaders to choose from.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kafka_lite.clients.metadata import Node
from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.metadata.records import BrokerEndpoint, BrokerFeature, RegisterBrokerRecord
from kafka_lite.metadata.version_range import VersionRange


@dataclass(frozen=True)
class Endpoint:
    """One listener of a broker (Kafka's ``org.apache.kafka.common.Endpoint``)."""

    name: str
    host: str
    port: int
    security_protocol: int


@dataclass(frozen=True)
class BrokerRegistration:
    id: int
    epoch: int
    incarnation_id: uuid.UUID
    listeners: Mapping[str, Endpoint]  # by listener name; a list of Endpoints is taken too
    supported_features: Mapping[str, VersionRange] = field(default_factory=dict)
    rack: str | None = None
    fenced: bool = True
    in_controlled_shutdown: bool = False

    def __post_init__(self) -> None:
        # Copies, as Kafka's constructor copies its maps: a caller's dict changed later is not ours.
        listeners = self.listeners
        if not isinstance(listeners, Mapping):
            listeners = listeners_to_map(listeners)
        for name, endpoint in listeners.items():
            if not name:
                raise ValueError("Broker listeners must be named.")
            if endpoint.name != name:
                raise ValueError(f"listener {name!r} holds an endpoint named {endpoint.name!r}")
        object.__setattr__(self, "listeners", dict(listeners))
        object.__setattr__(self, "supported_features", dict(self.supported_features))

    @staticmethod
    def from_record(record: RegisterBrokerRecord) -> BrokerRegistration:
        return BrokerRegistration(
            id=record.broker_id,
            epoch=record.broker_epoch,
            incarnation_id=record.incarnation_id,
            listeners={
                e.name: Endpoint(e.name, e.host, e.port, e.security_protocol) for e in record.end_points
            },
            supported_features={
                f.name: VersionRange(f.min_supported_version, f.max_supported_version)
                for f in record.features
            },
            rack=record.rack,
            fenced=record.fenced,
            in_controlled_shutdown=record.in_controlled_shutdown,
        )

    def to_record(self, version: int = 1) -> ApiMessageAndVersion:
        """The RegisterBrokerRecord of this registration, at ``version``: v1 (the default, what
        kafka_lite's controller writes) keeps ``in_controlled_shutdown``; v0 cannot, so at v0 the
        field is left out, as Kafka leaves it out before metadata.version 3.3-IV3."""
        record = RegisterBrokerRecord(
            broker_id=self.id,
            incarnation_id=self.incarnation_id,
            broker_epoch=self.epoch,
            end_points=[
                BrokerEndpoint(name=name, host=e.host, port=e.port, security_protocol=e.security_protocol)
                for name, e in self.listeners.items()
            ],
            features=[
                BrokerFeature(name=name, min_supported_version=r.min, max_supported_version=r.max)
                for name, r in self.supported_features.items()
            ],
            rack=self.rack,
            fenced=self.fenced,
        )
        if version >= 1:
            record.in_controlled_shutdown = self.in_controlled_shutdown
        return ApiMessageAndVersion(record, version)

    def node(self, listener_name: str) -> Node | None:
        """How a client reaches this broker on ``listener_name``, or None if it has no such listener."""
        endpoint = self.listeners.get(listener_name)
        if endpoint is None:
            return None
        return Node(self.id, endpoint.host, endpoint.port, self.rack)

    def clone_with(
        self, fenced: bool | None = None, in_controlled_shutdown: bool | None = None
    ) -> BrokerRegistration:
        """This registration with ``fenced`` and ``in_controlled_shutdown`` changed where given
        (Kafka's ``cloneWith(Optional, Optional)``); itself when nothing changes."""
        new_fenced = self.fenced if fenced is None else fenced
        new_shutdown = (
            self.in_controlled_shutdown if in_controlled_shutdown is None else in_controlled_shutdown
        )
        if new_fenced == self.fenced and new_shutdown == self.in_controlled_shutdown:
            return self
        return BrokerRegistration(
            self.id, self.epoch, self.incarnation_id, self.listeners, self.supported_features,
            self.rack, new_fenced, new_shutdown,
        )  # fmt: skip

    def __hash__(self) -> int:
        return hash((self.id, self.epoch, self.incarnation_id, frozenset(self.listeners.items()),
                     frozenset(self.supported_features.items()), self.rack, self.fenced,
                     self.in_controlled_shutdown))  # fmt: skip


def listeners_to_map(listeners: Iterable[Endpoint]) -> dict[str, Endpoint]:
    """Kafka's ``listenersToMap``: endpoints by their listener name."""
    return {endpoint.name: endpoint for endpoint in listeners}
