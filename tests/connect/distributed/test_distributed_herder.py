"""Distributed workers on the test cluster, built as ``kafka-lite connect distributed`` builds them:
the group deals connectors and tasks over the workers, a follower forwards config writes to the
leader, pause and resume reach every task, and a worker killed with SIGKILL loses its work to the
others within the session timeout while a file still goes through a topic into another file, every
line at least once."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from kafka_lite.connect.errors import NotFoundException
from kafka_lite.connect.runtime.distributed.connect_distributed import Connect, connect_distributed
from kafka_lite.connect.runtime.distributed.distributed_herder import DistributedHerder
from kafka_lite.connect.runtime.distributed.request_target_exception import (
    NotLeaderException,
    RequestTargetException,
)
from kafka_lite.connect.runtime.rest.errors.connect_rest_exception import BadRequestException
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId as Id
from tests.support.herder import call
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

KAFKA_LITE = str(Path(sys.executable).parent / "kafka-lite")
ROOT = Path(__file__).resolve().parents[3]
JSON = "org.apache.kafka.connect.json.JsonConverter"
SESSION_TIMEOUT_MS = 4000
REBALANCE_TIMEOUT_MS = 10000


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
        "rest.host.name": "127.0.0.1", "rest.port": "0",
        # Fast: a lost worker is noticed in 4 s, offsets are committed every 100 ms.
        "session.timeout.ms": str(SESSION_TIMEOUT_MS), "heartbeat.interval.ms": "500",
        "rebalance.timeout.ms": str(REBALANCE_TIMEOUT_MS), "offset.flush.interval.ms": "100",
        "consumer.session.timeout.ms": "4000", "consumer.heartbeat.interval.ms": "500",
    }  # fmt: skip


def rest(method: str, url: str, body: object = None, timeout_s: float = 30) -> tuple[int, object]:
    """One REST call: its status and JSON body. A 409 (a rebalance is due) is asked again, as a
    client of Kafka's REST API does, until ``timeout_s``."""
    data = None if body is None else json.dumps(body).encode()
    deadline = time.monotonic() + timeout_s
    while True:
        request = urllib.request.Request(
            url, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as e:
            if e.code != 409 or time.monotonic() > deadline:
                return e.code, json.loads(e.read() or b"null")
        time.sleep(0.05)


def work(herder: DistributedHerder) -> set:
    return herder.worker.connector_names() | herder.worker.task_ids()


def settled(herders: list[DistributedHerder], members: int) -> bool:
    """One generation, one leader that assigned to ``members`` workers, every worker running its share."""
    leaders = [h for h in herders if h.is_leader()]
    return (
        len(leaders) == 1
        and leaders[0].member.coordinator.leader_state is not None
        and len(leaders[0].member.coordinator.leader_state.all_members) == members
        and len({h.generation() for h in herders}) == 1
        and all(h.rebalance_resolved for h in herders)
    )


@pytest.fixture(scope="module")
def workers(cluster):
    props = worker_props(cluster.bootstrap_servers, topic_name("connect-cluster"))
    connects: list[Connect] = [connect_distributed(props), connect_distributed(props)]
    for connect in connects:
        connect.start()
    wait_until(lambda: settled([c.herder for c in connects], 2), timeout_s=30, what="a group of two")
    yield props, connects
    for connect in connects:
        connect.stop()


def leader_and_follower(connects: list[Connect]) -> tuple[Connect, Connect]:
    """The two workers once their group has settled (an earlier test's deletions rebalance it)."""
    wait_until(lambda: settled([c.herder for c in connects], 2), timeout_s=30, what="a settled group of two")
    leader = next(c for c in connects if c.herder.is_leader())
    return leader, next(c for c in connects if c is not leader)


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


def statuses(herder: DistributedHerder, connector: str) -> list[tuple[str, str]]:
    """(state, worker id) of the connector, then of each task, from the status topic."""
    status = herder.connector_status(connector)
    return [(status.connector.state, status.connector.worker_id)] + [
        (t.state, t.worker_id) for t in status.tasks
    ]


def delete(connect: Connect, *names: str) -> None:
    for name in names:
        call(connect.herder.delete_connector_config, name)


def test_connectors_and_tasks_are_dealt_over_both_workers(cluster, workers, tmp_path):
    _, connects = workers
    leader, follower = leader_and_follower(connects)
    herders = [c.herder for c in connects]
    topic = topic_name("dist-spread")
    cluster.create_topic(topic, partitions=1)  # before the sink subscribes to it
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"line {i}\n" for i in range(20)))
    created = call(
        leader.herder.put_connector_config, "spread-src", source_config("spread-src", source, topic), False
    )
    assert created.created and created.result.name == "spread-src"
    call(leader.herder.put_connector_config, "spread-sink", sink_config("spread-sink", sink, topic), False)
    expected = {"spread-src", Id("spread-src", 0), "spread-sink", Id("spread-sink", 0)}
    wait_until(lambda: set().union(*map(work, herders)) >= expected, timeout_s=30, what="all work running")
    # The file source makes one task whatever tasks.max says; the round robin over two workers
    # gives each worker a share of the two connectors and two tasks.
    assert all(work(h) & expected for h in herders)
    wait_until(lambda: len(lines_of(sink)) >= 20, what="the sink file")
    # Any worker answers for any connector, from the status topic.
    for h in herders:
        wait_until(lambda h=h: {s for s, _ in statuses(h, "spread-src")} == {"RUNNING"},
                   what=f"{h.worker_id} to report spread-src running")  # fmt: skip
    status, body = rest("GET", f"{follower.rest.advertised_url()}connectors/spread-src/status")
    assert status == 200 and body["connector"]["state"] == "RUNNING"
    assert call(follower.herder.connectors) == ["spread-sink", "spread-src"]
    assert [t.id for t in call(follower.herder.task_configs, "spread-src")] == [Id("spread-src", 0)]
    assert lines_of(sink) == [f"line {i}" for i in range(20)]
    delete(leader, "spread-src", "spread-sink")


def test_a_config_put_on_the_follower_is_forwarded_to_the_leader(workers, tmp_path):
    _, connects = workers
    leader, follower = leader_and_follower(connects)
    config = source_config("cfg-src", tmp_path / "in.txt", topic_name("dist-config"))
    # The herder itself refuses, naming the leader; the REST resource forwards there.
    with pytest.raises(NotLeaderException) as refused:
        call(follower.herder.put_connector_config, "cfg-src", config, False)
    assert refused.value.forward_url == leader.rest.advertised_url()
    status, body = rest("PUT", f"{follower.rest.advertised_url()}connectors/cfg-src/config", config)
    assert status == 201 and body["name"] == "cfg-src"
    wait_until(
        lambda: call(leader.herder.connector_config, "cfg-src") == config, what="the leader to have it"
    )
    changed = {**config, "file": str(tmp_path / "other.txt")}
    status, _ = rest("PUT", f"{follower.rest.advertised_url()}connectors/cfg-src/config", changed)
    assert status == 200
    wait_until(
        lambda: call(follower.herder.connector_config, "cfg-src") == changed, what="the follower to see it"
    )
    # A bad config is refused whole: nothing is written.
    with pytest.raises(BadRequestException, match=r"tasks\.max"):
        call(
            leader.herder.put_connector_config,
            "cfg-bad",
            {**config, "name": "cfg-bad", "tasks.max": "-1"},
            False,
        )
    with pytest.raises(NotFoundException):
        call(follower.herder.connector_config, "cfg-bad")

    # Pause and resume go through the config topic to whichever worker runs the connector and task.
    follower.herder.pause_connector("cfg-src")
    wait_until(lambda: {s for s, _ in statuses(leader.herder, "cfg-src")} == {"PAUSED"}, what="paused")
    leader.herder.resume_connector("cfg-src")
    wait_until(lambda: {s for s, _ in statuses(follower.herder, "cfg-src")} == {"RUNNING"}, what="resumed")

    # A restart asked of a worker that does not run the task is routed to the one that does.
    task_owner = statuses(leader.herder, "cfg-src")[1][1]
    elsewhere = next(c for c in connects if c.herder.worker_id != task_owner)
    with pytest.raises(RequestTargetException):
        call(elsewhere.herder.restart_task, Id("cfg-src", 0))
    status, _ = rest("POST", f"{elsewhere.rest.advertised_url()}connectors/cfg-src/tasks/0/restart")
    assert status == 204
    wait_until(lambda: statuses(leader.herder, "cfg-src")[1] == ("RUNNING", task_owner), what="restarted")
    delete(leader, "cfg-src")
    wait_until(lambda: "cfg-src" not in call(follower.herder.connectors), what="the deletion")


def start_worker_process(props: dict[str, str], directory: Path) -> tuple[subprocess.Popen, str]:
    """``kafka-lite connect distributed`` in a process of its own, running this checkout's code;
    the process and its worker id."""
    path, log_path = directory / "worker.properties", directory / "worker.log"
    path.write_text("".join(f"{key}={value}\n" for key, value in props.items()))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    with log_path.open("w") as log:
        process = subprocess.Popen([KAFKA_LITE, "connect", "distributed", str(path)], cwd=directory, env=env,
                                   stdout=log, stderr=subprocess.STDOUT, text=True)  # fmt: skip

    def worker_id() -> re.Match | None:
        text = log_path.read_text()
        if process.poll() is not None:
            pytest.fail(f"the worker process exited with {process.returncode}:\n{text[-3000:]}")
        return re.search(r"REST API at\s+http://([\d.]+:\d+)/", text)

    return process, wait_until(worker_id, timeout_s=30, what="the worker process's REST URL").group(1)


def test_a_killed_workers_work_moves_to_the_others_and_every_line_arrives(cluster, workers, tmp_path):
    props, connects = workers
    leader, _ = leader_and_follower(connects)
    herders = [c.herder for c in connects]
    topic = topic_name("dist-kill")
    cluster.create_topic(topic, partitions=1)
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    before = [f"before {i}" for i in range(200)]
    source.write_text("".join(line + "\n" for line in before))

    process, killed_id = start_worker_process(props, tmp_path)
    try:
        wait_until(lambda: settled(herders, 3), timeout_s=30, what="a group of three")
        call(leader.herder.put_connector_config, "kill-src", source_config("kill-src", source, topic), False)
        call(leader.herder.put_connector_config, "kill-sink", sink_config("kill-sink", sink, topic), False)

        def units() -> list[tuple[str, str]]:
            return statuses(leader.herder, "kill-src") + statuses(leader.herder, "kill-sink")

        # Two connectors and two tasks over three workers: the process runs at least one of them.
        wait_until(lambda: [s for s, _ in units()] == ["RUNNING"] * 4 and killed_id in {w for _, w in units()},
                   timeout_s=30, what="the work running, some of it in the process")  # fmt: skip
        wait_until(lambda: len(lines_of(sink)) >= 50, what="lines in the sink file")
    finally:
        process.kill()  # SIGKILL: no LeaveGroup, no offsets committed, no statuses written
        process.wait()
    killed_at = time.monotonic()
    after = [f"after {i}" for i in range(50)]
    with source.open("a") as f:
        f.write("".join(line + "\n" for line in after))

    # The group notices when the session times out, and deals the work to the two left: what the
    # design bounds is the session timeout, then a rebalance the live members join within its
    # timeout. The deadline is that bound, with room for a loaded machine to start the tasks.
    moved_by = killed_at + (SESSION_TIMEOUT_MS + REBALANCE_TIMEOUT_MS) / 1000 + 16
    wait_until(
        lambda: settled(herders, 2), timeout_s=moved_by - time.monotonic(), what="a group of two again"
    )
    running_here = {c.herder.worker_id for c in connects}
    wait_until(lambda: [s for s, _ in units()] == ["RUNNING"] * 4 and {w for _, w in units()} <= running_here,
               timeout_s=moved_by - time.monotonic(), what="all work running on the two workers left")  # fmt: skip

    # At least once: every line arrives; a line twice only if it was sent or written after the
    # last offset commit of the killed worker's task.
    wanted = before + after
    wait_until(lambda: set(lines_of(sink)) >= set(wanted), timeout_s=30, what="every line in the sink file")
    counts = Counter(lines_of(sink))
    duplicates = sum(n - 1 for n in counts.values())
    assert set(counts) == set(wanted)
    assert duplicates <= len(before), f"{duplicates} duplicated lines of {len(wanted)}"
    delete(leader, "kill-src", "kill-sink")
