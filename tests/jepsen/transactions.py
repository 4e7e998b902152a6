"""What the transaction reproductions share: a partition's end as each isolation level sees it, and
KIP-890 part 1's setting switched on every broker of a running cluster."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from kafka_lite.cli import cluster as launcher
from kafka_lite.cli.main import main
from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import parse_response
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.kafka_consumer import KafkaConsumer
from tests.support.waiting import wait_until

GUIDE = Path(__file__).resolve().parents[2] / "chapters/ch10_advanced/transactions.md"
PAGE_BOOTSTRAP, PAGE_ZOOKEEPER = "127.0.0.1:9092", "127.0.0.1:2181"  # the addresses the page writes


def page_commands(cluster, tool: str) -> list[list[str]]:
    """The ``kafka-lite <tool>`` commands of chapter 10's transactions page, as written there (lines
    continued with a backslash joined), each as the arguments of ``main``, with the page's addresses
    made this cluster's."""
    blocks = re.findall(r"```sh\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    lines = [line for block in blocks for line in block.replace("\\\n", " ").splitlines()]
    addresses = {
        PAGE_BOOTSTRAP: cluster.bootstrap_servers,
        PAGE_ZOOKEEPER: launcher.zookeeper_connect(cluster.state),
    }
    commands = []
    for line in lines:
        words = shlex.split(line)
        if words[:2] == [".venv/bin/kafka-lite", tool]:
            commands.append([addresses.get(word, word) for word in words[1:]])
    return commands


def end_offset(bootstrap_servers: str, tp: TopicPartition, isolation_level: str) -> int:
    """The partition's end as a consumer of ``isolation_level`` sees it: the high watermark, or under
    read_committed the last stable offset."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap_servers, isolation_level=isolation_level)
    try:
        return consumer.end_offsets([tp])[tp]
    finally:
        consumer.close()


VERIFICATION = "transaction.partition.verification.enable"


def set_verification(cluster, enabled: bool) -> None:
    """Every broker's dynamic ``transaction.partition.verification.enable``, through the ``configs``
    tool as an operator would; each broker's log says when it has taken it."""
    state = cluster.state
    said = f"{VERIFICATION}={str(enabled).lower()}"
    logs = [Path(state["dir"]) / "logs" / f"broker-{n}.log" for n in cluster.node_ids]
    before = [log.read_text().count(said) for log in logs]
    # On: the page's command, as written, for each broker (the page's names broker 0). Off: the same
    # command with --delete-config.
    (on,) = page_commands(cluster, "configs")
    assert on[on.index("--add-config") + 1] == f"{VERIFICATION}=true", on
    for n in cluster.node_ids:
        argv = [str(n) if i and on[i - 1] == "--entity-name" else word for i, word in enumerate(on)]
        if not enabled:
            at = argv.index("--add-config")
            argv[at : at + 2] = ["--delete-config", VERIFICATION]
        assert main(argv) == 0, argv
    for log, count in zip(logs, before, strict=True):
        wait_until(
            lambda log=log, count=count: log.read_text().count(said) > count, what=f"{log.name}: {said}"
        )


def produce_errors(hold) -> list[Errors]:
    """The leader's answer to each Produce ``hold`` held, in order: its partition's error."""
    errors = []
    for request, answer in hold.exchanges:
        version = int.from_bytes(request[2:4], "big")
        _, body = parse_response(ApiKeys.PRODUCE, version, answer)
        (topic,) = body["responses"]
        (partition,) = topic["partition_responses"]
        errors.append(Errors.for_code(partition["error_code"]))
    return errors
