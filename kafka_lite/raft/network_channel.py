"""What the Raft client needs of the network: send a request, and number the next one.

Mirrors: org.apache.kafka.raft.NetworkChannel
         (raft/src/main/java/org/apache/kafka/raft/NetworkChannel.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

Sending never blocks: the channel completes the request's ``completion`` later, from wherever its
I/O runs, and the client only learns of it through its message queue. That keeps the client one
single-threaded loop that tests can drive with a mock channel and a mock clock (``MockNetworkChannel``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from kafka_lite.raft.raft_message import RaftRequest


class NetworkChannel(ABC):
    @abstractmethod
    def new_correlation_id(self) -> int:
        """A correlation id no other request on this channel has used."""

    @abstractmethod
    def send(self, request: RaftRequest.Outbound) -> None:
        """Send ``request``; complete its ``completion`` when the answer (or a failure) comes."""

    @abstractmethod
    def update_endpoint(self, node_id: int, address: tuple[str, int]) -> None:
        """Where ``node_id`` listens (the voters' addresses come from ``controller.quorum.voters``)."""

    def close(self) -> None:  # noqa: B027 - Kafka's default close does nothing
        pass
