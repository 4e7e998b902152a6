"""LogValidator's timestamp checks: message.timestamp.difference.max.ms per record, and no producer
batch that claims LogAppendTime; both directly and through Log.append."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import InvalidTimestampException
from kafka_lite.common.record import CompressionType, MemoryRecords
from kafka_lite.common.record.constants import NO_TIMESTAMP, TimestampType
from kafka_lite.common.record.default_record_batch import DefaultRecordBatch
from kafka_lite.common.record.memory_records_builder import MemoryRecordsBuilder
from kafka_lite.common.time import MockTime
from kafka_lite.log import log_config
from kafka_lite.log.log import Log
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_validator import DEFAULT_TIMESTAMP_DIFF_MAX_MS, validate_timestamps
from kafka_lite.testing.logs import read_all

pytestmark = pytest.mark.unit
NOW = 1_500_000_000_000
HOUR = 3_600_000


def _records(*timestamps: int, codec=CompressionType.NONE) -> MemoryRecords:
    return MemoryRecords.with_records(
        [(ts, b"k%d" % i, b"v") for i, ts in enumerate(timestamps)], compression=codec
    )


def _log_append_time_batch(at: int) -> MemoryRecords:
    builder = MemoryRecordsBuilder(timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=at)
    builder.append(at, b"k", b"v")
    return builder.build()


def _log(tmp_path, **config) -> Log:
    return Log(tmp_path / "clicks-0", LogConfig(config), time=MockTime(start_ms=NOW))


def test_records_within_the_maximum_pass_on_both_sides_of_the_clock():
    validate_timestamps(_records(NOW - HOUR, NOW, NOW + HOUR), NOW, False, HOUR)


@pytest.mark.parametrize("bad", [NOW - HOUR - 1, NOW + HOUR + 1])
def test_a_record_just_outside_the_maximum_is_refused_naming_it_and_the_range(bad):
    with pytest.raises(InvalidTimestampException) as e:
        validate_timestamps(_records(NOW, NOW, bad), NOW, False, HOUR)
    assert str(e.value) == (
        f"Timestamp {bad} of record 2 in the record batch at byte 0 is out of range. The timestamp "
        f"should be within [{NOW - HOUR}, {NOW + HOUR}]: the broker's time {NOW}, give or take "
        f"message.timestamp.difference.max.ms ({HOUR})."
    )


def test_a_record_below_the_batch_header_is_found_by_decoding_the_records():
    # the first record sets the batch's first timestamp, the max timestamp is in range: only the
    # second record's negative delta says it is a day old
    records = _records(NOW, NOW - 24 * HOUR)
    (batch,) = records.batches()
    assert (batch.first_timestamp, batch.max_timestamp) == (NOW, NOW)
    with pytest.raises(InvalidTimestampException, match=f"Timestamp {NOW - 24 * HOUR} of record 1"):
        validate_timestamps(records, NOW, False, HOUR)


def test_a_compressed_batch_is_checked_record_by_record():
    with pytest.raises(InvalidTimestampException, match="of record 1 in the record batch at byte 0"):
        validate_timestamps(_records(NOW, 0, NOW, codec=CompressionType.GZIP), NOW, False, HOUR)


def test_the_second_batch_of_a_request_is_checked_too():
    first, second = _records(NOW).buffer(), _records(NOW - 2 * HOUR).buffer()
    with pytest.raises(InvalidTimestampException, match=f"in the record batch at byte {len(first)} "):
        validate_timestamps(MemoryRecords(bytes(first) + bytes(second)), NOW, False, HOUR)


def test_a_record_without_a_timestamp_passes_as_in_kafka_0_11():
    validate_timestamps(_records(NO_TIMESTAMP), NOW, False, 0)


def test_log_append_time_topics_do_not_check_the_producers_clock():
    validate_timestamps(_records(0), NOW, True, 0)


def test_the_default_maximum_decodes_no_record(monkeypatch):
    def no_decoding(self):
        raise AssertionError("a record was decoded on the default path")

    monkeypatch.setattr(DefaultRecordBatch, "__iter__", no_decoding)
    validate_timestamps(_records(0, NOW), NOW, False, DEFAULT_TIMESTAMP_DIFF_MAX_MS)
    with pytest.raises(AssertionError, match="decoded"):  # the patch bites when a maximum is set
        validate_timestamps(_records(0, NOW), NOW, False, HOUR)


@pytest.mark.parametrize("log_append_time", [False, True])
def test_a_producer_batch_claiming_log_append_time_is_refused(log_append_time):
    with pytest.raises(
        InvalidTimestampException, match="Producer should not set timestamp type to LogAppendTime"
    ):
        validate_timestamps(_log_append_time_batch(NOW), NOW, log_append_time, DEFAULT_TIMESTAMP_DIFF_MAX_MS)


def test_log_append_refuses_the_whole_request_and_leaves_log_and_request_unchanged(tmp_path):
    log = _log(tmp_path, **{"message.timestamp.difference.max.ms": HOUR})
    log.append(_records(NOW, NOW + 1))
    size_before = log.size_in_bytes()
    received = bytearray(_records(NOW, NOW - 2 * HOUR, NOW).buffer())  # as a produce request's buffer
    sent = bytes(received)
    with pytest.raises(InvalidTimestampException):
        log.append(MemoryRecords(memoryview(received)))
    assert (log.log_end_offset, log.size_in_bytes()) == (2, size_before)
    assert bytes(received) == sent  # no offset or epoch patched into the refused request
    info = log.append(_records(NOW - HOUR, NOW + HOUR))  # the edges of the range are accepted
    assert (info.first_offset, info.last_offset) == (2, 3)
    assert [r.timestamp for r in read_all(log)] == [NOW, NOW + 1, NOW - HOUR, NOW + HOUR]


def test_log_append_time_topic_accepts_any_producer_time_and_stamps_the_brokers(tmp_path):
    config = {"message.timestamp.type": "LogAppendTime", "message.timestamp.difference.max.ms": 0}
    log = _log(tmp_path, **config)
    info = log.append(_records(0, NOW - 24 * HOUR))
    assert info.log_append_time == NOW
    (batch,) = MemoryRecords(log.read(0, 10_000).records.read_bytes()).batches()
    assert (batch.timestamp_type, batch.max_timestamp) == (TimestampType.LOG_APPEND_TIME, NOW)
    assert [r.timestamp for r in read_all(log)] == [NOW, NOW]


def test_a_follower_keeps_its_leaders_batches_whatever_its_clock(tmp_path):
    # Kafka validates on the leader only: a follower copies what its leader accepted
    log = _log(tmp_path, **{"message.timestamp.difference.max.ms": 0})
    log.append(_records(NOW - 24 * HOUR), assign_offsets=False)
    assert log.log_end_offset == 1


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"message.timestamp.type": "BrokerTime"}, "String must be one of: CreateTime, LogAppendTime"),
        ({"message.timestamp.difference.max.ms": -1}, "Value must be at least 0"),
        ({"message.timestamp.difference.max.ms": "soon"}, "Expected value to be a 64-bit integer"),
    ],
)
def test_bad_timestamp_settings_are_refused_naming_the_setting(props, message):
    (name,) = props
    with pytest.raises(Exception, match=f"configuration {name}: {message}"):
        log_config.validate(props)


def test_topic_settings_default_to_the_brokers():
    broker = {"log.message.timestamp.type": "LogAppendTime", "log.message.timestamp.difference.max.ms": 5}
    assert (
        LogConfig.from_broker(broker).log_append_time,
        LogConfig.from_broker(broker).message_timestamp_difference_max_ms,
    ) == (True, 5)
    topic = LogConfig.from_broker(broker, {"message.timestamp.type": "CreateTime"})
    assert (topic.log_append_time, topic.message_timestamp_difference_max_ms) == (False, 5)
    assert LogConfig().message_timestamp_difference_max_ms == DEFAULT_TIMESTAMP_DIFF_MAX_MS
