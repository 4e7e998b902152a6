"""One request to one voter (or broker) over a plain blocking socket: how a tool asks the quorum who
leads.

No Kafka twin: the small, synchronous side of Kafka 3.3's ``kafka-metadata-quorum.sh describe``
(which asks through the Admin client), written with the quorum's own codec so that a tool, a test or
a learner at a prompt can send any Raft request (DescribeQuorum above all) without a NetworkClient.
"""

from __future__ import annotations

import socket
import struct
from typing import Any

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.controller_messages import (
    ENDPOINT_TYPE_CONTROLLERS,
    ControllerApiKeys,
    encode_controller_request,
    parse_controller_response,
)
from kafka_lite.common.protocol.raft_messages import RaftApiKeys, encode_raft_request, parse_raft_response
from kafka_lite.common.protocol.requests import RequestHeader, encode_request, parse_response
from kafka_lite.raft import raft_util
from kafka_lite.raft.tools.raft_manager import METADATA_PARTITION

_SIZE = struct.Struct(">i")


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the node closed the connection")
        data += chunk
    return bytes(data)


def _exchange(sock: socket.socket, frame: bytes) -> bytes:
    sock.sendall(_SIZE.pack(len(frame)) + frame)
    (size,) = _SIZE.unpack(_read_exactly(sock, 4))
    return _read_exactly(sock, size)


def _authenticate_plain(sock: socket.socket, username: str, password: str) -> None:
    """SASL/PLAIN on a SASL_PLAINTEXT listener (a secure KRaft cluster's controllers'): SaslHandshake
    v1 naming PLAIN, then one SaslAuthenticate with the token NUL, username, NUL, password (RFC 4616). A
    refusal is a ConnectionError saying why."""
    handshake = encode_request(
        RequestHeader(ApiKeys.SASL_HANDSHAKE, 1, 0, "raft-tool"), {"mechanism": "PLAIN"}
    )
    _, answer = parse_response(ApiKeys.SASL_HANDSHAKE, 1, _exchange(sock, handshake))
    if answer["error_code"] != 0:
        raise ConnectionError(
            f"the listener does not take SASL/PLAIN (it enables {answer['enabled_mechanisms']})"
        )
    token = b"\0" + username.encode() + b"\0" + password.encode()
    authenticate = encode_request(
        RequestHeader(ApiKeys.SASL_AUTHENTICATE, 0, 1, "raft-tool"), {"sasl_auth_bytes": token}
    )
    _, answer = parse_response(ApiKeys.SASL_AUTHENTICATE, 0, _exchange(sock, authenticate))
    if answer["error_code"] != 0:
        raise ConnectionError(f"authentication as {username} failed: {answer['error_message']}")


def _round_trip(
    address: tuple[str, int], frame: bytes, timeout_s: float, login: tuple[str, str] | None = None
) -> bytes:
    """Send one request frame (without its size) and return the response frame that answers it,
    after logging in with PLAIN as ``login`` (username, password) when one is given."""
    with socket.create_connection(address, timeout=timeout_s) as sock:
        if login is not None:
            _authenticate_plain(sock, *login)
        return _exchange(sock, frame)


def send_request(
    address: tuple[str, int],
    api_key: int,
    body: dict[str, Any],
    timeout_s: float = 2.0,
    login: tuple[str, str] | None = None,
) -> dict:
    """Send one request at the API's latest version and return the decoded response body."""
    api = RaftApiKeys(api_key)
    frame = encode_raft_request(RequestHeader(api, api.latest_version, 1, "raft-tool"), body)
    answer = _round_trip(address, frame, timeout_s, login)
    _, response = parse_raft_response(api, api.latest_version, answer)
    return response


def describe_quorum(
    address: tuple[str, int], timeout_s: float = 2.0, login: tuple[str, str] | None = None
) -> dict:
    """The partition of a DescribeQuorum answer: ``error_code``, ``leader_id``, ``leader_epoch``,
    ``high_watermark`` and each voter's ``log_end_offset``. Only the leader answers without error,
    and a KRaft broker forwards the request to it; a node that takes no DescribeQuorum (a ZooKeeper
    broker) closes the connection: ConnectionError, saying so."""
    request = raft_util.describe_quorum_request(METADATA_PARTITION)
    try:
        response = send_request(address, RaftApiKeys.DESCRIBE_QUORUM, request, timeout_s, login)
    except ConnectionError as e:
        raise ConnectionError(
            f"{e}: it takes no DescribeQuorum (a ZooKeeper broker has no quorum to describe)"
        ) from None
    if response["error_code"] != 0:
        return {"error_code": response["error_code"]}
    return response["topics"][0]["partitions"][0]


def describe_cluster(
    address: tuple[str, int], timeout_s: float = 2.0, login: tuple[str, str] | None = None
) -> dict:
    """A controller's DescribeCluster v1 answer for the controllers (Kafka 3.7, KIP-919): its
    ``error_code``, ``cluster_id``, ``controller_id`` and the controllers as ``brokers``. A voter
    that is not a KRaft controller (``raft test-server``) closes the connection: ConnectionError."""
    api = ControllerApiKeys.DESCRIBE_CLUSTER
    header = RequestHeader(api, api.latest_version, 1, "raft-tool")
    frame = encode_controller_request(header, {"endpoint_type": ENDPOINT_TYPE_CONTROLLERS})
    _, response = parse_controller_response(
        api, api.latest_version, _round_trip(address, frame, timeout_s, login)
    )
    return response


def describe_cluster_of_broker(
    address: tuple[str, int], timeout_s: float = 2.0, login: tuple[str, str] | None = None
) -> dict:
    """A broker's cluster id, as ``describe_cluster`` gives a controller's (``error_code`` and
    ``cluster_id``), from a Metadata v2 answer for no topics: what Kafka 3.3's Admin
    ``describeCluster`` asks a broker that has no DescribeCluster, as kafka_lite's has none. A
    node that is not a broker (a voter) closes the connection: ConnectionError."""
    version = 2  # the first Metadata with the cluster id (KIP-78)
    frame = encode_request(RequestHeader(ApiKeys.METADATA, version, 1, "raft-tool"), {"topics": []})
    _, response = parse_response(ApiKeys.METADATA, version, _round_trip(address, frame, timeout_s, login))
    return {"error_code": 0, "cluster_id": response["cluster_id"]}


def find_leader(
    addresses: dict[int, tuple[str, int]], timeout_s: float = 0.5, login: tuple[str, str] | None = None
) -> dict | None:
    """The DescribeQuorum answer of whichever voter leads now, or None if none answers as leader."""
    for address in addresses.values():
        try:
            answer = describe_quorum(address, timeout_s, login)
        except OSError:
            continue
        if answer.get("error_code") == 0 and answer.get("leader_id", -1) >= 0:
            return answer
    return None
