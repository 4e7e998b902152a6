"""Metadata records a test replays into a MetadataDelta: brokers, topics, partitions, as a quorum
controller writes them."""

from __future__ import annotations

import uuid

from kafka_lite.common.metadata import (
    BrokerEndpoint,
    FenceBrokerRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
    UnfenceBrokerRecord,
)
from kafka_lite.metadata.image import MetadataDelta, MetadataImage

BROKER_EPOCH = 100


def register(
    broker_id: int, fenced: bool = False, listeners=("PLAINTEXT",), rack=None
) -> RegisterBrokerRecord:
    """Broker ``broker_id`` at 127.0.0.1, port 9090 + 10 * id (+1 for a second listener)."""
    return RegisterBrokerRecord(
        broker_id=broker_id,
        incarnation_id=uuid.UUID(int=broker_id + 1),
        broker_epoch=BROKER_EPOCH + broker_id,
        end_points=[
            BrokerEndpoint(name=name, host="127.0.0.1", port=9090 + 10 * broker_id + i, security_protocol=0)
            for i, name in enumerate(listeners)
        ],
        rack=rack,
        fenced=fenced,
    )


def fence(broker_id: int) -> FenceBrokerRecord:
    return FenceBrokerRecord(id=broker_id, epoch=BROKER_EPOCH + broker_id)


def unfence(broker_id: int) -> UnfenceBrokerRecord:
    return UnfenceBrokerRecord(id=broker_id, epoch=BROKER_EPOCH + broker_id)


def topic(name: str, topic_id: uuid.UUID) -> TopicRecord:
    return TopicRecord(name=name, topic_id=topic_id)


def partition(topic_id, partition_id, replicas, isr=None, leader=None, leader_epoch=0, partition_epoch=0):
    isr = list(replicas) if isr is None else isr
    return PartitionRecord(
        partition_id=partition_id,
        topic_id=topic_id,
        replicas=list(replicas),
        isr=list(isr),
        leader=replicas[0] if leader is None else leader,
        leader_epoch=leader_epoch,
        partition_epoch=partition_epoch,
    )


def change(topic_id, partition_id, isr=None, leader=-2) -> PartitionChangeRecord:
    return PartitionChangeRecord(partition_id=partition_id, topic_id=topic_id, isr=isr, leader=leader)


def delta_of(
    image: MetadataImage, *records, first_offset: int | None = None, epoch: int = 1
) -> MetadataDelta:
    """A delta of ``image`` with ``records`` replayed at consecutive offsets after the image's."""
    delta = MetadataDelta(image)
    offset = image.highest_offset_and_epoch.offset + 1 if first_offset is None else first_offset
    for i, record in enumerate(records):
        delta.replay(offset + i, epoch, record)
    return delta


def image_of(*records, image: MetadataImage = MetadataImage.EMPTY) -> MetadataImage:
    return delta_of(image, *records).apply()
