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
import importlib
import logging
import os
import resource
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_broker import TOPIC, produce
from bench_request_cost import FILL, KINDS, PORT, requests, round_trip
from bench_security import SECURED_SETTINGS
from headline import add_argument, figure, write

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import RequestHeader, encode_request
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
    (
        "the authorizer",
        [("kafka_lite.security.auth.simple_acl_authorizer", "SimpleAclAuthorizer", "authorize")],
    ),
    ("response encode", [("kafka_lite.server.kafka_apis", "KafkaApis", "_send_response")]),
    ("the send", [("kafka_lite.network.kafka_channel", "KafkaChannel", "write")]),
    (
        "mute, unmute and metrics",
        [("kafka_lite.network.selector", "Selector", name) for name in ("mute", "unmute")]
        + [("kafka_lite.network.socket_server", "Processor", "_record")],
    ),
]
MODES = ("plain", "secured")
USER, PASSWORD = "bench", "bench-secret"
# The secured broker: bench_security's (SASL/PLAIN on the one listener, the brokers' own traffic on it,
# SimpleAclAuthorizer with admin as the super user), on this benchmark's port.
SECURED = {**SECURED_SETTINGS, "listeners": f"SASL_PLAINTEXT://127.0.0.1:{PORT}"}
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


def login(sock: socket.socket, buf: bytearray) -> None:
    """SASL/PLAIN as ``bench`` on a SASL_PLAINTEXT listener: SaslHandshake v1, then the PLAIN message
    in a SaslAuthenticate v0 (KIP-152)."""
    handshake = encode_request(RequestHeader(ApiKeys.SASL_HANDSHAKE, 1, 0, "bench"), {"mechanism": "PLAIN"})
    token = b"\0" + USER.encode() + b"\0" + PASSWORD.encode()
    authenticate = encode_request(
        RequestHeader(ApiKeys.SASL_AUTHENTICATE, 0, 1, "bench"), {"sasl_auth_bytes": token}
    )
    for request in (handshake, authenticate):
        size = round_trip(sock, request, buf)
        # Both answers start with the correlation id and an error code; 0 is success.
        (error,) = struct.unpack_from(">h", buf, 4)
        if error:
            raise RuntimeError(f"the benchmark's login failed with error code {error} ({size} bytes)")


def client(kind: str, n: int, secured: bool, idle_partitions: int) -> None:
    """Log in (secured), warm up, say "ready", wait for a line on stdin, send ``n`` requests of
    ``kind`` one at a time, say "done"; again for every further line, until stdin closes."""
    payloads = requests(kind, n, idle_partitions)
    buf = bytearray(1 << 20)
    with socket.create_connection(("127.0.0.1", PORT)) as sock:
        if secured:
            login(sock, buf)
        for payload in payloads[:200]:
            round_trip(sock, payload, buf)
        print("ready", flush=True)
        for _ in sys.stdin:
            for payload in payloads:
                round_trip(sock, payload, buf)
            print("done", flush=True)


# -- one broker, every kind of request ---------------------------------------------------------------------


def measure(mode: str, requests_per_round: int, rounds: int, idle_partitions: int) -> dict:
    """Each kind's rounds against a broker set up as ``mode`` says: its CPU per request unwrapped,
    by thread, and with the hops wrapped."""
    from kafka_lite.cli.broker import build_server
    from kafka_lite.cli.main import main as cli
    from kafka_lite.server.kafka_config import KafkaConfig

    secured = mode == "secured"
    clock = HopClock()
    results = {kind: {"bare": [], "threads": [], "hops": [], "wrapped": []} for kind in KINDS}
    with tempfile.TemporaryDirectory(prefix="kafka-lite-bench-") as d:
        zk = EmbeddedZooKeeper(Path(d) / "zookeeper")
        zk.start()
        settings = {
            "broker.id": "0",
            "listeners": f"PLAINTEXT://127.0.0.1:{PORT}",
            "log.dirs": str(Path(d) / "data"),
            "zookeeper.connect": zk.connect_string,
            "fetch.sendfile.enable": "false",
            "num.network.threads": "1",
            "num.io.threads": "2",
            "num.partitions": str(max(4, 2 + idle_partitions)),
            **(SECURED if secured else {}),
        }
        config_file = Path(d) / "server.properties"
        config_file.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        server = build_server(KafkaConfig.from_file(str(config_file), {}))
        server.startup()
        gc.freeze()  # as ``broker start`` does once the broker is up
        try:
            fill_settings = {"batch.size": 4096}
            if secured:  # the super user fills the partition; bench may write and read the topic
                fill_settings.update({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "PLAIN",
                                      "sasl.username": "admin", "sasl.password": "admin-secret"})  # fmt: skip
                for operation in ("Write", "Read"):
                    status = cli(["acls", "--authorizer-properties", f"zookeeper.connect={zk.connect_string}",
                                  "--add", "--allow-principal", f"User:{USER}", "--operation", operation,
                                  "--topic", TOPIC])  # fmt: skip
                    if status:
                        raise SystemExit(f"could not add the benchmark's ACL (exit {status})")
            _, producer = produce(f"127.0.0.1:{PORT}", FILL, os.urandom(100), fill_settings, partition=0)
            producer.flush(30)
            del producer  # librdkafka's handle goes before the broker does
            for kind in KINDS:
                command = [
                    sys.executable, __file__, "--client", kind, "--requests", str(requests_per_round),
                    "--idle-partitions", str(idle_partitions),
                ]  # fmt: skip
                proc = subprocess.Popen(
                    [*command, *(["--secured"] if secured else [])],
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

                for _ in range(rounds):
                    spent, threads = one_round()
                    results[kind]["bare"].append(spent / requests_per_round)
                    results[kind]["threads"].append({t: ns / requests_per_round for t, ns in threads.items()})
                    for hop, methods in HOPS:
                        for module, owner, name in methods:
                            clock.wrap(hop, getattr(importlib.import_module(module), owner), name)
                    clock.wrap_item("the handler's work", server.apis._handlers, API_KEYS[kind])
                    clock.reset()
                    spent, _ = one_round()
                    clock.unwrap()
                    results[kind]["wrapped"].append(spent / requests_per_round)
                    results[kind]["hops"].append({h: ns / requests_per_round for h, ns in clock.ns.items()})
                proc.stdin.close()
                proc.wait()
        finally:
            server.shutdown()
            zk.stop()
    return results


def report(mode: str, results: dict, requests_per_round: int, rounds: int) -> dict:
    """Print one mode's tables; its medians, hop by hop."""
    hops = [hop for hop, _ in HOPS]
    print(
        f"\n{mode}: the broker's CPU per request by hop, µs, median of {rounds} rounds of {requests_per_round:,}"
    )
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
    tick_ms = 1000 // os.sysconf("SC_CLK_TCK")
    print(
        f"\n{mode}: the same, without the wrappers, by thread, µs (per-thread counts in {tick_ms} ms ticks)"
    )
    print(f"{'thread':28}" + "".join(f"{kind:>13}" for kind in KINDS))
    for group in results[KINDS[0]]["threads"][0]:
        cells = [statistics.median(r[group] for r in results[kind]["threads"]) / 1000 for kind in KINDS]
        print(f"{group:28}" + "".join(f"{c:13.0f}" for c in cells))
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000, help="requests of each kind per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--idle-partitions", type=int, default=0,
        help="partitions each Fetch also names, which nothing writes to (a follower's fetch names many)",
    )  # fmt: skip
    parser.add_argument("--client", help=argparse.SUPPRESS)  # the client's process: the kind it sends
    parser.add_argument("--secured", action="store_true", help=argparse.SUPPRESS)  # the client logs in
    add_argument(parser)
    args = parser.parse_args()
    if args.client:
        client(args.client, args.requests, args.secured, args.idle_partitions)
        return
    for name in ("requests", "rounds"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name} must be positive, not {getattr(args, name)}")
    if args.idle_partitions < 0:
        parser.error(f"--idle-partitions must not be negative, not {args.idle_partitions}")
    logging.basicConfig(level=logging.WARNING)
    medians = {}
    for mode in MODES:
        medians[mode] = report(
            mode, measure(mode, args.requests, args.rounds, args.idle_partitions), args.requests, args.rounds
        )
    figures = []
    for kind in KINDS:
        row = medians["plain"][kind]
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
    for kind in ("Produce", "Fetch"):
        plain, secured = (medians[m][kind]["total, without them"] for m in MODES)
        figures.append(
            figure(
                f"{kind}: the broker's CPU per request on SASL/PLAIN with ACLs, over PLAINTEXT's",
                secured / plain,
                "x",
                detail=f"{secured:,.0f} against {plain:,.0f} µs; the authorizer "
                f"{medians['secured'][kind]['the authorizer']:,.0f} µs",
            )
        )
    write(args.json, "bench_request_hops", figures)


if __name__ == "__main__":
    main()
