"""A KRaft broker's admin requests, sent on to the active controller and its answers handed back.

Mirrors: kafka.server.ForwardingManager and ForwardingManagerImpl
         (core/src/main/scala/kafka/server/ForwardingManager.scala, Kafka 3.3.0), with the part of
         kafka.server.DefaultAutoTopicCreationManager (AutoTopicCreationManager.scala) that sends
         the CreateTopics of an auto-created topic
Book:    beyond the book: chapter 12 (KRaft)
Differs: the Envelope embeds the request re-encoded at the table's latest version (an older
         one's missing fields filled with their defaults), where Kafka embeds the client's bytes;
         an Envelope the controller refuses closes the client's connection, where Kafka answers
         with the request's error response; no ApiVersions exchange with the controller.

In KRaft mode a broker never changes metadata itself. A CreateTopics, DeleteTopics,
CreatePartitions, AlterConfigs, CreateAcls or DeleteAcls that a client sends to any broker is
*forwarded*, and so is a DescribeQuorum (which only the quorum's leader can answer): the broker hands
it to the active controller through a ``BrokerToControllerChannelManager`` of its own (the
"forwarding" channel), and when the controller answers, the broker sends that answer to the client
as its own. The client never learns which node is the controller; it never needed to in chapter 7
either, where the ZooKeeper broker wrote znodes the controller watched.

Who asked travels with the request (KIP-590): the broker wraps it in an **Envelope** with the
principal it authenticated on the client's connection, and the controller authorizes that
principal, not the broker's (which needs only CLUSTER_ACTION, to send Envelopes at all). So the
ACLs are checked in one place, against the controller's own copy of them, and a broker cannot be
used to do what its client may not.

The channel follows the controller from node to node (NOT_CONTROLLER sends the request again to the
next one), so a forwarded request fails only when no controller answered within the channel's
retry time; the caller then hears ``None``.

The channel speaks both tables, as 3.3's one "forwarding" channel carries both the forwarded
requests and the broker's AllocateProducerIds: a client API in the client table's codec (chapter 2's
``NetworkClient``'s own), a controller RPC in the controller table's.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Callable
from typing import Any

from kafka_lite.clients.network_client import ClientRequest, ClientResponse, NetworkClient
from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.controller_messages import (
    ControllerApiKeys,
    encode_controller_request,
    parse_controller_response,
    serialize_principal,
)
from kafka_lite.common.protocol.listener_type import (
    ListenerType,
    encode_listener_request,
    parse_listener_response,
)
from kafka_lite.common.protocol.raft_messages import RaftApiKeys
from kafka_lite.common.protocol.requests import RequestHeader
from kafka_lite.common.time import Time
from kafka_lite.network.channel_builders import PLAINTEXT_CHANNEL_BUILDER, ChannelBuilder
from kafka_lite.network.request_channel import Request
from kafka_lite.network.selector import Selector
from kafka_lite.server.broker_to_controller_channel_manager import (
    BrokerToControllerChannelManager,
    BrokerToControllerRequestThread,
    ControllerNodeProvider,
    ControllerRequestCompletionHandler,
)

log = logging.getLogger(__name__)

# The client APIs a KRaft broker forwards (Kafka 3.3's KafkaApis calls maybeForwardToController for
# these, and more that kafka_lite does not serve: ACLs, quotas, SCRAM, reassignments).
FORWARDED_APIS = (
    ApiKeys.CREATE_TOPICS,
    ApiKeys.DELETE_TOPICS,
    ApiKeys.CREATE_PARTITIONS,
    ApiKeys.ALTER_CONFIGS,
    ApiKeys.CREATE_ACLS,
    ApiKeys.DELETE_ACLS,
)

# Fields a version newer than the client's added to a forwarded request, with the value the older
# version means: CreateTopics v0 has no validate_only, and a v0 request creates.
_ADDED_REQUEST_FIELDS: dict[ApiKeys, dict[str, Any]] = {ApiKeys.CREATE_TOPICS: {"validate_only": False}}


class _ForwardingNetworkClient(NetworkClient):
    """The NetworkClient with both codecs: the controller's RPCs and Raft's DescribeQuorum in the
    controller listener's, client APIs in the client table's."""

    def _encode_request(self, header: RequestHeader, body: dict) -> bytes:
        if isinstance(header.api_key, (ControllerApiKeys, RaftApiKeys)):
            return encode_controller_request(header, body)
        return super()._encode_request(header, body)

    def _parse_response(self, request: ClientRequest, payload: bytes) -> tuple[int, dict]:
        if isinstance(request.api, (ControllerApiKeys, RaftApiKeys)):
            return parse_controller_response(request.api, request.version, payload)
        return super()._parse_response(request, payload)


class ForwardingChannelManager(BrokerToControllerChannelManager):
    """The "forwarding" channel: the lifecycle channel's request thread over a network client that
    speaks the client table as well as the controller's."""

    def __init__(
        self,
        controller_node_provider: ControllerNodeProvider,
        time: Time,
        broker_id: int,
        retry_timeout_ms: int,
        request_timeout_ms: int = 30_000,
        channel_builder: ChannelBuilder = PLAINTEXT_CHANNEL_BUILDER,
    ) -> None:
        self._channel_name = "forwarding"
        self._broker_id = broker_id
        network_client = _ForwardingNetworkClient(
            Selector(time=time, channel_builder=channel_builder), str(broker_id), max_in_flight_requests_per_connection=1,
            request_timeout_ms=request_timeout_ms, time=time,
        )  # fmt: skip
        self.request_thread = BrokerToControllerRequestThread(
            network_client, controller_node_provider, time,
            f"BrokerToControllerChannelManager broker={broker_id} name=forwarding",
            request_timeout_ms, retry_timeout_ms,
        )  # fmt: skip


class ForwardingManager:
    def __init__(self, channel_manager: BrokerToControllerChannelManager) -> None:
        self.channel_manager = channel_manager

    def start(self) -> None:
        self.channel_manager.start()

    def shutdown(self) -> None:
        self.channel_manager.shutdown()

    # --8<-- [start:forward_request]
    def forward_request(self, request: Request, response_callback: Callable[[dict | None], None]) -> None:
        """Send a client's request to the active controller inside an Envelope (KIP-590), with the
        principal this broker authenticated and the client's address, so that the controller
        authorizes the client; ``response_callback`` gets the controller's answer to it, or
        ``None`` if none came in time or the controller refused the Envelope itself.

        The request is re-encoded at the table's latest version (its older version's missing
        fields filled with their defaults) and answered at it; the caller encodes the answer at the
        client's version, which leaves out the fields that version does not have."""
        api, version = request.api, request.header.api_version
        body = (
            {**_ADDED_REQUEST_FIELDS.get(api, {}), **request.body}
            if version < api.latest_version
            else request.body
        )
        header = RequestHeader(
            int(api), api.latest_version, request.header.correlation_id, request.header.client_id
        )
        envelope = {
            "request_data": encode_listener_request(ListenerType.CONTROLLER, header, body),
            "request_principal": serialize_principal(request.principal),
            "client_host_address": ipaddress.ip_address(request.client_address or "0.0.0.0").packed,
        }

        def on_complete(response: ClientResponse) -> None:
            error = Errors.for_code(response.body["error_code"])
            if error is not Errors.NONE:
                log.warning(
                    "The controller refused the Envelope of a forwarded %s: %s", api.api_name, error.name
                )
                response_callback(None)
                return
            _, answer = parse_listener_response(
                ListenerType.CONTROLLER, int(api), api.latest_version, response.body["response_data"]
            )
            response_callback(answer)

        def on_timeout() -> None:
            log.warning("Forwarded %s v%d timed out: no active controller answered", api.api_name, version)
            response_callback(None)

        self.channel_manager.send_request(
            ControllerApiKeys.ENVELOPE, envelope, ControllerRequestCompletionHandler(on_complete, on_timeout)
        )

    # --8<-- [end:forward_request]

    def create_topics(
        self, topics: list[dict[str, Any]], response_callback: Callable[[dict | None], None]
    ) -> None:
        """CreateTopics of ``topics`` (CreateTopics' ``create_topic_requests`` entries), as 3.3's
        auto-topic-creation manager sends it: the broker answers its own client at once (a topic
        being created is LEADER_NOT_AVAILABLE) and does not wait for this answer."""
        body = {"create_topic_requests": topics, "timeout": 0, "validate_only": False}

        def on_timeout() -> None:
            log.warning("An auto-created topic's CreateTopics timed out: no active controller answered")
            response_callback(None)

        # Not in an Envelope: the broker asks as itself, having checked the client's CREATE already.
        self.channel_manager.send_request(
            ApiKeys.CREATE_TOPICS, body,
            ControllerRequestCompletionHandler(lambda response: response_callback(response.body), on_timeout),
        )  # fmt: skip
