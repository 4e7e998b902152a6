"""The fault proxy: TCP proxies on loopback in front of a cluster's listeners, able to cut the network.

No Kafka twin: a loopback stand-in for Jepsen's network partitions (``jepsen.net``, iptables rules
on real machines), used by the nemesis (``nemesis.py``). Beyond the book.

Each proxy port forwards to one listener: a broker's, a KRaft voter's CONTROLLER listener, or
ZooKeeper's client port. The proxy knows who is at each end of a connection. The target is the
listener's node. The source of a connection to ZooKeeper is the node whose proxy port it arrived
at (each node has its own); the source of a connection to a broker or a controller is named by the
``client_id`` in the header of its first request (a length-prefixed frame: api_key, api_version,
correlation_id, client_id): kafka_lite's brokers, fetchers, controller channels and Raft clients
name their node there (``NODE_CLIENT_IDS``); anyone else is a client (``CLIENTS``).

A cut is a set of pairs that cannot talk. ``cut`` resets every open connection between such a pair
and, from then on, resets every new one at its first request; ``cut(())`` heals.

A hold delays requests in the network: ``hold(matches)`` keeps back every request to a broker or
a controller that ``matches`` picks (by sender, listener, api key and the request's bytes), and
every later request on its connection (TCP keeps a connection's bytes in order), until its
``release``. A request already held reaches the listener even if its sender has gone meanwhile, as
bytes already on the wire do; the listener's answer then goes nowhere. A delayed Produce that
lands after the transaction it belongs to has ended is the kind of thing this makes happen.
``tap(matches)`` delays nothing: it records the requests it picks and their answers, with the time
each crossed, as a packet capture would (the timelines of chapter 10 are drawn from one).

Differs: Jepsen's partitions drop packets, so a connection across the cut hangs until a timeout;
here it is reset at once, and a node's connections to itself are never cut.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import struct
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

CLIENTS = "clients"  # everyone who is not a node: the workload's producers and consumers, tools

# Who opens a connection to a broker's or a controller's listener, by the ``client_id`` in the
# header of its first request: each of kafka_lite's node-to-node clients names its node there. A
# client_id that matches none of these is a client's.
NODE_CLIENT_IDS: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"replica-fetcher-(\d+)-\d+"), "a follower's replica fetcher (ReplicaFetcherThread)"),
    (re.compile(r"controller-(\d+)"), "the ZooKeeper controller's channel to a broker (ControllerChannelManager)"),
    (re.compile(r"broker-(\d+)-controlled-shutdown"), "a broker asking the controller for a controlled shutdown"),
    (re.compile(r"broker-(\d+)-txn-marker-sender"), "a transaction coordinator's marker sender"),
    (re.compile(r"broker-(\d+)-add-partitions-to-txn-sender"), "a partition leader asking a coordinator to verify (KIP-890)"),
    (re.compile(r"raft-(\d+)"), "a KRaft node's Raft client: votes and fetches of the metadata log"),
    (re.compile(r"(\d+)"), "a KRaft broker's channels to the active controller: heartbeat, alter-partition, forwarding"),
)  # fmt: skip

FRAME_HEADER = struct.Struct(">hhih")  # api_key, api_version, correlation_id, client_id's length
PROXY_BUFFER = 65536
LATE_ANSWER_S = 30.0  # how long a connection whose sender has gone waits for the answers to its held requests


def node_of_client_id(client_id: str | None) -> int | str:
    """The node a connection's first request comes from (``NODE_CLIENT_IDS``), else ``CLIENTS``."""
    for pattern, _ in NODE_CLIENT_IDS:
        match = pattern.fullmatch(client_id or "")
        if match:
            return int(match.group(1))
    return CLIENTS


def client_id_of(frame: bytes) -> str | None:
    """The ``client_id`` of a request frame (without its length prefix); None if it has none."""
    if len(frame) < FRAME_HEADER.size:
        raise ValueError(f"a request header is at least {FRAME_HEADER.size} bytes, got {len(frame)}")
    _, _, _, length = FRAME_HEADER.unpack_from(frame)
    if length < 0:
        return None
    end = FRAME_HEADER.size + length
    if end > len(frame):
        raise ValueError(f"a client_id of {length} bytes does not fit a {len(frame)}-byte request")
    return frame[FRAME_HEADER.size : end].decode("utf-8", errors="replace")


class Hold:
    """Requests held back in the network (see the module's docstring), until ``release``.

    ``matches(source, target, api_key, frame)``: the sender and the listener's node (as in a cut),
    the request's api key, and the request itself (a frame without its length prefix, header and
    body). ``held`` is set once it has held a request."""

    def __init__(self, proxy: FaultProxy, matches) -> None:
        self._proxy = proxy
        self.matches = matches
        self.held = threading.Event()
        self.released = False
        self._release = asyncio.Event()  # of the proxy's loop, made there
        self._waiting = 0  # requests held and not yet forwarded
        # each request it held: its connection, and its number among that connection's requests
        self._forwarded: list[tuple[_Link, int]] = []
        # (request, answer) of each request it held, once answered (frames without their length)
        self.exchanges: list[tuple[bytes, bytes]] = []

    @property
    def answered(self) -> bool:
        """Released, and every request it held has been answered by its listener (a connection's
        answers come in its requests' order): what a late request did is then there to see."""
        return self.released and self._waiting == 0 and all(link.answered >= n for link, n in self._forwarded)

    async def wait(self) -> None:
        self.held.set()
        await self._release.wait()

    def release(self) -> None:
        """Let the held requests go on, in their order; nothing is held by this hold any more."""

        async def release():
            self.released = True
            self._release.set()

        self._proxy._run(release())


@dataclass
class Exchange:
    """One request a tap saw and its answer: who sent it and to whom, the frames (without their
    length prefix), and when each crossed the proxy (``time.monotonic_ns``): the request coming
    in, going on to the listener (later, if a hold kept it), and the answer going back."""

    source: int | str
    target: int | str
    request: bytes
    received_ns: int
    forwarded_ns: int = 0
    answer: bytes | None = None
    answered_ns: int = 0


class Tap:
    """A record of the requests ``matches`` picks (as a hold's ``matches``) and their answers, in the
    order they came in, until ``close``. It delays nothing."""

    def __init__(self, proxy: FaultProxy, matches) -> None:
        self._proxy = proxy
        self.matches = matches
        self.exchanges: list[Exchange] = []
        self.closed = False

    def close(self) -> None:
        async def close():
            self.closed = True

        self._proxy._run(close())


class _Link:
    """One proxied connection: who is at each end, both sockets' writers (to reset them), and, for
    a broker's or a controller's listener, how many of its requests went up and answers came back."""

    def __init__(self, source: int | str, target: int | str, *writers: asyncio.StreamWriter) -> None:
        self.source = source
        self.target = target
        self.writers = writers
        self.held = False  # a request of this connection was held
        self.forwarded = 0
        self.watched: dict[int, tuple[Hold, bytes]] = {}  # a held request's number: its hold, the request
        self.tapped: dict[int, list[Exchange]] = {}  # a tapped request's number: its exchanges
        self.answered = 0
        self.answer = asyncio.Event()  # set at each answer

    def reset(self) -> None:
        for writer in self.writers:
            writer.transport.abort()  # a reset, not a goodbye: as a cut cable, not a closed socket


class FaultProxy:
    """TCP proxies on loopback, each in front of one listener, on one event loop in its own thread.

    ``listen(port, upstream, target, source)``: connections to ``port`` go to ``upstream``, the
    listener of ``target``; they come from ``source``, or when it is None from whoever the first
    request's client_id names. ``cut(pairs)`` makes the given pairs unable to talk; ``cut(())``
    heals."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fault-proxy", daemon=True)
        self._thread.start()
        self._servers: dict[int, asyncio.AbstractServer] = {}
        self._upstreams: dict[int, int] = {}
        self._links: set[_Link] = set()
        self._tasks: set[asyncio.Task] = set()  # every connection's, to end them all on close
        self._cut: frozenset[frozenset] = frozenset()
        self._holds: list[Hold] = []
        self._taps: list[Tap] = []

    def _run(self, coroutine, timeout_s: float = 10.0):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout_s)

    @property
    def ports(self) -> list[int]:
        return sorted(self._servers)

    def listen(self, port: int, upstream: int, target: int | str, source: int | str | None = None) -> None:
        async def serve(reader, writer):
            task = asyncio.current_task()
            self._tasks.add(task)
            try:
                await self._serve(reader, writer, port, target, source)
            finally:
                self._tasks.discard(task)

        async def start():
            self._servers[port] = await asyncio.start_server(serve, "127.0.0.1", port, reuse_address=True)

        self._upstreams[port] = upstream
        self._run(start())

    def allows(self, source: int | str, target: int | str) -> bool:
        return frozenset((source, target)) not in self._cut

    async def _serve(self, reader, writer, port: int, target: int | str, source: int | str | None) -> None:
        link = None
        try:
            first = b""
            if source is None:  # a broker's or a controller's listener: the first request names its sender
                size = await reader.readexactly(4)
                frame = await reader.readexactly(int.from_bytes(size, "big", signed=True))
                source, first = node_of_client_id(client_id_of(frame)), size + frame
            if not self.allows(source, target):
                return
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self._upstreams[port])
            link = _Link(source, target, writer, up_writer)
            self._links.add(link)
            if not self.allows(source, target):  # cut while the upstream connection was being made
                return
            if first:  # Kafka's protocol: requests one frame at a time, so that they can be held
                requests = asyncio.ensure_future(self._pump_requests(first, reader, up_writer, link))
                answers = asyncio.ensure_future(_pump_answers(up_reader, writer, link))
            else:
                requests = asyncio.ensure_future(_pump(reader, up_writer))
                answers = asyncio.ensure_future(_pump(up_reader, writer))
            # Either side closing ends the connection: Kafka's and ZooKeeper's protocols never half-close.
            done, pending = await asyncio.wait([requests, answers], return_when=asyncio.FIRST_COMPLETED)
            if requests in done and link.held:
                # The sender has gone, but what it sent was on the wire: the listener gets it, and
                # answers it before the connection ends.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(_all_answered(link), LATE_ANSWER_S)
            for pump in pending:
                pump.cancel()
        except (OSError, asyncio.IncompleteReadError, ValueError):
            pass  # a peer gone, a connection refused upstream, a frame too short: the connection ends
        finally:
            if link is not None:
                self._links.discard(link)
                link.reset()
            writer.transport.abort()

    async def _pump_requests(self, first: bytes, reader, writer, link: _Link) -> None:
        """The sender's requests, one frame at a time, each waiting out any hold that matches it
        (and so each after it: the connection's order is kept)."""
        frame = first[4:]
        while True:
            received_ns = time.monotonic_ns()
            taps = [t for t in self._taps if not t.closed and t.matches(link.source, link.target, _api_key(frame), frame)]  # fmt: skip
            holds = [h for h in list(self._holds) if not h.released and h.matches(link.source, link.target, _api_key(frame), frame)]  # fmt: skip
            link.held = link.held or bool(holds)
            for hold in holds:
                hold._waiting += 1
                await hold.wait()
            link.forwarded += 1  # counted before it goes: its answer cannot come first
            for hold in holds:
                hold._forwarded.append((link, link.forwarded))
                link.watched[link.forwarded] = (hold, frame)
                hold._waiting -= 1
            if taps:
                seen = [
                    Exchange(link.source, link.target, frame, received_ns, time.monotonic_ns()) for _ in taps
                ]
                for tap, exchange in zip(taps, seen, strict=True):
                    tap.exchanges.append(exchange)
                link.tapped[link.forwarded] = seen
            writer.write(len(frame).to_bytes(4, "big", signed=True) + frame)
            await writer.drain()
            try:
                size = await reader.readexactly(4)
                frame = await reader.readexactly(int.from_bytes(size, "big", signed=True))
            except (asyncio.IncompleteReadError, OSError):
                return

    def hold(self, matches) -> Hold:
        """Hold back the requests ``matches`` picks (see ``Hold``), from now until the hold's
        ``release``."""
        if self.closed:
            raise RuntimeError("the fault proxy is closed")

        async def add():
            hold = Hold(self, matches)
            self._holds = [h for h in self._holds if not h.released] + [hold]
            return hold

        return self._run(add())

    def tap(self, matches) -> Tap:
        """Record the requests ``matches`` picks, and their answers (see ``Tap``), from now on."""
        if self.closed:
            raise RuntimeError("the fault proxy is closed")

        async def add():
            tap = Tap(self, matches)
            self._taps = [t for t in self._taps if not t.closed] + [tap]
            return tap

        return self._run(add())

    @property
    def closed(self) -> bool:
        return not self._thread.is_alive()

    def cut(self, pairs: Iterable[frozenset]) -> None:
        """From now on the ``pairs`` (two-member frozensets) cannot talk; returns once every open
        connection between them is reset. An empty ``pairs`` heals every cut."""
        if self.closed:
            raise RuntimeError("the fault proxy is closed")

        async def apply():
            self._cut = frozenset(pairs)
            for link in list(self._links):
                if not self.allows(link.source, link.target):
                    self._links.discard(link)
                    link.reset()

        self._run(apply())

    def links(self) -> list[tuple[int | str, int | str]]:
        """The open connections, as (source, target) pairs."""

        async def read():
            return [(link.source, link.target) for link in self._links]

        return self._run(read())

    def close(self) -> None:
        """Stop listening, reset every connection and end the loop's thread. Idempotent."""
        if self.closed:
            return

        async def shut():
            for server in self._servers.values():
                server.close()
            for link in list(self._links):
                link.reset()
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            for server in self._servers.values():
                await server.wait_closed()
            # An aborted transport closes its socket in a callback of the loop's next rounds: let
            # them run before the loop stops, or the sockets would outlive the proxy.
            for _ in range(3):
                await asyncio.sleep(0)

        with contextlib.suppress(TimeoutError, RuntimeError):
            self._run(shut())
        self._servers.clear()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


def _api_key(frame: bytes) -> int:
    return int.from_bytes(frame[:2], "big", signed=True)


async def _pump_answers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, link: _Link) -> None:
    """The listener's answers, one frame at a time, counted; those for a sender that has gone are
    dropped (the listener's connection stays until it has answered what was held)."""
    while True:
        try:
            size = await reader.readexactly(4)
            frame = await reader.readexactly(int.from_bytes(size, "big", signed=True))
        except (asyncio.IncompleteReadError, OSError):
            return
        watched = link.watched.pop(link.answered + 1, None)
        if watched is not None:  # recorded before it counts as answered
            hold, request = watched
            hold.exchanges.append((request, frame))
        for exchange in link.tapped.pop(link.answered + 1, ()):
            exchange.answer, exchange.answered_ns = frame, time.monotonic_ns()
        link.answered += 1
        link.answer.set()
        if not writer.transport.is_closing():
            writer.write(size + frame)
            with contextlib.suppress(OSError):
                await writer.drain()


async def _all_answered(link: _Link) -> None:
    """Until the listener has answered every request sent up (a Produce with acks=0, which has no
    answer, waits out ``LATE_ANSWER_S``)."""
    while link.answered < link.forwarded:
        link.answer.clear()
        await link.answer.wait()


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while data := await reader.read(PROXY_BUFFER):
            writer.write(data)
            await writer.drain()
