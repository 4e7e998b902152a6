"""The messages the Raft client exchanges with its peers: requests and responses, each with the
correlation id that pairs them, as plain schema dicts.

Mirrors: org.apache.kafka.raft.RaftMessage, RaftRequest and RaftResponse
         (raft/src/main/java/org/apache/kafka/raft/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: ``data`` is the body dict of ``raft_messages.py``'s schemas with its ``api_key`` beside it,
         where Kafka's is a generated ``ApiMessage`` that knows its own key; the completion is a
         ``concurrent.futures.Future``, Kafka's a ``CompletableFuture``.

Each of RaftRequest and RaftResponse has two nested classes, Inbound and Outbound, as Kafka's do.
The client sees four kinds of message, and the direction decides who completes what:

* ``RaftRequest.Outbound``: a request this node sends; the network channel completes its
  ``completion`` with the ``RaftResponse.Inbound`` (or an exception when the send fails).
* ``RaftRequest.Inbound``: a peer's request; the client completes its ``completion`` with the
  ``RaftResponse.Outbound`` it answers with, and the channel writes that back.
* ``RaftResponse.Inbound``: the answer to one of our requests, named by ``source_id``.
* ``RaftResponse.Outbound``: our answer to a peer.

Both inbound kinds reach the client through one queue, so ``KafkaRaftClient.poll`` handles them on
one thread, in arrival order, with no locks in the handlers.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RaftMessage:
    correlation_id: int
    api_key: int
    data: dict[str, Any]


class RaftRequest:
    """The two directions of a request (Kafka's RaftRequest and its nested classes)."""

    @dataclass
    class Inbound(RaftMessage):
        created_time_ms: int = 0
        completion: Future = field(default_factory=Future, repr=False)

    @dataclass
    class Outbound(RaftMessage):
        destination_id: int = -1
        created_time_ms: int = 0
        completion: Future = field(default_factory=Future, repr=False)


class RaftResponse:
    """The two directions of a response (Kafka's RaftResponse and its nested classes)."""

    @dataclass
    class Inbound(RaftMessage):
        source_id: int = -1

    @dataclass
    class Outbound(RaftMessage):
        pass
