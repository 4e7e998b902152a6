"""Request-cost benchmark: the broker's CPU per request, one request at a time, against the CPU a bare
Python socket server spends on the same round trip, in the same run.

No Kafka twin: what Kafka reports per request as ``RequestMetrics`` times, measured here as CPU.

    .venv/bin/python benchmarks/bench_request_cost.py [--requests 5000] [--rounds 3]

One client socket sends one request, waits for the whole response, and sends the next: no request
ever waits behind another, so what is measured is each request's own way through the broker (the
network thread reads and parses it, a handler thread runs ``KafkaApis``, the network thread writes
the response and unmutes the connection), not queueing. The requests, each a few hundred bytes:

- ApiVersions v0 (the handler's work is nothing; the response lists every API);
- Produce v3 with acks=1, one batch of 40 records of 100 bytes, to one partition;
- Fetch v5 of up to 4 KiB from one partition, the offset moving through 100,000 records written in
  batches of about 4 KiB (the data is there: the broker answers at once, from the page cache).

The broker is ``bench_broker``'s (its own process beside a ZooKeeper, one network thread, two request
handlers); the CPU is the broker process's user and system time (``/proc``) over the requests. Two
baselines, each a process of its own answering the same frames with responses of the broker's size:
a bare server (one thread, a blocking socket: the interpreter's and the kernel's floor for a
request-response round trip), and a relay that adds only the broker's thread hand-offs (a network
thread that mutes the connection and queues the frame, a handler thread that queues the response
and wakes the network thread through a socket pair). A baseline costs a few µs a request, and
``/proc`` counts CPU in ticks of 10 ms, so each baseline answers 20 times as many of each kind's
requests as the broker does (``FLOOR_REPEAT``), for a count of ticks like the broker's. The table gives the medians over ``--rounds``
rounds (the kinds of request take turns in each round), in µs of CPU per request, and the broker's
cost as a multiple of the floor.
"""

from __future__ import annotations

import argparse
import os
import queue
import selectors
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_broker import TOPIC, cpu_seconds, produce, start_broker, stop
from headline import add_argument, figure, write

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import RequestHeader, encode_request
from kafka_lite.common.record.memory_records_builder import MemoryRecordsBuilder
from kafka_lite.zk.embedded import EmbeddedZooKeeper

PORT = 19092  # where bench_broker.start_broker listens
FILL = 100_000  # records in partition 0 before the rounds, for the fetches to read
KINDS = ("ApiVersions", "Produce", "Fetch")
FLOOR_REPEAT = 20  # how many times over the baselines answer each kind's requests


# -- the client: one request at a time -------------------------------------------------------------------


def round_trip(sock: socket.socket, payload: bytes, buf: bytearray) -> int:
    """Send one size-prefixed frame and read the whole size-prefixed answer; its size."""
    sock.sendall(struct.pack(">i", len(payload)) + payload)
    (size,) = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))
    view, got = memoryview(buf), 0
    while got < size:
        got += sock.recv_into(view[got:size])
    return size


def requests(kind: str, n: int, idle_partitions: int = 0) -> list[bytes]:
    """``n`` encoded requests of ``kind``, correlation ids 0..n-1; each Fetch also names
    ``idle_partitions`` partitions from 2 on, which nothing writes to, at their end (offset 0), as a
    follower's fetch names every partition it follows, most of them idle."""
    if kind == "ApiVersions":
        return [encode_request(RequestHeader(ApiKeys.API_VERSIONS, 0, i, "bench"), {}) for i in range(n)]
    if kind == "Produce":
        builder = MemoryRecordsBuilder()
        for _ in range(40):
            builder.append(int(time.time() * 1000), None, os.urandom(100))
        batch = bytes(builder.build().buffer())
        data = [{"topic": TOPIC, "data": [{"partition": 1, "record_set": batch}]}]
        body = {"transactional_id": None, "acks": 1, "timeout": 30_000, "topic_data": data}
        return [encode_request(RequestHeader(ApiKeys.PRODUCE, 3, i, "bench"), body) for i in range(n)]
    out = []
    for i in range(n):
        partition = {
            "partition": 0,
            "fetch_offset": (i * 40) % FILL,
            "log_start_offset": -1,
            "max_bytes": 4096,
        }
        idle = [
            {"partition": p, "fetch_offset": 0, "log_start_offset": -1, "max_bytes": 4096}
            for p in range(2, 2 + idle_partitions)
        ]
        body = {
            "replica_id": -1, "max_wait_time": 0, "min_bytes": 0, "max_bytes": 52_428_800,
            "isolation_level": 0, "topics": [{"topic": TOPIC, "partitions": [partition, *idle]}],
        }  # fmt: skip
        out.append(encode_request(RequestHeader(ApiKeys.FETCH, 5, i, "bench"), body))
    return out


def measure(port: int, pid: int, payloads: list[bytes]) -> tuple[float, int]:
    """CPU µs the process ``pid`` spent per request, and the last response's size."""
    buf = bytearray(1 << 20)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        round_trip(sock, payloads[0], buf)  # the connection is accepted and registered before the clock
        before = cpu_seconds(pid)
        for payload in payloads:
            size = round_trip(sock, payload, buf)
        return (cpu_seconds(pid) - before) / len(payloads) * 1e6, size


# -- the floor: a bare server ----------------------------------------------------------------------------


def bare_server(port_file: str) -> None:
    """Answer every size-prefixed frame with a frame whose size the first 4 bytes after the size ask
    for (the client sends it there), until the client goes."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        Path(port_file).write_text(str(server.getsockname()[1]))
        while True:
            conn, _ = server.accept()
            with conn:
                reply = b""
                while True:
                    head = conn.recv(4, socket.MSG_WAITALL)
                    if len(head) < 4:
                        break
                    (size,) = struct.unpack(">i", head)
                    frame = conn.recv(size, socket.MSG_WAITALL)
                    (wanted,) = struct.unpack(">i", frame[:4])
                    if len(reply) != wanted + 4:
                        reply = struct.pack(">i", wanted) + bytes(wanted)
                    conn.sendall(reply)


def relay_server(port_file: str) -> None:
    """The bare server's answers, given the way the broker gives them: a network thread reads each
    frame, stops reading the connection (as a mute does), and queues the frame for a handler thread;
    the handler queues the response and wakes the network thread through a socket pair, and the
    network thread writes it and reads the connection again. Kafka's thread hand-offs, and nothing
    else."""
    requests_queue: queue.SimpleQueue = queue.SimpleQueue()  # the broker's queues are SimpleQueues too
    responses: queue.SimpleQueue = queue.SimpleQueue()
    wake_r, wake_w = socket.socketpair()
    wake_r.setblocking(False)

    def handler() -> None:
        reply = b""
        while True:
            frame = requests_queue.get()
            (wanted,) = struct.unpack(">i", frame[:4])
            if len(reply) != wanted + 4:
                reply = struct.pack(">i", wanted) + bytes(wanted)
            responses.put(reply)
            wake_w.send(b"\0")

    threading.Thread(target=handler, daemon=True).start()
    with socket.create_server(("127.0.0.1", 0)) as server:
        Path(port_file).write_text(str(server.getsockname()[1]))
        while True:
            conn, _ = server.accept()
            selector = selectors.DefaultSelector()
            selector.register(wake_r, selectors.EVENT_READ)
            selector.register(conn, selectors.EVENT_READ)
            open_ = True
            while open_:
                for key, _ in selector.select():
                    if key.fileobj is wake_r:
                        wake_r.recv(1024)
                        conn.sendall(responses.get_nowait())
                        selector.register(conn, selectors.EVENT_READ)  # unmute
                        continue
                    head = conn.recv(4, socket.MSG_WAITALL)
                    if len(head) < 4:
                        open_ = False
                        break
                    (size,) = struct.unpack(">i", head)
                    frame = conn.recv(size, socket.MSG_WAITALL)
                    selector.unregister(conn)  # mute: one request in flight per connection
                    requests_queue.put(frame)
            selector.close()
            conn.close()


def floor_payloads(payloads: list[bytes], response_size: int) -> list[bytes]:
    """The same frames, each asking the bare server for a response of ``response_size`` bytes."""
    return [struct.pack(">i", response_size) + p[4:] for p in payloads]


# -- the comparison --------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000, help="requests of each kind per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bare-server", help=argparse.SUPPRESS)  # the floor's process
    parser.add_argument("--relay-server", help=argparse.SUPPRESS)  # the thread hand-offs' process
    add_argument(parser)
    args = parser.parse_args()
    if args.bare_server:
        bare_server(args.bare_server)
        return
    if args.relay_server:
        relay_server(args.relay_server)
        return
    for name in ("requests", "rounds"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name} must be positive, not {getattr(args, name)}")
    broker_us: dict[str, list[float]] = {k: [] for k in KINDS}
    bare_us: dict[str, list[float]] = {k: [] for k in KINDS}
    relay_us: dict[str, list[float]] = {k: [] for k in KINDS}
    with tempfile.TemporaryDirectory(prefix="kafka-lite-bench-") as d:
        zk = EmbeddedZooKeeper(Path(d) / "zookeeper")
        zk.start()
        peers = {}
        for name in ("bare", "relay"):
            port_file = Path(d) / f"{name}-port"
            peers[name] = (
                subprocess.Popen([sys.executable, __file__, f"--{name}-server", str(port_file)]),
                port_file,
            )
        try:
            broker = start_broker(Path(d), zk, sendfile=False, code=Path(__file__).resolve().parents[1])
            try:
                # Small batches (about 37 records each), so that a 4 KiB fetch returns one or two; all
                # in partition 0, which the fetches read from offsets spread over the whole FILL.
                _, producer = produce(
                    f"127.0.0.1:{PORT}", FILL, os.urandom(100), {"batch.size": 4096}, partition=0
                )
                producer.flush(30)
                ports = {}
                for name, (_, port_file) in peers.items():
                    while not port_file.exists():
                        time.sleep(0.05)  # each peer writes its port once it listens
                    ports[name] = int(port_file.read_text())
                for r in range(args.rounds):
                    order = KINDS[r % len(KINDS) :] + KINDS[: r % len(KINDS)]
                    for kind in order:
                        payloads = requests(kind, args.requests)
                        us, size = measure(PORT, broker.pid, payloads)
                        # The baselines cost a few µs a request, which /proc counts in 10 ms ticks:
                        # they answer FLOOR_REPEAT times as many requests, for as many ticks as the broker.
                        asks = floor_payloads(payloads, size) * FLOOR_REPEAT
                        bare, _ = measure(ports["bare"], peers["bare"][0].pid, asks)
                        relay, _ = measure(ports["relay"], peers["relay"][0].pid, asks)
                        broker_us[kind].append(us)
                        bare_us[kind].append(bare)
                        relay_us[kind].append(relay)
                        print(
                            f"round {r + 1} {kind:12} broker {us:5.0f} µs  two threads {relay:5.0f} µs  "
                            f"one thread {bare:5.0f} µs",
                            flush=True,
                        )
            finally:
                stop(broker)
        finally:
            for proc, _ in peers.values():
                proc.kill()
                proc.wait()
            zk.stop()
    print(f"\nCPU per request, one request at a time, median of {args.rounds} rounds of {args.requests:,}")
    print(
        f"{'request':14}{'broker µs':>11}{'two threads µs':>16}{'one thread µs':>15}{'broker / one thread':>21}"
    )
    figures = []
    for kind in KINDS:
        b, t, o = (statistics.median(x[kind]) for x in (broker_us, relay_us, bare_us))
        print(f"{kind:14}{b:11.0f}{t:16.0f}{o:15.0f}{b / o:21.1f}")
        figures.append(
            figure(
                f"broker CPU per request, {kind}, over a bare one-thread server's",
                b / o,
                "x",
                at_most=5.0,
                detail=f"{b:,.0f} µs against {o:,.0f} µs (two threads alone: {t:,.0f} µs)",
            )
        )
    write(args.json, "bench_request_cost", figures)


if __name__ == "__main__":
    main()
