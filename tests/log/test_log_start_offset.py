"""The log start offset of Kafka 0.11 (KIP-107): moved by DeleteRecords inside a segment, hiding the
records below it from readers, deleting whole segments below it at the next retention pass, kept
across a restart in ``log-start-offset-checkpoint``; and a topic's new config applied to live logs."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import OffsetOutOfRangeException
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.log.checkpoint import read_checkpoint
from kafka_lite.log.log import EARLIEST_TIMESTAMP
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_manager import LOG_START_OFFSET_CHECKPOINT_FILE, LogManager
from kafka_lite.utils.scheduler import MockScheduler

pytestmark = pytest.mark.unit
TP = ("orders", 0)


def _manager(directory, time, topic_configs=None):
    scheduler = MockScheduler(time)
    scheduler.startup()
    manager = LogManager([directory], LogConfig(), scheduler, topic_configs=topic_configs, time=time)
    manager.startup()
    return manager


def _fill(log, count: int) -> None:
    now = log.time.milliseconds()  # recent records: retention by time keeps them
    for i in range(count):  # one batch per record: with segment.bytes 200, a few per segment
        log.append(MemoryRecords.with_records([(now, None, b"value-%03d" % i)]))


def test_records_below_the_log_start_offset_are_gone_for_readers(tmp_path):
    manager = _manager(tmp_path, MockTime())
    log = manager.create_log(TP, LogConfig({"segment.bytes": 200}))
    _fill(log, 12)
    first_bases = [s.base_offset for s in log.log_segments()]
    assert len(first_bases) > 3

    log.maybe_increment_log_start_offset(first_bases[2] + 1)  # inside the third segment
    log.maybe_increment_log_start_offset(2)  # never back
    start = first_bases[2] + 1
    assert log.log_start_offset == start
    with pytest.raises(OffsetOutOfRangeException, match=f"range {start} to 12"):
        log.read(start - 1, 1 << 20)
    assert log.read(start, 1 << 20).records.size_in_bytes() > 0
    assert log.fetch_offset_by_timestamp(EARLIEST_TIMESTAMP) == (-1, start)
    assert log.fetch_offset_by_timestamp(0)[1] == start  # a time before every record: the start

    # the next retention pass removes the two segments wholly below the start, not the third
    assert manager.cleanup_logs() == 2
    assert log.log_segments()[0].base_offset == first_bases[2]
    assert log.log_start_offset == start
    manager.shutdown()


def test_the_log_start_offset_survives_a_restart(tmp_path):
    time = MockTime()
    manager = _manager(tmp_path, time)
    log = manager.create_log(TP, LogConfig())
    _fill(log, 5)
    log.maybe_increment_log_start_offset(3)
    manager.shutdown()
    assert read_checkpoint(tmp_path / LOG_START_OFFSET_CHECKPOINT_FILE) == {TP: 3}

    again = _manager(tmp_path, time)
    assert again.get_log(TP).log_start_offset == 3
    again.shutdown()


def test_a_topics_new_config_reaches_its_live_logs_and_later_ones(tmp_path):
    manager = _manager(tmp_path, MockTime(), topic_configs={"orders": LogConfig({"retention.ms": 1000})})
    log = manager.create_log(TP)
    other = manager.create_log(("payments", 0))
    assert log.config.retention_ms == 1000 and other.config.retention_ms == LogConfig().retention_ms

    updated = manager.update_topic_config(
        "orders", LogConfig({"retention.ms": 5000, "cleanup.policy": "compact"})
    )
    assert updated == 1
    assert log.config.retention_ms == 5000 and log.config.compact and not log.config.delete
    assert manager.create_log(("orders", 1)).config.retention_ms == 5000
    assert other.config.retention_ms == LogConfig().retention_ms
    manager.shutdown()
