"""The accumulator picture is drawn from the live accumulator: every deque and batch, each batch's
records, bytes and state, the pool's memory, and every drained batch in its node's request."""

from __future__ import annotations

import re

import pytest

from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.time import MockTime
from kafka_lite.diagrams import DIAGRAMS
from kafka_lite.diagrams.producer import accumulator_diagram, record_accumulator
from kafka_lite.producer.record_accumulator import RecordAccumulator
from kafka_lite.producer.transaction_manager import ProducerIdAndEpoch, TransactionManager
from tests.producer.support import cluster_of, node

pytestmark = pytest.mark.unit
EDGE = re.compile(r"^\s*(\S+) -> (\S+)(?: \[([^\]]*)\])?", re.MULTILINE)
CLUSTER = cluster_of({("t", 0): 0, ("t", 1): 0, ("t", 2): 1})
VALUE = b"v" * 50  # 4 records fill a 320-byte batch (see tests/producer/test_record_accumulator.py)


def accumulator(time: MockTime, transaction_manager: TransactionManager | None = None) -> RecordAccumulator:
    return RecordAccumulator(
        batch_size=320,
        total_size=4000,
        compression=CompressionType.NONE,
        linger_ms=10,
        retry_backoff_ms=100,
        time=time,
        transaction_manager=transaction_manager,
    )


def append(acc: RecordAccumulator, tp, n: int = 1) -> None:
    for _ in range(n):
        acc.append(tp, acc.time.milliseconds(), None, VALUE, (), 0)


def rows(source: str, tp: str) -> list[list[str]]:
    """The batch rows under a partition's header row in the accumulator's table, as cell texts."""
    block = source.split(f"<b>{tp} (")[1].split("<b>")[0].split("BufferPool")[0]
    return [
        [re.sub(r"<[^>]*>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", block)
    ]


def test_every_batch_of_every_deque_is_a_row_with_its_records_bytes_and_state():
    time = MockTime()
    acc = accumulator(time)
    append(acc, ("t", 0), 6)  # a full batch of 4, then an open one of 2
    append(acc, ("t", 2), 1)
    time.advance(3)
    source = accumulator_diagram(acc, CLUSTER).source
    first, second = acc.batches[("t", 0)]
    assert rows(source, "t-0") == [
        ["1", "4 records", f"{first.size_in_bytes()} of 320 B", "full"],
        ["2", "2 records", f"{second.size_in_bytes()} of 320 B", "open, 3 of 10 ms linger"],
    ]
    assert rows(source, "t-2") == [
        ["1", "1 record", f"{acc.batches[('t', 2)][0].size_in_bytes()} of 320 B", "open, 3 of 10 ms linger"]
    ]
    assert "t-0 (leader: node 0)" in source and "t-2 (leader: node 1)" in source
    assert "960 of buffer.memory 4,000 B held by batches" in source  # three batches of 320
    assert source.index("<b>t-0 (") < source.index("<b>t-2 (")
    assert "ProduceRequest" not in source and "->" not in source, "no drain given: no requests"


def test_drained_batches_are_drawn_in_their_nodes_request_with_an_edge_from_their_partition():
    time = MockTime()
    acc = accumulator(time)
    append(acc, ("t", 0), 5)
    append(acc, ("t", 1), 1)
    append(acc, ("t", 2), 1)
    ready = acc.ready(CLUSTER, time.milliseconds())
    assert ready.ready_nodes == {node(0)}
    drained = acc.drain(CLUSTER, ready.ready_nodes, 1 << 20, time.milliseconds())
    source = accumulator_diagram(acc, CLUSTER, drained).source
    request = source.split("req_0 [label=")[1].split("\n")[0]
    sizes = [b.size_in_bytes() for b in drained[0]]
    assert f"2 batches, {sum(sizes)} B" in request
    assert f'>t-0</td><td bgcolor="#dbeafe">4 records, {sizes[0]} B</td>' in request
    assert f'>t-1</td><td bgcolor="#dbeafe">1 record, {sizes[1]} B</td>' in request
    edges = [(a, b) for a, b, attrs in EDGE.findall(source) if "invis" not in attrs]
    assert edges == [
        ("accumulator:p_t_0:e", "req_0:p_t_0:w"),
        ("accumulator:p_t_1:e", "req_0:p_t_1:w"),
    ]
    assert "node 1:\nno request this round" in source
    assert rows(source, "t-1") == [["(empty)"]], "the drained batch left its deque"
    accumulator_diagram(acc, CLUSTER, drained).pipe(format="svg")  # every port exists


def test_a_retried_batch_shows_its_back_off_and_keeps_its_sequences():
    time = MockTime()
    tm = TransactionManager()
    tm.set_producer_id_and_epoch(ProducerIdAndEpoch(7, 0))
    acc = accumulator(time, tm)
    append(acc, ("t", 0), 3)
    (batch,) = acc.drain(CLUSTER, {node(0)}, 1 << 20, time.milliseconds())[0]
    source = accumulator_diagram(acc, CLUSTER, {0: [batch]}).source
    assert ">seq 0-2</td>" in source
    time.advance(30)
    acc.reenqueue(batch, time.milliseconds())
    time.advance(40)
    acc.mute_partition(("t", 0))
    source = accumulator_diagram(acc, CLUSTER).source
    assert rows(source, "t-0") == [
        ["1", "3 records", f"{batch.size_in_bytes()} of 320 B", "retry 1, backs off 60 ms more; seq 0-2"]
    ]
    assert "t-0 (leader: node 0, muted: a batch in flight)" in source
    assert "#fecaca" in source


def test_the_docs_picture_is_one_real_drain_of_an_idempotent_producer():
    source = record_accumulator().source
    request = source.split("req_0 [label=")[1].split("\n")[0]
    assert ">orders-0</td>" in request and ">orders-1</td>" in request and "orders-2" not in request
    assert ">seq 0-2</td>" in request and ">seq 0</td>" in request
    assert "node 1:\nno request this round" in source
    assert rows(source, "orders-0")[0][-1] == "full" and rows(source, "orders-2")[0][-1].startswith("open")
    assert DIAGRAMS["record_accumulator"] is record_accumulator


def test_fonts_are_helvetica_everywhere():
    lines = record_accumulator().source.splitlines()
    assert any(line.strip().startswith("fontname=Helvetica") for line in lines)
    assert any(line.strip().startswith("node [fontname=Helvetica") for line in lines)
    assert any(line.strip().startswith("edge [fontname=Helvetica") for line in lines)
