"""One KafkaRaftClient on a MockLog, a MockNetworkChannel and a MockTime, with builders to deliver a
request or a response and to read back what the client sent: what the Raft client's tests and lab
18's graded tests drive.

Mirrors: org.apache.kafka.raft.RaftClientTestContext (raft/src/test/java/org/apache/kafka/raft/,
         Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: a plain constructor with the few settings the tests vary, where Kafka's has a builder.
"""

from __future__ import annotations

import random
from typing import Any

from kafka_lite.common.protocol.raft_messages import RaftApiKeys
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.default_record_batch import set_partition_leader_epoch
from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.raft import raft_util
from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.kafka_raft_client import KafkaRaftClient
from kafka_lite.raft.raft_client import Batch, LeaderAndEpoch, Listener
from kafka_lite.raft.raft_config import InetAddressSpec, RaftConfig
from kafka_lite.raft.raft_message import RaftRequest, RaftResponse
from kafka_lite.raft.raft_util import METADATA_TOPIC_ID, RaftErrors
from kafka_lite.raft.simulation.mock_expiration_service import MockExpirationService
from kafka_lite.raft.simulation.mock_log import MockLog
from kafka_lite.raft.simulation.mock_message_queue import MockMessageQueue
from kafka_lite.raft.simulation.mock_network_channel import MockNetworkChannel
from kafka_lite.raft.simulation.mock_quorum_state_store import MockQuorumStateStore

METADATA_PARTITION = TopicPartition("__cluster_metadata", 0)
ELECTION_TIMEOUT_MS = 10_000
ELECTION_BACKOFF_MAX_MS = 500
FETCH_TIMEOUT_MS = 50_000
REQUEST_TIMEOUT_MS = 5_000
RETRY_BACKOFF_MS = 50
FETCH_MAX_WAIT_MS = 0


class StringSerde:
    def serialize(self, record: str) -> bytes:
        return record.encode()

    def deserialize(self, data: bytes) -> str:
        return bytes(data).decode()


class MockListener(Listener):
    """Records what the client tells the state machine (Kafka's MockListener)."""

    def __init__(self) -> None:
        self.commits: list[Batch] = []
        self.leader_changes: list[LeaderAndEpoch] = []
        self.snapshots: list[Any] = []

    def handle_commit(self, batches: list[Batch]) -> None:
        self.commits.extend(batches)

    def handle_snapshot(self, reader: Any) -> None:
        self.snapshots.append(reader)

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        self.leader_changes.append(leader)

    def committed_records(self) -> list[str]:
        return [r for b in self.commits for r in b.records]


def batch(base_offset: int, epoch: int, values: list[str], timestamp: int = 0) -> MemoryRecords:
    """A v2 batch of ``values`` at ``base_offset``, stamped with ``epoch``: a hand-worked log's entries."""
    records = MemoryRecords.with_records(
        [(timestamp, None, v.encode()) for v in values], base_offset=base_offset
    )
    data = bytearray(records.buffer())
    set_partition_leader_epoch(data, 0, epoch)
    return MemoryRecords(bytes(data))


class RaftClientTestContext:
    def __init__(
        self,
        local_id: int | None,
        voters: set[int],
        election: ElectionState | None = None,
        log_batches: list[MemoryRecords] = (),
        append_linger_ms: int = 0,
        seed: int = 1,
    ) -> None:
        self.local_id = local_id
        self.voters = voters
        self.time = MockTime()
        self.log = MockLog(METADATA_PARTITION)
        for records in log_batches:
            self.log.append_as_follower(records)
        self.log.flush()
        self.store = MockQuorumStateStore()
        if election is not None:
            self.store.write_election_state(election)
        self.channel = MockNetworkChannel()
        connections = {v: InetAddressSpec("localhost", 9990 + v) for v in voters}
        for v, spec in connections.items():
            self.channel.update_endpoint(v, (spec.host, spec.port))
        self.config = RaftConfig(
            connections, REQUEST_TIMEOUT_MS, RETRY_BACKOFF_MS, ELECTION_TIMEOUT_MS, ELECTION_BACKOFF_MAX_MS,
            FETCH_TIMEOUT_MS, append_linger_ms,
        )  # fmt: skip
        self.seed = seed
        self.client = self.new_client(self.store)
        self.listener = MockListener()
        self.client.register(self.listener)
        self.client.initialize()

    def new_client(self, store: Any) -> KafkaRaftClient:
        """A client of this context's node over ``store``, on a fresh mock queue and expiration
        service (``self.expiration_service``, which a test ticks after moving the clock)."""
        self.expiration_service = MockExpirationService(self.time)
        return KafkaRaftClient(
            StringSerde(), self.channel, self.log, store, self.time, random.Random(self.seed), self.config,
            self.local_id, fetch_max_wait_ms=FETCH_MAX_WAIT_MS, message_queue=MockMessageQueue(),
            expiration_service=self.expiration_service,
        )  # fmt: skip

    # -- driving ---------------------------------------------------------------------------------------------

    def poll(self, times: int = 1) -> None:
        for _ in range(times):
            self.client.poll()

    def quorum(self):
        return self.client.quorum()

    def state_name(self) -> str:
        return self.quorum().current_state().name()

    def become_leader(self) -> int:
        """Stand (after the election timeout), win with node 1's vote, and write the first entry of
        the epoch (the LeaderChange); returns the epoch."""
        self.expire_election_timeout()
        self.poll()  # Unattached -> Candidate
        self.poll()  # the Votes go out
        epoch = self.quorum().epoch()
        votes = self.drain_sent(RaftApiKeys.VOTE)
        self.deliver_response(
            next(v for v in votes if v.destination_id == 1), self.vote_response(True, epoch)
        )
        self.poll()  # the granted vote: Leader
        self.poll()  # the LeaderChange batch reaches the log
        return epoch

    def expire_election_timeout(self) -> None:
        # The randomized timeout is at most twice the base one.
        self.time.sleep(2 * ELECTION_TIMEOUT_MS)

    # -- requests the client sent ----------------------------------------------------------------------------

    def drain_sent(self, api_key: int) -> list[RaftRequest.Outbound]:
        return self.channel.drain_sent_requests(api_key)

    def deliver_response(self, request: RaftRequest.Outbound, data: dict) -> None:
        self.channel.mock_receive(
            RaftResponse.Inbound(request.correlation_id, request.api_key, data, request.destination_id)
        )

    def vote_response(
        self, granted: bool, epoch: int, leader_id: int = -1, error: int = RaftErrors.NONE
    ) -> dict:
        return raft_util.vote_response(METADATA_PARTITION, RaftErrors.NONE, error, epoch, leader_id, granted)

    def begin_epoch_response(self, epoch: int, leader_id: int) -> dict:
        return raft_util.leader_response(
            METADATA_PARTITION, RaftErrors.NONE, RaftErrors.NONE, epoch, leader_id
        )

    def fetch_response(self, epoch: int, leader_id: int, **kwargs: Any) -> dict:
        return raft_util.fetch_response(
            METADATA_TOPIC_ID, METADATA_PARTITION, kwargs.pop("error", RaftErrors.NONE), leader_id=leader_id,
            leader_epoch=epoch, **kwargs,
        )  # fmt: skip

    def fetch_snapshot_response(
        self, snapshot_id: tuple[int, int], size: int, position: int, data: bytes
    ) -> dict:
        """The leader's (node 1, epoch 5) answer to a FetchSnapshot: ``snapshot_id`` is (end offset, epoch)."""
        return raft_util.fetch_snapshot_response(
            METADATA_PARTITION, RaftErrors.NONE, 1, 5, snapshot_id, size, position, data
        )

    # -- requests to the client ------------------------------------------------------------------------------

    def deliver_request(self, api_key: int, data: dict) -> RaftRequest.Inbound:
        request = RaftRequest.Inbound(
            self.channel.new_correlation_id(), api_key, data, self.time.milliseconds()
        )
        self.client.handle(request)
        return request

    def deliver_vote_request(self, candidate_id: int, epoch: int, last_epoch: int, last_offset: int):
        return self.deliver_request(RaftApiKeys.VOTE, raft_util.vote_request(
            METADATA_PARTITION, None, epoch, candidate_id, last_epoch, last_offset))  # fmt: skip

    def deliver_fetch_request(self, replica_id: int, epoch: int, fetch_offset: int, last_fetched_epoch: int):
        return self.deliver_request(RaftApiKeys.FETCH, raft_util.fetch_request(
            METADATA_TOPIC_ID, METADATA_PARTITION, None, replica_id, 0, epoch, fetch_offset, last_fetched_epoch,
            1 << 20))  # fmt: skip

    @staticmethod
    def response_of(request: RaftRequest.Inbound) -> dict:
        assert request.completion.done(), "the client has not answered the request"
        return request.completion.result().data

    @staticmethod
    def partition_of(data: dict, topics_key: str = "topics") -> dict:
        assert data["error_code"] == 0, f"top-level error {data['error_code']}"
        return data[topics_key][0]["partitions"][0]
