"""The Raft quorum's RPCs and data messages, as schemas in the style of ``messages.py``.

Mirrors: org.apache.kafka.common.message.VoteRequestData, BeginQuorumEpochRequestData,
         EndQuorumEpochRequestData, DescribeQuorumRequestData, FetchSnapshotRequestData,
         FetchRequestData, LeaderChangeMessage, SnapshotHeaderRecord and SnapshotFooterRecord, with
         the requests' responses (generated from clients/src/main/resources/common/message/*.json,
         Kafka 3.3.0; Fetch at v13); the quorum-state file's message, from
         raft/src/main/resources/common/message/QuorumStateData.json
Book:    beyond the book: chapter 12 (KRaft)
Differs: one table of schemas, read and written by ``types.Schema``'s walk, instead of one
         generated class per message; ``RaftApiKeys`` is an enum of its own rather than entries in
         ``ApiKeys`` (see below).

Why a table of its own. In Kafka 3.3 these APIs are scoped to the controller listener (their JSON
says ``"listeners": ["controller"]``): a broker's client listener neither advertises them in its
ApiVersions answer nor serves them. The one exception is DescribeQuorum (``["broker",
"controller"]``), which a KRaft broker takes and forwards to the active controller
(``common/protocol/listener_type.py``). kafka_lite's broker advertises exactly the APIs of
``REQUESTS`` that ``KafkaApis`` handles, and its docs and client-compatibility tests walk
``ApiKeys``; so the quorum's RPCs live in ``RAFT_REQUESTS``/``RAFT_RESPONSES``, which the quorum's
own listener reads, and a ZooKeeper broker's answers do not change. Fetch is there too, at v13, the version a Raft follower sends
in Kafka 3.3 (``KafkaNetworkChannel`` builds it with ``ApiKeys.FETCH``'s whole range, and both ends
speak up to 13): the quorum's Fetch is Kafka's Fetch, but at a flexible version with topic ids that
the client-facing table (which stops at v5) does not have.

Which versions are flexible is Kafka's, not a pattern: Vote, DescribeQuorum and FetchSnapshot are
flexible from v0, Fetch from v12, while BeginQuorumEpoch and EndQuorumEpoch v0 are not flexible at
all (``"flexibleVersions": "none"``), so they use plain strings and arrays and request header v1.
The header a message travels with follows from its schema (``header_versions``).

Field names are the specs' names in snake_case (``LastOffsetEpoch`` -> ``last_offset_epoch``).
"""

from __future__ import annotations

import enum
from typing import Any

from kafka_lite.common.protocol.requests import (
    REQUEST_HEADERS,
    RESPONSE_HEADERS,
    RequestHeader,
    SchemaTableApi,
    parse_response_header,
)
from kafka_lite.common.protocol.types import (
    BOOLEAN,
    COMPACT_NULLABLE_STRING,
    COMPACT_RECORDS,
    COMPACT_STRING,
    INT8,
    INT16,
    INT32,
    INT64,
    NULLABLE_STRING,
    STRING,
    UUID,
    ArrayOf,
    CompactArrayOf,
    CompactBytes,
    Field,
    FlexibleSchema,
    Reader,
    Schema,
    SchemaException,
    TaggedField,
    decode,
    encode,
)

F = Field
T = TaggedField


def S(*fields: Field) -> Schema:
    """A struct of a version that is not flexible."""
    return Schema(*fields)


def FS(*fields: Field, tagged: tuple[TaggedField, ...] = ()) -> FlexibleSchema:
    """A struct of a flexible version: its fields, then its tagged-field section."""
    return FlexibleSchema(*fields, tagged=tagged)


def A(element) -> ArrayOf:
    return ArrayOf(element)


def CA(element, nullable: bool = False) -> CompactArrayOf:
    return CompactArrayOf(element, nullable=nullable)


TOPIC_NAME = "The topic name (``__cluster_metadata`` for the metadata quorum)."
CLUSTER_ID = "The cluster id if known, so that a voter of another cluster is refused."

# How a topic names itself in each message: by name (flexible or not), or by id in Fetch v13.
_TOPIC_NAME = F("topic_name", COMPACT_STRING, TOPIC_NAME)
_TOPIC_NAME_V0 = F("topic_name", STRING, TOPIC_NAME)
_PARTITION_INDEX = F("partition_index", INT32, "The partition index.")
# What the answers of Vote, BeginQuorumEpoch, EndQuorumEpoch and DescribeQuorum say first of their
# partition: its error, and the leader as the responder knows it, so that any answer (even a
# refusal) teaches the sender a newer epoch. Kafka's specs repeat these four fields in each.
_PARTITION_ANSWER = (
    _PARTITION_INDEX,
    F("error_code", INT16),
    F("leader_id", INT32, "The id of the current leader, or -1 if the leader is unknown."),
    F("leader_epoch", INT32, "The latest known leader epoch."),
)


def _topics(
    topic: Field, *partition: Field, tagged: tuple[TaggedField, ...] = (), flexible: bool = True,
    name: str = "topics",
) -> Field:  # fmt: skip
    """Kafka's multi-partition nesting, which every Raft message keeps though a quorum has one
    partition: an array ``name`` of topics, each ``topic`` then an array ``partitions`` of structs
    with the fields ``partition`` (and ``tagged``). Compact arrays and flexible structs when
    ``flexible``; plain ones otherwise. The spec's ``Topics``/``Partitions`` pair, written once."""
    if flexible:
        return F(name, CA(FS(topic, F("partitions", CA(FS(*partition, tagged=tagged))))))
    return F(name, A(S(topic, F("partitions", A(S(*partition))))))


# --- Vote (52), flexible v0 -----------------------------------------------------------------------------
# A candidate asks every voter for its vote in the epoch it has just bumped; the voter grants it only
# if it has not voted in that epoch and the candidate's log is at least as long as its own (the last
# offset and its epoch decide that, as in the Raft paper's election restriction).
VOTE_REQUEST_V0 = FS(
    F("cluster_id", COMPACT_NULLABLE_STRING, CLUSTER_ID, None),
    _topics(
        _TOPIC_NAME,
        _PARTITION_INDEX,
        F("candidate_epoch", INT32, "The bumped epoch of the candidate sending the request."),
        F("candidate_id", INT32, "The id of the voter sending the request."),
        F("last_offset_epoch", INT32, "The epoch of the last record written to the metadata log."),
        F("last_offset", INT64, "The offset of the last record written to the metadata log."),
    ),
)
VOTE_RESPONSE_V0 = FS(
    F("error_code", INT16, "The top level error code."),
    _topics(
        _TOPIC_NAME,
        *_PARTITION_ANSWER,
        F("vote_granted", BOOLEAN, "True if the vote was granted."),
    ),
)

# --- BeginQuorumEpoch (53) and EndQuorumEpoch (54), v0, not flexible ------------------------------------
# The new leader tells every voter it has won (so they stop waiting for their election timeout); a
# resigning leader tells them it is stepping down, with the successors it prefers (most caught up first),
# so that the best-placed voter starts the next election soonest.
_LEADER_RESPONSE = S(
    F("error_code", INT16, "The top level error code."),
    _topics(
        _TOPIC_NAME_V0,
        *_PARTITION_ANSWER,
        flexible=False,
    ),
)
BEGIN_QUORUM_EPOCH_REQUEST_V0 = S(
    F("cluster_id", NULLABLE_STRING, CLUSTER_ID, None),
    _topics(
        _TOPIC_NAME_V0,
        _PARTITION_INDEX,
        F("leader_id", INT32, "The id of the newly elected leader."),
        F("leader_epoch", INT32, "The epoch of the newly elected leader."),
        flexible=False,
    ),
)
BEGIN_QUORUM_EPOCH_RESPONSE_V0 = _LEADER_RESPONSE
END_QUORUM_EPOCH_REQUEST_V0 = S(
    F("cluster_id", NULLABLE_STRING, CLUSTER_ID, None),
    _topics(
        _TOPIC_NAME_V0,
        _PARTITION_INDEX,
        F("leader_id", INT32, "The id of the leader that is resigning."),
        F("leader_epoch", INT32, "The current epoch."),
        F("preferred_successors", A(INT32), "The voters to start the next election, best first."),
        flexible=False,
    ),
)
END_QUORUM_EPOCH_RESPONSE_V0 = _LEADER_RESPONSE

# --- DescribeQuorum (55), flexible v0-1 ------------------------------------------------------------------
# An admin asks the leader how far each voter and observer has replicated. v1 (KIP-836) adds the two
# timestamps to each replica's state; the request did not change.
DESCRIBE_QUORUM_REQUEST_V0 = FS(_topics(_TOPIC_NAME, _PARTITION_INDEX))
_REPLICA_STATE_V0 = FS(
    F("replica_id", INT32),
    F("log_end_offset", INT64, "The last known log end offset of the replica, or -1 if unknown."),
)
_REPLICA_STATE_V1 = FS(
    *_REPLICA_STATE_V0.fields,
    F("last_fetch_timestamp", INT64, "The leader's wall clock time of the replica's last fetch, or -1.", -1),
    F("last_caught_up_timestamp", INT64, "When the replica last fetched up to the leader's end, or -1.", -1),
)


def _describe_quorum_response(replica_state: FlexibleSchema) -> FlexibleSchema:
    return FS(
        F("error_code", INT16, "The top level error code."),
        _topics(
            _TOPIC_NAME,
            *_PARTITION_ANSWER,
            F("high_watermark", INT64),
            F("current_voters", CA(replica_state)),
            F("observers", CA(replica_state)),
        ),
    )


DESCRIBE_QUORUM_RESPONSE_V0 = _describe_quorum_response(_REPLICA_STATE_V0)
DESCRIBE_QUORUM_RESPONSE_V1 = _describe_quorum_response(_REPLICA_STATE_V1)

# --- FetchSnapshot (59), flexible v0 --------------------------------------------------------------------
# A follower whose fetch offset fell below the leader's log start offset fetches the snapshot the leader
# named instead, in byte ranges (``position``), since a snapshot may be larger than one response.
_SNAPSHOT_ID = FS(F("end_offset", INT64), F("epoch", INT32))
_LEADER_ID_AND_EPOCH = FS(
    F("leader_id", INT32, "The id of the current leader, or -1 if the leader is unknown."),
    F("leader_epoch", INT32, "The latest known leader epoch."),
)
FETCH_SNAPSHOT_REQUEST_V0 = FS(
    F("replica_id", INT32, "The broker id of the follower.", -1),
    F("max_bytes", INT32, "The most bytes to fetch from all of the snapshots.", 0x7FFFFFFF),
    _topics(
        F("name", COMPACT_STRING, TOPIC_NAME),
        F("partition", INT32, "The partition index."),
        F("current_leader_epoch", INT32, "The current leader epoch, -1 for unknown."),
        F("snapshot_id", _SNAPSHOT_ID, "The end offset and epoch of the snapshot to fetch."),
        F("position", INT64, "The byte position within the snapshot to start fetching from."),
    ),
    tagged=(T(0, "cluster_id", COMPACT_NULLABLE_STRING, CLUSTER_ID, None),),
)
FETCH_SNAPSHOT_RESPONSE_V0 = FS(
    F("throttle_time_ms", INT32, "How long the response was delayed by a quota (ms).", 0),
    F("error_code", INT16, "The top level error code."),
    _topics(
        F("name", COMPACT_STRING, TOPIC_NAME),
        F("index", INT32, "The partition index."),
        F("error_code", INT16, "0, or the error fetching this partition."),
        F("snapshot_id", _SNAPSHOT_ID, "The end offset and epoch of the snapshot fetched."),
        F("size", INT64, "The total size of the snapshot."),
        F("position", INT64, "The byte position of the first byte in unaligned_records."),
        F("unaligned_records", CompactBytes("COMPACT_RECORDS", nullable=False, records=True),
          "Snapshot bytes, which need not end on a record boundary."),
        # The spec gives LeaderId and LeaderEpoch no default here, so Kafka's (an int's 0) holds.
        tagged=(T(0, "current_leader", _LEADER_ID_AND_EPOCH, "", {"leader_id": 0, "leader_epoch": 0}),),
    ),
)  # fmt: skip

# --- Fetch (1) at v13, flexible -------------------------------------------------------------------------
# The Raft follower's fetch is also how it learns of a new leader (``current_leader``), of a log that
# diverged from the leader's (``diverging_epoch``: truncate to its end offset), and of a snapshot it must
# fetch instead (``snapshot_id``); ``last_fetched_epoch`` (v12) is what lets the leader detect divergence.
FETCH_REQUEST_V13 = FS(
    F("replica_id", INT32, "The broker id of the follower, or -1 for a consumer."),
    F("max_wait_ms", INT32, "How long to wait for min_bytes (ms)."),
    F("min_bytes", INT32, "The fewest bytes to accumulate in the response."),
    F("max_bytes", INT32, "The most bytes to fetch.", 0x7FFFFFFF),
    F("isolation_level", INT8, "0 read uncommitted, 1 read committed.", 0),
    F("session_id", INT32, "The fetch session id.", 0),
    F("session_epoch", INT32, "The fetch session epoch.", -1),
    _topics(
        F("topic_id", UUID, "The topic's id (KIP-516), which replaced its name in v13."),
        F("partition", INT32, "The partition index."),
        F("current_leader_epoch", INT32, "The current leader epoch of the partition.", -1),
        F("fetch_offset", INT64, "The offset to fetch from."),
        F("last_fetched_epoch", INT32, "The epoch of the last fetched record, or -1.", -1),
        F("log_start_offset", INT64, "The follower's log start offset.", -1),
        F("partition_max_bytes", INT32, "The most bytes to fetch from this partition."),
    ),
    F("forgotten_topics_data", CA(FS(
        F("topic_id", UUID),
        F("partitions", CA(INT32), "The partitions to forget."),
    )), "In an incremental fetch, the partitions to remove."),
    F("rack_id", COMPACT_STRING, "The rack of the consumer making this request.", ""),
    tagged=(T(0, "cluster_id", COMPACT_NULLABLE_STRING, CLUSTER_ID, None),),
)  # fmt: skip
_EPOCH_END_OFFSET = FS(F("epoch", INT32, "", -1), F("end_offset", INT64, "", -1))
_CURRENT_LEADER = FS(F("leader_id", INT32, "", -1), F("leader_epoch", INT32, "", -1))
_FETCH_SNAPSHOT_ID = FS(F("end_offset", INT64, "", -1), F("epoch", INT32, "", -1))
FETCH_RESPONSE_V13 = FS(
    F("throttle_time_ms", INT32, "How long the response was delayed by a quota (ms).", 0),
    F("error_code", INT16, "The top level error code.", 0),
    F("session_id", INT32, "The fetch session id, or 0.", 0),
    _topics(
        F("topic_id", UUID, "The topic's id."),
        _PARTITION_INDEX,
        F("error_code", INT16, "0, or the error fetching this partition."),
        F("high_watermark", INT64, "The current high watermark."),
        F("last_stable_offset", INT64, "The last stable offset.", -1),
        F("log_start_offset", INT64, "The current log start offset.", -1),
        F("aborted_transactions", CA(FS(F("producer_id", INT64), F("first_offset", INT64)), nullable=True)),
        F("preferred_read_replica", INT32, "The replica a consumer should read from next.", -1),
        F("records", COMPACT_RECORDS, "The record data."),
        tagged=(
            T(0, "diverging_epoch", _EPOCH_END_OFFSET, "Where the follower's log diverged.",
              {"epoch": -1, "end_offset": -1}),
            T(1, "current_leader", _CURRENT_LEADER, "The leader as this replica knows it.",
              {"leader_id": -1, "leader_epoch": -1}),
            T(2, "snapshot_id", _FETCH_SNAPSHOT_ID, "The snapshot to fetch instead.",
              {"end_offset": -1, "epoch": -1}),
        ),
        name="responses",
    ),
)  # fmt: skip

# --- Data messages: no api key and no header ------------------------------------------------------------
_VOTER = FS(F("voter_id", INT32))
# The quorum-state file (each voter's durable election state: its epoch, its leader, whom it voted for)
# is this message written as JSON; the binary form here is the same message's.
QUORUM_STATE_DATA_V0 = FS(
    F("cluster_id", COMPACT_STRING, "", ""),
    F("leader_id", INT32, "", -1),
    F("leader_epoch", INT32, "", -1),
    F("voted_id", INT32, "", -1),
    F("applied_offset", INT64, "", 0),
    F("current_voters", CA(_VOTER, nullable=True), "", None),
)
# The value of a LEADER_CHANGE control record, which a new leader appends first in its epoch: the
# record that, once committed, commits everything before it (the Raft paper's no-op entry).
LEADER_CHANGE_MESSAGE_V0 = FS(
    F("version", INT16, "The version of the leader change message."),
    F("leader_id", INT32, "The id of the newly elected leader."),
    F("voters", CA(_VOTER), "The voters of the quorum in this epoch."),
    F("granting_voters", CA(_VOTER), "The voters who voted for the leader."),
)
SNAPSHOT_HEADER_RECORD_V0 = FS(
    F("version", INT16, "The version of the snapshot header record."),
    F("last_contained_log_timestamp", INT64, "The append time of the last record the snapshot holds."),
)
SNAPSHOT_FOOTER_RECORD_V0 = FS(F("version", INT16, "The version of the snapshot footer record."))


# --8<-- [start:tables]
class RaftApiKeys(SchemaTableApi, enum.IntEnum):
    """The APIs the quorum's listener speaks, with Kafka's ids (``ApiKeys`` in Kafka 3.3)."""

    FETCH = 1
    VOTE = 52
    BEGIN_QUORUM_EPOCH = 53
    END_QUORUM_EPOCH = 54
    DESCRIBE_QUORUM = 55
    FETCH_SNAPSHOT = 59

    def _tables(self) -> tuple[dict, dict]:
        return RAFT_REQUESTS, RAFT_RESPONSES


RAFT_REQUESTS: dict[int, list[Schema | None]] = {
    RaftApiKeys.FETCH: [None] * 13 + [FETCH_REQUEST_V13],
    RaftApiKeys.VOTE: [VOTE_REQUEST_V0],
    RaftApiKeys.BEGIN_QUORUM_EPOCH: [BEGIN_QUORUM_EPOCH_REQUEST_V0],
    RaftApiKeys.END_QUORUM_EPOCH: [END_QUORUM_EPOCH_REQUEST_V0],
    RaftApiKeys.DESCRIBE_QUORUM: [DESCRIBE_QUORUM_REQUEST_V0] * 2,
    RaftApiKeys.FETCH_SNAPSHOT: [FETCH_SNAPSHOT_REQUEST_V0],
}
RAFT_RESPONSES: dict[int, list[Schema | None]] = {
    RaftApiKeys.FETCH: [None] * 13 + [FETCH_RESPONSE_V13],
    RaftApiKeys.VOTE: [VOTE_RESPONSE_V0],
    RaftApiKeys.BEGIN_QUORUM_EPOCH: [BEGIN_QUORUM_EPOCH_RESPONSE_V0],
    RaftApiKeys.END_QUORUM_EPOCH: [END_QUORUM_EPOCH_RESPONSE_V0],
    RaftApiKeys.DESCRIBE_QUORUM: [DESCRIBE_QUORUM_RESPONSE_V0, DESCRIBE_QUORUM_RESPONSE_V1],
    RaftApiKeys.FETCH_SNAPSHOT: [FETCH_SNAPSHOT_RESPONSE_V0],
}
# --8<-- [end:tables]


def _api(api_key: int, version: int) -> RaftApiKeys:
    try:
        api = RaftApiKeys(api_key)
    except ValueError:
        raise SchemaException(f"api key {api_key} is not a Raft API", field="api_key", position=0) from None
    if not api.is_version_supported(version):
        raise SchemaException(
            f"{api.api_name} v{version} is not supported (versions {api.oldest_version}-{api.latest_version})",
            field="api_version",
            position=2,
        )
    return api


# The first four bytes of every request header, read before the header's version is known; as a
# schema, so that a frame too short for them is refused naming the field it stops in.
_API_KEY_AND_VERSION = S(F("api_key", INT16), F("api_version", INT16))


def encode_raft_request(header: RequestHeader, body: dict[str, Any]) -> bytes:
    """Header (v1 or v2, as the version calls for) and body of a Raft request, without the size."""
    api = _api(header.api_key, header.api_version)
    return header.encode(api.request_header_version(header.api_version)) + encode(
        api.request_schema(header.api_version), body
    )


def parse_raft_request(frame: bytes | bytearray | memoryview) -> tuple[RequestHeader, dict[str, Any]]:
    """Header and body of a Raft request frame: api key and version (the first four bytes of every
    header) choose the header version, then the body's schema."""
    first = _API_KEY_AND_VERSION.read(Reader(frame))
    api_key, version = first["api_key"], first["api_version"]
    api = _api(api_key, version)
    r = Reader(frame)
    value = REQUEST_HEADERS[api.request_header_version(version)].read(r)
    header = RequestHeader(
        value["api_key"], value["api_version"], value["correlation_id"], value["client_id"]
    )
    return header, decode(api.request_schema(version), frame, r.pos)


def encode_raft_response(api_key: int, version: int, correlation_id: int, body: dict[str, Any]) -> bytes:
    out = bytearray()
    write_raft_response(out, api_key, version, correlation_id, body)
    return bytes(out)


def write_raft_response(
    out: bytearray, api_key: int, version: int, correlation_id: int, body: dict[str, Any]
) -> None:
    """``encode_raft_response`` into ``out``: a ``RecordsWriter`` there is handed each records field
    whole (the quorum's listener sends a Fetch answer's file slice that way, as the broker does)."""
    api = _api(api_key, version)
    RESPONSE_HEADERS[api.response_header_version(version)].write(out, {"correlation_id": correlation_id})
    api.response_schema(version).write(out, body)


def parse_raft_response(
    api_key: int, version: int, frame: bytes | bytearray | memoryview
) -> tuple[int, dict[str, Any]]:
    """Correlation id and body of the response to a Raft request of ``api_key`` at ``version``."""
    api = _api(api_key, version)
    correlation_id, body_start = parse_response_header(frame, api.response_header_version(version))
    return correlation_id, decode(api.response_schema(version), frame, body_start)
