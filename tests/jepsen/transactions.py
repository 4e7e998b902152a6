"""What the transaction reproductions share: a partition's end as each isolation level sees it,
KIP-890 part 1's setting switched on every broker of a running cluster, and the timeline of a
transaction's requests, tapped at the fault proxy and kept for chapter 10's pictures."""

from __future__ import annotations

import os
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
from kafka_lite.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC_NAME
from kafka_lite.coordinator.transaction.transaction_state_manager import partition_for
from kafka_lite.jepsen.fault_proxy import CLIENTS
from kafka_lite.jepsen.timeline import timeline, write_timeline
from kafka_lite.producer.kafka_producer import KafkaProducer
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


# -- timelines --------------------------------------------------------------------------------------

TRANSACTION_APIS = {ApiKeys.INIT_PRODUCER_ID, ApiKeys.ADD_PARTITIONS_TO_TXN, ApiKeys.PRODUCE, ApiKeys.END_TXN,
                    ApiKeys.WRITE_TXN_MARKERS}  # fmt: skip
TIMELINES = Path(__file__).parents[2] / "chapters/ch10_advanced/timelines"
# Set to write the chapter's timelines from a run (``KAFKA_LITE_WRITE_TIMELINES=1 pytest <test file>``).
WRITE_TIMELINES = "KAFKA_LITE_WRITE_TIMELINES"


def tapping(cluster):
    """A tap of the transaction protocol's requests at the fault proxy: the producer's, and the
    brokers' to one another (WriteTxnMarkers from a client, the admin tool's, left out)."""
    return cluster.proxy.tap(lambda source, target, api_key, frame: api_key in TRANSACTION_APIS and (
        source != CLIENTS or api_key != ApiKeys.WRITE_TXN_MARKERS))  # fmt: skip


def elsewhere(cluster, topic: str, leader: int) -> str:
    """A transactional id whose coordinator is not ``leader`` (so that the timeline shows the two
    apart): ``topic``, or ``topic-1``, ``topic-2``... The id's ``__transaction_state`` partition is
    Kafka's ``partitionFor``; the topic is there once a first transactional producer has looked for
    its coordinator."""
    partitions = 50  # transaction.state.log.num.partitions
    if (
        cluster.leader_of(TRANSACTION_STATE_TOPIC_NAME, 0) is None
    ):  # a first transactional producer creates it
        warm_up = KafkaProducer(
            bootstrap_servers=cluster.bootstrap_servers, transactional_id=f"{topic}-warm-up"
        )
        try:
            warm_up.init_transactions()
        finally:
            warm_up.close(0)
        wait_until(
            lambda: all(
                cluster.leader_of(TRANSACTION_STATE_TOPIC_NAME, p) is not None for p in range(partitions)
            ),
            what=f"{TRANSACTION_STATE_TOPIC_NAME}'s leaders",
        )
    for n in range(20):
        candidate = topic if n == 0 else f"{topic}-{n}"
        coordinator = cluster.leader_of(TRANSACTION_STATE_TOPIC_NAME, partition_for(candidate, partitions))
        if coordinator not in (None, leader):
            return candidate
    return topic


def recorded(tap, leader: int, coordinator) -> tuple[dict, list[dict]]:
    """The lanes (the producer, the partition's leader, the producer's coordinator) and the rows of
    what ``tap`` recorded between them."""
    parties = {CLIENTS: "producer", leader: f"leader (broker {leader})"}
    if coordinator is not None and coordinator.id != leader:
        parties[coordinator.id] = f"coordinator (broker {coordinator.id})"
    elif coordinator is not None:
        parties[leader] = f"leader and coordinator (broker {leader})"
    return parties, timeline(tap.exchanges, parties)


def late_answer(rows, value: bytes) -> tuple[int, str]:
    """The leader's last answer to the late Produce of the record ``value`` and its retry (each is
    answered in turn, once both have arrived), with its row's index."""
    arrived = [
        i for i, r in enumerate(rows) if "arriving late" in r["text"] and f"[{value.decode()}]" in r["text"]
    ]
    answers = [
        (i, r["text"]) for i, r in enumerate(rows) if i > arrived[-1] and r["text"].startswith("Produce:")
    ]
    return answers[len(arrived) - 1]


def abort_marker(rows) -> int:
    """The row of the first ABORT marker the coordinator sent."""
    return next(i for i, r in enumerate(rows) if "ABORT marker" in r["text"])


def keep_timeline(name: str, title: str, parties: dict, rows) -> None:
    """Write the timeline to the chapter's ``name``.json when ``KAFKA_LITE_WRITE_TIMELINES`` is set."""
    if os.environ.get(WRITE_TIMELINES):
        write_timeline(TIMELINES / f"{name}.json", title, list(dict.fromkeys(parties.values())), rows)
