"""Request and response schemas of every API kafka_lite speaks, version by version, as data.

Mirrors: org.apache.kafka.common.protocol.Protocol (the REQUESTS/RESPONSES tables; clients/.../
         common/protocol/Protocol.java, Kafka 0.11.0) and, for versions added after 0.11
         (ApiVersions v2, InitProducerId v1, DescribeConfigs v1, CreatePartitions), Kafka's
         message JSON files
Book:    chapter 2 (the request/response formats); chapters 4-7 use the group and controller APIs
Differs: schemas are shared Python values rather than Java constants; a version whose body did not
         change points at the same schema object (Kafka does the same: ``PRODUCE_REQUEST_V1 =
         PRODUCE_REQUEST_V0``). AddPartitionsToTxn v2-v4 are Kafka 2.7's to 3.6's, v4 the brokers'
         verification of KIP-890 part 1; DescribeProducers is Kafka 3.0's (KIP-664).

The versions are a Kafka 0.11-era set that kafka-python, confluent-kafka (librdkafka), aiokafka and
kcat all work with: client APIs from version 0 (old librdkafka asks for exact versions), plus
ApiVersions v2 and InitProducerId v1, with Kafka 1.0's CreatePartitions and 1.1's DescribeConfigs v1
(the admin clients ask for them); inter-broker APIs at their Kafka 0.11 versions; and
AddPartitionsToTxn up to v4 and DescribeProducers, the table's only "flexible" versions (tagged
fields, compact strings). ``REQUESTS[api_key][version]`` and
``RESPONSES[...]`` are the schemas; ApiVersions advertises the range each table spans, the docs print
them and the tests walk them.
"""

from __future__ import annotations

from kafka_lite.common.protocol.types import (
    BOOLEAN,
    BYTES,
    COMPACT_NULLABLE_STRING,
    COMPACT_STRING,
    INT8,
    INT16,
    INT32,
    INT64,
    NULLABLE_STRING,
    RECORDS,
    STRING,
    ArrayOf,
    CompactArrayOf,
    Field,
    FlexibleSchema,
    Schema,
)

F = Field


def S(*fields: Field) -> Schema:
    return Schema(*fields)


def A(element, nullable: bool = False) -> ArrayOf:
    return ArrayOf(element, nullable=nullable)


THROTTLE = F("throttle_time_ms", INT32, "How long the response was delayed by a quota (ms).", 0)
ERROR = F("error_code", INT16, "0, or a Kafka error code (kafka_lite.common.errors).")

REQUEST_HEADER = S(
    F("api_key", INT16, "Which API (ApiKeys)."),
    F("api_version", INT16, "Which version of its schema the body uses."),
    F("correlation_id", INT32, "Echoed in the response, so the client can match it to this request."),
    F("client_id", NULLABLE_STRING, "Who is asking (for logs and quotas).", ""),
)
# Request header v0 has no client id. Its one user is ControlledShutdown v0, which Kafka's broker still
# parses (through its Scala request classes, up to 2.2); ``requests.parse_request_header`` reads it for
# that request only.
REQUEST_HEADER_V0 = S(*REQUEST_HEADER.fields[:3])
RESPONSE_HEADER = S(F("correlation_id", INT32, "The request's correlation id."))
# The headers of flexible versions (KIP-482): request header v2 and response header v1 end with a
# tagged-field section. The client id stays a NON-compact nullable string, so that a broker can read
# api key, version, correlation id and client id the same way in every header version. None of the
# versions a kafka_lite broker advertises uses them; the Raft RPCs do (``raft_messages.py``).
REQUEST_HEADER_V2 = FlexibleSchema(*REQUEST_HEADER.fields)
RESPONSE_HEADER_V1 = FlexibleSchema(*RESPONSE_HEADER.fields)

# --- Produce (0) ------------------------------------------------------------------------------------------
_PRODUCE_TOPIC = S(F("topic", STRING), F("data", A(S(F("partition", INT32), F("record_set", RECORDS)))))
PRODUCE_REQUEST_V0 = S(
    F("acks", INT16, "0: no response; 1: the leader wrote it; -1: every in-sync replica did."),
    F("timeout", INT32, "How long the broker may wait for acks=-1 (ms)."),
    F("topic_data", A(_PRODUCE_TOPIC)),
)
PRODUCE_REQUEST_V3 = S(F("transactional_id", NULLABLE_STRING), *PRODUCE_REQUEST_V0.fields)
_PRODUCE_PARTITION_V0 = S(F("partition", INT32), ERROR, F("base_offset", INT64))
_PRODUCE_PARTITION_V2 = S(
    F("partition", INT32), ERROR, F("base_offset", INT64),
    F("log_append_time", INT64, "The broker's timestamp for LogAppendTime topics, else -1."),
)  # fmt: skip
PRODUCE_RESPONSE_V0 = S(
    F("responses", A(S(F("topic", STRING), F("partition_responses", A(_PRODUCE_PARTITION_V0)))))
)
PRODUCE_RESPONSE_V1 = S(*PRODUCE_RESPONSE_V0.fields, THROTTLE)
PRODUCE_RESPONSE_V2 = S(
    F("responses", A(S(F("topic", STRING), F("partition_responses", A(_PRODUCE_PARTITION_V2))))), THROTTLE
)

# --- Fetch (1) ------------------------------------------------------------------------------------------
_FETCH_PARTITION_V0 = S(F("partition", INT32), F("fetch_offset", INT64), F("max_bytes", INT32))
_FETCH_PARTITION_V5 = S(
    F("partition", INT32), F("fetch_offset", INT64), F("log_start_offset", INT64), F("max_bytes", INT32)
)
_FETCH_HEAD = (
    F("replica_id", INT32, "-1 for a consumer; the follower's broker id for replication."),
    F("max_wait_time", INT32, "How long the broker may wait for min_bytes (ms)."),
    F("min_bytes", INT32, "Answer once this much data is there (or max_wait_time passed)."),
)
FETCH_REQUEST_V0 = S(
    *_FETCH_HEAD, F("topics", A(S(F("topic", STRING), F("partitions", A(_FETCH_PARTITION_V0)))))
)
FETCH_REQUEST_V3 = S(
    *_FETCH_HEAD,
    F("max_bytes", INT32),
    F("topics", A(S(F("topic", STRING), F("partitions", A(_FETCH_PARTITION_V0))))),
)
FETCH_REQUEST_V4 = S(
    *_FETCH_HEAD, F("max_bytes", INT32), F("isolation_level", INT8),
    F("topics", A(S(F("topic", STRING), F("partitions", A(_FETCH_PARTITION_V0))))),
)  # fmt: skip
FETCH_REQUEST_V5 = S(
    *_FETCH_HEAD, F("max_bytes", INT32), F("isolation_level", INT8),
    F("topics", A(S(F("topic", STRING), F("partitions", A(_FETCH_PARTITION_V5))))),
)  # fmt: skip
_ABORTED = S(F("producer_id", INT64), F("first_offset", INT64))
_FETCH_PHEAD_V0 = S(F("partition", INT32), ERROR, F("high_watermark", INT64))
_FETCH_PHEAD_V4 = S(
    F("partition", INT32), ERROR, F("high_watermark", INT64), F("last_stable_offset", INT64),
    F("aborted_transactions", A(_ABORTED, nullable=True)),
)  # fmt: skip
_FETCH_PHEAD_V5 = S(
    F("partition", INT32), ERROR, F("high_watermark", INT64), F("last_stable_offset", INT64),
    F("log_start_offset", INT64), F("aborted_transactions", A(_ABORTED, nullable=True)),
)  # fmt: skip


def _fetch_response(phead: Schema, throttle: bool) -> Schema:
    topic = S(
        F("topic", STRING),
        F("partition_responses", A(S(F("partition_header", phead), F("record_set", RECORDS)))),
    )
    return S(THROTTLE, F("responses", A(topic))) if throttle else S(F("responses", A(topic)))


FETCH_RESPONSE_V0 = _fetch_response(_FETCH_PHEAD_V0, throttle=False)
FETCH_RESPONSE_V1 = _fetch_response(_FETCH_PHEAD_V0, throttle=True)
FETCH_RESPONSE_V4 = _fetch_response(_FETCH_PHEAD_V4, throttle=True)
FETCH_RESPONSE_V5 = _fetch_response(_FETCH_PHEAD_V5, throttle=True)

# --- ListOffsets (2) ---------------------------------------------------------------------------------------
_LIST_OFFSETS_P_V0 = S(F("partition", INT32), F("timestamp", INT64), F("max_num_offsets", INT32))
_LIST_OFFSETS_P_V1 = S(
    F("partition", INT32), F("timestamp", INT64, "-1 latest, -2 earliest, else a time (ms).")
)
LIST_OFFSETS_REQUEST_V0 = S(
    F("replica_id", INT32), F("topics", A(S(F("topic", STRING), F("partitions", A(_LIST_OFFSETS_P_V0)))))
)
LIST_OFFSETS_REQUEST_V1 = S(
    F("replica_id", INT32), F("topics", A(S(F("topic", STRING), F("partitions", A(_LIST_OFFSETS_P_V1)))))
)
LIST_OFFSETS_REQUEST_V2 = S(
    F("replica_id", INT32), F("isolation_level", INT8),
    F("topics", A(S(F("topic", STRING), F("partitions", A(_LIST_OFFSETS_P_V1))))),
)  # fmt: skip
_LO_RESP_P_V0 = S(F("partition", INT32), ERROR, F("offsets", A(INT64)))
_LO_RESP_P_V1 = S(F("partition", INT32), ERROR, F("timestamp", INT64), F("offset", INT64))
LIST_OFFSETS_RESPONSE_V0 = S(
    F("responses", A(S(F("topic", STRING), F("partition_responses", A(_LO_RESP_P_V0)))))
)
LIST_OFFSETS_RESPONSE_V1 = S(
    F("responses", A(S(F("topic", STRING), F("partition_responses", A(_LO_RESP_P_V1)))))
)
LIST_OFFSETS_RESPONSE_V2 = S(THROTTLE, *LIST_OFFSETS_RESPONSE_V1.fields)

# --- Metadata (3) ------------------------------------------------------------------------------------------
METADATA_REQUEST_V0 = S(F("topics", A(STRING), "Topics to describe; empty means all (v0)."))
METADATA_REQUEST_V1 = S(F("topics", A(STRING, nullable=True), "Topics to describe; null means all (v1+)."))
METADATA_REQUEST_V4 = S(*METADATA_REQUEST_V1.fields, F("allow_auto_topic_creation", BOOLEAN))
_BROKER_V0 = S(F("node_id", INT32), F("host", STRING), F("port", INT32))
_BROKER_V1 = S(F("node_id", INT32), F("host", STRING), F("port", INT32), F("rack", NULLABLE_STRING))
_PARTITION_METADATA = S(
    F("partition_error_code", INT16), F("partition_id", INT32), F("leader", INT32),
    F("replicas", A(INT32)), F("isr", A(INT32)),
)  # fmt: skip
_TOPIC_V0 = S(
    F("topic_error_code", INT16), F("topic", STRING), F("partition_metadata", A(_PARTITION_METADATA))
)
_TOPIC_V1 = S(
    F("topic_error_code", INT16), F("topic", STRING), F("is_internal", BOOLEAN),
    F("partition_metadata", A(_PARTITION_METADATA)),
)  # fmt: skip
METADATA_RESPONSE_V0 = S(F("brokers", A(_BROKER_V0)), F("topic_metadata", A(_TOPIC_V0)))
METADATA_RESPONSE_V1 = S(
    F("brokers", A(_BROKER_V1)), F("controller_id", INT32), F("topic_metadata", A(_TOPIC_V1))
)
METADATA_RESPONSE_V2 = S(
    F("brokers", A(_BROKER_V1)), F("cluster_id", NULLABLE_STRING), F("controller_id", INT32),
    F("topic_metadata", A(_TOPIC_V1)),
)  # fmt: skip
METADATA_RESPONSE_V3 = S(THROTTLE, *METADATA_RESPONSE_V2.fields)

# --- LeaderAndIsr (4), StopReplica (5), UpdateMetadata (6), ControlledShutdown (7): inter-broker ----------------
_PARTITION_STATE = S(
    F("topic", STRING), F("partition", INT32), F("controller_epoch", INT32), F("leader", INT32),
    F("leader_epoch", INT32), F("isr", A(INT32)), F("zk_version", INT32), F("replicas", A(INT32)),
)  # fmt: skip
_TP_ERROR = S(F("topic", STRING), F("partition", INT32), ERROR)
LEADER_AND_ISR_REQUEST_V0 = S(
    F("controller_id", INT32), F("controller_epoch", INT32), F("partition_states", A(_PARTITION_STATE)),
    F("live_leaders", A(S(F("id", INT32), F("host", STRING), F("port", INT32)))),
)  # fmt: skip
LEADER_AND_ISR_RESPONSE_V0 = S(ERROR, F("partitions", A(_TP_ERROR)))
STOP_REPLICA_REQUEST_V0 = S(
    F("controller_id", INT32), F("controller_epoch", INT32), F("delete_partitions", BOOLEAN),
    F("partitions", A(S(F("topic", STRING), F("partition", INT32)))),
)  # fmt: skip
STOP_REPLICA_RESPONSE_V0 = S(ERROR, F("partitions", A(_TP_ERROR)))
_UM_HEAD = (
    F("controller_id", INT32),
    F("controller_epoch", INT32),
    F("partition_states", A(_PARTITION_STATE)),
)
UPDATE_METADATA_REQUEST_V0 = S(
    *_UM_HEAD, F("live_brokers", A(S(F("id", INT32), F("host", STRING), F("port", INT32))))
)
# From v1 a broker lists end points; note port comes before host here, unlike v0 (as in Kafka).
_END_POINT_V1 = S(F("port", INT32), F("host", STRING), F("security_protocol_type", INT16))
_END_POINT_V3 = S(
    F("port", INT32), F("host", STRING), F("listener_name", STRING), F("security_protocol_type", INT16)
)
UPDATE_METADATA_REQUEST_V1 = S(
    *_UM_HEAD, F("live_brokers", A(S(F("id", INT32), F("end_points", A(_END_POINT_V1)))))
)
UPDATE_METADATA_REQUEST_V2 = S(
    *_UM_HEAD,
    F("live_brokers", A(S(F("id", INT32), F("end_points", A(_END_POINT_V1)), F("rack", NULLABLE_STRING)))),
)
UPDATE_METADATA_REQUEST_V3 = S(
    *_UM_HEAD,
    F("live_brokers", A(S(F("id", INT32), F("end_points", A(_END_POINT_V3)), F("rack", NULLABLE_STRING)))),
)
UPDATE_METADATA_RESPONSE_V0 = S(ERROR)
# v0 and v1 have the same body; v0 comes with request header v0 (no client id).
CONTROLLED_SHUTDOWN_REQUEST_V0 = S(F("broker_id", INT32, "The broker that is shutting down."))
CONTROLLED_SHUTDOWN_REQUEST_V1 = CONTROLLED_SHUTDOWN_REQUEST_V0
CONTROLLED_SHUTDOWN_RESPONSE_V0 = S(
    ERROR,
    F(
        "partitions_remaining",
        A(S(F("topic", STRING), F("partition", INT32))),
        "The replicated partitions the broker still leads: it asks again while any remain.",
    ),
)
CONTROLLED_SHUTDOWN_RESPONSE_V1 = CONTROLLED_SHUTDOWN_RESPONSE_V0

# --- OffsetCommit (8), OffsetFetch (9) ----------------------------------------------------------------------
_OC_P_V0 = S(F("partition", INT32), F("offset", INT64), F("metadata", NULLABLE_STRING))
_OC_P_V1 = S(F("partition", INT32), F("offset", INT64), F("timestamp", INT64), F("metadata", NULLABLE_STRING))
OFFSET_COMMIT_REQUEST_V0 = S(
    F("group_id", STRING), F("topics", A(S(F("topic", STRING), F("partitions", A(_OC_P_V0)))))
)
OFFSET_COMMIT_REQUEST_V1 = S(
    F("group_id", STRING), F("group_generation_id", INT32), F("member_id", STRING),
    F("topics", A(S(F("topic", STRING), F("partitions", A(_OC_P_V1))))),
)  # fmt: skip
OFFSET_COMMIT_REQUEST_V2 = S(
    F("group_id", STRING), F("group_generation_id", INT32), F("member_id", STRING), F("retention_time", INT64),
    F("topics", A(S(F("topic", STRING), F("partitions", A(_OC_P_V0))))),
)  # fmt: skip
_OC_RESP_TOPIC = S(F("topic", STRING), F("partition_responses", A(S(F("partition", INT32), ERROR))))
OFFSET_COMMIT_RESPONSE_V0 = S(F("responses", A(_OC_RESP_TOPIC)))
OFFSET_COMMIT_RESPONSE_V3 = S(THROTTLE, F("responses", A(_OC_RESP_TOPIC)))
# Kafka 0.11 wraps each partition id in a one-field struct; the bytes are those of a plain INT32 array.
_OF_TOPIC = S(F("topic", STRING), F("partitions", A(INT32)))
OFFSET_FETCH_REQUEST_V0 = S(F("group_id", STRING), F("topics", A(_OF_TOPIC)))
OFFSET_FETCH_REQUEST_V2 = S(
    F("group_id", STRING), F("topics", A(_OF_TOPIC, nullable=True), "null: every partition")
)
_OF_RESP_TOPIC = S(
    F("topic", STRING),
    F(
        "partition_responses",
        A(S(F("partition", INT32), F("offset", INT64), F("metadata", NULLABLE_STRING), ERROR)),
    ),
)
OFFSET_FETCH_RESPONSE_V0 = S(F("responses", A(_OF_RESP_TOPIC)))
OFFSET_FETCH_RESPONSE_V2 = S(F("responses", A(_OF_RESP_TOPIC)), ERROR)
OFFSET_FETCH_RESPONSE_V3 = S(THROTTLE, F("responses", A(_OF_RESP_TOPIC)), ERROR)

# --- FindCoordinator (10) ------------------------------------------------------------------------------------
FIND_COORDINATOR_REQUEST_V0 = S(F("group_id", STRING))
FIND_COORDINATOR_REQUEST_V1 = S(
    F("coordinator_key", STRING), F("coordinator_type", INT8, "0 group, 1 transaction")
)
_COORDINATOR = S(F("node_id", INT32), F("host", STRING), F("port", INT32))
FIND_COORDINATOR_RESPONSE_V0 = S(ERROR, F("coordinator", _COORDINATOR))
FIND_COORDINATOR_RESPONSE_V1 = S(
    THROTTLE, ERROR, F("error_message", NULLABLE_STRING), F("coordinator", _COORDINATOR)
)

# --- JoinGroup (11), Heartbeat (12), LeaveGroup (13), SyncGroup (14), DescribeGroups (15), ListGroups (16) ----
_JOIN_PROTOCOL = S(F("protocol_name", STRING), F("protocol_metadata", BYTES))
JOIN_GROUP_REQUEST_V0 = S(
    F("group_id", STRING), F("session_timeout", INT32), F("member_id", STRING), F("protocol_type", STRING),
    F("group_protocols", A(_JOIN_PROTOCOL)),
)  # fmt: skip
JOIN_GROUP_REQUEST_V1 = S(
    F("group_id", STRING), F("session_timeout", INT32), F("rebalance_timeout", INT32), F("member_id", STRING),
    F("protocol_type", STRING), F("group_protocols", A(_JOIN_PROTOCOL)),
)  # fmt: skip
_JOIN_BODY = (
    ERROR, F("generation_id", INT32), F("group_protocol", STRING), F("leader_id", STRING), F("member_id", STRING),
    F("members", A(S(F("member_id", STRING), F("member_metadata", BYTES)))),
)  # fmt: skip
JOIN_GROUP_RESPONSE_V0 = S(*_JOIN_BODY)
JOIN_GROUP_RESPONSE_V2 = S(THROTTLE, *_JOIN_BODY)
HEARTBEAT_REQUEST_V0 = S(F("group_id", STRING), F("group_generation_id", INT32), F("member_id", STRING))
HEARTBEAT_RESPONSE_V0 = S(ERROR)
HEARTBEAT_RESPONSE_V1 = S(THROTTLE, ERROR)
LEAVE_GROUP_REQUEST_V0 = S(F("group_id", STRING), F("member_id", STRING))
SYNC_GROUP_REQUEST_V0 = S(
    F("group_id", STRING), F("generation_id", INT32), F("member_id", STRING),
    F("group_assignment", A(S(F("member_id", STRING), F("member_assignment", BYTES)))),
)  # fmt: skip
SYNC_GROUP_RESPONSE_V0 = S(ERROR, F("member_assignment", BYTES))
SYNC_GROUP_RESPONSE_V1 = S(THROTTLE, ERROR, F("member_assignment", BYTES))
DESCRIBE_GROUPS_REQUEST_V0 = S(F("group_ids", A(STRING)))
_MEMBER = S(
    F("member_id", STRING), F("client_id", STRING), F("client_host", STRING),
    F("member_metadata", BYTES), F("member_assignment", BYTES),
)  # fmt: skip
_GROUP = S(
    ERROR, F("group_id", STRING), F("state", STRING), F("protocol_type", STRING), F("protocol", STRING),
    F("members", A(_MEMBER)),
)  # fmt: skip
DESCRIBE_GROUPS_RESPONSE_V0 = S(F("groups", A(_GROUP)))
DESCRIBE_GROUPS_RESPONSE_V1 = S(THROTTLE, F("groups", A(_GROUP)))
LIST_GROUPS_REQUEST_V0 = S()
_LISTED_GROUP = S(F("group_id", STRING), F("protocol_type", STRING))
LIST_GROUPS_RESPONSE_V0 = S(ERROR, F("groups", A(_LISTED_GROUP)))
LIST_GROUPS_RESPONSE_V1 = S(THROTTLE, ERROR, F("groups", A(_LISTED_GROUP)))

# --- SaslHandshake (17), SaslAuthenticate (36): Kafka 0.10's KIP-43 and 1.0's KIP-152 --------------------------
# v0 is followed by raw size-prefixed SASL tokens; v1 by SaslAuthenticate requests carrying them.
SASL_HANDSHAKE_REQUEST_V0 = S(
    F("mechanism", STRING, "The SASL mechanism the client wants (PLAIN, SCRAM-SHA-256).")
)
SASL_HANDSHAKE_RESPONSE_V0 = S(
    ERROR, F("enabled_mechanisms", A(STRING), "The mechanisms this listener enables.")
)
SASL_AUTHENTICATE_REQUEST_V0 = S(F("sasl_auth_bytes", BYTES, "One SASL token from the client."))
SASL_AUTHENTICATE_RESPONSE_V0 = S(
    ERROR,
    F("error_message", NULLABLE_STRING, "Why authentication failed, or null."),
    F("sasl_auth_bytes", BYTES, "The server's SASL token (empty when it has none)."),
)

# --- ApiVersions (18) ----------------------------------------------------------------------------------------
API_VERSIONS_REQUEST_V0 = S()
_API_VERSION = S(F("api_key", INT16), F("min_version", INT16), F("max_version", INT16))
API_VERSIONS_RESPONSE_V0 = S(ERROR, F("api_versions", A(_API_VERSION)))
API_VERSIONS_RESPONSE_V1 = S(ERROR, F("api_versions", A(_API_VERSION)), THROTTLE)

# --- CreateTopics (19), DeleteTopics (20) -----------------------------------------------------------------------
_CREATE_TOPIC = S(
    F("topic", STRING),
    F("num_partitions", INT32, "-1 when replica_assignment is given."),
    F("replication_factor", INT16, "-1 when replica_assignment is given."),
    F("replica_assignment", A(S(F("partition_id", INT32), F("replicas", A(INT32))))),
    F("config_entries", A(S(F("config_name", STRING), F("config_value", NULLABLE_STRING)))),
)
CREATE_TOPICS_REQUEST_V0 = S(F("create_topic_requests", A(_CREATE_TOPIC)), F("timeout", INT32))
CREATE_TOPICS_REQUEST_V1 = S(*CREATE_TOPICS_REQUEST_V0.fields, F("validate_only", BOOLEAN))
_TOPIC_ERROR_CODE = S(F("topic", STRING), ERROR)
_TOPIC_ERROR = S(F("topic", STRING), ERROR, F("error_message", NULLABLE_STRING))
CREATE_TOPICS_RESPONSE_V0 = S(F("topic_errors", A(_TOPIC_ERROR_CODE)))
CREATE_TOPICS_RESPONSE_V1 = S(F("topic_errors", A(_TOPIC_ERROR)))
CREATE_TOPICS_RESPONSE_V2 = S(THROTTLE, F("topic_errors", A(_TOPIC_ERROR)))
DELETE_TOPICS_REQUEST_V0 = S(F("topics", A(STRING)), F("timeout", INT32))
DELETE_TOPICS_RESPONSE_V0 = S(F("topic_error_codes", A(_TOPIC_ERROR_CODE)))
DELETE_TOPICS_RESPONSE_V1 = S(THROTTLE, F("topic_error_codes", A(_TOPIC_ERROR_CODE)))

# --- InitProducerId (22), OffsetsForLeaderEpoch (23) ---------------------------------------------------------------
INIT_PRODUCER_ID_REQUEST_V0 = S(F("transactional_id", NULLABLE_STRING), F("transaction_timeout_ms", INT32))
INIT_PRODUCER_ID_RESPONSE_V0 = S(THROTTLE, ERROR, F("producer_id", INT64), F("producer_epoch", INT16))
_OFLE_REQ_TOPIC = S(
    F("topic", STRING), F("partitions", A(S(F("partition_id", INT32), F("leader_epoch", INT32))))
)
OFFSETS_FOR_LEADER_EPOCH_REQUEST_V0 = S(F("topics", A(_OFLE_REQ_TOPIC)))
_OFLE_RESP_TOPIC = S(
    F("topic", STRING), F("partitions", A(S(ERROR, F("partition_id", INT32), F("end_offset", INT64))))
)
OFFSETS_FOR_LEADER_EPOCH_RESPONSE_V0 = S(F("topics", A(_OFLE_RESP_TOPIC)))

# --- DeleteRecords (21): Kafka 0.11, KIP-107 -------------------------------------------------------------------
DELETE_RECORDS_REQUEST_V0 = S(
    F("topics", A(S(
        F("topic", STRING),
        F("partitions", A(S(F("partition", INT32), F("offset", INT64, "Delete below this; -1: the high watermark.")))),
    ))),
    F("timeout", INT32, "How long to wait for every replica to move its log start offset (ms)."),
)  # fmt: skip
DELETE_RECORDS_RESPONSE_V0 = S(
    THROTTLE,
    F("topics", A(S(
        F("topic", STRING),
        F("partitions", A(S(F("partition", INT32), F("low_watermark", INT64), ERROR))),
    ))),
)  # fmt: skip

# --- DescribeProducers (61): KIP-664, flexible from v0 ------------------------------------------------------
# What a partition's replica knows of its producers: the admin's way to find a hanging transaction
# (``kafka-lite transactions``), which the partition's last stable offset stops at.
DESCRIBE_PRODUCERS_REQUEST_V0 = FlexibleSchema(
    F("topics", CompactArrayOf(FlexibleSchema(
        F("topic", COMPACT_STRING), F("partition_indexes", CompactArrayOf(INT32)),
    ))),
)  # fmt: skip
DESCRIBE_PRODUCERS_RESPONSE_V0 = FlexibleSchema(
    THROTTLE,
    F("topics", CompactArrayOf(FlexibleSchema(
        F("topic", COMPACT_STRING),
        F("partitions", CompactArrayOf(FlexibleSchema(
            F("partition_index", INT32),
            ERROR,
            F("error_message", COMPACT_NULLABLE_STRING, "Details of the error, or null."),
            F("active_producers", CompactArrayOf(FlexibleSchema(
                F("producer_id", INT64),
                F("producer_epoch", INT32),
                F("last_sequence", INT32, "-1: none."),
                F("last_timestamp", INT64, "-1: none."),
                F("coordinator_epoch", INT32, "Of the coordinator that wrote its last marker; -1: none."),
                F("current_txn_start_offset", INT64, "Where its open transaction began; -1: none open."),
            ))),
        ))),
    ))),
)  # fmt: skip

# --- Transactions (24-28): Kafka 0.11, KIP-98 ------------------------------------------------------------------
_TXN_HEAD = (
    F("transactional_id", STRING, "The producer's transactional.id."),
    F("producer_id", INT64, "The producer id InitProducerId gave this transactional id."),
    F("producer_epoch", INT16, "Its epoch; an older one is fenced (PRODUCER_FENCED)."),
)
_TOPIC_PARTITIONS = S(F("topic", STRING), F("partitions", A(INT32)))
_PARTITION_ERRORS = S(F("topic", STRING), F("partition_errors", A(S(F("partition", INT32), ERROR))))
ADD_PARTITIONS_TO_TXN_REQUEST_V0 = S(*_TXN_HEAD, F("topics", A(_TOPIC_PARTITIONS), "Partitions to add."))
ADD_PARTITIONS_TO_TXN_RESPONSE_V0 = S(THROTTLE, F("errors", A(_PARTITION_ERRORS)))
# v2 (Kafka 2.7) only allows PRODUCER_FENCED in the answer; v3 (2.8) is v0's body, flexible. v4
# is for brokers: a partition leader batches the transactions it needs verified, and
# ``verify_only`` asks whether the partitions are in the transaction without adding them.
_FLEXIBLE_TXN_HEAD = (
    F("transactional_id", COMPACT_STRING, "The producer's transactional.id."),
    *_TXN_HEAD[1:],
)
_FLEXIBLE_TOPIC_PARTITIONS = FlexibleSchema(
    F("topic", COMPACT_STRING), F("partitions", CompactArrayOf(INT32))
)
ADD_PARTITIONS_TO_TXN_REQUEST_V3 = FlexibleSchema(
    *_FLEXIBLE_TXN_HEAD, F("topics", CompactArrayOf(_FLEXIBLE_TOPIC_PARTITIONS), "Partitions to add.")
)
ADD_PARTITIONS_TO_TXN_RESPONSE_V3 = FlexibleSchema(
    THROTTLE,
    F("errors", CompactArrayOf(FlexibleSchema(
        F("topic", COMPACT_STRING),
        F("partition_errors", CompactArrayOf(FlexibleSchema(F("partition", INT32), ERROR))),
    ))),
)  # fmt: skip
ADD_PARTITIONS_TO_TXN_REQUEST_V4 = FlexibleSchema(
    F("transactions", CompactArrayOf(FlexibleSchema(
        *_FLEXIBLE_TXN_HEAD,
        F("verify_only", BOOLEAN, "Only check that the partitions are in the transaction; add none."),
        F("topics", CompactArrayOf(_FLEXIBLE_TOPIC_PARTITIONS), "The partitions to add or check."),
    )), "The transactions, one entry per transactional id."),
)  # fmt: skip
ADD_PARTITIONS_TO_TXN_RESPONSE_V4 = FlexibleSchema(
    THROTTLE,
    F("error_code", INT16, "A top-level error (the whole request refused), or 0."),
    F("results_by_transaction", CompactArrayOf(FlexibleSchema(
        F("transactional_id", COMPACT_STRING),
        F("topic_results", CompactArrayOf(FlexibleSchema(
            F("topic", COMPACT_STRING),
            F("partition_errors", CompactArrayOf(FlexibleSchema(F("partition", INT32), ERROR))),
        ))),
    ))),
)  # fmt: skip
ADD_OFFSETS_TO_TXN_REQUEST_V0 = S(
    *_TXN_HEAD, F("consumer_group_id", STRING, "The group whose offsets the transaction will commit.")
)
ADD_OFFSETS_TO_TXN_RESPONSE_V0 = S(THROTTLE, ERROR)
END_TXN_REQUEST_V0 = S(*_TXN_HEAD, F("transaction_result", BOOLEAN, "false: abort; true: commit."))
END_TXN_RESPONSE_V0 = S(THROTTLE, ERROR)
# v2 (Kafka 2.7) only lets the answer be PRODUCER_FENCED, v3 (2.8) is flexible, v4 (3.6) only lets it be
# TRANSACTION_ABORTABLE. v5 (4.0, KIP-890 part 2) says the producer bumps its epoch at every
# transaction's end: the answer carries the producer id and epoch the next transaction uses.
END_TXN_REQUEST_V3 = FlexibleSchema(
    *_FLEXIBLE_TXN_HEAD, F("transaction_result", BOOLEAN, "false: abort; true: commit.")
)
END_TXN_RESPONSE_V3 = FlexibleSchema(THROTTLE, ERROR)
END_TXN_RESPONSE_V5 = FlexibleSchema(
    THROTTLE,
    ERROR,
    F("producer_id", INT64, "The producer id the next transaction uses, or -1 on an error.", -1),
    F("producer_epoch", INT16, "Its epoch, one more than the request's (0 with a new producer id).", -1),
)
_TXN_MARKER_ENTRY = S(
    F("producer_id", INT64), F("producer_epoch", INT16),
    F("transaction_result", BOOLEAN, "false: an abort marker; true: a commit marker."),
    F("topics", A(_TOPIC_PARTITIONS), "The partitions to write the marker to."),
    F("coordinator_epoch", INT32, "The epoch of the coordinator's __transaction_state partition."),
)  # fmt: skip
WRITE_TXN_MARKERS_REQUEST_V0 = S(F("transaction_markers", A(_TXN_MARKER_ENTRY)))
_PARTITION_ERROR = S(F("partition", INT32), ERROR)
WRITE_TXN_MARKERS_RESPONSE_V0 = S(
    F("transaction_markers", A(S(
        F("producer_id", INT64),
        F("topics", A(S(F("topic", STRING), F("partitions", A(_PARTITION_ERROR))))),
    ))),
)  # fmt: skip
_TXN_OFFSET = S(F("partition", INT32), F("offset", INT64), F("metadata", NULLABLE_STRING))
TXN_OFFSET_COMMIT_REQUEST_V0 = S(
    F("transactional_id", STRING), F("consumer_group_id", STRING),
    F("producer_id", INT64), F("producer_epoch", INT16),
    F("topics", A(S(F("topic", STRING), F("partitions", A(_TXN_OFFSET))))),
)  # fmt: skip
TXN_OFFSET_COMMIT_RESPONSE_V0 = S(
    THROTTLE, F("topics", A(S(F("topic", STRING), F("partitions", A(_PARTITION_ERROR)))))
)

# --- DescribeConfigs (32), AlterConfigs (33): Kafka 0.11, KIP-133; DescribeConfigs v1 is Kafka 1.1's (KIP-226) ---
_DESCRIBE_CONFIGS_RESOURCE = S(
    F("resource_type", INT8, "2 a topic, 4 a broker (ConfigResource.Type)."),
    F("resource_name", STRING),
    F("config_names", A(STRING, nullable=True), "null: every config"),
)
DESCRIBE_CONFIGS_REQUEST_V0 = S(F("resources", A(_DESCRIBE_CONFIGS_RESOURCE)))
DESCRIBE_CONFIGS_REQUEST_V1 = S(F("resources", A(_DESCRIBE_CONFIGS_RESOURCE)), F("include_synonyms", BOOLEAN))
_CONFIG_ENTRY_V0 = S(
    F("config_name", STRING), F("config_value", NULLABLE_STRING), F("read_only", BOOLEAN),
    F("is_default", BOOLEAN), F("is_sensitive", BOOLEAN),
)  # fmt: skip
_CONFIG_SYNONYM = S(F("config_name", STRING), F("config_value", NULLABLE_STRING), F("config_source", INT8))
_CONFIG_ENTRY_V1 = S(
    F("config_name", STRING), F("config_value", NULLABLE_STRING), F("read_only", BOOLEAN),
    F("config_source", INT8, "1 a topic override, 4 the broker's file, 5 the default (DescribeConfigs v1)."),
    F("is_sensitive", BOOLEAN), F("config_synonyms", A(_CONFIG_SYNONYM)),
)  # fmt: skip


def _describe_configs_response(entry: Schema) -> Schema:
    resource = S(
        ERROR, F("error_message", NULLABLE_STRING), F("resource_type", INT8), F("resource_name", STRING),
        F("config_entries", A(entry)),
    )  # fmt: skip
    return S(THROTTLE, F("resources", A(resource)))


DESCRIBE_CONFIGS_RESPONSE_V0 = _describe_configs_response(_CONFIG_ENTRY_V0)
DESCRIBE_CONFIGS_RESPONSE_V1 = _describe_configs_response(_CONFIG_ENTRY_V1)
ALTER_CONFIGS_REQUEST_V0 = S(
    F("resources", A(S(
        F("resource_type", INT8), F("resource_name", STRING),
        F("config_entries", A(S(F("config_name", STRING), F("config_value", NULLABLE_STRING)))),
    ))),
    F("validate_only", BOOLEAN),
)  # fmt: skip
ALTER_CONFIGS_RESPONSE_V0 = S(
    THROTTLE,
    F("resources", A(S(
        ERROR, F("error_message", NULLABLE_STRING), F("resource_type", INT8), F("resource_name", STRING),
    ))),
)  # fmt: skip

# --- CreatePartitions (37): Kafka 1.0, KIP-195 -----------------------------------------------------------------
CREATE_PARTITIONS_REQUEST_V0 = S(
    F("topic_partitions", A(S(
        F("topic", STRING),
        F("new_partitions", S(
            F("count", INT32, "The topic's partition count after the request."),
            F("assignment", A(A(INT32), nullable=True), "Each new partition's replicas; null: the broker's choice."),
        )),
    ))),
    F("timeout", INT32), F("validate_only", BOOLEAN),
)  # fmt: skip
CREATE_PARTITIONS_RESPONSE_V0 = S(
    THROTTLE, F("topic_errors", A(S(F("topic", STRING), ERROR, F("error_message", NULLABLE_STRING))))
)

# --- DescribeAcls (29), CreateAcls (30), DeleteAcls (31): Kafka 0.11, KIP-140 ----------------------------
# The enums travel as their codes (common/security/auth/acl.py): resource type 2 Topic, 3 Group,
# 4 Cluster, 5 TransactionalId; operation 2 All, 3 Read ... 12 IdempotentWrite; permission 2 Deny,
# 3 Allow; 1 is ANY in a filter. A null string in a filter matches any value.
_ACL_FILTER = S(
    F("resource_type", INT8, "The resource type to match (1: any)."),
    F("resource_name", NULLABLE_STRING, "The resource name to match (null: any)."),
    F("principal", NULLABLE_STRING, "The principal to match, as User:alice (null: any)."),
    F("host", NULLABLE_STRING, "The host to match (null: any)."),
    F("operation", INT8, "The operation to match (1: any)."),
    F("permission_type", INT8, "The permission type to match (1: any)."),
)
_ACL_BINDING = S(
    F("resource_type", INT8, "The resource type."),
    F("resource_name", STRING, "The resource name (* for every resource of the type)."),
    F("principal", STRING, "The principal, as User:alice (User:* for every one)."),
    F("host", STRING, "The client host (* for any)."),
    F("operation", INT8, "The operation."),
    F("permission_type", INT8, "Allow (3) or Deny (2)."),
)
_ACL_ERROR = (ERROR, F("error_message", NULLABLE_STRING))
DESCRIBE_ACLS_REQUEST_V0 = _ACL_FILTER
DESCRIBE_ACLS_RESPONSE_V0 = S(
    THROTTLE, *_ACL_ERROR,
    F("resources", A(S(
        F("resource_type", INT8), F("resource_name", STRING),
        F("acls", A(S(*_ACL_BINDING.fields[2:]))),
    ))),
)  # fmt: skip
CREATE_ACLS_REQUEST_V0 = S(F("creations", A(_ACL_BINDING)))
CREATE_ACLS_RESPONSE_V0 = S(THROTTLE, F("creation_responses", A(S(*_ACL_ERROR))))
DELETE_ACLS_REQUEST_V0 = S(F("filters", A(_ACL_FILTER)))
DELETE_ACLS_RESPONSE_V0 = S(
    THROTTLE,
    F("filter_responses", A(S(*_ACL_ERROR, F("matching_acls", A(S(*_ACL_ERROR, *_ACL_BINDING.fields)))))),
)

# api key -> schemas by version (None for a version kafka_lite does not speak).
# --8<-- [start:tables]
REQUESTS: dict[int, list[Schema | None]] = {
    0: [PRODUCE_REQUEST_V0, PRODUCE_REQUEST_V0, PRODUCE_REQUEST_V0, PRODUCE_REQUEST_V3],
    1: [
        FETCH_REQUEST_V0,
        FETCH_REQUEST_V0,
        FETCH_REQUEST_V0,
        FETCH_REQUEST_V3,
        FETCH_REQUEST_V4,
        FETCH_REQUEST_V5,
    ],
    2: [LIST_OFFSETS_REQUEST_V0, LIST_OFFSETS_REQUEST_V1, LIST_OFFSETS_REQUEST_V2],
    3: [METADATA_REQUEST_V0] + [METADATA_REQUEST_V1] * 3 + [METADATA_REQUEST_V4],
    4: [LEADER_AND_ISR_REQUEST_V0],
    5: [STOP_REPLICA_REQUEST_V0],
    6: [
        UPDATE_METADATA_REQUEST_V0,
        UPDATE_METADATA_REQUEST_V1,
        UPDATE_METADATA_REQUEST_V2,
        UPDATE_METADATA_REQUEST_V3,
    ],
    7: [CONTROLLED_SHUTDOWN_REQUEST_V0, CONTROLLED_SHUTDOWN_REQUEST_V1],
    8: [
        OFFSET_COMMIT_REQUEST_V0,
        OFFSET_COMMIT_REQUEST_V1,
        OFFSET_COMMIT_REQUEST_V2,
        OFFSET_COMMIT_REQUEST_V2,
    ],
    9: [OFFSET_FETCH_REQUEST_V0, OFFSET_FETCH_REQUEST_V0, OFFSET_FETCH_REQUEST_V2, OFFSET_FETCH_REQUEST_V2],
    10: [FIND_COORDINATOR_REQUEST_V0, FIND_COORDINATOR_REQUEST_V1],
    11: [JOIN_GROUP_REQUEST_V0, JOIN_GROUP_REQUEST_V1, JOIN_GROUP_REQUEST_V1],
    12: [HEARTBEAT_REQUEST_V0, HEARTBEAT_REQUEST_V0],
    13: [LEAVE_GROUP_REQUEST_V0, LEAVE_GROUP_REQUEST_V0],
    14: [SYNC_GROUP_REQUEST_V0, SYNC_GROUP_REQUEST_V0],
    15: [DESCRIBE_GROUPS_REQUEST_V0, DESCRIBE_GROUPS_REQUEST_V0],
    16: [LIST_GROUPS_REQUEST_V0, LIST_GROUPS_REQUEST_V0],
    17: [SASL_HANDSHAKE_REQUEST_V0] * 2,
    18: [API_VERSIONS_REQUEST_V0] * 3,
    19: [CREATE_TOPICS_REQUEST_V0, CREATE_TOPICS_REQUEST_V1, CREATE_TOPICS_REQUEST_V1],
    20: [DELETE_TOPICS_REQUEST_V0, DELETE_TOPICS_REQUEST_V0],
    21: [DELETE_RECORDS_REQUEST_V0],
    22: [INIT_PRODUCER_ID_REQUEST_V0, INIT_PRODUCER_ID_REQUEST_V0],
    23: [OFFSETS_FOR_LEADER_EPOCH_REQUEST_V0],
    24: [ADD_PARTITIONS_TO_TXN_REQUEST_V0] * 3  # v1 (Kafka 2.0) changed only the throttling rule
    + [ADD_PARTITIONS_TO_TXN_REQUEST_V3, ADD_PARTITIONS_TO_TXN_REQUEST_V4],
    25: [ADD_OFFSETS_TO_TXN_REQUEST_V0] * 2,
    26: [END_TXN_REQUEST_V0] * 3 + [END_TXN_REQUEST_V3] * 3,
    27: [WRITE_TXN_MARKERS_REQUEST_V0],
    28: [TXN_OFFSET_COMMIT_REQUEST_V0] * 2,
    29: [DESCRIBE_ACLS_REQUEST_V0],
    30: [CREATE_ACLS_REQUEST_V0],
    31: [DELETE_ACLS_REQUEST_V0],
    32: [DESCRIBE_CONFIGS_REQUEST_V0, DESCRIBE_CONFIGS_REQUEST_V1],
    33: [ALTER_CONFIGS_REQUEST_V0],
    36: [SASL_AUTHENTICATE_REQUEST_V0],
    37: [CREATE_PARTITIONS_REQUEST_V0, CREATE_PARTITIONS_REQUEST_V0],
    61: [DESCRIBE_PRODUCERS_REQUEST_V0],
}
RESPONSES: dict[int, list[Schema | None]] = {
    0: [PRODUCE_RESPONSE_V0, PRODUCE_RESPONSE_V1, PRODUCE_RESPONSE_V2, PRODUCE_RESPONSE_V2],
    1: [
        FETCH_RESPONSE_V0,
        FETCH_RESPONSE_V1,
        FETCH_RESPONSE_V1,
        FETCH_RESPONSE_V1,
        FETCH_RESPONSE_V4,
        FETCH_RESPONSE_V5,
    ],
    2: [LIST_OFFSETS_RESPONSE_V0, LIST_OFFSETS_RESPONSE_V1, LIST_OFFSETS_RESPONSE_V2],
    3: [
        METADATA_RESPONSE_V0,
        METADATA_RESPONSE_V1,
        METADATA_RESPONSE_V2,
        METADATA_RESPONSE_V3,
        METADATA_RESPONSE_V3,
    ],
    4: [LEADER_AND_ISR_RESPONSE_V0],
    5: [STOP_REPLICA_RESPONSE_V0],
    6: [UPDATE_METADATA_RESPONSE_V0] * 4,
    7: [CONTROLLED_SHUTDOWN_RESPONSE_V0, CONTROLLED_SHUTDOWN_RESPONSE_V1],
    8: [OFFSET_COMMIT_RESPONSE_V0] * 3 + [OFFSET_COMMIT_RESPONSE_V3],
    9: [
        OFFSET_FETCH_RESPONSE_V0,
        OFFSET_FETCH_RESPONSE_V0,
        OFFSET_FETCH_RESPONSE_V2,
        OFFSET_FETCH_RESPONSE_V3,
    ],
    10: [FIND_COORDINATOR_RESPONSE_V0, FIND_COORDINATOR_RESPONSE_V1],
    11: [JOIN_GROUP_RESPONSE_V0, JOIN_GROUP_RESPONSE_V0, JOIN_GROUP_RESPONSE_V2],
    12: [HEARTBEAT_RESPONSE_V0, HEARTBEAT_RESPONSE_V1],
    13: [HEARTBEAT_RESPONSE_V0, HEARTBEAT_RESPONSE_V1],  # LeaveGroup answers just an error code, as Heartbeat
    14: [SYNC_GROUP_RESPONSE_V0, SYNC_GROUP_RESPONSE_V1],
    15: [DESCRIBE_GROUPS_RESPONSE_V0, DESCRIBE_GROUPS_RESPONSE_V1],
    16: [LIST_GROUPS_RESPONSE_V0, LIST_GROUPS_RESPONSE_V1],
    17: [SASL_HANDSHAKE_RESPONSE_V0] * 2,
    18: [API_VERSIONS_RESPONSE_V0, API_VERSIONS_RESPONSE_V1, API_VERSIONS_RESPONSE_V1],
    19: [CREATE_TOPICS_RESPONSE_V0, CREATE_TOPICS_RESPONSE_V1, CREATE_TOPICS_RESPONSE_V2],
    20: [DELETE_TOPICS_RESPONSE_V0, DELETE_TOPICS_RESPONSE_V1],
    21: [DELETE_RECORDS_RESPONSE_V0],
    22: [INIT_PRODUCER_ID_RESPONSE_V0, INIT_PRODUCER_ID_RESPONSE_V0],
    23: [OFFSETS_FOR_LEADER_EPOCH_RESPONSE_V0],
    24: [ADD_PARTITIONS_TO_TXN_RESPONSE_V0] * 3
    + [ADD_PARTITIONS_TO_TXN_RESPONSE_V3, ADD_PARTITIONS_TO_TXN_RESPONSE_V4],
    25: [ADD_OFFSETS_TO_TXN_RESPONSE_V0] * 2,
    26: [END_TXN_RESPONSE_V0] * 3 + [END_TXN_RESPONSE_V3] * 2 + [END_TXN_RESPONSE_V5],
    27: [WRITE_TXN_MARKERS_RESPONSE_V0],
    28: [TXN_OFFSET_COMMIT_RESPONSE_V0] * 2,
    29: [DESCRIBE_ACLS_RESPONSE_V0],
    30: [CREATE_ACLS_RESPONSE_V0],
    31: [DELETE_ACLS_RESPONSE_V0],
    32: [DESCRIBE_CONFIGS_RESPONSE_V0, DESCRIBE_CONFIGS_RESPONSE_V1],
    33: [ALTER_CONFIGS_RESPONSE_V0],
    36: [SASL_AUTHENTICATE_RESPONSE_V0],
    37: [CREATE_PARTITIONS_RESPONSE_V0, CREATE_PARTITIONS_RESPONSE_V0],
    61: [DESCRIBE_PRODUCERS_RESPONSE_V0],
}
# --8<-- [end:tables]
