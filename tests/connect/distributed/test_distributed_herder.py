"""Two distributed workers on the test cluster: the group deals connectors and tasks over both,
a follower refuses config writes naming the leader, a worker that dies loses its work to the other,
and a file goes through a topic into another file at least once."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from kafka_lite.connect.errors import NotFoundException
from kafka_lite.connect.json.json_converter import JsonConverter
from kafka_lite.connect.runtime.distributed.distributed_config import DistributedConfig
from kafka_lite.connect.runtime.distributed.distributed_herder import DistributedHerder
from kafka_lite.connect.runtime.distributed.request_target_exception import NotLeaderException
from kafka_lite.connect.runtime.rest.errors.connect_rest_exception import BadRequestException
from kafka_lite.connect.runtime.worker import Worker
from kafka_lite.connect.storage.kafka_config_backing_store import KafkaConfigBackingStore
from kafka_lite.connect.storage.kafka_offset_backing_store import KafkaOffsetBackingStore
from kafka_lite.connect.storage.kafka_status_backing_store import KafkaStatusBackingStore
from kafka_lite.connect.util.callback import FutureCallback
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId as Id
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

JSON = "org.apache.kafka.connect.json.JsonConverter"
SESSION_TIMEOUT_MS = 4000
_ports = itertools.count(18083)


def worker_props(bootstrap: str, group: str) -> dict[str, str]:
    return {
        "bootstrap.servers": bootstrap, "group.id": group,
        "key.converter": JSON, "value.converter": JSON,
        "internal.key.converter": JSON, "internal.value.converter": JSON,
        "internal.key.converter.schemas.enable": "false", "internal.value.converter.schemas.enable": "false",
        "offset.storage.topic": f"{group}-offsets", "config.storage.topic": f"{group}-configs",
        "status.storage.topic": f"{group}-status",
        "offset.storage.partitions": "3", "status.storage.partitions": "2",
        "offset.storage.replication.factor": "1", "config.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        # Fast: a lost worker is noticed in 4 s, offsets are committed every 100 ms.
        "session.timeout.ms": str(SESSION_TIMEOUT_MS), "heartbeat.interval.ms": "500",
        "rebalance.timeout.ms": "10000", "offset.flush.interval.ms": "100",
        "consumer.session.timeout.ms": "4000", "consumer.heartbeat.interval.ms": "500",
    }  # fmt: skip


def internal_converter(config: DistributedConfig) -> JsonConverter:
    converter = JsonConverter()
    converter.configure(config.originals_with_prefix("internal.value.converter."), False)
    return converter


def new_herder(props: dict[str, str], name: str) -> DistributedHerder:
    config = DistributedConfig(props)
    url = f"http://127.0.0.1:{next(_ports)}/"
    worker = Worker(name, config, KafkaOffsetBackingStore())
    status_store = KafkaStatusBackingStore(internal_converter(config))
    status_store.configure(config.values)
    config_store = KafkaConfigBackingStore(internal_converter(config))
    config_store.configure(config.values)
    return DistributedHerder(config, worker, name, status_store, config_store, url)


def call(method, *args, timeout_s: float = 30):
    """A herder request, waited for: its result, or its exception raised."""
    future = FutureCallback()
    method(*args, future)
    return future.result(timeout_s)


def work(herder: DistributedHerder) -> set:
    return herder.worker.connector_names() | herder.worker.task_ids()


@pytest.fixture(scope="module")
def workers(cluster):
    group = topic_name("connect-cluster")
    props = worker_props(cluster.bootstrap_servers, group)
    herders = [new_herder(props, "worker-a"), new_herder(props, "worker-b")]
    for herder in herders:
        herder.start()
    # Both in one generation, one of them leading.
    wait_until(lambda: sum(h.is_leader() for h in herders) == 1 and len({h.generation() for h in herders}) == 1
               and all(h.rebalance_resolved for h in herders), timeout_s=30, what="a group of two")  # fmt: skip
    yield props, herders
    for herder in herders:
        if herder.herder_thread.is_alive():
            herder.stop()


def leader_and_follower(herders):
    leader = next(h for h in herders if h.is_leader())
    return leader, next(h for h in herders if h is not leader)


def source_config(name: str, path: Path, topic: str) -> dict[str, str]:
    return {
        "name": name,
        "connector.class": "FileStreamSource",
        "tasks.max": "2",
        "file": str(path),
        "topic": topic,
    }


def sink_config(name: str, path: Path, topic: str) -> dict[str, str]:
    return {
        "name": name,
        "connector.class": "FileStreamSink",
        "tasks.max": "1",
        "file": str(path),
        "topics": topic,
    }


def lines_of(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_connectors_and_tasks_are_dealt_over_both_workers(workers, tmp_path):
    _, herders = workers
    leader, follower = leader_and_follower(herders)
    topic = topic_name("dist-spread")
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"line {i}\n" for i in range(20)))
    created = call(
        leader.put_connector_config, "spread-src", source_config("spread-src", source, topic), False
    )
    assert created.created and created.result.name == "spread-src"
    call(leader.put_connector_config, "spread-sink", sink_config("spread-sink", sink, topic), False)
    expected = {"spread-src", Id("spread-src", 0), "spread-sink", Id("spread-sink", 0)}
    wait_until(lambda: set().union(*map(work, herders)) >= expected, timeout_s=30, what="all work running")
    # The file source makes one task whatever tasks.max says; round robin over two workers puts
    # the sink connector and the source connector on one and their tasks on the other.
    assert all(work(h) & expected for h in herders)
    wait_until(lambda: len(lines_of(sink)) >= 20, what="the sink file")

    # Any worker answers for any connector, from the status topic.
    def running(h: DistributedHerder) -> bool:
        status = h.connector_status("spread-src")
        return status.connector.state == "RUNNING" and [t.state for t in status.tasks] == ["RUNNING"]

    for h in herders:
        wait_until(lambda h=h: running(h), what=f"{h.worker_id} to report spread-src running")
    assert call(follower.connectors) == ["spread-sink", "spread-src"]
    assert [t.id for t in call(follower.task_configs, "spread-src")] == [Id("spread-src", 0)]


def test_a_follower_refuses_writes_naming_the_leader_and_sees_the_leaders_write(workers, tmp_path):
    _, herders = workers
    leader, follower = leader_and_follower(herders)
    topic = topic_name("dist-config")
    config = source_config("cfg-src", tmp_path / "in.txt", topic)
    with pytest.raises(NotLeaderException) as refused:
        call(follower.put_connector_config, "cfg-src", config, False)
    assert refused.value.forward_url == leader.member.coordinator.rest_url
    call(leader.put_connector_config, "cfg-src", config, False)
    changed = {**config, "file": str(tmp_path / "other.txt")}
    assert not call(leader.put_connector_config, "cfg-src", changed, True).created
    wait_until(
        lambda: call(follower.connector_config, "cfg-src") == changed, what="the follower to see the change"
    )
    # A bad config is refused whole: nothing is written.
    with pytest.raises(BadRequestException, match=r"tasks\.max"):
        call(leader.put_connector_config, "cfg-bad", {**config, "name": "cfg-bad", "tasks.max": "-1"}, False)
    with pytest.raises(NotFoundException):
        call(follower.connector_config, "cfg-bad")
    call(leader.delete_connector_config, "cfg-src")
    wait_until(lambda: "cfg-src" not in call(follower.connectors), what="the deletion")
