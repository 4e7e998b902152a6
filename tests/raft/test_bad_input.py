"""Bad input to a Raft node: requests it must refuse or ignore, and bytes it cannot read.

Each refused request gets the answer Kafka 3.3's KafkaRaftClient gives it (its handlers and
KafkaRaftClientTest), and the node is left as it was: the same state, epoch and leader, the same log
end and high watermark, the same election state in its quorum-state store. A request from a newer
epoch is not refused: Raft has every node learn a higher epoch from any message that carries one, so
those cases check what it learned, and that nothing else moved. At the codec, every cut of a valid
frame, a bad varint, a tagged field longer than the frame and an unknown version are refused with a
``SchemaException`` that names the field where reading stopped."""

from __future__ import annotations

import os
import re

import pytest

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.common.protocol.raft_messages import (
    RaftApiKeys,
    encode_raft_request,
    encode_raft_response,
    parse_raft_request,
    parse_raft_response,
)
from kafka_lite.common.protocol.requests import REQUEST_HEADERS, RESPONSE_HEADERS, RequestHeader
from kafka_lite.common.protocol.types import SchemaException, encode, is_flexible, walk
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.raft import raft_util
from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.file_based_state_store import FileBasedStateStore
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.raft_util import METADATA_TOPIC_ID, RaftErrors
from kafka_lite.testing.raft_client_test_context import (
    METADATA_PARTITION,
    MockListener,
    RaftClientTestContext,
    batch,
)

pytestmark = pytest.mark.unit

LOCAL = 0
VOTERS = {0, 1, 2}
EPOCH = 5  # the follower's epoch, led by node 1
OTHER_CLUSTER = "another-cluster"


def follower() -> RaftClientTestContext:
    """Node 0 follows node 1 in epoch 5, with three records of epochs 1 and 3 (log end 3)."""
    return RaftClientTestContext(
        LOCAL, VOTERS, ElectionState.with_elected_leader(EPOCH, 1, VOTERS),
        log_batches=[batch(0, 1, ["a", "b"]), batch(2, 3, ["c"])],
    )  # fmt: skip


def leader() -> tuple[RaftClientTestContext, int]:
    """Node 0 elected with node 1's vote, its LeaderChange record written (log end 1)."""
    ctx = RaftClientTestContext(LOCAL, VOTERS)
    ctx.expire_election_timeout()
    ctx.poll(2)
    epoch = ctx.quorum().epoch()
    votes = ctx.drain_sent(RaftApiKeys.VOTE)
    ctx.deliver_response(next(v for v in votes if v.destination_id == 1), ctx.vote_response(True, epoch))
    ctx.poll(2)
    assert ctx.state_name() == "Leader"
    return ctx, epoch


def node_state(ctx: RaftClientTestContext) -> tuple:
    """What a refused request must leave as it was."""
    quorum = ctx.quorum()
    replicas = None
    if quorum.is_leader():
        state = quorum.leader_state_or_throw()
        replicas = (
            {i: s.end_offset for i, s in state.voter_states().items()},
            sorted(state.observer_states()),
            state.high_watermark(),
        )
    return (
        ctx.state_name(), quorum.epoch(), quorum.leader_id(), ctx.log.end_offset(), ctx.log.high_watermark(),
        ctx.store.read_election_state(), replicas,
    )  # fmt: skip


def answer(ctx: RaftClientTestContext, api_key: int, data: dict) -> dict:
    request = ctx.deliver_request(api_key, data)
    ctx.poll()
    return ctx.response_of(request)


def partition_error(data: dict) -> RaftErrors:
    topics = data.get("topics", data.get("responses"))
    assert data["error_code"] == 0, f"top-level error {RaftErrors.for_code(data['error_code']).name}"
    return RaftErrors(topics[0]["partitions"][0]["error_code"])


# -- builders for the five requests a node answers, with the defaults a well-formed one has -------------------


def vote(epoch: int, candidate: int = 2, *, cluster_id=None, tp=METADATA_PARTITION) -> dict:
    # last epoch 1, offset 1: behind the follower's log (epoch 3, end 3), so never granted here
    return raft_util.vote_request(tp, cluster_id, epoch, candidate, 1, 1)


def begin_epoch(epoch: int, leader_id: int = 2, *, cluster_id=None, tp=METADATA_PARTITION) -> dict:
    return raft_util.begin_quorum_epoch_request(tp, cluster_id, epoch, leader_id)


def end_epoch(epoch: int, leader_id: int = 2, *, cluster_id=None, tp=METADATA_PARTITION) -> dict:
    return raft_util.end_quorum_epoch_request(tp, cluster_id, epoch, leader_id, [LOCAL])


def fetch(epoch: int, replica: int = 1, *, cluster_id=None, tp=METADATA_PARTITION, offset: int = 0) -> dict:
    # A fetch from offset 1 of the leader's log names epoch 1 (its LeaderChange record's) as the last
    # one fetched, so the leader finds the logs agree.
    last_fetched_epoch = 1 if offset else 0
    return raft_util.fetch_request(
        METADATA_TOPIC_ID, tp, cluster_id, replica, 0, epoch, offset, last_fetched_epoch, 1 << 20
    )


def fetch_snapshot(
    epoch: int, snapshot_id=(1, 1), position: int = 0, *, cluster_id=None, tp=METADATA_PARTITION
) -> dict:
    return raft_util.fetch_snapshot_request(tp, cluster_id, 1, epoch, snapshot_id, position)


# -- voter-only requests (Vote, BeginQuorumEpoch, EndQuorumEpoch) to a follower ---------------------------


@pytest.mark.parametrize(
    ("api_key", "data", "error"),
    [
        (RaftApiKeys.VOTE, vote(EPOCH + 1, candidate=9), RaftErrors.INCONSISTENT_VOTER_SET),
        (RaftApiKeys.VOTE, vote(EPOCH - 1), RaftErrors.FENCED_LEADER_EPOCH),
        (RaftApiKeys.VOTE, vote(EPOCH + 1, candidate=-1), RaftErrors.INVALID_REQUEST),
        (RaftApiKeys.BEGIN_QUORUM_EPOCH, begin_epoch(EPOCH + 1, 9), RaftErrors.INCONSISTENT_VOTER_SET),
        (RaftApiKeys.BEGIN_QUORUM_EPOCH, begin_epoch(EPOCH - 1), RaftErrors.FENCED_LEADER_EPOCH),
        (RaftApiKeys.END_QUORUM_EPOCH, end_epoch(EPOCH + 1, 9), RaftErrors.INCONSISTENT_VOTER_SET),
        (RaftApiKeys.END_QUORUM_EPOCH, end_epoch(EPOCH - 1), RaftErrors.FENCED_LEADER_EPOCH),
    ],
    ids=[
        "vote-non-voter", "vote-past-epoch", "vote-no-candidate-id", "begin-non-voter", "begin-past-epoch",
        "end-non-voter", "end-past-epoch",
    ],
)  # fmt: skip
def test_refused_voter_only_request_answers_kafkas_error_and_changes_nothing(api_key, data, error):
    ctx = follower()
    before = node_state(ctx)
    response = answer(ctx, api_key, data)
    assert partition_error(response) == error
    partition = response["topics"][0]["partitions"][0]
    # Even a refusal names the epoch and leader as this node knows them, so a stale sender catches up.
    assert (partition["leader_epoch"], partition["leader_id"]) == (EPOCH, 1)
    assert partition.get("vote_granted", False) is False
    assert node_state(ctx) == before


def test_vote_from_a_future_epoch_is_learned_but_not_granted_to_a_shorter_log():
    ctx = follower()
    response = answer(ctx, RaftApiKeys.VOTE, vote(EPOCH + 2))
    assert partition_error(response) == RaftErrors.NONE
    assert response["topics"][0]["partitions"][0]["vote_granted"] is False
    # The epoch is learned (Unattached, no leader, no vote); the log is untouched.
    assert (ctx.state_name(), ctx.quorum().epoch(), ctx.quorum().leader_id()) == (
        "Unattached",
        EPOCH + 2,
        None,
    )
    assert ctx.store.read_election_state() == ElectionState.with_unknown_leader(EPOCH + 2, VOTERS)
    assert ctx.log.end_offset().offset == 3 and ctx.log.last_fetched_epoch() == 3


@pytest.mark.parametrize("api_key", [RaftApiKeys.BEGIN_QUORUM_EPOCH, RaftApiKeys.END_QUORUM_EPOCH])
def test_begin_or_end_epoch_from_a_future_epoch_makes_the_node_follow_the_sender(api_key):
    ctx = follower()
    build = begin_epoch if api_key == RaftApiKeys.BEGIN_QUORUM_EPOCH else end_epoch
    response = answer(ctx, api_key, build(EPOCH + 1, leader_id=2))
    assert partition_error(response) == RaftErrors.NONE
    assert (ctx.state_name(), ctx.quorum().epoch(), ctx.quorum().leader_id()) == ("Follower", EPOCH + 1, 2)
    assert ctx.store.read_election_state() == ElectionState.with_elected_leader(EPOCH + 1, 2, VOTERS)
    assert ctx.log.end_offset().offset == 3


def test_a_second_leader_named_for_the_current_epoch_stops_the_node():
    # Raft's election safety: one leader per epoch. Kafka's maybeTransition throws rather than follow
    # either, and the exception leaves the poll loop; the node's state is not touched.
    ctx = follower()
    before = node_state(ctx)
    ctx.deliver_request(RaftApiKeys.BEGIN_QUORUM_EPOCH, begin_epoch(EPOCH, leader_id=2))
    with pytest.raises(IllegalStateException, match="inconsistent with current leader 1 and epoch 5"):
        ctx.poll()
    assert node_state(ctx) == before


# -- Fetch -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("delta", "error"),
    [(-1, RaftErrors.FENCED_LEADER_EPOCH), (1, RaftErrors.UNKNOWN_LEADER_EPOCH)],
    ids=["past-epoch", "future-epoch"],
)
def test_fetch_from_another_epoch_is_refused_by_the_leader_and_counts_for_nothing(delta, error):
    ctx, epoch = leader()
    before = node_state(ctx)
    response = answer(ctx, RaftApiKeys.FETCH, fetch(epoch + delta))
    assert partition_error(response) == error
    partition = response["responses"][0]["partitions"][0]
    assert (partition["records"], partition["current_leader"]) == (
        b"",
        {"leader_id": LOCAL, "leader_epoch": epoch},
    )
    assert node_state(ctx) == before


@pytest.mark.parametrize(
    ("delta", "error"),
    [(-1, RaftErrors.FENCED_LEADER_EPOCH), (1, RaftErrors.UNKNOWN_LEADER_EPOCH), (0, RaftErrors.NOT_LEADER_OR_FOLLOWER)],
    ids=["past-epoch", "future-epoch", "same-epoch"],
)  # fmt: skip
def test_fetch_to_a_follower_is_refused_whatever_its_epoch(delta, error):
    ctx = follower()
    before = node_state(ctx)
    response = answer(ctx, RaftApiKeys.FETCH, fetch(EPOCH + delta, replica=2))
    assert partition_error(response) == error
    assert node_state(ctx) == before


def test_fetch_from_a_replica_outside_the_voters_is_served_as_an_observer():
    # Kafka has no error for it: an unknown id is an observer (a broker reading the metadata log). It
    # is tracked for DescribeQuorum and never counts toward the high watermark.
    ctx, epoch = leader()
    response = answer(ctx, RaftApiKeys.FETCH, fetch(epoch, replica=9, offset=1))
    assert partition_error(response) == RaftErrors.NONE
    state = ctx.quorum().leader_state_or_throw()
    assert sorted(state.observer_states()) == [9] and state.high_watermark() is None
    assert ctx.state_name() == "Leader" and ctx.log.end_offset().offset == 1


def test_fetch_without_a_replica_id_is_served_and_tracked_nowhere():
    # replica id -1: a consumer or a tool, not a replica (LeaderState.updateReplicaState ignores it).
    ctx, epoch = leader()
    before = node_state(ctx)
    response = answer(ctx, RaftApiKeys.FETCH, fetch(epoch, replica=-1, offset=0))
    assert partition_error(response) == RaftErrors.NONE
    assert bytes(response["responses"][0]["partitions"][0]["records"]) != b""
    assert node_state(ctx) == before


def test_fetch_naming_the_leaders_own_id_is_an_unknown_server_error():
    # LeaderState.updateReplicaState throws on its own id; tryCompleteFetchRequest turns any exception
    # into UNKNOWN_SERVER_ERROR, and the leader carries on.
    ctx, epoch = leader()
    before = node_state(ctx)
    response = answer(ctx, RaftApiKeys.FETCH, fetch(epoch, replica=LOCAL, offset=1))
    assert partition_error(response) == RaftErrors.UNKNOWN_SERVER_ERROR
    assert node_state(ctx) == before


# -- FetchSnapshot ---------------------------------------------------------------------------------------


def leader_with_snapshot() -> tuple[RaftClientTestContext, int]:
    ctx, epoch = leader()
    writer = ctx.log.store_snapshot(OffsetAndEpoch(1, 1))
    writer.append(b"0123456789")
    writer.freeze()
    return ctx, epoch


@pytest.mark.parametrize(
    ("snapshot_id", "position", "error"),
    [
        ((7, 1), 0, RaftErrors.SNAPSHOT_NOT_FOUND),
        ((1, 2), 0, RaftErrors.SNAPSHOT_NOT_FOUND),
        ((1, 1), 10, RaftErrors.POSITION_OUT_OF_RANGE),
        ((1, 1), 1000, RaftErrors.POSITION_OUT_OF_RANGE),
        ((1, 1), -1, RaftErrors.POSITION_OUT_OF_RANGE),
    ],
    ids=["unknown-offset", "unknown-epoch", "position-at-end", "position-past-end", "negative-position"],
)
def test_fetch_snapshot_for_what_the_leader_does_not_have_is_refused(snapshot_id, position, error):
    ctx, epoch = leader_with_snapshot()
    before = node_state(ctx)
    response = answer(ctx, RaftApiKeys.FETCH_SNAPSHOT, fetch_snapshot(epoch, snapshot_id, position))
    assert partition_error(response) == error
    partition = response["topics"][0]["partitions"][0]
    assert (bytes(partition["unaligned_records"]), partition["size"]) == (b"", 0)
    assert partition["current_leader"] == {"leader_id": LOCAL, "leader_epoch": epoch}
    assert node_state(ctx) == before


@pytest.mark.parametrize(
    ("delta", "error"),
    [(-1, RaftErrors.FENCED_LEADER_EPOCH), (1, RaftErrors.UNKNOWN_LEADER_EPOCH)],
    ids=["past-epoch", "future-epoch"],
)
def test_fetch_snapshot_from_another_epoch_is_refused(delta, error):
    ctx, epoch = leader_with_snapshot()
    before = node_state(ctx)
    response = answer(ctx, RaftApiKeys.FETCH_SNAPSHOT, fetch_snapshot(epoch + delta))
    assert partition_error(response) == error
    assert node_state(ctx) == before


# -- another cluster, another partition: refused at the top level, before any epoch is read ------------------

ALL_REQUESTS = {
    RaftApiKeys.VOTE: vote,
    RaftApiKeys.BEGIN_QUORUM_EPOCH: begin_epoch,
    RaftApiKeys.END_QUORUM_EPOCH: end_epoch,
    RaftApiKeys.FETCH: fetch,
    RaftApiKeys.FETCH_SNAPSHOT: fetch_snapshot,
}
# The leader's epoch is 1 after leader(): a future epoch, which would make it step down if read.
FUTURE = 3


@pytest.mark.parametrize("api_key", list(ALL_REQUESTS), ids=lambda k: RaftApiKeys(k).name.lower())
def test_request_of_another_cluster_is_inconsistent_cluster_id_and_changes_nothing(api_key):
    ctx, _ = leader_with_snapshot()
    before = node_state(ctx)
    response = answer(ctx, api_key, ALL_REQUESTS[api_key](FUTURE, cluster_id=OTHER_CLUSTER))
    assert RaftErrors(response["error_code"]) == RaftErrors.INCONSISTENT_CLUSTER_ID
    assert node_state(ctx) == before


# FetchSnapshot's answer for another partition is Kafka's UNKNOWN_TOPIC_OR_PARTITION: see below.
@pytest.mark.parametrize(
    "api_key",
    [k for k in ALL_REQUESTS if k != RaftApiKeys.FETCH_SNAPSHOT],
    ids=lambda k: RaftApiKeys(k).name.lower(),
)
@pytest.mark.parametrize(
    "tp", [TopicPartition("__cluster_metadata", 1), TopicPartition("orders", 0)], ids=["partition", "topic"]
)
def test_request_for_another_partition_is_an_invalid_request_and_changes_nothing(api_key, tp):
    ctx, _ = leader_with_snapshot()
    before = node_state(ctx)
    data = ALL_REQUESTS[api_key](FUTURE, tp=tp)
    if api_key == RaftApiKeys.FETCH and tp.topic != METADATA_PARTITION.topic:
        data["topics"][0]["topic_id"] = raft_util.uuid.UUID(int=2)  # Fetch v13 names the topic by id
    response = answer(ctx, api_key, data)
    assert RaftErrors(response["error_code"]) == RaftErrors.INVALID_REQUEST
    assert node_state(ctx) == before


@pytest.mark.parametrize(
    "tp", [TopicPartition("__cluster_metadata", 1), TopicPartition("orders", 0)], ids=["partition", "topic"]
)
def test_fetch_snapshot_for_another_partition_is_unknown_topic_or_partition(tp):
    # Kafka 3.3's handleFetchSnapshotRequest: FetchSnapshotRequest.forTopicPartition finds nothing, and
    # the answer names the partition asked for, with UNKNOWN_TOPIC_OR_PARTITION; only a request with
    # other than one topic of one partition is an INVALID_REQUEST.
    ctx, epoch = leader_with_snapshot()
    before = node_state(ctx)
    response = answer(ctx, RaftApiKeys.FETCH_SNAPSHOT, fetch_snapshot(epoch, tp=tp))
    assert partition_error(response) == RaftErrors.UNKNOWN_TOPIC_OR_PARTITION
    topic = response["topics"][0]
    assert (topic["name"], topic["partitions"][0]["index"]) == (tp.topic, tp.partition)
    assert node_state(ctx) == before


def test_fetch_snapshot_of_two_partitions_is_an_invalid_request():
    ctx, epoch = leader_with_snapshot()
    data = fetch_snapshot(epoch)
    data["topics"][0]["partitions"].append(dict(data["topics"][0]["partitions"][0], partition=1))
    response = answer(ctx, RaftApiKeys.FETCH_SNAPSHOT, data)
    assert RaftErrors(response["error_code"]) == RaftErrors.INVALID_REQUEST


def test_describe_quorum_for_another_partition_is_unknown_topic_or_partition():
    ctx, _ = leader()
    data = raft_util.describe_quorum_request(TopicPartition("orders", 0))
    response = answer(ctx, RaftApiKeys.DESCRIBE_QUORUM, data)
    assert partition_error(response) == RaftErrors.UNKNOWN_TOPIC_OR_PARTITION


# -- malformed bytes at the codec -------------------------------------------------------------------------

TP = METADATA_PARTITION
MESSAGES = {  # api key: (request, response), well formed
    RaftApiKeys.VOTE: (vote(6), raft_util.vote_response(TP, 0, 0, 6, 2, True)),
    RaftApiKeys.BEGIN_QUORUM_EPOCH: (begin_epoch(6), raft_util.leader_response(TP, 0, 0, 6, 2)),
    RaftApiKeys.END_QUORUM_EPOCH: (end_epoch(6), raft_util.leader_response(TP, 0, 0, 6, 2)),
    RaftApiKeys.DESCRIBE_QUORUM: (
        raft_util.describe_quorum_request(TP),
        raft_util.describe_quorum_response(
            TP,
            {
                "error_code": 0,
                "leader_id": 1,
                "leader_epoch": 6,
                "high_watermark": 10,
                "current_voters": [{"replica_id": 1, "log_end_offset": 10}],
                "observers": [],
            },
        ),
    ),
    RaftApiKeys.FETCH: (
        fetch(6, offset=4),
        raft_util.fetch_response(
            METADATA_TOPIC_ID, TP, 0, records=b"abc", high_watermark=3, diverging_epoch=(2, 3)
        ),
    ),
    RaftApiKeys.FETCH_SNAPSHOT: (
        fetch_snapshot(6),
        raft_util.fetch_snapshot_response(TP, 0, 1, 6, (1, 1), 10, 0, b"0123"),
    ),
}
HEADER_FIELDS = {"api_key", "api_version", "correlation_id", "client_id", "tagged_fields"}
CASES = [(k, side) for k in MESSAGES for side in ("request", "response")]
CASE_IDS = [f"{RaftApiKeys(k).name.lower()}-{side}" for k, side in CASES]


def frame_of(api_key: int, side: str) -> bytes:
    version = RaftApiKeys(api_key).latest_version
    if side == "request":
        return encode_raft_request(RequestHeader(api_key, version, 7, "node-0"), MESSAGES[api_key][0])
    return encode_raft_response(api_key, version, 7, MESSAGES[api_key][1])


def parse(api_key: int, side: str, frame: bytes, version: int | None = None) -> dict:
    version = RaftApiKeys(api_key).latest_version if version is None else version
    if side == "request":
        return parse_raft_request(frame)[1]
    return parse_raft_response(api_key, version, frame)[1]


def known_paths(api_key: int, side: str) -> set[str]:
    api = RaftApiKeys(api_key)
    version = api.latest_version
    schema = api.request_schema(version) if side == "request" else api.response_schema(version)
    paths = {p for p, _ in walk(schema)} | HEADER_FIELDS
    # a struct's tagged section is named after the struct it ends
    return paths | {f"{p}.tagged_fields" for p in paths} | {f"{p}[].tagged_fields" for p in paths}


def schema_path(field: str) -> str:
    """``topics[0].partitions[0].x`` as ``walk`` names it, ``topics[].partitions[].x``; a tagged
    section's ``tagged_fields[tag 0]`` as ``tagged_fields``."""
    return re.sub(r"\[tag \d+\]", "", re.sub(r"\[\d+\]", "[]", field))


@pytest.mark.parametrize(("api_key", "side"), CASES, ids=CASE_IDS)
def test_every_cut_of_a_frame_is_refused_naming_the_field_it_stops_in(api_key, side):
    frame = frame_of(api_key, side)
    assert parse(api_key, side, frame) is not None  # the whole frame reads
    paths = known_paths(api_key, side)
    for cut in range(len(frame)):
        with pytest.raises(SchemaException) as refused:
            parse(api_key, side, frame[:cut])
        field = refused.value.field
        assert field, f"cut at {cut}: {refused.value} names no field"
        assert schema_path(field) in paths, f"cut at {cut}: {field!r} is not a field of the message"


def schema_of(api_key: int, side: str):
    api = RaftApiKeys(api_key)
    version = api.latest_version
    return api.request_schema(version) if side == "request" else api.response_schema(version)


def body_start(api_key: int, side: str) -> int:
    """Where the body starts in ``frame_of(api_key, side)``: after the header's encoding."""
    api = RaftApiKeys(api_key)
    version = api.latest_version
    if side == "request":
        header = REQUEST_HEADERS[api.request_header_version(version)]
        value = {"api_key": api_key, "api_version": version, "correlation_id": 7, "client_id": "node-0"}
    else:
        header = RESPONSE_HEADERS[api.response_header_version(version)]
        value = {"correlation_id": 7}
    return len(encode(header, value))


def topics_count_at(api_key: int, side: str) -> tuple[str, int]:
    """The name and byte position of the topics array's count: after the fields before it."""
    schema = schema_of(api_key, side)
    body = MESSAGES[api_key][0 if side == "request" else 1]
    position = body_start(api_key, side)
    for field in schema.fields:
        if field.name in ("topics", "responses"):
            return field.name, position
        position += len(encode(field.type, body[field.name]))
    raise AssertionError("no topics array")


FLEXIBLE = [case for case in CASES if is_flexible(schema_of(*case))]
FLEXIBLE_IDS = [i for case, i in zip(CASES, CASE_IDS) if case in FLEXIBLE]
NOT_FLEXIBLE = [case for case in CASES if case not in FLEXIBLE]


@pytest.mark.parametrize(("api_key", "side"), FLEXIBLE, ids=FLEXIBLE_IDS)
def test_a_varint_longer_than_five_bytes_is_refused_naming_its_field(api_key, side):
    frame = frame_of(api_key, side)
    name, at = topics_count_at(api_key, side)
    assert frame[at] == 2  # one topic: count + 1, one byte
    with pytest.raises(SchemaException, match="longer than 5 bytes") as refused:
        parse(api_key, side, frame[:at] + b"\xff" * 6 + frame[at + 1 :])
    assert refused.value.field == name


@pytest.mark.parametrize(("api_key", "side"), FLEXIBLE, ids=FLEXIBLE_IDS)
def test_a_tagged_field_longer_than_the_frame_is_refused_naming_the_section(api_key, side):
    frame = frame_of(api_key, side)
    assert frame[-1] == 0  # the message's own tagged section: no tagged field
    # One tagged field, tag 5 (unknown to every Raft message), claiming 16 bytes where 3 follow.
    with pytest.raises(SchemaException, match="claims 16 bytes, 3 remain") as refused:
        parse(api_key, side, frame[:-1] + bytes([1, 5, 16]) + b"abc")
    assert refused.value.field == "tagged_fields[tag 5]"


@pytest.mark.parametrize(
    ("api_key", "side"), NOT_FLEXIBLE, ids=[i for c, i in zip(CASES, CASE_IDS) if c in NOT_FLEXIBLE]
)
def test_a_negative_count_in_a_version_without_varints_is_refused_naming_its_field(api_key, side):
    frame = frame_of(api_key, side)
    name, at = topics_count_at(api_key, side)
    assert frame[at : at + 4] == b"\x00\x00\x00\x01"
    with pytest.raises(SchemaException, match="count -2 is negative") as refused:
        parse(api_key, side, frame[:at] + b"\xff\xff\xff\xfe" + frame[at + 4 :])
    assert refused.value.field == name


@pytest.mark.parametrize(("api_key", "side"), CASES, ids=CASE_IDS)
def test_an_unknown_version_or_api_is_refused_naming_the_header_field(api_key, side):
    frame = frame_of(api_key, side)
    version = RaftApiKeys(api_key).latest_version + 1
    with pytest.raises(SchemaException, match=f"v{version} is not supported") as refused:
        if side == "request":
            parse(api_key, side, frame[:2] + version.to_bytes(2, "big") + frame[4:])
        else:
            parse(api_key, side, frame, version)
    assert refused.value.field == "api_version"
    with pytest.raises(SchemaException, match="api key 0 is not a Raft API") as refused:
        if side == "request":
            parse(api_key, side, b"\x00\x00" + frame[2:])  # Produce: a broker's API, not the quorum's
        else:
            parse_raft_response(0, 0, frame)
    assert refused.value.field == "api_key"


# -- the quorum-state file ---------------------------------------------------------------------------------


def follower_on_a_state_file(path) -> RaftClientTestContext:
    """``follower()``, its election state in a real quorum-state file (Kafka's FileBasedStateStore)."""
    ctx = follower()
    store = FileBasedStateStore(path)
    store.write_election_state(ElectionState.with_elected_leader(EPOCH, 1, VOTERS))
    ctx.store = store
    ctx.client = ctx.new_client(store)
    ctx.client.register(MockListener())
    ctx.client.initialize()
    return ctx


@pytest.mark.parametrize(
    ("api_key", "data"),
    [
        (RaftApiKeys.VOTE, vote(EPOCH + 1, candidate=9)),
        (RaftApiKeys.VOTE, vote(EPOCH - 1)),
        (RaftApiKeys.BEGIN_QUORUM_EPOCH, begin_epoch(EPOCH - 1)),
        (RaftApiKeys.END_QUORUM_EPOCH, end_epoch(EPOCH + 1, 9)),
        (RaftApiKeys.FETCH, fetch(EPOCH + 1, replica=2)),
        (RaftApiKeys.VOTE, vote(EPOCH + 1, cluster_id=OTHER_CLUSTER)),
        (RaftApiKeys.BEGIN_QUORUM_EPOCH, begin_epoch(EPOCH + 1, tp=TopicPartition("orders", 0))),
    ],
    ids=["vote-non-voter", "vote-past-epoch", "begin-past-epoch", "end-non-voter", "fetch-future-epoch",
         "another-cluster", "another-topic"],
)  # fmt: skip
def test_a_refused_request_does_not_rewrite_the_quorum_state_file(tmp_path, api_key, data):
    ctx = follower_on_a_state_file(tmp_path / "quorum-state")
    before = (tmp_path / "quorum-state").read_bytes(), os.stat(tmp_path / "quorum-state")
    answer(ctx, api_key, data)
    after = (tmp_path / "quorum-state").read_bytes(), os.stat(tmp_path / "quorum-state")
    assert after[0] == before[0]
    # Not even written again with the same content: Kafka writes the file only on a transition.
    assert (after[1].st_ino, after[1].st_mtime_ns) == (before[1].st_ino, before[1].st_mtime_ns)
    assert (ctx.state_name(), ctx.quorum().epoch(), ctx.quorum().leader_id()) == ("Follower", EPOCH, 1)


def test_the_state_file_probe_sees_a_transition(tmp_path):
    """The check above can fail: a request from a newer epoch does rewrite the file."""
    path = tmp_path / "quorum-state"
    ctx = follower_on_a_state_file(path)
    before = path.read_bytes()
    answer(ctx, RaftApiKeys.BEGIN_QUORUM_EPOCH, begin_epoch(EPOCH + 1, leader_id=2))
    assert path.read_bytes() != before
    stored = FileBasedStateStore(path).read_election_state()
    assert stored == ElectionState.with_elected_leader(EPOCH + 1, 2, VOTERS)
