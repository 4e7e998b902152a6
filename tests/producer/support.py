"""Helpers for the producer's tests: a Cluster built by hand, a proxy that loses or holds produce
responses, and a scripted broker that answers as a test tells it."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable

from kafka_lite.clients.metadata import Cluster, Node, PartitionInfo
from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import encode_response
from kafka_lite.common.record.memory_records import MemoryRecords
from tests.support.scripted_broker import ScriptedServer, read_exactly


def node(node_id: int, port: int = 0) -> Node:
    return Node(node_id, "127.0.0.1", port or 9000 + node_id)


def cluster_of(leaders: dict[tuple[str, int], int | None], nodes: dict[int, Node] | None = None) -> Cluster:
    """A cluster whose partitions ``(topic, partition)`` are led by the given node ids (None: no leader)."""
    nodes = nodes or {i: node(i) for i in {n for n in leaders.values() if n is not None}}
    partitions = {
        tp: PartitionInfo(tp[0], tp[1], None if leader is None else nodes[leader], (), ())
        for tp, leader in leaders.items()
    }
    return Cluster(nodes, partitions)


class ProduceResponseProxy:
    """A TCP proxy in front of one broker that can lose or hold the responses to ProduceRequests.

    After ``drop_next_response()`` the next produce response is lost: the proxy lets the request
    through, waits for the broker's answer, and closes the client's connection instead of forwarding
    it (then ``dropped`` is set). The broker has written the records; the client only sees a
    disconnect. After ``hold_responses()`` produce responses wait in the proxy until ``release()``:
    the records are written, and the client's requests stay in flight. Other responses always pass.
    ``produce_requests`` counts the ProduceRequests that went through."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.target_port: Callable[[], int] | None = None  # the broker's port, asked per connection
        self.produce_requests = 0
        self.dropped = threading.Event()
        self._drop_next = False
        self._released = threading.Event()
        self._released.set()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def drop_next_response(self) -> None:
        self.dropped.clear()
        self._drop_next = True

    def hold_responses(self) -> None:
        self._released.clear()

    def release(self) -> None:
        """Forward the held responses, and pass every later one (also ends a pending drop)."""
        self._drop_next = False
        self._released.set()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                broker = socket.create_connection(("127.0.0.1", self.target_port()))
            except OSError:
                client.close()
                continue
            produce_ids: set[int] = set()
            threading.Thread(target=self._requests, args=(client, broker, produce_ids), daemon=True).start()
            threading.Thread(target=self._responses, args=(broker, client, produce_ids), daemon=True).start()

    def _requests(self, client: socket.socket, broker: socket.socket, produce_ids: set[int]) -> None:
        try:
            while (frame := _read_frame(client)) is not None:
                api_key, _, correlation_id = struct.unpack_from(">hhi", frame, 4)
                if api_key == ApiKeys.PRODUCE:
                    produce_ids.add(correlation_id)
                broker.sendall(frame)
                if api_key == ApiKeys.PRODUCE:
                    self.produce_requests += 1
        except OSError:
            pass
        _close(client, broker)

    def _responses(self, broker: socket.socket, client: socket.socket, produce_ids: set[int]) -> None:
        try:
            while (frame := _read_frame(broker)) is not None:
                (correlation_id,) = struct.unpack_from(">i", frame, 4)
                if correlation_id in produce_ids:
                    if self._drop_next:
                        self._drop_next = False
                        self.dropped.set()
                        break  # the response is lost: the client's connection drops instead
                    self._released.wait(DEADLINE_S)
                client.sendall(frame)
        except OSError:
            pass
        _close(client, broker)

    def close(self) -> None:
        self.release()
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()


def _read_frame(sock: socket.socket) -> bytes | None:
    """One size-prefixed frame, prefix included; None at end of stream."""
    head = read_exactly(sock, 4)
    if head is None:
        return None
    body = read_exactly(sock, struct.unpack(">i", head)[0])
    return None if body is None else head + body


def _close(*socks: socket.socket) -> None:
    for sock in socks:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()


# -- a scripted broker -------------------------------------------------------------------------------------

DEADLINE_S = 10
NOT_LEADER_FOR_PARTITION = Errors.NOT_LEADER_FOR_PARTITION.code
SILENT = "silent"  # never answer this request
HOLD = "hold"  # answer 0 once the test releases it; (HOLD, code) answers code once released
OUT_OF_ORDER_SEQUENCE_NUMBER = Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code
DUPLICATE_SEQUENCE_NUMBER = Errors.DUPLICATE_SEQUENCE_NUMBER.code
MESSAGE_TOO_LARGE = Errors.MESSAGE_TOO_LARGE.code


class ScriptedBroker(ScriptedServer):
    """Node 0 of a one-broker cluster leading ``t-0`` and ``t-1``; answers Metadata v1 truthfully and
    each ProduceRequest with the next entry of ``script`` (an error code, SILENT, HOLD or (HOLD, code);
    0 when the script has run out). Keeps every ProduceRequest's batches, per partition, as raw bytes.
    InitProducerId hands out producer ids 1000, 1001, ..."""

    def __init__(self, script: list | None = None) -> None:
        self.script = list(script or [])
        self.produce_requests: list[dict] = []  # {"acks": .., "batches": {(topic, partition): bytes}}
        self.metadata_requests = 0
        self.producer_ids_given = 0
        self.release = threading.Event()
        self._next_offset = {("t", 0): 0, ("t", 1): 0}
        super().__init__()

    def answer(self, header, body) -> bytes | None:
        if header.api_key == ApiKeys.METADATA:
            self.metadata_requests += 1
            return encode_response(ApiKeys.METADATA, 1, header.correlation_id, self.metadata_body())
        if header.api_key == ApiKeys.INIT_PRODUCER_ID:
            body = {"throttle_time_ms": 0, "error_code": 0, "producer_id": 1000 + self.producer_ids_given,
                    "producer_epoch": 0}  # fmt: skip
            self.producer_ids_given += 1
            return encode_response(ApiKeys.INIT_PRODUCER_ID, 0, header.correlation_id, body)
        batches = {
            (t["topic"], p["partition"]): bytes(p["record_set"])
            for t in body["topic_data"]
            for p in t["data"]
        }
        self.produce_requests.append({"acks": body["acks"], "batches": batches})
        action = self.script.pop(0) if self.script else 0
        if action == SILENT or body["acks"] == 0:
            return None
        if action == HOLD or isinstance(action, tuple):
            self.release.wait(DEADLINE_S)
            action = 0 if action == HOLD else action[1]
        responses = []
        for (topic, partition), records in batches.items():
            count = sum(1 for _ in MemoryRecords(records).records())
            offset = self._next_offset[(topic, partition)] if action == 0 else -1
            if action == 0:
                self._next_offset[(topic, partition)] += count
            responses.append({"topic": topic, "partition_responses": [
                {"partition": partition, "error_code": action, "base_offset": offset, "log_append_time": -1}]})  # fmt: skip
        return encode_response(
            ApiKeys.PRODUCE, 3, header.correlation_id, {"responses": responses, "throttle_time_ms": 0}
        )

    def metadata_body(self, topic: str = "t", partitions: int = 2) -> dict:
        return super().metadata_body(topic, partitions)

    def close(self) -> None:
        self.release.set()  # a handler held by HOLD answers now, so the server closes cleanly
        super().close()
