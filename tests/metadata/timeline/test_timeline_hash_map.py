"""TimelineHashMap and TimelineHashSet: the current contents, the contents at each snapshot, sizes,
iteration while changing, reverts and merges of deleted snapshots (Kafka 3.3's TimelineHashMapTest,
TimelineHashSetTest and SnapshottableHashTableTest)."""

from __future__ import annotations

import pytest

from kafka_lite.metadata.timeline import LATEST_EPOCH, SnapshotRegistry, TimelineHashMap, TimelineHashSet

pytestmark = pytest.mark.unit


def test_empty_map():
    registry = SnapshotRegistry()
    timeline_map = TimelineHashMap(registry, 1)
    assert timeline_map.is_empty() and timeline_map.size() == 0 and len(timeline_map) == 0
    timeline_map.clear()
    assert timeline_map.is_empty()


def test_nones_forbidden():
    timeline_map = TimelineHashMap(SnapshotRegistry())
    for key, value in [(None, True), ("abc", None), (None, None)]:
        with pytest.raises(TypeError):
            timeline_map.put(key, value)
    with pytest.raises(TypeError):
        TimelineHashSet(SnapshotRegistry()).add(None)


def test_iteration_at_a_snapshot_survives_clear():
    registry = SnapshotRegistry()
    timeline_map = TimelineHashMap(registry)
    timeline_map.put(123, "abc")
    timeline_map.put(456, "def")
    assert sorted(timeline_map) == [123, 456]
    assert sorted(timeline_map.values()) == ["abc", "def"]
    assert timeline_map.contains_value("abc") and 456 in timeline_map
    registry.get_or_create_snapshot(2)
    entries = timeline_map.items(2)
    timeline_map.clear()
    assert sorted(value for _, value in entries) == ["abc", "def"]
    assert sorted(timeline_map.items(2)) == [(123, "abc"), (456, "def")]
    assert not timeline_map.is_empty(2) and timeline_map.is_empty()


def test_map_methods():
    timeline_map = TimelineHashMap(SnapshotRegistry())
    assert timeline_map.put_if_absent(1, "xyz") is None
    assert timeline_map.put_if_absent(1, "123") == "xyz"
    timeline_map.put_all({2: "b"})
    assert timeline_map.contains_key(2)
    assert timeline_map.put(2, "c") == "b"
    assert timeline_map.remove(1) == "xyz"
    assert timeline_map.remove(2) == "c"
    assert timeline_map.remove(2) is None


def test_map_equals():
    registry = SnapshotRegistry()
    map1, map2 = TimelineHashMap(registry), TimelineHashMap(registry)
    map1.put(1, "xyz")
    map1.put(2, "abc")
    map2.put(1, "xyz")
    assert map1 != map2
    map2.put(2, "abc")
    assert map1 == map2 and map1 == {1: "xyz", 2: "abc"}


def test_add_and_remove_across_snapshots():
    # SnapshottableHashTableTest.testAddAndRemove, with values for its elements' second letter.
    registry = SnapshotRegistry()
    table = TimelineHashMap(registry)
    assert table.put(1, "B") is None
    assert table.size() == 1
    registry.get_or_create_snapshot(0)
    assert table.put(1, "A") == "B"
    assert table.get(1, 0) == "B" and table.get(1) == "A"
    table.put(2, "A")
    table.put(3, "A")
    assert table.size() == 3 and table.size(0) == 1
    assert table.get(2, 0) is None and not table.contains_key(3, 0)
    registry.get_or_create_snapshot(1)
    assert [table.remove(k) for k in (1, 2, 3)] == ["A", "A", "A"]
    assert (table.size(), table.size(0), table.size(1)) == (0, 1, 3)
    registry.delete_snapshot(0)
    assert table.size(1) == 3 and table.get(1, 1) == "A"
    registry.delete_snapshot(1)
    assert table.size() == 0


def test_revert():
    registry = SnapshotRegistry()
    table = TimelineHashMap(registry)
    for key in (1, 2, 3):
        table.put(key, "A")
    registry.get_or_create_snapshot(0)
    table.put(1, "B")
    table.put(3, "B")
    registry.get_or_create_snapshot(1)
    assert sorted(table.items()) == [(1, "B"), (2, "A"), (3, "B")]
    for key in (1, 2, 3):
        table.remove(key)
    assert (table.size(), table.size(0), table.size(1)) == (0, 3, 3)
    registry.revert_to_snapshot(0)
    assert sorted(table.items()) == [(1, "A"), (2, "A"), (3, "A")]


def test_delete_on_empty_delta_table():
    registry = SnapshotRegistry()
    timeline_set = TimelineHashSet(registry, 5)
    registry.get_or_create_snapshot(100)
    timeline_set.add("bar")
    registry.get_or_create_snapshot(200)
    timeline_set.add("baz")
    registry.revert_to_snapshot(100)
    assert timeline_set.is_empty()
    timeline_set.add("foo")
    registry.get_or_create_snapshot(300)
    timeline_set.remove("bar")
    registry.revert_to_snapshot(100)
    assert timeline_set.is_empty()


def test_set_iteration():
    registry = SnapshotRegistry()
    timeline_set = TimelineHashSet(registry, 1)
    for item in "abcd":
        timeline_set.add(item)
    assert timeline_set.remove("d") and not timeline_set.remove("d")
    registry.get_or_create_snapshot(2)
    assert timeline_set.remove("c")
    assert sorted(timeline_set.items(2)) == ["a", "b", "c"]
    assert sorted(timeline_set) == ["a", "b"]
    assert (timeline_set.size(), timeline_set.size(2)) == (2, 3)
    assert timeline_set.contains("c", 2) and not timeline_set.contains("c", LATEST_EPOCH)
    timeline_set.clear()
    assert timeline_set.is_empty() and not timeline_set.is_empty(2)


def test_set_methods():
    registry = SnapshotRegistry()
    timeline_set = TimelineHashSet(registry, 1)
    assert timeline_set.add("xyz") and not timeline_set.add("xyz")
    assert timeline_set.remove("xyz") and not timeline_set.remove("xyz")
    assert timeline_set.add_all(["abc", "def", "ghi"])
    assert not timeline_set.add_all(["abc", "def", "ghi"])
    assert timeline_set.add_all(["abc", "jkl"])
    registry.get_or_create_snapshot(5)
    for item in list(timeline_set):
        if item.startswith(("a", "d", "g")):
            timeline_set.remove(item)
    assert timeline_set == {"jkl"}
    assert sorted(timeline_set.items(5)) == ["abc", "def", "ghi", "jkl"]


def test_changing_the_map_while_walking_it():
    registry = SnapshotRegistry()
    table = TimelineHashMap(registry)
    table.put_all({1: "a", 2: "b", 3: "c"})
    for key in table:
        table.remove(key)
        table.put(key + 10, "x")
    assert sorted(table) == [11, 12, 13]


def test_a_key_changed_twice_between_snapshots_reads_its_first_value():
    registry = SnapshotRegistry()
    table = TimelineHashMap(registry)
    table.put("k", 1)
    registry.get_or_create_snapshot(10)
    table.put("k", 2)
    table.remove("k")
    table.put("k", 3)
    registry.get_or_create_snapshot(20)
    table.remove("k")
    assert (table.get("k", 10), table.get("k", 20), table.get("k")) == (1, 3, None)
    registry.delete_snapshot(10)
    assert table.get("k", 20) == 3
    registry.revert_to_snapshot(20)
    assert table.get("k") == 3


def test_deleting_a_middle_snapshot_keeps_the_older_record():
    # Deleting snapshot 2 merges its record of "k" (1, its value at 2) into snapshot 1's, which
    # already has one (absent, its value at 1): the older record is the one that stays.
    registry = SnapshotRegistry()
    table = TimelineHashMap(registry)
    registry.get_or_create_snapshot(1)
    table.put("k", 1)
    registry.get_or_create_snapshot(2)
    table.put("k", 2)
    registry.get_or_create_snapshot(3)
    registry.delete_snapshot(2)
    assert (table.get("k", 1), table.items(1), table.get("k", 3)) == (None, [], 2)
    registry.revert_to_snapshot(1)
    assert table.is_empty()
