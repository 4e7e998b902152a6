"""KafkaApis over the wire: every handled API at its edge cases, against a real 3-broker cluster."""

from __future__ import annotations

import time
import uuid

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.messages import API_VERSIONS_RESPONSE_V0
from kafka_lite.common.protocol.requests import RequestHeader, parse_response
from kafka_lite.common.protocol.types import decode
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.memory_records import iter_batches
from kafka_lite.server.kafka_apis import KafkaApis
from tests.support.waiting import wait_until
from tests.support.wire import WireClient, fetch_body, fetched, partition_response, produce_body

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


# The records' first timestamp: an hour ago, so that the session's cluster, whose retention check
# runs every few minutes, never finds them older than retention.ms.
T0 = int(time.time() * 1000) - 3_600_000


def batch(values: list[bytes], **kwargs) -> bytes:
    return bytes(
        MemoryRecords.with_records([(T0 + i, None, v) for i, v in enumerate(values)], **kwargs).buffer()
    )


@pytest.fixture
def topic(cluster):
    t = name("apis")
    # The tests' records are stamped in 2023, past the default 7-day retention: keep them, or the
    # retention check (30 s after a broker starts) may delete them under a test.
    cluster.create_topic(t, partitions=1, retention_ms=-1)
    return t


def leader_client(cluster, topic: str, partition: int = 0) -> WireClient:
    return WireClient(cluster.server(cluster.leader_of(topic, partition)).port)


# -- ApiVersions ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2])
def test_api_versions_lists_exactly_the_handled_apis(cluster, version):
    response = WireClient(cluster.servers[0].port).call(ApiKeys.API_VERSIONS, version, {})
    listed = {v["api_key"]: (v["min_version"], v["max_version"]) for v in response["api_versions"]}
    assert listed == {int(a): (a.oldest_version, a.latest_version) for a in KafkaApis.HANDLED}
    assert listed[ApiKeys.PRODUCE] == (0, 3) and listed[ApiKeys.FETCH] == (0, 5)


def test_api_versions_v3_gets_unsupported_version_in_the_v0_layout(cluster):
    client = WireClient(cluster.servers[0].port)
    # What librdkafka sends first: request header v2 (v1 + empty tagged fields) and a v3 body
    # (compact strings: client software name and version, then empty tagged fields).
    header = RequestHeader(ApiKeys.API_VERSIONS, 3, 1, "rdkafka").encode() + b"\x00"
    client.send_raw(header + b"\x0blibrdkafka\x072.16.0\x00")
    frame = client.read_frame()
    body = decode(API_VERSIONS_RESPONSE_V0, frame, 4)  # after the v0 response header (correlation id)
    assert Errors.for_code(body["error_code"]) is Errors.UNSUPPORTED_VERSION
    assert {"api_key": 18, "min_version": 0, "max_version": 2} in body["api_versions"]
    # the connection stays usable: the client retries at a version we speak
    assert client.call(ApiKeys.API_VERSIONS, 2, {})["error_code"] == 0


# -- Metadata -------------------------------------------------------------------------------------------------


def test_metadata_v0_empty_and_v1_null_mean_all_topics(cluster, topic):
    client = WireClient(cluster.servers[1].port)
    for version, request in ((0, []), (1, None), (4, None)):
        body = {"topics": request, "allow_auto_topic_creation": False}
        response = client.call(ApiKeys.METADATA, version, body)
        assert topic in {t["topic"] for t in response["topic_metadata"]}
        assert sorted(b["node_id"] for b in response["brokers"]) == [0, 1, 2]
    assert response["controller_id"] in (0, 1, 2) and response["cluster_id"]


def test_metadata_auto_creates_unless_told_not_to(cluster):
    client = WireClient(cluster.servers[0].port)
    t = name("auto")
    response = client.call(ApiKeys.METADATA, 4, {"topics": [t], "allow_auto_topic_creation": False})
    assert (
        Errors.for_code(response["topic_metadata"][0]["topic_error_code"])
        is Errors.UNKNOWN_TOPIC_OR_PARTITION
    )
    response = client.call(ApiKeys.METADATA, 4, {"topics": [t], "allow_auto_topic_creation": True})
    assert Errors.for_code(response["topic_metadata"][0]["topic_error_code"]) is Errors.LEADER_NOT_AVAILABLE
    cluster.wait_for_leaders(t, 1)  # num.partitions=1
    response = client.call(ApiKeys.METADATA, 1, {"topics": [t]})
    (meta,) = response["topic_metadata"]
    assert meta["topic_error_code"] == 0 and meta["partition_metadata"][0]["leader"] in (0, 1, 2)
    bad = client.call(ApiKeys.METADATA, 1, {"topics": ["no/slashes"]})
    assert Errors.for_code(bad["topic_metadata"][0]["topic_error_code"]) is Errors.INVALID_TOPIC_EXCEPTION


# -- Produce and Fetch ----------------------------------------------------------------------------------------


def test_produce_to_a_broker_that_does_not_lead_gets_not_leader(cluster, topic):
    leader = cluster.leader_of(topic, 0)
    other = next(s for s in cluster.servers if s.broker_id != leader)
    response = WireClient(other.port).call(ApiKeys.PRODUCE, 3, produce_body(topic, 0, batch([b"x"])))
    assert Errors.for_code(partition_response(response)["error_code"]) is Errors.NOT_LEADER_FOR_PARTITION
    unknown = WireClient(other.port).call(ApiKeys.PRODUCE, 3, produce_body(name("nope"), 0, batch([b"x"])))
    assert Errors.for_code(partition_response(unknown)["error_code"]) is Errors.UNKNOWN_TOPIC_OR_PARTITION


def test_invalid_acks_and_corrupt_batches_are_refused_per_partition(cluster, topic):
    client = leader_client(cluster, topic)
    response = client.call(ApiKeys.PRODUCE, 3, produce_body(topic, 0, batch([b"x"]), acks=2))
    assert Errors.for_code(partition_response(response)["error_code"]) is Errors.INVALID_REQUIRED_ACKS
    data = bytearray(batch([b"hello"]))
    data[-1] ^= 0xFF  # a byte the CRC covers
    response = client.call(ApiKeys.PRODUCE, 3, produce_body(topic, 0, bytes(data)))
    assert Errors.for_code(partition_response(response)["error_code"]) is Errors.CORRUPT_MESSAGE
    legacy = batch([b"old"], magic=1)
    response = client.call(ApiKeys.PRODUCE, 3, produce_body(topic, 0, legacy))
    assert Errors.for_code(partition_response(response)["error_code"]) is Errors.CORRUPT_MESSAGE, (
        "Produce v3 carries v2 batches only"
    )


def test_acks_zero_failure_closes_the_connection(cluster, topic):
    leader = cluster.leader_of(topic, 0)
    other = next(s for s in cluster.servers if s.broker_id != leader)
    client = WireClient(other.port)
    client.send(ApiKeys.PRODUCE, 3, produce_body(topic, 0, batch([b"x"]), acks=0))
    assert client.closed_by_peer(), "acks=0 has no response: closing is the only way to report the error"


def test_old_produce_and_fetch_versions_convert_message_sets(cluster, topic):
    """Produce v2 with a magic-1 message set is stored as a v2 batch; Fetch v2 gets magic 1 back,
    Fetch v0 magic 0, Fetch v5 the stored v2 batch."""
    client = leader_client(cluster, topic)
    response = client.call(
        ApiKeys.PRODUCE, 2, produce_body(topic, 0, batch([b"a", b"b"], magic=1), version=2)
    )
    assert partition_response(response)["error_code"] == 0
    stored = cluster.server(cluster.leader_of(topic, 0)).replica_manager.get_partition((topic, 0)).log
    assert stored.log_end_offset == 2
    for version, magic in ((5, 2), (2, 1), (0, 0)):
        body = fetch_body(topic)
        if version < 5:
            for p in body["topics"][0]["partitions"]:
                del p["log_start_offset"]
        header, records = fetched(client.call(ApiKeys.FETCH, version, body))
        assert header["error_code"] == 0 and header["high_watermark"] == 2
        batches = list(iter_batches(records))
        assert {b.magic for b in batches} == {magic}
        assert [r.value for b in batches for r in b] == [b"a", b"b"]


def test_fetch_waits_in_purgatory_until_data_arrives(cluster, topic):
    leader = cluster.server(cluster.leader_of(topic, 0))
    waiting = WireClient(leader.port)
    waiting.send(ApiKeys.FETCH, 5, fetch_body(topic, max_wait=20_000, min_bytes=1))
    wait_until(
        lambda: leader.replica_manager.delayed_fetch_purgatory.watched() >= 1,
        what="the fetch to wait in the purgatory",
    )
    WireClient(leader.port).call(ApiKeys.PRODUCE, 3, produce_body(topic, 0, batch([b"wake up"])))
    header, records = fetched(parse_response(ApiKeys.FETCH, 5, waiting.read_frame())[1])
    assert header["error_code"] == 0 and header["high_watermark"] == 1
    assert [r.value for b in iter_batches(records) for r in b] == [b"wake up"]


def test_time_in_the_fetch_purgatory_is_the_requests_remote_time(cluster, topic):
    """Kafka's request metrics: a fetch that waits out its ``max_wait`` spends it in the "remote"
    phase (handler done -> response ready), not in the handler's local time."""
    leader = cluster.server(cluster.leader_of(topic, 0))

    def fetch_v5_row():
        return next(
            (
                row
                for row in leader.socket_server.metrics.snapshot()
                if (row["api"], row["version"]) == (ApiKeys.FETCH.api_name, 5)
            ),
            {"requests": 0},
        )

    # The broker is shared: other tests' fetches share this row, so wait for this one to be counted
    # (metrics are recorded after the response is sent, so the client can see its answer first).
    def remote_total_ms(row: dict) -> float:
        return row.get("remote_time_ms_mean", 0.0) * row["requests"]

    first = fetch_v5_row()
    header, _ = fetched(
        WireClient(leader.port).call(ApiKeys.FETCH, 5, fetch_body(topic, max_wait=300, min_bytes=1))
    )
    assert header["error_code"] == 0
    row = wait_until(
        lambda: (r := fetch_v5_row())["requests"] > first["requests"] and r,
        what="the fetch's metrics to be recorded",
    )
    # The row's total remote time grew by this fetch's 300 ms wait (measured from the handler's
    # return); the row's maximum alone could be an earlier fetch's.
    assert remote_total_ms(row) - remote_total_ms(first) >= 250, (first, row)


def test_fetch_out_of_range(cluster, topic):
    header, records = fetched(
        leader_client(cluster, topic).call(ApiKeys.FETCH, 5, fetch_body(topic, offset=99))
    )
    assert Errors.for_code(header["error_code"]) is Errors.OFFSET_OUT_OF_RANGE and records == b""


# -- idempotent producers ---------------------------------------------------------------------------------------


def test_a_retried_idempotent_batch_is_not_written_twice(cluster, topic):
    client = leader_client(cluster, topic)
    init = client.call(
        ApiKeys.INIT_PRODUCER_ID, 0, {"transactional_id": None, "transaction_timeout_ms": 60000}
    )
    assert init["error_code"] == 0 and init["producer_id"] >= 0 and init["producer_epoch"] == 0
    pid = init["producer_id"]
    first = batch([b"a", b"b", b"c"], producer_id=pid, producer_epoch=0, base_sequence=0)
    r1 = partition_response(client.call(ApiKeys.PRODUCE, 3, produce_body(topic, 0, first, acks=-1)))
    r2 = partition_response(
        client.call(ApiKeys.PRODUCE, 3, produce_body(topic, 0, first, acks=-1))
    )  # the retry
    assert r1["error_code"] == r2["error_code"] == 0
    assert r1["base_offset"] == r2["base_offset"] == 0
    log = cluster.server(cluster.leader_of(topic, 0)).replica_manager.get_partition((topic, 0)).log
    assert log.log_end_offset == 3, "the retry was answered from the producer state, not appended"
    gap = batch([b"e"], producer_id=pid, producer_epoch=0, base_sequence=4)  # sequence 3 is missing
    r3 = partition_response(client.call(ApiKeys.PRODUCE, 3, produce_body(topic, 0, gap, acks=-1)))
    assert Errors.for_code(r3["error_code"]) is Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
    nxt = batch([b"d"], producer_id=pid, producer_epoch=0, base_sequence=3)
    assert (
        partition_response(client.call(ApiKeys.PRODUCE, 3, produce_body(topic, 0, nxt)))["base_offset"] == 3
    )
    bumped = batch([b"x"], producer_id=pid, producer_epoch=1, base_sequence=0)
    assert (
        partition_response(client.call(ApiKeys.PRODUCE, 3, produce_body(topic, 0, bumped)))["error_code"] == 0
    )
    stale = batch([b"y"], producer_id=pid, producer_epoch=0, base_sequence=4)
    r4 = partition_response(client.call(ApiKeys.PRODUCE, 3, produce_body(topic, 0, stale)))
    assert Errors.for_code(r4["error_code"]) is Errors.INVALID_PRODUCER_EPOCH
    again = client.call(
        ApiKeys.INIT_PRODUCER_ID, 0, {"transactional_id": None, "transaction_timeout_ms": 60000}
    )
    assert again["producer_id"] != pid, "producer ids are never handed out twice"


# -- ListOffsets ----------------------------------------------------------------------------------------------------


def test_list_offsets_earliest_latest_and_by_time(cluster, topic):
    client = leader_client(cluster, topic)
    client.call(
        ApiKeys.PRODUCE, 3, produce_body(topic, 0, batch([b"a", b"b", b"c", b"d"]))
    )  # timestamps base+0..3

    def offsets(version: int, timestamp: int):
        p = {"partition": 0, "timestamp": timestamp, "max_num_offsets": 1}
        body = {"replica_id": -1, "isolation_level": 0, "topics": [{"topic": topic, "partitions": [p]}]}
        return partition_response(client.call(ApiKeys.LIST_OFFSETS, version, body))

    assert offsets(1, -2)["offset"] == 0 and offsets(1, -1)["offset"] == 4
    found = offsets(2, T0 + 2)
    assert (found["timestamp"], found["offset"]) == (T0 + 2, 2)
    assert offsets(1, T0 + 86_400_000)["offset"] == -1  # nothing that late: a day on
    assert offsets(0, -1)["offsets"] == [4]


# -- CreateTopics --------------------------------------------------------------------------------------------------


def create(
    client: WireClient, topics: list[dict], validate_only=False, timeout=10_000
) -> dict[str, tuple[int, str]]:
    entries = [
        {"num_partitions": -1, "replication_factor": -1, "replica_assignment": [], "config_entries": [], **t}
        for t in topics
    ]
    response = client.call(
        ApiKeys.CREATE_TOPICS,
        2,
        {"create_topic_requests": entries, "timeout": timeout, "validate_only": validate_only},
    )
    return {t["topic"]: (t["error_code"], t["error_message"]) for t in response["topic_errors"]}


def controller_client(cluster) -> WireClient:
    return WireClient(cluster.server(cluster.controller().broker_id).port)


def test_create_topics_validation(cluster, topic):
    client = controller_client(cluster)
    ok, dup, big, both, conf = (name(p) for p in ("ok", "dup", "big", "both", "conf"))
    result = create(
        client,
        [
            {"topic": ok, "num_partitions": 2, "replication_factor": 1},
            {"topic": dup, "num_partitions": 1, "replication_factor": 1},
            {"topic": dup, "num_partitions": 1, "replication_factor": 1},
            {"topic": big, "num_partitions": 1, "replication_factor": 4},
            {
                "topic": both,
                "num_partitions": 1,
                "replication_factor": 1,
                "replica_assignment": [{"partition_id": 0, "replicas": [0]}],
            },
            {
                "topic": conf,
                "num_partitions": 1,
                "replication_factor": 1,
                "config_entries": [{"config_name": "retention.ms", "config_value": "soon"}],
            },
            {"topic": topic, "num_partitions": 1, "replication_factor": 1},
        ],
        validate_only=True,
    )
    assert result[ok] == (0, None)
    assert Errors.for_code(result[dup][0]) is Errors.INVALID_REQUEST
    assert result[big] == (
        Errors.INVALID_REPLICATION_FACTOR.code,
        "Replication factor: 4 larger than available brokers: 3.",
    )
    assert Errors.for_code(result[both][0]) is Errors.INVALID_REQUEST
    assert Errors.for_code(result[conf][0]) is Errors.INVALID_CONFIG and "retention.ms" in result[conf][1]
    assert Errors.for_code(result[topic][0]) is Errors.TOPIC_ALREADY_EXISTS
    assert ok not in cluster.controller().zk.get_all_topics(), "validate_only creates nothing"


def test_create_topics_with_an_explicit_assignment_answers_when_leaders_exist(cluster):
    t = name("assigned")
    result = create(
        controller_client(cluster),
        [
            {
                "topic": t,
                "replica_assignment": [
                    {"partition_id": 0, "replicas": [2, 0]},
                    {"partition_id": 1, "replicas": [1, 2]},
                ],
            }
        ],
    )
    assert result[t] == (0, None)
    # answered only once the leaders were known: the answering broker's metadata cache already has
    # them (Kafka's DelayedCreateTopics asks the cache of the broker that holds the request; the
    # others learn of the topic from their own UpdateMetadata, maybe later)
    states = cluster.server(cluster.controller().broker_id).metadata_cache.partitions(t)
    assert {p: (s.leader, list(s.replicas)) for p, s in states.items()} == {0: (2, [2, 0]), 1: (1, [1, 2])}


def test_create_topics_on_a_broker_that_is_not_the_controller(cluster):
    other = next(s for s in cluster.servers if not s.controller.is_active())
    t = name("nc")
    result = create(WireClient(other.port), [{"topic": t, "num_partitions": 1, "replication_factor": 1}])
    assert Errors.for_code(result[t][0]) is Errors.NOT_CONTROLLER
