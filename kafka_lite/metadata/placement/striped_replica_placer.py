"""The striped replica placer: spread replicas over racks, then over brokers, leaders on unfenced
brokers only.

Mirrors: org.apache.kafka.metadata.placement.StripedReplicaPlacer
         (metadata/src/main/java/org/apache/kafka/metadata/placement/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft); chapter 7 reads AdminUtils.assignReplicasToBrokers,
         the ZooKeeper controller's round robin it replaces
Differs: ``random`` is a ``random.Random`` (``randrange``, ``shuffle``); Kafka's is a
         ``java.util.Random``. The tests give it Java's algorithms over Kafka's MockRandom, so the
         placements they expect are Kafka's own.

Goals, most important first: spread each partition's replicas over as many racks as possible;
spread them over brokers, so that no two partitions get the same replica list more than needed and
a fenced broker's leaderships fall evenly on the others; prefer unfenced brokers. Two constraints
cannot bend: no broker holds two replicas of one partition (so the replication factor is at most
the number of usable brokers), and the leader, the first replica, is unfenced.

How: ``RackList`` holds the racks in sorted order (racks with an unfenced broker are tried for the
leader first), each ``Rack`` two sorted ``BrokerList``s (unfenced, fenced). A partition takes its
racks round robin from a rotating offset, and from each rack the next broker round robin, unfenced
before fenced. Each partition moves the rack offset on by one, so with racks A, B, C::

    partition 0: A0, B0, C0
    partition 1: B1, C1, A1
    partition 2: C2, A2, B2

the "stripes" the name is for. Once as many partitions are placed as there are unfenced brokers,
the racks and brokers are shuffled, so the next round does not repeat the same lists.
"""

from __future__ import annotations

import random as _random
from collections.abc import Iterator

from kafka_lite.common.errors import Errors
from kafka_lite.metadata.placement.cluster_describer import ClusterDescriber
from kafka_lite.metadata.placement.placement_spec import PlacementSpec
from kafka_lite.metadata.placement.replica_placer import ReplicaPlacer
from kafka_lite.metadata.placement.usable_broker import UsableBroker


class BrokerList:
    """Brokers handed out round robin, each at most once per iteration epoch."""

    def __init__(self) -> None:
        self.brokers: list[int] = []
        # How many brokers this epoch has taken; ``offset`` is added to it (modulo the size) to pick
        # the entry, and moves on by one each new epoch so that epochs start on different brokers.
        self.index = 0
        self.offset = 0
        self.epoch = 0

    def add(self, broker: int) -> BrokerList:
        self.brokers.append(broker)
        return self

    def initialize(self, random: _random.Random) -> None:
        if self.brokers:
            self.brokers.sort()
            self.offset = random.randrange(len(self.brokers))

    def shuffle(self, random: _random.Random) -> None:
        random.shuffle(self.brokers)

    def size(self) -> int:
        return len(self.brokers)

    def next(self, epoch: int) -> int:
        """The next broker, or -1 if this epoch has had them all."""
        if not self.brokers:
            return -1
        if self.epoch != epoch:
            self.epoch = epoch
            self.index = 0
            self.offset = (self.offset + 1) % len(self.brokers)
        if self.index >= len(self.brokers):
            return -1
        broker = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return broker


class Rack:
    def __init__(self) -> None:
        self.fenced = BrokerList()
        self.unfenced = BrokerList()

    def initialize(self, random: _random.Random) -> None:
        self.fenced.initialize(random)
        self.unfenced.initialize(random)

    def shuffle(self, random: _random.Random) -> None:
        self.fenced.shuffle(random)
        self.unfenced.shuffle(random)

    def next_unfenced(self, epoch: int) -> int:
        return self.unfenced.next(epoch)

    def next(self, epoch: int) -> int:
        """An unfenced broker if one is left this epoch, else a fenced one, else -1."""
        result = self.unfenced.next(epoch)
        if result >= 0:
            return result
        return self.fenced.next(epoch)


def _rack_order(name: str | None) -> tuple[bool, str]:
    # Kafka's OptionalStringComparator: brokers with no rack sort before every named rack.
    return (name is not None, name or "")


class RackList:
    def __init__(self, random: _random.Random, brokers: Iterator[UsableBroker]) -> None:
        self.random = random
        self.racks: dict[str | None, Rack] = {}
        self.rack_names: list[str | None] = []
        num_total = num_unfenced = 0
        for broker in brokers:
            rack = self.racks.get(broker.rack)
            if rack is None:
                self.rack_names.append(broker.rack)
                rack = self.racks[broker.rack] = Rack()
            if broker.fenced:
                rack.fenced.add(broker.id)
            else:
                num_unfenced += 1
                rack.unfenced.add(broker.id)
            num_total += 1
        self.rack_names.sort(key=_rack_order)
        for rack in self._racks_in_order():
            rack.initialize(random)
        self.num_total_brokers = num_total
        self.num_unfenced_brokers = num_unfenced
        self.epoch = 0
        self.offset = random.randrange(len(self.rack_names)) if self.rack_names else 0

    def place(self, replication_factor: int) -> list[int]:
        _throw_if_non_positive(replication_factor)
        _throw_if_too_few_brokers(replication_factor, self.num_total_brokers)
        _throw_if_zero(self.num_unfenced_brokers)
        # After as many placements as there are unfenced brokers, shuffle so the next round does not
        # repeat this one's lists; a single unfenced broker never starts a new epoch, or the leader
        # search below would find it taken and loop for ever.
        if self.epoch == self.num_unfenced_brokers and self.num_unfenced_brokers > 1:
            self.shuffle()
            self.epoch = 0
        if self.offset == len(self.rack_names):
            self.offset = 0
        brokers: list[int] = []
        # The leader: the first rack, from the offset on, that has an unfenced broker left.
        first_rack_index = self.offset
        while True:
            result = self.racks[self.rack_names[first_rack_index]].next_unfenced(self.epoch)
            if result >= 0:
                brokers.append(result)
                break
            first_rack_index = (first_rack_index + 1) % len(self.rack_names)
        # The followers: round the racks from the offset, skipping the leader's rack once (it comes
        # round again only when every other rack has given one).
        rack_index = self.offset
        for _ in range(1, replication_factor):
            result = -1
            while result < 0:
                if rack_index == first_rack_index:
                    first_rack_index = -1
                else:
                    result = self.racks[self.rack_names[rack_index]].next(self.epoch)
                rack_index = (rack_index + 1) % len(self.rack_names)
            brokers.append(result)
        self.epoch += 1
        self.offset += 1
        return brokers

    def shuffle(self) -> None:
        self.random.shuffle(self.rack_names)
        for rack in self._racks_in_order():
            rack.shuffle(self.random)

    def _racks_in_order(self) -> list[Rack]:
        # Each rack draws from the one random source, so the order they draw in decides the
        # placements: rack-name order, which is the order Kafka's HashMap of racks iterates in for
        # short names, and what makes a seeded placer place the same way every run.
        return [self.racks[name] for name in sorted(self.racks, key=_rack_order)]


def _throw_if_non_positive(replication_factor: int) -> None:
    if replication_factor <= 0:
        raise Errors.INVALID_REPLICATION_FACTOR.exception(
            f"Invalid replication factor {replication_factor}: the replication factor must be positive."
        )


def _throw_if_zero(num_unfenced: int) -> None:
    if num_unfenced == 0:
        raise Errors.INVALID_REPLICATION_FACTOR.exception("All brokers are currently fenced.")


def _throw_if_too_few_brokers(replication_factor: int, num_total_brokers: int) -> None:
    if replication_factor > num_total_brokers:
        raise Errors.INVALID_REPLICATION_FACTOR.exception(
            f"The target replication factor of {replication_factor} cannot be reached because only "
            f"{num_total_brokers} broker(s) are registered."
        )


class StripedReplicaPlacer(ReplicaPlacer):
    def __init__(self, random: _random.Random) -> None:
        self.random = random

    def place(self, placement: PlacementSpec, cluster: ClusterDescriber) -> list[list[int]]:
        rack_list = RackList(self.random, cluster.usable_brokers())
        _throw_if_non_positive(placement.num_replicas)
        _throw_if_zero(rack_list.num_unfenced_brokers)
        _throw_if_too_few_brokers(placement.num_replicas, rack_list.num_total_brokers)
        return [rack_list.place(placement.num_replicas) for _ in range(placement.num_partitions)]
