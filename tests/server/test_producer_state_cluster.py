"""The producer state follows the log start on a real broker: kafka_lite's idempotent producer, whose
every record a DeleteRecords removed, is a stranger to the partition, and its next batch (a later
sequence of the same epoch) is refused with OUT_OF_ORDER_SEQUENCE_NUMBER, as Kafka 0.11 answers."""

from __future__ import annotations

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.common.errors import OutOfOrderSequenceException
from kafka_lite.common.topic_partition import TopicPartition
from tests.support.topics import topic_name

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]
GET_TIMEOUT_S = 15


def test_an_idempotent_producer_whose_records_were_deleted_is_refused_its_next_sequence(cluster):
    topic = topic_name("kl-pid-log-start")
    cluster.create_topic(topic, partitions=1)
    tp = TopicPartition(topic, 0)
    partition = cluster.server(cluster.leader_of(topic, 0)).replica_manager.get_partition((topic, 0))
    admin = cluster.admin()
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, enable_idempotence=True)
    try:
        sent = [producer.send(topic, b"v%d" % i, partition=0) for i in range(3)]
        producer.flush(GET_TIMEOUT_S)
        assert [f.get(0).offset for f in sent] == [0, 1, 2]
        producer_id = producer.transaction_manager.producer_id_and_epoch.producer_id
        assert partition.producer_state.producers[producer_id].last_seq == 2

        assert admin.delete_records({tp: 3}) == {tp: 3}
        assert producer_id not in partition.producer_state.producers

        late = producer.send(topic, b"late", partition=0)  # sequence 3, which the broker cannot place
        with pytest.raises(OutOfOrderSequenceException):
            late.get(GET_TIMEOUT_S)
        assert partition.log.log_end_offset == 3, "the refused batch was not written"
    finally:
        producer.close(0)
        admin.close()
