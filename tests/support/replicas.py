"""Replica managers on a MockTime, without ZooKeeper, sockets or fetcher threads: partitions led and
followed in one process, where a test plays each follower's fetcher by calling the leader's
``fetch_messages`` itself, and truncates through ``played_fetcher``."""

from __future__ import annotations

from pathlib import Path

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import MockTime
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_manager import LogManager
from kafka_lite.server.delayed_operation import DelayedOperationPurgatory
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.replica_fetcher_manager import ReplicaFetcherManager
from kafka_lite.server.replica_fetcher_thread import ReplicaFetcherThread
from kafka_lite.server.replica_manager import FetchMetadata, FetchPartitionRequest, ReplicaManager
from kafka_lite.utils.scheduler import MockScheduler
from kafka_lite.utils.timer import MockTimer


def replica_manager(directory: Path, broker_id: int, time: MockTime, **props) -> ReplicaManager:
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
    )  # fmt: skip
    manager.startup()
    return manager


def leader_and_isr(
    tp: tuple[str, int],
    leader: int,
    isr: list[int],
    replicas: list[int],
    leader_epoch: int = 1,
    controller_epoch: int = 1,
) -> dict:
    """A LeaderAndIsr request body for one partition, as the controller sends it."""
    return {
        "controller_id": 0,
        "controller_epoch": controller_epoch,
        "partition_states": [
            {
                "topic": tp[0],
                "partition": tp[1],
                "controller_epoch": controller_epoch,
                "leader": leader,
                "leader_epoch": leader_epoch,
                "isr": isr,
                "zk_version": 0,
                "replicas": replicas,
            }
        ],
        "live_leaders": [{"id": leader, "host": "127.0.0.1", "port": 1}],
    }


def follower_fetch(leader: ReplicaManager, replica_id: int, tp: tuple[str, int], offset: int) -> dict:
    """What a follower's fetcher sends: a fetch from ``offset`` that does not wait. Returns the results."""
    got = {}
    leader.fetch_messages(
        FetchMetadata(1, 1 << 20, replica_id, {tp: FetchPartitionRequest(offset, 1 << 20)}), got.update
    )
    return got


class PlayedFetcherManager(ReplicaFetcherManager):
    """Starts no fetcher thread: it records which partitions would be fetched from where, and the test
    plays the fetcher (``played_fetcher``)."""

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
        return PlayedFetcherManager(self.config, self, self.time)


class InProcessFetcherThread(ReplicaFetcherThread):
    """A follower's fetcher thread, never started, whose requests reach the leader's replica manager by a
    call instead of a socket (Kafka's tests swap the fetcher's ``BlockingSend`` the same way)."""

    def __init__(self, follower: ReplicaManager, leader: ReplicaManager) -> None:
        super().__init__(
            "played-fetcher", 0, (leader.broker_id, "127.0.0.1", 1), follower.config, follower, follower.time
        )
        self.leader = leader

    def send_and_receive(self, api: ApiKeys, version: int, body: dict) -> dict:
        assert api is ApiKeys.OFFSETS_FOR_LEADER_EPOCH, (
            f"played fetchers send only OffsetsForLeaderEpoch, not {api}"
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


def played_fetcher(follower: ReplicaManager, leader: ReplicaManager) -> InProcessFetcherThread:
    """A fetcher for the partitions ``follower`` was told to fetch from ``leader`` (at their initial
    offsets, truncation pending); call its ``maybe_truncate`` to truncate them as the real thread would."""
    thread = InProcessFetcherThread(follower, leader)
    thread.add_partitions({tp: b.init_offset for tp, b in follower.replica_fetcher_manager.added.items()})
    return thread
