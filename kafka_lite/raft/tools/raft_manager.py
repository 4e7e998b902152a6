"""One Raft voter as a process: its log and quorum-state file on disk, its listener, its channel to
the other voters, and the thread that polls the Raft client.

Mirrors: kafka.raft.KafkaRaftManager and RaftIoThread
         (core/src/main/scala/kafka/raft/RaftManager.scala, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: no snapshot generation and no metrics; run alone (``kafka-lite raft test-server``) it
         serves its own listener, the raft layer's RaftSocketServer; a Fetch is held for at most
         half the fetch timeout (see FETCH_MAX_WAIT_MS).

What KafkaRaftManager builds, in its order: the log (``<data-dir>/__cluster_metadata-0``, a
KafkaMetadataLog), the quorum-state file (``quorum-state``, where the epoch and vote survive a
crash), the network channel with every voter's address, the expiration service (the timing wheel)
and a blocking message queue, then the KafkaRaftClient over all of them. ``startup`` opens the
listener, initializes the client (reading the quorum-state file) and starts the RaftIoThread, which
does nothing but ``client.poll()``: the client sleeps in its message queue until a message, a
wakeup or its next timer, so an idle voter costs no CPU.

Inside a controller (``server/kafka_raft_server.py``) it serves no listener of its own, as Kafka's
never does: the controller's socket server takes the voters' requests, and ControllerApis hands each
Raft RPC to ``handle_request``, which wraps it in a ``RaftRequest.Inbound`` for the client and gives
back the future of its answer (Kafka's ``KafkaRaftManager.handleRequest``).
"""

from __future__ import annotations

import logging
import random
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.network.channel_builders import PLAINTEXT_CHANNEL_BUILDER, ChannelBuilder
from kafka_lite.raft.file_based_state_store import FileBasedStateStore
from kafka_lite.raft.kafka_metadata_log import KafkaMetadataLog
from kafka_lite.raft.kafka_network_channel import KafkaNetworkChannel
from kafka_lite.raft.kafka_raft_client import KafkaRaftClient
from kafka_lite.raft.raft_client import LeaderAndEpoch, Listener, RecordSerde
from kafka_lite.raft.raft_config import InetAddressSpec, RaftConfig
from kafka_lite.raft.raft_message import RaftRequest
from kafka_lite.raft.raft_message_queue import BlockingMessageQueue
from kafka_lite.raft.raft_socket_server import RaftSocketServer
from kafka_lite.raft.timing_wheel_expiration_service import TimingWheelExpirationService

log = logging.getLogger(__name__)

METADATA_PARTITION = TopicPartition("__cluster_metadata", 0)
# Kafka's KafkaRaftManager: the leader holds a follower's Fetch for up to this long. A voter run
# with a fetch timeout shorter than twice this (the kill/restart test's profile) holds it for half
# the timeout instead: a follower that waits out a held Fetch must still hear from its leader in
# time, or an idle quorum would elect a new leader for nothing.
FETCH_MAX_WAIT_MS = 500


class RaftIoThread(threading.Thread):
    """Polls the client until shut down (Kafka's RaftIoThread, a ShutdownableThread)."""

    def __init__(self, client: KafkaRaftClient, name: str) -> None:
        super().__init__(name=name, daemon=True)
        self._client = client
        self._running = threading.Event()
        self._running.set()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while self._running.is_set():
                self._client.poll()
        except BaseException as e:  # a bug in a handler: stop polling and let the process say so
            log.exception("Raft IO thread failed")
            self.error = e

    def initiate_shutdown(self, timeout_ms: int) -> None:
        """Kafka's: a graceful shutdown of the client (a leader resigns and tells the voters, so
        the next election starts now), and the loop stops once that is done or has timed out."""
        self._client.shutdown(timeout_ms).add_done_callback(lambda _: self._running.clear())


class KafkaRaftManager:
    def __init__(
        self,
        node_id: int,
        data_dir: Path,
        raft_config: RaftConfig,
        serde: RecordSerde,
        time: Time = SYSTEM,
        fetch_max_wait_ms: int = FETCH_MAX_WAIT_MS,
        serve_own_listener: bool = True,
        channel_builder: ChannelBuilder = PLAINTEXT_CHANNEL_BUILDER,
    ) -> None:
        self.node_id = node_id
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.raft_config = raft_config
        self.log = KafkaMetadataLog.create(
            METADATA_PARTITION,
            self.data_dir / f"{METADATA_PARTITION.topic}-{METADATA_PARTITION.partition}",
            time,
        )
        self.channel = KafkaNetworkChannel(
            time, raft_config.request_timeout_ms(), f"raft-{node_id}", channel_builder=channel_builder
        )
        for voter_id, spec in raft_config.quorum_voter_connections().items():
            if isinstance(spec, InetAddressSpec):
                self.channel.update_endpoint(voter_id, (spec.host, spec.port))
        self.expiration_service = TimingWheelExpirationService(time=time)
        self.client = KafkaRaftClient(
            serde, self.channel, self.log, FileBasedStateStore(self.data_dir / "quorum-state"), time,
            random.Random(), raft_config, node_id,
            fetch_max_wait_ms=min(fetch_max_wait_ms, raft_config.fetch_timeout_ms() // 2),
            message_queue=BlockingMessageQueue(time), expiration_service=self.expiration_service,
        )  # fmt: skip
        # Alone, the voter listens on its own address in controller.quorum.voters; inside a
        # controller, the controller's socket server does (and hands requests to handle_request).
        self.socket_server: RaftSocketServer | None = None
        if serve_own_listener:
            own = raft_config.quorum_voter_connections().get(node_id)
            if not isinstance(own, InetAddressSpec):
                raise ValueError(f"node {node_id} is not among the voters with an address")
            self.socket_server = RaftSocketServer(own.host, own.port, self.client.handle, time)
        self.io_thread = RaftIoThread(self.client, f"raft-io-thread-{node_id}")

    def startup(self) -> None:
        if self.socket_server is not None:
            self.socket_server.startup()
        self.channel.start()
        self.client.initialize()
        self.io_thread.start()

    def shutdown(self, timeout_ms: int = 2_000) -> None:
        if self.io_thread.is_alive():
            self.io_thread.initiate_shutdown(timeout_ms)
            self.io_thread.join(timeout=timeout_ms / 1000 + 1)
        if self.socket_server is not None:
            self.socket_server.shutdown()
        self.channel.close()
        self.expiration_service.shutdown()
        self.client.close()
        self.log.close()

    def handle_request(
        self, api_key: int, correlation_id: int, body: dict[str, Any], created_time_ms: int
    ) -> Future:
        """A Raft RPC another listener received: hand it to the client, and the future of its
        answer's body (Kafka's ``handleRequest``). The future completes on the Raft thread, or on
        the expiration service's for a Fetch held until its wait ran out."""
        inbound = RaftRequest.Inbound(correlation_id, api_key, body, created_time_ms)
        self.client.handle(inbound)
        answer: Future = Future()

        def done(completion: Future) -> None:
            exception = completion.exception()
            if exception is not None:
                answer.set_exception(exception)
            else:
                answer.set_result(completion.result().data)

        inbound.completion.add_done_callback(done)
        return answer

    def register(self, listener: Listener) -> None:
        self.client.register(listener)

    def leader_and_epoch(self) -> LeaderAndEpoch:
        return self.client.leader_and_epoch()
