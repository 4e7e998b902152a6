"""The quorum on real sockets, in one process: a voter's listener (RaftSocketServer) refuses bad
frames by closing the connection and carries on, and KafkaNetworkChannel turns an unreachable voter
into a BROKER_NOT_AVAILABLE answer and a reachable one's answer into a RaftResponse.Inbound."""

from __future__ import annotations

import socket
import struct
from concurrent.futures import Future

import pytest

from kafka_lite.common.protocol.raft_messages import RaftApiKeys, encode_raft_request
from kafka_lite.common.protocol.requests import RequestHeader
from kafka_lite.common.time import SYSTEM
from kafka_lite.raft import raft_util
from kafka_lite.raft.kafka_network_channel import KafkaNetworkChannel
from kafka_lite.raft.raft_config import InetAddressSpec, RaftConfig
from kafka_lite.raft.raft_message import RaftRequest
from kafka_lite.raft.raft_util import RaftErrors
from kafka_lite.raft.tools.quorum_client import send_request
from kafka_lite.raft.tools.raft_manager import METADATA_PARTITION, KafkaRaftManager
from kafka_lite.raft.tools.test_raft_server import ByteArraySerde
from kafka_lite.utils.ports import free_ports
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

_SIZE = struct.Struct(">i")


@pytest.fixture
def voter(tmp_path):
    """Voter 1 of three, alone: voters 2 and 3 never start, so it stays Unattached (epoch 0)
    until a Vote moves it. Long timeouts keep it from standing during the test."""
    port = free_ports(3)
    connections = {i: InetAddressSpec("127.0.0.1", port + i - 1) for i in (1, 2, 3)}
    config = RaftConfig(connections, 2_000, 20, 60_000, 60_000, 60_000, 5)
    manager = KafkaRaftManager(1, tmp_path / "voter-1", config, ByteArraySerde())
    manager.startup()
    yield manager
    # Unattached, it has no leader to hand over to: the graceful shutdown only runs out its timeout.
    manager.shutdown(timeout_ms=50)


def _address(manager: KafkaRaftManager) -> tuple[str, int]:
    return ("127.0.0.1", manager.socket_server.port)


def _vote(epoch: int, candidate: int = 2) -> dict:
    return raft_util.vote_request(METADATA_PARTITION, None, epoch, candidate, 0, 0)


def _closed_by_peer(sock: socket.socket) -> bool:
    sock.settimeout(5)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def _frame(api_key: int, version: int, body: bytes) -> bytes:
    header = struct.pack(">hhi", api_key, version, 7) + struct.pack(">h", 4) + b"test"
    return _SIZE.pack(len(header) + len(body)) + header + body


@pytest.mark.parametrize(
    "payload",
    [
        _frame(99, 0, b""),  # an api key the quorum does not speak
        _frame(RaftApiKeys.VOTE, 7, b""),  # a version it does not speak
        _SIZE.pack(12) + b"\x00\x34\x00\x00" + b"\xff" * 8,  # a Vote whose header and body do not decode
        _SIZE.pack(-5),  # a negative size
    ],
    ids=["unknown-api-key", "unknown-version", "undecodable-body", "negative-size"],
)
def test_a_bad_frame_closes_its_connection_and_the_voter_carries_on(voter, payload):
    before = (voter.client.quorum().epoch(), voter.client.quorum().current_state().name())
    with socket.create_connection(_address(voter), timeout=5) as sock:
        sock.sendall(payload)
        assert _closed_by_peer(sock)
    assert (voter.client.quorum().epoch(), voter.client.quorum().current_state().name()) == before
    # The voter still answers a good Vote, on a new connection, and grants it.
    answer = send_request(_address(voter), RaftApiKeys.VOTE, _vote(epoch=1))
    partition = answer["topics"][0]["partitions"][0]
    assert (answer["error_code"], partition["error_code"], partition["vote_granted"]) == (0, 0, True)
    assert voter.client.quorum().epoch() == 1


def test_a_truncated_frame_is_dropped_with_its_connection(voter):
    frame = encode_raft_request(RequestHeader(RaftApiKeys.VOTE, 0, 3, "test"), _vote(epoch=1))
    with socket.create_connection(_address(voter), timeout=5) as sock:
        sock.sendall(_SIZE.pack(len(frame)) + frame[: len(frame) // 2])
    # The peer hung up mid-frame: nothing was handed to the client.
    wait_until(lambda: voter.socket_server.processor.connection_count() == 0, 5, "the connection to close")
    # Its slot under the listener's connections-per-address quota is given back.
    wait_until(lambda: voter.socket_server.acceptor.connection_quotas.get("127.0.0.1") == 0, 5, "the quota")
    assert voter.client.quorum().epoch() == 0
    answer = send_request(_address(voter), RaftApiKeys.VOTE, _vote(epoch=2))
    assert answer["topics"][0]["partitions"][0]["vote_granted"] is True


def test_network_channel_answers_unreachable_with_broker_not_available_and_delivers_an_answer(voter):
    channel = KafkaNetworkChannel(request_timeout_ms=2_000)
    channel.start()
    try:
        channel.update_endpoint(1, _address(voter))
        channel.update_endpoint(3, ("127.0.0.1", free_ports(1)))  # nobody listens there
        sent: list[RaftRequest.Outbound] = []
        for destination in (1, 3, 4):  # 4: no address known
            request = RaftRequest.Outbound(
                channel.new_correlation_id(),
                RaftApiKeys.VOTE,
                _vote(epoch=3),
                destination,
                SYSTEM.milliseconds(),
            )
            channel.send(request)
            sent.append(request)
        answers = [r.completion.result(timeout=5) for r in sent]
        assert [a.source_id for a in answers] == [1, 3, 4]
        assert answers[0].data["error_code"] == 0, answers[0]
        granted = answers[0].data["topics"][0]["partitions"][0]
        assert (granted["vote_granted"], granted["leader_epoch"]) == (True, 3)
        for answer in answers[1:]:
            assert RaftErrors(answer.data["error_code"]) == RaftErrors.BROKER_NOT_AVAILABLE
    finally:
        channel.close()
    assert isinstance(sent[0].completion, Future)
