"""The JSON of the two admin paths a controller watches: ``/admin/reassign_partitions`` and
``/admin/preferred_replica_election``, written byte for byte as Kafka's tools write them and read
as Kafka's parsers read them (and refused, with what is wrong, where Kafka's casts would throw)."""

from __future__ import annotations

import pytest

from kafka_lite.zk.zk_utils import (
    format_as_reassignment_json,
    parse_partition_reassignment_data,
    parse_partition_reassignment_data_without_dedup,
    parse_preferred_replica_election_data,
    preferred_replica_leader_election_zk_data,
)


def test_a_reassignment_is_written_as_kafka_writes_it_and_read_back():
    plan = {("orders", 1): [2, 0], ("orders", 0): [1, 2]}
    text = format_as_reassignment_json(plan)
    assert text == (
        '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2]},'
        '{"topic":"orders","partition":1,"replicas":[2,0]}]}'
    )
    assert parse_partition_reassignment_data(text) == plan


def test_duplicates_are_kept_for_the_tool_and_the_last_wins_for_the_controller():
    text = '{"partitions":[{"topic":"t","partition":0,"replicas":[1]},{"topic":"t","partition":0,"replicas":[2]}]}'
    assert parse_partition_reassignment_data_without_dedup(text) == [(("t", 0), [1]), (("t", 0), [2])]
    assert parse_partition_reassignment_data(text) == {("t", 0): [2]}
    assert parse_partition_reassignment_data('{"version":1}') == {}  # Kafka: no "partitions", no partitions


@pytest.mark.parametrize(
    "text, message",
    [
        ("{oops", "not JSON"),
        ("[1, 2]", 'expected an object with a "partitions" list'),
        ('{"partitions": {"t": 1}}', '"partitions" must be a list'),
        ('{"partitions": [{"topic": "t", "partition": 0, "replicas": ["1"]}]}', "expected"),
        ('{"partitions": [{"topic": "t", "partition": true, "replicas": [1]}]}', "expected"),
    ],
)
def test_a_malformed_reassignment_is_refused_naming_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message):
        parse_partition_reassignment_data(text)


def test_a_preferred_replica_election_is_written_as_kafka_writes_it_and_read_back():
    data = preferred_replica_leader_election_zk_data({("b", 0), ("a", 3)})
    assert data == b'{"version":1,"partitions":[{"topic":"a","partition":3},{"topic":"b","partition":0}]}'
    assert parse_preferred_replica_election_data(data) == {("a", 3), ("b", 0)}


@pytest.mark.parametrize(
    "text, message",
    [
        ("nope", "Preferred replica election data is empty"),
        ('{"version": 1}', "Preferred replica election data is empty"),
        ('{"partitions": [{"topic": "a", "partition": 0}, {"topic": "a", "partition": 0}]}',
         r"Preferred replica election data contains duplicate partitions: \[a,0\]"),
        ('{"partitions": [{"topic": "a"}]}', "expected"),
    ],
)  # fmt: skip
def test_a_bad_preferred_replica_election_is_refused_with_kafkas_message(text, message):
    with pytest.raises(ValueError, match=message):
        parse_preferred_replica_election_data(text)
