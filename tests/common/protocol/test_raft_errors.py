"""The Raft APIs' error codes are entries of kafka_lite's one error table, with Kafka 3.3.0's facts."""

from __future__ import annotations

import pytest

from kafka_lite.common import errors
from kafka_lite.common.errors import ERROR_TABLE, LATER_ERROR_TABLE, NEW_NAMES, Errors
from kafka_lite.raft.raft_util import RaftErrors

pytestmark = pytest.mark.unit

# Kafka 3.3.0's Errors.java: code, and the base class of the exception (M = InvalidMetadataException,
# R = RetriableException, A = ApiException), for every code the Raft client answers or reads.
KAFKA_3_3 = {
    "FENCED_LEADER_EPOCH": (74, errors.InvalidMetadataException),
    "UNKNOWN_LEADER_EPOCH": (75, errors.RetriableException),
    "INCONSISTENT_VOTER_SET": (94, errors.ApiException),
    "SNAPSHOT_NOT_FOUND": (98, errors.ApiException),
    "POSITION_OUT_OF_RANGE": (99, errors.ApiException),
    "UNKNOWN_TOPIC_ID": (100, errors.InvalidMetadataException),
    "INCONSISTENT_TOPIC_ID": (103, errors.InvalidMetadataException),
    "INCONSISTENT_CLUSTER_ID": (104, errors.ApiException),
}


@pytest.mark.parametrize("name", sorted(KAFKA_3_3))
def test_later_codes_have_kafkas_code_class_and_retriability(name):
    code, base = KAFKA_3_3[name]
    error = getattr(Errors, name)
    assert error.code == code and Errors.for_code(code) is error
    exc = error.exception()
    assert type(exc).__name__ == "".join(w.capitalize() for w in name.split("_")) + "Exception"
    assert type(exc).__bases__ == (base,)
    assert error.retriable == issubclass(base, errors.RetriableException)
    assert Errors.for_exception(exc) is error and str(exc) == error.description


def test_the_later_table_does_not_reuse_a_code_or_name_of_011s():
    codes = [row[0] for row in ERROR_TABLE + LATER_ERROR_TABLE]
    names = [row[1] for row in ERROR_TABLE + LATER_ERROR_TABLE]
    assert len(set(codes)) == len(codes) and len(set(names)) == len(names)
    assert min(row[0] for row in LATER_ERROR_TABLE) > max(row[0] for row in ERROR_TABLE)


def test_every_raft_error_is_the_tables_entry_under_kafka_33s_name():
    for member in RaftErrors:
        entry = member.error()
        assert entry.code == member.value
        assert member.name in (entry.name, NEW_NAMES.get(entry.code)), (member, entry)
    assert RaftErrors.NOT_LEADER_OR_FOLLOWER.error() is Errors.NOT_LEADER_FOR_PARTITION
    assert RaftErrors.UNKNOWN_SERVER_ERROR.error() is Errors.UNKNOWN


def test_raft_errors_raise_the_tables_exception_and_unknown_codes_fall_back():
    with pytest.raises(errors.FencedLeaderEpochException, match="older than the epoch"):
        raise RaftErrors.FENCED_LEADER_EPOCH.exception()
    assert isinstance(RaftErrors.NOT_LEADER_OR_FOLLOWER.exception(), errors.NotLeaderForPartitionException)
    with pytest.raises(ValueError):
        RaftErrors.NONE.exception()
    assert (
        RaftErrors.for_code(76) is RaftErrors.UNKNOWN_SERVER_ERROR
    )  # UNSUPPORTED_COMPRESSION_TYPE: not Raft's
    assert RaftErrors.for_code(75) is RaftErrors.UNKNOWN_LEADER_EPOCH
