"""A hanging transaction, reproduced on Kafka 0.11's protocol: a transactional Produce delayed in the
network until its transaction has been aborted opens a transaction on its partition that no marker
will close, and every read_committed consumer of the partition stops at its first offset.

The delay is the fault proxy's (``FaultProxy.hold``): the producer's Produce to the partition's
leader is held, and so is its one retry (``retries=1``), so the send fails once both have timed
out; the application aborts the transaction, and the coordinator writes the ABORT marker; then the
held Produce is let go and lands after the marker, the first batch of its producer there. (Had a
retry been written first, the late one would be a duplicate of it, and refused.)

Kafka's fix is KIP-890 part 1 (Kafka 3.6): the leader asks the coordinator whether the partition is
in the producer's transaction before it takes a transactional write that would open one there. The
same script with ``transaction.partition.verification.enable`` on (set dynamically on every broker,
as Kafka 3.6 allows): the late Produce is refused with INVALID_TXN_STATE, and the last stable offset
moves on with the high watermark.

Chapter 10 draws the first run and the run with both parts of KIP-890 from their own requests: the
script taps them at the fault proxy (``tests.jepsen.transactions.tapping``), and with
``KAFKA_LITE_WRITE_TIMELINES=1`` set the tests keep the two timelines in
``chapters/ch10_advanced/timelines/hanging_*.json``, once they have checked what the pictures show."""

from __future__ import annotations

import os

import pytest

from kafka_lite.cli.main import main
from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.jepsen.fault_proxy import CLIENTS
from kafka_lite.producer.kafka_producer import KafkaProducer
from tests.jepsen.conftest import ZOOKEEPER_MODE
from tests.jepsen.transactions import (
    WRITE_TIMELINES,
    abort_marker,
    elsewhere,
    end_offset,
    keep_timeline,
    late_answer,
    page_commands,
    produce_errors,
    recorded,
    set_verification,
    tapping,
)
from tests.support.waiting import wait_until

LATE = b"late"  # the delayed Produce's record


def run_the_script(cluster, topic: str, transaction_version: int = 0):
    """The transactional Produce and its retry held until the transaction has been aborted, then let
    go; three plain records after it. Returns the partition, whether the late Produce landed, the
    leader's answers to the held Produce requests, and the timeline of the transaction's requests
    (its lanes and rows). ``transaction_version`` is the producer's (2: KIP-890 part 2, an epoch bump
    at every transaction's end)."""
    tp = TopicPartition(topic, 0)
    cluster.create_topic(topic, 1, 3, {"min.insync.replicas": "2"})
    leader = cluster.leader_of(topic, 0)
    producer = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers, transactional_id=elsewhere(cluster, topic, leader), acks="all",
        request_timeout_ms=2000, transaction_timeout_ms=10_000, reconnect_backoff_ms=50, retries=1,
        transaction_version=transaction_version,
    )  # fmt: skip
    hold = cluster.proxy.hold(
        lambda source, target, api_key, frame: (
            source == CLIENTS and target == leader and api_key == ApiKeys.PRODUCE
        )
    )
    tap = tapping(cluster)
    coordinator = None
    try:
        producer.init_transactions()
        producer.begin_transaction()
        late = producer.send(topic, LATE, partition=0)
        assert hold.held.wait(30), "the Produce never reached the proxy"
        producer.abort_transaction()  # once the held Produce has timed out: EndTxn, then the ABORT marker
        assert late.failed(), "the send failed: its request timed out, and its one retry too"
        wait_until(  # the coordinator sends its markers after it has answered the EndTxn
            lambda: end_offset(cluster.bootstrap_servers, tp, "read_uncommitted") == 1,
            what="the ABORT marker, alone in the partition",
        )
    finally:
        hold.release()  # the Produce reaches the leader, after the marker
        coordinator = producer.transaction_manager.transaction_coordinator
        producer.close(0)
    try:
        wait_until(lambda: hold.answered, what="the leader's answer to the delayed Produce")
    finally:
        tap.close()  # before the plain records: the picture is the transaction's requests alone
    late_errors = produce_errors(hold)
    landed = end_offset(cluster.bootstrap_servers, tp, "read_uncommitted") == 2
    others = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    try:
        for i in range(3):
            others.send(topic, b"after-%d" % i, partition=0)
        others.flush()
    finally:
        others.close()
    return tp, landed, late_errors, recorded(tap, leader, coordinator)


def transactions(capsys, cluster, *args: str) -> list[list[str]]:
    """``kafka-lite transactions`` as an operator runs it; its table's rows, split into cells."""
    assert main(["transactions", "--bootstrap-server", cluster.bootstrap_servers, *args]) == 0
    return [line.split() for line in capsys.readouterr().out.splitlines()]


@ZOOKEEPER_MODE
def test_a_produce_delayed_past_its_transactions_abort_leaves_the_partition_hanging(faulty_cluster, capsys):
    cluster = faulty_cluster
    tp, landed, late_errors, (parties, rows) = run_the_script(cluster, "hanging-transaction")
    assert landed, "the delayed Produce was written after the marker"
    assert late_errors[0] is Errors.NONE, late_errors
    # The picture: the late Produce, after the ABORT marker, is answered with an offset (NONE), and
    # no marker follows it; the coordinator was never asked.
    index, answer = late_answer(rows, LATE)
    marker = abort_marker(rows)
    assert index > marker and answer == "Produce: offset 1", rows
    assert not any("marker" in r["text"] or "(verify)" in r["text"] for r in rows[marker + 1 :]), rows
    keep_timeline("hanging_0_11", "A hanging transaction: Kafka 0.11's protocol", parties, rows)
    assert end_offset(cluster.bootstrap_servers, tp, "read_uncommitted") == 5
    assert end_offset(cluster.bootstrap_servers, tp, "read_committed") == 1, (
        "read_committed consumers stop at the delayed batch: a transaction no marker will close"
    )
    # Kafka 3.0's tool (KIP-664) finds it: open at offset 1 on the partition, and aborts it; the
    # chapter's two commands, as its page writes them.
    find_hanging, abort = page_commands(cluster, "transactions")
    assert tp[0] == "hanging-transaction" and find_hanging[3] == "find-hanging" and abort[3] == "abort"
    assert main(find_hanging) == 0
    header, *hanging = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert header[:6] == [
        "Topic",
        "Partition",
        "ProducerId",
        "ProducerEpoch",
        "CoordinatorEpoch",
        "StartOffset",
    ]
    assert [(row[0], row[1], row[5]) for row in hanging] == [(tp[0], "0", "1")], hanging
    assert main(abort) == 0
    assert "Aborted the transaction" in capsys.readouterr().out
    wait_until(
        lambda: end_offset(cluster.bootstrap_servers, tp, "read_committed") == 6,
        what="the last stable offset",
    )
    assert end_offset(cluster.bootstrap_servers, tp, "read_uncommitted") == 6, "the tool's ABORT marker, at 5"
    (_, *open_now) = transactions(capsys, cluster, "describe-producers", "--topic", tp[0], "--partition", "0")
    assert all(row[-1] == "None" for row in open_now), open_now


@ZOOKEEPER_MODE
@pytest.mark.parametrize("transaction_version", [0, 2], ids=["part-1", "both-parts"])
def test_kip_890_refuses_the_delayed_produce_and_nothing_hangs(faulty_cluster, transaction_version):
    """Part 1 alone closes this flaw; with part 2 as well, the abort's EndTxn bumps the epoch, and the
    late Produce is refused as an older epoch's."""
    cluster = faulty_cluster
    set_verification(cluster, True)
    try:
        tp, landed, late_errors, (parties, rows) = run_the_script(
            cluster, f"verified-transaction-v{transaction_version}", transaction_version
        )
    finally:
        set_verification(cluster, False)
    assert not landed, "the leader asked the coordinator, and the partition was in no transaction"
    # The Produce and its retry arrive together: the leader's question for the first is replaced by
    # the second's (NETWORK_EXCEPTION, as Kafka's AddPartitionsToTxnManager answers the older of
    # two for one transactional id), which the coordinator answers: INVALID_TXN_STATE, or, when the
    # question comes while the abort's CompleteAbort is still being written (a loaded machine),
    # CONCURRENT_TRANSACTIONS, which the leader passes on as NOT_ENOUGH_REPLICAS (Kafka 3.6's
    # retriable answer). Either way the write is refused.
    # With part 2 the abort's marker carries the bumped epoch, so the late Produce is an older epoch's:
    # INVALID_PRODUCER_EPOCH, from the partition's producer state or from the coordinator's answer.
    fenced = Errors.INVALID_TXN_STATE if transaction_version == 0 else Errors.INVALID_PRODUCER_EPOCH
    refused = (fenced, Errors.NOT_ENOUGH_REPLICAS)
    assert late_errors[-1] in refused and Errors.NONE not in late_errors, late_errors
    # The picture: the ABORT marker and the late Produce, which arrives after it, answered with the
    # leader's last answer above; with part 2 the EndTxn's answer names epoch 1 and the marker carries it.
    index, answer = late_answer(rows, LATE)
    marker = abort_marker(rows)
    assert index > marker and answer == f"Produce: {late_errors[-1].name}", rows
    if transaction_version == 2:
        # (the EndTxn's answer and the marker's request race through the proxy: either may come first)
        assert "EndTxn: NONE, next epoch 1" in [r["text"] for r in rows], rows
        assert rows[marker]["text"].endswith("epoch 1"), rows[marker]
        assert late_errors[-1] is Errors.INVALID_PRODUCER_EPOCH or not os.environ.get(WRITE_TIMELINES), (
            "a timeline kept for the chapter shows the fencing, not a loaded machine's retriable answer"
        )
        keep_timeline("hanging_kip_890", "The same script with both parts of KIP-890", parties, rows)
    assert end_offset(cluster.bootstrap_servers, tp, "read_uncommitted") == 4
    assert end_offset(cluster.bootstrap_servers, tp, "read_committed") == 4, "the last stable offset moved on"
