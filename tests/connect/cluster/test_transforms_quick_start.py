"""Kafka's transformations example (its Connect documentation's "Transformations" section) as
chapter 8's guide shows it, run on the test cluster: Kafka's file source with HoistField and
InsertField writes each line of test.txt to connect-test as a map with a static field."""

from __future__ import annotations

import re
import shlex
import subprocess

import pytest

from tests.connect.cluster.test_standalone import GUIDE, KAFKA_LITE, quick_start_files
from tests.support.processes import terminate
from tests.support.topics import read_topic
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

TOPIC = "connect-test"
SECTION = "### Transforming records on the way"


def guide_blocks() -> dict[str, list[str]]:
    """The section's fenced blocks by language, in order."""
    section = GUIDE.read_text(encoding="utf-8").split(SECTION, 1)[1].split("\n#", 1)[0]
    blocks: dict[str, list[str]] = {}
    for language, body in re.findall(r"```(\w+)\n(.*?)```", section, re.DOTALL):
        blocks.setdefault(language, []).append(body)
    return blocks


def commands(block: str) -> list[str]:
    return [line.strip() for line in block.replace("\\\n", " ").splitlines() if line.strip()]


def run(command: str, cwd, bootstrap: str) -> subprocess.CompletedProcess:
    """A line of the guide, with the session cluster's address for localhost:9092; kafka-lite's
    commands are run from this environment, the shell's (printf, sed) by sh."""
    command = command.replace("localhost:9092", bootstrap)
    if command.startswith("kafka-lite "):
        argv = [KAFKA_LITE, *shlex.split(command)[1:]]
        return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60, check=True)
    return subprocess.run(
        ["sh", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=60, check=True
    )


def delete_topic(cluster) -> None:
    """connect-test is the quick starts' topic: 8.3.1's test needs it absent, as a fresh cluster has it."""
    admin = cluster.admin()
    try:
        if TOPIC in admin.list_topics():
            admin.delete_topics([TOPIC], timeout_ms=10_000)
        wait_until(lambda: TOPIC not in admin.list_topics(), timeout_s=10, what=f"{TOPIC} to be deleted")
    finally:
        admin.close()


def test_kafkas_transformations_example_writes_each_line_as_a_map_with_its_source(cluster, tmp_path):
    """The section's commands, run as written, twice in the same directory: the second run (its
    offsets file removed by the block itself) writes the three lines again."""
    blocks = guide_blocks()
    (properties,), (run_block, read_block), (expected,) = blocks["properties"], blocks["sh"], blocks["text"]
    # Kafka's file source config with Kafka's transformation lines, as its documentation has them.
    assert "transforms=MakeMap, InsertSource" in properties
    assert "transforms.MakeMap.type=org.apache.kafka.connect.transforms.HoistField$Value" in properties
    *set_up, run_worker = commands(run_block)
    (read_topic_command,) = commands(read_block)

    # The properties files where the guide's commands find them: Kafka's, with the session cluster's
    # address and any free REST port (quick_start_files), and the offsets file beside them, not in /tmp.
    config_dir = tmp_path / "kafka_lite" / "connect" / "config"
    config_dir.mkdir(parents=True)
    quick_start_files(config_dir, cluster.bootstrap_servers)
    (tmp_path / "connect-file-source.properties").write_text(properties)
    for attempt in ("first", "second"):
        delete_topic(cluster)  # the block deletes it too, but does not wait until it is gone
        for command in set_up:
            run(command.replace("/tmp/", f"{config_dir}/"), tmp_path, cluster.bootstrap_servers)
        worker_config = (tmp_path / "connect-standalone.properties").read_text()
        assert "value.converter.schemas.enable=false" in worker_config
        assert f"{config_dir}/connect-transforms.offsets" in worker_config

        command = shlex.split(run_worker)
        assert command[0] == "kafka-lite"
        process = subprocess.Popen([KAFKA_LITE, *command[1:]], cwd=tmp_path,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
        try:
            wait_until(lambda: has_three_records(cluster), timeout_s=20,
                       what=f"{TOPIC} to hold test.txt's lines ({attempt} run)")  # fmt: skip
            printed = run(read_topic_command, tmp_path, cluster.bootstrap_servers).stdout
        finally:
            out = terminate(process)
        assert process.returncode == 0, out
        assert printed.splitlines() == expected.splitlines(), (attempt, out)
        assert printed.splitlines()[0] == '{"line":"foo","data_source":"test-file-source"}'
    delete_topic(cluster)


def has_three_records(cluster) -> bool:
    admin = cluster.admin()
    try:
        if TOPIC not in admin.list_topics():
            return False
    finally:
        admin.close()
    return len(read_topic(cluster.bootstrap_servers, TOPIC)) >= 3
