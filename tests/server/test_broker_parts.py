"""The broker's parts without a cluster: config, producer state, metadata cache, the purgatory."""

from __future__ import annotations

import threading

import pytest

from kafka_lite.common.errors import (
    ConfigException,
    DuplicateSequenceNumberException,
    OutOfOrderSequenceException,
    ProducerFencedException,
)
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.producer_state_manager import ProducerBatch, ProducerStateManager, scan_producer_batches
from kafka_lite.server.kafka_config import KafkaConfig, read_properties
from kafka_lite.server.metadata_cache import MetadataCache
from kafka_lite.testing.in_process_replicas import in_process_replica_manager, leader_and_isr
from kafka_lite.utils.delayed_operation import DelayedOperation, DelayedOperationPurgatory
from tests.support.waiting import wait_until

BASE = {"broker.id": 1, "zookeeper.connect": "127.0.0.1:2181"}

# -- KafkaConfig -------------------------------------------------------------------------------------------------


def test_config_defaults_listener_and_log_settings():
    c = KafkaConfig(
        {**BASE, "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": "/a, /b", "log.segment.bytes": "1048576"}
    )
    assert (c.host, c.port) == ("127.0.0.1", 0)
    assert [str(d) for d in c.log_dirs] == ["/a", "/b"]
    assert c["num.network.threads"] == 3 and c["num.io.threads"] == 8 and c["queued.max.requests"] == 500
    props = c.log_config_props()
    assert props["log.segment.bytes"] == 1048576 and props["log.retention.ms"] == 168 * 3_600_000
    assert LogConfig.from_broker(props).segment_size == 1048576


def test_retention_ms_beats_minutes_beats_hours():
    assert KafkaConfig({**BASE, "log.retention.hours": 1}).log_retention_ms() == 3_600_000
    assert (
        KafkaConfig({**BASE, "log.retention.hours": 1, "log.retention.minutes": 2}).log_retention_ms()
        == 120_000
    )
    assert KafkaConfig({**BASE, "log.retention.minutes": 2, "log.retention.ms": 5}).log_retention_ms() == 5


@pytest.mark.parametrize(
    "props, message",
    [
        ({"zookeeper.connect": "x"}, "broker.id"),
        ({"broker.id": 1}, "zookeeper.connect"),
        ({**BASE, "listeners": "SSL://h:1"}, "PLAINTEXT://host:port"),
        ({**BASE, "num.io.threads": 0}, "num.io.threads"),
        ({**BASE, "max.connections.per.ip.overrides": "h:x"}, "host:count"),
        ({"broker.id": 1, "zookeeper.connect": ""}, r"zookeeper.connect: expected host:port"),
        ({"broker.id": 1, "zookeeper.connect": "h:2181,:2182/kafka"}, r"'h:2181,:2182/kafka'.*hostname"),
        ({"broker.id": 1, "zookeeper.connect": "h:1, :2"}, r"zookeeper.connect: .*a host is empty"),
        ({"broker.id": 1, "zookeeper.connect": "h:port"}, r"zookeeper.connect: .*integer"),
        # Kafka's ValidList: checked when the file is read, before the broker connects to anything
        ({**BASE, "log.cleanup.policy": "compact,deleet"}, r"'deleet' for configuration log.cleanup.policy"),
    ],
)
def test_config_errors_name_the_setting(props, message):
    with pytest.raises(ConfigException, match=message):
        KafkaConfig(props)


def test_a_topics_cleanup_policy_names_the_bad_item():
    assert LogConfig({"cleanup.policy": "compact,delete"}).compact
    with pytest.raises(
        ConfigException, match=r"'compactt' for configuration cleanup\.policy: String must be one"
    ):
        LogConfig({"cleanup.policy": "compactt"})


def test_unknown_settings_of_a_real_server_properties_are_ignored(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text(
        "# Kafka's file\nbroker.id=3\nzookeeper.connect=h:2181\nsasl.enabled.mechanisms=GSSAPI\nlog.dirs: /x\n"
    )
    assert read_properties(path)["log.dirs"] == "/x"
    assert KafkaConfig.from_file(path, {"broker.id": "4"}).broker_id == 4
    with pytest.raises(ConfigException, match="does not exist"):
        read_properties(tmp_path / "nope")


# -- producer state --------------------------------------------------------------------------------------------


def _batch(pid, epoch, seq, n=1):
    return MemoryRecords.with_records(
        [(1000 + i, None, b"v") for i in range(n)], producer_id=pid, producer_epoch=epoch, base_sequence=seq
    )


def test_scan_finds_the_idempotent_batches_only():
    buf = bytes(_batch(5, 0, 10, n=3).buffer()) + bytes(
        MemoryRecords.with_records([(1, None, b"x")]).buffer()
    )
    (batch,) = scan_producer_batches(buf).values()
    assert (batch.producer_id, batch.epoch, batch.first_seq, batch.last_seq) == (5, 0, 10, 12)


def test_sequence_rules():
    state = ProducerStateManager("/nonexistent")
    state.update(ProducerBatch(1, 0, 0, 4, 0, 4, 1000))
    assert state.check([ProducerBatch(1, 0, 5, 5)]) is None  # the next sequence
    assert state.check([ProducerBatch(1, 0, 0, 4)]).first_offset == 0  # a retry: the earlier write
    with pytest.raises(OutOfOrderSequenceException):
        state.check([ProducerBatch(1, 0, 7, 7)])
    with pytest.raises(OutOfOrderSequenceException, match="must start at sequence 0"):
        state.check([ProducerBatch(2, 0, 3, 3)])
    with pytest.raises(DuplicateSequenceNumberException):
        state.check([ProducerBatch(1, 0, 2, 2)])  # old, and not one of the remembered batches
    state.update(ProducerBatch(1, 1, 0, 0, 5, 5, 1000))  # a new epoch
    with pytest.raises(ProducerFencedException):
        state.check([ProducerBatch(1, 0, 5, 5)])


def test_producer_state_survives_a_restart_through_snapshot_and_log(tmp_path):
    time_ = MockTime()
    manager = in_process_replica_manager(tmp_path, 1, time_)
    manager.become_leader_or_follower(leader_and_isr(("t", 0), leader=1, isr=[1], replicas=[1]))
    partition = manager.get_partition(("t", 0))
    partition.append_records_to_leader(_batch(9, 0, 0, n=2))
    partition.close()  # snapshot at offset 2
    partition.append_records_to_leader(_batch(9, 0, 2, n=2))  # after the snapshot: only in the log
    manager.log_manager.shutdown()
    reopened = in_process_replica_manager(tmp_path, 1, time_)
    reopened.become_leader_or_follower(leader_and_isr(("t", 0), leader=1, isr=[1], replicas=[1]))
    entry = reopened.get_partition(("t", 0)).producer_state.producers[9]
    assert entry.last_seq == 3 and entry.batches[-1].first_offset == 2
    check = reopened.get_partition(("t", 0)).producer_state.check([ProducerBatch(9, 0, 2, 3)])
    assert check.first_offset == 2  # a late retry


# -- metadata cache ---------------------------------------------------------------------------------------------


def _state(topic, partition, leader, replicas):
    return {"topic": topic, "partition": partition, "controller_epoch": 1, "leader": leader, "leader_epoch": 0,
            "isr": replicas, "zk_version": 0, "replicas": replicas}  # fmt: skip


def test_metadata_cache_reports_missing_leaders_and_replicas():
    cache = MetadataCache(0)
    live = [
        {
            "id": i,
            "end_points": [
                {"port": 9092 + i, "host": "h", "listener_name": "PLAINTEXT", "security_protocol_type": 0}
            ],
            "rack": None,
        }
        for i in (0, 1)
    ]
    body = {
        "live_brokers": live,
        "partition_states": [_state("t", 0, 0, [0, 1]), _state("t", 1, 2, [2]), _state("t", 2, 1, [1, 2])],
    }
    cache.update_cache(0, 1, body, 3)
    (meta,) = cache.topic_metadata(["t", "unknown"], error_unavailable_endpoints=True)  # as Metadata v0
    errors = {p["partition_id"]: p["partition_error_code"] for p in meta["partition_metadata"]}
    assert errors == {
        0: 0,
        1: 5,
        2: 9,
    }  # NONE, LEADER_NOT_AVAILABLE (broker 2 is gone), REPLICA_NOT_AVAILABLE
    cache.update_cache(0, 1, {"live_brokers": live, "partition_states": [_state("t", 0, -2, [0, 1])]}, 3)
    assert sorted(cache.partitions("t")) == [1, 2], "leader -2 means the partition is being deleted"


# -- the purgatory ------------------------------------------------------------------------------------------------


class Waiting(DelayedOperation):
    def __init__(self, delay_ms, ready):
        super().__init__(delay_ms)
        self.ready, self.completed, self.expired = ready, threading.Event(), False

    def try_complete(self):
        return self.force_complete() if self.ready() else False

    def on_complete(self):
        self.completed.set()

    def on_expiration(self):
        self.expired = True


def test_an_operation_completes_when_checked_and_only_once():
    purgatory = DelayedOperationPurgatory("test", MockTime())
    ready = []
    op = Waiting(60_000, lambda: bool(ready))
    assert not purgatory.try_complete_else_watch(op, ["a", "b"])
    assert purgatory.watched() == 2 and purgatory.check_and_complete("a") == 0  # one operation, two keys
    ready.append(True)
    assert purgatory.check_and_complete("b") == 1 and op.completed.is_set()
    assert not op.force_complete() and purgatory.check_and_complete("a") == 0
    purgatory.shutdown()


def test_an_operation_expires_when_its_time_is_up():
    time = MockTime()
    purgatory = DelayedOperationPurgatory("test", time)
    op = Waiting(1000, lambda: False)
    purgatory.try_complete_else_watch(op, ["k"])
    time.advance(999)
    assert not op.completed.is_set()
    time.advance(1)
    # on_expiration runs just after on_complete, on the timer's thread: wait for both.
    wait_until(lambda: op.completed.is_set() and op.expired, what="the reaper to expire the operation")
    assert purgatory.delayed() == 0
    purgatory.shutdown()


def test_a_roll_snapshots_the_producer_state(tmp_path):
    manager = in_process_replica_manager(tmp_path, 1, MockTime(), **{"log.segment.bytes": 200})
    manager.become_leader_or_follower(leader_and_isr(("t", 0), leader=1, isr=[1], replicas=[1]))
    partition = manager.get_partition(("t", 0))
    log = partition.log
    for seq in range(0, 6, 2):
        partition.append_records_to_leader(_batch(4, 0, seq, n=2))  # ~90-byte batches: rolls as it goes
    assert log.number_of_segments > 1
    offsets = {int(p.name.split(".")[0]) for p in partition.producer_state.snapshot_files()}
    bases = {s.base_offset for s in log.log_segments()}
    assert offsets == bases - {0}, "one snapshot per roll, named by the new segment's base offset"
    reloaded = ProducerStateManager(log.dir)
    reloaded.load(log)  # newest snapshot, then the batch headers after it
    assert reloaded.producers[4].last_seq == partition.producer_state.producers[4].last_seq == 5
