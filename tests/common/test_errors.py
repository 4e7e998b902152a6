"""The error table: codes, names, classes and retriability agree, and round-trip."""

from __future__ import annotations

import pytest

from kafka_lite.common import errors
from kafka_lite.common.errors import ERROR_TABLE, OLD_NAMES, Errors

pytestmark = pytest.mark.unit


def test_codes_and_names_are_unique_and_round_trip():
    codes = [row[0] for row in ERROR_TABLE]
    names = [row[1] for row in ERROR_TABLE]
    assert len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)
    for code, name, cls_name, _, _ in ERROR_TABLE:
        err = Errors.for_code(code)
        assert err.name == name
        assert err.exception_class.__name__ == cls_name
        assert Errors.for_exception(err.exception()) is err
        assert getattr(Errors, name) is err


def test_well_known_codes_match_the_protocol():
    assert Errors.NONE.code == 0
    assert Errors.CORRUPT_MESSAGE.code == 2
    assert Errors.NOT_LEADER_FOR_PARTITION.code == 6
    assert Errors.UNSUPPORTED_VERSION.code == 35
    assert Errors.DUPLICATE_SEQUENCE_NUMBER.code == 46
    assert OLD_NAMES[16] == "NOT_COORDINATOR_FOR_GROUP" and Errors.for_code(16).name == "NOT_COORDINATOR"


def test_retriable_errors_are_the_ones_kafka_retries():
    retriable = {e.name for e in map(Errors.for_code, [row[0] for row in ERROR_TABLE]) if e.retriable}
    assert {
        "NOT_LEADER_FOR_PARTITION",
        "LEADER_NOT_AVAILABLE",
        "CORRUPT_MESSAGE",
        "REQUEST_TIMED_OUT",
    } <= retriable
    assert "TOPIC_ALREADY_EXISTS" not in retriable
    assert "OFFSET_OUT_OF_RANGE" not in retriable


def test_unknown_code_maps_to_unknown_and_none_does_not_raise():
    assert Errors.for_code(9999) is Errors.UNKNOWN
    Errors.NONE.maybe_raise()
    with pytest.raises(errors.NotLeaderForPartitionException, match="does not lead"):
        Errors.NOT_LEADER_FOR_PARTITION.maybe_raise()
    assert Errors.for_exception(RuntimeError("boom")) is Errors.UNKNOWN


def test_corrupt_record_carries_its_position():
    e = errors.CorruptRecordException("bad crc", position=17)
    assert e.position == 17 and str(e) == "bad crc"
    assert isinstance(e, errors.RetriableException)
