"""How the controller talks to brokers: one queue and one sending thread per broker.

Mirrors: kafka.controller.ControllerChannelManager, RequestSendThread and ControllerBrokerRequestBatch
         (core/src/main/scala/kafka/controller/ControllerChannelManager.scala, Kafka 0.10.1)
Book:    chapter 7, 7.1.7 (the controller's channel manager)
Differs: the sending thread drives kafka_lite's own ``NetworkClient`` (chapter 2) the way Kafka's
         drives its ``NetworkClient`` with ``NetworkClientBlockingOps``. UpdateMetadata goes out at
         version 3 (Kafka 0.10.2), where 0.10.1 sends 2: see ``update_metadata_live_brokers``.

A thread per broker means a slow or dead broker delays only its own requests. Each thread sends one
request at a time and retries it until it gets an answer (or the broker is removed), so a broker sees
the controller's requests in the order they were queued.

``ControllerBrokerRequestBatch`` collects what one controller decision must tell the brokers
(LeaderAndIsr per broker, UpdateMetadata to every live broker, StopReplica) and sends it in
Kafka's order in ``send_requests_to_brokers``.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kafka_lite.clients.network_client import ClientRequest, ClientResponse, NetworkClient
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.network.channel_builders import PLAINTEXT_CHANNEL_BUILDER, ChannelBuilder
from kafka_lite.network.selector import Selector
from kafka_lite.zk.zk_utils import Broker, LeaderAndIsr

log = logging.getLogger(__name__)

# UpdateMetadata's security_protocol_type ids (Kafka's ``SecurityProtocol.id``)
SECURITY_PROTOCOL_IDS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}


# --8<-- [start:update_metadata_live_brokers]
def update_metadata_live_brokers(brokers: Iterable[Broker]) -> tuple[int, list[dict]]:
    """UpdateMetadata's version and its ``live_brokers``: every end point of every broker, each with
    its listener name. This is Kafka 0.10.2's request (KIP-103), not 0.10.1's: 0.10.1 sends version 2,
    whose end points carry only a security protocol, so a broker can have one end point per protocol
    and the protocol is the listener's name. A broker with a SASL_PLAINTEXT listener for clients and
    a PLAINTEXT one named INTERNAL for the brokers needs version 3's ``listener_name`` for the
    receiving broker to tell its listeners apart, and answer each client with its own listener's
    addresses."""
    live_brokers = [
        {
            "id": b.id,
            "end_points": [
                {
                    "port": e.port,
                    "host": e.host,
                    "listener_name": e.listener_name,
                    "security_protocol_type": SECURITY_PROTOCOL_IDS[e.security_protocol],
                }
                for e in b.endpoints
            ],
            "rack": b.rack,
        }
        for b in brokers
    ]
    return 3, live_brokers


# --8<-- [end:update_metadata_live_brokers]


@dataclass
class _QueueItem:
    api: ApiKeys
    version: int
    body: dict[str, Any]
    callback: Callable[[dict], None] | None


class RequestSendThread(threading.Thread):
    def __init__(
        self,
        controller_id: int,
        broker_id: int,
        host: str,
        port: int,
        timeout_ms: int,
        time: Time,
        channel_builder: ChannelBuilder = PLAINTEXT_CHANNEL_BUILDER,
    ) -> None:
        super().__init__(name=f"Controller-{controller_id}-to-broker-{broker_id}-send-thread", daemon=True)
        self.broker_id = broker_id
        self.node = str(broker_id)
        self.time = time
        self.queue: queue.Queue[_QueueItem | None] = queue.Queue()
        self.client = NetworkClient(
            Selector(time=time, channel_builder=channel_builder),
            f"controller-{controller_id}",
            request_timeout_ms=timeout_ms,
            time=time,
        )
        self.client.set_node(self.node, host, port)
        self._running = threading.Event()
        self._running.set()

    def run(self) -> None:
        while self._running.is_set():
            item = self.queue.get()
            if item is None:
                break
            response = self._send_until_answered(item)
            if response is not None and item.callback is not None:
                try:
                    item.callback(response)
                except Exception:
                    log.exception("Controller callback for %s failed", item.api.api_name)
        self.client.close_all()

    # --8<-- [start:send]
    def _send_until_answered(self, item: _QueueItem) -> dict | None:
        while self._running.is_set():
            if not self._await_ready(5000):
                log.info(
                    "Controller cannot reach broker %d yet; retrying %s", self.broker_id, item.api.api_name
                )
                continue
            done: list[ClientResponse] = []
            self.client.send(
                ClientRequest(self.node, item.api, item.version, item.body, callback=done.append),
                self.time.milliseconds(),
            )
            while not done and self._running.is_set():
                self.client.poll(100)
            if done and not done[0].disconnected:
                return done[0].body
            log.info(
                "Broker %d disconnected before answering %s; resending", self.broker_id, item.api.api_name
            )
        return None

    # --8<-- [end:send]

    def _await_ready(self, timeout_ms: int) -> bool:
        deadline = self.time.milliseconds() + timeout_ms
        while self._running.is_set():
            now = self.time.milliseconds()
            if self.client.ready(self.node, now):
                return True
            if now >= deadline:
                return False
            self.client.poll(min(100, deadline - now), now)
        return False

    def shutdown(self) -> None:
        self._running.clear()
        self.queue.put(None)


class ControllerChannelManager:
    def __init__(
        self,
        controller_id: int,
        timeout_ms: int = 30_000,
        time: Time = SYSTEM,
        channel_builder: ChannelBuilder = PLAINTEXT_CHANNEL_BUILDER,
    ) -> None:
        self.controller_id = controller_id
        self.channel_builder = channel_builder
        self.timeout_ms = timeout_ms
        self.time = time
        self._threads: dict[int, RequestSendThread] = {}
        self._lock = threading.Lock()

    def add_broker(self, broker_id: int, host: str, port: int) -> None:
        with self._lock:
            if broker_id in self._threads:
                return
            thread = RequestSendThread(
                self.controller_id, broker_id, host, port, self.timeout_ms, self.time, self.channel_builder
            )
            self._threads[broker_id] = thread
            thread.start()

    def remove_broker(self, broker_id: int) -> None:
        with self._lock:
            thread = self._threads.pop(broker_id, None)
        if thread is not None:
            thread.shutdown()

    def send_request(
        self,
        broker_id: int,
        api: ApiKeys,
        version: int,
        body: dict,
        callback: Callable[[dict], None] | None = None,
    ) -> None:
        with self._lock:
            thread = self._threads.get(broker_id)
        if thread is None:
            log.info("Not sending %s to broker %d: it is not live", api.api_name, broker_id)
            return
        thread.queue.put(_QueueItem(api, version, body, callback))

    def shutdown(self) -> None:
        with self._lock:
            threads, self._threads = list(self._threads.values()), {}
        for t in threads:
            t.shutdown()
        for t in threads:
            t.join(5)


class ControllerBrokerRequestBatch:
    """What one controller step has to tell the brokers, sent together at the end of the step."""

    def __init__(self, controller) -> None:
        self.controller = controller
        self.leader_and_isr: dict[int, dict[TopicPartition, dict]] = {}
        # broker id -> the partitions its UpdateMetadata names: a map per broker, as 0.10.1's
        # updateMetadataRequestMap, so a broker hears what the step named for it
        self.update_metadata: dict[int, dict[TopicPartition, dict]] = {}
        # broker id -> (topic, partition, delete, callback)
        self.stop_replica: dict[int, list[tuple[str, int, bool, Callable[[dict, int], None] | None]]] = {}

    def new_batch(self) -> None:
        if self.leader_and_isr or self.update_metadata or self.stop_replica:
            raise RuntimeError(
                "Controller to broker state change requests batch is not empty while creating a new one"
            )

    def _partition_state(self, tp: TopicPartition) -> dict | None:
        ctx = self.controller.context
        leadership = ctx.partition_leadership.get(tp)
        if leadership is None:
            return None
        leader_and_isr, controller_epoch = leadership
        return {
            "topic": tp[0],
            "partition": tp[1],
            "controller_epoch": controller_epoch,
            "leader": leader_and_isr.leader,
            "leader_epoch": leader_and_isr.leader_epoch,
            "isr": list(leader_and_isr.isr),
            "zk_version": leader_and_isr.zk_version,
            "replicas": list(ctx.partition_replica_assignment.get(tp, [])),
        }

    def add_leader_and_isr_request_for_brokers(self, broker_ids: list[int], tp: TopicPartition) -> None:
        state = self._partition_state(tp)
        if state is None:
            return
        for b in broker_ids:
            if b >= 0:
                self.leader_and_isr.setdefault(b, {})[tp] = state
        self.add_update_metadata_request_for_brokers(
            self.controller.context.live_or_shutting_down_broker_ids(), [tp]
        )

    def add_stop_replica_request_for_brokers(
        self,
        broker_ids: list[int],
        tp: TopicPartition,
        delete: bool,
        callback: Callable[[dict, int], None] | None = None,
    ) -> None:
        """StopReplica for ``tp`` to ``broker_ids``; ``callback(response body, broker id)`` hears the
        answer (topic deletion's, on the broker's sending thread)."""
        for b in broker_ids:
            self.stop_replica.setdefault(b, []).append((tp[0], tp[1], delete, callback))

    def add_update_metadata_request_for_brokers(self, broker_ids, partitions=None) -> None:
        """UpdateMetadata for ``partitions`` (all known ones when None) to ``broker_ids``. Each broker
        gets an UpdateMetadata even when no partition is named: its live brokers are news too."""
        ctx = self.controller.context
        brokers = [b for b in broker_ids if b >= 0]
        for b in brokers:
            self.update_metadata.setdefault(b, {})
        if partitions is None:
            partitions = list(ctx.partition_leadership)
        for tp in partitions:
            state = self._partition_state(tp)
            if state is None:
                continue  # no leader assigned yet: nothing to tell
            if self.controller.is_topic_queued_up_for_deletion(tp[0]):
                # A partition being deleted goes out with leader -2: each broker drops it from its
                # metadata cache and clients hear UNKNOWN_TOPIC_OR_PARTITION from then on.
                state = {**state, "leader": LeaderAndIsr.LEADER_DURING_DELETE}
            for b in brokers:
                self.update_metadata[b][tp] = state

    # --8<-- [start:send_requests_to_brokers]
    def send_requests_to_brokers(self, controller_epoch: int) -> None:
        """LeaderAndIsr to each broker, then UpdateMetadata to each, then StopReplica: Kafka's order."""
        ctx = self.controller.context
        cid = self.controller.broker_id
        channel = self.controller.channel_manager
        for broker_id, states in self.leader_and_isr.items():
            leaders = {s["leader"] for s in states.values()}
            # the leaders' inter-broker addresses: the followers fetch from them there
            listener = self.controller.inter_broker_listener_name
            live_leaders = [
                {"id": b.id, "host": b.end_point(listener).host, "port": b.end_point(listener).port}
                for b in ctx.live_or_shutting_down_brokers()
                if b.id in leaders
            ]
            body = {
                "controller_id": cid,
                "controller_epoch": controller_epoch,
                "partition_states": list(states.values()),
                "live_leaders": live_leaders,
            }
            channel.send_request(
                broker_id, ApiKeys.LEADER_AND_ISR, 0, body, self.controller.on_leader_and_isr_response
            )
        if self.update_metadata:
            version, live_brokers = update_metadata_live_brokers(ctx.live_or_shutting_down_brokers())
            for broker_id, states in sorted(self.update_metadata.items()):
                body = {
                    "controller_id": cid,
                    "controller_epoch": controller_epoch,
                    "partition_states": list(states.values()),
                    "live_brokers": live_brokers,
                }
                channel.send_request(broker_id, ApiKeys.UPDATE_METADATA, version, body)
        for broker_id, replicas in self.stop_replica.items():
            # One request per replica, as 0.10.1 sends them (the protocol takes many partitions, and
            # later Kafkas group them): each answer reaches its own replica's callback.
            for t, p, delete, callback in replicas:
                body = _stop_replica(cid, controller_epoch, delete, [(t, p)])
                answer = (
                    None if callback is None else (lambda response, cb=callback, b=broker_id: cb(response, b))
                )
                channel.send_request(broker_id, ApiKeys.STOP_REPLICA, 0, body, answer)
        self.leader_and_isr.clear()
        self.update_metadata.clear()
        self.stop_replica.clear()

    # --8<-- [end:send_requests_to_brokers]


def _stop_replica(controller_id: int, controller_epoch: int, delete: bool, partitions) -> dict:
    return {
        "controller_id": controller_id,
        "controller_epoch": controller_epoch,
        "delete_partitions": delete,
        "partitions": [{"topic": t, "partition": p} for t, p in partitions],
    }
