"""Protocol codec benchmark: kafka_lite against kafka-python's codec, same messages, same run.

No Kafka twin: a measurement. Encodes and decodes Produce v3 and Fetch v5 requests and responses
carrying record batches (64 partitions x 16 KiB by default), with kafka_lite's schemas (one schema
walk per message, as Kafka's ``Schema.read``/``write``) and with kafka-python's own protocol classes
(``kafka.protocol.old``), and prints each side's best time and their ratio (kafka-python's time over
kafka_lite's: above 1 means kafka_lite is faster). The ratio is a measurement, not a goal.

    .venv/bin/python benchmarks/bench_protocol.py [--repeat 200] [--partitions 64] [--record-kib 16]

Equal work: both sides produce the same Python values (checked before timing, by position), except
that for record sets kafka_lite returns a zero-copy ``memoryview`` where kafka-python copies into
``bytes``.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from pathlib import Path

from headline import add_argument, figure, write
from kafka.protocol.old.fetch import FetchRequest_v5, FetchResponse_v5
from kafka.protocol.old.produce import ProduceRequest_v3, ProduceResponse_v3

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.types import decode, encode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.common.protocol.kafka_python_oracle import as_tuple, from_kafka_python


def messages(partitions: int, record_kib: int):
    record_set = os.urandom(record_kib * 1024)
    parts = [{"partition": p, "record_set": record_set} for p in range(partitions)]
    produce_req = {
        "transactional_id": None,
        "acks": -1,
        "timeout": 30000,
        "topic_data": [{"topic": "orders", "data": parts}],
    }
    produce_resp = {
        "responses": [{"topic": "orders", "partition_responses": [
            {"partition": p, "error_code": 0, "base_offset": p * 1000, "log_append_time": -1} for p in range(partitions)]}],
        "throttle_time_ms": 0,
    }  # fmt: skip
    fetch_req = {
        "replica_id": -1, "max_wait_time": 500, "min_bytes": 1, "max_bytes": 1 << 26, "isolation_level": 0,
        "topics": [{"topic": "orders", "partitions": [
            {"partition": p, "fetch_offset": p, "log_start_offset": -1, "max_bytes": 1 << 20} for p in range(partitions)]}],
    }  # fmt: skip
    fetch_resp = {
        "throttle_time_ms": 0,
        "responses": [{"topic": "orders", "partition_responses": [
            {"partition_header": {"partition": p, "error_code": 0, "high_watermark": 99, "last_stable_offset": 99,
                                  "log_start_offset": 0, "aborted_transactions": None},
             "record_set": record_set} for p in range(partitions)]}],
    }  # fmt: skip
    return [
        ("Produce v3 request", ApiKeys.PRODUCE.request_schema(3), produce_req, ProduceRequest_v3.SCHEMA),
        ("Produce v3 response", ApiKeys.PRODUCE.response_schema(3), produce_resp, ProduceResponse_v3.SCHEMA),
        ("Fetch v5 request", ApiKeys.FETCH.request_schema(5), fetch_req, FetchRequest_v5.SCHEMA),
        ("Fetch v5 response", ApiKeys.FETCH.response_schema(5), fetch_resp, FetchResponse_v5.SCHEMA),
    ]


def _rows(ours, value, wire, theirs, theirs_tuple):
    """(operation, kafka_lite's call, kafka-python's call) for one message."""
    return [
        ("encode", lambda: encode(ours, value), lambda: theirs.encode(theirs_tuple)),
        ("decode", lambda: decode(ours, wire), lambda: theirs.decode(io.BytesIO(wire))),
    ]


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="timed runs per operation (the best counts)")
    parser.add_argument("--partitions", type=int, default=64)
    parser.add_argument("--record-kib", type=int, default=16, help="record bytes per partition, in KiB")
    add_argument(parser)
    args = parser.parse_args()
    figures = []
    print(f"{'message':22} {'op':8} {'kafka_lite':>12} {'kafka-python':>13} {'ratio':>7}")
    for name, ours, value, theirs in messages(args.partitions, args.record_kib):
        wire = encode(ours, value)
        theirs_tuple = as_tuple(ours, value)
        assert bytes(theirs.encode(theirs_tuple)) == wire, f"{name}: the two encoders disagree"
        assert as_tuple(ours, decode(ours, wire)) == from_kafka_python(
            ours, theirs.decode(io.BytesIO(wire))
        ), name
        rows = _rows(ours, value, wire, theirs, theirs_tuple)
        for op, mine, other in rows:
            a, b = best(mine, args.repeat), best(other, args.repeat)
            print(f"{name:22} {op:8} {a * 1e6:10.1f}us {b * 1e6:11.1f}us {b / a:6.2f}x")
            detail = f"{a * 1e6:,.1f} µs against kafka-python's {b * 1e6:,.1f} µs"
            figures.append(
                figure(f"{name}, {op}, kafka-python's time over kafka_lite's", b / a, "x", detail=detail)
            )
    write(args.json, "bench_protocol", figures)


if __name__ == "__main__":
    main()
