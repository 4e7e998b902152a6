"""The producer benchmark's ``flat_send`` (``benchmarks/bench_producer.py --flat``) against the scripted
broker: it must append what ``send`` appends, or the benchmark's "price of Kafka's shape" compares
two different things (or, as once happened, fails when the batch changes under it)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.common.record.memory_records import MemoryRecords
from tests.producer.support import ScriptedBroker

pytestmark = pytest.mark.unit
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_flat_send_continues_where_send_left_off_with_the_same_records_and_futures(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    flat_send = importlib.import_module("bench_producer").flat_send
    broker = ScriptedBroker()
    try:
        # batches of about ten records, so that both ways fill batches and start new ones
        producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{broker.port}", linger_ms=5, batch_size=1024)
        producer.send("t", b"warm-up").get(10)  # metadata in place, as in the benchmark
        send = flat_send(producer)
        values = [bytes([i]) * 100 for i in range(120)]
        futures = [producer.send("t", v) for v in values[:60]] + [send("t", v) for v in values[60:]]
        producer.flush()
        answers = [f.get(0) for f in futures]
        producer.close()
    finally:
        broker.close()

    # Round robin over t-0 and t-1, continued by flat_send from send's counter.
    partitions = [a.partition for a in answers]
    assert partitions == [(partitions[0] + i) % 2 for i in range(120)]
    # What the broker got, per partition and in order: the warm-up record, then these.
    received: dict[int, list[bytes]] = {0: [], 1: []}
    for request in broker.produce_requests:
        for (_, partition), raw in request["batches"].items():
            received[partition] += [r.value for b in MemoryRecords(raw).batches() for r in b]
    warm_up = 0 if b"warm-up" in received[0] else 1
    for partition in (0, 1):
        ours = [v for v, p in zip(values, partitions, strict=True) if p == partition]
        assert received[partition] == [b"warm-up"] * (partition == warm_up) + ours
    # Each future knows its record's offset in its partition.
    for partition in (0, 1):
        offsets = [a.offset for a in answers if a.partition == partition]
        first = 1 if partition == warm_up else 0
        assert offsets == list(range(first, first + len(offsets)))
