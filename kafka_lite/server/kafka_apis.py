"""The request handlers: one method per API, turning a parsed request into a response.

Mirrors: kafka.server.KafkaApis (core/src/main/scala/kafka/server/KafkaApis.scala, Kafka 0.10.1, with
         0.11's InitProducerId, the transaction APIs (AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
         WriteTxnMarkers, TxnOffsetCommit), OffsetsForLeaderEpoch, FindCoordinator v1, record-batch v2
         Produce/Fetch, DeleteRecords, DescribeConfigs and AlterConfigs, the authorizer's checks and the
         ACL APIs, and 1.0's CreatePartitions)
Book:    chapter 2, 2.3.5 (the server's entry point: ``KafkaApis.handle`` switches on the api key); 5.2.1 (the group APIs
         handed to the coordinator); 6.2 (produce and fetch); 7.2-7.3 (LeaderAndIsr,
         UpdateMetadata, StopReplica from the controller), 7.2.3 (a LeaderAndIsr moves the
         groups of a ``__consumer_offsets`` partition to its new leader's coordinator), 7.4
         (ControlledShutdown, answered by the controller's broker); 10.1 (Produce and Fetch
         responses held back by the client quotas), 10.3 (the transaction APIs)
Differs: WriteTxnMarkers answers only once the group coordinator has taken a committed
         transaction's offsets (Kafka 0.11 answers first, so a consumer could fetch the group's
         offsets from before a transaction its coordinator already calls complete); only Produce
         and Fetch wait out the request quota; a follower's fetch records in the leader's
         replication quota the records of its throttled partitions, not their share of the
         response's framing. OffsetCommit v0 and OffsetFetch v0 go to the group
         coordinator like the later versions (Kafka 0.10.1 keeps v0's offsets in ZooKeeper). A
         StopReplica of a ``__consumer_offsets`` partition unloads its groups whether or not it
         deletes the partition (Kafka only when it deletes), and a ``__transaction_state`` partition's
         transactions likewise (Kafka 0.11 leaves them to the next LeaderAndIsr). Client requests that arrive before the
         controller's first UpdateMetadata wait for it (``server/delayed_client_request.py`` says
         why).

``KafkaApis`` is given what it uses, as Kafka's constructor is: the request channel, the replica
manager, the admin manager, the group and transaction coordinators, the controller, the metadata cache, the producer
id manager, the quota managers, the config, the cluster id and the time. It owns no state of its own
beyond the purgatory of early requests. A KRaft broker (chapter 12) is also given a
``ForwardingManager``: its CreateTopics, DeleteTopics, CreatePartitions and AlterConfigs go to the
active controller as they came (``forward_to_controller``), and a topic is auto-created by a
CreateTopics sent the same way; a ZooKeeper broker has none and decides them as above.

The group APIs (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
OffsetFetch, DescribeGroups, ListGroups) are translated here and decided by the ``GroupCoordinator``.
Each hands the coordinator a callback that writes the response, as Produce hands the replica manager
one: a JoinGroup's is called when the group's rebalance completes (from the delayed join), a
SyncGroup's when the leader's assignment is stored, a commit's when ``__consumer_offsets`` has the
offsets, so the answer may come from another thread long after the handler returned.
FindCoordinator answers the leader of the group's ``__consumer_offsets`` partition, creating the
topic the first time a group is looked up (Kafka's ``getOrCreateGroupMetadataTopic``); and a
LeaderAndIsr that moves leadership of one of its partitions tells the coordinator to load or unload
the partition's groups (``on_leadership_change``).

Every handler first asks the authorizer, if the broker has one (``authorizer.class.name``), whether the
request's session may do what it asks, exactly where Kafka 0.11's handlers call ``authorize``:
``security/auth/request_acls.py`` lists, API by API, the operation, the resource and what a refused
caller gets back. With no authorizer every check passes. DescribeAcls, CreateAcls and DeleteAcls
(Kafka 0.11, KIP-140) read and change the authorizer's ACLs.

The transaction APIs (InitProducerId with a transactional id, FindCoordinator of type 1,
AddPartitionsToTxn, AddOffsetsToTxn, EndTxn) are decided by the ``TransactionCoordinator`` the same
way, the leader of the id's ``__transaction_state`` partition answering; TxnOffsetCommit goes to the
group coordinator, which keeps the offsets pending until the transaction's marker.

Produce and Fetch at old versions speak message sets v0/v1 (the book's format). A Produce reaches
the log as sent, and the log converts it to its topic's ``message.format.version`` (Kafka 0.11's
LogValidator); a Fetch v0-3 gets every batch its version cannot read down-converted (v0-1 read magic
0, v2-3 magic 1). Fetch v4+ sends records straight from the segment file: with ``fetch.sendfile.enable`` as a
``FileRegion`` that the processor hands to ``os.sendfile``, otherwise (the default) read with one
``pread`` and sent from memory; the benchmark page compares the two.

This module is long because it is Kafka's one switch over the APIs: one handler per API, each
short, in the order of Kafka's KafkaApis.scala.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from kafka_lite.common.errors import ApiException, Errors, KafkaException
from kafka_lite.common.protocol.api_keys import ApiKeys, api_versions
from kafka_lite.common.protocol.fetch_request import (
    CONSUMER_REPLICA_ID,
    DEBUGGING_CONSUMER_ID,
    READ_COMMITTED,
    READ_UNCOMMITTED,
)
from kafka_lite.common.protocol.messages import API_VERSIONS_RESPONSE_V0
from kafka_lite.common.protocol.raft_messages import RaftApiKeys
from kafka_lite.common.protocol.requests import RESPONSE_HEADERS, client_response_header_version
from kafka_lite.common.protocol.types import Schema
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.constants import MAGIC_OFFSET, MAGIC_VALUE_V2
from kafka_lite.common.record.convert import down_convert
from kafka_lite.common.record.end_transaction_marker import (
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker_batch,
)
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.common.security.auth.acl import (
    CLUSTER_RESOURCE,
    AclBinding,
    AclBindingFilter,
    Operation,
    Resource,
    ResourceType,
    binding_to_wire,
)
from kafka_lite.common.time import Time
from kafka_lite.common.topic import is_internal, validate_topic_name
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.common.utils import INT32_MAX, LONG_MAX
from kafka_lite.controller.kafka_controller import KafkaController
from kafka_lite.coordinator.group_coordinator import GroupCoordinator, JoinGroupResult
from kafka_lite.coordinator.group_metadata_manager import GROUP_METADATA_TOPIC_NAME, OffsetMetadataAndError
from kafka_lite.coordinator.offset_and_metadata import DEFAULT_TIMESTAMP, NO_METADATA, OffsetAndMetadata
from kafka_lite.coordinator.transaction.transaction_coordinator import (
    InitProducerIdResult,
    TransactionCoordinator,
)
from kafka_lite.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC_NAME
from kafka_lite.coordinator.transaction.transaction_metadata import TV_0, TV_2
from kafka_lite.log.log import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from kafka_lite.network.request_channel import Request, RequestChannel, Response, ResponseAction, Session
from kafka_lite.network.transfer import FileRegion, PieceWriter
from kafka_lite.security.auth.authorizer import Authorizer
from kafka_lite.server.admin_manager import (
    AdminManager,
    ConfigEntry,
    DescribeConfigsResult,
    NewPartitionsDetails,
    TopicDetails,
)
from kafka_lite.server.admin_manager import ResourceType as ConfigResourceType
from kafka_lite.server.client_quota_manager import nanos_to_percentage
from kafka_lite.server.delayed_client_request import FIRST_METADATA, DelayedClientRequest
from kafka_lite.server.delayed_create_topics import CreateTopicsResults
from kafka_lite.server.delayed_delete_records import INVALID_LOW_WATERMARK, DeleteRecordsPartitionResult
from kafka_lite.server.delayed_delete_topics import DeleteTopicsResults
from kafka_lite.server.forwarding_manager import FORWARDED_APIS, ForwardingManager
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.metadata_cache import MetadataCache
from kafka_lite.server.partition import Partition
from kafka_lite.server.producer_id_manager import ProducerIdManager
from kafka_lite.server.quota_factory import QuotaManagers
from kafka_lite.server.replica_manager import (
    FetchMetadata,
    FetchPartitionRequest,
    LogReadResult,
    PartitionResponse,
    ReplicaManager,
)
from kafka_lite.server.replication_quota_manager import (
    UNBOUNDED_QUOTA,
    ReplicaQuota,
    ReplicationQuotaManager,
)
from kafka_lite.utils.delayed_operation import DelayedOperationPurgatory

log = logging.getLogger(__name__)

# Kafka's AdminUtils.AdminClientId: the one client allowed to produce to internal topics (__...)
ADMIN_CLIENT_ID = "__admin_client"

# FindCoordinator v1's coordinator types (Kafka 0.11's FindCoordinatorRequest.CoordinatorType)
COORDINATOR_TYPE_GROUP = 0
COORDINATOR_TYPE_TRANSACTION = 1
# Kafka's Node.noNode(): what FindCoordinator answers with an error
NO_NODE = {"node_id": -1, "host": "", "port": -1}
# OffsetCommit's defaults for what older versions do not carry (Kafka's OffsetCommitRequest)
DEFAULT_GENERATION_ID = -1
DEFAULT_MEMBER_ID = ""
DEFAULT_RETENTION_TIME = -1
# How long a marker's acks=-1 append may wait for the ISR (Kafka uses its request.timeout.ms, 30 s)
TXN_MARKER_APPEND_TIMEOUT_MS = 30000


class KafkaApis:
    # The APIs this broker has handlers for: exactly what ApiVersions advertises.
    HANDLED = (
        ApiKeys.PRODUCE,
        ApiKeys.FETCH,
        ApiKeys.WRITE_TXN_MARKERS,
        ApiKeys.LIST_OFFSETS,
        ApiKeys.METADATA,
        ApiKeys.LEADER_AND_ISR,
        ApiKeys.STOP_REPLICA,
        ApiKeys.UPDATE_METADATA,
        ApiKeys.CONTROLLED_SHUTDOWN,
        ApiKeys.OFFSET_COMMIT,
        ApiKeys.OFFSET_FETCH,
        ApiKeys.FIND_COORDINATOR,
        ApiKeys.JOIN_GROUP,
        ApiKeys.HEARTBEAT,
        ApiKeys.LEAVE_GROUP,
        ApiKeys.SYNC_GROUP,
        ApiKeys.DESCRIBE_GROUPS,
        ApiKeys.LIST_GROUPS,
        ApiKeys.SASL_HANDSHAKE,
        ApiKeys.SASL_AUTHENTICATE,
        ApiKeys.API_VERSIONS,
        ApiKeys.CREATE_TOPICS,
        ApiKeys.DELETE_RECORDS,
        ApiKeys.DELETE_TOPICS,
        ApiKeys.INIT_PRODUCER_ID,
        ApiKeys.ADD_PARTITIONS_TO_TXN,
        ApiKeys.ADD_OFFSETS_TO_TXN,
        ApiKeys.END_TXN,
        ApiKeys.TXN_OFFSET_COMMIT,
        ApiKeys.OFFSETS_FOR_LEADER_EPOCH,
        ApiKeys.DESCRIBE_ACLS,
        ApiKeys.CREATE_ACLS,
        ApiKeys.DELETE_ACLS,
        ApiKeys.DESCRIBE_CONFIGS,
        ApiKeys.ALTER_CONFIGS,
        ApiKeys.CREATE_PARTITIONS,
        ApiKeys.DESCRIBE_PRODUCERS,
    )

    def __init__(
        self,
        request_channel: RequestChannel,
        replica_manager: ReplicaManager,
        admin_manager: AdminManager,
        coordinator: GroupCoordinator,
        txn_coordinator: TransactionCoordinator,
        controller: KafkaController,
        metadata_cache: MetadataCache,
        producer_id_manager: ProducerIdManager,
        quotas: QuotaManagers,
        config: KafkaConfig,
        cluster_id: str,
        time: Time,
        authorizer: Authorizer | None = None,
        forwarding_manager: ForwardingManager | None = None,
    ) -> None:
        self.request_channel = request_channel
        self.replica_manager = replica_manager
        self.admin_manager = admin_manager
        self.coordinator = coordinator
        self.txn_coordinator = txn_coordinator
        self.controller = controller
        self.metadata_cache = metadata_cache
        self.producer_id_manager = producer_id_manager
        self.quotas = quotas
        self.config = config
        self.cluster_id = cluster_id
        self.time = time
        self.authorizer = authorizer  # None: every request is allowed
        # A KRaft broker's (chapter 12): the admin requests go to the active controller through it,
        # and topics are auto-created by asking the controller. None on a ZooKeeper broker.
        self.forwarding_manager = forwarding_manager
        self.client_request_purgatory = DelayedOperationPurgatory("ClientRequest", time)
        self._handlers = {
            ApiKeys.PRODUCE: self.handle_produce_request,
            ApiKeys.FETCH: self.handle_fetch_request,
            ApiKeys.WRITE_TXN_MARKERS: self.handle_write_txn_markers_request,
            ApiKeys.LIST_OFFSETS: self.handle_list_offsets_request,
            ApiKeys.METADATA: self.handle_topic_metadata_request,
            ApiKeys.LEADER_AND_ISR: self.handle_leader_and_isr_request,
            ApiKeys.STOP_REPLICA: self.handle_stop_replica_request,
            ApiKeys.UPDATE_METADATA: self.handle_update_metadata_request,
            ApiKeys.CONTROLLED_SHUTDOWN: self.handle_controlled_shutdown_request,
            ApiKeys.OFFSET_COMMIT: self.handle_offset_commit_request,
            ApiKeys.OFFSET_FETCH: self.handle_offset_fetch_request,
            ApiKeys.FIND_COORDINATOR: self.handle_find_coordinator_request,
            ApiKeys.JOIN_GROUP: self.handle_join_group_request,
            ApiKeys.HEARTBEAT: self.handle_heartbeat_request,
            ApiKeys.LEAVE_GROUP: self.handle_leave_group_request,
            ApiKeys.SYNC_GROUP: self.handle_sync_group_request,
            ApiKeys.DESCRIBE_GROUPS: self.handle_describe_groups_request,
            ApiKeys.LIST_GROUPS: self.handle_list_groups_request,
            ApiKeys.SASL_HANDSHAKE: self.handle_sasl_handshake_request,
            ApiKeys.SASL_AUTHENTICATE: self.handle_sasl_handshake_request,
            ApiKeys.API_VERSIONS: self.handle_api_versions_request,
            ApiKeys.CREATE_TOPICS: self.handle_create_topics_request,
            ApiKeys.DELETE_RECORDS: self.handle_delete_records_request,
            ApiKeys.DESCRIBE_CONFIGS: self.handle_describe_configs_request,
            ApiKeys.ALTER_CONFIGS: self.handle_alter_configs_request,
            ApiKeys.CREATE_PARTITIONS: self.handle_create_partitions_request,
            ApiKeys.DESCRIBE_PRODUCERS: self.handle_describe_producers_request,
            ApiKeys.DELETE_TOPICS: self.handle_delete_topics_request,
            ApiKeys.INIT_PRODUCER_ID: self.handle_init_producer_id_request,
            ApiKeys.ADD_PARTITIONS_TO_TXN: self.handle_add_partitions_to_txn_request,
            ApiKeys.ADD_OFFSETS_TO_TXN: self.handle_add_offsets_to_txn_request,
            ApiKeys.END_TXN: self.handle_end_txn_request,
            ApiKeys.TXN_OFFSET_COMMIT: self.handle_txn_offset_commit_request,
            ApiKeys.OFFSETS_FOR_LEADER_EPOCH: self.handle_offsets_for_leader_epoch_request,
            ApiKeys.DESCRIBE_ACLS: self.handle_describe_acls_request,
            ApiKeys.CREATE_ACLS: self.handle_create_acls_request,
            ApiKeys.DELETE_ACLS: self.handle_delete_acls_request,
        }
        handled: tuple = self.HANDLED
        if forwarding_manager is not None:
            handled += self._forward_to_controller_in_kraft_mode()
        self._api_versions = api_versions(handled)
        self._api_versions_bodies: dict[int, bytes] = {}

    def _forward_to_controller_in_kraft_mode(self) -> tuple:
        """A KRaft broker's handlers, as Kafka 3.3's: the admin requests go to the controller
        (``maybeForwardToController``: a KRaft broker decides none of them itself), and so does
        DescribeQuorum (``forwardToControllerOrFail``: only the quorum's leader knows how far each
        voter has fetched, and a broker takes the request so that kafka-metadata-quorum.sh needs
        only a broker's address; a ZooKeeper broker's listener does not take it, see
        common/protocol/listener_type.py). Returns the APIs this adds to ApiVersions' list."""
        for api in FORWARDED_APIS:
            self._handlers[api] = self.forward_to_controller
        self._handlers[RaftApiKeys.DESCRIBE_QUORUM] = self.forward_to_controller
        return (RaftApiKeys.DESCRIBE_QUORUM,)

    # --8<-- [start:handle]
    def handle(self, request: Request) -> None:
        try:
            if request.api not in self._handlers:
                # Parsed fine but not an API this broker serves:
                # Kafka closes the connection for an API it does not know.
                log.warning(
                    "Closing connection %s: no handler for %s (not in ApiVersions)",
                    request.connection_id, request.api.api_name,
                )  # fmt: skip
                self.request_channel.close_connection(request)
            elif self._waits_for_first_metadata(request):
                delayed = DelayedClientRequest(
                    self.config["controller.socket.timeout.ms"],
                    request,
                    self.metadata_cache,
                    self._handle_request,
                )
                self.client_request_purgatory.try_complete_else_watch(delayed, [FIRST_METADATA])
            else:
                self._handle_request(request)
        finally:
            # The handler's own work is done; a response still to come is waiting in a purgatory
            # (the request's "remote" time). A response already sent has set this itself.
            if not request.api_local_complete_ns:
                request.api_local_complete_ns = self.time.nanoseconds()

    # --8<-- [start:forward_to_controller]
    def forward_to_controller(self, request: Request) -> None:
        """A KRaft broker's CreateTopics, DeleteTopics, CreatePartitions, AlterConfigs, CreateAcls,
        DeleteAcls or DescribeQuorum: sent to the active controller in an Envelope with the client's
        principal, and the controller's answer sent back to the client as this broker's (Kafka 3.3's ``maybeForwardToController`` and
        ``forwardToControllerOrFail``). If no controller answered within the channel's retry time
        the connection is closed, and the client retries on another."""
        assert self.forwarding_manager is not None

        def response_callback(body: dict | None) -> None:
            if body is None:
                self.request_channel.close_connection(request)
            else:
                self._send_response(request, body)

        self.forwarding_manager.forward_request(request, response_callback)

    # --8<-- [end:forward_to_controller]

    def _waits_for_first_metadata(self, request: Request) -> bool:
        """A client request before the controller's first UpdateMetadata (ApiVersions never waits)."""
        return (
            not self.metadata_cache.has_metadata()
            and not _inter_broker(request.api)
            and request.api is not ApiKeys.API_VERSIONS
        )

    def _handle_request(self, request: Request) -> None:
        start_ns = self.time.nanoseconds()
        try:
            self._handlers[request.api](request)
        except Exception as e:
            # A request that parsed but that a handler could not serve: one line, and the connection
            # closed (the client reconnects); the traceback only at debug level, for developers.
            log.warning(
                "Closing connection %s: error handling %s v%d: %r",
                request.connection_id, request.api.api_name, request.header.api_version, e,
            )  # fmt: skip
            log.debug("Traceback of the %s error", request.api.api_name, exc_info=True)
            self.request_channel.close_connection(request)
        finally:
            # KIP-124: this handler's time counts against the client id's request quota; the
            # brokers' own requests (and a follower's fetch) are exempt, as replication must not wait.
            thread_time = nanos_to_percentage(self.time.nanoseconds() - start_ns)
            if _inter_broker(request.api) or request.body.get("replica_id", -1) >= 0:
                self.quotas.request.record_exempt(thread_time)
            else:
                self.quotas.request.record_no_throttle(request.header.client_id or "", thread_time)

    # --8<-- [end:handle]

    def _send_response(self, request: Request, body: dict[str, Any], schema=None) -> None:
        """Encode ``body`` with the request's response schema (or ``schema``) behind the response
        header, and hand it to the request's processor."""
        out = PieceWriter()
        _response_header(request).write(out, {"correlation_id": request.header.correlation_id})
        (schema or request.api.response_schema(request.header.api_version)).write(out, body)
        self._send_pieces(request, out.finish())

    def _send_pieces(self, request: Request, pieces: list) -> None:
        """Hand an encoded response (its header first) to the request's processor."""
        now = self.time.nanoseconds()
        if not request.api_local_complete_ns:  # answered by the handler itself: no remote phase
            request.api_local_complete_ns = now
        request.api_remote_complete_ns = now
        self.request_channel.send_response(Response(request.processor, request, ResponseAction.SEND, pieces))

    # --8<-- [start:authorize]
    def _authorize(self, session: Session, operation: Operation, resource: Resource) -> bool:
        """May the request's sender do ``operation`` on ``resource``? Always, with no authorizer
        (Kafka's ``authorizer.forall(_.authorize(...))``). ``security/auth/request_acls.py`` lists
        every call below, API by API."""
        return self.authorizer is None or self.authorizer.authorize(session, operation, resource)

    def _authorize_topic(self, session: Session, operation: Operation, topic: str) -> bool:
        return self._authorize(session, operation, Resource(ResourceType.TOPIC, topic))

    def _authorize_group(self, session: Session, operation: Operation, group_id: str) -> bool:
        return self._authorize(session, operation, Resource(ResourceType.GROUP, group_id))

    def _authorize_transactional_id(self, session: Session, transactional_id: str) -> bool:
        """Write on the transactional id: every transaction API but FindCoordinator needs it."""
        return self._authorize(
            session, Operation.WRITE, Resource(ResourceType.TRANSACTIONAL_ID, transactional_id)
        )

    def _topic_refusal(self, session: Session, operation: Operation, topic: str) -> Errors | None:
        """Kafka's two checks before ``operation`` on a topic's partitions: a caller who may not even
        Describe the topic is told it does not exist, so that an ACL never confirms a topic's name;
        one who may Describe it but not ``operation`` is told so. None: allowed."""
        if not self._authorize_topic(session, Operation.DESCRIBE, topic):
            return Errors.UNKNOWN_TOPIC_OR_PARTITION
        if not self._authorize_topic(session, operation, topic):
            return Errors.TOPIC_AUTHORIZATION_FAILED
        return None

    # --8<-- [end:authorize]

    # -- SaslHandshake -------------------------------------------------------------------------------------

    def handle_sasl_handshake_request(self, request: Request) -> None:
        """A SaslHandshake or SaslAuthenticate that reaches the handlers came after authentication (or
        on a PLAINTEXT listener): ILLEGAL_SASL_STATE, as Kafka's ``handleSaslHandshakeRequest`` and
        ``handleSaslAuthenticateRequest`` answer. The exchange itself is the authenticator's
        (``network/sasl_server_authenticator.py``)."""
        body: dict[str, Any] = {"error_code": Errors.ILLEGAL_SASL_STATE.code, "enabled_mechanisms": []}
        if request.api is ApiKeys.SASL_AUTHENTICATE:
            body = {
                "error_code": Errors.ILLEGAL_SASL_STATE.code,
                "error_message": None,
                "sasl_auth_bytes": b"",
            }
        self._send_response(request, body)

    # -- ApiVersions ----------------------------------------------------------------------------------------

    def handle_api_versions_request(self, request: Request) -> None:
        if request.unsupported_version:
            # KIP-35: answer in the v0 layout with UNSUPPORTED_VERSION, so the client can retry lower. We
            # list every API's versions (0.10 to 2.3 sent an empty list, KIP-511's 2.4 only ApiVersions'
            # own range): kafka-python retries at our max, librdkafka at v0.
            body = {"error_code": Errors.UNSUPPORTED_VERSION.code, "api_versions": self._api_versions}
            self._send_response(request, body, API_VERSIONS_RESPONSE_V0)
            return
        out = PieceWriter()
        _response_header(request).write(out, {"correlation_id": request.header.correlation_id})
        self._send_pieces(request, [*out.finish(), self._api_versions_body(request.header.api_version)])

    def _api_versions_body(self, version: int) -> bytes:
        """ApiVersions' answer at ``version``, encoded the first time it is asked for and kept: what a
        broker handles is fixed when it starts, so the answer never changes (Kafka builds it once too,
        ``ApiVersionsResponse.API_VERSIONS_RESPONSE``). Every client asks on every connection."""
        body = self._api_versions_bodies.get(version)
        if body is None:
            out = PieceWriter()
            value = {"error_code": 0, "api_versions": self._api_versions, "throttle_time_ms": 0}
            ApiKeys.API_VERSIONS.response_schema(version).write(out, value)
            body = self._api_versions_bodies[version] = b"".join(out.finish())
        return body

    # -- Metadata ---------------------------------------------------------------------------------------------

    # --8<-- [start:metadata]
    def handle_topic_metadata_request(self, request: Request) -> None:
        version = request.header.api_version
        requested = request.body["topics"]
        all_topics = requested is None or (version == 0 and not requested)
        topics = self.metadata_cache.topics() if all_topics else list(dict.fromkeys(requested))
        allow_auto_create = request.body.get("allow_auto_topic_creation", True)
        # Describe on each topic; and Create on the cluster for a topic this request would create
        authorized = [t for t in topics if self._authorize_topic(request.session, Operation.DESCRIBE, t)]
        described = set(authorized)
        unauthorized_for_describe = [t for t in topics if t not in described]
        unauthorized_for_create: list[str] = []
        non_existing = [t for t in authorized if not self.metadata_cache.contains(t)]
        if (
            non_existing
            and allow_auto_create
            and self.config["auto.create.topics.enable"]
            and not self._authorize(request.session, Operation.CREATE, CLUSTER_RESOURCE)
        ):
            authorized = [t for t in authorized if t not in non_existing]
            unauthorized_for_create = non_existing
        # Answered as seen from the request's listener (Kafka 0.10.2, KIP-103): a client that came in
        # on SASL_PLAINTEXT is told the SASL_PLAINTEXT addresses, never the brokers' INTERNAL ones.
        listener = request.listener_name
        # v0 carries each replica as a broker, and a broker it cannot describe is left out
        # (Kafka's errorUnavailableEndpoints); v1+ name every replica by id.
        known = (
            self.metadata_cache.topic_metadata(authorized, listener, error_unavailable_endpoints=version == 0)
            if authorized
            else []
        )
        found = {t["topic"] for t in known}
        for topic in authorized:
            if topic not in found:
                known.append(self._unknown_topic_metadata(topic, allow_auto_create))
        for topic in unauthorized_for_create:
            known.append(_topic_error_metadata(topic, Errors.TOPIC_AUTHORIZATION_FAILED))
        if not all_topics:  # a topic the caller may not Describe: as if it did not exist
            for topic in unauthorized_for_describe:
                known.append(_topic_error_metadata(topic, Errors.UNKNOWN_TOPIC_OR_PARTITION))
        brokers = [
            {"node_id": b.id, "host": b.host, "port": b.port, "rack": b.rack}
            for b in self.metadata_cache.alive_endpoints(listener)
        ]
        self._send_response(
            request,
            {
                "throttle_time_ms": 0,
                "brokers": brokers,
                "cluster_id": self.cluster_id,
                "controller_id": self.metadata_cache.controller_id,
                "topic_metadata": known,
            },
        )

    def _unknown_topic_metadata(self, topic: str, allow_auto_create: bool) -> dict:
        # the internal topics are created whatever auto.create.topics.enable says
        if topic in (GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME):
            return self._create_internal_topic(topic)
        error = Errors.UNKNOWN_TOPIC_OR_PARTITION
        try:
            validate_topic_name(topic)
            if self.config["auto.create.topics.enable"] and allow_auto_create and self.forwarding_manager:
                self._auto_create_topic(
                    topic, self.config["num.partitions"], self.config["default.replication.factor"], {}
                )
                error = Errors.LEADER_NOT_AVAILABLE
            elif self.config["auto.create.topics.enable"] and allow_auto_create:
                self.admin_manager.create_topic(
                    topic, self.config["num.partitions"], self.config["default.replication.factor"]
                )
                error = Errors.LEADER_NOT_AVAILABLE  # created: the client asks again once it has leaders
        except ApiException as e:
            error = Errors.for_exception(e)
            if error is Errors.TOPIC_ALREADY_EXISTS:  # created by someone else meanwhile
                error = Errors.LEADER_NOT_AVAILABLE
        return {
            "topic_error_code": error.code,
            "topic": topic,
            "is_internal": False,
            "partition_metadata": [],
        }

    # --8<-- [end:metadata]

    # -- Produce -------------------------------------------------------------------------------------------------

    # --8<-- [start:produce]
    def handle_produce_request(self, request: Request) -> None:
        body, version = request.body, request.header.api_version
        acks = body["acks"]
        entries: dict[TopicPartition, MemoryRecords] = {}
        results: dict[TopicPartition, tuple[Errors, int, int]] = {}
        for topic_data in body["topic_data"]:
            for p in topic_data["data"]:
                tp = (topic_data["topic"], p["partition"])
                if acks not in (-1, 0, 1):
                    results[tp] = (Errors.INVALID_REQUIRED_ACKS, -1, -1)
                    continue
                try:
                    entries[tp] = self._produce_records(p["record_set"], version)
                except ApiException as e:
                    results[tp] = (Errors.for_exception(e), -1, -1)
        refused = self._produce_refusal(request, entries)
        if refused is not None:  # the producer may not write at all: every partition is refused
            tps = [(t["topic"], p["partition"]) for t in body["topic_data"] for p in t["data"]]
            self._send_produce_response(request, acks, dict.fromkeys(tps, (refused, -1, -1)))
            return
        for tp in list(entries):
            error = self._topic_refusal(request.session, Operation.WRITE, tp[0])
            if error is not None:
                results[tp] = (error, -1, -1)
                del entries[tp]

        def send_response_callback(responses: dict[TopicPartition, PartitionResponse]) -> None:
            for tp, r in responses.items():
                results[tp] = (r.error, r.base_offset, r.log_append_time)
            self._send_produce_response(request, acks, results)

        if not entries:  # nothing valid to append: answer with the errors
            send_response_callback({})
            return
        transactional_id = body.get("transactional_id")
        self.replica_manager.append_records(
            body["timeout"],
            acks,
            request.header.client_id == ADMIN_CLIENT_ID,
            entries,
            send_response_callback,
            transactional_id=transactional_id,
            transaction_state_partition=(
                self.txn_coordinator.partition_for(transactional_id) if transactional_id else None
            ),
        )

    def _send_produce_response(
        self,
        request: Request,
        acks: int,
        results: dict[TopicPartition, tuple[Errors, int, int]],
        throttle_time_ms: int | None = None,
    ) -> None:
        if throttle_time_ms is None:
            # First through the client id's quotas (book 10.1): the request's bytes count against its
            # produce quota, appended or not, as Kafka counts the whole request. Over it, the response
            # (even acks=0's unmuting) is held back; this method is called again when it is due.
            client_id = request.header.client_id or ""

            def after_bandwidth_quota(bandwidth_ms: int) -> None:
                if acks == 0:  # no response to hold for the request quota (Kafka exempts it)
                    self._send_produce_response(request, acks, results, bandwidth_ms)
                    return
                self.quotas.request.maybe_throttle(
                    client_id,
                    lambda request_ms: self._send_produce_response(
                        request, acks, results, bandwidth_ms + request_ms
                    ),
                )

            self.quotas.produce.record_and_maybe_throttle(client_id, request.size, after_bandwidth_quota)
            return
        if acks == 0:
            # No response at all. If something failed, closing the connection is the only signal the
            # producer gets (it then refreshes its metadata): Kafka does the same.
            if any(error is not Errors.NONE for error, _, _ in results.values()):
                log.info("Closing connection %s after a failed acks=0 produce", request.connection_id)
                self.request_channel.close_connection(request)
            else:
                self.request_channel.no_operation(request)
            return
        by_topic: dict[str, list] = {}
        for (topic, partition), (error, base_offset, append_time) in results.items():
            by_topic.setdefault(topic, []).append(
                {
                    "partition": partition,
                    "error_code": error.code,
                    "base_offset": base_offset,
                    "log_append_time": append_time,
                }
            )
        self._send_response(
            request,
            {
                "responses": [{"topic": t, "partition_responses": ps} for t, ps in by_topic.items()],
                "throttle_time_ms": throttle_time_ms,
            },
        )

    # --8<-- [end:produce]

    def _produce_refusal(
        self, request: Request, entries: dict[TopicPartition, MemoryRecords]
    ) -> Errors | None:
        """A transactional producer needs Write on its transactional id, an idempotent one (batches
        with a producer id) IdempotentWrite on the cluster; the error if it has not."""
        transactional_id = request.body.get("transactional_id")
        if transactional_id is not None:
            if not self._authorize_transactional_id(request.session, transactional_id):
                return Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        elif self.authorizer is not None and any(  # with no authorizer, no need to look at the batches
            batch.producer_id >= 0 for records in entries.values() for batch in records.batches()
        ):
            if not self._authorize(request.session, Operation.IDEMPOTENT_WRITE, CLUSTER_RESOURCE):
                return Errors.CLUSTER_AUTHORIZATION_FAILED
        return None

    @staticmethod
    def _produce_records(record_set, version: int) -> MemoryRecords:
        if record_set is None or len(record_set) == 0:
            raise Errors.CORRUPT_MESSAGE.exception("empty record set")
        if len(record_set) <= MAGIC_OFFSET:
            raise Errors.CORRUPT_MESSAGE.exception(f"record set of {len(record_set)} bytes is too short")
        magic = record_set[MAGIC_OFFSET]
        if version >= 3 and magic != MAGIC_VALUE_V2:
            # Produce v3 carries record batches v2 only (Kafka rejects older formats there)
            raise Errors.CORRUPT_MESSAGE.exception(f"Produce v{version} requires magic 2, got magic {magic}")
        # as sent: the log converts the records to its topic's message.format.version on append
        return MemoryRecords(record_set)

    # -- Fetch -------------------------------------------------------------------------------------------------

    # --8<-- [start:fetch]
    def handle_fetch_request(self, request: Request) -> None:
        body, version = request.body, request.header.api_version
        partitions = {}
        refused: dict[TopicPartition, LogReadResult] = {}  # Describe, then Read, on each topic
        for t in body["topics"]:
            for p in t["partitions"]:
                tp = (t["topic"], p["partition"])
                error = self._topic_refusal(request.session, Operation.READ, t["topic"])
                if error is not None:
                    refused[tp] = LogReadResult(error)
                else:
                    partitions[tp] = FetchPartitionRequest(
                        p["fetch_offset"], p["max_bytes"], p.get("log_start_offset", -1)
                    )
        # read_committed (1) from Fetch v4 on: Kafka 0.11's isolation level
        isolation_level = body["isolation_level"] if version >= 4 else READ_UNCOMMITTED
        fetch = FetchMetadata(
            min_bytes=body["min_bytes"],
            max_bytes=body.get("max_bytes", INT32_MAX) if version >= 3 else INT32_MAX,
            replica_id=body["replica_id"],
            partitions=partitions,
            max_wait_ms=body["max_wait_time"],
            isolation_level=isolation_level,
        )
        if not partitions and refused:
            self._send_fetch_response(request, fetch, refused)
            return
        self.replica_manager.fetch_messages(
            fetch,
            lambda results: self._send_fetch_response(request, fetch, {**results, **refused}),
            self.replication_quota(fetch),
        )

    def replication_quota(self, fetch: FetchMetadata) -> ReplicaQuota:
        """A follower's fetch obeys the leader side of the replication throttle; a consumer's none."""
        return self.quotas.leader if fetch.is_from_follower else UNBOUNDED_QUOTA

    def _send_fetch_response(
        self,
        request: Request,
        fetch: FetchMetadata,
        results: dict[TopicPartition, LogReadResult],
        throttle_time_ms: int | None = None,
    ) -> None:
        version = request.header.api_version
        if fetch.is_from_follower:
            # The read already kept within the quota; what it sends now counts against it.
            self.quotas.leader.record(self.size_of_throttled_partitions(results, self.quotas.leader))
            throttle_time_ms = 0  # a follower is never client-quota'd: replication must not wait
        if throttle_time_ms is None:
            # First through the client id's quotas (book 10.1): the records' bytes count against its
            # fetch quota (Kafka counts the response's size before any down-conversion). Over it, the
            # response is held back, then the request quota has its turn; then this method again.
            client_id = request.header.client_id or ""
            self.quotas.fetch.record_and_maybe_throttle(
                client_id,
                sum(r.size for r in results.values()),
                lambda bandwidth_ms: self.quotas.request.maybe_throttle(
                    client_id,
                    lambda request_ms: self._send_fetch_response(
                        request, fetch, results, bandwidth_ms + request_ms
                    ),
                ),
            )
            return
        by_topic: dict[str, list] = {}
        for (topic, partition), r in results.items():
            header = {
                "partition": partition,
                "error_code": r.error.code,
                "high_watermark": r.high_watermark,
                "last_stable_offset": r.last_stable_offset,  # -1 unless read_committed (Kafka 0.11)
                "log_start_offset": r.log_start_offset,
                "aborted_transactions": r.aborted_transactions,
            }
            by_topic.setdefault(topic, []).append(
                {"partition_header": header, "record_set": self._fetched_bytes(r.records, version)}
            )
        self._send_response(
            request,
            {
                "throttle_time_ms": throttle_time_ms,
                "responses": [{"topic": t, "partition_responses": ps} for t, ps in by_topic.items()],
            },
        )

    @staticmethod
    def size_of_throttled_partitions(
        results: dict[TopicPartition, LogReadResult], quota: ReplicationQuotaManager
    ) -> int:
        return sum(r.size for tp, r in results.items() if quota.is_throttled(tp))

    def _fetched_bytes(self, records, version: int):
        if records is None or records.size_in_bytes() == 0:
            return b""
        if version < 4:  # Fetch v0-3 clients read message sets v0 (Fetch v0-1) or v1 (v2-3)
            # Kafka 0.11 decides from the topic's format and misses the v2 batches a topic whose
            # format was lowered still holds; each batch is looked at here, so none is missed.
            data = records.read_bytes() if isinstance(records, FileRecords) else bytes(records.buffer())
            return down_convert(MemoryRecords(data), 0 if version < 2 else 1).buffer()
        if isinstance(records, FileRecords):
            region = FileRegion(records.fd, records.start, records.size_in_bytes(), owner=records)
            return region if self.config["fetch.sendfile.enable"] else region.read()
        return records.buffer()

    # --8<-- [end:fetch]

    # -- WriteTxnMarkers (Kafka 0.11, KIP-98) ----------------------------------------------------------------

    # --8<-- [start:write_txn_markers]
    def handle_write_txn_markers_request(self, request: Request) -> None:
        """The transaction coordinator asks this broker, leader of the partitions named, to end a
        transaction in each: one marker batch per (producer, partition), appended with acks=-1 as
        the broker's own record (a client may not write one). Per partition the answer is the
        append's: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_FOR_PARTITION, INVALID_PRODUCER_EPOCH, ...
        The response waits for every marker's append (each finishes on its own thread) and, for a
        ``__consumer_offsets`` partition, for the group coordinator to take the transaction's
        offsets or drop them."""
        markers = request.body["transaction_markers"]
        if not self._authorize(request.session, Operation.CLUSTER_ACTION, CLUSTER_RESOURCE):
            refused = [
                {
                    "producer_id": m["producer_id"],
                    "topics": _partition_errors_by_topic(
                        {
                            (t["topic"], p): Errors.CLUSTER_AUTHORIZATION_FAILED
                            for t in m["topics"]
                            for p in t["partitions"]
                        }
                    ),
                }
                for m in markers
            ]
            self._send_response(request, {"transaction_markers": refused})
            return
        errors: dict[int, dict[TopicPartition, Errors]] = {}
        lock = threading.Lock()
        pending = len(markers)  # appends not yet answered

        def send_response() -> None:
            self._send_response(
                request,
                {
                    "transaction_markers": [
                        {"producer_id": pid, "topics": _partition_errors_by_topic(by_tp)}
                        for pid, by_tp in errors.items()
                    ]
                },
            )

        def maybe_send_response_callback(
            producer_id: int, is_commit: bool, responses: dict[TopicPartition, PartitionResponse]
        ) -> None:
            # a marker in __consumer_offsets makes the transaction's offset commits visible, or drops them
            offsets_partitions = {
                tp[1]
                for tp, r in responses.items()
                if tp[0] == GROUP_METADATA_TOPIC_NAME and r.error is Errors.NONE
            }
            current = {tp: r.error for tp, r in responses.items()}

            def finish() -> None:
                nonlocal pending
                with lock:
                    errors.setdefault(producer_id, {}).update(current)
                    pending -= 1
                    done = pending == 0
                if done:
                    send_response()

            if offsets_partitions:
                # Answer only once the group has taken the offsets (or dropped them): the coordinator
                # writes CompleteCommit after this answer, and a successor's InitProducerId waits
                # for CompleteCommit, so a consumer that then fetches the group's offsets finds them.
                # Kafka 0.11 answers at once and lets the group catch up on its scheduler.
                try:
                    self.coordinator.handle_txn_completion(producer_id, offsets_partitions, is_commit, finish)
                    return
                except Exception as e:  # the markers are written: answer UNKNOWN for these partitions
                    log.warning(
                        "Error updating the offsets cache on transaction marker append for producer %d: %r",
                        producer_id, e,
                    )  # fmt: skip
                    for tp in current:
                        if tp[0] == GROUP_METADATA_TOPIC_NAME and current[tp] is Errors.NONE:
                            current[tp] = Errors.UNKNOWN
            finish()

        if not markers:
            send_response()
            return
        now = self.time.milliseconds()
        for marker in markers:
            producer_id, is_commit = marker["producer_id"], marker["transaction_result"]
            end_txn_marker = EndTransactionMarker(
                ControlRecordType.COMMIT if is_commit else ControlRecordType.ABORT,
                marker["coordinator_epoch"],
            )
            entries = {
                (t["topic"], partition): build_end_transaction_marker_batch(
                    producer_id, marker["producer_epoch"], end_txn_marker, now
                )
                for t in marker["topics"]
                for partition in t["partitions"]
            }
            self.replica_manager.append_records(
                TXN_MARKER_APPEND_TIMEOUT_MS,
                -1,
                True,
                entries,
                lambda responses, pid=producer_id, commit=is_commit: maybe_send_response_callback(
                    pid, commit, responses
                ),
                is_from_client=False,
            )

    # --8<-- [end:write_txn_markers]

    # -- ListOffsets -------------------------------------------------------------------------------------------

    def handle_list_offsets_request(self, request: Request) -> None:
        version = request.header.api_version
        responses = []
        for t in request.body["topics"]:
            parts = []
            for p in t["partitions"]:
                tp = (t["topic"], p["partition"])
                entry: dict[str, Any] = {"partition": p["partition"]}
                try:
                    if not self._authorize_topic(request.session, Operation.DESCRIBE, t["topic"]):
                        raise Errors.UNKNOWN_TOPIC_OR_PARTITION.exception()
                    if request.body["replica_id"] == DEBUGGING_CONSUMER_ID:  # any replica, as for Fetch
                        partition = self.replica_manager.get_replica_partition(tp)
                    else:
                        partition = self.replica_manager.get_leader_partition(tp)
                    read_committed = version >= 2 and request.body.get("isolation_level") == READ_COMMITTED
                    offsets = self._list_offset(
                        partition, p["timestamp"], request.body["replica_id"], read_committed
                    )
                    error = Errors.NONE
                except ApiException as e:
                    offsets, error = None, Errors.for_exception(e)
                entry["error_code"] = error.code
                if version == 0:
                    entry["offsets"] = [offsets[1]] if offsets and offsets[1] >= 0 else []
                else:
                    entry["timestamp"], entry["offset"] = offsets if offsets else (-1, -1)
                parts.append(entry)
            responses.append({"topic": t["topic"], "partition_responses": parts})
        self._send_response(request, {"throttle_time_ms": 0, "responses": responses})

    @staticmethod
    def _list_offset(
        partition, timestamp: int, replica_id: int, read_committed: bool = False
    ) -> tuple[int, int]:
        """(timestamp, offset): the log start for -2; for -1 the high watermark to a consumer (it must
        not see beyond it; the LSO to a ``read_committed`` one, ListOffsets v2) and the log end offset
        to a broker or a debugging consumer; else the first offset whose timestamp is at or after
        ``timestamp``, which a consumer is told only if it is not above the high watermark (Kafka
        0.10.1's ``allowed``)."""
        log_ = partition.log
        from_consumer = replica_id == CONSUMER_REPLICA_ID
        if timestamp == EARLIEST_TIMESTAMP:
            return -1, log_.log_start_offset
        if timestamp == LATEST_TIMESTAMP:
            if from_consumer and read_committed:
                return -1, partition.last_stable_offset()
            return -1, partition.high_watermark() if from_consumer else log_.log_end_offset
        found = log_.fetch_offset_by_timestamp(timestamp)
        if found is None or (from_consumer and found[1] > partition.high_watermark()):
            return -1, -1
        return found

    # -- CreateTopics ---------------------------------------------------------------------------------------------

    # --8<-- [start:create_topics]
    def handle_create_topics_request(self, request: Request) -> None:
        """Only the controller creates topics; duplicates in one request are refused here; the
        admin manager validates, writes to ZooKeeper and answers once the leaders are known."""
        body = request.body
        entries = body["create_topic_requests"]
        names = [t["topic"] for t in entries]
        if not self.controller.is_active():
            message = "This is not the correct controller for this cluster."
            self._send_create_topics_response(
                request, names, {name: (Errors.NOT_CONTROLLER, message) for name in names}
            )
            return
        if not self._authorize(request.session, Operation.CREATE, CLUSTER_RESOURCE):
            self._send_create_topics_response(
                request, names, {name: (Errors.CLUSTER_AUTHORIZATION_FAILED, None) for name in names}
            )
            return
        duplicates = {name for name in names if names.count(name) > 1}
        valid_topics = {
            t["topic"]: TopicDetails(
                t["num_partitions"],
                t["replication_factor"],
                {a["partition_id"]: list(a["replicas"]) for a in t["replica_assignment"]},
                {c["config_name"]: c["config_value"] for c in t["config_entries"]},
            )
            for t in entries
            if t["topic"] not in duplicates
        }

        def send_response_with_duplicates_callback(results: CreateTopicsResults) -> None:
            message = "Create topics request from client contains duplicate topic names"
            duplicate_errors = {name: (Errors.INVALID_REQUEST, message) for name in duplicates}
            self._send_create_topics_response(request, names, {**results, **duplicate_errors})

        self.admin_manager.create_topics(
            body["timeout"],
            body.get("validate_only", False),
            valid_topics,
            send_response_with_duplicates_callback,
        )

    def _send_create_topics_response(
        self, request: Request, names: list[str], results: CreateTopicsResults
    ) -> None:
        """One entry per topic, in the request's order."""
        topic_errors = []
        for topic in dict.fromkeys(names):
            error, message = results[topic]
            topic_errors.append(
                {
                    "topic": topic,
                    "error_code": error.code,
                    "error_message": message if error is not Errors.NONE else None,
                }
            )
        self._send_response(request, {"throttle_time_ms": 0, "topic_errors": topic_errors})

    # --8<-- [end:create_topics]

    # -- CreatePartitions (Kafka 1.0) ----------------------------------------------------------------------------

    def handle_create_partitions_request(self, request: Request) -> None:
        """As CreateTopics: only the controller adds partitions, a topic named twice is refused, and
        the admin manager writes the grown assignment and answers once the new leaders are known."""
        body = request.body
        names = [t["topic"] for t in body["topic_partitions"]]
        if not self.controller.is_active():
            message = "This is not the correct controller for this cluster."
            self._send_create_partitions_response(
                request, names, {name: (Errors.NOT_CONTROLLER, message) for name in names}
            )
            return
        duplicates = {name for name in names if names.count(name) > 1}
        unauthorized = {
            name
            for name in names
            if name not in duplicates and not self._authorize_topic(request.session, Operation.ALTER, name)
        }
        valid = {
            t["topic"]: NewPartitionsDetails(
                t["new_partitions"]["count"],
                None
                if t["new_partitions"]["assignment"] is None
                else [list(r) for r in t["new_partitions"]["assignment"]],
            )
            for t in body["topic_partitions"]
            if t["topic"] not in duplicates and t["topic"] not in unauthorized
        }

        def send_response_callback(results: CreateTopicsResults) -> None:
            duplicate_errors = {
                name: (Errors.INVALID_REQUEST, "Duplicate topic in request.") for name in duplicates
            }
            unauthorized_errors = {name: (Errors.TOPIC_AUTHORIZATION_FAILED, None) for name in unauthorized}
            self._send_create_partitions_response(
                request, names, {**results, **duplicate_errors, **unauthorized_errors}
            )

        self.admin_manager.create_partitions(
            body["timeout"], valid, body["validate_only"], send_response_callback
        )

    def _send_create_partitions_response(
        self, request: Request, names: list[str], results: CreateTopicsResults
    ) -> None:
        topic_errors = [
            {
                "topic": topic,
                "error_code": results[topic][0].code,
                "error_message": results[topic][1] if results[topic][0] is not Errors.NONE else None,
            }
            for topic in dict.fromkeys(names)
        ]
        self._send_response(request, {"throttle_time_ms": 0, "topic_errors": topic_errors})

    # -- DeleteRecords (Kafka 0.11, KIP-107) -----------------------------------------------------------------------

    # --8<-- [start:delete_records]
    def handle_delete_records_request(self, request: Request) -> None:
        """Partitions of topics this broker's metadata does not know answer UNKNOWN_TOPIC_OR_PARTITION;
        the rest go to the replica manager, which answers once every replica has deleted."""
        body = request.body
        offsets: dict[TopicPartition, int] = {}
        unknown: dict[TopicPartition, DeleteRecordsPartitionResult] = {}
        for t in body["topics"]:
            for p in t["partitions"]:
                tp = (t["topic"], p["partition"])
                error = (
                    Errors.UNKNOWN_TOPIC_OR_PARTITION
                    if not self.metadata_cache.partitions(t["topic"])
                    else self._topic_refusal(request.session, Operation.DELETE, t["topic"])
                )
                if error is not None:
                    unknown[tp] = DeleteRecordsPartitionResult(INVALID_LOW_WATERMARK, error)
                else:
                    offsets[tp] = p["offset"]

        def send_response_callback(results: dict[TopicPartition, DeleteRecordsPartitionResult]) -> None:
            by_topic: dict[str, list] = {}
            for (topic, partition), r in {**results, **unknown}.items():
                by_topic.setdefault(topic, []).append(
                    {"partition": partition, "low_watermark": r.low_watermark, "error_code": r.error.code}
                )
            topics = [{"topic": t, "partitions": ps} for t, ps in by_topic.items()]
            self._send_response(request, {"throttle_time_ms": 0, "topics": topics})

        if not offsets:
            send_response_callback({})
            return
        self.replica_manager.delete_records(body["timeout"], offsets, send_response_callback)

    # --8<-- [end:delete_records]

    # -- DescribeConfigs, AlterConfigs (Kafka 0.11, KIP-133) --------------------------------------------------------

    def handle_describe_configs_request(self, request: Request) -> None:
        version = request.header.api_version
        resources = {
            (r["resource_type"], r["resource_name"]): (
                None if r["config_names"] is None else list(r["config_names"])
            )
            for r in request.body["resources"]
        }
        refused = {
            resource: self._configs_authorization_error(request.session, resource)
            for resource in resources
            if not self._authorize_configs(request.session, Operation.DESCRIBE_CONFIGS, resource)
        }
        results = self.admin_manager.describe_configs(
            {r: names for r, names in resources.items() if r not in refused},
            request.body.get("include_synonyms", False),
        )
        results.update({r: DescribeConfigsResult(error, None, []) for r, error in refused.items()})
        entries = [
            self._describe_configs_resource(resource, result, version) for resource, result in results.items()
        ]
        self._send_response(request, {"throttle_time_ms": 0, "resources": entries})

    @staticmethod
    def _describe_configs_resource(resource, result: DescribeConfigsResult, version: int) -> dict:
        def entry(e: ConfigEntry) -> dict:
            described = {
                "config_name": e.name,
                "config_value": e.value,
                "read_only": e.read_only,
                "is_sensitive": e.is_sensitive,
            }
            if version == 0:
                return {**described, "is_default": e.is_default}
            synonyms = [
                {"config_name": s.name, "config_value": s.value, "config_source": int(s.source)}
                for s in e.synonyms
            ]
            return {**described, "config_source": int(e.source), "config_synonyms": synonyms}

        return {
            "error_code": result.error.code,
            "error_message": result.message,
            "resource_type": resource[0],
            "resource_name": resource[1],
            "config_entries": [entry(e) for e in result.entries],
        }

    def handle_alter_configs_request(self, request: Request) -> None:
        configs = {
            (r["resource_type"], r["resource_name"]): {
                c["config_name"]: c["config_value"] for c in r["config_entries"]
            }
            for r in request.body["resources"]
        }
        refused = {
            resource: self._configs_authorization_error(request.session, resource)
            for resource in configs
            if not self._authorize_configs(request.session, Operation.ALTER_CONFIGS, resource)
        }
        results = self.admin_manager.alter_configs(
            {r: c for r, c in configs.items() if r not in refused}, request.body["validate_only"]
        )
        results.update({r: (error, None) for r, error in refused.items()})
        resources = [
            {
                "error_code": error.code,
                "error_message": message,
                "resource_type": resource_type,
                "resource_name": name,
            }
            for (resource_type, name), (error, message) in results.items()
        ]
        self._send_response(request, {"throttle_time_ms": 0, "resources": resources})

    def _authorize_configs(self, session: Session, operation: Operation, resource: tuple[int, str]) -> bool:
        """A broker's configs are the cluster's; a topic's, the topic's. Another type is left to the
        admin manager, which refuses it."""
        resource_type, name = resource
        if resource_type == ConfigResourceType.BROKER:
            return self._authorize(session, operation, CLUSTER_RESOURCE)
        if resource_type == ConfigResourceType.TOPIC:
            return self._authorize_topic(session, operation, name)
        return True

    def _configs_authorization_error(self, session: Session, resource: tuple[int, str]) -> Errors:
        """A topic's name is not confirmed to a caller who may not Describe it (Kafka's
        ``configsAuthorizationApiError``)."""
        if resource[0] == ConfigResourceType.BROKER:
            return Errors.CLUSTER_AUTHORIZATION_FAILED
        if self._authorize_topic(session, Operation.DESCRIBE, resource[1]):
            return Errors.TOPIC_AUTHORIZATION_FAILED
        return Errors.UNKNOWN_TOPIC_OR_PARTITION

    # -- DeleteTopics ---------------------------------------------------------------------------------------------

    # --8<-- [start:delete_topics]
    def handle_delete_topics_request(self, request: Request) -> None:
        """Only the controller deletes topics; a topic this broker's metadata cache does not know is
        UNKNOWN_TOPIC_OR_PARTITION and nothing is written for it; the admin manager marks the others
        and answers once they are gone from the cache."""
        body = request.body
        topics = list(body["topics"])
        # a topic the caller may not Describe is answered as if it did not exist
        existing = {
            t
            for t in topics
            if self.metadata_cache.contains(t)
            and self._authorize_topic(request.session, Operation.DESCRIBE, t)
        }
        unauthorized = {
            t for t in existing if not self._authorize_topic(request.session, Operation.DELETE, t)
        }
        existing -= unauthorized
        non_existing = [t for t in topics if t not in existing and t not in unauthorized]

        def send_response_callback(results: DeleteTopicsResults) -> None:
            complete = {t: Errors.UNKNOWN_TOPIC_OR_PARTITION for t in non_existing}
            complete.update(dict.fromkeys(unauthorized, Errors.TOPIC_AUTHORIZATION_FAILED))
            complete.update(results)
            topic_error_codes = [{"topic": t, "error_code": complete[t].code} for t in dict.fromkeys(topics)]
            self._send_response(request, {"throttle_time_ms": 0, "topic_error_codes": topic_error_codes})

        if not self.controller.is_active():
            send_response_callback({t: Errors.NOT_CONTROLLER for t in topics})
        elif not existing:
            send_response_callback({})
        else:
            self.admin_manager.delete_topics(body["timeout"], existing, send_response_callback)

    # --8<-- [end:delete_topics]

    # -- InitProducerId ---------------------------------------------------------------------------------------------

    def handle_init_producer_id_request(self, request: Request) -> None:
        """A producer id for an idempotent producer, or for a transactional id the epoch that
        fences its previous producer; decided by the transaction coordinator (Kafka 0.11's
        ``handleInitProducerIdRequest``)."""
        body = request.body

        def send_response_callback(result: InitProducerIdResult) -> None:
            self._send_response(
                request,
                {
                    "throttle_time_ms": 0,
                    "error_code": result.error.code,
                    "producer_id": result.producer_id,
                    "producer_epoch": result.producer_epoch,
                },
            )

        transactional_id = body["transactional_id"]
        if transactional_id is not None:
            if not self._authorize_transactional_id(request.session, transactional_id):
                send_response_callback(
                    InitProducerIdResult(-1, -1, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
                )
                return
        elif not self._authorize(request.session, Operation.IDEMPOTENT_WRITE, CLUSTER_RESOURCE):
            send_response_callback(InitProducerIdResult(-1, -1, Errors.CLUSTER_AUTHORIZATION_FAILED))
            return
        try:
            self.txn_coordinator.handle_init_producer_id(
                body["transactional_id"], body["transaction_timeout_ms"], send_response_callback
            )
        except KafkaException as e:  # no producer id block could be reserved in ZooKeeper
            log.warning("Cannot allocate a producer id: %s", e)
            send_response_callback(InitProducerIdResult(-1, -1, Errors.COORDINATOR_NOT_AVAILABLE))

    # --8<-- [start:add_partitions_to_txn]
    def handle_add_partitions_to_txn_request(self, request: Request) -> None:
        """Partitions join the producer's transaction. A partition this broker does not know fails
        the whole request: it gets UNKNOWN_TOPIC_OR_PARTITION (an internal topic
        TOPIC_AUTHORIZATION_FAILED, as Kafka's authorizer check gives it), the others
        OPERATION_NOT_ATTEMPTED, and the transaction is left as it was. v4 is a broker's (KIP-890)."""
        if request.header.api_version >= 4:
            self._kafka_3_6_handle_add_partitions_to_txn_v4(request)
            return
        body = request.body
        partitions = [(t["topic"], p) for t in body["topics"] for p in t["partitions"]]
        errors: dict[TopicPartition, Errors] = {}
        if not self._authorize_transactional_id(request.session, body["transactional_id"]):
            errors = dict.fromkeys(partitions, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        for topic, partition in partitions if not errors else ():
            error = self._topic_refusal(request.session, Operation.WRITE, topic)
            if error is None and is_internal(topic):  # no transaction writes an internal topic
                error = Errors.TOPIC_AUTHORIZATION_FAILED
            elif error is None and self.metadata_cache.partition_state(topic, partition) is None:
                error = Errors.UNKNOWN_TOPIC_OR_PARTITION
            if error is not None:
                errors[(topic, partition)] = error

        def send_response(partition_errors: dict[TopicPartition, Errors]) -> None:
            by_topic: dict[str, list[dict]] = {}
            for (topic, partition), error in partition_errors.items():
                by_topic.setdefault(topic, []).append({"partition": partition, "error_code": error.code})
            errors_body = [{"topic": t, "partition_errors": ps} for t, ps in by_topic.items()]
            self._send_response(request, {"throttle_time_ms": 0, "errors": errors_body})

        if errors:
            log.info("AddPartitionsToTxn for %s refused: %s", body["transactional_id"],
                     {f"{t}-{p}": e.name for (t, p), e in errors.items()})  # fmt: skip
            send_response({tp: errors.get(tp, Errors.OPERATION_NOT_ATTEMPTED) for tp in partitions})
            return
        self.txn_coordinator.handle_add_partitions_to_transaction(
            body["transactional_id"],
            body["producer_id"],
            body["producer_epoch"],
            partitions,
            lambda error: send_response(dict.fromkeys(partitions, error)),
        )

    # --8<-- [end:add_partitions_to_txn]

    def handle_describe_producers_request(self, request: Request) -> None:
        """Kafka 3.0's DescribeProducers (KIP-664): each partition's producers as this broker's
        replica knows them; a topic the caller may not Read is answered TOPIC_AUTHORIZATION_FAILED."""
        topics = []
        refused = {
            "error_code": Errors.TOPIC_AUTHORIZATION_FAILED.code,
            "error_message": None,
            "active_producers": [],
        }
        for topic in request.body["topics"]:
            name = topic["topic"]
            allowed = self._authorize_topic(request.session, Operation.READ, name)
            partitions = [
                self.replica_manager.active_producer_state((name, p))
                if allowed
                else {"partition_index": p, **refused}
                for p in topic["partition_indexes"]
            ]
            topics.append({"topic": name, "partitions": partitions})
        self._send_response(request, {"throttle_time_ms": 0, "topics": topics})

    def _kafka_3_6_handle_add_partitions_to_txn_v4(self, request: Request) -> None:
        """AddPartitionsToTxn v4 (Kafka 3.6, KIP-890 part 1): a partition leader's batch of
        transactions, each either to verify (``verify_only``: is the partition in the producer's
        transaction?) or to add as v3 adds. Only a broker may send it (CLUSTER_ACTION); anyone else
        is refused as a whole. The answer waits for every transaction's result."""
        transactions = request.body["transactions"]
        if not self._authorize(request.session, Operation.CLUSTER_ACTION, CLUSTER_RESOURCE):
            body = {"throttle_time_ms": 0, "error_code": Errors.CLUSTER_AUTHORIZATION_FAILED.code,
                    "results_by_transaction": []}  # fmt: skip
            self._send_response(request, body)
            return
        # by position: two entries may name one transactional id (Kafka's collection keeps the last)
        results: list[dict[TopicPartition, Errors] | None] = [None] * len(transactions)
        lock = threading.Lock()

        def complete(index: int, errors: dict[TopicPartition, Errors]) -> None:
            with lock:
                results[index] = errors
                if any(r is None for r in results):
                    return
            by_txn = []
            for txn, errors_of in zip(transactions, results, strict=True):
                by_topic: dict[str, list[dict]] = {}
                for (topic, partition), error in errors_of.items():
                    by_topic.setdefault(topic, []).append({"partition": partition, "error_code": error.code})
                topic_results = [{"topic": t, "partition_errors": ps} for t, ps in by_topic.items()]
                by_txn.append({"transactional_id": txn["transactional_id"], "topic_results": topic_results})
            self._send_response(
                request, {"throttle_time_ms": 0, "error_code": 0, "results_by_transaction": by_txn}
            )

        if not transactions:
            self._send_response(
                request, {"throttle_time_ms": 0, "error_code": 0, "results_by_transaction": []}
            )
        for index, txn in enumerate(transactions):
            tid, partitions = (
                txn["transactional_id"],
                [(t["topic"], p) for t in txn["topics"] for p in t["partitions"]],
            )
            if txn["verify_only"]:
                complete(index, self.txn_coordinator.kafka_3_6_handle_verify_partitions_in_transaction(
                    tid, txn["producer_id"], txn["producer_epoch"], partitions,
                ))  # fmt: skip
            else:
                self.txn_coordinator.handle_add_partitions_to_transaction(
                    tid, txn["producer_id"], txn["producer_epoch"], partitions,
                    lambda error, index=index, partitions=partitions: complete(index, dict.fromkeys(partitions, error)),
                )  # fmt: skip

    def handle_add_offsets_to_txn_request(self, request: Request) -> None:
        """The group's ``__consumer_offsets`` partition joins the transaction, so that the offsets
        the producer then commits (TxnOffsetCommit) get its markers."""
        body = request.body
        if not self._authorize_transactional_id(request.session, body["transactional_id"]):
            error = Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        elif not self._authorize_group(request.session, Operation.READ, body["consumer_group_id"]):
            error = Errors.GROUP_AUTHORIZATION_FAILED
        else:
            error = Errors.NONE
        if error is not Errors.NONE:
            self._send_response(request, {"throttle_time_ms": 0, "error_code": error.code})
            return
        offsets_partition = (
            GROUP_METADATA_TOPIC_NAME,
            self.coordinator.partition_for(body["consumer_group_id"]),
        )
        self.txn_coordinator.handle_add_partitions_to_transaction(
            body["transactional_id"],
            body["producer_id"],
            body["producer_epoch"],
            [offsets_partition],
            lambda error: self._send_response(request, {"throttle_time_ms": 0, "error_code": error.code}),
        )

    def handle_end_txn_request(self, request: Request) -> None:
        body = request.body
        if not self._authorize_transactional_id(request.session, body["transactional_id"]):
            error = Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            self._send_response(request, {"throttle_time_ms": 0, "error_code": error.code})
            return

        def send_response_callback(error: Errors, producer_id: int, producer_epoch: int) -> None:
            # producer_id and producer_epoch are on the wire from v5 only; earlier versions drop them
            self._send_response(request, {"throttle_time_ms": 0, "error_code": error.code,
                                          "producer_id": producer_id, "producer_epoch": producer_epoch})  # fmt: skip

        client_transaction_version = _kafka_4_0_client_transaction_version(request.header.api_version)
        self.txn_coordinator.handle_end_transaction(
            body["transactional_id"],
            body["producer_id"],
            body["producer_epoch"],
            body["transaction_result"],
            send_response_callback,
            client_transaction_version,
        )

    def handle_txn_offset_commit_request(self, request: Request) -> None:
        """Offsets committed inside a transaction: written to ``__consumer_offsets`` in a
        transactional batch, and the group's only once the transaction commits."""
        body = request.body
        requested = {(t["topic"], p["partition"]): p for t in body["topics"] for p in t["partitions"]}
        invalid = self._offset_commit_refusals(
            request.session, requested, body["consumer_group_id"], body["transactional_id"]
        )

        def send_response_callback(commit_status: dict[TopicPartition, Errors]) -> None:
            status = {**commit_status, **invalid}
            by_topic: dict[str, list] = {}
            for (topic, partition), error in status.items():
                by_topic.setdefault(topic, []).append({"partition": partition, "error_code": error.code})
            topics = [{"topic": t, "partitions": ps} for t, ps in by_topic.items()]
            self._send_response(request, {"throttle_time_ms": 0, "topics": topics})

        if len(invalid) == len(requested):
            send_response_callback({})
            return
        now = self.time.milliseconds()
        expire = min(now + self.coordinator.offset_config.offsets_retention_ms, LONG_MAX)
        offsets = {
            tp: OffsetAndMetadata(
                p["offset"], p["metadata"] if p["metadata"] is not None else NO_METADATA, now, expire
            )
            for tp, p in requested.items()
            if tp not in invalid
        }
        self.coordinator.handle_txn_commit_offsets(
            body["consumer_group_id"],
            body["producer_id"],
            body["producer_epoch"],
            offsets,
            send_response_callback,
        )

    # -- FindCoordinator ------------------------------------------------------------------------------------------

    # --8<-- [start:find_coordinator]
    def handle_find_coordinator_request(self, request: Request) -> None:
        """The broker that coordinates the group, or the transactional id (FindCoordinator v1's
        type 1): the leader of its partition of ``__consumer_offsets`` or ``__transaction_state``
        (Kafka 0.11's ``handleFindCoordinatorRequest``), the topic created on the first lookup."""
        body, version = request.body, request.header.api_version
        key = body["group_id"] if version == 0 else body["coordinator_key"]
        coordinator_type = COORDINATOR_TYPE_GROUP if version == 0 else body["coordinator_type"]
        if coordinator_type == COORDINATOR_TYPE_GROUP and not self._authorize_group(
            request.session, Operation.DESCRIBE, key
        ):
            self._send_find_coordinator_response(request, Errors.GROUP_AUTHORIZATION_FAILED, NO_NODE)
            return
        if coordinator_type == COORDINATOR_TYPE_TRANSACTION and not self._authorize(
            request.session, Operation.DESCRIBE, Resource(ResourceType.TRANSACTIONAL_ID, key)
        ):
            self._send_find_coordinator_response(
                request, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, NO_NODE
            )
            return
        if coordinator_type == COORDINATOR_TYPE_GROUP:
            topic, partition = GROUP_METADATA_TOPIC_NAME, self.coordinator.partition_for(key)
        elif coordinator_type == COORDINATOR_TYPE_TRANSACTION:
            topic, partition = TRANSACTION_STATE_TOPIC_NAME, self.txn_coordinator.partition_for(key)
        else:
            message = f"Unknown coordinator type {coordinator_type} in FindCoordinator request"
            self._send_find_coordinator_response(request, Errors.INVALID_REQUEST, NO_NODE, message)
            return
        # get metadata (and create the topic if necessary)
        topic_metadata = self._get_or_create_internal_topic(topic)
        error, node = Errors.COORDINATOR_NOT_AVAILABLE, NO_NODE
        if Errors.for_code(topic_metadata["topic_error_code"]) is Errors.NONE:
            leader = next(
                (p["leader"] for p in topic_metadata["partition_metadata"] if p["partition_id"] == partition),
                -1,
            )
            # the coordinator's address on the listener the request came in on (Kafka 0.10.2)
            alive = self.metadata_cache.alive_endpoints(request.listener_name)
            broker = next((b for b in alive if b.id == leader), None)
            if broker is not None:
                error, node = Errors.NONE, {"node_id": broker.id, "host": broker.host, "port": broker.port}
        self._send_find_coordinator_response(request, error, node)

    def _send_find_coordinator_response(
        self, request: Request, error: Errors, node: dict, message: str | None = None
    ) -> None:
        self._send_response(
            request,
            {"throttle_time_ms": 0, "error_code": error.code, "error_message": message, "coordinator": node},
        )

    def _get_or_create_internal_topic(self, topic: str) -> dict:
        """``__consumer_offsets``' or ``__transaction_state``'s metadata from the cache, or the answer
        of creating it."""
        known = self.metadata_cache.topic_metadata([topic])
        return known[0] if known else self._create_internal_topic(topic)

    def _create_internal_topic(self, topic: str) -> dict:
        """Create ``__consumer_offsets`` (``offsets.topic.*``) or ``__transaction_state``
        (``transaction.state.log.*``) with its partitions and topic configs, replicated as
        configured or on every live broker if fewer are alive (Kafka 0.10.1's
        ``createGroupMetadataTopic``). The answer is LEADER_NOT_AVAILABLE when it was created, by
        this request or another one: the controller still has to elect leaders."""
        if topic == GROUP_METADATA_TOPIC_NAME:
            offset_config = self.coordinator.offset_config
            num_partitions = offset_config.offsets_topic_num_partitions
            replication_factor = self.config["offsets.topic.replication.factor"]
            configs = {k: str(v) for k, v in offset_config.offsets_topic_configs().items()}
        else:
            num_partitions = self.config["transaction.state.log.num.partitions"]
            replication_factor = self.config["transaction.state.log.replication.factor"]
            configs = self.txn_coordinator.transaction_topic_configs()
        alive = len(self.metadata_cache.alive_brokers())
        if alive:
            replication_factor = min(replication_factor, alive)
        if self.forwarding_manager is not None:
            self._auto_create_topic(topic, num_partitions, replication_factor, configs)
            return {
                "topic_error_code": Errors.LEADER_NOT_AVAILABLE.code,
                "topic": topic,
                "is_internal": True,
                "partition_metadata": [],
            }
        details = TopicDetails(num_partitions, replication_factor, {}, configs)
        results: CreateTopicsResults = {}
        # a timeout of 0: written to ZooKeeper, answered at once, nothing waits for the leaders
        self.admin_manager.create_topics(0, False, {topic: details}, results.update)
        error, message = results[topic]
        if error is Errors.NONE:
            log.info(
                "Created topic %s with %d partitions and replication factor %d",
                topic, details.num_partitions, replication_factor,
            )  # fmt: skip
            error = Errors.LEADER_NOT_AVAILABLE
        elif error is Errors.TOPIC_ALREADY_EXISTS:  # another request, or another broker, created it
            error = Errors.LEADER_NOT_AVAILABLE
        else:
            log.warning("Cannot create topic %s: %s", topic, message)
        return {"topic_error_code": error.code, "topic": topic, "is_internal": True, "partition_metadata": []}

    def _auto_create_topic(
        self, topic: str, num_partitions: int, replication_factor: int, configs: dict[str, str]
    ) -> None:
        """A KRaft broker's auto-created topic (Kafka 3.3's ``DefaultAutoTopicCreationManager``): a
        CreateTopics sent to the controller, not waited for. The client is told LEADER_NOT_AVAILABLE
        and asks again; once the controller's records reach this broker the topic is in its cache."""
        assert self.forwarding_manager is not None
        entry = {
            "topic": topic,
            "num_partitions": num_partitions,
            "replication_factor": replication_factor,
            "replica_assignment": [],
            "config_entries": [{"config_name": k, "config_value": v} for k, v in configs.items()],
        }

        def on_response(body: dict | None) -> None:
            errors = [] if body is None else [t["error_code"] for t in body["topic_errors"]]
            if body is None or errors[0] not in (Errors.NONE.code, Errors.TOPIC_ALREADY_EXISTS.code):
                log.warning("Cannot auto-create topic %s: %s", topic, body)

        self.forwarding_manager.create_topics([entry], on_response)

    # --8<-- [end:find_coordinator]

    # -- JoinGroup, SyncGroup, Heartbeat, LeaveGroup --------------------------------------------------------------

    # --8<-- [start:join_group]
    def handle_join_group_request(self, request: Request) -> None:
        body = request.body

        def send_response_callback(join_result: JoinGroupResult) -> None:
            members = [
                {"member_id": member_id, "member_metadata": metadata}
                for member_id, metadata in join_result.members.items()
            ]
            self._send_response(
                request,
                {
                    "throttle_time_ms": 0,
                    "error_code": join_result.error.code,
                    "generation_id": join_result.generation_id,
                    "group_protocol": join_result.sub_protocol,
                    "leader_id": join_result.leader_id,
                    "member_id": join_result.member_id,
                    "members": members,
                },
            )

        if not self._authorize_group(request.session, Operation.READ, body["group_id"]):
            send_response_callback(JoinGroupResult({}, "", -1, "", "", Errors.GROUP_AUTHORIZATION_FAILED))
            return
        protocols = [(p["protocol_name"], bytes(p["protocol_metadata"])) for p in body["group_protocols"]]
        self.coordinator.handle_join_group(
            body["group_id"],
            body["member_id"],
            request.header.client_id or "",
            self._client_host(request),
            # JoinGroup v0 has no rebalance timeout: the session timeout is both (KIP-62)
            body.get("rebalance_timeout", body["session_timeout"]),
            body["session_timeout"],
            body["protocol_type"],
            protocols,
            send_response_callback,
        )

    # --8<-- [end:join_group]

    @staticmethod
    def _client_host(request: Request) -> str:
        """The member's host as Kafka shows it (Java's ``InetAddress.toString``: ``/127.0.0.1``)."""
        return f"/{request.client_address}"

    def handle_sync_group_request(self, request: Request) -> None:
        body = request.body

        def send_response_callback(member_state: bytes, error: Errors) -> None:
            self._send_response(
                request, {"throttle_time_ms": 0, "error_code": error.code, "member_assignment": member_state}
            )

        if not self._authorize_group(request.session, Operation.READ, body["group_id"]):
            send_response_callback(b"", Errors.GROUP_AUTHORIZATION_FAILED)
            return
        self.coordinator.handle_sync_group(
            body["group_id"],
            body["generation_id"],
            body["member_id"],
            {a["member_id"]: bytes(a["member_assignment"]) for a in body["group_assignment"]},
            send_response_callback,
        )

    def handle_heartbeat_request(self, request: Request) -> None:
        body = request.body
        if not self._authorize_group(request.session, Operation.READ, body["group_id"]):
            self._send_error_response(request, Errors.GROUP_AUTHORIZATION_FAILED)
            return
        self.coordinator.handle_heartbeat(
            body["group_id"],
            body["member_id"],
            body["group_generation_id"],
            lambda error: self._send_error_response(request, error),
        )

    def handle_leave_group_request(self, request: Request) -> None:
        body = request.body
        if not self._authorize_group(request.session, Operation.READ, body["group_id"]):
            self._send_error_response(request, Errors.GROUP_AUTHORIZATION_FAILED)
            return
        self.coordinator.handle_leave_group(
            body["group_id"], body["member_id"], lambda error: self._send_error_response(request, error)
        )

    def _send_error_response(self, request: Request, error: Errors) -> None:
        """Heartbeat and LeaveGroup answer an error code alone."""
        self._send_response(request, {"throttle_time_ms": 0, "error_code": error.code})

    # -- DescribeGroups, ListGroups -------------------------------------------------------------------------------

    def handle_describe_groups_request(self, request: Request) -> None:
        groups = []
        for group_id in request.body["group_ids"]:
            if not self._authorize_group(request.session, Operation.DESCRIBE, group_id):
                groups.append(
                    {
                        "error_code": Errors.GROUP_AUTHORIZATION_FAILED.code,
                        "group_id": group_id,
                        "state": "",
                        "protocol_type": "",
                        "protocol": "",
                        "members": [],
                    }
                )
                continue
            error, summary = self.coordinator.handle_describe_group(group_id)
            members = [
                {
                    "member_id": m.member_id,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "member_metadata": m.metadata,
                    "member_assignment": m.assignment,
                }
                for m in summary.members
            ]
            groups.append(
                {
                    "error_code": error.code,
                    "group_id": group_id,
                    "state": summary.state,
                    "protocol_type": summary.protocol_type,
                    "protocol": summary.protocol,
                    "members": members,
                }
            )
        self._send_response(request, {"throttle_time_ms": 0, "groups": groups})

    def handle_list_groups_request(self, request: Request) -> None:
        if not self._authorize(request.session, Operation.DESCRIBE, CLUSTER_RESOURCE):
            error = Errors.CLUSTER_AUTHORIZATION_FAILED
            self._send_response(request, {"throttle_time_ms": 0, "error_code": error.code, "groups": []})
            return
        error, overviews = self.coordinator.handle_list_groups()
        groups = [{"group_id": g.group_id, "protocol_type": g.protocol_type} for g in overviews]
        self._send_response(request, {"throttle_time_ms": 0, "error_code": error.code, "groups": groups})

    # -- OffsetCommit, OffsetFetch -------------------------------------------------------------------------------

    # --8<-- [start:offset_commit]
    def handle_offset_commit_request(self, request: Request) -> None:
        body, version = request.body, request.header.api_version
        requested: dict[TopicPartition, dict] = {
            (t["topic"], p["partition"]): p for t in body["topics"] for p in t["partitions"]
        }
        # a partition of a topic this broker does not know is answered UNKNOWN_TOPIC_OR_PARTITION
        invalid = self._offset_commit_refusals(request.session, requested, body["group_id"])

        def send_response_callback(commit_status: dict[TopicPartition, Errors]) -> None:
            status = {**commit_status, **invalid}
            by_topic: dict[str, list] = {}
            for (topic, partition), error in status.items():
                by_topic.setdefault(topic, []).append({"partition": partition, "error_code": error.code})
            responses = [{"topic": t, "partition_responses": ps} for t, ps in by_topic.items()]
            self._send_response(request, {"throttle_time_ms": 0, "responses": responses})

        if len(invalid) == len(requested):
            send_response_callback({})
            return
        # The retention: the broker's (offsets.retention.minutes) unless OffsetCommit v2+ sets one.
        # The commit time is now; the expiry is the retention after a v1 request's own timestamp if
        # it carries one, else after now.
        offset_retention = body.get("retention_time", DEFAULT_RETENTION_TIME)
        if version <= 1 or offset_retention == DEFAULT_RETENTION_TIME:
            offset_retention = self.coordinator.offset_config.offsets_retention_ms
        current_timestamp = self.time.milliseconds()
        partition_data = {}
        for tp, p in requested.items():
            if tp in invalid:
                continue
            timestamp = p.get("timestamp", DEFAULT_TIMESTAMP)
            base = current_timestamp if timestamp == DEFAULT_TIMESTAMP else timestamp
            partition_data[tp] = OffsetAndMetadata(
                p["offset"],
                p["metadata"] if p["metadata"] is not None else NO_METADATA,
                current_timestamp,
                # Java's long sum would wrap around into the past; it is capped at Long.MAX_VALUE
                min(offset_retention + base, LONG_MAX),
            )
        self.coordinator.handle_commit_offsets(
            body["group_id"],
            body.get("member_id", DEFAULT_MEMBER_ID),
            body.get("group_generation_id", DEFAULT_GENERATION_ID),
            partition_data,
            send_response_callback,
        )

    # --8<-- [end:offset_commit]

    def _offset_commit_refusals(
        self,
        session: Session,
        requested: dict[TopicPartition, dict],
        group_id: str,
        transactional_id: str | None = None,
    ) -> dict[TopicPartition, Errors]:
        """The partitions an OffsetCommit (or TxnOffsetCommit) may not commit, with their errors:
        every one without Write on the transactional id or Read on the group; else a topic this
        broker does not know or the caller may not Describe, and one it may not Read."""
        if transactional_id is not None and not self._authorize_transactional_id(session, transactional_id):
            return dict.fromkeys(requested, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        if not self._authorize_group(session, Operation.READ, group_id):
            return dict.fromkeys(requested, Errors.GROUP_AUTHORIZATION_FAILED)
        refused = {}
        for tp in requested:
            error = (
                Errors.UNKNOWN_TOPIC_OR_PARTITION
                if self.metadata_cache.partition_state(*tp) is None
                else self._topic_refusal(session, Operation.READ, tp[0])
            )
            if error is not None:
                refused[tp] = error
        return refused

    def handle_offset_fetch_request(self, request: Request) -> None:
        body, version = request.body, request.header.api_version
        topics = body["topics"]  # null (v2+): every partition the group has an offset for
        partitions = None if topics is None else [(t["topic"], p) for t in topics for p in t["partitions"]]

        def send_response_callback(
            error: Errors, offsets: dict[TopicPartition, OffsetMetadataAndError]
        ) -> None:
            if error is not Errors.NONE and version >= 2:
                offsets = {}  # v2+ carries the group's error once, at the top (Kafka 0.11's getErrorResponse)
            by_topic: dict[str, list] = {}
            for (topic, partition), o in offsets.items():
                by_topic.setdefault(topic, []).append(
                    {
                        "partition": partition,
                        "offset": o.offset,
                        "metadata": o.metadata,
                        "error_code": o.error.code,
                    }
                )
            responses = [{"topic": t, "partition_responses": ps} for t, ps in by_topic.items()]
            self._send_response(
                request, {"throttle_time_ms": 0, "responses": responses, "error_code": error.code}
            )

        if not self._authorize_group(request.session, Operation.READ, body["group_id"]):
            error = Errors.GROUP_AUTHORIZATION_FAILED
            send_response_callback(
                error, {tp: OffsetMetadataAndError(-1, NO_METADATA, error) for tp in partitions or ()}
            )
            return

        unauthorized = [
            tp
            for tp in partitions or ()
            if not self._authorize_topic(request.session, Operation.DESCRIBE, tp[0])
        ]
        if partitions is not None:
            partitions = [tp for tp in partitions if tp not in unauthorized]

        def authorized_callback(error: Errors, offsets: dict[TopicPartition, OffsetMetadataAndError]) -> None:
            # offsets of a topic the caller may not Describe: left out of "all", unknown if named
            offsets = {
                tp: o
                for tp, o in offsets.items()
                if self._authorize_topic(request.session, Operation.DESCRIBE, tp[0])
            }
            for tp in unauthorized:
                offsets[tp] = OffsetMetadataAndError(-1, NO_METADATA, Errors.UNKNOWN_TOPIC_OR_PARTITION)
            send_response_callback(error, offsets)

        self.coordinator.handle_fetch_offsets(body["group_id"], partitions, authorized_callback)

    # -- from the controller --------------------------------------------------------------------------------------

    # --8<-- [start:leader_and_isr]
    def handle_leader_and_isr_request(self, request: Request) -> None:
        if not self._authorize_cluster_action(request, request.body["partition_states"]):
            return

        def on_leadership_change(
            updated_leaders: list[Partition], updated_followers: list[Partition]
        ) -> None:
            # For each new leader or follower, the coordinator takes over or hands over the groups of
            # a __consumer_offsets partition, the transaction coordinator the transactions of a
            # __transaction_state partition, at the partition's leader epoch (its coordinator
            # epoch). This runs under the replica state change lock, so that the coordinators see
            # leadership changes in the order the controller made them.
            for partition in updated_leaders:
                if self._is_group_metadata_partition(partition.topic, partition.partition_id):
                    self.coordinator.on_elected(partition.partition_id)
                elif self._is_transaction_state_partition(partition.topic, partition.partition_id):
                    self.txn_coordinator.handle_txn_immigration(
                        partition.partition_id, partition.leader_epoch
                    )
            for partition in updated_followers:
                if self._is_group_metadata_partition(partition.topic, partition.partition_id):
                    self.coordinator.on_resigned(partition.partition_id)
                elif self._is_transaction_state_partition(partition.topic, partition.partition_id):
                    self.txn_coordinator.handle_txn_emigration(partition.partition_id, partition.leader_epoch)

        self._send_partition_errors(
            request, *self.replica_manager.become_leader_or_follower(request.body, on_leadership_change)
        )

    def handle_stop_replica_request(self, request: Request) -> None:
        if not self._authorize_cluster_action(request, request.body["partitions"]):
            return
        # the coordinator epochs of the __transaction_state partitions, read before they stop
        txn_epochs = {
            p["partition"]: replica.leader_epoch
            for p in request.body["partitions"]
            if p["topic"] == TRANSACTION_STATE_TOPIC_NAME
            and (replica := self.replica_manager.get_partition((p["topic"], p["partition"]))) is not None
        }
        error, partitions = self.replica_manager.stop_replicas(request.body)
        # A broker that no longer holds a __consumer_offsets or __transaction_state partition (a
        # reassignment may move it away without a LeaderAndIsr here) must not keep serving its
        # groups or transactions.
        for (topic, partition), partition_error in partitions.items():
            if partition_error is not Errors.NONE:
                continue
            if self._is_group_metadata_partition(topic, partition):
                self.coordinator.on_resigned(partition)
            elif self._is_transaction_state_partition(topic, partition) and partition in txn_epochs:
                self.txn_coordinator.handle_txn_emigration(partition, txn_epochs[partition])
        self._send_partition_errors(request, error, partitions)

    # --8<-- [end:leader_and_isr]

    def _authorize_cluster_action(self, request: Request, partitions: list[dict]) -> bool:
        """LeaderAndIsr and StopReplica come from the controller: a sender without ClusterAction is
        answered CLUSTER_AUTHORIZATION_FAILED for the request and every partition, nothing done."""
        if self._authorize(request.session, Operation.CLUSTER_ACTION, CLUSTER_RESOURCE):
            return True
        refused = {(p["topic"], p["partition"]): Errors.CLUSTER_AUTHORIZATION_FAILED for p in partitions}
        self._send_partition_errors(request, Errors.CLUSTER_AUTHORIZATION_FAILED, refused)
        return False

    def _is_group_metadata_partition(self, topic: str, partition: int) -> bool:
        """A partition of ``__consumer_offsets`` that ``partition_for`` can name."""
        if topic != GROUP_METADATA_TOPIC_NAME:
            return False
        if 0 <= partition < self.coordinator.offset_config.offsets_topic_num_partitions:
            return True
        log.warning(
            "Ignoring %s-%d for group coordination: offsets.topic.num.partitions is %d",
            topic, partition, self.coordinator.offset_config.offsets_topic_num_partitions,
        )  # fmt: skip
        return False

    def _is_transaction_state_partition(self, topic: str, partition: int) -> bool:
        """A partition of ``__transaction_state`` that ``partition_for`` can name."""
        if topic != TRANSACTION_STATE_TOPIC_NAME:
            return False
        if 0 <= partition < self.config["transaction.state.log.num.partitions"]:
            return True
        log.warning(
            "Ignoring %s-%d for transaction coordination: transaction.state.log.num.partitions is %d",
            topic, partition, self.config["transaction.state.log.num.partitions"],
        )  # fmt: skip
        return False

    def _send_partition_errors(self, request: Request, error: Errors, partitions: dict) -> None:
        """LeaderAndIsr and StopReplica answer alike: the request's error and one per partition."""
        entries = [{"topic": t, "partition": p, "error_code": e.code} for (t, p), e in partitions.items()]
        self._send_response(request, {"error_code": error.code, "partitions": entries})

    def handle_update_metadata_request(self, request: Request) -> None:
        body = request.body
        if not self._authorize(request.session, Operation.CLUSTER_ACTION, CLUSTER_RESOURCE):
            self._send_response(request, {"error_code": Errors.CLUSTER_AUTHORIZATION_FAILED.code})
            return
        # The replica manager checks the epoch against the newest it has seen in any of the three
        # controller requests, and updates the cache under the same lock (Kafka's
        # ``maybeUpdateMetadataCache``): a deposed controller's UpdateMetadata changes nothing.
        error, deleted_partitions = self.replica_manager.maybe_update_metadata_cache(
            body, request.header.api_version, self.metadata_cache
        )
        if error is not Errors.NONE:
            self._send_response(request, {"error_code": error.code})
            return
        if deleted_partitions:
            # a deleted topic's committed offsets go with it (Kafka 0.10.2, KAFKA-2000)
            self.coordinator.handle_deleted_partitions(deleted_partitions)
        if self.admin_manager.has_delayed_topic_operations():
            for topic in {s["topic"] for s in body["partition_states"]}:
                self.admin_manager.try_complete_delayed_topic_operations(topic)
        self._send_response(request, {"error_code": 0})
        # The controller is answered first; then the client requests that waited for this cache.
        self.client_request_purgatory.check_and_complete(FIRST_METADATA)

    # --8<-- [start:controlled_shutdown]
    def handle_controlled_shutdown_request(self, request: Request) -> None:
        """A broker about to stop asks the controller to move its leaderships first (book 7.4).
        This handler thread waits while the controller's event thread moves them; the answer lists
        the partitions the broker still leads, and the broker retries while any remain. Asked of a
        broker that is not the controller, it answers STALE_CONTROLLER_EPOCH (Kafka's code for a
        ``ControllerMovedException``); about a broker that is not registered, BROKER_NOT_AVAILABLE
        (0.10.1 throws a Scala exception of that name, which reaches the wire as UNKNOWN)."""
        broker_id = request.body["broker_id"]
        if not self._authorize(request.session, Operation.CLUSTER_ACTION, CLUSTER_RESOURCE):
            error = Errors.CLUSTER_AUTHORIZATION_FAILED
            self._send_response(request, {"error_code": error.code, "partitions_remaining": []})
            return
        try:
            remaining = self.controller.shutdown_broker(
                broker_id, self.config["controller.socket.timeout.ms"] / 1000
            )
            error = Errors.NONE
        except ApiException as e:
            remaining, error = set(), Errors.for_exception(e)
            log.info("Controlled shutdown of broker %d refused: %s", broker_id, e)
        partitions = [{"topic": t, "partition": p} for t, p in sorted(remaining)]
        self._send_response(request, {"error_code": error.code, "partitions_remaining": partitions})

    # --8<-- [end:controlled_shutdown]

    # -- from followers ---------------------------------------------------------------------------------------------

    def handle_offsets_for_leader_epoch_request(self, request: Request) -> None:
        """OffsetsForLeaderEpoch (Kafka 0.11, KIP-101): where each requested leader epoch ends in this
        leader's log. A follower asks after a leader change and truncates there, where the book's Kafka
        0.10 truncates to its high watermark. Kafka's ``handleOffsetForLeaderEpochRequest``."""
        requested = {
            (t["topic"], p["partition_id"]): p["leader_epoch"]
            for t in request.body["topics"]
            for p in t["partitions"]
        }
        if self._authorize(request.session, Operation.CLUSTER_ACTION, CLUSTER_RESOURCE):
            results = self.replica_manager.last_offset_for_leader_epoch(requested)
        else:
            results = dict.fromkeys(requested, (Errors.CLUSTER_AUTHORIZATION_FAILED, -1))
        by_topic: dict[str, list[dict]] = {}
        for (topic, partition), (error, end_offset) in results.items():
            by_topic.setdefault(topic, []).append(
                {"error_code": error.code, "partition_id": partition, "end_offset": end_offset}
            )
        topics = [{"topic": topic, "partitions": partitions} for topic, partitions in by_topic.items()]
        self._send_response(request, {"topics": topics})

    # -- DescribeAcls, CreateAcls, DeleteAcls (Kafka 0.11, KIP-140) -------------------------------------------------

    # --8<-- [start:acls]
    def handle_describe_acls_request(self, request: Request) -> None:
        """Every ACL the filter matches, grouped by resource."""
        error = self._acl_api_error(request, Operation.DESCRIBE)
        if error is not None:
            body = {
                "throttle_time_ms": 0,
                "error_code": error[0].code,
                "error_message": error[1],
                "resources": [],
            }
            self._send_response(request, body)
            return
        acl_filter = AclBindingFilter.from_wire(request.body)
        unknown = _unknown_filter_field(acl_filter)
        if unknown is not None:
            message = f"The filter's {unknown} is UNKNOWN"
            body = {"throttle_time_ms": 0, "error_code": Errors.INVALID_REQUEST.code, "error_message": message,
                    "resources": []}  # fmt: skip
            self._send_response(request, body)
            return
        by_resource: dict[Resource, list[dict]] = {}
        for resource, acls in self.authorizer.get_all_acls().items():
            for acl in sorted(acls, key=str):
                binding = AclBinding(resource, acl)
                if acl_filter.matches(binding):
                    by_resource.setdefault(resource, []).append(binding_to_wire(binding))
        resources = [
            {
                "resource_type": resource.resource_type.code,
                "resource_name": resource.name,
                "acls": [
                    {k: e[k] for k in ("principal", "host", "operation", "permission_type")} for e in entries
                ],
            }
            for resource, entries in by_resource.items()
        ]
        body = {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "resources": resources}
        self._send_response(request, body)

    def handle_create_acls_request(self, request: Request) -> None:
        """Each creation is checked on its own (no ANY or UNKNOWN field, a valid principal, a
        non-empty name, the cluster named kafka-cluster) and added; a bad one gets its error and
        nothing is written for it."""
        creations = request.body["creations"]
        error = self._acl_api_error(request, Operation.ALTER)
        if error is not None:
            responses = [{"error_code": error[0].code, "error_message": error[1]}] * len(creations)
            self._send_response(request, {"throttle_time_ms": 0, "creation_responses": responses})
            return
        responses = []
        for creation in creations:
            try:
                binding = AclBindingFilter.from_wire(creation).to_binding()
                self.authorizer.add_acls({binding.acl}, binding.resource)
                responses.append({"error_code": 0, "error_message": None})
            except Exception as e:
                log.info("Refused to create the ACL %s: %s", creation, e)
                responses.append({"error_code": Errors.for_exception(e).code, "error_message": str(e)})
        self._send_response(request, {"throttle_time_ms": 0, "creation_responses": responses})

    def handle_delete_acls_request(self, request: Request) -> None:
        """Each filter deletes every ACL it matches; the answer lists them, filter by filter."""
        filters = [AclBindingFilter.from_wire(f) for f in request.body["filters"]]
        error = self._acl_api_error(request, Operation.ALTER)
        if error is not None:
            refused = {"error_code": error[0].code, "error_message": error[1], "matching_acls": []}
            self._send_response(
                request, {"throttle_time_ms": 0, "filter_responses": [refused] * len(filters)}
            )
            return
        matched: list[list[AclBinding]] = [[] for _ in filters]
        for resource, acls in self.authorizer.get_all_acls().items():
            for acl in sorted(acls, key=str):
                binding = AclBinding(resource, acl)
                for i, acl_filter in enumerate(filters):
                    if acl_filter.matches(binding):
                        matched[i].append(binding)
        filter_responses = []
        for acl_filter, bindings in zip(filters, matched, strict=True):
            unknown = _unknown_filter_field(acl_filter)
            if unknown is not None:  # matches nothing; told, not silently empty
                message = f"The filter's {unknown} is UNKNOWN"
                filter_responses.append(
                    {"error_code": Errors.INVALID_REQUEST.code, "error_message": message, "matching_acls": []}
                )
                continue
            deleted = []
            for binding in bindings:
                try:
                    if self.authorizer.remove_acls({binding.acl}, binding.resource):
                        deleted.append({"error_code": 0, "error_message": None, **binding_to_wire(binding)})
                except Exception as e:
                    error_fields = {"error_code": Errors.for_exception(e).code, "error_message": str(e)}
                    deleted.append({**error_fields, **binding_to_wire(binding)})
            filter_responses.append({"error_code": 0, "error_message": None, "matching_acls": deleted})
        self._send_response(request, {"throttle_time_ms": 0, "filter_responses": filter_responses})

    def _acl_api_error(self, request: Request, operation: Operation) -> tuple[Errors, str] | None:
        """The ACL APIs need Describe (DescribeAcls) or Alter on the cluster, and an authorizer."""
        if not self._authorize(request.session, operation, CLUSTER_RESOURCE):
            return (
                Errors.CLUSTER_AUTHORIZATION_FAILED,
                f"{request.api.api_name} needs {operation} on the cluster",
            )
        if self.authorizer is None:
            return Errors.SECURITY_DISABLED, "No Authorizer is configured on the broker"
        return None

    # --8<-- [end:acls]

    def shutdown(self) -> None:
        self.client_request_purgatory.shutdown()
        self.quotas.shutdown()


def _inter_broker(api: ApiKeys | RaftApiKeys) -> bool:
    """Whether ``api`` is sent only between brokers. DescribeQuorum, the one API of Raft's table a
    KRaft broker takes, comes from an admin tool."""
    return isinstance(api, ApiKeys) and api.inter_broker


def _response_header(request: Request) -> Schema:
    """Response header v0 for the client table's versions but its flexible ones (AddPartitionsToTxn
    v3+), whose answers go behind header v1, as a forwarded DescribeQuorum's (flexible from v0)."""
    if isinstance(request.api, RaftApiKeys):
        return RESPONSE_HEADERS[request.api.response_header_version(request.header.api_version)]
    return RESPONSE_HEADERS[client_response_header_version(request.api, request.header.api_version)]


def _partition_errors_by_topic(errors: dict[TopicPartition, Errors]) -> list[dict]:
    """``{(topic, partition): error}`` as the responses' ``topics: [{topic, partitions: [...]}]``."""
    by_topic: dict[str, list] = {}
    for (topic, partition), error in errors.items():
        by_topic.setdefault(topic, []).append({"partition": partition, "error_code": error.code})
    return [{"topic": t, "partitions": ps} for t, ps in by_topic.items()]


def _topic_error_metadata(topic: str, error: Errors) -> dict:
    """A Metadata entry that only carries an error (no partitions)."""
    return {
        "topic_error_code": error.code,
        "topic": topic,
        "is_internal": is_internal(topic),
        "partition_metadata": [],
    }


def _unknown_filter_field(acl_filter: AclBindingFilter) -> str | None:
    """The first of a filter's enums the broker does not know (a code it has no name for), by name."""
    for name in ("resource_type", "operation", "permission_type"):
        if getattr(acl_filter, name).code == 0:
            return name.replace("_", " ")
    return None


def _kafka_4_0_client_transaction_version(end_txn_version: int) -> int:
    """Kafka 4.0's rule (KIP-890 part 2): an EndTxn of v5 or later comes from a producer of
    transaction version 2, which takes a new epoch at the end of every transaction; an older one
    keeps Kafka 0.11's epoch for the producer's life."""
    return TV_2 if end_txn_version > 4 else TV_0
