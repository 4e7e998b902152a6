"""The workload without a cluster: Jepsen's generator (seeded, its keys, values, lengths and
probabilities), the runner of one operation (fail or info, the transaction, the consumer's
rollback), the worker's processes, and the two phases driven by MockTime over a fake client."""

from __future__ import annotations

import random
import threading
from collections import Counter

import pytest

from kafka_lite.common import errors
from kafka_lite.common.time import MockTime
from kafka_lite.jepsen.clients import classify_kafka_lite
from kafka_lite.jepsen.history import HistoryWriter, read_history
from kafka_lite.jepsen.workload import (
    FinalTargets,
    Generator,
    Worker,
    WorkloadConfig,
    execute,
    run_final_phase,
    run_main_phase,
)
from tests.jepsen.fake_client import FakeClient, Log

pytestmark = pytest.mark.unit


def main_ops(config: WorkloadConfig, seed: int, n: int) -> list[dict]:
    """The first ``n`` operations of a generator, crashes left out."""
    generator = Generator(config, random.Random(seed), concurrency=4)
    ops = []
    while len(ops) < n:
        op, _ = generator.op()
        if op["f"] != "crash":
            ops.append(op)
    return ops


def sends(ops: list[dict]) -> list[tuple[int, int]]:
    return [(m[1], m[2]) for op in ops if op["f"] in ("send", "txn") for m in op["value"] if m[0] == "send"]


def test_a_seed_plans_the_same_operations_and_another_seed_others():
    config = WorkloadConfig(txn=True)
    assert main_ops(config, 7, 2000) == main_ops(config, 7, 2000)
    assert main_ops(config, 7, 2000) != main_ops(config, 8, 2000)


def test_values_are_unique_per_key_and_count_up_from_1():
    written = sends(main_ops(WorkloadConfig(txn=True), 1, 5000))
    assert len(set(written)) == len(written)
    by_key: dict[int, list[int]] = {}
    for k, v in written:
        by_key.setdefault(k, []).append(v)
    assert all(values == list(range(1, len(values) + 1)) for values in by_key.values())


def test_keys_rotate_after_their_writes_and_stay_within_the_topics_partitions():
    config = WorkloadConfig(key_count=3, max_writes_per_key=4, partitions=12)
    written = sends(main_ops(config, 3, 3000))
    keys_in_order = list(dict.fromkeys(k for k, _ in written))
    assert set(keys_in_order) == set(range(12))  # every partition became a key, none beyond
    # A key stops at 1 + Zipf(4) <= 5 writes while new keys remain; once all 12 are used the last
    # active keys take every write.
    counts = Counter(k for k, _ in written)
    active_at_the_end = {k for k, _ in written[-50:]}
    assert all(counts[k] <= 5 for k in set(range(12)) - active_at_the_end)
    assert len(active_at_the_end) <= 3


def test_transactions_hold_1_to_4_micro_operations_and_are_named_by_what_they_hold():
    ops = [op for op in main_ops(WorkloadConfig(txn=True), 2, 4000) if op["f"] in ("send", "poll", "txn")]
    assert Counter(len(op["value"]) for op in ops).keys() == {1, 2, 3, 4}
    for op in ops:
        kinds = {m[0] for m in op["value"]}
        assert op["f"] == (kinds.pop() if len(kinds) == 1 else "txn")
    plain = [op for op in main_ops(WorkloadConfig(), 2, 2000) if op["f"] in ("send", "poll", "txn")]
    assert {len(op["value"]) for op in plain} == {1}
    assert {op["f"] for op in plain} == {"send", "poll"}


def test_assign_and_subscribe_come_with_jepsens_probability_and_take_the_next_ops_keys():
    ops = main_ops(WorkloadConfig(), 4, 20_000)
    takes = [(i, op) for i, op in enumerate(ops) if op["f"] in ("assign", "subscribe")]
    # sub-p is 1/64: about 310 of 20,000; the binomial's standard deviation is about 17.
    assert 250 <= len(takes) <= 375
    kinds = Counter(op["f"] for _, op in takes)
    assert abs(kinds["assign"] - kinds["subscribe"]) <= 0.25 * len(takes)
    for i, op in takes:
        following = next(o for o in ops[i + 1 :] if o["f"] not in ("assign", "subscribe"))
        touched = {m[1] for m in following["value"] if m[0] == "send"}
        assert touched <= set(op["value"])


def test_the_hottest_key_slot_takes_about_half_the_operations():
    config = WorkloadConfig(key_count=4, max_writes_per_key=10**6, partitions=4)
    written = sends(main_ops(config, 5, 8000))
    shares = Counter(k for k, _ in written)
    total = sum(shares.values())
    # Elle's exponential distribution: slot i has weight 2^i, so 8/15, 4/15, 2/15, 1/15.
    for k, weight in zip(range(4), (1, 2, 4, 8), strict=True):
        assert abs(shares[k] / total - weight / 15) < 0.03, shares


def test_an_assign_also_takes_the_keys_sent_to_but_not_yet_read_a_third_of_the_time(tmp_path):
    generator = Generator(WorkloadConfig(sub_p=1.0, crash_clients=False), random.Random(9), concurrency=1)
    with HistoryWriter(tmp_path / "history.jsonl", MockTime()) as history:
        send = history.invoke(0, "send", [("send", 40, 1)])
        generator.update(history.complete(send, "ok", [("send", 40, (5, 1))]))
    takes = [generator.op()[0] for _ in range(600)]
    takes = [op for op in takes if op["f"] in ("assign", "subscribe")]
    with_unseen = sum(40 in op["value"] for op in takes)
    assert 0.23 * len(takes) <= with_unseen <= 0.43 * len(takes)


def test_a_planned_run_has_the_rate_and_the_crashes_it_asks_for(tmp_path):
    """60 s of MockTime at 50 ops/s over 3 processes, clients crashed about every 15 s each."""
    time = MockTime()
    config = WorkloadConfig(rate=50, crash_interval_s=15)
    log = Log()
    with HistoryWriter(tmp_path / "history.jsonl", time) as history:
        generator = Generator(config, random.Random(1), concurrency=3)
        worker = Worker(0, 3, lambda p: FakeClient(log, p), history, config, random.Random(2))
        start = time.nanoseconds()
        run_main_phase(worker, generator, time, start, start + 60 * 10**9, threading.Event())
    ops = read_history(tmp_path / "history.jsonl")
    invoked = Counter(op.f for op in ops if op.is_invoke)
    assert 2700 <= sum(invoked.values()) - invoked["crash"] <= 3300  # 3,000 expected
    assert 8 <= invoked["crash"] <= 16  # one every 5 s expected: 12
    assert max(op.time for op in ops) < 60 * 10**9
    # each crash ends a process: the next op is process + 3's, on a new client
    processes = [op.process for op in ops if op.is_invoke]
    assert processes == sorted(processes) and set(p % 3 for p in processes) == {0}
    assert log.opened == len({op.process for op in ops if op.is_invoke and op.f != "crash"})


def run_op(client, op, config=None, seed=0):
    return execute(client, op, config or WorkloadConfig(), random.Random(seed))


def test_a_timed_out_send_is_info_and_a_fenced_producer_fails_and_ends_its_process():
    client = FakeClient(Log(), 0)
    client.fail_sends_with = errors.TimeoutException("no answer")
    outcome = run_op(client, {"f": "send", "value": [["send", 1, 1]]})
    assert (outcome.type, outcome.end_process) == ("info", False)
    assert outcome.value == [("send", 1, 1)]  # not reached: as invoked
    client.fail_sends_with = errors.ProducerFencedException()
    outcome = run_op(client, {"f": "send", "value": [["send", 1, 2]]})
    assert (outcome.type, outcome.end_process) == ("fail", True)


@pytest.mark.parametrize(
    "error, expected",
    [
        (errors.NotLeaderForPartitionException(), ("info", False)),  # KAFKA-13574: not definite
        (errors.DisconnectException(), ("info", False)),
        (errors.OutOfOrderSequenceException(), ("fail", True)),
        (errors.UnknownTopicOrPartitionException(), ("fail", False)),
        (
            errors.KafkaException("Cannot execute transactional method because we are in an error state"),
            ("fail", True),
        ),
        (RuntimeError("a bug"), ("info", True)),  # unknown: perhaps done, and the client is suspect
    ],
)
def test_kafka_lites_errors_map_to_jepsens_fail_or_info(error, expected):
    failure = classify_kafka_lite(error)
    assert (failure.type, failure.end_process) == expected


def test_a_transaction_commits_its_sends_and_the_offsets_it_read():
    log = Log()
    log.partitions[2] = [1, 2]
    client = FakeClient(log, 0)
    client.assign([2], seek_to_beginning=True)
    op = {"f": "txn", "value": [["poll"], ["send", 3, 1]]}
    outcome = run_op(client, op, WorkloadConfig(txn=True, abort_p=0))
    assert outcome.type == "ok"
    assert outcome.value == [("poll", {2: [(0, 1), (1, 2)]}), ("send", 3, (None, 1))]
    assert client.calls[-3:] == ["begin", "offsets {2: 2}", "commit"]
    assert log.partitions[3] == [1]


def test_a_transaction_that_fails_is_aborted_and_its_polls_are_read_again():
    log = Log()
    log.partitions[2] = [1, 2]
    client = FakeClient(log, 0)
    client.assign([2], seek_to_beginning=True)
    client.fail_sends_with = errors.UnknownTopicOrPartitionException()
    outcome = run_op(
        client, {"f": "txn", "value": [["poll"], ["send", 3, 1]]}, WorkloadConfig(txn=True, abort_p=0)
    )
    assert (outcome.type, outcome.end_process) == ("fail", False)  # aborted: certainly not done
    assert outcome.value[0] == ("poll", {2: [(0, 1), (1, 2)]})  # what it read is kept
    assert "abort" in client.calls and "commit" not in client.calls
    assert client.calls[-1] == "seek 2 0"  # with-consumer-rollback
    assert 3 not in log.partitions
    assert client.poll(100) == {2: [(0, 1), (1, 2)]}


def test_intentional_aborts_come_at_about_abort_p_per_step():
    client = FakeClient(Log(), 0)
    config = WorkloadConfig(txn=True, abort_p=0.1)
    outcomes = [
        run_op(client, {"f": "send", "value": [["send", 0, v]]}, config, seed=v) for v in range(1, 1001)
    ]
    aborted = sum(o.error == "intentional-abort" for o in outcomes)
    assert all(o.type == "fail" for o in outcomes if o.error == "intentional-abort")
    # two chances (before the send, before the commit): 1 - 0.9^2 = 19 %
    assert 150 <= aborted <= 230


def test_an_info_or_a_crash_gives_the_thread_a_new_process_and_a_fail_does_not(tmp_path):
    log = Log()
    clients: list[FakeClient] = []

    def open_client(process):
        clients.append(FakeClient(log, process))
        return clients[-1]

    with HistoryWriter(tmp_path / "history.jsonl", MockTime()) as history:
        worker = Worker(1, 4, open_client, history, WorkloadConfig(), random.Random(0))
        worker.invoke({"f": "send", "value": [["send", 0, 1]]})
        clients[-1].fail_sends_with = errors.UnknownTopicOrPartitionException()
        worker.invoke({"f": "send", "value": [["send", 0, 2]]})
        clients[-1].fail_sends_with = errors.TimeoutException()
        worker.invoke({"f": "send", "value": [["send", 0, 3]]})
        worker.invoke({"f": "crash", "value": None})
        worker.invoke({"f": "send", "value": [["send", 0, 4]]})
    ops = read_history(tmp_path / "history.jsonl")
    assert [(op.process, op.type) for op in ops if not op.is_invoke] == [
        (1, "ok"), (1, "fail"), (1, "info"), (5, "info"), (9, "ok"),
    ]  # fmt: skip
    assert [c.process for c in clients] == [1, 9] and clients[0].closed


def test_the_final_phase_reads_every_key_from_the_beginning_until_the_highest_offsets(tmp_path):
    log = Log()
    log.partitions = {0: [1, 2, 3], 1: [1]}
    time = MockTime()
    with HistoryWriter(tmp_path / "history.jsonl", time) as history:
        worker = Worker(0, 1, lambda p: FakeClient(log, p), history, WorkloadConfig(), random.Random(0))
        worker.invoke({"f": "assign", "value": [0, 1]})
        worker.invoke({"f": "poll", "value": [["poll"]]})  # this process has read everything already
        targets = FinalTargets({0: 2, 1: 0})
        run_final_phase(worker, [0, 1], targets, time, time.nanoseconds() + 60 * 10**9, threading.Event(),
                        random.Random(0))  # fmt: skip
    ops = read_history(tmp_path / "history.jsonl")[4:]
    assert [(op.f, op.type) for op in ops[:4]] == [("crash", "invoke"), ("crash", "info"), ("assign", "invoke"),
                                                   ("assign", "ok")]  # fmt: skip
    assert ops[2].seek_to_beginning and ops[2].value == [0, 1]
    assert ops[5].value == [("poll", {0: [(0, 1), (1, 2), (2, 3)], 1: [(0, 1)]})]
    assert targets.done() and len(ops) == 6


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="partitions \\(3\\) must be at least key_count \\(10\\)"):
        WorkloadConfig(partitions=3)
    with pytest.raises(ValueError, match="sub_via must be some of"):
        WorkloadConfig(sub_via=("subscribe", "pattern"))
    with pytest.raises(ValueError, match="abort_p is a probability"):
        WorkloadConfig(abort_p=2)
    with pytest.raises(ValueError, match="client must be one of kafka_lite, confluent"):
        WorkloadConfig(client="kafka-python")


def test_a_reader_polls_outside_transactions_even_under_txn():
    """The final phase's clients are consumers alone: a poll of theirs begins no transaction, so a
    transaction coordinator that does not answer cannot keep the final phase from reading."""
    log = Log()
    log.partitions[0] = [1]
    client = FakeClient(log, 0)
    client.reader = True
    client.assign([0], seek_to_beginning=True)
    outcome = run_op(client, {"f": "poll", "value": [["poll"]]}, WorkloadConfig(txn=True, abort_p=0))
    assert (outcome.type, outcome.value) == ("ok", [("poll", {0: [(0, 1)]})])
    assert client.calls == ["assign [0] True"]
