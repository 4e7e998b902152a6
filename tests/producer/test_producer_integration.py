"""kafka_lite's KafkaProducer against real kafka_lite brokers: what it writes, kafka-python reads back
exactly; every acks setting and codec; bad sends fail alone; a batch over the topic's
max.message.bytes is split; and the faults: a stopped broker, a moved leader, a lost response, a
full buffer and close(0) with batches in flight. (confluent-kafka and kcat read back in
tests/compat/test_producer_read_back.py.)
"""

from __future__ import annotations

import threading
import time

import pytest
from kafka import KafkaConsumer, TopicPartition

from kafka_lite import KafkaProducer
from kafka_lite.common.errors import InvalidTopicException, KafkaException, NetworkException, TimeoutException
from kafka_lite.producer.default_partitioner import murmur2, to_positive
from kafka_lite.server.kafka_server import KafkaServer
from tests.producer.support import ProduceResponseProxy
from tests.support.cluster import LiteCluster
from tests.support.topics import consume_all, topic_name
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]
GET_TIMEOUT_S = 15


def test_keyed_records_with_headers_and_timestamps_read_back_exactly_by_kafka_python(cluster):
    topic = topic_name("kl-producer")
    # Records stamped in 2020 are past the default retention: keep them, or the retention check may
    # delete them under the test.
    cluster.create_topic(topic, partitions=3, retention_ms=-1)
    sent = [
        (
            f"key-{i}".encode(),
            f"value-{i}".encode(),
            [("h", f"{i}".encode()), ("null", None)],
            1_600_000_000_000 + i,
        )
        for i in range(50)
    ]
    with KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, linger_ms=5) as producer:
        futures = [
            producer.send(topic, value, key=key, headers=headers, timestamp_ms=ts)
            for key, value, headers, ts in sent
        ]
        metadata = [f.get(GET_TIMEOUT_S) for f in futures]
        m = producer.metrics()
        assert m["request-total"] >= 1
        # every produce request sent has been answered (each record's future is done), and each
        # answer's latency was recorded: the sensor's count, not only its bounds
        assert producer.sender.metrics.request_latency.count == m["request-total"]
        assert m["request-latency-max"] >= m["request-latency-avg"] >= 0
    records = consume_all(cluster.bootstrap_servers, topic, 3, len(sent))
    assert len(records) == len(sent)
    by_key = {r.key: r for r in records}
    for (key, value, headers, ts), md in zip(sent, metadata, strict=True):
        record = by_key[key]
        assert (record.value, record.timestamp, record.headers) == (value, ts, headers)
        # The future's metadata names where the record really is.
        assert (md.topic, md.partition, md.offset, md.timestamp) == (
            topic,
            record.partition,
            record.offset,
            ts,
        )
        # Keyed records land where Java's DefaultPartitioner puts them.
        assert record.partition == to_positive(murmur2(key)) % 3


def test_keyed_records_land_where_librdkafkas_murmur2_random_partitioner_puts_them(cluster):
    from confluent_kafka import Producer

    topic = topic_name("kl-murmur")
    cluster.create_topic(topic, partitions=7)
    keys = [f"user-{i}".encode() for i in range(40)] + [b"", b"a", b"ab", b"abc"]
    reference = Producer({"bootstrap.servers": cluster.bootstrap_servers, "partitioner": "murmur2_random"})
    librdkafka_partitions: dict[bytes, int] = {}
    for key in keys:
        reference.produce(
            topic,
            b"v",
            key,
            on_delivery=lambda err, msg: librdkafka_partitions.__setitem__(msg.key(), msg.partition()),
        )
    assert reference.flush(GET_TIMEOUT_S) == 0
    with KafkaProducer(bootstrap_servers=cluster.bootstrap_servers) as producer:
        ours = {key: producer.send(topic, b"v", key=key).get(GET_TIMEOUT_S).partition for key in keys}
    assert ours == librdkafka_partitions
    assert len(set(ours.values())) == 7, "the keys spread over every partition"


@pytest.mark.parametrize("acks", [0, 1, "all"], ids=lambda a: f"acks={a}")
def test_every_acks_setting_writes_the_records(cluster, acks):
    topic = topic_name("kl-acks")
    cluster.create_topic(topic, partitions=2)
    with KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers, acks=acks, value_serializer=str.encode
    ) as producer:
        futures = [producer.send(topic, f"v{i}", partition=i % 2) for i in range(20)]
        producer.flush(GET_TIMEOUT_S)
        metadata = [f.get(GET_TIMEOUT_S) for f in futures]
    offsets = [md.offset for md in metadata]
    if acks == 0:
        assert offsets == [-1] * 20, "acks=0: the broker does not answer, so no offset is known"
    else:
        assert sorted(offsets[0::2]) == list(range(10)) and sorted(offsets[1::2]) == list(range(10))
    records = consume_all(cluster.bootstrap_servers, topic, 2, 20)
    assert sorted(r.value for r in records) == sorted(f"v{i}".encode() for i in range(20))


def test_compressed_batches_are_read_back(cluster):
    topic = topic_name("kl-codec")
    cluster.create_topic(topic, partitions=1)
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        with KafkaProducer(
            bootstrap_servers=cluster.bootstrap_servers, compression_type=codec, linger_ms=20
        ) as p:
            futures = [p.send(topic, f"{codec}-{i}".encode() * 10) for i in range(30)]
            p.flush(GET_TIMEOUT_S)
            assert all(f.succeeded() for f in futures), [f.exception for f in futures if f.failed()]
    records = consume_all(cluster.bootstrap_servers, topic, 1, 120)
    assert [r.value for r in records] == [
        f"{codec}-{i}".encode() * 10 for codec in ("gzip", "snappy", "lz4", "zstd") for i in range(30)
    ]


def test_bad_sends_fail_only_their_own_future(cluster):
    topic = topic_name("kl-bad")
    cluster.create_topic(topic, partitions=1)

    def picky(value):
        if value == "boom":
            raise ValueError("no boom allowed")
        return value.encode()

    with KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers, max_request_size=1000, value_serializer=picky
    ) as producer:
        good_before = producer.send(topic, "first")
        too_big = producer.send(topic, "x" * 2000)
        bad_topic = producer.send("bad topic!", "v")
        dot, dot_dot, too_long = (producer.send(name, "v") for name in (".", "..", "t" * 250))
        bad_value = producer.send(topic, "boom")
        bad_partition = producer.send(topic, "v", partition=5)
        good_after = producer.send(topic, "last")
        assert good_before.get(GET_TIMEOUT_S).offset == 0
        assert good_after.get(GET_TIMEOUT_S).offset == 1
    with pytest.raises(KafkaException, match=r"max\.request\.size"):
        too_big.get(0)
    with pytest.raises(KafkaException, match=r'Topic name "bad topic!" is illegal'):
        bad_topic.get(0)
    for future in (dot, dot_dot):
        with pytest.raises(InvalidTopicException, match=r'Topic name cannot be "\." or "\.\."'):
            future.get(0)
    with pytest.raises(InvalidTopicException, match=r"can't be longer than 249 characters"):
        too_long.get(0)
    with pytest.raises(KafkaException, match=r"no boom allowed.*value_serializer"):
        bad_value.get(0)
    with pytest.raises(
        KafkaException, match=r"Invalid partition given with record: 5 is not in the range \[0\.\.\.1\)"
    ):
        bad_partition.get(0)


def test_send_to_a_stopped_broker_fails_after_request_timeout(zookeeper, tmp_path):
    lone = LiteCluster(zookeeper.connect_string, tmp_path, brokers=1).start()
    topic = topic_name("kl-down")
    try:
        lone.create_topic(topic, partitions=1)
        producer = KafkaProducer(bootstrap_servers=lone.bootstrap_servers, request_timeout_ms=1500)
        assert producer.send(topic, b"before").get(GET_TIMEOUT_S).offset == 0
        lone.stop()
        started = time.monotonic()
        future = producer.send(topic, b"after")  # metadata is known: this goes to the accumulator
        with pytest.raises((TimeoutException, NetworkException)) as failure:
            future.get(GET_TIMEOUT_S)
        elapsed = time.monotonic() - started
        assert 1.4 <= elapsed < 10, f"failed after {elapsed:.1f} s, expected about request.timeout.ms (1.5 s)"
        assert f"{topic}-0" in str(failure.value) and "request.timeout.ms is 1500" in str(failure.value)
        producer.close(0)
    finally:
        lone.stop()


def test_a_moved_leader_is_followed_and_records_sent_after_the_move_land_on_it_in_order(cluster):
    topic = topic_name("kl-move")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    with KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers,
        acks="all",
        retries=5,
        max_in_flight_requests_per_connection=1,
    ) as producer:
        before = [producer.send(topic, f"before-{i}".encode()) for i in range(10)]
        assert [f.get(GET_TIMEOUT_S).offset for f in before] == list(range(10))
        old_leader = cluster.leader_of(topic, 0)
        assert cluster.move_leader(topic, 0) != old_leader
        # The producer still believes in the old leader: its first request gets NOT_LEADER_FOR_PARTITION,
        # which refreshes the metadata, and the retry goes to the new leader.
        after = [producer.send(topic, f"after-{i}".encode()) for i in range(10)]
        offsets = [f.get(GET_TIMEOUT_S).offset for f in after]
        assert producer.metrics()["record-retry-total"] >= 1, "the first batch after the move was retried"
    # acks=all: the new leader, an in-sync follower, had every record sent before the move, and the
    # records sent after it follow them, in the order sent.
    assert offsets == list(range(10, 20)), "in order, right after the records written before the move"
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, consumer_timeout_ms=10_000)
    try:
        consumer.assign([TopicPartition(topic, 0)])
        consumer.seek(TopicPartition(topic, 0), 0)
        values = [record.value for _, record in zip(range(20), consumer, strict=False)]
    finally:
        consumer.close()
    assert values == [f"before-{i}".encode() for i in range(10)] + [f"after-{i}".encode() for i in range(10)]


def test_an_idempotent_producer_writes_every_record_once_in_order(cluster):
    topic = topic_name("kl-idempotent")
    cluster.create_topic(topic, partitions=3)
    with KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers, enable_idempotence=True, linger_ms=2, batch_size=500
    ) as producer:
        futures = [producer.send(topic, f"{i:04d}".encode(), partition=i % 3) for i in range(300)]
        producer.flush(GET_TIMEOUT_S)
        offsets = [f.get(0).offset for f in futures]
        producer_id = producer.transaction_manager.producer_id_and_epoch.producer_id
    for partition in range(3):
        leader = cluster.server(cluster.leader_of(topic, partition))
        state = leader.replica_manager.get_partition((topic, partition)).producer_state
        # The broker tracked this producer's sequences: the last record of the partition is number 99.
        assert state.producers[producer_id].last_seq == 99
    for partition in range(3):
        assert offsets[partition::3] == list(range(100))
    records = consume_all(cluster.bootstrap_servers, topic, 3, 300)
    for partition in range(3):
        values = [r.value for r in records if r.partition == partition]
        assert values == [f"{i:04d}".encode() for i in range(partition, 300, 3)]


# -- faults on the wire: one broker of its own, behind a proxy that loses or holds produce responses ---------


@pytest.fixture(scope="module")
def behind_proxy(zookeeper, tmp_path_factory):
    """A one-broker cluster whose clients all reach it through a ProduceResponseProxy: the broker
    advertises the proxy's address, so every connection after the bootstrap goes through it."""
    proxy = ProduceResponseProxy()
    lone = LiteCluster(
        zookeeper.connect_string,
        tmp_path_factory.mktemp("behind-proxy"),
        brokers=1,
        **{"advertised.listeners": f"PLAINTEXT://127.0.0.1:{proxy.port}"},
    )
    server = KafkaServer(lone.config(0))
    proxy.target_port = lambda: server.port  # the controller connects through the proxy during startup
    try:
        server.startup()
        lone.servers.append(server)
        lone.wait_for_brokers(1)
        yield lone, proxy
    finally:
        proxy.release()
        lone.stop()
        proxy.close()


@pytest.fixture
def proxied(behind_proxy):
    """The proxied broker, with the proxy passing everything again after the test."""
    yield behind_proxy
    behind_proxy[1].release()


@pytest.mark.parametrize("idempotent", [True, False], ids=["idempotent", "not-idempotent"])
def test_a_retry_after_a_lost_response_writes_no_duplicate_only_when_idempotent(proxied, idempotent):
    lone, proxy = proxied
    topic = topic_name("kl-lost")
    lone.create_topic(topic, partitions=1)
    configs = {"enable_idempotence": True} if idempotent else {"acks": "all", "retries": 3}
    proxy.drop_next_response()
    with KafkaProducer(bootstrap_servers=f"127.0.0.1:{proxy.port}", **configs) as producer:
        first = producer.send(topic, b"a").get(GET_TIMEOUT_S)
        assert proxy.dropped.is_set(), "the first produce response was lost on the wire"
        assert producer.send(topic, b"b").get(GET_TIMEOUT_S).offset == (1 if idempotent else 2)
    values = [r.value for r in consume_all(f"127.0.0.1:{proxy.port}", topic, 1, 2 if idempotent else 3)]
    if idempotent:
        assert first.offset == 0, "the broker answered the retry with the first write's offset"
        assert values == [b"a", b"b"]
    else:
        assert values == [b"a", b"a", b"b"], "without idempotence the retry is written twice"


def test_a_full_buffer_blocks_send_then_fails_after_max_block_ms(proxied):
    lone, proxy = proxied
    topic = topic_name("kl-full")
    lone.create_topic(topic, partitions=1)
    with KafkaProducer(
        bootstrap_servers=f"127.0.0.1:{proxy.port}", batch_size=1024, buffer_memory=2048, max_block_ms=1000
    ) as producer:
        producer.partitions_for(topic)  # the topic is known: send waits on memory only
        proxy.hold_responses()
        # Two records, each in a 1024-byte batch of its own, take all of buffer.memory; their
        # responses are held, so neither batch completes and gives its memory back.
        held = [producer.send(topic, b"x" * 900) for _ in range(2)]
        wait_until(lambda: producer.metrics()["buffer-available-bytes"] == 0, what="the buffer to fill")
        outcome = {}

        def send_into_the_full_buffer():
            started = time.monotonic()
            outcome["future"] = producer.send(topic, b"y" * 900)
            outcome["elapsed"] = time.monotonic() - started

        blocked = threading.Thread(target=send_into_the_full_buffer)
        blocked.start()
        wait_until(lambda: producer.metrics()["waiting-threads"] == 1, what="send to block for memory")
        blocked.join(GET_TIMEOUT_S)
        assert 1.0 <= outcome["elapsed"] < 10, (
            f"send returned after {outcome['elapsed']:.2f} s, not max.block.ms"
        )
        with pytest.raises(TimeoutException, match=r"buffer\.memory \(2048 bytes\).*max\.block\.ms \(1000\)"):
            outcome["future"].get(0)
        proxy.release()
        assert [f.get(GET_TIMEOUT_S).offset for f in held] == [0, 1], "only the send that timed out failed"


def test_close_0_with_batches_in_flight_returns_at_once_and_fails_their_futures(proxied):
    lone, proxy = proxied
    topic = topic_name("kl-close")
    lone.create_topic(topic, partitions=1)
    producer = KafkaProducer(
        bootstrap_servers=f"127.0.0.1:{proxy.port}", max_in_flight_requests_per_connection=1
    )
    try:
        producer.partitions_for(topic)
        proxy.hold_responses()
        sent_before = proxy.produce_requests
        in_flight = producer.send(topic, b"in flight")
        wait_until(lambda: proxy.produce_requests > sent_before, what="the request to reach the broker")
        # One request in flight per connection: the next records wait in the accumulator.
        waiting = [producer.send(topic, f"waiting-{i}".encode()) for i in range(5)]
        assert producer.metrics()["requests-in-flight"] == 1
        started = time.monotonic()
        producer.close(0)
        elapsed = time.monotonic() - started
        # A close that waited for the held response would end only when the request timed out.
        timeout_s = producer.config["request.timeout.ms"] / 1000
        assert elapsed < timeout_s / 3, (
            f"close(0) took {elapsed:.2f} s with a response held ({timeout_s:.0f} s timeout)"
        )
        assert not producer.io_thread.is_alive()
        for future in (in_flight, *waiting):
            with pytest.raises(KafkaException, match="Producer is closed forcefully"):
                future.get(0)
    finally:
        proxy.release()
        producer.close(0)


# -- splitting a batch the broker refuses -------------------------------------------------------------------


@pytest.mark.parametrize(
    "configs",
    [{"max_in_flight_requests_per_connection": 1}, {"enable_idempotence": True}],
    ids=["one-in-flight", "idempotent"],
)
def test_a_batch_over_the_topics_max_message_bytes_is_split_and_written_once_in_order(cluster, configs):
    # As in Kafka, a partition's order survives retries (and splits) with one request in flight or
    # with idempotence; with several in flight and neither, retried batches may be overtaken.
    topic = topic_name("kl-split")
    cluster.create_topic(topic, partitions=1, max_message_bytes=2000)
    values = [f"{i:03d}".encode() * 60 for i in range(40)]  # 180 bytes each, about 8 kB in all
    with KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, linger_ms=60_000, **configs) as producer:
        futures = [producer.send(topic, v) for v in values]
        producer.flush(GET_TIMEOUT_S)  # one batch (batch.size is 16384), four times the topic's limit
        offsets = [f.get(0).offset for f in futures]
        assert producer.metrics()["batch-split-total"] >= 2, "split, and the halves split again"
        assert producer.metrics()["record-error-total"] == 0
    assert offsets == list(range(40))
    assert [r.value for r in consume_all(cluster.bootstrap_servers, topic, 1, 40)] == values
