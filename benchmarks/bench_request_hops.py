"""Where a request's CPU goes in the broker: ``bench_request_cost``'s requests, one at a time, with the
broker's CPU split by the hop of the book's request path that spent it.

No Kafka twin: Kafka's ``RequestMetrics`` split a request's *time* into its queue, local, remote and
send phases (chapter 2, 2.3.3); this splits its *CPU* by the code that ran, hop by hop.

    .venv/bin/python benchmarks/bench_request_hops.py [--requests 3000] [--rounds 3]

The broker runs in this process (``bench_request_cost``'s settings: one network thread, two request
handlers); the client, one socket sending a request and reading its whole answer before the next, is
a process of its own, so that only the broker's threads spend this process's CPU. Each hop is one or
more of the broker's methods, wrapped from outside for the run (the code measured carries nothing for
it), and charged with the CPU its thread spent inside them (``time.thread_time_ns``), less what the
hops it called spent:

- selector read: ``KafkaChannel.read``, the frame's bytes from the socket into its receive;
- frame parse: the processor's ``_parse``, the header and the body decoded into a ``Request``;
- request channel: the processor putting the request on the queue and a handler taking it, and the
  handler's response put on the processor's queue (its wakeup included) and taken;
- KafkaApis dispatch: ``KafkaApis.handle`` and ``_handle_request`` around the API's handler (the
  request quota's bookkeeping, KIP-124, is here);
- the handler's work: the API's own handler (``handle_produce_request`` and the rest) less the hops
  below it;
- response encode: ``_send_response``, the header and the body encoded for the wire;
- the send: ``KafkaChannel.write``, the answer's bytes to the socket;
- mute, unmute and metrics: the processor's ``mute``, ``unmute`` and ``_record`` (Kafka's
  ``RequestMetrics`` updated);
- the rest: everything else the process spent (its CPU from ``getrusage``, less the hops): the
  processor's and the handlers' loops, the selector's ``poll`` and its epoll calls, the threads
  waking one another, and the broker's other threads, which are idle here.

A wrapped call costs a few µs of its own (two clock reads and a frame), so the run also measures the
same requests with no wrapper, and the table gives both totals.
"""

from __future__ import annotations

import argparse
import functools
import gc
import logging
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_broker import produce
from bench_request_cost import FILL, KINDS, PORT, requests, round_trip
from headline import add_argument, figure, write

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.zk.embedded import EmbeddedZooKeeper

HOPS = [
    ("selector read", [("kafka_lite.network.kafka_channel", "KafkaChannel", "read")]),
    ("frame parse", [("kafka_lite.network.socket_server", "Processor", "_parse")]),
    (
        "request channel",
        [
            ("kafka_lite.network.request_channel", "RequestChannel", name)
            for name in ("send_request", "receive_request", "send_response", "receive_response")
        ],
    ),
    (
        "KafkaApis dispatch",
        [("kafka_lite.server.kafka_apis", "KafkaApis", name) for name in ("handle", "_handle_request")],
    ),
    ("the handler's work", []),  # the API's handler, wrapped per kind in ``main``
    ("response encode", [("kafka_lite.server.kafka_apis", "KafkaApis", "_send_response")]),
    ("the send", [("kafka_lite.network.kafka_channel", "KafkaChannel", "write")]),
    (
        "mute, unmute and metrics",
        [("kafka_lite.network.selector", "Selector", name) for name in ("mute", "unmute")]
        + [("kafka_lite.network.socket_server", "Processor", "_record")],
    ),
]
API_KEYS = {"ApiVersions": ApiKeys.API_VERSIONS, "Produce": ApiKeys.PRODUCE, "Fetch": ApiKeys.FETCH}


class HopClock:
    """CPU per hop, each call charged with its thread's CPU inside it less its nested hops'."""

    def __init__(self) -> None:
        self.ns: dict[str, int] = {}
        self._stacks = threading.local()
        self._wrapped: list[tuple[type | dict, object, object]] = []

    def wrap(self, hop: str, owner: type, name: str) -> None:
        """Charge ``hop`` with every call of the method ``owner.name``."""
        original = owner.__dict__[name]
        setattr(owner, name, self._timed(hop, original))
        self._wrapped.append((owner, name, original))

    def wrap_item(self, hop: str, table: dict, key: object) -> None:
        """Charge ``hop`` with every call of ``table[key]`` (``KafkaApis`` keeps its handlers as
        bound methods in a table, looked up per request)."""
        original = table[key]
        table[key] = self._timed(hop, original)
        self._wrapped.append((table, key, original))

    def _timed(self, hop: str, original):
        clock = time.thread_time_ns
        self.ns.setdefault(hop, 0)

        @functools.wraps(original)
        def timed(*args, **kwargs):
            stack = self._stack()
            stack.append(0)  # the nested hops' CPU, added as they return
            start = clock()
            try:
                return original(*args, **kwargs)
            finally:
                spent = clock() - start
                nested = stack.pop()
                self.ns[hop] += spent - nested
                if stack:
                    stack[-1] += spent

        return timed

    def _stack(self) -> list[int]:
        stack = getattr(self._stacks, "stack", None)
        if stack is None:
            stack = self._stacks.stack = []
        return stack

    def reset(self) -> None:
        for hop in self.ns:
            self.ns[hop] = 0

    def unwrap(self) -> None:
        for owner, name, original in reversed(self._wrapped):
            if isinstance(owner, dict):
                owner[name] = original
            else:
                setattr(owner, name, original)
        self._wrapped.clear()


def process_cpu_ns() -> int:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return int((usage.ru_utime + usage.ru_stime) * 1e9)


THREADS = {"kafka-network-thread": "the network thread", "kafka-request-handler": "the request handlers"}


def threads_cpu_ns() -> dict[str, int]:
    """CPU so far of the broker's network thread, of its request handlers together, and of every
    other thread of this process (``/proc``'s per-thread counts, in ticks of the kernel's clock)."""
    spent = dict.fromkeys([*THREADS.values(), "the other threads"], 0)
    tick_ns = 1e9 / os.sysconf("SC_CLK_TCK")
    for thread in threading.enumerate():
        try:
            stat = Path(f"/proc/self/task/{thread.native_id}/stat").read_text()
        except OSError:
            continue  # ended meanwhile
        fields = stat.rsplit(")", 1)[1].split()
        group = next(
            (g for prefix, g in THREADS.items() if thread.name.startswith(prefix)), "the other threads"
        )
        spent[group] += int((int(fields[11]) + int(fields[12])) * tick_ns)
    return spent


# -- the client, a process of its own ----------------------------------------------------------------------


def client(kind: str, n: int) -> None:
    """Warm up, say "ready", wait for a line on stdin, send ``n`` requests of ``kind`` one at a time,
    say "done"; again for every further line, until stdin closes."""
    payloads = requests(kind, n)
    buf = bytearray(1 << 20)
    with socket.create_connection(("127.0.0.1", PORT)) as sock:
        for payload in payloads[:200]:
            round_trip(sock, payload, buf)
        print("ready", flush=True)
        for _ in sys.stdin:
            for payload in payloads:
                round_trip(sock, payload, buf)
            print("done", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000, help="requests of each kind per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--client", help=argparse.SUPPRESS)  # the client's process: the kind it sends
    add_argument(parser)
    args = parser.parse_args()
    if args.client:
        client(args.client, args.requests)
        return
    for name in ("requests", "rounds"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name} must be positive, not {getattr(args, name)}")

    from kafka_lite.cli.broker import build_server
    from kafka_lite.server.kafka_config import KafkaConfig

    logging.basicConfig(level=logging.WARNING)
    clock = HopClock()
    with tempfile.TemporaryDirectory(prefix="kafka-lite-bench-") as d:
        zk = EmbeddedZooKeeper(Path(d) / "zookeeper")
        zk.start()
        config_file = Path(d) / "server.properties"
        config_file.write_text(
            "\n".join(
                [
                    "broker.id=0",
                    f"listeners=PLAINTEXT://127.0.0.1:{PORT}",
                    f"log.dirs={Path(d) / 'data'}",
                    f"zookeeper.connect={zk.connect_string}",
                    "fetch.sendfile.enable=false",
                    "num.network.threads=1",
                    "num.io.threads=2",
                    "num.partitions=4",
                ]
            )
            + "\n"
        )
        server = build_server(KafkaConfig.from_file(str(config_file), {}))
        server.startup()
        gc.freeze()  # as ``broker start`` does once the broker is up
        try:
            _, producer = produce(
                f"127.0.0.1:{PORT}", FILL, os.urandom(100), {"batch.size": 4096}, partition=0
            )
            producer.flush(30)
            results = {kind: {"bare": [], "threads": [], "hops": [], "wrapped": []} for kind in KINDS}
            for kind in KINDS:
                proc = subprocess.Popen(
                    [sys.executable, __file__, "--client", kind, "--requests", str(args.requests)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                assert proc.stdin is not None and proc.stdout is not None
                if proc.stdout.readline().strip() != "ready":
                    raise RuntimeError(f"the {kind} client did not start")

                def one_round(proc=proc, kind=kind) -> tuple[int, dict[str, int]]:
                    before, threads_before = process_cpu_ns(), threads_cpu_ns()
                    proc.stdin.write("go\n")
                    proc.stdin.flush()
                    if proc.stdout.readline().strip() != "done":
                        raise RuntimeError(f"the {kind} client stopped")
                    threads = {t: ns - threads_before[t] for t, ns in threads_cpu_ns().items()}
                    return process_cpu_ns() - before, threads

                for _ in range(args.rounds):
                    spent, threads = one_round()
                    results[kind]["bare"].append(spent / args.requests)
                    results[kind]["threads"].append({t: ns / args.requests for t, ns in threads.items()})
                    for hop, methods in HOPS:
                        for module, owner, name in methods:
                            clock.wrap(hop, getattr(sys.modules[module], owner), name)
                    clock.wrap_item("the handler's work", server.apis._handlers, API_KEYS[kind])
                    clock.reset()
                    spent, _ = one_round()
                    clock.unwrap()
                    results[kind]["wrapped"].append(spent / args.requests)
                    results[kind]["hops"].append({h: ns / args.requests for h, ns in clock.ns.items()})
                proc.stdin.close()
                proc.wait()
        finally:
            server.shutdown()
            zk.stop()

    hops = [hop for hop, _ in HOPS]
    print(f"\nThe broker's CPU per request by hop, µs, median of {args.rounds} rounds of {args.requests:,}")
    print(f"{'hop':28}" + "".join(f"{kind:>13}" for kind in KINDS))
    medians = {kind: {} for kind in KINDS}
    for kind in KINDS:
        for hop in hops:
            medians[kind][hop] = statistics.median(r[hop] / 1000 for r in results[kind]["hops"])
        wrapped = statistics.median(results[kind]["wrapped"]) / 1000
        medians[kind]["the rest"] = wrapped - sum(medians[kind][h] for h in hops)
        medians[kind]["total, with the wrappers"] = wrapped
        medians[kind]["total, without them"] = statistics.median(results[kind]["bare"]) / 1000
    for row in [*hops, "the rest", "total, with the wrappers", "total, without them"]:
        print(f"{row:28}" + "".join(f"{medians[kind][row]:13.0f}" for kind in KINDS))
    print(
        f"\nThe same, without the wrappers, by thread, µs (per-thread counts in {1000 // os.sysconf('SC_CLK_TCK')} ms ticks)"
    )
    print(f"{'thread':28}" + "".join(f"{kind:>13}" for kind in KINDS))
    for group in results[KINDS[0]]["threads"][0]:
        cells = [statistics.median(r[group] for r in results[kind]["threads"]) / 1000 for kind in KINDS]
        print(f"{group:28}" + "".join(f"{c:13.0f}" for c in cells))
    figures = []
    for kind in KINDS:
        row = medians[kind]
        work = row["the handler's work"] + row["KafkaApis dispatch"]
        whole = row["total, with the wrappers"]
        figures.append(
            figure(
                f"{kind}: the broker's CPU per request outside KafkaApis (network, queues, codec, loops), share",
                (whole - work) / whole,
                "%",
                detail=f"{whole - work:,.0f} of {whole:,.0f} µs with the wrappers ({row['total, without them']:,.0f} µs without)",
            )
        )
    write(args.json, "bench_request_hops", figures)


if __name__ == "__main__":
    main()
