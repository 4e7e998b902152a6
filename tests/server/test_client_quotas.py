"""Client quotas on the session cluster: producers over their ``producer_byte_rate`` are slowed to it
by responses held back (kafka_lite's producer and librdkafka's, at once), and a quota set live in
ZooKeeper through ``kafka-lite configs`` takes effect without a restart.

The session cluster measures client rates over 2 windows of 1 s (``tests/support/cluster.py`` says
why); the throttle's code and formula are those of Kafka's 11 windows. The formula and the held
responses are proven on mock time in ``test_client_quota_manager.py``; here, that the brokers hold
real producers back, under a bound the quota's configuration sets, however loaded the machine."""

from __future__ import annotations

import threading
import time

import pytest
from confluent_kafka import Producer as CkProducer

from kafka_lite import KafkaProducer
from kafka_lite.cli.main import main
from kafka_lite.zk.zk_utils import ZkUtils
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]

QUOTA = 100_000  # bytes/s per client id, far below what either producer sends unthrottled
VALUE = b"q" * 1000
OUTSTANDING = 32  # records a producer may have unacknowledged: at the end, little is left to flush
RUN_S = 8.0
QUOTA_WINDOWS_S = 2 * 1.0  # the session cluster's quota.window.num windows of quota.window.size.seconds


class AckedBytes:
    """Bytes of the values acknowledged, with the sends held to ``OUTSTANDING`` in flight."""

    def __init__(self) -> None:
        self.acked = 0
        self.errors: list[object] = []
        self.slots = threading.Semaphore(OUTSTANDING)
        self._lock = threading.Lock()

    def on_ack(self, size: int) -> None:
        with self._lock:
            self.acked += size
        self.slots.release()

    def on_error(self, error: object) -> None:
        self.errors.append(error)
        self.slots.release()


def produce_lite(bootstrap: str, topic: str, client_id: str, stop: threading.Event, out: AckedBytes):
    with KafkaProducer(bootstrap_servers=bootstrap, client_id=client_id, linger_ms=5) as producer:
        while not stop.is_set():
            if out.slots.acquire(timeout=0.1):
                future = producer.send(topic, VALUE)
                future.add_callback(lambda _md: out.on_ack(len(VALUE)))
                future.add_errback(out.on_error)
        producer.flush(60)
        out.metrics = producer.metrics()


def produce_librdkafka(bootstrap: str, topic: str, client_id: str, stop: threading.Event, out: AckedBytes):
    producer = CkProducer({"bootstrap.servers": bootstrap, "client.id": client_id, "linger.ms": 5})

    def delivered(err, _msg) -> None:
        out.on_error(err) if err is not None else out.on_ack(len(VALUE))

    while not stop.is_set():
        if out.slots.acquire(timeout=0.1):
            producer.produce(topic, VALUE, callback=delivered)
        producer.poll(0)
    assert producer.flush(60) == 0


def set_client_quota(cluster, capsys, client_id: str, rate: int) -> None:
    """Through the configs code path, as a user would: ``/config/clients/<client-id>``, then the
    notification every broker watches."""
    code = main(
        ["configs", "--zookeeper", cluster.zk_connect, "--entity-type", "clients", "--entity-name", client_id,
         "--alter", "--add-config", f"producer_byte_rate={rate}"]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"Completed Updating config for entity: client-id '{client_id}'." in out
    wait_until(
        lambda: all(
            cluster.server(b).quota_managers.produce.quota(client_id).bound == rate for b in range(3)
        ),
        what=f"every broker to apply {client_id}'s quota",
    )


def start_producer(run, *args) -> tuple[float, threading.Event, threading.Thread, AckedBytes]:
    """A producer thread sending until told to stop: when it started, its stop, itself, its acks."""
    stop, out = threading.Event(), AckedBytes()
    thread = threading.Thread(target=run, args=(*args, stop, out), daemon=True)
    start = time.monotonic()
    thread.start()
    return start, stop, thread, out


def test_producers_over_their_quota_are_held_to_it(cluster, capsys):
    topic = topic_name("quota")
    cluster.create_topic(topic, partitions=1)  # one leader: quotas are per broker
    lite_id, rdkafka_id = topic_name("quota-lite"), topic_name("quota-rdkafka")
    set_client_quota(cluster, capsys, lite_id, QUOTA)
    set_client_quota(cluster, capsys, rdkafka_id, QUOTA)

    runs = [
        start_producer(produce_lite, cluster.bootstrap_servers, topic, lite_id),
        start_producer(produce_librdkafka, cluster.bootstrap_servers, topic, rdkafka_id),
    ]
    time.sleep(RUN_S)  # the measurement's length: the producers run for this long, as fast as allowed
    acked = {}
    for name, (start, stop, _thread, out) in zip(("kafka_lite", "librdkafka"), runs, strict=True):
        acked[name] = (out.acked, time.monotonic() - start)
        stop.set()
    for _, _stop, thread, out in runs:
        thread.join(90)
        assert not thread.is_alive() and out.errors == []
    for name, (total, elapsed_s) in acked.items():
        # The quota allows its rate over the run plus what the windows held before the first
        # throttle, and the records in flight when a response was held back; a producer not held
        # back sends many times that. A throttle that held it far too long would halve its rate.
        most = QUOTA * (elapsed_s + QUOTA_WINDOWS_S) + OUTSTANDING * len(VALUE)
        assert QUOTA * elapsed_s / 2 <= total <= most, (
            f"{name} produced {total} B in {elapsed_s:.1f} s against a quota of {QUOTA} B/s (at most {most:.0f})"
        )
    lite_metrics = runs[0][3].metrics
    assert lite_metrics["produce-throttle-time-max"] > 0, "the producer saw its responses held back"
    leader = cluster.server(cluster.leader_of(topic, 0))
    assert leader.quota_managers.produce.throttle_time_sensor(rdkafka_id).count > 0


def test_a_quota_set_live_in_zookeeper_takes_effect_without_a_restart(cluster, capsys):
    topic = topic_name("quota-live")
    cluster.create_topic(topic, partitions=1)
    client_id = topic_name("quota-live")
    with KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers, client_id=client_id, linger_ms=5
    ) as producer:
        for _ in range(20):  # 20 kB with no quota: unthrottled
            producer.send(topic, VALUE)
        producer.flush(30)
        assert producer.metrics()["produce-throttle-time-max"] == 0

        set_client_quota(cluster, capsys, client_id, 8000)
        zk = ZkUtils(cluster.zk_connect)
        try:
            assert zk.fetch_entity_config("clients", client_id) == {"producer_byte_rate": "8000"}
        finally:
            zk.close()
        # The same connection, the same broker, no restart: 40 kB at 8 kB/s, of which the two windows
        # (2 s) allow 16 kB and one request's worth at once, take seconds now.
        start = time.monotonic()
        for f in [producer.send(topic, VALUE) for _ in range(40)]:
            f.get(60)
        held_s = time.monotonic() - start
        throttle_max = producer.metrics()["produce-throttle-time-max"]
        assert throttle_max > 0 and held_s >= 1.0, (throttle_max, held_s)
