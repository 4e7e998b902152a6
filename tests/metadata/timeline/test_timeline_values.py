"""TimelineObject, TimelineInteger and TimelineLong: a value read now and at each snapshot, reverted
and reset (Kafka 3.3's TimelineObjectTest, TimelineIntegerTest and TimelineLongTest)."""

from __future__ import annotations

import pytest

from kafka_lite.metadata.timeline import (
    LATEST_EPOCH,
    SnapshotRegistry,
    TimelineInteger,
    TimelineLong,
    TimelineObject,
)
from kafka_lite.metadata.timeline.timeline_integer import INIT

pytestmark = pytest.mark.unit


def test_modify_value():
    registry = SnapshotRegistry()
    value = TimelineObject(registry, "default")
    assert value.get() == "default" and value.get(LATEST_EPOCH) == "default"
    value.set("1")
    value.set("2")
    assert value.get() == "2" and value.get(LATEST_EPOCH) == "2"


def test_repr_and_equals():
    registry = SnapshotRegistry()
    first = TimelineObject(registry, "")
    first.set("a")
    second = TimelineObject(registry, "")
    assert first != second
    second.set("a")
    assert repr(second) == "TimelineObject('a')"
    assert first == second


def test_none_is_refused():
    registry = SnapshotRegistry()
    with pytest.raises(TypeError):
        TimelineObject(registry, None)
    with pytest.raises(TypeError):
        TimelineObject(registry, "x").set(None)


def test_snapshot():
    registry = SnapshotRegistry()
    value = TimelineObject(registry, "1000")
    registry.get_or_create_snapshot(2)
    value.set("1001")
    registry.get_or_create_snapshot(3)
    value.set("1002")
    value.set("1003")
    value.set("1002")
    registry.get_or_create_snapshot(4)
    assert [value.get(2), value.get(3), value.get(4)] == ["1000", "1001", "1002"]
    registry.revert_to_snapshot(3)
    assert value.get() == "1001"
    registry.revert_to_snapshot(2)
    assert value.get() == "1000"


def test_deleting_a_middle_snapshot_keeps_the_older_value():
    registry = SnapshotRegistry()
    value = TimelineObject(registry, "a")
    registry.get_or_create_snapshot(1)
    value.set("b")
    registry.get_or_create_snapshot(2)
    value.set("c")
    registry.get_or_create_snapshot(3)
    registry.delete_snapshot(2)
    assert value.get(1) == "a" and value.get(3) == "c"
    registry.revert_to_snapshot(1)
    assert value.get() == "a"


def test_reset():
    registry = SnapshotRegistry()
    value = TimelineObject(registry, "<default>")
    registry.get_or_create_snapshot(2)
    value.set("first value")
    registry.get_or_create_snapshot(3)
    value.set("second value")
    registry.reset()
    assert registry.epochs_list() == []
    assert value.get() == "<default>"


@pytest.mark.parametrize("kind", [TimelineInteger, TimelineLong])
def test_integer_snapshot(kind):
    registry = SnapshotRegistry()
    number = kind(registry)
    assert number.get() == INIT
    registry.get_or_create_snapshot(2)
    number.set(1)
    registry.get_or_create_snapshot(3)
    number.set(2)
    number.increment()
    number.increment()
    number.decrement()
    registry.get_or_create_snapshot(4)
    assert [number.get(2), number.get(3), number.get(4)] == [0, 1, 3]
    registry.revert_to_snapshot(3)
    assert number.get() == 1
    registry.revert_to_snapshot(2)
    assert number.get() == 0


@pytest.mark.parametrize("kind", [TimelineInteger, TimelineLong])
def test_integer_reset(kind):
    registry = SnapshotRegistry()
    number = kind(registry)
    registry.get_or_create_snapshot(2)
    number.set(1)
    registry.get_or_create_snapshot(3)
    number.set(2)
    registry.reset()
    assert registry.epochs_list() == [] and number.get() == INIT
