"""The controller's request handlers: Raft's RPCs to the Raft manager, the rest to the quorum controller.

Mirrors: kafka.server.ControllerApis (core/src/main/scala/kafka/server/ControllerApis.scala, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: no quotas or throttling (every answer says 0 ms); DeleteTopics names topics only
         (kafka_lite's DeleteTopics is v0-1, before topic ids), so the controller deletes by name,
         and a topic the client may describe but not delete is TOPIC_AUTHORIZATION_FAILED whether
         or not it exists; no client-quota, SCRAM, reassignment, ElectLeaders or UpdateFeatures
         handlers, since the controller's table (listener_type.py) has none of those APIs;
         DescribeCluster is answered as Kafka 3.7 answers it (``handle_describe_cluster``).

What ``KafkaApis`` is to a broker (chapter 2, 2.3.4), this is to a controller: the request handler
threads call ``handle`` with each request its socket server parsed, and it answers through the
request channel. There are two kinds of request, and neither is answered on the handler thread:

- **Raft's RPCs** (Fetch, Vote, BeginQuorumEpoch, EndQuorumEpoch, DescribeQuorum, FetchSnapshot) go
  to ``raft_manager.handle_request``, which queues them for the Raft thread and returns the future
  of the answer. A follower's Fetch may be held there until records arrive or its wait runs out.
- **The controller's operations** (BrokerRegistration, BrokerHeartbeat, CreateTopics ...) go to the
  ``QuorumController``, whose every operation returns a future: it completes on the controller's
  event thread, once the records the operation wrote are committed (or at once, for a read or a
  refusal). A standby's futures fail with NOT_CONTROLLER, which is what tells a broker to look for
  the active controller elsewhere.

Either way ``handle`` only hands the request on and attaches a callback to the future; the callback
builds the response on whichever thread completes the future, and the request channel carries it to
the processor that owns the connection. So a handler thread never waits for a commit, and two
handler threads serve a whole cluster's heartbeats.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from kafka_lite.common.errors import ApiException, Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.controller_messages import (
    ENDPOINT_TYPE_CONTROLLERS,
    ControllerApiKeys,
    deserialize_principal,
)
from kafka_lite.common.protocol.listener_type import (
    ListenerType,
    SimpleApiVersionManager,
    encode_listener_response,
    parse_listener_request_body,
    parse_listener_request_header,
)
from kafka_lite.common.protocol.messages import API_VERSIONS_RESPONSE_V0, RESPONSE_HEADER
from kafka_lite.common.protocol.raft_messages import RaftApiKeys
from kafka_lite.common.protocol.requests import UnknownApiKeyException
from kafka_lite.common.protocol.types import ArrayOf, CompactArrayOf, SchemaException, encode
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
from kafka_lite.metadata.config_resource import ConfigResource, ConfigResourceType
from kafka_lite.network.request_channel import Request, RequestChannel, Response, ResponseAction
from kafka_lite.server.broker_to_controller_channel_manager import error_codes
from kafka_lite.server.forwarding_manager import FORWARDED_APIS

if TYPE_CHECKING:
    from kafka_lite.metadata.controller.quorum_controller import QuorumController
    from kafka_lite.raft.tools.raft_manager import KafkaRaftManager
    from kafka_lite.security.auth.authorizer import Authorizer

log = logging.getLogger(__name__)


class ControllerApis:
    """Handles one controller listener's requests (Kafka's ``ControllerApis``)."""

    def __init__(
        self,
        request_channel: RequestChannel,
        time: Time,
        controller: QuorumController,
        raft_manager: KafkaRaftManager,
        node_id: int,
        delete_topic_enable: bool,
        api_version_manager: SimpleApiVersionManager,
        *,
        cluster_id: str,
        controller_nodes: Sequence[tuple[int, str, int]],
        authorizer: Authorizer | None = None,
    ) -> None:
        """``controller_nodes``: each voter's ``(id, host, port)`` on the controller listener, from
        ``controller.quorum.voters``. ``authorizer``: the controller's (``authorizer.class.name``),
        asked of every request but ApiVersions; None allows everything."""
        self.request_channel = request_channel
        self.time = time
        self.controller = controller
        self.raft_manager = raft_manager
        self.node_id = node_id
        self.delete_topic_enable = delete_topic_enable
        self.api_version_manager = api_version_manager
        self.cluster_id = cluster_id
        self.controller_nodes = list(controller_nodes)
        self.authorizer = authorizer
        # --8<-- [start:handlers]
        # In the order of 3.3's ``handle`` match, keeping only the APIs the table has.
        self._handlers: dict[int, Callable[[Request], None]] = {
            RaftApiKeys.FETCH: self.handle_fetch,
            RaftApiKeys.FETCH_SNAPSHOT: self.handle_fetch_snapshot,
            ApiKeys.CREATE_TOPICS: self.handle_create_topics,
            ApiKeys.DELETE_TOPICS: self.handle_delete_topics,
            ApiKeys.API_VERSIONS: self.handle_api_versions_request,
            ApiKeys.ALTER_CONFIGS: self.handle_legacy_alter_configs,
            RaftApiKeys.VOTE: self.handle_vote,
            RaftApiKeys.BEGIN_QUORUM_EPOCH: self.handle_begin_quorum_epoch,
            RaftApiKeys.END_QUORUM_EPOCH: self.handle_end_quorum_epoch,
            RaftApiKeys.DESCRIBE_QUORUM: self.handle_describe_quorum,
            ControllerApiKeys.ALTER_PARTITION: self.handle_alter_partition_request,
            ControllerApiKeys.BROKER_REGISTRATION: self.handle_broker_registration,
            ControllerApiKeys.BROKER_HEARTBEAT: self.handle_broker_heartbeat_request,
            ControllerApiKeys.UNREGISTER_BROKER: self.handle_unregister_broker,
            ControllerApiKeys.ALLOCATE_PRODUCER_IDS: self.handle_allocate_producer_ids_request,
            ApiKeys.CREATE_PARTITIONS: self.handle_create_partitions,
            ApiKeys.CREATE_ACLS: self.handle_create_acls,
            ApiKeys.DELETE_ACLS: self.handle_delete_acls,
            ControllerApiKeys.DESCRIBE_CLUSTER: self.handle_describe_cluster,  # a later Kafka's: see its docstring
            ControllerApiKeys.ENVELOPE: self.handle_envelope_request,
        }
        # --8<-- [end:handlers]

    # --8<-- [start:handle]
    def handle(self, request: Request) -> None:
        try:
            handler = self._handlers.get(request.header.api_key)
            if handler is None:  # the socket server parses only the table's APIs: a bug if reached
                log.error("[ControllerApis nodeId=%d] Unsupported ApiKey %d in %s", self.node_id,
                          request.header.api_key, request.header)  # fmt: skip
                raise Errors.UNSUPPORTED_VERSION.exception(f"Unsupported ApiKey {request.header.api_key}")
            handler(request)
        except ApiException as e:  # a refusal the client is told of (an authorization failed, ...)
            self.handle_error(request, e)
        except Exception as e:  # a failure on the handler thread itself, before any future
            log.error("[ControllerApis nodeId=%d] Unexpected error handling request %s", self.node_id,
                      request.header, exc_info=e)  # fmt: skip
            self.handle_error(request, e)
        finally:
            if not request.api_local_complete_ns:
                request.api_local_complete_ns = self.time.nanoseconds()

    # --8<-- [end:handle]

    def handle_envelope_request(self, request: Request) -> None:
        """A client's request a broker forwarded (KIP-590, 3.3's ``handleEnvelopeRequest``): the
        broker must have CLUSTER_ACTION; the request inside is then handled as the client's, whose
        principal the Envelope carries, and its answer goes back inside an Envelope answer."""
        self._authorize_cluster_operation(request, Operation.CLUSTER_ACTION)
        body = request.body
        frame = body["request_data"]
        try:
            header, api, body_start = parse_listener_request_header(ListenerType.CONTROLLER, frame)
            if header.api_key not in _FORWARDABLE_APIS:
                raise Errors.INVALID_REQUEST.exception(f"{api.api_name} is not an API a broker forwards")
            inner_body = parse_listener_request_body(api, header, frame, body_start)
            principal = deserialize_principal(body["request_principal"] or b"")
            client_address = str(ipaddress.ip_address(body["client_host_address"]))
        except (SchemaException, UnknownApiKeyException, ValueError) as e:
            raise Errors.INVALID_REQUEST.exception(f"The Envelope's request does not parse: {e}") from None
        forwarded = dataclasses.replace(
            request, header=header, body=inner_body, size=len(frame), client_address=client_address,
            principal=principal, api=api, envelope=request,
        )  # fmt: skip
        self.handle(forwarded)

    # -- Raft's RPCs ---------------------------------------------------------------------------------------

    # A voter's RPCs are the cluster's own (CLUSTER_ACTION: the voters' and brokers' principal);
    # DescribeQuorum is an operator's question (DESCRIBE on the cluster).

    def handle_fetch(self, request: Request) -> None:
        self._authorize_cluster_operation(request, Operation.CLUSTER_ACTION)
        self._handle_raft_request(request)

    def handle_fetch_snapshot(self, request: Request) -> None:
        self._authorize_cluster_operation(request, Operation.CLUSTER_ACTION)
        self._handle_raft_request(request)

    def handle_vote(self, request: Request) -> None:
        self._authorize_cluster_operation(request, Operation.CLUSTER_ACTION)
        self._handle_raft_request(request)

    def handle_begin_quorum_epoch(self, request: Request) -> None:
        self._authorize_cluster_operation(request, Operation.CLUSTER_ACTION)
        self._handle_raft_request(request)

    def handle_end_quorum_epoch(self, request: Request) -> None:
        self._authorize_cluster_operation(request, Operation.CLUSTER_ACTION)
        self._handle_raft_request(request)

    def handle_describe_quorum(self, request: Request) -> None:
        self._authorize_cluster_operation(request, Operation.DESCRIBE)
        self._handle_raft_request(request)

    # --8<-- [start:raft]
    def _handle_raft_request(self, request: Request) -> None:
        future = self.raft_manager.handle_request(
            request.header.api_key, request.header.correlation_id, request.body, self.time.milliseconds()
        )

        def done(f: Future) -> None:
            exception = f.exception()
            if exception is not None:
                self._send_response(request, _top_level_error(request, Errors.for_exception(exception)))
                return
            data = f.result()
            if request.header.api_key == RaftApiKeys.FETCH:
                _read_file_records(data)
            self._send_response(request, data)

        future.add_done_callback(self._guarded(request, done))

    # --8<-- [end:raft]

    def handle_describe_cluster(self, request: Request) -> None:
        """DescribeCluster v1 asking for the controllers: the cluster id, the Raft leader as the
        controller, and every voter as a node. This is Kafka 3.7's ``handleDescribeCluster`` (KIP-919,
        for the admin's ``--bootstrap-controller``), which 3.3's controllers do not have; 3.7 lists
        the controllers that registered (ControllerRegistrationRecord, also 3.7), where kafka_lite
        lists ``controller.quorum.voters``. A request for the brokers is refused with INVALID_REQUEST
        (3.7: MISMATCHED_ENDPOINT_TYPE, an error code kafka_lite's table does not have): a
        controller knows the brokers only as registrations, and a broker answers for them."""
        self._authorize_cluster_operation(request, Operation.DESCRIBE)
        if request.body["endpoint_type"] != ENDPOINT_TYPE_CONTROLLERS:
            message = (
                f"DescribeCluster on a controller listener describes the controllers (endpoint type "
                f"{ENDPOINT_TYPE_CONTROLLERS}), not endpoint type {request.body['endpoint_type']}: "
                "ask a broker for the brokers"
            )
            self._send_response(request, {
                **_top_level_error(request, Errors.INVALID_REQUEST), "error_message": message,
                "cluster_id": self.cluster_id,
            })  # fmt: skip
            return
        leader_id = self.raft_manager.leader_and_epoch().leader_id
        self._send_response(request, {
            "throttle_time_ms": 0, "error_code": Errors.NONE.code, "error_message": None,
            "endpoint_type": ENDPOINT_TYPE_CONTROLLERS, "cluster_id": self.cluster_id,
            "controller_id": -1 if leader_id is None else leader_id,
            "brokers": [
                {"broker_id": node_id, "host": host, "port": port, "rack": None}
                for node_id, host, port in self.controller_nodes
            ],
            "cluster_authorized_operations": -(2**31),  # not asked for: Kafka's "omitted" value
        })  # fmt: skip

    # -- the controller's RPCs, from brokers ---------------------------------------------------------------

    # --8<-- [start:registration]
    def handle_broker_registration(self, request: Request) -> None:
        self._authorize_cluster_operation(request, Operation.CLUSTER_ACTION)

        def done(f: Future) -> None:
            exception = f.exception()
            if exception is not None:
                body = {"throttle_time_ms": 0, "error_code": Errors.for_exception(exception).code}
            else:
                body = {
                    "throttle_time_ms": 0,
                    "error_code": Errors.NONE.code,
                    "broker_epoch": f.result().epoch,
                }
            self._send_response(request, body)

        self.controller.register_broker(request.body).add_done_callback(self._guarded(request, done))

    def handle_broker_heartbeat_request(self, request: Request) -> None:
        self._authorize_cluster_operation(request, Operation.CLUSTER_ACTION)

        def done(f: Future) -> None:
            exception = f.exception()
            if exception is not None:
                body = {"throttle_time_ms": 0, "error_code": Errors.for_exception(exception).code}
            else:
                reply = f.result()
                body = {
                    "throttle_time_ms": 0, "error_code": Errors.NONE.code, "is_caught_up": reply.is_caught_up,
                    "is_fenced": reply.is_fenced, "should_shut_down": reply.should_shut_down,
                }  # fmt: skip
            self._send_response(request, body)

        self.controller.process_broker_heartbeat(request.body).add_done_callback(self._guarded(request, done))

    # --8<-- [end:registration]

    def handle_unregister_broker(self, request: Request) -> None:
        self._authorize_cluster_operation(request, Operation.ALTER)

        def done(f: Future) -> None:
            exception = f.exception()
            code = Errors.NONE.code if exception is None else Errors.for_exception(exception).code
            self._send_response(request, {"throttle_time_ms": 0, "error_code": code})

        self.controller.unregister_broker(request.body["broker_id"]).add_done_callback(
            self._guarded(request, done)
        )

    def handle_alter_partition_request(self, request: Request) -> None:
        self._authorize_cluster_operation(request, Operation.CLUSTER_ACTION)

        def done(f: Future) -> None:
            exception = f.exception()
            if exception is not None:
                body = {
                    "throttle_time_ms": 0,
                    "error_code": Errors.for_exception(exception).code,
                    "topics": [],
                }
            else:
                body = f.result()
            self._send_response(request, body)

        self.controller.alter_partition(request.body).add_done_callback(self._guarded(request, done))

    def handle_allocate_producer_ids_request(self, request: Request) -> None:
        self._authorize_cluster_operation(request, Operation.CLUSTER_ACTION)
        self._on_result(request, self.controller.allocate_producer_ids(request.body), lambda body: body)

    # -- the admin APIs a broker forwards ------------------------------------------------------------------

    # --8<-- [start:create_topics]
    def handle_create_topics(self, request: Request) -> None:
        """3.3's ``createTopics``: a name given twice is refused (INVALID_REQUEST), and a topic the
        principal may not create (CREATE on the cluster, or on the topic) is refused
        (TOPIC_AUTHORIZATION_FAILED); both are left out of what the controller sees, and every other
        topic is the controller's to create or refuse."""
        body = request.body
        names: set[str] = set()
        duplicates: set[str] = set()
        for topic in body["create_topic_requests"]:
            if topic["topic"] in names:
                duplicates.add(topic["topic"])
            names.add(topic["topic"])
        names -= duplicates
        if self._authorize(request, Operation.CREATE, CLUSTER_RESOURCE):
            authorized = names
        else:
            authorized = {n for n in names if self._authorize(request, Operation.CREATE, _topic(n))}
        effective = dict(body)
        effective["create_topic_requests"] = [
            t for t in body["create_topic_requests"] if t["topic"] in authorized
        ]

        def with_duplicates(response: dict[str, Any]) -> dict[str, Any]:
            for name in sorted(duplicates):
                response["topic_errors"].append(
                    {
                        "topic": name,
                        "error_code": Errors.INVALID_REQUEST.code,
                        "error_message": "Duplicate topic name.",
                    }
                )
            for name in sorted(names - authorized):
                response["topic_errors"].append(_topic_error(name, Errors.TOPIC_AUTHORIZATION_FAILED, None))
            return response

        self._on_result(request, self.controller.create_topics(effective), with_duplicates)

    # --8<-- [end:create_topics]

    def handle_delete_topics(self, request: Request) -> None:
        if not self.delete_topic_enable:
            # DeleteTopics v0-2 have no TOPIC_DELETION_DISABLED (v3+): INVALID_REQUEST, as 3.3 answers them.
            raise Errors.INVALID_REQUEST.exception("Topic deletion is disabled.")
        provided: list[str] = []
        duplicates: set[str] = set()
        for name in request.body["topics"]:
            if name in provided:
                duplicates.add(name)
            else:
                provided.append(name)
        names = [n for n in provided if n not in duplicates]
        # 3.3 asks DELETE on the cluster, else DESCRIBE and DELETE on each topic; a topic the principal
        # may not delete is TOPIC_AUTHORIZATION_FAILED (3.3 says UNKNOWN_TOPIC_OR_PARTITION instead for
        # a topic it may describe but not delete that does not exist; here the existence is the
        # controller's to check, after).
        refused: list[str] = []
        if not self._authorize(request, Operation.DELETE, CLUSTER_RESOURCE):
            refused = [
                n for n in names
                if not (self._authorize(request, Operation.DESCRIBE, _topic(n))
                        and self._authorize(request, Operation.DELETE, _topic(n)))
            ]  # fmt: skip
            names = [n for n in names if n not in refused]

        def to_response(results: dict[str, Any]) -> dict[str, Any]:
            errors = [
                {"topic": name, "error_code": Errors.INVALID_REQUEST.code} for name in sorted(duplicates)
            ]
            errors += [{"topic": n, "error_code": Errors.TOPIC_AUTHORIZATION_FAILED.code} for n in refused]
            errors += [{"topic": name, "error_code": error.error.code} for name, error in results.items()]
            return {"throttle_time_ms": 0, "topic_error_codes": errors}

        self._on_result(request, self.controller.delete_topics(names), to_response)

    # -- ACLs (KIP-801): records the controller writes -------------------------------------------------------

    def handle_create_acls(self, request: Request) -> None:
        """3.3's ``AclApis.handleCreateAcls`` on the controller: a creation that names no resource, or
        a cluster other than kafka-cluster (``to_binding`` says which), is refused here; the rest are
        the quorum controller's. It takes ALTER on the cluster."""
        self._authorize_cluster_operation(request, Operation.ALTER)
        bindings: list[AclBinding | Exception] = []
        for creation in request.body["creations"]:
            try:
                bindings.append(AclBindingFilter.from_wire(creation).to_binding())
            except Exception as e:
                bindings.append(e)
        valid = [b for b in bindings if isinstance(b, AclBinding)]

        def to_response(results: list) -> dict[str, Any]:
            answers = iter(results)
            responses = []
            for binding in bindings:
                error = binding if isinstance(binding, Exception) else next(answers).exception
                responses.append({"error_code": Errors.for_exception(error).code if error else 0,
                                  "error_message": str(error) if error else None})  # fmt: skip
            return {"throttle_time_ms": 0, "creation_responses": responses}

        self._on_result(request, self.controller.create_acls(valid), to_response)

    def handle_delete_acls(self, request: Request) -> None:
        self._authorize_cluster_operation(request, Operation.ALTER)
        filters = [AclBindingFilter.from_wire(f) for f in request.body["filters"]]

        def to_response(results: list) -> dict[str, Any]:
            responses = []
            for result in results:
                if result.exception is not None:
                    error = Errors.for_exception(result.exception)
                    responses.append({"error_code": error.code, "error_message": str(result.exception),
                                      "matching_acls": []})  # fmt: skip
                else:
                    matching = [
                        {"error_code": 0, "error_message": None, **binding_to_wire(b)} for b in result.deleted
                    ]
                    responses.append({"error_code": 0, "error_message": None, "matching_acls": matching})
            return {"throttle_time_ms": 0, "filter_responses": responses}

        self._on_result(request, self.controller.delete_acls(filters), to_response)

    def handle_api_versions_request(self, request: Request) -> None:
        if request.unsupported_version:
            # KIP-35: the v0 layout with UNSUPPORTED_VERSION and the versions we have, so a client can
            # retry at one of them (as the broker's KafkaApis answers).
            body = {
                "error_code": Errors.UNSUPPORTED_VERSION.code,
                "api_versions": self.api_version_manager.api_versions,
            }
            frame = encode(RESPONSE_HEADER, {"correlation_id": request.header.correlation_id})
            self._send_frame(request, frame + encode(API_VERSIONS_RESPONSE_V0, body))
            return
        self._send_response(request, self.api_version_manager.api_versions_response(0))

    def handle_legacy_alter_configs(self, request: Request) -> None:
        responses: list[dict[str, Any]] = []
        duplicates: set[ConfigResource] = set()
        changes: dict[ConfigResource, dict[str, str | None]] = {}
        for resource in request.body["resources"]:
            kind = _resource_type(resource["resource_type"])
            if kind is ConfigResourceType.UNKNOWN:
                message = f"Unknown resource type {resource['resource_type']}."
                responses.append(_resource_error(resource, Errors.UNSUPPORTED_VERSION, message))
                continue
            config_resource = ConfigResource(kind, resource["resource_name"])
            if config_resource in duplicates:
                continue
            if not self._may_alter_configs(request, config_resource):
                responses.append(_resource_error(resource, _CONFIG_AUTHORIZATION_ERRORS[kind], None))
                continue
            configs = {c["config_name"]: c["config_value"] for c in resource["config_entries"]}
            if changes.pop(config_resource, None) is not None:
                duplicates.add(config_resource)
                responses.append(_resource_error(resource, Errors.INVALID_REQUEST, "Duplicate resource."))
            else:
                changes[config_resource] = configs

        def to_response(results: dict[ConfigResource, Any]) -> dict[str, Any]:
            for config_resource, error in results.items():
                responses.append({
                    "error_code": error.error.code, "error_message": error.message,
                    "resource_type": int(config_resource.type), "resource_name": config_resource.name,
                })  # fmt: skip
            return {"throttle_time_ms": 0, "resources": responses}

        future = self.controller.legacy_alter_configs(changes, request.body["validate_only"])
        self._on_result(request, future, to_response)

    def handle_create_partitions(self, request: Request) -> None:
        body = request.body
        seen: set[str] = set()
        duplicates: set[str] = set()
        for topic in body["topic_partitions"]:
            (duplicates if topic["topic"] in seen else seen).add(topic["topic"])
        topics = [t for t in body["topic_partitions"] if t["topic"] not in duplicates]
        refused = [
            t["topic"] for t in topics if not self._authorize(request, Operation.ALTER, _topic(t["topic"]))
        ]
        topics = [t for t in topics if t["topic"] not in refused]

        def to_response(results: list[dict[str, Any]]) -> dict[str, Any]:
            errors = [
                {
                    "topic": name,
                    "error_code": Errors.INVALID_REQUEST.code,
                    "error_message": "Duplicate topic name.",
                }
                for name in sorted(duplicates)
            ]
            errors += [_topic_error(name, Errors.TOPIC_AUTHORIZATION_FAILED, None) for name in refused]
            return {"throttle_time_ms": 0, "topic_errors": errors + list(results)}

        self._on_result(
            request, self.controller.create_partitions(topics, body["validate_only"]), to_response
        )

    # -- authorization (3.3's AuthHelper) ------------------------------------------------------------------

    def _authorize(self, request: Request, operation: Operation, resource: Resource) -> bool:
        """May the request's principal do ``operation`` on ``resource``? A forwarded request's
        principal is the client's the broker authenticated, which its Envelope carried."""
        return self.authorizer is None or self.authorizer.authorize(request.session, operation, resource)

    def _authorize_cluster_operation(self, request: Request, operation: Operation) -> None:
        """3.3's ``authorizeClusterOperation``: the whole request refused, as ``handle_error``
        answers a CLUSTER_AUTHORIZATION_FAILED."""
        if not self._authorize(request, operation, CLUSTER_RESOURCE):
            raise Errors.CLUSTER_AUTHORIZATION_FAILED.exception(
                f"Request {request.api.api_name} needs {operation.name} on the cluster, which "
                f"{request.principal} does not have"
            )

    def _may_alter_configs(self, request: Request, resource: ConfigResource) -> bool:
        """ALTER_CONFIGS on the cluster for a broker's configs, on the topic for a topic's."""
        if resource.type in (ConfigResourceType.BROKER, ConfigResourceType.BROKER_LOGGER):
            return self._authorize(request, Operation.ALTER_CONFIGS, CLUSTER_RESOURCE)
        if resource.type == ConfigResourceType.TOPIC:
            return self._authorize(request, Operation.ALTER_CONFIGS, _topic(resource.name))
        return False

    # -- answering -----------------------------------------------------------------------------------------

    def _on_result(self, request: Request, future: Future, to_body: Callable[[Any], dict[str, Any]]) -> None:
        """Answer with ``to_body`` of the future's result, or with the request's error response
        (Kafka's ``requestHelper.handleError``) if it failed."""

        def done(f: Future) -> None:
            exception = f.exception()
            if exception is not None:
                self.handle_error(request, exception)
            else:
                self._send_response(request, to_body(f.result()))

        future.add_done_callback(self._guarded(request, done))

    def _guarded(self, request: Request, callback: Callable[[Future], None]) -> Callable[[Future], None]:
        """``callback``, with a failure of its own answered as the request's error (Kafka's
        ``handlerFuture.whenComplete``): a response is owed to the connection, which stays muted
        until it gets one."""

        def run(future: Future) -> None:
            try:
                callback(future)
            except Exception as e:
                log.error("[ControllerApis nodeId=%d] Unexpected error handling request %s", self.node_id,
                          request.header, exc_info=e)  # fmt: skip
                self.handle_error(request, e)

        return run

    def handle_error(self, request: Request, exception: BaseException) -> None:
        """The request's error response for ``exception`` (Kafka's ``AbstractRequest.getErrorResponse``):
        every topic or resource it named given the error, or the top-level error code."""
        error = Errors.for_exception(exception)
        message = str(exception) if error is not Errors.UNKNOWN else None
        body = request.body
        key = request.header.api_key
        if request.api is ControllerApiKeys.ENVELOPE:  # the Envelope itself refused: no answer inside
            self._send_response(request, {"response_data": None, "error_code": error.code})
            return
        if key == ApiKeys.CREATE_TOPICS:
            topics = body.get("create_topic_requests", [])
            response = {"topic_errors": [_topic_error(t["topic"], error, message) for t in topics]}
        elif key == ApiKeys.DELETE_TOPICS:
            response = {
                "topic_error_codes": [{"topic": t, "error_code": error.code} for t in body.get("topics", [])]
            }
        elif key == ApiKeys.CREATE_PARTITIONS:
            topics = body.get("topic_partitions", [])
            response = {"topic_errors": [_topic_error(t["topic"], error, message) for t in topics]}
        elif key == ApiKeys.ALTER_CONFIGS:
            response = {"resources": [_resource_error(r, error, message) for r in body.get("resources", [])]}
        elif key == ApiKeys.CREATE_ACLS:
            answer = {"error_code": error.code, "error_message": message}
            response = {"creation_responses": [answer] * len(body.get("creations", []))}
        elif key == ApiKeys.DELETE_ACLS:
            answer = {"error_code": error.code, "error_message": message, "matching_acls": []}
            response = {"filter_responses": [answer] * len(body.get("filters", []))}
        else:
            response = _top_level_error(request, error)
        response["throttle_time_ms"] = 0
        self._send_response(request, response)

    def _send_response(self, request: Request, body: dict[str, Any]) -> None:
        header = request.header
        frame = encode_listener_response(request.api, header.api_version, header.correlation_id, body)
        if request.envelope is not None and Errors.NOT_CONTROLLER.code in error_codes(body):
            # The broker's channel looks for NOT_CONTROLLER in the Envelope's own answer, to send
            # the request again to the new controller (3.3's RequestChannel.buildResponseSend).
            self._send_enveloped(request, None, Errors.NOT_CONTROLLER)
            return
        self._send_frame(request, frame)

    def _send_frame(self, request: Request, frame: bytes) -> None:
        if request.envelope is not None:
            self._send_enveloped(request, frame, Errors.NONE)
            return
        now = self.time.nanoseconds()
        if not request.api_local_complete_ns:
            request.api_local_complete_ns = now
        request.api_remote_complete_ns = now
        self.request_channel.send_response(Response(request.processor, request, ResponseAction.SEND, [frame]))

    def _send_enveloped(self, request: Request, frame: bytes | None, error: Errors) -> None:
        """A forwarded request's answer, inside the answer to the Envelope that carried it."""
        envelope = request.envelope
        assert envelope is not None
        self._send_response(envelope, {"response_data": frame, "error_code": error.code})


def _top_level_error(request: Request, error: Errors) -> dict[str, Any]:
    """A response with only its top-level error code set, every other field empty: how Kafka
    answers a Raft RPC or a controller RPC that failed as a whole."""
    body: dict[str, Any] = {}
    for field in request.api.response_schema(request.header.api_version).fields:
        if field.name == "error_code":
            body[field.name] = error.code
        elif isinstance(field.type, ArrayOf | CompactArrayOf):
            body[field.name] = []
        elif field.default is None:
            body[field.name] = 0
    return body


# What an Envelope may carry: the client APIs a broker forwards, and DescribeQuorum.
_FORWARDABLE_APIS = frozenset({*(int(api) for api in FORWARDED_APIS), int(RaftApiKeys.DESCRIBE_QUORUM)})


def _topic(name: str) -> Resource:
    return Resource(ResourceType.TOPIC, name)


# What an AlterConfigs refused for want of ALTER_CONFIGS says, by the resource's type.
_CONFIG_AUTHORIZATION_ERRORS = {
    ConfigResourceType.BROKER: Errors.CLUSTER_AUTHORIZATION_FAILED,
    ConfigResourceType.BROKER_LOGGER: Errors.CLUSTER_AUTHORIZATION_FAILED,
    ConfigResourceType.TOPIC: Errors.TOPIC_AUTHORIZATION_FAILED,
}


def _topic_error(topic: str, error: Errors, message: str | None) -> dict[str, Any]:
    return {"topic": topic, "error_code": error.code, "error_message": message}


def _resource_error(resource: dict[str, Any], error: Errors, message: str | None) -> dict[str, Any]:
    return {
        "error_code": error.code, "error_message": message,
        "resource_type": resource["resource_type"], "resource_name": resource["resource_name"],
    }  # fmt: skip


def _resource_type(type_id: int) -> ConfigResourceType:
    """Kafka's ``ConfigResource.Type.forId``: an id it does not know is UNKNOWN."""
    try:
        return ConfigResourceType(type_id)
    except ValueError:
        return ConfigResourceType.UNKNOWN


def _read_file_records(fetch_response: dict[str, Any]) -> None:
    """Replace a Fetch answer's records, a slice of a segment file, by its bytes, on the thread that
    completed the fetch, while the slice still holds what the read saw (the broker sends such a
    slice with sendfile; the controller's Fetch answers are small, and copied)."""
    for topic in fetch_response.get("responses", []):
        for partition in topic["partitions"]:
            records = partition.get("records")
            if isinstance(records, FileRecords):
                partition["records"] = records.read_bytes()
