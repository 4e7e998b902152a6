"""The simulated network: each node's sent requests delivered to their destination after a seeded
latency, and the answers carried back, through per-node filters that drop traffic.

Mirrors: org.apache.kafka.raft.RaftEventSimulationTest (MessageRouter, NetworkFilter, PermitAllTraffic,
         DropAllTraffic and DropOutboundRequestsFrom)
         (raft/src/test/java/org/apache/kafka/raft/RaftEventSimulationTest.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: every message waits a latency drawn from the router's random before it arrives, where Kafka
         hands it over at once; a response goes back only to the incarnation of the node that sent
         the request (a restarted node has a new channel that never sent it); ``UnreliableNetwork``
         is MIT 6.5840's unreliable labrpc network, which Kafka's simulation does not have.

A filter sits on each node and sees its traffic twice: outbound when the node sends, inbound when a
message reaches it. ``DropAllTraffic`` cuts a node off; ``DropOutboundRequestsFrom`` keeps a node
from reaching some others, and ``partition`` puts one on every node so that two sets of nodes cannot
reach each other while each set still works. A dropped request is never answered: the sender's
request times out, as over a real network that lost the packet.

``UnreliableNetwork`` is the network of the Raft tests of MIT's 6.5840 (its ``labrpc`` with ``unreliable``
and ``longreordering`` set): a message may be lost, most are held up a little, and some are held
up for longer than an election timeout, so that they arrive after messages sent later, from an
epoch that is over. A filter says how long to hold a message with ``delay_ms``; the router adds it
to the latency.
"""

from __future__ import annotations

import random as _random
from collections.abc import Iterable

from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.raft.raft_message import RaftMessage, RaftRequest, RaftResponse
from kafka_lite.raft.simulation.cluster import Cluster, RaftNode
from kafka_lite.raft.simulation.event_scheduler import EventScheduler


class NetworkFilter:
    def accept_inbound(self, message: RaftMessage) -> bool:
        return True

    def accept_outbound(self, message: RaftMessage) -> bool:
        return True

    def delay_ms(self, message: RaftMessage) -> int:
        return 0


class PermitAllTraffic(NetworkFilter):
    pass


class DropAllTraffic(NetworkFilter):
    def accept_inbound(self, message: RaftMessage) -> bool:
        return False

    def accept_outbound(self, message: RaftMessage) -> bool:
        return False


class DropOutboundRequestsFrom(NetworkFilter):
    """Requests from this node to ``unreachable`` are lost; everything else passes."""

    def __init__(self, unreachable: Iterable[int]) -> None:
        self.unreachable = frozenset(unreachable)

    def accept_outbound(self, message: RaftMessage) -> bool:
        if isinstance(message, RaftRequest.Outbound):
            return message.destination_id not in self.unreachable
        return True


class UnreliableNetwork(NetworkFilter):
    """Loses a message with ``drop_probability`` each way; holds most up to ``short_delay_ms`` and,
    with ``long_reordering``, one in ``long_delay_one_in`` for up to ``long_delay_ms`` more.

    The figures are 6.5840's: a tenth of requests and of replies lost, a short delay of up to 27 ms,
    and long delays from 200 ms to 2.2 s, longer than an election timeout (1 s here), so that an
    old leader's AppendEntries (here a Fetch answer or a BeginQuorumEpoch) can arrive after its
    successor has taken over. The seeded random is the filter's own, so a replay drops the same
    messages."""

    def __init__(
        self, random: _random.Random, drop_probability: float = 0.1, short_delay_ms: int = 27,
        long_reordering: bool = True, long_delay_one_in: int = 10, long_delay_ms: tuple[int, int] = (200, 2200),
    ) -> None:  # fmt: skip
        self._random = random
        self.drop_probability = drop_probability
        self.short_delay_ms = short_delay_ms
        self.long_reordering = long_reordering
        self.long_delay_one_in = long_delay_one_in
        self.long_delay_ms = long_delay_ms

    def accept_inbound(self, message: RaftMessage) -> bool:
        return True  # each message is judged once, when it leaves

    def accept_outbound(self, message: RaftMessage) -> bool:
        return self._random.random() >= self.drop_probability

    def delay_ms(self, message: RaftMessage) -> int:
        delay_ms = self._random.randint(0, self.short_delay_ms)
        if self.long_reordering and self._random.randrange(self.long_delay_one_in) == 0:
            delay_ms += self._random.randint(*self.long_delay_ms)
        return delay_ms


class MessageRouter:
    def __init__(
        self, cluster: Cluster, scheduler: EventScheduler, random: _random.Random, max_latency_ms: int = 2
    ) -> None:
        self._cluster = cluster
        self._scheduler = scheduler
        self._random = random
        self._max_latency_ms = max_latency_ms
        self.filters: dict[int, NetworkFilter] = {node_id: PermitAllTraffic() for node_id in cluster.nodes}
        # When a list, every message delivered, in order: (time ms, from, to, api key, "request" or
        # "response", its data as received). For pictures of a run (chapter 12's election).
        self.trace: list[tuple[int, int, int, int, str, dict]] | None = None

    def filter(self, node_id: int, network_filter: NetworkFilter) -> None:
        self.filters[node_id] = network_filter

    def partition(self, side_a: Iterable[int], side_b: Iterable[int]) -> None:
        """No request crosses between ``side_a`` and ``side_b``."""
        side_a, side_b = set(side_a), set(side_b)
        for node_id in side_a:
            self.filter(node_id, DropOutboundRequestsFrom(side_b))
        for node_id in side_b:
            self.filter(node_id, DropOutboundRequestsFrom(side_a))

    def heal(self) -> None:
        for node_id in self.filters:
            self.filter(node_id, PermitAllTraffic())

    def _latency_ms(self) -> int:
        return self._random.randint(0, self._max_latency_ms)

    # -- delivery ----------------------------------------------------------------------------------------

    def deliver_all(self) -> None:
        """Take what every running node has sent; each request arrives after its latency."""
        for node_id in sorted(self._cluster.running):
            sender = self._cluster.running[node_id]
            for request in sender.channel.drain_send_queue():
                network_filter = self.filters[node_id]
                if network_filter.accept_outbound(request):
                    self._scheduler.schedule_once(
                        lambda sender=sender, request=request: self._deliver_request(sender, request),
                        self._latency_ms() + network_filter.delay_ms(request),
                        check_invariants=False,
                    )

    def _deliver_request(self, sender: RaftNode, outbound: RaftRequest.Outbound) -> None:
        destination_id = outbound.destination_id
        inbound = RaftRequest.Inbound(
            outbound.correlation_id,
            outbound.api_key,
            _as_sent(outbound.data),
            self._cluster.time.milliseconds(),
        )
        if not self.filters[destination_id].accept_inbound(inbound):
            return
        destination = self._cluster.running.get(destination_id)
        if destination is None:
            return  # a dead node answers nothing
        if self.trace is not None:
            now = self._cluster.time.milliseconds()
            self.trace.append(
                (now, sender.node_id, destination_id, outbound.api_key, "request", inbound.data)
            )

        def on_answered(future) -> None:
            response = future.result()
            network_filter = self.filters[destination_id]
            if network_filter.accept_outbound(response):
                self._scheduler.schedule_once(
                    lambda: self._deliver_response(sender, destination_id, response),
                    self._latency_ms() + network_filter.delay_ms(response),
                    check_invariants=False,
                )

        inbound.completion.add_done_callback(on_answered)
        destination.client.handle(inbound)

    def _deliver_response(self, sender: RaftNode, source_id: int, outbound: RaftResponse.Outbound) -> None:
        inbound = RaftResponse.Inbound(
            outbound.correlation_id, outbound.api_key, _as_sent(outbound.data), source_id
        )
        if not self.filters[sender.node_id].accept_inbound(inbound):
            return
        if self._cluster.running.get(sender.node_id) is sender:
            if self.trace is not None:
                now = self._cluster.time.milliseconds()
                self.trace.append(
                    (now, source_id, sender.node_id, outbound.api_key, "response", inbound.data)
                )
            sender.channel.mock_receive(inbound)


def _as_sent(data):
    """The message as the receiver would decode it: records a leader on disk hands over as a slice
    of its segment file (sent with sendfile over a socket) arrive as bytes."""
    if isinstance(data, FileRecords):
        return data.read_bytes()
    if isinstance(data, dict):
        return {key: _as_sent(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_as_sent(value) for value in data]
    return data
