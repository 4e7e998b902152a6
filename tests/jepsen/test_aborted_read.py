"""An aborted read, reproduced on Kafka 0.11's transaction protocol, with KIP-890's first part on as
well: the write of a transaction the application aborted is read by read_committed consumers.

The script (every delay the fault proxy's ``hold``): the producer sends record 1 in a transaction,
and its Produce (and the one retry) is held until the send has failed; the application aborts, and
the coordinator writes ABORT. The same producer, with the same epoch, begins a second transaction
and sends record 2 to the same partition: its AddPartitionsToTxn puts the partition in the new
transaction, and its Produce waits behind the first. Now the first Produce is let go. The partition has no
transaction open for the producer, so under 0.11 the batch simply opens one; under KIP-890 part 1 the
leader asks the coordinator, which answers truthfully that the partition is in the producer's
(new) transaction. Either way record 1 joins the second transaction, and the second commit makes it
visible. Jepsen's checker, given the history the clients saw, calls it G1a: a read of a failed write.

Only KIP-890's second part closes it: the epoch bumped at the end of every transaction fences the
late Produce, which still carries the first transaction's epoch. The same script with the producer
at transaction version 2 (EndTxn v5): the abort's markers carry the next epoch, the late Produce is
refused as a fenced producer's, and the history is valid."""

from __future__ import annotations

import os
from pathlib import Path

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.kafka_consumer import KafkaConsumer
from kafka_lite.jepsen.checker import check
from kafka_lite.jepsen.fault_proxy import CLIENTS
from kafka_lite.jepsen.history import Op, write_history
from kafka_lite.producer.kafka_producer import KafkaProducer
from tests.jepsen.conftest import KEEP_HISTORIES, ZOOKEEPER_MODE
from tests.jepsen.transactions import (
    abort_marker,
    elsewhere,
    end_offset,
    keep_timeline,
    late_answer,
    produce_errors,
    recorded,
    set_verification,
    tapping,
)
from tests.support.waiting import wait_until

KEY = 0  # the history's key: the partition


def record(value: int) -> bytes:
    """The record of a history value: long enough that no other request's bytes contain it."""
    return b"aborted-read-value-%d" % value


def value_of(record_value: bytes) -> int:
    return int(record_value.rsplit(b"-", 1)[1])


def read_committed(bootstrap_servers: str, tp: TopicPartition) -> list[tuple[int, int]]:
    """Every record a read_committed consumer reads from the start of ``tp``, as (offset, value)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap_servers, isolation_level="read_committed")
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        end = consumer.end_offsets([tp])[tp]
        read: list[tuple[int, int]] = []
        wait_until(
            lambda: (
                read.extend(
                    (r.offset, value_of(r.value)) for rs in consumer.poll(timeout_ms=200).values() for r in rs
                )
                or consumer.position(tp) >= end
            ),
            what=f"the read_committed records of {tp} up to {end}",
        )
        return read
    finally:
        consumer.close()


def holding(cluster, leader: int, value: bytes):
    """A hold of the producer's Produce requests to ``leader`` that carry ``value``."""
    return cluster.proxy.hold(
        lambda source, target, api_key, frame: (
            source == CLIENTS and target == leader and api_key == ApiKeys.PRODUCE and value in frame
        )
    )


def the_script(cluster, topic: str, transaction_version: int):
    """Run the script above; return the producer's history, what a read_committed consumer reads,
    the leader's answers to the late Produce, and the timeline of the transaction's requests."""
    tp = TopicPartition(topic, 0)
    cluster.create_topic(topic, 1, 3, {"min.insync.replicas": "2"})
    leader = cluster.leader_of(topic, 0)
    producer = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers, transactional_id=elsewhere(cluster, topic, leader), acks="all",
        request_timeout_ms=2000, transaction_timeout_ms=20_000, reconnect_backoff_ms=50, retries=1,
        transaction_version=transaction_version,
    )  # fmt: skip
    first, second = holding(cluster, leader, record(1)), holding(cluster, leader, record(2))
    tap = tapping(cluster)
    history = []
    try:
        producer.init_transactions()
        producer.begin_transaction()
        history.append(("invoke", [("send", KEY, 1)]))
        late = producer.send(topic, record(1), partition=0)
        assert first.held.wait(30), "the first Produce never reached the proxy"
        producer.abort_transaction()  # once the held Produce has timed out: EndTxn, then the ABORT marker
        assert late.failed()
        history.append(("fail", [("send", KEY, 1)]))
        wait_until(lambda: end_offset(cluster.bootstrap_servers, tp, "read_uncommitted") == 1, what="ABORT")

        producer.begin_transaction()
        history.append(("invoke", [("send", KEY, 2)]))
        sent = producer.send(topic, record(2), partition=0)
        wait_until(
            lambda: producer.transaction_manager.is_partition_added(tp),
            what="the partition added to the second transaction",
        )
        # The late Produce goes first; the second one waits behind it (on its connection, or held).
        first.release()
        wait_until(lambda: first.answered, what="the leader's answer to the late Produce")
        second.release()
        producer.commit_transaction()
        offset = sent.get(10).offset
        history.append(("ok", [("send", KEY, (offset, 2))]))
    finally:
        first.release()
        second.release()
        coordinator = producer.transaction_manager.transaction_coordinator
        producer.close(0)
        tap.close()
    parties, rows = recorded(tap, leader, coordinator)
    return history, read_committed(cluster.bootstrap_servers, tp), produce_errors(first), (parties, rows)


def checked(history, polled, name: str):
    """Jepsen's checker on the producer's history and one read_committed poll of it all; the history
    is kept as ``name``.jsonl when ``KAFKA_LITE_KEEP_HISTORIES`` names a folder (lab 20's)."""
    ops = [Op(i, type, 0, "txn", value, i) for i, (type, value) in enumerate(history)]
    n = len(ops)
    ops += [
        Op(n, "invoke", 1, "poll", [("poll",)], n),
        Op(n + 1, "ok", 1, "poll", [("poll", {KEY: polled})], n + 1),
    ]
    if os.environ.get(KEEP_HISTORIES):
        write_history(Path(os.environ[KEEP_HISTORIES]) / f"{name}.jsonl", ops)
    return check(ops, txn=True)


@ZOOKEEPER_MODE
def test_a_late_write_of_an_aborted_transaction_is_committed_by_the_next(faulty_cluster):
    set_verification(faulty_cluster, True)  # KIP-890 part 1 does not close this one
    try:
        history, polled, late, (parties, rows) = the_script(
            faulty_cluster, "aborted-read", transaction_version=0
        )
    finally:
        set_verification(faulty_cluster, False)
    assert Errors.NONE in late, f"the late Produce was appended: {late}"
    index, answer = late_answer(rows, record(1))
    assert index > abort_marker(rows) and answer.startswith("Produce: offset"), rows
    keep_timeline(
        "aborted_read_0_11", "An aborted read: Kafka 0.11's epoch rule, with KIP-890 part 1", parties, rows
    )
    assert 1 in [v for _, v in polled], f"record 1, whose transaction was aborted, is read: {polled}"
    result = checked(history, polled, "aborted-read-script")
    assert not result["valid"]
    assert "G1a" in result["error_types"], result["errors"]


@ZOOKEEPER_MODE
def test_with_both_parts_of_kip_890_the_late_write_is_fenced_and_the_history_is_valid(faulty_cluster):
    set_verification(faulty_cluster, True)
    try:
        history, polled, late, (parties, rows) = the_script(
            faulty_cluster, "aborted-read-kip-890", transaction_version=2
        )
    finally:
        set_verification(faulty_cluster, False)
    index, answer = late_answer(rows, record(1))
    assert index > abort_marker(rows) and answer == "Produce: INVALID_PRODUCER_EPOCH", rows
    keep_timeline("aborted_read_kip_890", "The same script with both parts of KIP-890", parties, rows)
    # The Produce and its retry arrive together; the leader asks about the second only (the first is
    # answered NETWORK_EXCEPTION, as in the hanging transaction's test), and the epoch 0 it carries is
    # one the abort's markers and the coordinator have left behind.
    assert late[-1] is Errors.INVALID_PRODUCER_EPOCH and Errors.NONE not in late, f"not fenced: {late}"
    assert [v for _, v in polled] == [2], f"only the committed record is read: {polled}"
    result = checked(history, polled, "aborted-read-script-kip-890")
    assert result["valid"], result["errors"]
