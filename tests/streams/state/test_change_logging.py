"""Change logging: each put and delete goes to <application.id>-<store>-changelog, task's partition."""

import pytest

from kafka_lite.streams.serialization import Serdes
from kafka_lite.streams.state.stores import Stores
from tests.streams.state.support import MockContext, TaskId

pytestmark = pytest.mark.unit

ONE = b"\x00" * 7 + b"\x01"
TWO = b"\x00" * 7 + b"\x02"


@pytest.mark.parametrize("kind", ["in_memory", "persistent"])
def test_puts_and_deletes_are_sent_to_the_changelog(kind, tmp_path):
    supplier = getattr(Stores.create("counts").with_keys(Serdes.String()).with_values(Serdes.Long()), kind)()
    supplier = supplier.enable_logging({"retention.ms": "1000"}).build()
    assert supplier.logging_enabled() and supplier.log_config() == {"retention.ms": "1000"}
    store = supplier.get()
    context = MockContext(tmp_path, application_id="wordcount", task_id=TaskId(1, 2))
    store.init(context, store)
    assert context.registered["counts"][1] is True

    context.record_timestamp = 100
    store.put("a", 1)
    context.record_timestamp = 200
    store.put_all([("b", 2)])
    assert store.put_if_absent("a", 5) == 1  # present: no write, nothing logged
    assert store.delete("a") == 1
    topic = "wordcount-counts-changelog"
    assert context.collector.sent == [
        (topic, b"a", ONE, 2, 100),
        (topic, b"b", TWO, 2, 200),
        (topic, b"a", None, 2, 200),
    ]
    store.close()


def test_an_unlogged_store_sends_nothing(tmp_path):
    store = Stores.create("s").with_keys(Serdes.String()).with_values(Serdes.Long()).in_memory()
    store = store.disable_logging().build().get()
    context = MockContext(tmp_path)
    store.init(context, store)
    store.put("a", 1)
    store.delete("a")
    assert context.collector.sent == []


def test_the_changelog_restores_an_empty_store(tmp_path):
    """What one task logged, another task's fresh store restores to the same contents."""
    supplier = Stores.create("s").with_keys(Serdes.String()).with_values(Serdes.Long()).in_memory().build()
    first, first_context = supplier.get(), MockContext(tmp_path / "a")
    first.init(first_context, first)
    first.put("x", 1)
    first.put("y", 2)
    first.delete("x")
    first.put("z", 1)

    second, second_context = supplier.get(), MockContext(tmp_path / "b")
    second.init(second_context, second)
    second_context.restore("s", [(key, value) for _, key, value, _, _ in first_context.collector.sent])
    assert list(second.all()) == list(first.all()) == [("y", 2), ("z", 1)]
    assert second_context.collector.sent == []  # restoring is not logged again
