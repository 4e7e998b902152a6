"""The workload of a Jepsen-style run: the generator that plans each process's operations, the
clients that carry them out against the cluster, and the final phase that reads everything back.

No Kafka twin: a port of Jepsen's Kafka workload (``jepsen/src/jepsen/tests/kafka.clj``: the
generator and ``final-polls``; the keys and values of Elle's list-append generator, ``elle.txn``'s
``wr-txns``) and of its client (``jepsen.redpanda.workload.queue``: the micro-operations, the
transaction and the errors). Beyond the book: the book shows how Kafka keeps its promises; this
drives a real cluster through real clients and records what they were told.

The generator (``Generator``), seeded: Elle's keys (``key_count`` active at a time, a key picked
with probability growing as 2^i with its slot i; each key retired after a Zipf-distributed number
of writes and replaced by a new one), Elle's transactions (1 to ``max_txn_length`` micro-operations,
each a poll or a send of the key's next value, so values are unique per key), rewritten as Kafka
operations (``send`` when all are sends, ``poll`` when all are polls, else ``txn``). Now and then an
``assign`` or ``subscribe`` of the keys the next operation would touch (``sub_p``), with a third of
them also taking the keys sent to but not read up to their last offset (``poll-unseen``); and a
``crash`` of a client now and then. Operations are spaced at random, ``rate`` a second on average.

The clients (``clients.py``: kafka_lite's, or librdkafka's, so that a client's bug and a broker's
can be told apart) are an idempotent producer (acks=all) and a consumer without auto-commit; with
``txn`` a transactional producer, whose transaction also commits the offsets it read, and a
read_committed consumer. ``execute`` runs one operation: each micro-operation in turn, then under
``txn`` the commit (or the abort when anything failed). An error maps to ``fail`` (the operation
certainly did not happen) or ``info`` (it may have), as Jepsen's client maps Java's exceptions; a
client that completes ``info`` (or is broken) is thrown away and its thread's next operation is a
new process's, with a new client (Jepsen's interpreter does the same).

Key k is partition k of the workload's topic (``jepsen`` unless another is named; each run needs a
topic of its own, as every key's log must start empty). Differs: Jepsen's keys are unbounded and each new one a
new topic-partition made on demand; here the topic is created up front with ``partitions``
partitions, so once every partition has been a key the keys stop rotating and the active keys take
the writes (their values stay unique: a key's counter only grows).
"""

from __future__ import annotations

import bisect
import math
import random
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kafka_lite.common.errors import InvalidTopicException
from kafka_lite.common.time import Time
from kafka_lite.common.topic import is_internal, validate_topic_name
from kafka_lite.jepsen.history import HistoryWriter, Op

TOPIC = "jepsen"
CONSUMER_GROUP = "jepsen-group"  # every consumer of a run is in one group, as Jepsen's are
POLL_MS = 100  # one poll micro-operation waits this long for records
FINAL_POLL_MS = 1000  # a poll of the final phase
FINAL_ROUND_S = 10.0  # a final-phase round: crash, assign and seek, then polls for this long
SEND_TIMEOUT_S = 10.0  # a send unanswered this long is an info: it may yet be written
CLIENTS = ("kafka_lite", "confluent")
SUB_VIA = ("assign", "subscribe")


@dataclass(frozen=True)
class WorkloadConfig:
    """The generator's and the clients' settings; the defaults are Jepsen's where it has one."""

    txn: bool = False  # transactions of up to 4 micro-operations, read_committed consumers
    key_count: int = 10  # keys active at a time (Elle's default)
    max_writes_per_key: int = 1024  # a key is retired after 1 + Zipf(this) writes (Jepsen's Kafka tests)
    partitions: int = 48  # the topic's partitions: every key that can ever be
    sub_via: tuple[str, ...] = SUB_VIA  # how a consumer takes its keys
    sub_p: float = 1 / 64  # the chance that the next operation is an assign or subscribe
    unseen_p: float = 1 / 3  # the chance that one also takes the keys not yet read to their end
    abort_p: float = 1 / 32  # under txn, the chance of an intentional abort at each step
    crash_clients: bool = True
    crash_interval_s: float = 30.0  # about how long a client lives before it is crashed
    rate: float = 100.0  # operations a second, over all processes
    client: str = "kafka_lite"
    topic: str = TOPIC  # key k is this topic's partition k
    # kafka_lite's producers' ``transaction.version``: 2 bumps the epoch at every transaction's end
    # (KIP-890 part 2). librdkafka takes its own from the brokers.
    transaction_version: int = 0

    @property
    def consumer_group(self) -> str:
        """The run's group: one per topic, so that a run's consumers never wait in a rebalance for
        those a run before it left behind in the group."""
        return CONSUMER_GROUP if self.topic == TOPIC else f"{self.topic}-group"

    def __post_init__(self) -> None:
        if self.key_count < 1 or self.max_writes_per_key < 1:
            raise ValueError(f"key_count and max_writes_per_key must be at least 1, not "
                             f"{self.key_count} and {self.max_writes_per_key}")  # fmt: skip
        if self.partitions < self.key_count:
            raise ValueError(f"partitions ({self.partitions}) must be at least key_count ({self.key_count})")
        if not self.sub_via or set(self.sub_via) - set(SUB_VIA):
            raise ValueError(f"sub_via must be some of {SUB_VIA}, not {self.sub_via!r}")
        for name in ("sub_p", "unseen_p", "abort_p"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} is a probability, from 0 to 1, not {getattr(self, name)!r}")
        if self.rate <= 0 or self.crash_interval_s <= 0:
            raise ValueError(f"rate and crash_interval_s must be positive, not {self.rate} and "
                             f"{self.crash_interval_s}")  # fmt: skip
        if self.client not in CLIENTS:
            raise ValueError(f"client must be one of {', '.join(CLIENTS)}, not {self.client!r}")
        check_topic(self.topic)

    @property
    def max_txn_length(self) -> int:
        return 4 if self.txn else 1  # Jepsen's kafka workload fixes these


def check_topic(topic: str) -> None:
    """Raise ``ValueError`` naming what is wrong with ``topic`` as a workload's topic: a name Kafka
    refuses, or one of the brokers' own topics."""
    try:
        validate_topic_name(topic)
    except InvalidTopicException as e:
        raise ValueError(f"the workload's topic {topic!r}: {e}") from None
    if is_internal(topic):
        raise ValueError(f"the workload's topic {topic!r} is one of the brokers' own; name another")


# -- the generator -----------------------------------------------------------------------------------


def zipf(rng: random.Random, n: int, skew: float = 1.0001) -> int:
    """A rank in [0, n), rank i drawn with weight 1/(i+1)^skew (``jepsen.random/zipf``): most draws
    small, a few large; so most keys get a few writes and some get hundreds."""
    weights = _zipf_cumulative(n, skew)
    return min(bisect.bisect_right(weights, rng.random() * weights[-1]), n - 1)


_ZIPF_CACHE: dict[tuple[int, float], list[float]] = {}


def _zipf_cumulative(n: int, skew: float) -> list[float]:
    if (n, skew) not in _ZIPF_CACHE:
        total, cumulative = 0.0, []
        for i in range(n):
            total += 1 / (i + 1) ** skew
            cumulative.append(total)
        _ZIPF_CACHE[(n, skew)] = cumulative
    return _ZIPF_CACHE[(n, skew)]


class KeyRotation:
    """Elle's ``wr-txns``: the active keys, how many writes each may still take, each key's next
    value; ``txn`` draws one transaction of Elle's micro-operations, ``("r", k)`` or ``("w", k, v)``."""

    def __init__(self, rng: random.Random, config: WorkloadConfig) -> None:
        self.rng = rng
        self.config = config
        self.active_keys = list(range(config.key_count))
        self.max_writes = [self._writes_allowed() for _ in self.active_keys]
        self.next_value: dict[int, int] = {}
        self.next_key = config.key_count
        # Elle's exponential key distribution, base 2: slot i is 2^i times as likely as slot 0.
        self.scale = 2 * (2**config.key_count - 1)

    def _writes_allowed(self) -> int:
        return 1 + zipf(self.rng, self.config.max_writes_per_key)

    def _slot(self) -> int:
        # Elle's rand-key-i: floor(log2(u + 2)) - 1 for u uniform in [0, scale) lands in [0, key_count).
        i = math.floor(math.log2(self.rng.random() * self.scale + 2)) - 1
        return min(max(i, 0), self.config.key_count - 1)

    def txn(self) -> list[tuple]:
        length = self.rng.randint(1, self.config.max_txn_length)
        mops: list[tuple] = []
        while len(mops) < length:
            f = self.rng.choice(("r", "w"))
            i = self._slot()
            k = self.active_keys[i]
            if f == "r":
                mops.append(("r", k))
                continue
            v = self.next_value.get(k, 1)
            if v > self.max_writes[i] and self.next_key < self.config.partitions:
                # This key has had its writes: a new key takes its slot (Elle's fresh-key).
                self.active_keys[i] = self.next_key
                self.max_writes[i] = self._writes_allowed()
                self.next_key += 1
                continue
            self.next_value[k] = v + 1
            mops.append(("w", k, v))
        return mops


def kafka_op(mops: list[tuple]) -> dict:
    """Elle's transaction as Jepsen's Kafka operation (``txn-generator``, ``tag-rw``): reads become
    ``["poll"]``, writes ``["send", k, v]``; ``keys`` are the keys it touches, for a subscribe."""
    value = [["poll"] if m[0] == "r" else ["send", m[1], m[2]] for m in mops]
    kinds = {m[0] for m in value}
    f = "poll" if kinds == {"poll"} else "send" if kinds == {"send"} else "txn"
    return {"f": f, "value": value, "keys": sorted({m[1] for m in mops})}


def max_offsets(op: Op, sends: bool = True, polls: bool = True) -> dict[int, int]:
    """The highest offset of each key that an ok or info op sent or polled
    (``op->max-send-offsets``, ``op->max-poll-offsets``)."""
    offsets: dict[int, int] = {}
    if op.type not in ("ok", "info"):
        return offsets
    for mop in op.mops():
        if mop[0] == "send" and sends and isinstance(mop[2], (tuple, list)) and mop[2][0] is not None:
            offsets[mop[1]] = max(offsets.get(mop[1], -1), mop[2][0])
        elif mop[0] == "poll" and polls and len(mop) > 1:
            for k, pairs in mop[1].items():
                seen = [o for o, _ in pairs if o is not None]
                if seen:
                    offsets[k] = max(offsets.get(k, -1), *seen)
    return offsets


def _merge_max(into: dict[int, int], more: dict[int, int]) -> None:
    for k, offset in more.items():
        into[k] = max(into.get(k, -1), offset)


class Generator:
    """What every process does next, and when: Jepsen's generator for the Kafka workload, one for
    the whole run (its workers share it under a lock), seeded so that a seed plans the same run.

    ``op(now_ns)`` gives the next operation and the time it is due; ``update(completion)`` tells it
    what an ok operation saw, for ``poll-unseen`` and for the final phase's targets."""

    def __init__(
        self, config: WorkloadConfig, rng: random.Random, concurrency: int, start_ns: int = 0
    ) -> None:
        self.config = config
        self.rng = rng
        self.keys = KeyRotation(rng, config)
        self.concurrency = concurrency
        self._lock = threading.Lock()
        self._pending: dict | None = None  # an op held back while a subscribe goes first
        self.sent: dict[int, int] = {}  # poll-unseen: highest offset sent, per key not yet caught up
        self.polled: dict[int, int] = {}
        self.offsets: dict[int, int] = {}  # track-key-offsets: the highest offset seen, per key
        # Jepsen's stagger: each op due a random 0 to 2 mean intervals after the one before.
        self.next_op_ns = start_ns + self._gap_ns(1 / config.rate)
        self.next_crash_ns = start_ns + self._gap_ns(config.crash_interval_s / concurrency)

    def _gap_ns(self, mean_s: float) -> int:
        return int(self.rng.uniform(0, 2 * mean_s) * 1e9)

    def op(self) -> tuple[dict, int]:
        """The next operation (``f``, ``value`` and any fields) and the time it is due, in ns."""
        with self._lock:
            if self.config.crash_clients and self.next_crash_ns <= self.next_op_ns:
                due = self.next_crash_ns
                self.next_crash_ns += self._gap_ns(self.config.crash_interval_s / self.concurrency)
                return {"f": "crash", "value": None}, due
            due = self.next_op_ns
            self.next_op_ns += self._gap_ns(1 / self.config.rate)
            return self._main_op(), due

    def _main_op(self) -> dict:
        op = self._pending or kafka_op(self.keys.txn())
        self._pending = None
        if self.rng.random() < self.config.sub_p:
            # interleave-subscribes: a subscribe or assign of the op's keys first; the op comes next.
            self._pending = op
            op = {"f": self.rng.choice(self.config.sub_via), "value": list(op["keys"])}
            if self.sent and self.rng.random() < self.config.unseen_p:
                # poll-unseen: also the keys sent to beyond what anyone has read
                op["value"] = sorted(set(op["value"]) | set(self.sent))
            return op
        return {"f": op["f"], "value": op["value"]}

    def update(self, completion: Op) -> None:
        if not completion.is_ok:
            return
        with self._lock:
            _merge_max(self.offsets, max_offsets(completion))
            _merge_max(self.sent, max_offsets(completion, polls=False))
            _merge_max(self.polled, max_offsets(completion, sends=False))
            for k in list(self.sent):
                if self.polled.get(k, -1) >= self.sent[k]:
                    del self.sent[k], self.polled[k]

    def keys_used(self) -> list[int]:
        """Every key the run may have written: those handed out so far."""
        return list(range(self.keys.next_key))


class FinalTargets:
    """``final-polls``' targets: per key, the highest offset seen in the run; a key is done once an
    ok poll of the final phase reaches it."""

    def __init__(self, offsets: dict[int, int]) -> None:
        self._lock = threading.Lock()
        self.remaining = dict(offsets)

    def update(self, completion: Op) -> None:
        if completion.is_ok and completion.f == "poll":
            with self._lock:
                for k, offset in max_offsets(completion).items():
                    if self.remaining.get(k, offset + 1) <= offset:
                        del self.remaining[k]

    def done(self) -> bool:
        with self._lock:
            return not self.remaining


# -- running one operation ---------------------------------------------------------------------------


class IntentionalAbort(Exception):
    """Jepsen's ``maybe-abort``: a transaction given up on purpose, to exercise the abort path."""


@dataclass
class Outcome:
    """How an operation ended: its type, its value as far as it got, and why."""

    type: str
    value: Any = None
    error: str | None = None
    end_process: bool = False  # the client is unusable: its thread goes on as a new process
    rebalance_log: list = field(default_factory=list)


@dataclass
class Failure:
    """What a client's exception means for the operation it broke (``with-errors``)."""

    type: str  # "fail": certainly not done; "info": perhaps done
    error: str
    end_process: bool = False


class _Aborted(Exception):
    """Jepsen's ``safe-abort!`` result: the transaction ended in an abort, or an abort that failed."""

    def __init__(self, definite: bool, abort_ok: bool, cause: BaseException, abort_error=None) -> None:
        super().__init__(repr(cause))
        self.definite, self.abort_ok, self.cause, self.abort_error = definite, abort_ok, cause, abort_error


def execute(client, op: dict, config: WorkloadConfig, rng: random.Random, poll_ms: int = POLL_MS) -> Outcome:
    """Carry out a send, poll or txn: each micro-operation in turn (the value filled in as it goes,
    so an op that breaks half-way keeps what it learned), within a transaction under ``txn``. On
    anything but ok, the consumer goes back to the first offsets this op read
    (``with-consumer-rollback``), so that the next poll sees them again."""
    value = [list(m) for m in op["value"]]
    client.rebalance_log.clear()
    try:
        outcome = _run_txn(client, op["f"], value, config, rng, poll_ms)
    except _Aborted as e:
        cause = client.classify(e.cause) if not isinstance(e.cause, IntentionalAbort) else None
        error = "intentional-abort" if cause is None else cause.error
        if e.abort_error is not None:
            error += f"; the abort failed: {client.classify(e.abort_error).error}"
        outcome = Outcome("fail" if e.definite else "info", error=error, end_process=not e.abort_ok)
    except Exception as e:
        failure = client.classify(e)
        outcome = Outcome(failure.type, error=failure.error, end_process=failure.end_process)
    outcome.value = _completed(value)
    outcome.rebalance_log = [{"type": t, "keys": keys} for t, keys in client.rebalance_log]
    if outcome.type != "ok":
        _rollback(client, outcome.value)
    return outcome


def _run_txn(
    client, f: str, value: list, config: WorkloadConfig, rng: random.Random, poll_ms: int
) -> Outcome:
    if not config.txn or client.reader:
        _run_mops(client, value, poll_ms)
        return _maybe_commit_consumer(client, f, config)
    # Jepsen's with-txn: errors before the commit abort the transaction, except those that end the
    # producer (fenced, out of order: no abort is possible); a commit that times out is left
    # unknown, since the coordinator may yet complete it.
    client.begin_transaction()
    try:
        _run_mops(client, value, poll_ms, abort_p=config.abort_p, rng=rng)
        client.send_offsets_to_transaction(_next_offsets(value))
    except Exception as e:
        if client.is_unabortable(e):
            raise
        _safe_abort(client, tried_commit=False, cause=e)
    try:
        client.commit_transaction()
    except Exception as e:
        if client.is_unabortable(e) or client.is_indefinite(e):
            raise
        _safe_abort(client, tried_commit=True, cause=e)
    return Outcome("ok")


def _run_mops(
    client, value: list, poll_ms: int, abort_p: float = 0.0, rng: random.Random | None = None
) -> None:
    for i, mop in enumerate(value):
        if abort_p and rng.random() < abort_p:
            raise IntentionalAbort()
        if mop[0] == "poll":
            value[i] = ["poll", client.poll(poll_ms)]
        else:
            value[i] = ["send", mop[1], [client.send(mop[1], mop[2]), mop[2]]]
    if abort_p and rng.random() < abort_p:  # a last chance to abort before the commit
        raise IntentionalAbort()


def _maybe_commit_consumer(client, f: str, config: WorkloadConfig) -> Outcome:
    """Outside transactions a subscribed consumer commits what it read; a commit that fails leaves
    the reads (they happened) and says so (Jepsen's ``:consumer-commit`` error)."""
    if f in ("poll", "txn") and client.subscribed:
        try:
            client.commit_sync()
        except Exception as e:
            return Outcome("ok", error=f"consumer-commit: {client.classify(e).error}")
    return Outcome("ok")


def _safe_abort(client, tried_commit: bool, cause: BaseException) -> None:
    """Abort after ``cause``; raise ``_Aborted`` saying whether the transaction surely did not
    happen: it did not if the abort worked, or if the commit was never tried."""
    try:
        client.abort_transaction()
    except Exception as abort_error:
        definite = not tried_commit or client.is_invalid_txn_state(cause)
        raise _Aborted(definite, False, cause, abort_error) from None
    raise _Aborted(True, True, cause)


def _next_offsets(value: list) -> dict[int, int]:
    """Per key, one past the highest offset this transaction polled: what the group commits."""
    offsets: dict[int, int] = {}
    for mop in value:
        if mop[0] == "poll" and len(mop) > 1 and isinstance(mop[1], dict):
            for k, pairs in mop[1].items():
                for offset, _ in pairs:
                    offsets[k] = max(offsets.get(k, -1), offset + 1)
    return offsets


def _completed(value: list) -> list:
    """The value as far as it got: micro-operations not reached stay as invoked."""
    return [tuple(m) if m[0] == "poll" else ("send", m[1], tuple(m[2]) if isinstance(m[2], list) else m[2])
            for m in value]  # fmt: skip


def _rollback(client, value: list) -> None:
    first: dict[int, int] = {}
    for mop in value:
        if mop[0] == "poll" and len(mop) > 1:
            for k, pairs in mop[1].items():
                if pairs and k not in first:
                    first[k] = pairs[0][0]
    for k, offset in first.items():
        try:
            client.seek(k, offset)
        except Exception:  # no longer assigned (a rebalance took it): nothing to rewind
            pass


# -- the worker: one thread, a process at a time ---------------------------------------------------


class Worker:
    """One of the run's threads. It runs a process at a time: process ``index`` first, then, each
    time its client is thrown away (a crash, an info, a broken client), ``process + concurrency``
    with a new client, as Jepsen's interpreter numbers them."""

    def __init__(self, index: int, concurrency: int, open_client: Callable[[int], Any], history: HistoryWriter,
                 config: WorkloadConfig, rng: random.Random) -> None:  # fmt: skip
        self.process = index
        self.concurrency = concurrency
        self.open_client = open_client
        self.history = history
        self.config = config
        self.rng = rng
        self.client = None

    def invoke(self, op: dict, poll_ms: int = POLL_MS) -> Op:
        """Record the invocation, carry it out, record and return its completion."""
        fields = {"seek_to_beginning": True} if op.get("seek_to_beginning") else {}
        invocation = self.history.invoke(self.process, op["f"], op["value"], **fields)
        if op["f"] == "crash":
            return self._end_process(self.history.complete(invocation, "info"))
        if self.client is None:
            try:
                self.client = self.open_client(self.process)
            except Exception as e:  # nothing was sent: certainly not done
                return self.history.complete(invocation, "fail", error=f"no client: {e!r}")
        if op["f"] in ("assign", "subscribe"):
            outcome = self._take_keys(op)
        else:
            outcome = execute(self.client, op, self.config, self.rng, poll_ms)
        fields = {"error": outcome.error} if outcome.error else {}
        if outcome.rebalance_log:
            fields["rebalance_log"] = outcome.rebalance_log
        completion = self.history.complete(invocation, outcome.type, outcome.value, **fields)
        if outcome.type == "info" or outcome.end_process:
            self._end_process(completion)
        return completion

    def _take_keys(self, op: dict) -> Outcome:
        try:
            if op["f"] == "assign":
                self.client.assign(op["value"], bool(op.get("seek_to_beginning")))
            else:
                self.client.subscribe()
            return Outcome("ok")
        except Exception as e:  # Jepsen's assign and subscribe have no error handling: a crash
            return Outcome("info", error=self.client.classify(e).error, end_process=True)

    def _end_process(self, completion: Op) -> Op:
        self.close()
        self.process += self.concurrency
        return completion

    def close(self) -> None:
        if self.client is not None:
            client, self.client = self.client, None
            client.close()


def run_main_phase(worker: Worker, generator: Generator, time: Time, start_ns: int, end_ns: int,
                   stopping: threading.Event) -> None:  # fmt: skip
    """The worker's share of the run: take the generator's next op, wait until it is due, run it."""
    while not stopping.is_set():
        op, due_ns = generator.op()
        if start_ns + due_ns >= end_ns or time.nanoseconds() >= end_ns:  # Jepsen's time-limit
            return
        wait_ms = (start_ns + due_ns - time.nanoseconds()) // 1_000_000
        if wait_ms > 0:
            time.sleep(wait_ms)  # at most two mean gaps between ops: the schedule's own wait
        if stopping.is_set():
            return
        generator.update(worker.invoke(op))


def run_final_phase(worker: Worker, keys: Iterable[int], targets: FinalTargets, time: Time, end_ns: int,
                    stopping: threading.Event, rng: random.Random) -> None:  # fmt: skip
    """``final-polls``: rounds of a crash (a fresh client), an assign of every key sought to its
    beginning, then 1 s polls (0 to 0.4 s apart) for at most ``FINAL_ROUND_S``; until every key's
    target is reached by some process, or ``end_ns``. The worker's clients are readers by then
    (``clients.client_factory``): Jepsen's final polls open the workload's whole client, and under
    ``txn`` poll inside transactions; here a consumer alone reads, so that a transaction
    coordinator that no longer answers leaves the reads, which the analysis needs, possible."""
    keys = sorted(keys)
    while not targets.done() and not stopping.is_set() and time.nanoseconds() < end_ns:
        worker.invoke({"f": "crash", "value": None})
        worker.invoke({"f": "assign", "value": keys, "seek_to_beginning": True})
        round_end_ns = min(end_ns, time.nanoseconds() + int(FINAL_ROUND_S * 1e9))
        while not targets.done() and not stopping.is_set() and time.nanoseconds() < round_end_ns:
            targets.update(worker.invoke({"f": "poll", "value": [["poll"]]}, poll_ms=FINAL_POLL_MS))
            time.sleep(int(rng.uniform(0, 400)))  # Jepsen's stagger of 1/5 s between final polls
