"""kafka-lite replica-verification: the replicas' batches compared round by round (on record bytes built
here, diverging on purpose), and on the session's real cluster, where a paused follower shows as lag."""

from __future__ import annotations

import re

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.cli import replica_verification
from kafka_lite.cli.main import main
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.tools.replica_verification_tool import (
    PartitionData,
    ReplicaBuffer,
    ReplicasDivergedException,
    whitelist,
)
from kafka_lite.utils.ports import free_port
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

TP = ("orders", 0)


def batches(*spans: tuple[int, int], value: bytes = b"v") -> bytes:
    """Batches covering the offsets of each ``(base, count)``, back to back, as a log holds them."""
    return b"".join(
        bytes(MemoryRecords.with_records([(1000, None, value)] * count, base_offset=base).buffer())
        for base, count in spans
    )


def buffer(time: MockTime, lines: list[str], start: int = 0, replicas: int = 3) -> ReplicaBuffer:
    return ReplicaBuffer({TP: replicas}, {TP: start}, report_interval_ms=0, out=lines.append, time=time)


@pytest.mark.unit
def test_replicas_that_agree_are_verified_up_to_their_high_watermarks():
    time, lines = MockTime(), []
    rb = buffer(time, lines)
    log = batches((0, 3), (3, 2), (5, 4))  # offsets 0-8 in three batches
    rb.add_fetched_data(TP, 0, PartitionData(9, log))  # the leader: all committed
    rb.add_fetched_data(TP, 1, PartitionData(9, log))
    rb.add_fetched_data(TP, 2, PartitionData(5, log))  # a follower whose HW is one fetch behind
    rb.verify_checksum()
    # the last batch ends at 8, at or above follower 2's HW: verified up to 5, where it stops
    assert rb.get_offset(TP) == 5
    (line,) = lines
    stamp, _, report = line.partition(": ")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}", stamp), "Kafka's time format"
    assert report == "max lag is 4 for partition [orders,0] at offset 5 among 1 partitions"
    # the next round fetches from 5 and finds the rest, now below every HW
    rest = batches((5, 4))
    for replica in (0, 1, 2):
        rb.add_fetched_data(TP, replica, PartitionData(9, rest))
    rb.verify_checksum()
    assert rb.get_offset(TP) == 9 and lines[-1].endswith(
        "max lag is 0 for partition [orders,0] at offset 9 among 1 partitions"
    )


@pytest.mark.unit
def test_a_replica_missing_batches_holds_the_check_and_the_lag_counts_them():
    time, lines = MockTime(), []
    rb = buffer(time, lines, replicas=2)
    rb.add_fetched_data(TP, 0, PartitionData(7, batches((0, 3), (3, 4))))
    rb.add_fetched_data(TP, 1, PartitionData(3, batches((0, 3))))  # stopped fetching after offset 2
    rb.verify_checksum()
    assert rb.get_offset(TP) == 3
    assert lines[-1].endswith("max lag is 4 for partition [orders,0] at offset 3 among 1 partitions")


@pytest.mark.unit
def test_other_bytes_at_the_same_offsets_are_reported_and_the_check_goes_on():
    time, lines = MockTime(), []
    rb = buffer(time, lines, replicas=2)
    rb.add_fetched_data(TP, 0, PartitionData(5, batches((0, 2), (2, 3))))
    rb.add_fetched_data(TP, 1, PartitionData(5, batches((0, 2), (2, 3), value=b"x")))
    rb.verify_checksum()
    assert rb.get_offset(TP) == 5
    mismatches = [line for line in lines if "unmatched checksum" in line]
    assert len(mismatches) == 2
    assert re.search(
        r": partition \[orders,0\] has unmatched checksum at offset 1; replica 0's checksum \d+; "
        r"replica 1's checksum \d+$",
        mismatches[0],
    )
    checksums = re.findall(r"checksum (\d+)", mismatches[0])
    assert checksums[0] != checksums[1]


@pytest.mark.unit
def test_batches_ending_at_different_offsets_mean_the_replicas_diverged():
    time, lines = MockTime(), []
    rb = buffer(time, lines, replicas=2)
    rb.add_fetched_data(TP, 0, PartitionData(6, batches((0, 2), (2, 4))))
    rb.add_fetched_data(TP, 1, PartitionData(6, batches((0, 2), (2, 3), (5, 1))))
    with pytest.raises(ReplicasDivergedException) as e:
        rb.verify_checksum()
    assert str(e.value).endswith(
        ": partition [orders,0]: replica 0's offset 5 doesn't match replica 1's offset 4"
    )
    assert rb.get_offset(TP) == 2, "verified up to the last batch both held alike"


@pytest.mark.unit
def test_a_replica_that_did_not_answer_stops_the_round():
    rb = buffer(MockTime(), [])
    rb.add_fetched_data(TP, 0, PartitionData(3, batches((0, 3))))
    with pytest.raises(Exception, match=r"fetched 1 replicas for \[orders,0\], but expected 3 replicas"):
        rb.verify_checksum()


@pytest.mark.unit
def test_reports_come_once_per_interval():
    time, lines = MockTime(), []
    rb = ReplicaBuffer({TP: 1}, {TP: 0}, report_interval_ms=1000, out=lines.append, time=time)
    for step in (0, 400, 700, 300):
        time.sleep(step)
        rb.add_fetched_data(TP, 0, PartitionData(0, b""))
        rb.verify_checksum()
    assert (len(lines), rb.reports) == (1, 1), "one report: 1,100 ms after the start, none at 400 or 1,400"


@pytest.mark.unit
def test_the_white_list_is_kafkas():
    assert whitelist("orders,pay.*").fullmatch("payments")
    assert not whitelist("orders").fullmatch("orders-eu"), "the whole name must match"
    assert whitelist(" 'orders' ").fullmatch("orders")


@pytest.mark.unit
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--broker-list", "localhost"], "--broker-list 'localhost': Invalid bootstrap server 'localhost'"),
        (["--broker-list", "127.0.0.1:9", "--topic-white-list", "("], "--topic-white-list: ( is an invalid regex"),
    ],
)  # fmt: skip
def test_bad_arguments_are_named(capsys, args, message):
    assert main(["replica-verification", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and message in err and "Traceback" not in err


@pytest.mark.unit
@pytest.mark.parametrize(("option", "value"), [("--time", "-3"), ("--time", "now"), ("--max-wait-ms", "-1")])
def test_bad_numbers_are_usage_errors(capsys, option, value):
    with pytest.raises(SystemExit) as e:
        main(["replica-verification", "--broker-list", "127.0.0.1:9", option, value])
    assert e.value.code == 2
    assert f"argument {option}: {value}" in capsys.readouterr().err.replace("'", "")


@pytest.mark.unit
def test_brokers_that_do_not_answer_are_named(capsys, monkeypatch):
    nowhere = f"127.0.0.1:{free_port()}"
    monkeypatch.setattr(replica_verification, "REQUEST_TIMEOUT_MS", 200)
    assert main(["replica-verification", "--broker-list", nowhere]) == 1
    err = capsys.readouterr().err
    assert f"(from --bootstrap-server {nowhere}: are the brokers up?)" in err


@pytest.mark.integration
def test_on_a_cluster_replicas_agree_and_a_paused_follower_shows_as_lag(cluster, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    topic = topic_name("verify")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    leader = cluster.leader_of(topic, 0)
    partition = cluster.server(leader).replica_manager.get_partition((topic, 0))
    wait_until(lambda: len(partition.isr) == 3, what="all three replicas in the ISR")
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all", linger_ms=0)
    try:
        for i in range(20):
            producer.send(topic, b"r%d" % i, partition=i % 2)
        producer.flush()
        verify = [
            "replica-verification", "--broker-list", cluster.bootstrap_servers, "--topic-white-list", topic,
            "--time", "-2", "--report-interval-ms", "0", "--max-wait-ms", "100", "--reports", "1",
        ]  # fmt: skip

        def report() -> str:
            capsys.readouterr()
            assert main(verify) == 0
            out = capsys.readouterr().out
            assert "verification process is started." in out
            return out.splitlines()[-1]

        # Every replica answers, as the debugging consumer may read a follower: all 20 agree. (A
        # follower learns the HW one fetch after the leader moves it, and only the records below
        # every replica's HW are compared: until then the report shows a lag.)
        agreed = f": max lag is 0 for partition [{topic},0] at offset 10 among 2 partitions"
        wait_until(lambda: report().endswith(agreed), what="every replica's HW at 10, and the replicas alike")
        follower = next(s.broker_id for s in cluster.servers if s.broker_id != leader)
        fetchers = cluster.server(follower).replica_manager.replica_fetcher_manager
        fetchers.pause()
        try:
            for i in range(5):
                producer.send(topic, b"late%d" % i, partition=0)
            producer.flush(timeout=30)  # answered once the ISR has shrunk without the follower
            wait_until(lambda: follower not in partition.isr, what=f"broker {follower} out of the ISR")
            # the leader's HW is 15, the paused follower holds 10: five offsets not yet on every replica
            last = report()
            assert last.endswith(f"max lag is 5 for partition [{topic},0] at offset 10 among 2 partitions"), (
                last
            )
        finally:
            fetchers.resume()
        wait_until(lambda: len(partition.isr) == 3, what=f"broker {follower} back in the ISR")
        caught_up = f": max lag is 0 for partition [{topic},0] at offset 15 among 2 partitions"
        wait_until(
            lambda: report().endswith(caught_up), what="the follower's HW at 15, and the replicas alike"
        )
    finally:
        producer.close()


class _Admin:
    """The admin client's part the tool's set-up reads: a cluster where broker 1 is down."""

    def __init__(self, *args, **kwargs) -> None:
        from kafka_lite.clients.metadata import Cluster

        self.cluster = Cluster.from_metadata_response(
            {
                "brokers": [{"node_id": 0, "host": "127.0.0.1", "port": 9092, "rack": None}],
                "controller_id": 0,
                "topic_metadata": [
                    {
                        "topic_error_code": 0,
                        "topic": "orders",
                        "is_internal": False,
                        "partition_metadata": [
                            {"partition_error_code": 9, "partition_id": 0, "leader": 0, "replicas": [0, 1], "isr": [0]},
                            {"partition_error_code": 5, "partition_id": 1, "leader": -1, "replicas": [1], "isr": []},
                        ],
                    }
                ],
            }
        )  # fmt: skip
        self.closed = False

    def describe_cluster(self):
        return self.cluster

    def list_offsets(self, specs):
        from kafka_lite.clients.admin import ListOffsetsResultInfo

        return {tp: ListOffsetsResultInfo(42, -1) for tp in specs}

    def close(self) -> None:
        self.closed = True

    request_timeout_ms, retry_backoff_ms = 30_000, 100

    class client:  # every connection refused, as with every broker stopped
        @staticmethod
        def ready(node, now):
            return False

        @staticmethod
        def connection_failed(node):
            return True


@pytest.mark.unit
def test_replicas_on_brokers_that_are_down_and_partitions_without_a_leader_are_named_and_left_out(
    monkeypatch,
):
    from kafka_lite.tools import replica_verification_tool as tool

    monkeypatch.setattr(tool, "KafkaAdminClient", _Admin)
    lines: list[str] = []
    verifier = tool.ReplicaVerificationTool("127.0.0.1:9092", "orders", out=lines.append)
    assert lines == [
        "partition [orders,0]: replica 1 is down: not verified",
        "partition [orders,1] has no leader: not verified",
    ]
    assert verifier.partitions_per_broker == {0: [("orders", 0)]}
    assert verifier.replica_buffer.expected_replicas_per_partition == {("orders", 0): 1}
    assert verifier.replica_buffer.get_offset(("orders", 0)) == 42, "from the log end (ListOffsets -1)"
    verifier.close()
    assert verifier.admin.closed


@pytest.mark.unit
def test_a_round_no_broker_answers_backs_off_instead_of_asking_again_at_once(monkeypatch):
    from kafka_lite.tools import replica_verification_tool as tool

    monkeypatch.setattr(tool, "KafkaAdminClient", _Admin)
    time = MockTime()
    verifier = tool.ReplicaVerificationTool("127.0.0.1:9092", "orders", out=lambda line: None, time=time)
    before = time.milliseconds()
    answers = verifier.fetch_round()
    assert answers == {0: {("orders", 0): PartitionData(-1, b"")}}, (
        "no records, and no HW, from a broker that is down"
    )
    assert time.milliseconds() - before == _Admin.retry_backoff_ms
