"""What a run of metadata records changes on top of a MetadataImage, and the image it leads to.

Mirrors: org.apache.kafka.image.MetadataDelta
         (metadata/src/main/java/org/apache/kafka/image/MetadataDelta.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: no ACL or client-quota deltas; ``replay`` dispatches through a table by record type where
         Kafka has a switch and one overload per record class.

A delta starts from an image and makes a part's delta only when a record first touches that part;
``apply`` builds the new image from the parts that changed and reuses the rest. A broker replays each
committed batch into a delta, applies it, and publishes the new image (with the delta, so that
``topics_delta.local_changes(broker_id)`` tells its ReplicaManager what to lead and follow).

Loading a snapshot is the same, over the snapshot's records, followed by ``finish_snapshot``: the
snapshot holds the whole state, so what the old image has and the snapshot does not name is gone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import ClassVar

from kafka_lite.common.metadata.api_message import ApiMessage
from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.metadata.metadata_record_type import MetadataRecordType
from kafka_lite.common.metadata.records import FeatureLevelRecord, RemoveTopicRecord
from kafka_lite.metadata.image.acls_delta import AclsDelta
from kafka_lite.metadata.image.cluster_delta import ClusterDelta
from kafka_lite.metadata.image.configurations_delta import ConfigurationsDelta
from kafka_lite.metadata.image.features_delta import FeaturesDelta
from kafka_lite.metadata.image.metadata_image import MetadataImage
from kafka_lite.metadata.image.producer_ids_delta import ProducerIdsDelta
from kafka_lite.metadata.image.topics_delta import TopicsDelta
from kafka_lite.metadata.metadata_version import MetadataVersion
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch


class MetadataDelta:
    def __init__(self, image: MetadataImage) -> None:
        self.image = image
        self.highest_offset = image.highest_offset_and_epoch.offset
        self.highest_epoch = image.highest_offset_and_epoch.epoch
        self.features_delta: FeaturesDelta | None = None
        self.cluster_delta: ClusterDelta | None = None
        self.topics_delta: TopicsDelta | None = None
        self.configs_delta: ConfigurationsDelta | None = None
        self.producer_ids_delta: ProducerIdsDelta | None = None
        self.acls_delta: AclsDelta | None = None

    # -- the parts, made on first use ------------------------------------------------------------

    def get_or_create_features_delta(self) -> FeaturesDelta:
        if self.features_delta is None:
            self.features_delta = FeaturesDelta(self.image.features)
        return self.features_delta

    def get_or_create_cluster_delta(self) -> ClusterDelta:
        if self.cluster_delta is None:
            self.cluster_delta = ClusterDelta(self.image.cluster)
        return self.cluster_delta

    def get_or_create_topics_delta(self) -> TopicsDelta:
        if self.topics_delta is None:
            self.topics_delta = TopicsDelta(self.image.topics)
        return self.topics_delta

    def get_or_create_configs_delta(self) -> ConfigurationsDelta:
        if self.configs_delta is None:
            self.configs_delta = ConfigurationsDelta(self.image.configs)
        return self.configs_delta

    def get_or_create_acls_delta(self) -> AclsDelta:
        if self.acls_delta is None:
            self.acls_delta = AclsDelta(self.image.acls)
        return self.acls_delta

    def get_or_create_producer_ids_delta(self) -> ProducerIdsDelta:
        if self.producer_ids_delta is None:
            self.producer_ids_delta = ProducerIdsDelta(self.image.producer_ids)
        return self.producer_ids_delta

    def metadata_version_changed(self) -> MetadataVersion | None:
        return None if self.features_delta is None else self.features_delta.metadata_version_change()

    # -- replay ----------------------------------------------------------------------------------

    def read(
        self, highest_offset: int, highest_epoch: int, batches: Iterable[list[ApiMessageAndVersion]]
    ) -> None:
        """Replay every record of ``batches`` (a snapshot's, say), all at one offset and epoch."""
        for batch in batches:
            for record in batch:
                self.replay(highest_offset, highest_epoch, record.message)

    def replay(self, offset: int, epoch: int, record: ApiMessage) -> None:
        """Apply one record at ``offset`` in leader ``epoch``: the image this delta makes ends there."""
        self.highest_offset = offset
        self.highest_epoch = epoch
        record_type = MetadataRecordType.from_id(record.api_key())
        handler = self._HANDLERS.get(record_type)
        if handler is None:
            raise RuntimeError(f"Unknown metadata record type {record_type}")
        handler(self, record)

    def _replay_cluster(self, record: ApiMessage) -> None:
        self.get_or_create_cluster_delta().replay(record)

    def _replay_topics(self, record: ApiMessage) -> None:
        self.get_or_create_topics_delta().replay(record)

    def _replay_remove_topic(self, record: RemoveTopicRecord) -> None:
        topic_name = self.get_or_create_topics_delta().replay(record)
        self.get_or_create_configs_delta().replay_remove_topic(topic_name)

    def _replay_config(self, record: ApiMessage) -> None:
        self.get_or_create_configs_delta().replay(record)

    def _replay_feature_level(self, record: FeatureLevelRecord) -> None:
        # Kafka then tells every part of a metadata.version change (handleMetadataVersionChange);
        # in 3.3 none of the parts this image keeps does anything with it, so neither do we.
        self.get_or_create_features_delta().replay(record)

    def _replay_producer_ids(self, record: ApiMessage) -> None:
        self.get_or_create_producer_ids_delta().replay(record)

    def _replay_acl(self, record: ApiMessage) -> None:
        self.get_or_create_acls_delta().replay(record)

    def _replay_no_op(self, record: ApiMessage) -> None:
        pass  # it moves the offset, which replay has already recorded

    _HANDLERS: ClassVar[dict[MetadataRecordType, Callable[[MetadataDelta, ApiMessage], None]]] = {
        MetadataRecordType.REGISTER_BROKER_RECORD: _replay_cluster,
        MetadataRecordType.UNREGISTER_BROKER_RECORD: _replay_cluster,
        MetadataRecordType.FENCE_BROKER_RECORD: _replay_cluster,
        MetadataRecordType.UNFENCE_BROKER_RECORD: _replay_cluster,
        MetadataRecordType.BROKER_REGISTRATION_CHANGE_RECORD: _replay_cluster,
        MetadataRecordType.TOPIC_RECORD: _replay_topics,
        MetadataRecordType.PARTITION_RECORD: _replay_topics,
        MetadataRecordType.PARTITION_CHANGE_RECORD: _replay_topics,
        MetadataRecordType.REMOVE_TOPIC_RECORD: _replay_remove_topic,
        MetadataRecordType.CONFIG_RECORD: _replay_config,
        MetadataRecordType.FEATURE_LEVEL_RECORD: _replay_feature_level,
        MetadataRecordType.PRODUCER_IDS_RECORD: _replay_producer_ids,
        MetadataRecordType.ACCESS_CONTROL_ENTRY_RECORD: _replay_acl,
        MetadataRecordType.REMOVE_ACCESS_CONTROL_ENTRY_RECORD: _replay_acl,
        MetadataRecordType.NO_OP_RECORD: _replay_no_op,
    }

    def finish_snapshot(self) -> None:
        self.get_or_create_features_delta().finish_snapshot()
        self.get_or_create_cluster_delta().finish_snapshot()
        self.get_or_create_topics_delta().finish_snapshot()
        self.get_or_create_configs_delta().finish_snapshot()
        self.get_or_create_producer_ids_delta().finish_snapshot()
        self.get_or_create_acls_delta().finish_snapshot()

    # -- the new image ---------------------------------------------------------------------------

    # --8<-- [start:apply]
    def apply(self) -> MetadataImage:
        image = self.image
        return MetadataImage(
            OffsetAndEpoch(self.highest_offset, self.highest_epoch),
            image.features if self.features_delta is None else self.features_delta.apply(),
            image.cluster if self.cluster_delta is None else self.cluster_delta.apply(),
            image.topics if self.topics_delta is None else self.topics_delta.apply(),
            image.configs if self.configs_delta is None else self.configs_delta.apply(),
            image.producer_ids if self.producer_ids_delta is None else self.producer_ids_delta.apply(),
            image.acls if self.acls_delta is None else self.acls_delta.apply(),
        )

    # --8<-- [end:apply]

    def __repr__(self) -> str:
        return (
            f"MetadataDelta(highest_offset={self.highest_offset}, highest_epoch={self.highest_epoch}, "
            f"features_delta={self.features_delta}, cluster_delta={self.cluster_delta}, "
            f"topics_delta={self.topics_delta}, configs_delta={self.configs_delta}, "
            f"producer_ids_delta={self.producer_ids_delta}, acls_delta={self.acls_delta})"
        )
