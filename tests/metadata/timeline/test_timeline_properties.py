"""Random operations and snapshots on a TimelineHashMap, a TimelineHashSet and a TimelineInteger,
checked after every step against a model that keeps a full copy of the state at each snapshot:
reading at any live epoch, the sizes, reverts and deletes (the "equivalent" that
timeline_hash_map.py's header argues for, held by a test)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_lite.metadata.timeline import SnapshotRegistry, TimelineHashMap, TimelineHashSet, TimelineInteger

pytestmark = pytest.mark.unit

KEYS = st.integers(min_value=0, max_value=3)
# Each operation is a name and the arguments any name may use: a key, a value, and an index that picks
# one of the live snapshots. Snapshots, puts and deletes are drawn more often than the rest, so that a
# run has several snapshots with changes to the same keys between them to read, merge and revert.
NAMES = (
    ["put"] * 3
    + ["snapshot"] * 3
    + ["delete"] * 2
    + ["remove", "add", "discard", "increment", "revert", "delete_up_to"]
)
OPERATIONS = st.tuples(
    st.sampled_from(NAMES), KEYS, st.integers(min_value=0, max_value=3), st.integers(0, 10)
)


class Model:
    """The obvious structure: the current state, and a full copy of it per snapshot."""

    def __init__(self):
        self.map, self.set, self.counter = {}, set(), 0
        self.snapshots: dict[int, tuple[dict, set, int]] = {}

    def take(self, epoch):
        self.snapshots[epoch] = (dict(self.map), set(self.set), self.counter)

    def revert(self, epoch):
        saved_map, saved_set, self.counter = self.snapshots[epoch]
        self.map, self.set = dict(saved_map), set(saved_set)
        self.snapshots = {e: s for e, s in self.snapshots.items() if e <= epoch}


def pick(epochs, index):
    return epochs[index % len(epochs)] if epochs else None


def check(model, registry, timeline_map, timeline_set, counter):
    assert registry.epochs_list() == sorted(model.snapshots)
    assert dict(timeline_map.items()) == model.map and set(timeline_set) == model.set
    assert counter.get() == model.counter
    for epoch, (saved_map, saved_set, saved_counter) in model.snapshots.items():
        assert dict(timeline_map.items(epoch)) == saved_map, f"map at epoch {epoch}"
        assert timeline_map.size(epoch) == len(saved_map)
        assert {k: timeline_map.get(k, epoch) for k in range(8)} == {k: saved_map.get(k) for k in range(8)}
        assert set(timeline_set.items(epoch)) == saved_set and timeline_set.size(epoch) == len(saved_set)
        assert all(timeline_set.contains(k, epoch) == (k in saved_set) for k in range(8))
        assert counter.get(epoch) == saved_counter, f"counter at epoch {epoch}"


@settings(max_examples=80, deadline=None)
@given(operations=st.lists(OPERATIONS, min_size=20, max_size=60), reset_at=st.none() | st.integers(0, 50))
def test_timeline_structures_match_a_full_copy_per_snapshot(operations, reset_at):
    # A reset empties everything, so it comes at most once a run, at a drawn step.
    registry = SnapshotRegistry()
    timeline_map, timeline_set, counter = (
        TimelineHashMap(registry),
        TimelineHashSet(registry),
        TimelineInteger(registry),
    )
    model = Model()
    next_epoch = 0
    for step, operation in enumerate(operations):
        name, key, value, index = operation
        epochs = registry.epochs_list()
        if name == "put":
            assert timeline_map.put(key, value) == model.map.get(key)
            model.map[key] = value
        elif name == "remove":
            assert timeline_map.remove(key) == model.map.pop(key, None)
        elif name == "add":
            assert timeline_set.add(key) == (key not in model.set)
            model.set.add(key)
        elif name == "discard":
            assert timeline_set.remove(key) == (key in model.set)
            model.set.discard(key)
        elif name == "increment":
            counter.increment()
            model.counter += 1
        elif name == "snapshot":
            next_epoch += 1 + step % 3  # epochs grow, with gaps as offsets have
            registry.get_or_create_snapshot(next_epoch)
            model.take(next_epoch)
        elif name == "revert" and epochs:
            registry.revert_to_snapshot(pick(epochs, index))
            model.revert(pick(epochs, index))
        elif name == "delete" and epochs:
            registry.delete_snapshot(pick(epochs, index))
            del model.snapshots[pick(epochs, index)]
        elif name == "delete_up_to" and epochs:
            target = pick(epochs, index)
            registry.delete_snapshots_up_to(target)
            model.snapshots = {e: s for e, s in model.snapshots.items() if e >= target}
        if step == reset_at:
            registry.reset()
            model = Model()
        check(model, registry, timeline_map, timeline_set, counter)
