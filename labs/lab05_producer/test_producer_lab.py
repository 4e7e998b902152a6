"""Lab 5 graded tests: the producer's partitioner, and the accumulator's ready and drain, under MockTime.

Each test's first call into lab code is ``DefaultPartitioner.partition``, ``RecordAccumulator.ready``
or ``RecordAccumulator.drain``, so on the untouched starter every test fails with the lab's own
NotImplementedError. Records get into the accumulator through its given ``append``; the ready tests
never drain, and the drain tests never ask ``ready`` (a retried batch is made by taking a batch out
of its deque by hand and putting it back with ``reenqueue``, as the sender does after an error), so
each stage earns its points alone. The last test of stage 3 runs the sender's loop, ready then
drain, so it needs stage 2 as well.

Failure messages print the accumulator as ``ready`` and ``drain`` see it: each partition's leader,
whether it is muted, and its batches (records, bytes, full or not, how long they waited, attempts),
with what was expected beside what your code returned.
"""

from __future__ import annotations

import random
import threading
import time as wall_clock

import pytest

from kafka_lite.clients.metadata import Cluster, Node, PartitionInfo
from kafka_lite.common.errors import TimeoutException
from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.time import MockTime
from kafka_lite.producer.default_partitioner import DefaultPartitioner, murmur2, to_positive
from kafka_lite.producer.record_accumulator import LONG_MAX, RecordAccumulator
from kafka_lite.producer.transaction_manager import ProducerIdAndEpoch, TransactionManager

# Each test takes well under a second; a scan that never ends fails in 10 s, not the grader's 60.
pytestmark = [pytest.mark.lab(5), pytest.mark.timeout(10)]

# -- the cluster and the accumulator ---------------------------------------------------------------------


def _node(node_id: int) -> Node:
    return Node(node_id, "127.0.0.1", 9000 + node_id)


def _cluster(leaders: dict[tuple[str, int], int | None]) -> Cluster:
    """A cluster whose partitions ``(topic, partition)`` are led by the given node ids (None: no leader)."""
    nodes = {i: _node(i) for i in {n for n in leaders.values() if n is not None}}
    partitions = {
        tp: PartitionInfo(tp[0], tp[1], None if leader is None else nodes[leader], (), ())
        for tp, leader in leaders.items()
    }
    return Cluster(nodes, partitions)


# t-0 and t-1 on node 0, t-2 and u-0 on node 1.
CLUSTER = _cluster({("t", 0): 0, ("t", 1): 0, ("t", 2): 1, ("u", 0): 1})
# A record of this value takes 57 bytes in a batch, and room is checked for exactly that. A 320-byte
# batch (61-byte header) holds 4 records, 61 + 4 * 57 = 289 bytes, and has no room for a 5th.
VALUE = b"v" * 50
BATCH_SIZE = 320
LINGER_MS = 10
RETRY_BACKOFF_MS = 100


def _accumulator(
    time: MockTime,
    linger_ms: int = LINGER_MS,
    memory: int = 100_000,
    transaction_manager: TransactionManager | None = None,
) -> RecordAccumulator:
    return RecordAccumulator(
        batch_size=BATCH_SIZE,
        total_size=memory,
        compression=CompressionType.NONE,
        linger_ms=linger_ms,
        retry_backoff_ms=RETRY_BACKOFF_MS,
        time=time,
        transaction_manager=transaction_manager,
    )


def _append(
    acc: RecordAccumulator, tp, records: int = 1, value: bytes = VALUE, max_block_ms: int = 0
) -> None:
    for _ in range(records):
        acc.append(tp, acc.time.milliseconds(), None, value, (), max_block_ms)


def _retry_first(acc: RecordAccumulator, tp, now: int) -> None:
    """What the sender does to a batch that failed with a retriable error: it was drained (taken out of
    its deque and closed), and now goes back to the front with one more attempt."""
    batch = acc.batches[tp].popleft()
    batch.close()
    batch.drained(now)
    acc.reenqueue(batch, now)


def _tp(tp) -> str:
    return f"{tp[0]}-{tp[1]}"


def _picture(acc: RecordAccumulator, cluster: Cluster, now: int) -> str:
    """The accumulator as ready and drain see it at ``now``."""
    exhausted = acc.free.queued() > 0
    lines = [
        f"  the accumulator at now={now}: linger.ms={acc.linger_ms}, retry.backoff.ms={acc.retry_backoff_ms}, "
        f"closed={acc.closed}, flush in progress={acc.flush_in_progress()}, memory exhausted={exhausted}",
        "    partition  leader   muted  batches, oldest first",
    ]
    for tp in sorted(acc.batches):
        leader = cluster.leader_for(*tp)
        batches = ", ".join(
            f"[{b.record_count} rec {b.size_in_bytes()} B{' full' if b.is_full() else ''}, "
            f"waited {b.waited_time_ms(now)} ms{f', attempts {b.attempts}' if b.attempts else ''}]"
            for b in acc.batches[tp]
        )
        lines.append(
            f"    {_tp(tp):<9}  {'none' if leader is None else f'node {leader.id}':<7}  "
            f"{'muted' if tp in acc.muted else '':<5}  {batches or '(empty)'}"
        )
    return "\n".join(lines)


# -- stage 1: the partitioner ------------------------------------------------------------------------------

# Kafka's own murmur2 vectors (clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.testMurmur2),
# which librdkafka's murmur2_random partitioner agrees with: key -> Utils.murmur2(key), a signed int.
KAFKA_VECTORS = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}


def _four_partitions(leaderless: tuple[int, ...] = ()) -> Cluster:
    return _cluster({("t", p): (None if p in leaderless else p % 2) for p in range(4)})


def _keyed_table(keys, expected: list[int], got: list) -> str:
    rows = [f"  {'key':<28} {'murmur2':>12}  expected  got"]
    for key, want, have in zip(keys, expected, got, strict=True):
        mark = "" if want == have else "   <-"
        shown = key.decode() if len(key) <= 26 else key[:23].decode() + "..."
        rows.append(f"  {shown:<28} {murmur2(key):>12}  {want:>8}  {have!s:>3}{mark}")
    return "\n".join(rows)


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_a_keyed_record_goes_to_the_murmur2_of_its_key():
    cluster = _four_partitions()
    partitioner = DefaultPartitioner()
    keys = list(KAFKA_VECTORS)
    got = [partitioner.partition("t", key.decode(), key, None, b"v", cluster) for key in keys]
    expected = [0, 2, 0, 3, 1, 3]  # Kafka's DefaultPartitioner on a 4-partition topic
    assert got == expected, (
        "on a 4-partition topic, these keys (Kafka's own murmur2 test vectors) land elsewhere than a Java "
        "producer puts them, so the same key from two clients would be split over two partitions:\n"
        + _keyed_table(keys, expected, got)
    )
    again = [partitioner.partition("t", key.decode(), key, None, b"v", cluster) for key in keys]
    assert again == got, f"the same key always goes to the same partition: first {got}, then {again}"


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_negative_hash_is_made_positive_as_java_does():
    cluster = _cluster({("t", p): 0 for p in range(5)})
    partitioner = DefaultPartitioner()
    keys = list(KAFKA_VECTORS)
    got = [partitioner.partition("t", None, key, None, None, cluster) for key in keys]
    expected = [to_positive(h) % 5 for h in KAFKA_VECTORS.values()]
    assert expected == [0, 1, 2, 4, 2, 2]
    wrong = [key for key, want, have in zip(keys, expected, got, strict=True) if want != have]
    negative = bool(wrong) and all(murmur2(key) < 0 for key in wrong)
    assert got == expected, (
        "on a 5-partition topic, keys land elsewhere than a Java producer puts them:\n"
        + _keyed_table(keys, expected, got)
        + ("\n  every key that lands wrong has a negative murmur2 hash" if negative else "")
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_key_stays_on_its_partition_while_it_has_no_leader():
    cluster = _four_partitions(leaderless=(1,))
    key = b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"  # its partition of 4 is 1
    got = DefaultPartitioner().partition("t", None, key, None, b"v", cluster)
    assert got == 1, (
        f"the key's partition is 1, which has no leader right now, and its record went to partition {got}: "
        "the key's records written while the leader is unknown would be on another partition than the "
        "ones before and after, out of order."
    )


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_records_without_a_key_go_round_robin_over_the_partitions_with_a_leader():
    cluster = _four_partitions(leaderless=(1,))  # available: 0, 2, 3
    partitioner = DefaultPartitioner(random_start=lambda: 0)
    got = [partitioner.partition("t", None, None, None, b"v", cluster) for _ in range(7)]
    expected = [0, 2, 3, 0, 2, 3, 0]
    assert got == expected, (
        "seven records without a key, the topic's counter starting at 0, should go round the partitions "
        "that have a leader (0, 2, 3) in turn; partition 1 has no leader"
        + (": records sent there wait for an election" if 1 in got else "")
        + f".\n  expected {expected}\n  got      {got}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_negative_counter_value_is_made_positive_too():
    cluster = _cluster({("t", p): 0 for p in range(3)})
    partitioner = DefaultPartitioner(random_start=lambda: -5)  # Kafka's counter starts at a random int
    got = [partitioner.partition("t", None, None, None, None, cluster) for _ in range(4)]
    expected = [to_positive(v) % 3 for v in (-5, -4, -3, -2)]
    assert expected == [0, 1, 2, 0]
    assert got == expected, (
        "the topic's counter starts at a random int, here -5 (often negative in Kafka): four keyless "
        "records on 3 partitions go elsewhere than a Java producer's would.\n"
        f"  expected {expected}\n  got      {got}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_each_topic_has_its_own_counter():
    cluster = _cluster({("a", 0): 0, ("a", 1): 0, ("b", 0): 0, ("b", 1): 0})
    starts: list[int] = []

    def random_start() -> int:
        starts.append(1)
        return 1

    partitioner = DefaultPartitioner(random_start=random_start)
    got = [
        partitioner.partition(topic, None, None, None, None, cluster) for topic in ("a", "a", "b", "a", "b")
    ]
    expected = [1, 0, 1, 1, 0]
    assert got == expected, (
        "records of topic b moved topic a's round on (or the other way): each topic should go round on "
        "its own, from the same start 1 here, a going 1, 0, 1 and b 1, 0.\n"
        f"  topics   a  a  b  a  b\n  expected {expected}\n  got      {got}"
    )
    assert len(starts) == 2, (
        f"two topics, and {len(starts)} random starts drawn: one per topic, when it is first seen"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_without_any_leader_a_record_without_a_key_still_gets_a_partition():
    cluster = _cluster({("t", 0): None, ("t", 1): None, ("t", 2): None})
    partitioner = DefaultPartitioner(random_start=lambda: 0)
    got = [partitioner.partition("t", None, None, None, None, cluster) for _ in range(4)]
    expected = [0, 1, 2, 0]
    assert got == expected, (
        "no partition of the topic has a leader: records without a key still need a partition each (they "
        "wait in the accumulator until a leader is known), round the topic's three partitions.\n"
        f"  expected {expected}\n  got      {got}"
    )


# -- stage 2: ready ----------------------------------------------------------------------------------------


def _ready_message(why: str, expected, result, acc: RecordAccumulator, cluster: Cluster, now: int) -> str:
    got_nodes = sorted(n.id for n in result.ready_nodes)
    lines = [why]
    if isinstance(expected, set):
        lines.append(f"  expected ready nodes {sorted(expected)}\n  got ready nodes      {got_nodes}")
    else:
        lines.append(f"  expected next_ready_check_delay_ms {expected}\n  got                             "
                     f"{result.next_ready_check_delay_ms}")  # fmt: skip
    return "\n".join(lines) + "\n" + _picture(acc, cluster, now)


def _check_ready(acc, cluster, now, nodes: set[int], delay: int | None, why: str):
    result = acc.ready(cluster, now)
    assert all(isinstance(n, Node) for n in result.ready_nodes), (
        f"ready_nodes should hold the leaders as Node objects, got {result.ready_nodes}"
    )
    got = {n.id for n in result.ready_nodes}
    assert got == nodes, _ready_message(why, nodes, result, acc, cluster, now)
    if delay is not None:
        assert result.next_ready_check_delay_ms == delay, _ready_message(
            why, delay, result, acc, cluster, now
        )
    return result


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_nothing_to_send_means_no_node_and_no_reason_to_wake_up():
    acc = _accumulator(MockTime())
    _check_ready(acc, CLUSTER, acc.time.milliseconds(), set(), LONG_MAX,
                 "no batches: no node is ready and the sender may sleep as long as it likes (LONG_MAX)")  # fmt: skip


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_a_partition_is_ready_when_its_first_batch_is_full():
    time = MockTime()
    acc = _accumulator(time, linger_ms=1000)
    _append(acc, ("t", 0), 4)  # a full batch, but alone in its deque
    _append(acc, ("t", 2), 1)
    now = time.milliseconds()
    _check_ready(acc, CLUSTER, now, set(), 1000,
                 "four records leave no room for a fifth, but the batch is still the deque's last: appends "
                 "close it only when the next record does not fit. Not ready yet; wake up when linger.ms "
                 "has passed")  # fmt: skip
    _append(acc, ("t", 0), 1)  # starts a second batch: the first is full for sure
    _check_ready(acc, CLUSTER, now, {0}, 1000,
                 "t-0 has a batch behind its first: the first is full, so node 0, its "
                 "leader, is ready. t-2 (node 1) still lingers: the delay is its time left")  # fmt: skip


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_a_partition_is_ready_once_its_batch_has_lingered_linger_ms():
    time = MockTime()
    acc = _accumulator(time, linger_ms=10)
    _append(acc, ("t", 0))
    _check_ready(acc, CLUSTER, time.milliseconds(), set(), 10,
                 "a new batch waits linger.ms (10) for more records: the sender should wake up in 10 ms")  # fmt: skip
    time.advance(4)
    _append(acc, ("t", 2))
    _check_ready(acc, CLUSTER, time.milliseconds(), set(), 6,
                 "4 ms later t-0 has 6 ms left and the new t-2 batch 10: the next check is the sooner")  # fmt: skip
    time.advance(6)
    _check_ready(acc, CLUSTER, time.milliseconds(), {0}, 4,
                 "t-0's batch has waited exactly linger.ms: it is ready now")  # fmt: skip


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_flush_or_a_close_makes_every_batch_ready_at_once():
    check_a_flush_or_a_close_makes_every_batch_ready_at_once()


def check_a_flush_or_a_close_makes_every_batch_ready_at_once() -> RecordAccumulator:
    """Shared with tests/producer/test_record_accumulator.py; returns the closed accumulator."""
    time = MockTime()
    acc = _accumulator(time, linger_ms=1000)
    _append(acc, ("t", 0))
    _append(acc, ("t", 2))
    acc.begin_flush()
    _check_ready(acc, CLUSTER, time.milliseconds(), {0, 1}, None,
                 "a flush is in progress: every batch goes now, since flush() waits for all of them")  # fmt: skip
    acc.await_flush_completion(timeout_ms=0)  # gives up at once: the flush is over
    _check_ready(acc, CLUSTER, time.milliseconds(), set(), 1000, "the flush is over: batches linger again")
    acc.close()
    _check_ready(acc, CLUSTER, time.milliseconds(), {0, 1}, None,
                 "the producer is closing: nothing waits for linger.ms any more")  # fmt: skip
    return acc


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_appenders_blocked_on_memory_make_every_batch_ready():
    check_appenders_blocked_on_memory_make_every_batch_ready()


def check_appenders_blocked_on_memory_make_every_batch_ready() -> BaseException:
    """Shared with tests/producer/test_record_accumulator.py; returns the blocked append's error."""
    time = MockTime()
    acc = _accumulator(time, linger_ms=1000, memory=2 * BATCH_SIZE)
    _append(acc, ("t", 0))
    _append(acc, ("t", 2))
    errors: list[BaseException] = []

    def blocked_append() -> None:
        try:
            _append(acc, ("u", 0), max_block_ms=50)
        except BaseException as e:
            errors.append(e)

    thread = threading.Thread(target=blocked_append, daemon=True)
    thread.start()
    deadline = wall_clock.monotonic() + 5
    while acc.free.queued() == 0:
        assert wall_clock.monotonic() < deadline, "the third append should block on memory"
        wall_clock.sleep(0.005)
    try:
        _check_ready(acc, CLUSTER, time.milliseconds(), {0, 1}, None,
                     "buffer.memory is used up and an append (a send()) is blocked waiting for memory: every "
                     "batch should go now, since sending them is what frees memory")  # fmt: skip
    finally:
        time.advance(50)
        thread.join(5)
    assert errors and isinstance(errors[0], TimeoutException)
    return errors[0]


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_a_retried_batch_backs_off_retry_backoff_ms():
    time = MockTime()
    acc = _accumulator(time, linger_ms=0)
    _append(acc, ("t", 0), 5)  # a full batch and one behind it
    _retry_first(acc, ("t", 0), time.milliseconds())
    acc.begin_flush()
    _check_ready(acc, CLUSTER, time.milliseconds(), set(), RETRY_BACKOFF_MS,
                 "t-0's first batch failed a moment ago (attempts 1): it backs off retry.backoff.ms (100) "
                 "before it is ready again, full or not, flush or not; its wait is the time left")  # fmt: skip
    time.advance(60)
    _check_ready(acc, CLUSTER, time.milliseconds(), set(), RETRY_BACKOFF_MS - 60,
                 "60 ms into the back-off, 40 ms are left")  # fmt: skip
    time.advance(40)
    _check_ready(acc, CLUSTER, time.milliseconds(), {0}, None,
                 "the back-off is over: the retry is ready")  # fmt: skip


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_partition_without_a_leader_names_its_topic_for_a_metadata_update():
    check_a_partition_without_a_leader_names_its_topic_for_a_metadata_update()


def check_a_partition_without_a_leader_names_its_topic_for_a_metadata_update() -> None:
    """Shared with tests/producer/test_record_accumulator.py."""
    time = MockTime()
    acc = _accumulator(time, linger_ms=0)
    _append(acc, ("t", 0))
    _append(acc, ("v", 0))
    _append(acc, ("w", 0))
    acc.batches[("w", 0)].popleft()  # as after a drain: an empty deque, and no leader either
    cluster = _cluster({("t", 0): 0, ("v", 0): None, ("w", 0): None})
    result = _check_ready(acc, cluster, time.milliseconds(), {0}, None,
                          "v-0 has no leader: it cannot make a node ready, and t-0 still can")  # fmt: skip
    assert result.unknown_leader_topics == {"v"}, (
        "a partition with batches and no known leader adds its topic to unknown_leader_topics (the sender "
        "then asks for new metadata); one without batches does not.\n"
        f"  expected {{'v'}}\n  got      {result.unknown_leader_topics}\n"
        + _picture(acc, cluster, time.milliseconds())
    )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_muted_partition_is_not_ready():
    time = MockTime()
    acc = _accumulator(time, linger_ms=0)
    _append(acc, ("t", 0))
    acc.mute_partition(("t", 0))
    _check_ready(acc, CLUSTER, time.milliseconds(), set(), LONG_MAX,
                 "t-0 is muted (a batch of it is in flight and order must be kept): it is skipped, and "
                 "gives no reason to wake up either")  # fmt: skip
    acc.unmute_partition(("t", 0))
    _check_ready(acc, CLUSTER, time.milliseconds(), {0}, None, "unmuted, its lingered batch is ready")


# -- stage 3: drain ----------------------------------------------------------------------------------------


def _drained(drained: dict) -> dict:
    return {
        node: [(_tp(b.topic_partition), b.record_count) for b in batches] for node, batches in drained.items()
    }


def _drain_message(why: str, expected: dict, got: dict, before: str) -> str:
    rows = [why, "  node  expected (partition, records)          got"]
    for node in sorted(set(expected) | set(got)):
        want, have = expected.get(node, "(no entry)"), got.get(node, "(no entry)")
        rows.append(f"  {node:<4}  {want!s:<38}  {have!s}{'' if want == have else '   <-'}")
    return "\n".join(rows) + "\n" + before


def _check_drain(acc, cluster, node_ids, max_size, expected: dict, why: str) -> dict:
    now = acc.time.milliseconds()
    before = _picture(acc, cluster, now)
    result = acc.drain(cluster, [_node(n) for n in node_ids], max_size, now)
    got = _drained(result)
    assert got == expected, _drain_message(why, expected, got, before)
    return result


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_drain_takes_at_most_one_batch_per_partition_per_node():
    time = MockTime()
    acc = _accumulator(time)
    _append(acc, ("t", 0), 6)  # two batches: 4 records and 2
    _append(acc, ("t", 1), 1)
    _append(acc, ("t", 2), 1)
    result = _check_drain(acc, CLUSTER, [0, 1], 1_000_000,
                          {0: [("t-0", 4), ("t-1", 1)], 1: [("t-2", 1)]},
                          "each node gets the first batch of each partition it leads, one per partition")  # fmt: skip
    left = [b.record_count for b in acc.batches[("t", 0)]]
    assert left == [2], (
        f"t-0's second batch waits for the next request: left in its deque {left}, expected [2]"
    )
    batches = [b for bs in result.values() for b in bs]
    assert all(b.is_closed() for b in batches), (
        "a drained batch still takes appends: a record appended now would join a batch already on its way"
    )
    assert all(b.drained_ms == time.milliseconds() for b in batches), (
        f"the drained batches do not say they were drained at now={time.milliseconds()}: "
        f"{[b.drained_ms for b in batches]}"
    )
    again = _check_drain(acc, CLUSTER, [0, 1], 1_000_000, {0: [("t-0", 2)], 1: []},
                         "the next drain takes what is left; node 1 has nothing: an empty list")  # fmt: skip
    assert again[0][0] is not batches[0]


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_drain_stops_at_max_request_size():
    time = MockTime()
    acc = _accumulator(time)
    for partition in (0, 1):
        _append(acc, ("t", partition), 4)
    full = acc.batches[("t", 0)][0].size_in_bytes()
    _check_drain(acc, CLUSTER, [0], 2 * full, {0: [("t-0", 4), ("t-1", 4)]},
                 f"two {full}-byte batches fit exactly in max_size {2 * full}")  # fmt: skip
    for partition in (0, 1):
        _append(acc, ("t", partition), 4)
    _check_drain(acc, CLUSTER, [0], 2 * full - 1, {0: [("t-0", 4)]},
                 f"max_size {2 * full - 1}: the second {full}-byte batch would make the request "
                 f"{2 * full} bytes, so it stays for the next request")  # fmt: skip


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_a_first_batch_larger_than_max_request_size_still_goes_alone():
    time = MockTime()
    acc = _accumulator(time)
    _append(acc, ("t", 0), 4)
    _append(acc, ("t", 1), 1)
    _check_drain(acc, CLUSTER, [0], 10, {0: [("t-0", 4)]},
                 "a request's first batch goes even when it is larger than max_size (otherwise it would never "
                 "go: with compression a batch can grow past the size it was checked for); nothing follows it")  # fmt: skip


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_the_next_drain_starts_where_the_last_one_stopped():
    time = MockTime()
    acc = _accumulator(time)
    for partition in (0, 1):
        _append(acc, ("t", partition), 4)
    full = acc.batches[("t", 0)][0].size_in_bytes()
    _check_drain(acc, CLUSTER, [0], full, {0: [("t-0", 4)]}, "room for one batch: the scan starts at t-0")
    _append(acc, ("t", 0), 4)
    _check_drain(acc, CLUSTER, [0], full, {0: [("t-1", 4)]},
                 "the last drain stopped at t-1 (it did not fit): this one starts there, "
                 "so t-0, first in the list, does not win every time while t-1 starves")  # fmt: skip
    _check_drain(acc, CLUSTER, [0], full, {0: [("t-0", 4)]},
                 "t-1 is empty now; the scan goes round to t-0")  # fmt: skip


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_muted_and_backing_off_partitions_are_skipped():
    time = MockTime()
    acc = _accumulator(time)
    _append(acc, ("t", 0), 1)
    _append(acc, ("t", 1), 1)
    _append(acc, ("t", 2), 1)
    _append(acc, ("u", 0), 1)
    acc.mute_partition(("t", 0))
    _retry_first(acc, ("t", 2), time.milliseconds())
    _check_drain(acc, CLUSTER, [0, 1], 1_000_000, {0: [("t-1", 1)], 1: [("u-0", 1)]},
                 "t-0 is muted (a batch of it is in flight) and t-2's batch failed a moment ago and backs off: "
                 "neither should go, and the others still should")  # fmt: skip
    time.advance(RETRY_BACKOFF_MS)
    _check_drain(acc, CLUSTER, [0, 1], 1_000_000, {0: [], 1: [("t-2", 1)]},
                 "the back-off is over: t-2's retry goes; t-0 is still muted")  # fmt: skip


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_an_idempotent_producer_numbers_each_batch_when_first_drained():
    time = MockTime()
    tm = TransactionManager()
    acc = _accumulator(time, transaction_manager=tm)
    _append(acc, ("t", 0), 6)
    _check_drain(acc, CLUSTER, [0], 1_000_000, {0: []},
                 "an idempotent producer without a producer id yet cannot number a batch: nothing goes")  # fmt: skip
    tm.set_producer_id_and_epoch(ProducerIdAndEpoch(7, 0))
    first = _check_drain(acc, CLUSTER, [0], 1_000_000, {0: [("t-0", 4)]}, "with a producer id, drain")[0][0]
    second = _check_drain(acc, CLUSTER, [0], 1_000_000, {0: [("t-0", 2)]}, "and the next batch")[0][0]
    got = [(b.producer_id, b.base_sequence) for b in (first, second)]
    assert got == [(7, 0), (7, 4)], (
        "the two batches, drained one after the other, should carry producer id 7 and sequences 0 and "
        "then 4 (the first batch held 4 records).\n"
        f"  expected [(7, 0), (7, 4)]\n  got      {got}"
    )
    acc.reenqueue(first, time.milliseconds())  # the first request failed: its batch goes again
    time.advance(RETRY_BACKOFF_MS)
    (retried,) = _check_drain(
        acc, CLUSTER, [0], 1_000_000, {0: [("t-0", 4)]}, "the retry, after its back-off"
    )[0]
    assert (retried.producer_id, retried.base_sequence) == (7, 0), (
        "the retry of the first batch went out with other numbers than its first attempt, producer id "
        f"{retried.producer_id} and sequence {retried.base_sequence}: if the first attempt was written, "
        "the broker takes the retry for new records and writes them twice"
    )


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_the_senders_loop_delivers_every_record_once_in_order():
    """The sender's loop (Sender.run_once): ready, drain the ready nodes, mute what is in flight (as with
    max.in.flight.requests.per.connection=1), complete the requests, unmute, flush at the end."""
    rng = random.Random(5)
    time = MockTime()
    acc = _accumulator(time, linger_ms=5)
    partitions = sorted(CLUSTER.partitions)
    sent = {tp: 0 for tp in partitions}
    received: dict = {tp: [] for tp in partitions}
    max_size = 700
    in_flight: list = []

    def run_once() -> None:
        for batch in in_flight:  # the last requests' responses arrive
            acc.unmute_partition(batch.topic_partition)
            acc.deallocate(batch)
        in_flight.clear()
        now = time.milliseconds()
        before = _picture(acc, CLUSTER, now)
        ready = acc.ready(CLUSTER, now)
        drained = acc.drain(CLUSTER, ready.ready_nodes, max_size, now)
        assert set(drained) == {n.id for n in ready.ready_nodes}, (
            f"drain answers for each node it was given: nodes {sorted(n.id for n in ready.ready_nodes)}, "
            f"drained {sorted(drained)}\n{before}"
        )
        for node, batches in drained.items():
            tps = [b.topic_partition for b in batches]
            size = sum(b.size_in_bytes() for b in batches)
            assert len(tps) == len(set(tps)), f"node {node}: two batches of one partition {tps}\n{before}"
            assert len(batches) <= 1 or size <= max_size, f"node {node}: {size} bytes > {max_size}\n{before}"
            for batch in batches:
                assert CLUSTER.leader_for(*batch.topic_partition).id == node, (
                    f"{batch} drained for node {node}"
                )
                received[batch.topic_partition] += [r.value for r in batch.records().records()]
                acc.mute_partition(batch.topic_partition)
                in_flight.append(batch)

    for _ in range(300):
        for _ in range(rng.randrange(4)):
            tp = rng.choice(partitions)
            _append(acc, tp, value=b"%06d" % sent[tp] + b"v" * rng.randrange(100))
            sent[tp] += 1
        run_once()
        time.advance(rng.randrange(4))
    acc.begin_flush()
    for _ in range(100):
        run_once()
    for tp in partitions:
        got = [int(v[:6]) for v in received[tp]]
        assert got == list(range(sent[tp])), (
            f"{_tp(tp)}: appended records 0..{sent[tp] - 1}; the sender's loop received {len(got)} of them"
            + ("" if got == sorted(got) else ", out of order")
            + f"\n{_picture(acc, CLUSTER, time.milliseconds())}"
        )
