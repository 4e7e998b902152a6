"""The simulated network: each node's sent requests delivered to their destination after a seeded
latency, and the answers carried back, through per-node filters that drop traffic.

Mirrors: org.apache.kafka.raft.RaftEventSimulationTest (MessageRouter, NetworkFilter, PermitAllTraffic,
         DropAllTraffic and DropOutboundRequestsFrom)
         (raft/src/test/java/org/apache/kafka/raft/RaftEventSimulationTest.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: every message waits a latency drawn from the router's random before it arrives, where Kafka
         hands it over at once; a response goes back only to the incarnation of the node that sent
         the request (a restarted node has a new channel that never sent it).

A filter sits on each node and sees its traffic twice: outbound when the node sends, inbound when a
message reaches it. ``DropAllTraffic`` cuts a node off; ``DropOutboundRequestsFrom`` keeps a node
from reaching some others, and ``partition`` puts one on every node so that two sets of nodes cannot
reach each other while each set still works. A dropped request is never answered: the sender's
request times out, as over a real network that lost the packet.
"""

from __future__ import annotations

import random as _random
from collections.abc import Iterable

from kafka_lite.raft.raft_message import RaftMessage, RaftRequest, RaftResponse
from kafka_lite.raft.simulation.cluster import Cluster, RaftNode
from kafka_lite.raft.simulation.event_scheduler import EventScheduler


class NetworkFilter:
    def accept_inbound(self, message: RaftMessage) -> bool:
        return True

    def accept_outbound(self, message: RaftMessage) -> bool:
        return True


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


class MessageRouter:
    def __init__(
        self, cluster: Cluster, scheduler: EventScheduler, random: _random.Random, max_latency_ms: int = 2
    ) -> None:
        self._cluster = cluster
        self._scheduler = scheduler
        self._random = random
        self._max_latency_ms = max_latency_ms
        self.filters: dict[int, NetworkFilter] = {node_id: PermitAllTraffic() for node_id in cluster.nodes}

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
                if self.filters[node_id].accept_outbound(request):
                    self._scheduler.schedule_once(
                        lambda sender=sender, request=request: self._deliver_request(sender, request),
                        self._latency_ms(),
                        check_invariants=False,
                    )

    def _deliver_request(self, sender: RaftNode, outbound: RaftRequest.Outbound) -> None:
        destination_id = outbound.destination_id
        inbound = RaftRequest.Inbound(
            outbound.correlation_id, outbound.api_key, outbound.data, self._cluster.time.milliseconds()
        )
        if not self.filters[destination_id].accept_inbound(inbound):
            return
        destination = self._cluster.running.get(destination_id)
        if destination is None:
            return  # a dead node answers nothing

        def on_answered(future) -> None:
            response = future.result()
            if self.filters[destination_id].accept_outbound(response):
                self._scheduler.schedule_once(
                    lambda: self._deliver_response(sender, destination_id, response),
                    self._latency_ms(),
                    check_invariants=False,
                )

        inbound.completion.add_done_callback(on_answered)
        destination.client.handle(inbound)

    def _deliver_response(self, sender: RaftNode, source_id: int, outbound: RaftResponse.Outbound) -> None:
        inbound = RaftResponse.Inbound(outbound.correlation_id, outbound.api_key, outbound.data, source_id)
        if not self.filters[sender.node_id].accept_inbound(inbound):
            return
        if self._cluster.running.get(sender.node_id) is sender:
            sender.channel.mock_receive(inbound)
