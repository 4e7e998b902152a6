"""Replica managers in one process, on one ``MockTime``: for notebooks, labs, pictures and tests.

No Kafka twin: Kafka's own tests build their ``ReplicaManager``s the same way (a ``MockTime``, mock
ZooKeeper, a fetcher manager they drive themselves); this is that harness, kept in the package
(not with the tests) because the chapter's notebook, lab 6 and the replication pictures all step
replication with it.

``in_process_replica_manager`` gives a broker's replica manager what ``KafkaServer`` would (a log
manager, a scheduler, the produce and fetch purgatories), all on the mock clock, with no ZooKeeper
(ISR changes stay on the broker) and no fetcher threads: ``make_followers`` records which partitions
it would fetch from where (``replica_fetcher_manager.added``), and the caller plays the fetcher:
``replicate`` is one round of ``ReplicaFetcherThread``'s loop (fetch from the LEO, append with the
leader's offsets, take the leader's HW), and ``played_fetcher(...).maybe_truncate()`` is the
truncation a new follower's fetcher does first, its OffsetsForLeaderEpoch (and, for
``handle_offset_out_of_range``, ListOffsets) answered by the leader's replica manager through a
call instead of a socket. So nothing happens that the caller did not do.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kafka_lite.common.errors import Errors, KafkaException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_manager import LogManager
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.replica_fetcher_manager import ReplicaFetcherManager
from kafka_lite.server.replica_fetcher_thread import EARLIEST_TIMESTAMP, ReplicaFetcherThread
from kafka_lite.server.replica_manager import (
    FetchMetadata,
    FetchPartitionRequest,
    LogReadResult,
    ReplicaManager,
)
from kafka_lite.server.replication_quota_manager import (
    QuotaType,
    ReplicationQuotaManager,
    ReplicationQuotaManagerConfig,
)
from kafka_lite.testing.mock_timer import MockTimer
from kafka_lite.utils.delayed_operation import DelayedOperationPurgatory
from kafka_lite.utils.scheduler import MockScheduler


class PlayedFetcherManager(ReplicaFetcherManager):
    """Starts no fetcher thread: records which partitions would be fetched from where."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.added: dict = {}

    def add_fetcher_for_partitions(self, partitions: dict) -> None:
        self.added.update(partitions)

    def remove_fetcher_for_partitions(self, tps: set) -> None:
        for tp in tps:
            self.added.pop(tp, None)


class InProcessReplicaManager(ReplicaManager):
    def create_replica_fetcher_manager(self) -> ReplicaFetcherManager:
        return PlayedFetcherManager(self.config, self, self.time, self.quota_manager)


def in_process_replica_manager(directory: Path, broker_id: int, time: MockTime, **props) -> ReplicaManager:
    """Broker ``broker_id``'s replica manager, its logs under ``directory``, its settings ``props``."""
    config = KafkaConfig(
        {
            "broker.id": broker_id,
            "zookeeper.connect": "unused:2181",
            "log.dirs": str(Path(directory) / f"broker-{broker_id}"),
            **props,
        }
    )
    scheduler = MockScheduler(time)
    scheduler.startup()
    log_manager = LogManager(
        config.log_dirs, LogConfig.from_broker(config.log_config_props()), scheduler, time=time
    )
    manager = InProcessReplicaManager(
        config, time, None, scheduler, log_manager, lambda topic: {},
        delayed_produce_purgatory=DelayedOperationPurgatory("Produce", time, MockTimer(time), reaper_enabled=False),
        delayed_fetch_purgatory=DelayedOperationPurgatory("Fetch", time, MockTimer(time), reaper_enabled=False),
        quota_manager=ReplicationQuotaManager(ReplicationQuotaManagerConfig(), QuotaType.FOLLOWER_REPLICATION, time),
    )  # fmt: skip
    manager.startup()
    return manager


def leader_and_isr(
    tp: TopicPartition,
    leader: int,
    isr: list[int],
    replicas: list[int],
    leader_epoch: int = 1,
    controller_epoch: int = 1,
) -> dict:
    """The LeaderAndIsr request body a controller sends for one partition."""
    state = {"topic": tp[0], "partition": tp[1], "controller_epoch": controller_epoch, "leader": leader}
    return {
        "controller_id": 0,
        "controller_epoch": controller_epoch,
        "partition_states": [
            {**state, "leader_epoch": leader_epoch, "isr": isr, "zk_version": 0, "replicas": replicas}
        ],
        "live_leaders": [{"id": leader, "host": "127.0.0.1", "port": 9092 + leader}],
    }


def follower_fetch(leader: ReplicaManager, replica_id: int, tp: TopicPartition, offset: int) -> LogReadResult:
    """A Fetch to ``leader`` from ``offset`` that does not wait: ``replica_id`` -1 is a consumer, a
    broker id a follower (whose fetch the leader records)."""
    got = {}
    leader.fetch_messages(
        FetchMetadata(1, 1 << 20, replica_id, {tp: FetchPartitionRequest(offset, 1 << 20)}), got.update
    )
    return got[tp]


def records_bytes(records: FileRecords | MemoryRecords | None) -> bytes:
    """A read's records as bytes: a slice of a segment file, or in memory."""
    if records is None:
        return b""
    return records.read_bytes() if isinstance(records, FileRecords) else bytes(records.buffer())


def replicate(leader: ReplicaManager, follower: ReplicaManager, tp: TopicPartition) -> int:
    """One round of ``follower``'s fetcher: fetch from its LEO, append what came with the leader's
    offsets, take the leader's HW (never above its own LEO). Returns its new LEO."""
    log_end_offset = follower.get_partition(tp).get_replica().log_end_offset
    result = follower_fetch(leader, follower.broker_id, tp, log_end_offset)
    if result.error is not Errors.NONE:
        raise KafkaException(
            f"broker {follower.broker_id}'s fetch of {tp[0]}-{tp[1]} failed: {result.error.name}"
        )
    return append_fetched(follower, tp, result)


def append_fetched(follower: ReplicaManager, tp: TopicPartition, result: LogReadResult) -> int:
    """What ``follower``'s fetcher does with the leader's answer for ``tp`` (its
    ``process_partition_data``): append the records with the leader's offsets, take the leader's HW
    (never above its own LEO). Returns its new LEO."""
    partition = follower.get_partition(tp)
    replica = partition.get_replica()
    if result.size:
        partition.append_records_to_follower(MemoryRecords(records_bytes(result.records)))
    replica.high_watermark = min(replica.log_end_offset, result.high_watermark)
    return replica.log_end_offset


class InProcessFetcherThread(ReplicaFetcherThread):
    """A follower's fetcher thread, never started, whose OffsetsForLeaderEpoch and ListOffsets reach
    the leader's replica manager by a call instead of a socket (Kafka's tests swap the fetcher's
    ``BlockingSend``)."""

    def __init__(self, follower: ReplicaManager, leader: ReplicaManager) -> None:
        super().__init__(
            "played-fetcher", 0, (leader.broker_id, "127.0.0.1", 1), follower.config, follower, follower.time,
            follower.quota_manager,
        )  # fmt: skip
        self.leader = leader

    def send_and_receive(self, api: ApiKeys, version: int, body: dict) -> dict:
        if api is ApiKeys.LIST_OFFSETS:
            return self._list_offsets(body)
        if api is not ApiKeys.OFFSETS_FOR_LEADER_EPOCH:
            raise KafkaException(
                f"a played fetcher sends only OffsetsForLeaderEpoch and ListOffsets, not {api.api_name}"
            )
        requested = {
            (t["topic"], p["partition_id"]): p["leader_epoch"]
            for t in body["topics"]
            for p in t["partitions"]
        }
        answers = self.leader.last_offset_for_leader_epoch(requested)
        return {
            "topics": [
                {
                    "topic": tp[0],
                    "partitions": [{"error_code": e.code, "partition_id": tp[1], "end_offset": end}],
                }
                for tp, (e, end) in answers.items()
            ]
        }

    def _list_offsets(self, body: dict) -> dict:
        """A broker's ListOffsets, as the leader answers it: -2 its log start, -1 its LEO."""
        responses = []
        for t in body["topics"]:
            parts = []
            for p in t["partitions"]:
                log_ = self.leader.get_leader_partition((t["topic"], p["partition"])).log
                earliest = p["timestamp"] == EARLIEST_TIMESTAMP
                offset = log_.log_start_offset if earliest else log_.log_end_offset
                parts.append(
                    {"partition": p["partition"], "error_code": 0, "timestamp": -1, "offset": offset}
                )
            responses.append({"topic": t["topic"], "partition_responses": parts})
        return {"responses": responses}


def played_fetcher(follower: ReplicaManager, leader: ReplicaManager) -> InProcessFetcherThread:
    """A fetcher holding the partitions ``follower`` was told to fetch (at their initial offsets,
    truncation pending); its ``maybe_truncate`` truncates them as the real thread would first."""
    thread = InProcessFetcherThread(follower, leader)
    thread.add_partitions({tp: b.init_offset for tp, b in follower.replica_fetcher_manager.added.items()})
    return thread


def new_leader_without_the_old_leaders_tail(managers: list[ReplicaManager], tp: TopicPartition) -> None:
    """Brokers 0, 1 and 2, broker 0 leading ``tp`` in epoch 1 with all three in the ISR: records a
    and b reach every replica (committed), c only broker 0; then broker 1 is elected in epoch 2 (ISR
    1, 2) and broker 0 follows it, holding at offset 2 a record its new leader never had. What broker
    0 keeps is then up to its fetcher's ``maybe_truncate``."""
    leader, f1, f2 = managers

    def produce(*values: bytes) -> None:
        records = MemoryRecords.with_records([(1000, None, v) for v in values])
        leader.append_records(1000, 1, False, {tp: records}, lambda _: None)

    produce(b"a", b"b")
    for follower in (f1, f2, f1, f2):
        replicate(leader, follower, tp)
    produce(b"c")  # offset 2, on broker 0 only
    for manager in managers:
        manager.become_leader_or_follower(leader_and_isr(tp, 1, [1, 2], [0, 1, 2], leader_epoch=2))


def restarted_follower(
    directory: Path, time: MockTime, tp: TopicPartition, **props
) -> tuple[ReplicaManager, ReplicaManager, list[ReplicaManager]]:
    """KIP-101's first case, up to the truncation: broker 0 leads ``tp``, brokers 1 and 2 follow;
    records a and b reach all three, but broker 1 learns the HW one fetch late, so it restarts with
    LEO 2 and HW 0 in its checkpoint, while the leader takes c; back, it is told to follow broker 0
    again. Returns (the leader, the restarted follower, every manager to shut down); what the
    follower keeps is then up to its fetcher's ``maybe_truncate`` under ``props``'
    ``inter.broker.protocol.version``."""
    managers = [in_process_replica_manager(directory, i, time, **props) for i in range(3)]
    leader, f1, f2 = managers
    for manager in managers:
        manager.become_leader_or_follower(leader_and_isr(tp, 0, [0, 1, 2], [0, 1, 2]))

    def produce(*values: bytes) -> None:
        records = MemoryRecords.with_records([(1000, None, v) for v in values])
        leader.append_records(1000, 1, False, {tp: records}, lambda _: None)

    produce(b"a", b"b")
    for follower in (f1, f2, f1, f2):
        replicate(leader, follower, tp)  # the leader's HW reaches 2 at follower 2's second fetch
    f1.shutdown(checkpoint_hw=True)
    f1.log_manager.shutdown()
    produce(b"c")
    restarted = in_process_replica_manager(directory, 1, time, **props)
    restarted.become_leader_or_follower(leader_and_isr(tp, 0, [0, 1, 2], [0, 1, 2]))
    return leader, restarted, [leader, f2, restarted]


@contextmanager
def in_process_brokers(
    directory: Path, time: MockTime, count: int = 3, **props
) -> Iterator[list[ReplicaManager]]:
    """``count`` brokers' replica managers (ids 0 to count-1) on one clock, shut down on leaving."""
    managers = [in_process_replica_manager(directory, i, time, **props) for i in range(count)]
    try:
        yield managers
    finally:
        for manager in managers:
            manager.shutdown(checkpoint_hw=False)
            manager.log_manager.shutdown()


@contextmanager
def replicated_partition(
    directory: Path, time: MockTime, tp: TopicPartition, **props
) -> Iterator[list[ReplicaManager]]:
    """Three brokers where broker 0 leads ``tp`` and brokers 1 and 2 follow, all three in the ISR."""
    with in_process_brokers(directory, time, **props) as managers:
        for manager in managers:
            manager.become_leader_or_follower(leader_and_isr(tp, 0, [0, 1, 2], [0, 1, 2]))
        yield managers
