"""Replica managers on a MockTime, without ZooKeeper or sockets: partitions led and followed in one
process, where a test plays the fetcher by calling the leader's ``fetch_messages`` itself."""

from __future__ import annotations

from pathlib import Path

from kafka_lite.common.time import MockTime
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_manager import LogManager
from kafka_lite.server.delayed_operation import DelayedOperationPurgatory
from kafka_lite.server.kafka_config import KafkaConfig
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
    manager = ReplicaManager(
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
