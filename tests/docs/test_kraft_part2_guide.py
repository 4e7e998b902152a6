"""Chapter 12's parts 2 and 3 (the quorum controller, brokers and nodes): the side-by-side table names
code that exists, and their commands are ones the CLI takes."""

from __future__ import annotations

import importlib
import re
import shlex
from pathlib import Path

import pytest

pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "chapters" / "ch12_kraft" / "quorum_controller.md"
PART_3 = ROOT / "chapters" / "ch12_kraft" / "kraft_brokers.md"

# Where each class the side-by-side table names lives: chapter 7's controller on the left, the quorum
# controller on the right.
CLASSES = {
    "KafkaController": "kafka_lite.controller.kafka_controller",
    "PartitionStateMachine": "kafka_lite.controller.partition_state_machine",
    "OfflinePartitionLeaderSelector": "kafka_lite.controller.partition_leader_selector",
    "ControlledShutdownLeaderSelector": "kafka_lite.controller.partition_leader_selector",
    "QuorumController": "kafka_lite.metadata.controller.quorum_controller",
    "QuorumMetaLogListener": "kafka_lite.metadata.controller.quorum_controller",
    "ReplicationControlManager": "kafka_lite.metadata.controller.replication_control_manager",
    "PartitionChangeBuilder": "kafka_lite.metadata.controller.partition_change_builder",
    "BrokerHeartbeatManager": "kafka_lite.metadata.controller.broker_heartbeat_manager",
}


def section(title: str) -> str:
    return PAGE.read_text(encoding="utf-8").split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_every_method_the_side_by_side_table_names_exists():
    table = section("Two controllers side by side")
    named = re.findall(r"`(\w+)\.(\w+)`", table)
    classes = {cls for cls, _ in named}
    # Both controllers appear, each with its part in all four events.
    assert {"KafkaController", "QuorumController"} <= classes, classes
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [row.split("|")[1].strip() for row in rows] == [
        "a broker dies", "a topic is created", "a controlled shutdown", "the controller fails over"
    ]  # fmt: skip
    for row in rows:
        zookeeper, kraft = row.split("|")[2:4]
        assert re.search(r"`\w+\.\w+`", zookeeper) and re.search(r"`\w+\.\w+`", kraft), row
    missing = []
    for cls, method in named:
        assert cls in CLASSES, f"the table names {cls}, which this test does not know where to find"
        if not hasattr(getattr(importlib.import_module(CLASSES[cls]), cls), method):
            missing.append(f"{cls}.{method}")
    assert not missing, f"the table names code that does not exist: {missing}"


def test_the_pages_commands_parse_as_written():
    from kafka_lite.cli.main import build_parser

    text = PAGE.read_text(encoding="utf-8") + PART_3.read_text(encoding="utf-8")
    script = "\n".join(re.findall(r"```sh\n(.*?)```", text, re.S)).replace("\\\n", " ")
    commands = [line.split("#")[0].strip() for line in script.splitlines() if line.startswith("kafka-lite ")]
    assert {shlex.split(c)[1] for c in commands} == {
        "storage",
        "dump-log",
        "metadata-quorum",
        "broker",
        "cluster",
    }, commands
    parser = build_parser()
    for command in commands:
        args = parser.parse_args(shlex.split(command)[1:])
        assert args.handler is not None, command
