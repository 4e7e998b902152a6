"""Talking to a broker byte by byte: one blocking socket, one request at a time (for tests)."""

from __future__ import annotations

import itertools
import socket
import struct

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import RequestHeader, encode_request, parse_response


class WireClient:
    def __init__(self, port: int, host: str = "127.0.0.1", timeout_s: float = 10) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout_s)
        self._ids = itertools.count(1)

    @classmethod
    def over(cls, sock: socket.socket) -> WireClient:
        """A client on a socket already connected (one end of a ``socket.socketpair()``)."""
        client = cls.__new__(cls)
        client.sock, client._ids = sock, itertools.count(1)
        return client

    def send_raw(self, payload: bytes) -> None:
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)

    def read_frame(self) -> bytes:
        (size,) = struct.unpack(">i", self._recv(4))
        return self._recv(size)

    def _recv(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise EOFError(f"connection closed after {len(data)} of {n} bytes")
            data += chunk
        return data

    def send(self, api: ApiKeys, version: int, body: dict) -> int:
        correlation_id = next(self._ids)
        self.send_raw(encode_request(RequestHeader(api, version, correlation_id, "wire-test"), body))
        return correlation_id

    def call(self, api: ApiKeys, version: int, body: dict) -> dict:
        correlation_id = self.send(api, version, body)
        got, response = parse_response(api, version, self.read_frame())
        assert got == correlation_id
        return response

    def closed_by_peer(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.sock.close()


def produce_body(topic: str, partition: int, records: bytes, acks: int = 1, version: int = 3) -> dict:
    body = {
        "acks": acks,
        "timeout": 10_000,
        "topic_data": [{"topic": topic, "data": [{"partition": partition, "record_set": records}]}],
    }
    if version >= 3:
        body["transactional_id"] = None
    return body


def partition_response(response: dict) -> dict:
    """The single partition's entry of a Produce/ListOffsets response."""
    (topic,) = response["responses"]
    (partition,) = topic["partition_responses"]
    return partition


def fetch_body(
    topic: str, offset: int = 0, max_wait: int = 0, min_bytes: int = 0, replica_id: int = -1
) -> dict:
    """A Fetch v5 body for partition 0 of ``topic`` (a consumer's unless ``replica_id`` is a broker's)."""
    return {
        "replica_id": replica_id, "max_wait_time": max_wait, "min_bytes": min_bytes, "max_bytes": 1 << 20, "isolation_level": 0,
        "topics": [{"topic": topic, "partitions": [{"partition": 0, "fetch_offset": offset, "log_start_offset": -1, "max_bytes": 1 << 20}]}],
    }  # fmt: skip


def fetched(response: dict) -> tuple[dict, bytes]:
    """The single partition's header and record bytes of a Fetch response."""
    (t,) = response["responses"]
    (p,) = t["partition_responses"]
    return p["partition_header"], bytes(p["record_set"])
