"""SnapshotRegistry: snapshots taken in epoch order, looked up, deleted one at a time or up to an
epoch, and reset (Kafka 3.3's SnapshotRegistryTest)."""

from __future__ import annotations

import pytest

from kafka_lite.metadata.timeline import LATEST_EPOCH, SnapshotRegistry, TimelineHashMap, TimelineInteger

pytestmark = pytest.mark.unit


def test_empty_registry():
    registry = SnapshotRegistry()
    with pytest.raises(RuntimeError, match="No in-memory snapshot for epoch 0"):
        registry.get_snapshot(0)
    assert registry.iterator() == []
    assert registry.latest_epoch() < 0 and not registry.has_snapshot(0)


def test_create_snapshots():
    registry = SnapshotRegistry()
    snapshot123 = registry.get_or_create_snapshot(123)
    assert registry.get_snapshot(123) is snapshot123
    with pytest.raises(RuntimeError):
        registry.get_snapshot(456)
    assert registry.iterator() == [snapshot123]
    with pytest.raises(RuntimeError) as error:
        registry.get_or_create_snapshot(1)
    assert str(error.value) == (
        "Can't create a new in-memory snapshot at epoch 1 because there is already a snapshot with epoch 123"
    )
    snapshot456 = registry.get_or_create_snapshot(456)
    assert registry.iterator() == [snapshot123, snapshot456]
    assert registry.iterator(456) == [snapshot456]
    assert registry.reverse_iterator() == [snapshot456, snapshot123]
    assert registry.latest_epoch() == 456


def test_create_and_delete_snapshots():
    registry = SnapshotRegistry()
    snapshot123 = registry.get_or_create_snapshot(123)
    snapshot456 = registry.get_or_create_snapshot(456)
    snapshot789 = registry.get_or_create_snapshot(789)
    registry.delete_snapshot(snapshot456.epoch())
    assert registry.iterator() == [snapshot123, snapshot789]
    assert not registry.has_snapshot(456) and registry.has_snapshot(789)


def test_delete_snapshots_up_to_keeps_the_one_at_the_epoch():
    registry = SnapshotRegistry()
    registry.get_or_create_snapshot(10)
    registry.get_or_create_snapshot(12)
    snapshot14 = registry.get_or_create_snapshot(14)
    registry.delete_snapshots_up_to(14)
    assert registry.iterator() == [snapshot14]
    assert registry.epochs_list() == [14]


def test_create_snapshot_of_latest_returns_it():
    registry = SnapshotRegistry()
    registry.get_or_create_snapshot(10)
    latest = registry.get_or_create_snapshot(12)
    assert registry.get_or_create_snapshot(12) is latest


def test_revert_deletes_the_later_snapshots_and_keeps_the_target():
    registry = SnapshotRegistry()
    counter = TimelineInteger(registry)
    for epoch in (1, 2, 3):
        registry.get_or_create_snapshot(epoch)
        counter.increment()
    registry.revert_to_snapshot(2)
    assert registry.epochs_list() == [1, 2]
    assert counter.get() == 1
    # The target stays usable: a change after the revert is undone by the next revert to it.
    counter.set(7)
    assert counter.get(2) == 1 and counter.get(1) == 0
    registry.revert_to_snapshot(2)
    assert counter.get() == 1


def test_a_deleted_snapshot_cannot_be_read():
    registry = SnapshotRegistry()
    timeline_map = TimelineHashMap(registry)
    registry.get_or_create_snapshot(0)
    timeline_map.put("a", 1)
    registry.get_or_create_snapshot(1)
    registry.delete_snapshot(0)
    with pytest.raises(RuntimeError, match=r"No in-memory snapshot for epoch 0\. Snapshot epochs are: 1"):
        timeline_map.size(0)
    assert timeline_map.size(1) == 1 and timeline_map.get("a", LATEST_EPOCH) == 1


def test_reset_deletes_every_snapshot_and_empties_every_structure():
    registry = SnapshotRegistry()
    timeline_map = TimelineHashMap(registry)
    counter = TimelineInteger(registry)
    registry.get_or_create_snapshot(2)
    timeline_map.put("a", 1)
    counter.set(5)
    registry.get_or_create_snapshot(3)
    registry.reset()
    assert registry.epochs_list() == []
    assert len(timeline_map) == 0 and counter.get() == 0
