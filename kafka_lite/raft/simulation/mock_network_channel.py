"""A network channel with no network: the test (or the simulator) reads what the client sent and
hands it the answers.

Mirrors: org.apache.kafka.raft.MockNetworkChannel
         (raft/src/test/java/org/apache/kafka/raft/MockNetworkChannel.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the known destinations are those given to ``update_endpoint`` (Kafka's takes them in its
         constructor), and a request is awaited from its send, not from its drain.

``send`` keeps the request in the send queue and remembers it by correlation id; ``mock_receive``
completes the matching request's future with a response, as a real channel does when the answer
arrives. Correlation ids come from a counter shared by every channel of one simulated cluster, so
that no two nodes' ids collide (Kafka passes an ``AtomicInteger`` in for the same reason).

Beside the simulator, as Kafka keeps it beside its tests: the runtime never imports it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from kafka_lite.common.errors import IllegalArgumentException
from kafka_lite.raft.network_channel import NetworkChannel
from kafka_lite.raft.raft_message import RaftRequest, RaftResponse


class MockNetworkChannel(NetworkChannel):
    def __init__(self, correlation_id_counter: Iterator[int] | None = None) -> None:
        self._correlation_id_counter = correlation_id_counter or itertools.count()
        self._send_queue: list[RaftRequest.Outbound] = []
        self._awaiting_response: dict[int, RaftRequest.Outbound] = {}
        self._address_cache: dict[int, tuple[str, int]] = {}

    def new_correlation_id(self) -> int:
        return next(self._correlation_id_counter)

    def send(self, request: RaftRequest.Outbound) -> None:
        if request.destination_id not in self._address_cache:
            raise IllegalArgumentException(
                f"Attempted to send to destination {request.destination_id}, but its address is not yet known"
            )
        self._send_queue.append(request)
        self._awaiting_response[request.correlation_id] = request

    def update_endpoint(self, node_id: int, address: tuple[str, int]) -> None:
        self._address_cache[node_id] = address

    def drain_send_queue(self) -> list[RaftRequest.Outbound]:
        """Everything sent since the last drain, oldest first."""
        return self.drain_sent_requests(None)

    def drain_sent_requests(self, api_key: int | None) -> list[RaftRequest.Outbound]:
        """The sent requests of ``api_key`` (all of them when None), taken out of the send queue."""
        taken = [r for r in self._send_queue if api_key is None or r.api_key == api_key]
        self._send_queue = [r for r in self._send_queue if r not in taken]
        return taken

    def mock_receive(self, response: RaftResponse.Inbound) -> None:
        """Deliver ``response`` to the request it answers."""
        request = self._awaiting_response.pop(response.correlation_id, None)
        if request is None:
            raise IllegalArgumentException(
                f"Received response for a request which is not being tracked: {response}"
            )
        request.completion.set_result(response)
