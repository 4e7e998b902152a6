"""The Kafka-backed stores on the test cluster: what one worker's store writes, another's reads."""

from __future__ import annotations

import pytest

from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.json.json_converter import JsonConverter
from kafka_lite.connect.runtime.target_state import TargetState
from kafka_lite.connect.storage.config_backing_store import ConfigBackingStore
from kafka_lite.connect.storage.kafka_config_backing_store import KafkaConfigBackingStore
from kafka_lite.connect.storage.kafka_offset_backing_store import KafkaOffsetBackingStore
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId as Id
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration


def internal_converter() -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "false"}, False)
    return converter


class RecordingUpdateListener(ConfigBackingStore.UpdateListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def on_connector_config_remove(self, connector: str) -> None:
        self.events.append(("remove", connector))

    def on_connector_config_update(self, connector: str) -> None:
        self.events.append(("update", connector))

    def on_task_config_update(self, tasks: list[Id]) -> None:
        self.events.append(("tasks", tuple(tasks)))

    def on_connector_target_state_change(self, connector: str) -> None:
        self.events.append(("target-state", connector))


def config_store(bootstrap: str, topic: str) -> tuple[KafkaConfigBackingStore, RecordingUpdateListener]:
    store = KafkaConfigBackingStore(internal_converter())
    listener = RecordingUpdateListener()
    store.set_update_listener(listener)
    store.configure({"bootstrap.servers": bootstrap, "config.storage.topic": topic,
                     "config.storage.replication.factor": 1})  # fmt: skip
    store.start()
    return store, listener


def test_a_config_written_by_one_store_is_read_by_a_second(cluster):
    topic = topic_name("connect-configs")
    writer, _ = config_store(cluster.bootstrap_servers, topic)
    reader, listener = config_store(cluster.bootstrap_servers, topic)
    try:
        config = {"name": "src", "connector.class": "FileStreamSource", "topic": "t"}
        writer.put_connector_config("src", config)
        writer.put_task_configs("src", [{"topic": "t", "n": "0"}, {"topic": "t", "n": "1"}])
        writer.put_target_state("src", TargetState.PAUSED)
        # Each store learns even its own writes by reading them back from the topic (Kafka's
        # KafkaConfigBackingStore updates its state only in the log's callback), so both wait.
        for store in (reader, writer):
            wait_until(
                lambda store=store: store.snapshot().target_state("src") is TargetState.PAUSED,
                what="the paused state",
            )
        snapshot = reader.snapshot()
        assert snapshot.connector_config("src") == config
        assert snapshot.tasks("src") == [Id("src", 0), Id("src", 1)]
        assert snapshot.task_config(Id("src", 1)) == {"topic": "t", "n": "1"}
        assert snapshot.offset == writer.snapshot().offset == 5  # connector, 2 tasks, commit, target state
        assert listener.events == [
            ("update", "src"),
            ("tasks", (Id("src", 0), Id("src", 1))),
            ("target-state", "src"),
        ]

        # A third store, started now, reads the same state from the topic.
        late, _ = config_store(cluster.bootstrap_servers, topic)
        try:
            assert late.snapshot() == snapshot
        finally:
            late.stop()

        writer.remove_connector_config("src")
        wait_until(lambda: not reader.snapshot().contains("src"), what="the removal")
        assert reader.snapshot().tasks("src") == []
        assert ("remove", "src") in listener.events
    finally:
        writer.stop()
        reader.stop()


def test_tasks_are_not_visible_before_their_commit(cluster):
    topic = topic_name("connect-configs")
    writer, _ = config_store(cluster.bootstrap_servers, topic)
    reader, _ = config_store(cluster.bootstrap_servers, topic)
    try:
        writer.put_connector_config("c", {"name": "c"})
        # Task records without a commit, as a leader that died half way through writes them.
        writer._send("task-c-0", {"properties": {"x": "1"}})
        writer.refresh(10_000)
        reader.refresh(10_000)
        assert reader.snapshot().tasks("c") == [] and reader.snapshot().task_count("c") == 0
        # A commit naming more tasks than were written leaves the connector inconsistent.
        writer._send("commit-c", {"tasks": 2})
        reader.refresh(10_000)
        assert reader.snapshot().inconsistent_connectors == {"c"}
        assert reader.snapshot().tasks("c") == []
        writer.put_task_configs("c", [{"x": "2"}])
        reader.refresh(10_000)
        assert reader.snapshot().tasks("c") == [Id("c", 0)]
        assert reader.snapshot().inconsistent_connectors == frozenset()
    finally:
        writer.stop()
        reader.stop()


def test_offsets_set_by_one_store_are_got_by_another(cluster):
    topic = topic_name("connect-offsets")
    configs = {"bootstrap.servers": cluster.bootstrap_servers, "offset.storage.topic": topic,
               "offset.storage.partitions": 3, "offset.storage.replication.factor": 1}  # fmt: skip
    stores = [KafkaOffsetBackingStore(), KafkaOffsetBackingStore()]
    for store in stores:
        store.configure(configs)
        store.start()
    try:
        stores[0].set({b'["c",{"f":"a"}]': b'{"position":10}', b'["c",{"f":"b"}]': b"1"}).result(10)
        got = stores[1].get([b'["c",{"f":"a"}]', b"missing"]).result(10)
        assert got == {b'["c",{"f":"a"}]': b'{"position":10}'}
    finally:
        for store in stores:
            store.stop()


def test_a_config_topic_of_more_than_one_partition_is_refused(cluster):
    topic = topic_name("connect-configs")
    cluster.create_topic(topic, partitions=2)
    with pytest.raises(ConnectException, match="exactly 1"):
        config_store(cluster.bootstrap_servers, topic)
