"""A KRaft broker's metadata cache: the same questions chapter 7's cache answers, read from the
latest published ``MetadataImage`` instead of from UpdateMetadata requests.

Mirrors: kafka.server.metadata.KRaftMetadataCache
         (core/src/main/scala/kafka/server/metadata/KRaftMetadataCache.scala, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: it offers the interface of kafka_lite's ``MetadataCache`` (server/metadata_cache.py), which
         KafkaApis reads, rather than Kafka 3.3's (``getTopicMetadata``, ``getAliveBrokerNodes``...),
         and answers a topic with that cache's ``topic_metadata``: 3.3's errors, which are 0.11's,
         except that a partition with no reachable leader lists no ISR (3.3 lists it).

Where the ZooKeeper broker's cache is written by the controller's UpdateMetadata (under a lock, entry
by entry), this one holds a single immutable image and ``set_image`` swaps in the next one: a reader
takes ``self._image`` once and answers from that, so it never sees half of a change, and no lock is
needed. What the image says maps onto the old cache's words:

* a live broker is a registered broker that is not *fenced* (a broker whose heartbeats stopped stays
  registered, fenced, rather than vanishing as its ephemeral znode would);
* a partition's leader, leader epoch, ISR and replicas are its ``PartitionRegistration``'s, and its
  partition epoch stands where the znode version (``zk_version``) stood;
* there is no controller epoch (-1), and the controller a client is told of is a random live broker:
  clients cannot reach the KRaft controllers (KIP-590), so a broker forwards what they send it.
"""

from __future__ import annotations

import random
import uuid

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.metadata.broker_registration import BrokerRegistration
from kafka_lite.metadata.config_resource import ConfigResource, ConfigResourceType
from kafka_lite.metadata.image.metadata_image import MetadataImage
from kafka_lite.server.metadata_cache import SECURITY_PROTOCOL_NAMES, PartitionState, topic_metadata_of
from kafka_lite.zk.zk_utils import Broker, EndPoint


class KRaftMetadataCache:
    """``inter_broker_listener_name``: the listener whose address ``alive_brokers()`` gives each
    broker, as in ``MetadataCache``. ``rng`` picks the controller a client is told of."""

    def __init__(
        self, broker_id: int, inter_broker_listener_name: str = "PLAINTEXT", rng: random.Random | None = None
    ) -> None:
        self.broker_id = broker_id
        self.inter_broker_listener_name = inter_broker_listener_name
        self._rng = rng or random.Random()
        self._image = MetadataImage.EMPTY
        self._has_metadata = False
        self.controller_epoch = -1  # KRaft has no controller epoch

    # -- the image -------------------------------------------------------------------------------------

    def set_image(self, new_image: MetadataImage) -> None:
        """The publisher's one write: every reader after this sees ``new_image`` whole."""
        self._image = new_image
        self._has_metadata = True

    def current_image(self) -> MetadataImage:
        return self._image

    def has_metadata(self) -> bool:
        """Whether an image has been published yet (the first publish happens once the broker has
        caught up with the metadata log)."""
        return self._has_metadata

    # -- brokers ---------------------------------------------------------------------------------------

    def alive_brokers(self) -> list[Broker]:
        """The unfenced brokers, each at its inter-broker listener's address."""
        image = self._image
        return [
            _broker(b, self.inter_broker_listener_name)
            for b in sorted(image.cluster.brokers.values(), key=lambda b: b.id)
            if not b.fenced
        ]

    def alive_endpoints(self, listener_name: str) -> list[Broker]:
        """The unfenced brokers at their ``listener_name`` address; a broker without that listener
        is left out (Kafka's ``getAliveBrokerNodes``)."""
        image = self._image
        result = []
        for b in sorted(image.cluster.brokers.values(), key=lambda b: b.id):
            endpoint = b.listeners.get(listener_name)
            if not b.fenced and endpoint is not None:
                result.append(
                    Broker(b.id, endpoint.host, endpoint.port, b.rack, b.epoch, (_end_point(endpoint),))
                )
        return result

    def has_alive_broker(self, broker_id: int) -> bool:
        broker = self._image.cluster.broker(broker_id)
        return broker is not None and not broker.fenced

    def is_broker_fenced(self, broker_id: int) -> bool:
        broker = self._image.cluster.broker(broker_id)
        return broker is not None and broker.fenced

    @property
    def controller_id(self) -> int:
        """A random live broker, or -1 (Kafka's ``getRandomAliveBroker``): a client that sends it an
        admin request has it forwarded to the active controller."""
        alive = [b.id for b in self._image.cluster.brokers.values() if not b.fenced]
        return self._rng.choice(sorted(alive)) if alive else -1

    # -- topics and partitions ---------------------------------------------------------------------------

    def topics(self) -> list[str]:
        return sorted(self._image.topics.topics_by_name)

    def contains(self, topic: str) -> bool:
        return topic in self._image.topics.topics_by_name

    def topic_id(self, topic: str) -> uuid.UUID | None:
        found = self._image.topics.get_topic(topic)
        return None if found is None else found.id

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        found = self._image.topics.get_topic(topic_id)
        return None if found is None else found.name

    def num_partitions(self, topic: str) -> int | None:
        found = self._image.topics.get_topic(topic)
        return None if found is None else len(found.partitions)

    def topic_config(self, topic: str) -> dict[str, str]:
        """The topic's dynamic configs as the image has them: what a KRaft broker's ReplicaManager
        takes as its ``topic_config_lookup`` (a ZooKeeper broker reads ``/config/topics/<name>``)."""
        return self._image.configs.config_properties(ConfigResource(ConfigResourceType.TOPIC, topic))

    def partition_state(self, topic: str, partition: int) -> PartitionState | None:
        found = self._image.topics.get_topic(topic)
        if found is None or partition not in found.partitions:
            return None
        return _partition_state(found.partitions[partition])

    def partitions(self, topic: str) -> dict[int, PartitionState]:
        found = self._image.topics.get_topic(topic)
        if found is None:
            return {}
        return {pid: _partition_state(p) for pid, p in found.partitions.items()}

    def topic_partitions(self, topic: str) -> set[TopicPartition]:
        found = self._image.topics.get_topic(topic)
        return set() if found is None else {TopicPartition(topic, pid) for pid in found.partitions}

    # --8<-- [start:topic_metadata]
    def topic_metadata(
        self, topics: list[str], listener_name: str | None = None, error_unavailable_endpoints: bool = False
    ) -> list[dict]:
        """The ``topic_metadata`` of a Metadata response for the known ``topics``, by the rule
        ``MetadataCache`` answers with (``server/metadata_cache.py``'s ``partition_metadata``). A
        broker is reachable if it is unfenced and has ``listener_name`` (any listener when None):
        a fenced broker is to a client what a dead one was in chapter 7."""
        image = self._image
        reachable = {
            b.id
            for b in image.cluster.brokers.values()
            if not b.fenced and (listener_name is None or listener_name in b.listeners)
        }
        return [
            topic_metadata_of(name, self.partitions(name), reachable, error_unavailable_endpoints)
            for name in topics
            if image.topics.get_topic(name) is not None
        ]

    # --8<-- [end:topic_metadata]


def _partition_state(p) -> PartitionState:
    """A registration in the old cache's words: the partition epoch where the znode version was."""
    return PartitionState(p.leader, p.leader_epoch, tuple(p.isr), p.partition_epoch, tuple(p.replicas), -1)


def _end_point(endpoint) -> EndPoint:
    protocol = SECURITY_PROTOCOL_NAMES.get(endpoint.security_protocol, "PLAINTEXT")
    return EndPoint(endpoint.host, endpoint.port, endpoint.name, protocol)


def _broker(registration: BrokerRegistration, own_listener: str) -> Broker:
    """A registration as ``MetadataCache`` gives a live broker: every listener, and as its host and
    port the one this broker connects to (``own_listener``'s, else the first)."""
    endpoints = tuple(_end_point(e) for e in registration.listeners.values())
    own = registration.listeners.get(own_listener) or next(iter(registration.listeners.values()), None)
    host, port = (own.host, own.port) if own is not None else ("", -1)
    return Broker(registration.id, host, port, registration.rack, registration.epoch, endpoints or ())
