"""KafkaStatusBackingStore without a cluster: what it writes, and the generation check of put_safe."""

from __future__ import annotations

import json
from types import SimpleNamespace

from kafka_lite.connect.json.json_converter import JsonConverter
from kafka_lite.connect.runtime.abstract_status import ConnectorStatus, State, TaskStatus
from kafka_lite.connect.storage.kafka_status_backing_store import KafkaStatusBackingStore
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId as Id


class FakeLog:
    """Records what is sent, and hands each record back to the store as its log's reader would."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict | None]] = []
        self.store: KafkaStatusBackingStore | None = None

    def send(self, key: bytes, value: bytes | None, callback=None) -> None:
        self.sent.append((key.decode(), None if value is None else json.loads(value)))

    def deliver(self) -> None:
        for key, value in self.sent:
            data = None if value is None else json.dumps(value).encode()
            self.store._read(None, SimpleNamespace(key=key.encode(), value=data))


def store() -> tuple[KafkaStatusBackingStore, FakeLog]:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "false"}, False)
    s = KafkaStatusBackingStore(converter)
    s.topic = "connect-status"
    s.kafka_log = fake = FakeLog()
    fake.store = s
    return s, fake


def test_statuses_are_written_with_kafkas_keys_and_fields():
    s, log = store()
    s.put(TaskStatus(Id("my-conn", 3), State.RUNNING, "w1:8083", 7))
    s.put(ConnectorStatus("my-conn", State.FAILED, "w1:8083", 7, "Traceback ..."))
    assert log.sent == [
        ("status-task-my-conn-3", {"state": "RUNNING", "worker_id": "w1:8083", "generation": 7}),
        ("status-connector-my-conn", {"state": "FAILED", "trace": "Traceback ...", "worker_id": "w1:8083",
                                      "generation": 7}),
    ]  # fmt: skip
    log.deliver()
    assert s.get(Id("my-conn", 3)) == TaskStatus(Id("my-conn", 3), State.RUNNING, "w1:8083", 7)
    assert s.get_connector("my-conn").trace == "Traceback ..."
    assert s.connectors() == {"my-conn"}


def test_an_older_generations_safe_write_does_not_overwrite_a_newer_owners_status():
    s, log = store()
    task = Id("c", 0)
    s.put(TaskStatus(task, State.RUNNING, "new-owner", 5))
    log.deliver()
    log.sent.clear()
    # The old owner's UNASSIGNED, of generation 4, arrives late: not written.
    s.put_safe(TaskStatus(task, State.UNASSIGNED, "old-owner", 4))
    assert log.sent == []
    # Of a newer generation, or by the same worker, it is.
    s.put_safe(TaskStatus(task, State.UNASSIGNED, "old-owner", 6))
    s.put_safe(TaskStatus(task, State.FAILED, "new-owner", 5))
    assert [value["worker_id"] for _, value in log.sent] == ["old-owner", "new-owner"]


def test_destroyed_is_a_tombstone_that_removes_the_status():
    s, log = store()
    s.put(TaskStatus(Id("c", 0), State.RUNNING, "w", 1))
    s.put(TaskStatus(Id("c", 0), State.DESTROYED, "w", 1))
    assert log.sent[-1] == ("status-task-c-0", None)
    log.deliver()
    assert s.get(Id("c", 0)) is None and s.get_all("c") == []
