"""The history file: what the writer records the reader gives back, op for op, and every way a file
can be bad is an error naming the file, the line and what is wrong."""

from __future__ import annotations

import json

import pytest

from kafka_lite.common.time import MockTime
from kafka_lite.jepsen.checker import check
from kafka_lite.jepsen.history import (
    NEMESIS,
    HistoryError,
    HistoryWriter,
    Op,
    pairs,
    read_history,
    restricted_to_keys,
    write_history,
)

pytestmark = pytest.mark.unit


def write_run(path):
    time = MockTime()
    with HistoryWriter(path, time) as writer:
        assign = writer.invoke(0, "assign", [0, 1], seek_to_beginning=True)
        writer.complete(assign, "ok")
        txn = writer.invoke(1, "txn", [("send", 0, 5), ("send", 1, 6)])
        time.sleep(2)
        writer.complete(txn, "ok", [("send", 0, (0, 5)), ("send", 1, (None, 6))])
        poll = writer.invoke(0, "poll", [("poll",)])
        fault = writer.invoke(NEMESIS, "kill", {"node": 2})
        writer.complete(
            poll, "info", [("poll", {0: [(0, 5)]})], error="timeout", rebalance_log=[1], client="kafka_lite"
        )
        writer.complete(fault, "info")
        writer.invoke(2, "send", [("send", 1, 7)])  # never completed: the run stopped
        return writer.ops()


def test_what_the_writer_records_the_reader_gives_back(tmp_path):
    path = tmp_path / "history.jsonl"
    written = write_run(path)
    read = read_history(path)
    assert read == written
    assert [op.extra for op in read] == [op.extra for op in written]
    assert read[3].time == 2_000_000  # nanoseconds since the run began, from the writer's clock
    assert read[3].value == [("send", 0, (0, 5)), ("send", 1, (None, 6))]
    assert (read[6].error, read[6].rebalance_log, read[6].extra) == (
        "timeout",
        (1,),
        {"client": "kafka_lite"},
    )
    assert read[0].seek_to_beginning is True
    completed = {invocation.index: (c.index if c else None) for invocation, c in pairs(read)}
    assert completed == {0: 1, 2: 3, 4: 6, 5: 7, 8: None}


def bad_history(tmp_path, lines: list[str], end: str = "\n"):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    with pytest.raises(HistoryError) as raised:
        read_history(path)
    return str(raised.value)


GOOD = json.dumps({"index": 0, "type": "invoke", "process": 0, "f": "poll", "time": 0, "value": [["poll"]]})


@pytest.mark.parametrize(
    ("second", "end", "message"),
    [
        ('{"index": 1, "type": "ok", "pro', "", "line 2: cut short (the run stopped while writing it?)"),
        ('{"index": 1, "type": "ok", "pro', "\n", "line 2: not JSON (Unterminated string starting at)"),
        ('{"index": 1, "type": "ok", "f": "poll", "time": 3}', "\n", "line 2: missing 'process'"),
        ('{"index": 1, "type": "ok", "process": 0, "f": "poll", "time": "3", "value": []}', "\n",
         "line 2: 'time' should be an integer, not '3'"),
        ('{"index": 1, "type": "ok", "process": 0, "f": "poll", "time": 3, "value": [["poll", {"x": []}]]}', "\n",
         "line 2: micro-operation 0's key should be an integer key, not 'x'"),
        ('{"index": 1, "type": "done", "process": 0, "f": "poll", "time": 3}', "\n",
         "line 2: 'type' should be one of invoke, ok, info, fail, not 'done'"),
        ('{"index": 7, "type": "ok", "process": 0, "f": "poll", "time": 3, "value": []}', "\n",
         "line 2: 'index' is 7, but this is operation 1"),
        ("[1, 2]", "\n", "line 2: an operation is a JSON object, not list"),
        ('{"index": 1, "type": "ok", "process": 0, "f": "read", "time": 3}', "\n",
         "line 2: 'f' should be one of send, poll, txn, assign, subscribe, crash, not 'read'"),
        ('{"index": 1, "type": "ok", "process": 0, "f": "txn", "time": 3, "value": {"send": 1}}', "\n",
         "line 2: a txn's value should be a list of micro-operations, not {'send': 1}"),
        ('{"index": 1, "type": "ok", "process": 0, "f": "send", "time": 3, "value": [["send", 0, [1, 2, 3]]]}', "\n",
         "line 2: micro-operation 0: a completed send's value is [offset, value], not [1, 2, 3]"),
        ('{"index": 1, "type": "ok", "process": 0, "f": "poll", "time": 3, "value": [], "rebalance_log": 4}', "\n",
         "line 2: 'rebalance_log' should be a list, not 4"),
    ],
    ids=[
        "truncated", "not-json", "missing-field", "wrong-type", "wrong-key-type", "unknown-type", "wrong-index",
        "not-an-object", "unknown-f", "not-micro-operations", "bad-completed-send", "bad-rebalance-log",
    ],
)  # fmt: skip
def test_a_bad_line_is_named_with_what_is_wrong(tmp_path, second, end, message):
    assert bad_history(tmp_path, [GOOD, second], end) == f"{tmp_path / 'bad.jsonl'} {message}"


def test_a_file_that_is_not_a_history_is_named(tmp_path):
    binary = tmp_path / "history.bin"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(HistoryError, match=r"history\.bin: not a history \(not UTF-8 text\)$"):
        read_history(binary)
    with pytest.raises(
        HistoryError, match=r"missing\.jsonl: cannot read the history: No such file or directory$"
    ):
        read_history(tmp_path / "missing.jsonl")


def test_a_cut_keeps_the_keys_asked_for_and_the_ops_that_touch_them(tmp_path):
    written = write_run(tmp_path / "history.jsonl")
    cut = restricted_to_keys(written, [1])
    # The assign keeps key 1; the txn its send to key 1; the poll read only key 0, so it goes with its
    # invocation; the nemesis's fault stays; the unfinished send to key 1 stays.
    assert [(op.index, op.type, op.process, op.f, op.value) for op in cut] == [
        (0, "invoke", 0, "assign", [1]),
        (1, "ok", 0, "assign", [1]),
        (2, "invoke", 1, "txn", [("send", 1, 6)]),
        (3, "ok", 1, "txn", [("send", 1, (None, 6))]),
        (4, "invoke", NEMESIS, "kill", {"node": 2}),
        (5, "info", NEMESIS, "kill", {"node": 2}),
        (6, "invoke", 2, "send", [("send", 1, 7)]),
    ]
    assert [op.time for op in cut] == [written[i].time for i in (0, 1, 2, 3, 5, 7, 8)]
    path = tmp_path / "cut.jsonl"
    write_history(path, cut)
    assert read_history(path) == cut


def test_a_cut_keeps_each_anomaly_of_its_keys_and_adds_none():
    # Key 0: a lost write (2 below 3, never read, so also unseen, and skipped by the poll). Key 1: a G1a (the failed 9, read by an ok poll).
    # Key 2: clean. Cut to 0 and 2, then to 1, then to 2: each keeps its own and only its own.
    ops: list[Op] = []

    def op(process, type, f, invoked, completed):
        ops.append(Op(len(ops), "invoke", process, f, invoked, len(ops)))
        ops.append(Op(len(ops), type, process, f, completed, len(ops)))

    for v in (1, 2, 3):
        op(0, "ok", "send", [("send", 0, v)], [("send", 0, (v - 1, v))])
    op(1, "fail", "txn", [("send", 1, 9), ("send", 2, 20)], [("send", 1, (0, 9)), ("send", 2, (0, 20))])
    op(2, "ok", "send", [("send", 2, 21)], [("send", 2, (1, 21))])
    op(3, "ok", "poll", [("poll",)], [("poll", {0: [(0, 1), (2, 3)], 1: [(0, 9)], 2: [(1, 21)]})])
    key_0 = ["int-poll-skip", "lost-write", "unseen"]
    assert check(ops)["bad_error_types"] == ["G1a", *key_0]
    assert check(restricted_to_keys(ops, [0, 2]))["bad_error_types"] == key_0
    assert check(restricted_to_keys(ops, [1]))["bad_error_types"] == ["G1a"]
    assert check(restricted_to_keys(ops, [2]))["valid"]
