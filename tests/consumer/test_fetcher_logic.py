"""The fetcher's rules without a broker: which partitions a fetch asks for (0.10.1's
``createFetchRequests``, and the hold-back a setting of ours turns on), how a completed fetch's
records go out ``max.poll.records`` at a time, stale and paused partitions, errors and
deserializers. Responses are handed to a real ``Fetcher`` (``kafka_lite.testing.fetcher_harness``,
shared with lab 8); what needs a real broker (what it returns, how long it holds a fetch) is in
``test_fetcher.py``."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException, Errors, IllegalArgumentException, KafkaException
from kafka_lite.common.record.memory_records import MemoryRecords
from kafka_lite.consumer import NoOffsetForPartitionException, OffsetOutOfRangeException
from kafka_lite.consumer.deserialization import SerializationException, StringDeserializer
from kafka_lite.consumer.internals.fetcher import Fetcher
from kafka_lite.testing.fetcher_harness import (
    answer_fetch,
    complete_fetch,
    fetcher_without_network,
    offsets_by_partition,
    record_batch,
)

pytestmark = pytest.mark.unit
TOPIC = "t"
P0, P1, P2 = (TOPIC, 0), (TOPIC, 1), (TOPIC, 2)


def drain(fetcher: Fetcher) -> list[tuple]:
    """Every record the fetcher has buffered, poll by poll, as (partition, offset)."""
    drained = []
    while batch := fetcher.fetched_records():
        drained.extend((tp, r.offset) for tp, rs in batch.items() for r in rs)
    return drained


def requested(fetcher: Fetcher) -> dict[int, dict]:
    """The fetches ``send_fetches`` would send now: node id to {partition: fetch offset}."""
    return {node.id: offsets for node, (_body, offsets) in fetcher._create_fetch_requests().items()}


# -- which partitions a fetch asks for -----------------------------------------------------------------


def test_a_node_with_a_fetch_in_flight_gets_no_second_one():
    fetcher = fetcher_without_network([P0], leaders={P0: 1})
    fetcher.subscriptions.seek(P0, 0)
    assert fetcher.send_fetches() == 1
    assert fetcher.client.pending_request_count() == 1
    assert fetcher.send_fetches() == 0, "one fetch per node at a time"


def test_a_partition_with_buffered_records_is_not_fetched_again_until_drained():
    fetcher = fetcher_without_network([P0, P1], leaders={P0: 1, P1: 1}, max_poll_records=3)
    fetcher.subscriptions.seek(P0, 0)
    fetcher.subscriptions.seek(P1, 0)
    answer_fetch(fetcher, {P0: (0, record_batch(0, 10), 10)})

    assert offsets_by_partition(fetcher.fetched_records()) == {P0: [0, 1, 2]}
    # P0's records are still being returned (7 left): it is not fetched; P1 is, pipelined with them.
    assert requested(fetcher) == {1: {P1: 0}}
    answer_fetch(fetcher, {P1: (0, record_batch(0, 2), 2)})
    assert requested(fetcher) == {}, "both partitions have records buffered"

    assert drain(fetcher) == [(P0, o) for o in range(3, 10)] + [(P1, 0), (P1, 1)]
    assert requested(fetcher) == {1: {P0: 10, P1: 2}}, "drained: fetched again from the new positions"


def test_a_paused_partition_is_not_fetched_and_one_that_kept_records_goes_last():
    fetcher = fetcher_without_network([P0, P1], leaders={P0: 1, P1: 1})
    fetcher.subscriptions.seek(P0, 0)
    fetcher.subscriptions.seek(P1, 0)
    fetcher.subscriptions.pause(P0)
    assert requested(fetcher) == {1: {P1: 0}}

    fetcher.subscriptions.resume(P0)
    answer_fetch(fetcher, {P0: (0, record_batch(0, 2), 2), P1: (0, record_batch(0, 2), 2)})
    assert drain(fetcher) == [(P0, 0), (P0, 1), (P1, 0), (P1, 1)]
    # Each partition that returned records went last in the fetch order, in the order they came.
    assert list(fetcher.subscriptions.all_consumed()) == [P0, P1]


def test_an_unknown_leader_asks_for_a_metadata_update():
    fetcher = fetcher_without_network([P0, P1], leaders={P0: 1})
    fetcher.subscriptions.seek(P0, 0)
    fetcher.subscriptions.seek(P1, 0)
    assert requested(fetcher) == {1: {P0: 0}}
    assert fetcher.metadata.need_update


def _caught_up_beside_buffered(**settings) -> Fetcher:
    """P0 (2 records) read to its high watermark while P1's records (10) are still buffered: both
    led by broker 1 (as is P2, not assigned yet)."""
    leaders = {P0: 1, P1: 1, P2: 1}
    fetcher = fetcher_without_network([P0, P1], leaders=leaders, max_poll_records=3, **settings)
    fetcher.subscriptions.seek(P0, 0)
    fetcher.subscriptions.seek(P1, 0)
    assert fetcher.subscriptions.partition_lag(P0) is None, "no high watermark before the first response"
    answer_fetch(fetcher, {P0: (0, record_batch(0, 2), 2), P1: (0, record_batch(0, 10), 10)})
    assert fetcher.subscriptions.partition_lag(P0) == 2 and fetcher.subscriptions.partition_lag(P1) == 10
    assert offsets_by_partition(fetcher.fetched_records()) == {P0: [0, 1], P1: [0]}
    assert fetcher.subscriptions.partition_lag(P0) == 0, "P0 is read to its high watermark"
    return fetcher


def test_kafkas_rule_fetches_a_caught_up_partition_alone_while_its_brokers_other_partitions_are_buffered():
    fetcher = _caught_up_beside_buffered()
    # 0.10.1: P0 is fetchable, its node has no fetch in flight, it has nothing buffered: it goes,
    # and the broker holds it fetch.max.wait.ms; P1's next fetch waits behind it.
    assert requested(fetcher) == {1: {P0: 2}}


def test_the_hold_back_keeps_a_caught_up_partition_for_its_brokers_next_fetch():
    fetcher = _caught_up_beside_buffered(hold_back_caught_up=True)
    assert requested(fetcher) == {}, "P0 alone would only wait at the broker while P1 is buffered"
    assert drain(fetcher) == [(P1, o) for o in range(1, 10)]
    # Nothing buffered: the caught-up partitions go together, and wait for new records there.
    assert requested(fetcher) == {1: {P0: 2, P1: 10}}


def test_the_hold_back_sends_a_fetch_with_a_partition_that_may_have_records():
    fetcher = _caught_up_beside_buffered(hold_back_caught_up=True)
    fetcher.subscriptions.assign_from_user([P0, P1, P2])
    fetcher.subscriptions.seek(P2, 0)
    assert requested(fetcher) == {1: {P0: 2, P2: 0}}, "P2 has no known high watermark: it may have records"


# -- records handed out ---------------------------------------------------------------------------------


def test_max_poll_records_splits_one_fetch_over_several_polls():
    fetcher = fetcher_without_network([P0], max_poll_records=3)
    fetcher.subscriptions.seek(P0, 0)
    complete_fetch(fetcher, P0, 0, record_batch(0, 10))
    sizes, positions = [], []
    for _ in range(5):
        sizes.append(sum(len(rs) for rs in fetcher.fetched_records().values()))
        positions.append(fetcher.subscriptions.position(P0))
    assert sizes == [3, 3, 3, 1, 0]
    assert positions == [3, 6, 9, 10, 10]


def test_records_of_a_fetch_older_than_a_seek_are_dropped():
    fetcher = fetcher_without_network([P0], max_poll_records=3)
    # A seek after the fetch was sent: the whole completed fetch is stale.
    fetcher.subscriptions.seek(P0, 0)
    complete_fetch(fetcher, P0, 0, record_batch(0, 10))
    fetcher.subscriptions.seek(P0, 5)
    assert fetcher.fetched_records() == {}
    assert fetcher.subscriptions.position(P0) == 5

    # A seek while the fetch's records are being returned: the rest of them are dropped.
    complete_fetch(fetcher, P0, 5, record_batch(5, 5))
    assert offsets_by_partition(fetcher.fetched_records()) == {P0: [5, 6, 7]}
    fetcher.subscriptions.seek(P0, 1)
    assert fetcher.fetched_records() == {}
    assert fetcher.subscriptions.position(P0) == 1
    complete_fetch(fetcher, P0, 1, record_batch(1, 9))
    assert offsets_by_partition(fetcher.fetched_records()) == {P0: [1, 2, 3]}, (
        "the fetch from the seek's offset"
    )


def test_an_out_of_range_position_with_no_reset_policy_raises():
    fetcher = fetcher_without_network([P0], reset="none")
    with pytest.raises(NoOffsetForPartitionException, match=f"{TOPIC}-0"):
        fetcher.update_fetch_positions([P0])
    fetcher.subscriptions.seek(P0, 1000)
    complete_fetch(fetcher, P0, 1000, error=Errors.OFFSET_OUT_OF_RANGE)
    with pytest.raises(OffsetOutOfRangeException) as raised:
        fetcher.fetched_records()
    assert raised.value.offset_out_of_range_partitions == {P0: 1000}
    assert f"{TOPIC}-0=1000" in str(raised.value)
    assert fetcher.subscriptions.position(P0) == 1000


# -- deserializers, CRCs, settings ------------------------------------------------------------------------


def test_a_deserializer_that_raises_names_the_partition_and_offset():
    fetcher = fetcher_without_network([P0], value_deserializer=StringDeserializer())
    fetcher.subscriptions.seek(P0, 0)
    complete_fetch(fetcher, P0, 0, record_batch(0, 3, values=[b"ok", b"\xff\xfe", b"ok"]))
    with pytest.raises(SerializationException, match=rf"partition {TOPIC}-0 at offset 1\b") as raised:
        fetcher.fetched_records()
    assert isinstance(raised.value.__cause__, UnicodeDecodeError)
    # The position stays at the fetch: the consumer may seek past the bad record.
    assert fetcher.subscriptions.position(P0) == 0
    fetcher.subscriptions.seek(P0, 2)
    complete_fetch(fetcher, P0, 2, record_batch(0, 3, values=[b"ok", b"\xff\xfe", b"ok"]))
    assert [(r.offset, r.value) for r in fetcher.fetched_records()[P0]] == [(2, "ok")]


def test_records_drained_before_a_deserializer_fails_are_returned_and_the_failure_comes_next():
    fetcher = fetcher_without_network([P0, P1], value_deserializer=StringDeserializer())
    fetcher.subscriptions.seek(P0, 0)
    fetcher.subscriptions.seek(P1, 0)
    complete_fetch(fetcher, P0, 0, record_batch(0, 2, values=[b"good0", b"good1"]))
    complete_fetch(fetcher, P1, 0, record_batch(0, 1, values=[b"\xff"]))
    # P0's records come back; P1's failure is kept for the next call.
    assert {tp: [r.value for r in rs] for tp, rs in fetcher.fetched_records().items()} == {
        P0: ["good0", "good1"]
    }
    with pytest.raises(SerializationException, match=rf"partition {TOPIC}-1 at offset 0\b"):
        fetcher.fetched_records()
    assert fetcher.subscriptions.position(P0) == 2 and fetcher.subscriptions.position(P1) == 0


def test_a_deserializer_with_kafkas_deserialize_method_is_used():
    class Upper:
        def deserialize(self, topic, data):
            return data.decode().upper()

    fetcher = fetcher_without_network([P0], value_deserializer=Upper())
    fetcher.subscriptions.seek(P0, 0)
    complete_fetch(fetcher, P0, 0, record_batch(0, 1, values=[b"hello"]))
    assert [r.value for r in fetcher.fetched_records()[P0]] == ["HELLO"]


@pytest.mark.parametrize("check_crcs", [True, False])
def test_a_corrupt_batch_is_refused_when_crcs_are_checked(check_crcs):
    fetcher = fetcher_without_network([P0], value_deserializer=None, check_crcs=check_crcs)
    fetcher.subscriptions.seek(P0, 0)
    # Flip the value's bytes in the batch (its last bytes are the value, then an empty header count).
    raw = bytearray(record_batch(0, 1, values=[b"aaaa"]).buffer())
    at = bytes(raw).rindex(b"aaaa")
    raw[at : at + 4] = b"bbbb"
    complete_fetch(fetcher, P0, 0, MemoryRecords(bytes(raw)))
    if check_crcs:
        with pytest.raises(KafkaException, match=rf"partition {TOPIC}-0 at offset 0 is invalid"):
            fetcher.fetched_records()
        assert fetcher.subscriptions.position(P0) == 0
    else:
        assert [r.value for r in fetcher.fetched_records()[P0]] == [b"bbbb"]


def test_bad_fetch_settings_are_refused():
    with pytest.raises(
        IllegalArgumentException, match=r"max\.poll\.records must be an integer of at least 1, not 0"
    ):
        fetcher_without_network([P0], max_poll_records=0)
    with pytest.raises(ConfigException, match="value_deserializer"):
        fetcher_without_network([P0], value_deserializer=b"not callable")
