"""StripedReplicaPlacer: the round robin over brokers and racks, unfenced brokers first, leaders
never fenced, and the refusals (Kafka's StripedReplicaPlacerTest, with its MockRandom, so the
expected placements are Kafka's own)."""

from __future__ import annotations

from collections import Counter

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.metadata.placement import PlacementSpec, StripedReplicaPlacer, UsableBroker
from kafka_lite.metadata.placement.striped_replica_placer import BrokerList, RackList
from tests.metadata.controller.replication_control_test_context import MockRandom

pytestmark = pytest.mark.unit

INVALID_RF = Errors.INVALID_REPLICATION_FACTOR.exception_class


class Cluster:
    def __init__(self, brokers):
        self.brokers = brokers

    def usable_brokers(self):
        return iter(self.brokers)


def place(placer, start, count, rf, brokers):
    return placer.place(PlacementSpec(start, count, rf), Cluster(brokers))


def test_broker_list_hands_each_broker_out_once_an_epoch():
    empty = BrokerList()
    assert empty.size() == 0 and empty.next(1) == -1
    brokers = BrokerList().add(0).add(1).add(2).add(3)
    assert brokers.size() == 4
    assert [brokers.next(0) for _ in range(6)] == [0, 1, 2, 3, -1, -1]
    # A new epoch starts one broker further on.
    assert [brokers.next(1) for _ in range(5)] == [1, 2, 3, 0, -1]


def test_avoids_the_fenced_replica_when_it_can_on_one_rack():
    rack_list = RackList(
        MockRandom(),
        iter([
            UsableBroker(3, None, False),
            UsableBroker(1, None, True),
            UsableBroker(0, None, False),
            UsableBroker(4, None, False),
            UsableBroker(2, None, False),
        ]),
    )  # fmt: skip
    assert (rack_list.num_total_brokers, rack_list.num_unfenced_brokers) == (5, 4)
    assert rack_list.rack_names == [None]
    for bad in (0, -1):
        with pytest.raises(INVALID_RF):
            rack_list.place(bad)
    assert rack_list.place(4) == [3, 4, 0, 2]
    assert rack_list.place(4) == [4, 0, 2, 3]
    assert rack_list.place(4) == [0, 2, 3, 4]
    assert rack_list.place(4) == [2, 3, 4, 0]
    assert rack_list.place(4) == [0, 4, 3, 2]


def test_places_on_the_fenced_replica_when_it_must_but_never_as_leader():
    rack_list = RackList(
        MockRandom(),
        iter([UsableBroker(3, None, False), UsableBroker(1, None, True), UsableBroker(2, None, False)]),
    )
    assert [rack_list.place(3) for _ in range(4)] == [[3, 2, 1], [2, 3, 1], [3, 2, 1], [2, 3, 1]]


def test_many_partitions_on_a_single_unfenced_broker():
    placer = StripedReplicaPlacer(MockRandom())
    brokers = [UsableBroker(0, None, False), UsableBroker(1, None, True)]
    assert place(placer, 0, 3, 1, brokers) == [[0], [0], [0]]


def test_racks_are_striped():
    rack_list = RackList(
        MockRandom(),
        iter([
            UsableBroker(11, "1", False),
            UsableBroker(10, "1", False),
            UsableBroker(30, "3", False),
            UsableBroker(31, "3", False),
            UsableBroker(21, "2", False),
            UsableBroker(20, "2", True),
        ]),
    )  # fmt: skip
    assert (rack_list.num_total_brokers, rack_list.num_unfenced_brokers) == (6, 5)
    assert rack_list.rack_names == ["1", "2", "3"]
    assert rack_list.place(4) == [11, 21, 31, 10]
    assert rack_list.place(4) == [21, 30, 10, 20]
    assert rack_list.place(4) == [31, 11, 21, 30]


def test_racks_with_only_fenced_brokers_never_lead():
    rack_list = RackList(
        MockRandom(),
        iter([
            UsableBroker(11, "1", False),
            UsableBroker(10, "1", False),
            UsableBroker(30, "3", True),
            UsableBroker(31, "3", True),
            UsableBroker(20, "2", True),
            UsableBroker(21, "2", True),
            UsableBroker(41, "4", False),
            UsableBroker(40, "4", True),
        ]),
    )  # fmt: skip
    assert (rack_list.num_total_brokers, rack_list.num_unfenced_brokers) == (8, 3)
    assert rack_list.place(4) == [41, 11, 21, 30]
    assert rack_list.place(4) == [10, 20, 31, 41]
    assert rack_list.place(4) == [41, 21, 30, 11]


@pytest.mark.parametrize(
    ("rf", "brokers", "message"),
    [
        (1, [UsableBroker(11, "1", True), UsableBroker(10, "1", True)], "All brokers are currently fenced."),
        (
            3,
            [UsableBroker(11, "1", False), UsableBroker(10, "1", False)],
            "The target replication factor of 3 cannot be reached because only 2 broker(s) are registered.",
        ),
        (
            0,
            [UsableBroker(11, "1", False), UsableBroker(10, "1", False)],
            "Invalid replication factor 0: the replication factor must be positive.",
        ),
    ],
)
def test_refusals_say_why(rf, brokers, message):
    with pytest.raises(INVALID_RF) as e:
        place(StripedReplicaPlacer(MockRandom()), 0, 1, rf, brokers)
    assert str(e.value) == message


def test_successful_placement():
    brokers = [UsableBroker(b, None, False) for b in (0, 3, 2, 1)]
    assert place(StripedReplicaPlacer(MockRandom()), 0, 5, 3, brokers) == [
        [2, 3, 0],
        [3, 0, 1],
        [0, 1, 2],
        [1, 2, 3],
        [1, 0, 2],
    ]


def test_even_distribution():
    brokers = [UsableBroker(b, None, False) for b in range(4)]
    counts = Counter(tuple(r) for r in place(StripedReplicaPlacer(MockRandom()), 0, 200, 2, brokers))
    assert counts == {
        (0, 1): 14, (0, 2): 22, (0, 3): 14,
        (1, 0): 17, (1, 2): 17, (1, 3): 16,
        (2, 0): 13, (2, 1): 17, (2, 3): 20,
        (3, 0): 20, (3, 1): 19, (3, 2): 11,
    }  # fmt: skip
