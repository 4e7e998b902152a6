"""Lab 12 graded tests: a produce-consume-validate checker (``kafka_lite/tools/verifiable_client.py``),
then the same checker run through faults the tests inject into a real local cluster.

Stage 1 is pure: ``validate`` over lists the tests write. Stages 2 and 3 run on one cluster of real
processes (``kafka-lite cluster up``: a ZooKeeper and three brokers), started by the first test that
needs it and stopped after the last. Before a test asks for the cluster it checks that the lab
functions it uses are written: a function that is still the starter's ``raise NotImplementedError``
is called at once, so an unwritten stage fails in milliseconds, not after a cluster start.

Stage 3 injects the faults as a learner would by hand, with ``kafka-lite cluster pause | kill |
resume | restart``: both followers of a partition frozen, the learner's producer run with acks=1 or
acks=all, the leader killed, the followers let run again before anything has dropped them from the
ISR, a follower elected cleanly, the old leader restarted. Every step waits on what it needs (the
followers caught up, the records on the leader's log, the new leader in ZooKeeper), each with a
deadline.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kafka_lite.cli.cluster import load_state
from kafka_lite.cli.main import main
from kafka_lite.clients.admin import KafkaAdminClient, NewTopic, OffsetSpec
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.kafka_consumer import KafkaConsumer
from kafka_lite.producer.kafka_producer import KafkaProducer
from kafka_lite.testing.lab_stubs import written
from kafka_lite.tools import verifiable_client as lab
from kafka_lite.tools.verifiable_client import Acknowledgement, ConsumedValue
from kafka_lite.utils.ports import free_ports
from kafka_lite.zk.zk_utils import ZkUtils

pytestmark = [pytest.mark.lab(12)]


def ack(value: str, partition: int, offset: int) -> Acknowledgement:
    return Acknowledgement(value, partition, offset)


def read(value: str, partition: int, offset: int) -> ConsumedValue:
    return ConsumedValue(value, partition, offset)


def _show(verdict) -> str:
    return (
        f"  acknowledged = {verdict.acknowledged}\n"
        f"  found        = {verdict.found}\n"
        f"  lost         = {verdict.lost}\n"
        f"  duplicated   = {verdict.duplicated}"
    )


# -- stage 1: the verdict -----------------------------------------------------------------------------------


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_found_and_lost_are_listed_by_partition_then_offset():
    acknowledged = [ack("c", 1, 0), ack("a", 0, 1), ack("d", 1, 1), ack("b", 0, 0), ack("e", 0, 2)]
    consumed = [read("b", 0, 0), read("a", 0, 1), read("d", 1, 1)]
    verdict = lab.validate(acknowledged, consumed)
    assert verdict.acknowledged == 5, f"five values were acknowledged:\n{_show(verdict)}"
    assert verdict.found == [ack("b", 0, 0), ack("a", 0, 1), ack("d", 1, 1)], (
        "found: the acknowledgements of the values read back, partition 0's first, each partition's "
        f"by offset:\n{_show(verdict)}"
    )
    assert verdict.lost == [ack("e", 0, 2), ack("c", 1, 0)], (
        f"lost: the acknowledgements of the values never read back, in the same order:\n{_show(verdict)}"
    )
    assert verdict.duplicated == [] and verdict.ok is False


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_value_is_found_wherever_it_was_read():
    """After an election an offset can hold another record than the one acknowledged there: a value
    is matched by itself, not by its place."""
    acknowledged = [ack("x", 0, 5), ack("y", 0, 6)]
    consumed = [read("y", 0, 5), read("other", 0, 6)]  # y read at 5, and 6 holds a value never acked
    verdict = lab.validate(acknowledged, consumed)
    assert verdict.found == [ack("y", 0, 6)] and verdict.lost == [ack("x", 0, 5)], (
        "x was acknowledged at offset 5, but 5 now holds y: x is lost, y is found (at another offset), "
        f"and 'other' was never acknowledged, so it is neither:\n{_show(verdict)}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_duplicates_are_named_once_and_are_not_losses():
    acknowledged = [ack("a", 0, 0), ack("b", 0, 1)]
    consumed = [
        read("a", 0, 0),
        read("b", 0, 1),
        read("b", 0, 2),
        read("b", 0, 3),
        read("z", 0, 4),
        read("z", 0, 5),
    ]
    verdict = lab.validate(acknowledged, consumed)
    assert verdict.duplicated == ["b", "z"], (
        "duplicated: each value read more than once, named once, sorted (z was never acknowledged, but "
        f"reading it twice is still a duplicate):\n{_show(verdict)}"
    )
    assert verdict.found == acknowledged and verdict.lost == [] and verdict.ok, _show(verdict)


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_nothing_acknowledged_means_nothing_lost():
    verdict = lab.validate([], [read("failed-but-written", 0, 0)])
    assert (verdict.acknowledged, verdict.found, verdict.lost, verdict.duplicated) == (0, [], [], []), (
        "a value that failed (not acknowledged) may still be in the log; reading it back is no loss and "
        f"no find:\n{_show(verdict)}"
    )


# -- the cluster --------------------------------------------------------------------------------------------

# A broker frozen for less than both of these is still registered and still in its ISRs when it runs
# again; the faults of stage 3 freeze the followers for well under a second. A dead leader's ZooKeeper
# session expires after the first, and only then does the controller elect a new leader.
CLUSTER_OVERRIDES = [
    "zookeeper.session.timeout.ms=6000",
    "replica.lag.time.max.ms=10000",
    "log.cleaner.enable=false",
]
DEADLINE_S = 30
FROZEN_PRODUCE_S = 4  # well inside the frozen followers' 6 s sessions


class LabCluster:
    """A `kafka-lite cluster up` cluster of three brokers, and what the tests read of it."""

    def __init__(self, directory: Path, zk_port: int) -> None:
        self.directory = directory
        self.state = load_state(directory)
        self.bootstrap_servers = ",".join(f"127.0.0.1:{b['port']}" for b in self.state["brokers"])
        self.zk = ZkUtils(f"127.0.0.1:{zk_port}")
        self.timeline: list[str] = []  # the current fault run's events, which its failures print
        self.started = time.monotonic()

    def note(self, event: str) -> None:
        self.timeline.append(f"  {time.monotonic() - self.started:6.2f} s  {event}")

    def address(self, broker: int) -> str:
        return next(f"127.0.0.1:{b['port']}" for b in self.state["brokers"] if b["id"] == broker)

    def cli(self, *args: str) -> None:
        """``kafka-lite cluster ACTION ... --dir DIR``, as a learner types it."""
        code = main(["cluster", *args, "--dir", str(self.directory)])
        assert code == 0, f"kafka-lite cluster {' '.join(args)} failed ({code}); see {self.directory}/logs"

    def admin(self) -> KafkaAdminClient:
        return KafkaAdminClient(self.bootstrap_servers)

    def create_topic(self, name: str, assignment: dict[int, list[int]], **configs: str) -> None:
        admin = self.admin()
        try:
            admin.create_topics(
                [NewTopic(name, -1, -1, assignment, {k.replace("_", "."): v for k, v in configs.items()})]
            )
        finally:
            admin.close()
        for partition, replicas in assignment.items():
            wait_until(
                lambda p=partition, r=replicas: self.isr(name, p) == sorted(r),
                f"{name}-{partition} to have a leader and every replica in its ISR",
            )
            # ZooKeeper has the leader before the leader knows it leads (the controller writes the
            # state, then sends LeaderAndIsr); a produce to it meanwhile fails, and retries=0 keeps
            # the failure. ListOffsets answers only once the leader leads.
            wait_until(
                lambda p=partition: self.high_watermark(name, p) >= 0, f"{name}-{partition}'s leader to lead"
            )

    def partition_state(self, topic: str, partition: int = 0):
        state = self.zk.get_partition_state(topic, partition)
        return None if state is None else state.leader_and_isr

    def isr(self, topic: str, partition: int = 0) -> list[int]:
        state = self.partition_state(topic, partition)
        return sorted(state.isr) if state is not None and state.leader >= 0 else []

    def high_watermark(self, topic: str, partition: int = 0) -> int:
        admin = self.admin()
        try:
            tp = TopicPartition(topic, partition)
            return admin.list_offsets({tp: OffsetSpec.latest()})[tp].offset
        finally:
            admin.close()

    def log_end_offset(self, broker: int, topic: str, partition: int = 0) -> int:
        """The broker's log end offset for the partition, read from its files: what the broker has
        appended, whether or not anyone else has it."""
        end = 0
        for segment in sorted(
            (self.directory / f"broker-{broker}" / "data" / f"{topic}-{partition}").glob("*.log")
        ):
            for batch in MemoryRecords(segment.read_bytes()).batches(allow_partial_tail=True):
                end = batch.next_offset
        return end

    def recover(self) -> None:
        """Every broker running again, whatever a failed test left frozen or dead, so that the next
        test gets a whole cluster."""
        self.state = load_state(self.directory)
        for b in self.state["brokers"]:
            status = _process_state(b["pid"])
            if status == "T":
                main(["cluster", "resume", str(b["id"]), "--dir", str(self.directory)])
            elif status in ("Z", None):
                main(["cluster", "restart", str(b["id"]), "--dir", str(self.directory)])

    def close(self) -> None:
        self.zk.close()


def _process_state(pid: int) -> str | None:
    """The state letter of /proc/<pid>/stat (R, S, T for stopped, Z for a zombie); None if gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except OSError:
        return None


def wait_until(condition: Callable[[], object], what: str, timeout_s: float = DEADLINE_S):
    """Until ``condition()`` is truthy; fail naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            result = condition()
        except Exception:  # a broker that is restarting answers nothing yet: not yet
            result = None
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.05)  # polling, bounded by the deadline


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[LabCluster]:
    directory = tmp_path_factory.mktemp("lab12-cluster")
    for _ in range(3):  # a port found free may be taken before a broker binds it: new ports then
        zk_port = free_ports(4)
        up = ["cluster", "up", "--detach", "--dir", str(directory), "--zookeeper-port", str(zk_port),
              "--base-port", str(zk_port + 1), "--no-metrics-reporter"]  # fmt: skip
        if main(up + [a for o in CLUSTER_OVERRIDES for a in ("--override", o)]) == 0:
            break
    else:
        pytest.fail(f"kafka-lite cluster up failed three times; see {directory}/logs")
    c = LabCluster(directory, zk_port)
    try:
        yield c
    finally:
        c.close()
        main(["cluster", "down", "--dir", str(directory)])


def new_topic(what: str) -> str:
    return f"lab12-{what}-{uuid.uuid4().hex[:8]}"


def read_back(bootstrap_servers: str, topic: str) -> list[tuple[str, int, int]]:
    """The tests' own reading of a topic: (value, partition, offset) of every record below the HW."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap_servers, enable_auto_commit=False)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic))]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        end = consumer.end_offsets(tps)
        found: list[tuple[str, int, int]] = []
        deadline = time.monotonic() + DEADLINE_S
        while any(consumer.position(tp) < end[tp] for tp in tps) and time.monotonic() < deadline:
            for tp, records in consumer.poll(timeout_ms=200).items():
                found.extend((r.value.decode(), tp[1], r.offset) for r in records)
        return found
    finally:
        consumer.close(autocommit=False)


# -- stage 2: the producer and the consumer on a healthy cluster ----------------------------------------------


@pytest.mark.stage(2)
@pytest.mark.points(3)
@pytest.mark.parametrize("acks", [1, -1], ids=["acks=1", "acks=all"])
def test_every_value_is_acknowledged_with_its_partition_and_offset(request, acks):
    written(lab.produce)
    cluster = request.getfixturevalue("cluster")
    topic = new_topic("healthy")
    cluster.create_topic(topic, {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]})
    values = [f"v{i}" for i in range(30)]
    result = lab.produce(cluster.bootstrap_servers, topic, values, acks)
    assert result.failed == {}, f"on a healthy cluster nothing should fail; failed: {result.failed}"
    assert sorted(a.value for a in result.acknowledged) == sorted(values), (
        f"every value should be acknowledged once; acknowledged: {[a.value for a in result.acknowledged]}"
    )
    # With acks=1 the acknowledgement can come before the followers' copies, and a consumer reads
    # only below the HW: wait for it to pass every acknowledged record first. The topic is new, so
    # each partition's log holds exactly the values acknowledged on it: the wait counts them rather
    # than trusting the acknowledged offsets, which are what the check below is about.
    for p in range(3):
        count = sum(a.partition == p for a in result.acknowledged)
        wait_until(lambda p=p, count=count: cluster.high_watermark(topic, p) >= count, f"{topic}-{p}'s HW")
    where = {
        (value, partition, offset) for value, partition, offset in read_back(cluster.bootstrap_servers, topic)
    }
    wrong = [a for a in result.acknowledged if (a.value, a.partition, a.offset) not in where]
    assert not wrong, (
        "these acknowledgements name a partition and offset where the log does not hold their value: "
        f"{wrong[:5]}\n"
        f"the log holds (value, partition, offset): {sorted(where, key=lambda w: (w[1], w[2]))[:10]} ..."
    )


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_an_error_is_reported_and_the_value_not_acknowledged(request):
    written(lab.produce)
    cluster = request.getfixturevalue("cluster")
    topic = new_topic("too-few-replicas")
    # Two replicas, and acks=all asks for three in sync: the leader refuses every append.
    cluster.create_topic(topic, {0: [1, 2]}, min_insync_replicas="3")
    values = ["a", "b", "c"]
    result = lab.produce(cluster.bootstrap_servers, topic, values, -1)
    assert result.acknowledged == [] and result.failed == dict.fromkeys(
        values, "NotEnoughReplicasException"
    ), (
        "min.insync.replicas=3 on a topic of 2 replicas, produce with acks=all: the leader answers "
        "NOT_ENOUGH_REPLICAS, so every value should be failed with NotEnoughReplicasException and none "
        "acknowledged; produce reported\n"
        f"  acknowledged = {result.acknowledged}\n  failed       = {result.failed}"
    )
    result = lab.produce(cluster.bootstrap_servers, topic, ["d"], 1)
    assert result.failed == {} and [a.value for a in result.acknowledged] == ["d"], (
        "min.insync.replicas matters only to acks=all: with acks=1 the leader appends and acknowledges.\n"
        f"  acknowledged = {result.acknowledged}\n  failed       = {result.failed}"
    )


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_consume_reads_every_partition_from_the_beginning(request):
    written(lab.consume)
    cluster = request.getfixturevalue("cluster")
    topic = new_topic("read")
    cluster.create_topic(topic, {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]})
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=-1)
    try:
        for i in range(24):
            producer.send(topic, f"r{i}".encode(), partition=i % 3)
        producer.flush()
    finally:
        producer.close()
    consumed = lab.consume(cluster.bootstrap_servers, topic)
    got = [(c.value, c.partition, c.offset) for c in consumed]
    expected = sorted(((f"r{i}", i % 3, i // 3) for i in range(24)), key=lambda e: (e[1], e[2]))
    assert sorted(got, key=lambda g: (g[1], g[2])) == expected, (
        f"consume read back other records than the topic holds; expected (value, partition, offset), "
        f"sorted by partition, offset:\n  {expected}\ngot:\n  {got}"
    )
    for p in range(3):
        offsets = [c.offset for c in consumed if c.partition == p]
        assert offsets == sorted(offsets), f"partition {p}'s records should come in offset order: {offsets}"
    empty = lab.consume(cluster.bootstrap_servers, new_topic_created(cluster))
    assert empty == [], f"consume of a topic with no records returned {empty}, expected []"


def new_topic_created(cluster: LabCluster) -> str:
    topic = new_topic("empty")
    cluster.create_topic(topic, {0: [0, 1, 2]})
    return topic


# -- stage 3: faults, and the explanation ----------------------------------------------------------------------

# (acks, replication factor, min.insync.replicas, unclean leader election) -> can an acknowledged value
# be lost when brokers crash or freeze and restart with their logs?
TABLE = [
    ((0, 3, 2, False), True, "acks=0: the producer never hears from the broker"),
    ((0, 1, 1, False), True, "acks=0: the producer never hears from the broker"),
    ((1, 1, 1, False), False, "one replica: it returns with its log, and there is no other to elect"),
    ((-1, 1, 1, True), False, "one replica: nobody else can be elected, cleanly or not"),
    ((1, 3, 2, False), True, "acks=1: the leader alone had it; a follower in the ISR is elected without it"),
    ((1, 3, 3, False), True, "min.insync.replicas applies to acks=all only"),
    ((1, 2, 1, True), True, "acks=1: the leader alone had it"),
    ((-1, 3, 2, False), False, "acks=all and a clean election: the new leader was in the ISR, so has it"),
    ((-1, 3, 1, False), False, "an ISR of the leader alone: with no unclean election it waits for it"),
    ((-1, 3, 1, True), True, "the ISR can shrink to the leader; an out-of-sync replica elected lacks it"),
    ((-1, 3, 2, True), True, "a replica can be outside an ISR of two; if it is elected, it lacks it"),
    ((-1, 3, 3, True), False, "every acknowledged value is on all three replicas, whoever is elected"),
    ((-1, 2, 3, True), False, "min.insync.replicas above the replicas: nothing is ever acknowledged"),
]


@pytest.mark.stage(3)
@pytest.mark.points(4)
def test_can_lose_acknowledged_agrees_with_the_table():
    wrong = []
    for args, expected, why in TABLE:
        got = lab.can_lose_acknowledged(*args)
        if got is not expected:
            wrong.append(f"  acks={args[0]}, replication={args[1]}, min.insync={args[2]}, unclean={args[3]}: "
                         f"{got}, expected {expected} ({why})")  # fmt: skip
    assert not wrong, "can_lose_acknowledged disagrees with these cases:\n" + "\n".join(wrong)


def crash_the_leader_while_its_followers_are_frozen(cluster: LabCluster, acks: int):
    """The run of stage 3: returns (what the producer said before the fault, what it said during it,
    the verdict of the learner's validate over both and what the learner's consume read)."""
    cluster.timeline, cluster.started = [], time.monotonic()
    try:
        return _fault_run(cluster, acks)
    except AssertionError as e:
        raise AssertionError(f"{e}\nthe run so far:\n" + "\n".join(cluster.timeline)) from None
    finally:
        cluster.recover()


def _fault_run(cluster: LabCluster, acks: int):
    controller = cluster.zk.get_controller_id()
    # The leader is not the controller: the controller must see the leader's session expire and
    # elect, and a frozen controller would only see that once it runs again (it soon does, here).
    leader = next(b for b in (0, 1, 2) if b != controller)
    followers = [b for b in (0, 1, 2) if b != leader]
    topic = new_topic(f"acks{'all' if acks == -1 else acks}")
    cluster.create_topic(topic, {0: [leader, *followers]}, min_insync_replicas="2",
                         unclean_leader_election_enable="false")  # fmt: skip
    cluster.note(
        f"topic {topic}: broker {leader} leads, {followers} follow; broker {controller} is the controller"
    )
    before_values = [f"before-{i}" for i in range(5)]
    during_values = [f"during-{i}" for i in range(10)]

    before = lab.produce(cluster.bootstrap_servers, topic, before_values, acks)
    assert sorted(a.value for a in before.acknowledged) == before_values and not before.failed, (
        f"on the healthy cluster every value is acknowledged: {before}"
    )
    # Both followers have copied them when the HW (what a consumer may read) reaches the log end.
    wait_until(lambda: cluster.high_watermark(topic) == len(before_values), "the followers to catch up")
    cluster.note(
        f"{len(before_values)} values acknowledged; the HW is {len(before_values)}: both followers have them"
    )

    for f in followers:
        cluster.cli("pause", str(f))
    cluster.note(f"brokers {followers[0]} and {followers[1]} paused (SIGSTOP)")
    # While the followers are frozen every client bootstraps from the leader alone: a frozen broker
    # accepts a connection (the kernel does that) but answers nothing, and a client that asked it
    # for metadata would wait out its request timeout.
    at_leader = cluster.address(leader)
    # A follower's fetch may be waiting in the leader's purgatory; the next append answers it, and
    # the frozen follower would copy that append when it runs again. This record absorbs it, so
    # none of the values below reaches a follower.
    fence = KafkaProducer(bootstrap_servers=at_leader, acks=1)
    try:
        fence.send(topic, b"fence").get(timeout=DEADLINE_S)
    finally:
        fence.close(timeout=DEADLINE_S)
    fenced_end = cluster.log_end_offset(leader, topic)
    cluster.note(f"fence appended at offset {fenced_end - 1}")

    box: dict = {}
    producing = threading.Thread(
        target=lambda: box.setdefault("during", lab.produce(at_leader, topic, during_values, acks)),
        daemon=True,
    )
    producing.start()
    if acks == 1:
        # The leader acknowledges alone: nothing waits for the followers. A produce that takes longer
        # than the frozen followers' ZooKeeper sessions would make another experiment.
        producing.join(FROZEN_PRODUCE_S)
        assert "during" in box, (
            f"with acks=1 and the followers frozen, produce should return within {FROZEN_PRODUCE_S} s: "
            "the leader answers without them"
        )
        cluster.note(
            f"produce returned: {len(box['during'].acknowledged)} acknowledged, {len(box['during'].failed)} failed"
        )
    else:
        wait_until(lambda: cluster.log_end_offset(leader, topic) > fenced_end,
                   "the leader to append values the frozen followers cannot copy")  # fmt: skip
    cluster.note(
        f"broker {leader}'s log ends at offset {cluster.log_end_offset(leader, topic)}; no follower has past {fenced_end}"
    )
    cluster.cli("kill", str(leader))
    cluster.note(f"broker {leader} killed (SIGKILL)")
    for f in followers:
        cluster.cli("resume", str(f))
    cluster.note(f"brokers {followers[0]} and {followers[1]} resumed (SIGCONT)")
    wait_until(lambda: cluster.partition_state(topic).leader in followers,
               f"the controller to elect broker {followers[0]} or {followers[1]} after broker {leader}'s "
               "ZooKeeper session expires")  # fmt: skip
    state = cluster.partition_state(topic)
    cluster.note(f"broker {state.leader} elected (leader epoch {state.leader_epoch}), ISR {state.isr}")
    producing.join(DEADLINE_S)
    assert "during" in box, f"produce did not return within {DEADLINE_S} s after the leader died"
    if acks != 1:
        cluster.note(
            f"produce has returned: {len(box['during'].acknowledged)} acknowledged, {len(box['during'].failed)} failed"
        )
    cluster.cli("restart", str(leader))
    cluster.note(f"broker {leader} restarted")
    # The old leader comes back as a follower, truncates what only it had, and catches up.
    wait_until(lambda: cluster.isr(topic) == [0, 1, 2], f"broker {leader} to rejoin the ISR")
    cluster.note(
        f"broker {leader} back in the ISR; its log ends at offset {cluster.log_end_offset(leader, topic)}"
    )

    during = box["during"]
    consumed = lab.consume(cluster.bootstrap_servers, topic)
    verdict = lab.validate(before.acknowledged + during.acknowledged, consumed)
    return before, during, verdict, consumed


def _run_report(cluster, before, during, verdict, consumed) -> str:
    return (
        f"before the fault: acknowledged {[a.value for a in before.acknowledged]}\n"
        f"during the fault: acknowledged {[(a.value, a.offset) for a in during.acknowledged]}, "
        f"failed {during.failed}\n"
        f"read back: {[c.value for c in consumed]}\n"
        f"verdict:\n{_show(verdict)}\n"
        "the run:\n" + "\n".join(cluster.timeline) + f"\nthe brokers' logs: {cluster.directory / 'logs'}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(4)
def test_acks_1_loses_what_the_leader_alone_acknowledged(request):
    says = lab.can_lose_acknowledged(1, 3, 2, False)
    assert says is True, (
        "can_lose_acknowledged(acks=1, replication 3, min.insync 2, no unclean election) says False, "
        "but this is the run that loses acknowledged values"
    )
    written(lab.produce, lab.consume, lab.validate)
    cluster = request.getfixturevalue("cluster")
    before, during, verdict, consumed = crash_the_leader_while_its_followers_are_frozen(cluster, 1)
    report = _run_report(cluster, before, during, verdict, consumed)
    assert sorted(a.value for a in during.acknowledged) == sorted(f"during-{i}" for i in range(10)), (
        f"with acks=1 the leader alone acknowledges every value, followers frozen or not:\n{report}"
    )
    assert [a.value for a in verdict.found] == [f"before-{i}" for i in range(5)], (
        f"the values the followers had copied before the fault survive it:\n{report}"
    )
    assert sorted(a.value for a in verdict.lost) == sorted(a.value for a in during.acknowledged), (
        "every value acknowledged while the followers were frozen is lost: only the dead leader had it, "
        f"the new leader never did, and the old leader truncated it when it came back:\n{report}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(4)
def test_acks_all_loses_nothing_acknowledged(request):
    says = lab.can_lose_acknowledged(-1, 3, 2, False)
    assert says is False, (
        "can_lose_acknowledged(acks=all, replication 3, min.insync 2, no unclean election) says True; "
        "this run shows it does not lose what it acknowledged"
    )
    written(lab.produce, lab.consume, lab.validate)
    cluster = request.getfixturevalue("cluster")
    before, during, verdict, consumed = crash_the_leader_while_its_followers_are_frozen(cluster, -1)
    report = _run_report(cluster, before, during, verdict, consumed)
    during_values = {f"during-{i}" for i in range(10)}
    answered = {a.value for a in during.acknowledged} | set(during.failed)
    assert answered == during_values and not {a.value for a in during.acknowledged} & set(during.failed), (
        f"each value is either acknowledged or failed, once:\n{report}"
    )
    assert [a.value for a in verdict.found][:5] == [f"before-{i}" for i in range(5)], report
    assert verdict.lost == [], (
        "with acks=all nothing acknowledged may be lost: the leader acknowledges only what every replica "
        f"in the ISR has, and the new leader came from the ISR:\n{report}"
    )
