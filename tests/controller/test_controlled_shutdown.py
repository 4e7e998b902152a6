"""Controlled shutdown on a real 3-broker cluster of processes (`kafka-lite cluster shutdown N`, book
7.4): the controller moves every leadership off the broker while it is still registered, producers
with acks=all lose nothing acknowledged, the broker restarts, and ``cluster down`` (whose last broker
has nowhere to move its leaderships) stays fast. One cluster for all of it."""

from __future__ import annotations

import json
import threading
from datetime import datetime

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.cli.main import main
from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.common.errors import RetriableException
from kafka_lite.zk.zk_utils import BROKER_IDS_PATH, ZkUtils, topic_partition_state_path
from tests.support.processes import cluster_up
from tests.support.topics import read_topic
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

TOPIC = "moving"
PARTITIONS = 3
OVERRIDES = [
    "replica.lag.time.max.ms=2000",
    "replica.fetch.backoff.ms=100",
    "replica.fetch.wait.max.ms=200",
    "zookeeper.session.timeout.ms=4000",
]


# The broker's log lines of a controlled shutdown: its start, each attempt after a backoff, and
# giving up; Kafka's attempts and backoff (the local brokers run with a shorter one).
STARTING, RETRY = "starting controlled shutdown", "Retrying controlled shutdown"
UNCLEAN = "Proceeding to do an unclean shutdown"
MAX_RETRIES, KAFKA_RETRY_BACKOFF_S = 3, 5.0


def logged_at(line: str) -> datetime:
    """The time a broker's log line was written (``[2026-01-01 12:00:00,123] ...``)."""
    return datetime.strptime(line[1 : line.index("]")], "%Y-%m-%d %H:%M:%S,%f")


class Load:
    """Two acks=all producers sending in a thread until stopped: one with the default retries (0),
    one that retries. Every future is kept, to tell acknowledged records from failed ones."""

    def __init__(self, bootstrap: str) -> None:
        self.producers = {
            "default": KafkaProducer(bootstrap_servers=bootstrap, acks="all"),
            "retrying": KafkaProducer(
                bootstrap_servers=bootstrap, acks="all", retries=10, retry_backoff_ms=100
            ),
        }
        self.futures: dict[str, list] = {name: [] for name in self.producers}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="load", daemon=True)

    def _run(self) -> None:
        i = 0
        while not self.stop.is_set():
            for name, producer in self.producers.items():
                value = f"{name}-{i}".encode()
                self.futures[name].append((value, producer.send(TOPIC, value, partition=i % PARTITIONS)))
            i += 1
            if i % 20 == 0:
                for producer in self.producers.values():
                    producer.flush(30)  # paces the load: at most 20 records each in flight

    def sent(self, name: str) -> int:
        return len(self.futures[name])

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(60)
        assert not self.thread.is_alive(), "the producing thread did not stop"
        for producer in self.producers.values():
            producer.flush(30)
            producer.close()

    def acknowledged(self, name: str) -> list[bytes]:
        return [v for v, f in self.futures[name] if f.succeeded()]

    def errors(self, name: str) -> list[BaseException]:
        return [f.exception for _, f in self.futures[name] if f.failed()]


def leaders(zk: ZkUtils) -> dict[int, int]:
    return {p: zk.get_partition_state(TOPIC, p).leader_and_isr.leader for p in range(PARTITIONS)}


def test_a_controlled_shutdown_moves_every_leader_off_the_broker_before_it_exits(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "200")  # one log line per line
    d = tmp_path / "cluster"
    args = ["--dir", str(d)]
    zk_port, base = cluster_up(args, OVERRIDES)
    bootstrap = ",".join(f"127.0.0.1:{base + i}" for i in range(3))  # any one of them may be stopped
    zk = ZkUtils(f"127.0.0.1:{zk_port}", 6000, 6000)
    load = None
    try:
        admin = KafkaAdminClient(bootstrap)
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, 3)])
        admin.close()
        wait_until(
            lambda: all(
                (s := zk.get_partition_state(TOPIC, p)) is not None and len(s.leader_and_isr.isr) == 3
                for p in range(PARTITIONS)
            ),
            what="an ISR of three for every partition",
        )
        controller = zk.get_controller_id()
        victim = next(b for b in leaders(zk).values() if b != controller)  # a broker that leads
        led = sorted(p for p, b in leaders(zk).items() if b == victim)

        load = Load(bootstrap)
        load.thread.start()
        wait_until(lambda: all(load.sent(n) > 100 for n in load.futures), what="the load to start")

        # What ZooKeeper says, in its own order: one session's watches fire in the order of the
        # changes (their zxids), and each callback reads the znode after its change. So the leaders
        # recorded before the victim's registration went are what ZooKeeper held while it was still
        # registered, however slowly this process runs.
        seen: list[tuple[str, int, object]] = []
        for p in range(PARTITIONS):

            def on_state(data, _stat, _event=None, p=p) -> None:
                if data is not None:
                    seen.append(("leader", p, json.loads(data)["leader"]))

            zk.client.DataWatch(topic_partition_state_path(TOPIC, p), on_state)

        def on_registration(data, _stat, _event=None) -> bool | None:
            if data is None:
                seen.append(("deregistered", victim, None))
                return False  # the watch's work is done
            return None

        zk.client.DataWatch(f"{BROKER_IDS_PATH}/{victim}", on_registration)
        capsys.readouterr()
        assert main(["cluster", "shutdown", str(victim), *args]) == 0
        out = capsys.readouterr().out
        assert f"leadership of {len(led)} partitions moved to other brokers" in out, out
        wait_until(lambda: ("deregistered", victim, None) in seen, what="the victim's registration to go")
        while_registered = seen[: seen.index(("deregistered", victim, None))]
        last_leaders = {p: leader for _, p, leader in while_registered}
        assert set(last_leaders) == set(range(PARTITIONS)), while_registered
        assert victim not in last_leaders.values(), (victim, while_registered)
        assert zk.get_broker(victim) is None, "a clean shutdown ends its registration at once"

        sent_at_shutdown = {n: load.sent(n) for n in load.futures}
        wait_until(
            lambda: all(load.sent(n) > sent_at_shutdown[n] + 100 for n in load.futures),
            what="more records after the shutdown",
        )
        load.finish()
        # The producer that retries saw no error at all; the one with Kafka's default of no retries
        # saw only errors a retry would have fixed (a request that reached the old leader just as
        # its leadership moved), never one that means data was refused.
        assert load.errors("retrying") == []
        assert all(isinstance(e, RetriableException) for e in load.errors("default")), load.errors("default")
        records = {r.value for r in read_topic(bootstrap, TOPIC)}
        for name in load.futures:
            acknowledged = load.acknowledged(name)
            assert len(acknowledged) > 200
            missing = [v for v in acknowledged if v not in records]
            assert not missing, f"{len(missing)} acknowledged records of {name} lost, e.g. {missing[:3]}"

        # The broker starts again on its data and rejoins every ISR.
        assert main(["cluster", "restart", str(victim), *args]) == 0
        wait_until(
            lambda: all(
                victim in zk.get_partition_state(TOPIC, p).leader_and_isr.isr for p in range(PARTITIONS)
            ),
            what=f"broker {victim} back in every ISR",
        )
    finally:
        if load is not None and not load.stop.is_set():
            load.finish()
        zk.close()
        downed = main(["cluster", "down", *args])
    assert downed == 0
    # The last broker to stop has nowhere to move its leaderships: it tries its
    # controlled.shutdown.max.retries attempts, the short backoff the local brokers run with apart,
    # then stops anyway. Read in its own log, whose clock is its own: from its start to its giving
    # up is two backoffs and three requests to itself, far below two of Kafka's 5 s backoffs,
    # however busy the machine (which lengthens the whole `cluster down`, the other brokers' and
    # ZooKeeper's stops with it).
    [last] = [p.read_text() for p in (d / "logs").glob("broker-*.log") if UNCLEAN in p.read_text()]
    # its last controlled shutdown (from the start of that line), not one before a restart
    final = last[last.rfind("\n", 0, last.rindex(STARTING)) + 1 :]
    attempts = [line for line in final.splitlines() if STARTING in line or RETRY in line or UNCLEAN in line]
    assert [RETRY in line for line in attempts].count(True) == MAX_RETRIES - 1 and UNCLEAN in attempts[-1], (
        attempts
    )
    gave_up_s = (logged_at(attempts[-1]) - logged_at(attempts[0])).total_seconds()
    assert gave_up_s < (MAX_RETRIES - 1) * KAFKA_RETRY_BACKOFF_S, (gave_up_s, attempts)
