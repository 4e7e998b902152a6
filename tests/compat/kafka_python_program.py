"""A program written for kafka-python, in the idioms its documentation shows.

tests/compat/test_kafka_python_idioms.py runs it twice against one cluster: as it is, on kafka-python,
and with its imports changed to kafka_lite's (``kafka`` to ``kafka_lite``, ``kafka.admin`` to
``kafka_lite.admin``, ``kafka.errors`` to ``kafka_lite.errors``), and compares what it prints. Nothing
else in it may change between the two runs, so it names no kafka_lite type.

Usage: python kafka_python_program.py BOOTSTRAP TOPIC GROUP
"""

import json
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, OffsetAndMetadata, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import TopicAlreadyExistsError

RECORDS = 30
bootstrap, topic, group = sys.argv[1:4]
out = {}

# The admin client: create a topic, then fail to create it again.
admin = KafkaAdminClient(bootstrap_servers=bootstrap)
admin.create_topics([NewTopic(name=topic, num_partitions=3, replication_factor=1)])
try:
    admin.create_topics([NewTopic(name=topic, num_partitions=3, replication_factor=1)])
    out["created_twice"] = True
except TopicAlreadyExistsError:
    out["created_twice"] = False
admin.close()

# The producer, with serializers; send(...).get() gives the record's metadata.
producer = KafkaProducer(
    bootstrap_servers=bootstrap,
    key_serializer=str.encode,
    value_serializer=lambda v: json.dumps(v).encode(),
)
out["sent"] = []
for i in range(RECORDS):
    metadata = producer.send(topic, key=f"user-{i % 7}", value={"n": i}).get(timeout=30)
    out["sent"].append(
        [
            metadata.topic == topic,
            metadata.topic_partition == TopicPartition(topic, metadata.partition),
            metadata.partition,
            metadata.offset,
        ]
    )
producer.flush()
producer.close()

# The consumer in a group, subscribed by name, iterated until it has every record.
consumer = KafkaConsumer(
    topic,
    bootstrap_servers=bootstrap,
    group_id=group,
    auto_offset_reset="earliest",
    enable_auto_commit=False,
    key_deserializer=bytes.decode,
    value_deserializer=json.loads,
    consumer_timeout_ms=20_000,
)
received = []
for message in consumer:
    received.append([message.partition, message.offset, message.key, message.value["n"]])
    if len(received) == RECORDS:
        break
out["received"] = sorted(received)

partitions = sorted(consumer.assignment())
out["assignment"] = [[tp.topic == topic, tp.partition] for tp in partitions]
end_offsets = consumer.end_offsets(partitions)
out["end_offsets"] = sorted([tp.partition, offset] for tp, offset in end_offsets.items())
out["positions"] = [consumer.position(tp) for tp in partitions]

# Commit what was consumed, then read it back; then commit one offset of our own choosing.
out["committed_before"] = [consumer.committed(tp) for tp in partitions]
consumer.commit()
out["committed"] = [consumer.committed(tp) for tp in partitions]
first = partitions[0]
consumer.commit({first: OffsetAndMetadata(1, "by hand", -1)})
committed = consumer.committed(first, metadata=True)
out["committed_by_hand"] = [committed.offset, committed.metadata]

# Back to the beginning, then poll: what comes back is keyed by TopicPartition.
consumer.seek_to_beginning()
out["positions_after_seek"] = [consumer.position(tp) for tp in partitions]
again = []
deadline = time.monotonic() + 20
while len(again) < RECORDS and time.monotonic() < deadline:
    batches = consumer.poll(timeout_ms=500, max_records=7)
    assert sum(len(records) for records in batches.values()) <= 7
    for tp, records in batches.items():
        assert tp == TopicPartition(tp.topic, tp.partition)
        again.extend([tp.partition, r.offset, r.key, r.value["n"]] for r in records)
out["received_again"] = sorted(again)
consumer.close()

print(json.dumps(out, sort_keys=True))
