"""``kafka-lite console-consumer`` against the session's cluster: records written by kafka-python's
producer (an independent writer) come out one per line, with the columns the formatter's properties
ask for; a group's committed offsets after a run make the next run with that group read only what is
new; ``--partition``/``--offset`` read one partition from where they say; ``--timeout-ms`` ends a
quiet run; Ctrl-C closes the consumer cleanly (commit, leave); every bad argument is one line naming
what is wrong, exit code 2.

The command runs in this process through ``main`` (stdout and stderr captured), except for Ctrl-C,
which needs a process of its own to send SIGINT to. Every wait is a condition with a deadline."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka import KafkaConsumer as PythonConsumer

from kafka_lite.cli.main import main
from kafka_lite.utils.ports import free_port
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
# Past the default 7-day retention: the tests' topics keep records forever (retention.ms=-1), or the
# broker's retention check, every 5 minutes, would delete them at a moment no test chooses.
T0 = 1_600_000_000_000  # record i has timestamp T0 + i


def produce(bootstrap: str, topic: str, records: list[tuple], partition: int | None = 0) -> None:
    """Write ``(key, value)`` or ``(key, value, headers)`` records with kafka-python's producer, in
    order, to ``partition``; record i gets timestamp T0 + i."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    try:
        for i, (key, value, *headers) in enumerate(records):
            producer.send(topic, value, key=key, partition=partition, timestamp_ms=T0 + i,
                          headers=headers[0] if headers else None)  # fmt: skip
        producer.flush(timeout=30)
    finally:
        producer.close()


def console_consumer(capsys, *args: str) -> tuple[int, list[str], str]:
    """Run the command; its exit code, stdout's lines and stderr."""
    code = main(["console-consumer", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out.splitlines(), err


def committed(bootstrap: str, group: str, topic: str, partition: int = 0) -> int | None:
    """The group's committed offset, as kafka-python reads it (an independent reader)."""
    consumer = PythonConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        return consumer.committed(TopicPartition(topic, partition))
    finally:
        consumer.close()


@pytest.fixture
def topic(cluster) -> str:
    name = topic_name("console-topic")
    cluster.create_topic(name, partitions=1, retention_ms=-1)
    return name


# -- reading, and the formatter's columns ----------------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.xdist_group("cluster")
def test_from_beginning_prints_values_then_the_count_on_stderr(cluster, topic, capsys):
    records = [(f"k{i}".encode(), f"value {i}".encode()) for i in range(6)]
    produce(cluster.bootstrap_servers, topic, records)
    code, lines, err = console_consumer(capsys, "--bootstrap-server", cluster.bootstrap_servers,
                                        "--topic", topic, "--from-beginning", "--max-messages", "6")  # fmt: skip
    assert code == 0
    assert lines == [f"value {i}" for i in range(6)], "values only, in order, one per line"
    assert err == "Processed a total of 6 messages\n"


@pytest.mark.integration
@pytest.mark.xdist_group("cluster")
def test_print_key_with_a_separator_and_a_null_key(cluster, topic, capsys):
    produce(cluster.bootstrap_servers, topic, [(b"k0", b"v0"), (None, b"no key"), (b"k2", b"v2")])
    code, lines, _ = console_consumer(capsys, "--bootstrap-server", cluster.bootstrap_servers, "--topic", topic,
                                      "--from-beginning", "--max-messages", "3",
                                      "--property", "print.key=true", "--property", "key.separator=:")  # fmt: skip
    assert code == 0
    assert lines == ["k0:v0", "null:no key", "k2:v2"]


@pytest.mark.integration
@pytest.mark.xdist_group("cluster")
def test_timestamp_partition_offset_and_headers_columns_in_kafkas_order(cluster, topic, capsys):
    produce(cluster.bootstrap_servers, topic, [(b"k0", b"v0", [("h", b"x"), ("i", b"y")]), (b"k1", b"v1")])
    code, lines, _ = console_consumer(capsys, "--bootstrap-server", cluster.bootstrap_servers, "--topic", topic,
                                      "--from-beginning", "--max-messages", "2",
                                      "--property", "print.timestamp=true", "--property", "print.partition=true",
                                      "--property", "print.offset=true", "--property", "print.headers=true",
                                      "--property", "print.key=true")  # fmt: skip
    assert code == 0
    assert lines == [
        f"CreateTime:{T0}\tPartition:0\tOffset:0\th:x,i:y\tk0\tv0",
        f"CreateTime:{T0 + 1}\tPartition:0\tOffset:1\tNO_HEADERS\tk1\tv1",
    ]


@pytest.mark.integration
@pytest.mark.xdist_group("cluster")
def test_whitelist_subscribes_to_every_matching_topic(cluster, capsys):
    prefix = topic_name("console-wl")
    for suffix in ("a", "b"):
        cluster.create_topic(f"{prefix}-{suffix}", partitions=1, retention_ms=-1)
        produce(
            cluster.bootstrap_servers,
            f"{prefix}-{suffix}",
            [(None, f"{suffix}{i}".encode()) for i in range(3)],
        )
    cluster.create_topic(
        f"{prefix}x", partitions=1, retention_ms=-1
    )  # does not match the whole pattern below
    produce(cluster.bootstrap_servers, f"{prefix}x", [(None, b"not me")])
    code, lines, err = console_consumer(capsys, "--bootstrap-server", cluster.bootstrap_servers,
                                        "--whitelist", f"{prefix}-.*", "--from-beginning", "--timeout-ms", "3000")  # fmt: skip
    assert code == 0
    assert sorted(lines) == ["a0", "a1", "a2", "b0", "b1", "b2"]
    assert err == "Processed a total of 6 messages\n"


# -- groups: what is committed decides where the next run starts -----------------------------------------------


@pytest.mark.integration
@pytest.mark.xdist_group("cluster")
def test_a_second_run_with_the_same_group_reads_only_new_records(cluster, topic, capsys):
    bootstrap, group = cluster.bootstrap_servers, topic_name("console-group")
    produce(bootstrap, topic, [(None, f"old {i}".encode()) for i in range(6)])
    run = ["--bootstrap-server", bootstrap, "--topic", topic, "--group", group, "--from-beginning"]
    code, lines, _ = console_consumer(capsys, *run, "--max-messages", "4")
    assert (code, lines) == (0, [f"old {i}" for i in range(4)])
    # Each poll asked for no more than the records still wanted: the commit on close is at 4, not at
    # the end of what one fetch brought.
    assert committed(bootstrap, group, topic) == 4
    code, lines, _ = console_consumer(capsys, *run, "--max-messages", "2")
    assert (code, lines) == (0, ["old 4", "old 5"]), "--from-beginning counts only for a group with no offset"
    assert committed(bootstrap, group, topic) == 6

    produce(bootstrap, topic, [(None, f"new {i}".encode()) for i in range(3)])
    code, lines, err = console_consumer(capsys, *run, "--timeout-ms", "3000")
    assert (code, lines) == (0, ["new 0", "new 1", "new 2"])
    assert err == "Processed a total of 3 messages\n"
    assert committed(bootstrap, group, topic) == 9


@pytest.mark.integration
@pytest.mark.xdist_group("cluster")
def test_without_from_beginning_a_new_group_starts_at_the_end(cluster, topic, capsys):
    bootstrap = cluster.bootstrap_servers
    produce(bootstrap, topic, [(None, b"before")])
    group = topic_name("console-latest")
    code, lines, err = console_consumer(capsys, "--bootstrap-server", bootstrap, "--topic", topic,
                                        "--group", group, "--timeout-ms", "2000")  # fmt: skip
    assert (code, lines, err) == (0, [], "Processed a total of 0 messages\n")


@pytest.mark.integration
@pytest.mark.xdist_group("cluster")
def test_without_a_group_the_generated_group_commits_nothing(cluster, topic, capsys):
    bootstrap = cluster.bootstrap_servers
    produce(bootstrap, topic, [(None, b"one"), (None, b"two")])
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        before = {g["group_id"] for g in admin.list_groups()}
        code, lines, _ = console_consumer(capsys, "--bootstrap-server", bootstrap, "--topic", topic,
                                          "--from-beginning", "--max-messages", "2")  # fmt: skip
        assert (code, lines) == (0, ["one", "two"])
        (generated,) = {g["group_id"] for g in admin.list_groups()} - before
        assert re.fullmatch(r"console-consumer-\d+", generated), generated
        assert admin.list_group_offsets({generated: None})[generated] == {}, "nothing committed"
    finally:
        admin.close()


# -- one partition, assigned by hand --------------------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.xdist_group("cluster")
def test_partition_and_offset_read_one_partition_from_that_offset(cluster, capsys):
    bootstrap, topic = cluster.bootstrap_servers, topic_name("console-assign")
    cluster.create_topic(topic, partitions=3, retention_ms=-1)
    produce(bootstrap, topic, [(None, f"p1-{i}".encode()) for i in range(6)], partition=1)
    produce(bootstrap, topic, [(None, f"p2-{i}".encode()) for i in range(6)], partition=2)
    base = ["--bootstrap-server", bootstrap, "--topic", topic, "--partition", "1"]
    code, lines, _ = console_consumer(capsys, *base, "--offset", "2", "--max-messages", "3",
                                      "--property", "print.offset=true")  # fmt: skip
    assert (code, lines) == (0, ["Offset:2\tp1-2", "Offset:3\tp1-3", "Offset:4\tp1-4"])
    code, lines, _ = console_consumer(capsys, *base, "--offset", "earliest", "--timeout-ms", "2000")
    assert (code, lines) == (0, [f"p1-{i}" for i in range(6)]), "partition 1 alone, from its start"
    code, lines, _ = console_consumer(capsys, *base, "--from-beginning", "--max-messages", "1")
    assert (code, lines) == (0, ["p1-0"]), "--from-beginning starts an assigned partition at its start"
    code, lines, err = console_consumer(capsys, *base, "--timeout-ms", "1000")
    assert (code, lines, err) == (0, [], "Processed a total of 0 messages\n"), "latest by default, as Kafka"


@pytest.mark.integration
@pytest.mark.xdist_group("cluster")
def test_a_partition_the_topic_lacks_and_an_illegal_topic_name_are_named_not_waited_for(
    cluster, topic, capsys
):
    bootstrap = cluster.bootstrap_servers
    code, lines, err = console_consumer(capsys, "--bootstrap-server", bootstrap, "--topic", topic,
                                        "--partition", "3", "--timeout-ms", "500")  # fmt: skip
    assert (code, lines) == (2, [])
    assert f"--partition 3: topic {topic} has no partition 3: it has 1 partition, numbered from 0" in err
    for extra in ([], ["--partition", "0"]):
        code, lines, err = console_consumer(capsys, "--bootstrap-server", bootstrap, "--topic", "a b", *extra)
        assert (code, lines) == (1, [])
        assert 'InvalidTopicException: Topic name "a b" is illegal, it contains a character other' in err


# -- Ctrl-C ------------------------------------------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.xdist_group("cluster")
def test_ctrl_c_commits_leaves_the_group_and_reports_the_count(cluster, topic):
    bootstrap, group = cluster.bootstrap_servers, topic_name("console-sigint")
    produce(bootstrap, topic, [(None, f"r{i}".encode()) for i in range(5)])
    process = subprocess.Popen(
        [sys.executable, "-m", "kafka_lite.cli.main", "console-consumer", "--bootstrap-server", bootstrap,
         "--topic", topic, "--group", group, "--from-beginning"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    try:
        lines: list[bytes] = []
        reader = threading.Thread(
            target=lambda: lines.extend(iter(process.stdout.readline, b"")), daemon=True
        )
        reader.start()
        wait_until(lambda: len(lines) >= 5, timeout_s=60, what="the five records on the consumer's stdout")
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 130, "a Java tool's exit code after SIGINT"
        reader.join(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    err = process.stderr.read().decode()
    assert [line.decode() for line in lines] == [f"r{i}\n" for i in range(5)]
    assert "Traceback" not in err and err.endswith("Processed a total of 5 messages\n"), err
    assert committed(bootstrap, group, topic) == 5, "the close committed the positions"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        described = admin.describe_groups([group])[group]
        assert (described["group_state"], described["members"]) == ("Empty", []), "the member left its group"
    finally:
        admin.close()


# -- bad arguments ------------------------------------------------------------------------------------------


@pytest.fixture
def nowhere() -> str:
    """A loopback address nothing listens on; these runs fail before anything connects."""
    return f"127.0.0.1:{free_port()}"


@pytest.mark.unit
@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "Exactly one of whitelist/topic is required (--topic or --whitelist; neither given)."),
        (["--topic", "t", "--whitelist", "t.*"], "Exactly one of whitelist/topic is required (--topic or --whitelist; both given)."),
        (["--whitelist", "t(", ], "--whitelist 't(' is not a regular expression: missing ), unterminated subpattern"),
        (["--topic", "t", "--offset", "3"], "The partition is required when offset is specified."),
        (["--whitelist", "t.*", "--partition", "0"], "The topic is required when partition is specified."),
        (["--topic", "t", "--partition", "0", "--offset", "3", "--from-beginning"],
         "Options from-beginning and offset cannot be specified together."),
        (["--topic", "t", "--partition", "0", "--offset", "soon"],
         "The provided offset value 'soon' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long."),
        (["--topic", "t", "--partition", "0", "--offset", "-2"], "The provided offset value '-2' is incorrect."),
        (["--topic", "t", "--property", "print.key"], "--property expects key=value, got 'print.key'"),
        (["--topic", "t", "--property", "print.kye=true"], "Unknown --property print.kye: the formatter takes print.timestamp"),
        (["--topic", "t", "--property", "print.key=yes"], "--property print.key=yes: expected true or false"),
        (["--topic", "t", "--consumer-property", "fetch.min.bytes"],
         "--consumer-property expects key=value, got 'fetch.min.bytes'"),
        (["--topic", "t", "--consumer-property", "fetch.min.byte=5"],
         "Unknown configuration 'fetch.min.byte' (did you mean fetch.min.bytes"),
        (["--topic", "t", "--consumer-property", "max.poll.records=0"],
         "Invalid value 0 for configuration max.poll.records: Value must be at least 1"),
        (["--topic", "t", "--consumer-property", "auto.offset.reset=smallest"],
         "Invalid value 'smallest' for configuration auto.offset.reset: String must be one of: latest, earliest, none"),
        (["--topic", "t", "--group", "a", "--consumer-property", "group.id=b"],
         "The group ids provided in different places (directly using '--group', via '--consumer-property', or via "
         "'--consumer.config') do not match. Detected group ids: 'a', 'b'"),
        (["--topic", "t", "--from-beginning", "--consumer-property", "auto.offset.reset=latest"],
         "Can't simultaneously specify --from-beginning and 'auto.offset.reset=latest', please remove one option"),
        (["--topic", "t", "--consumer.config", "/nonexistent/consumer.properties"],
         "--consumer.config: Config file /nonexistent/consumer.properties does not exist"),
    ],
)  # fmt: skip
def test_a_bad_combination_or_setting_is_named(capsys, nowhere, args, message):
    code = main(["console-consumer", "--bootstrap-server", nowhere, *args])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("kafka-lite console-consumer: ") and message in err, err
    assert "Traceback" not in err and "Processed a total" not in err, "nothing was consumed: no count"


@pytest.mark.unit
def test_a_bad_bootstrap_server_is_named(capsys):
    code = main(["console-consumer", "--bootstrap-server", "localhost", "--topic", "t"])
    assert code == 2 and "Invalid bootstrap server 'localhost': expected host:port" in capsys.readouterr().err


@pytest.mark.unit
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-messages", "ten"], "argument --max-messages: 'ten' is not a whole number"),
        (["--max-messages", "0"], "argument --max-messages: 0: the number of messages must be at least 1"),
        (["--timeout-ms", "-5"], "argument --timeout-ms: -5: a timeout must be at least 0"),
        (["--partition", "one"], "argument --partition: 'one' is not a whole number"),
        (["--partition", "-1"], "argument --partition: -1: a partition must be at least 0"),
    ],
)
def test_options_of_the_wrong_kind_are_named(capsys, nowhere, args, message):
    with pytest.raises(SystemExit) as e:
        main(["console-consumer", "--bootstrap-server", nowhere, "--topic", "t", *args])
    assert e.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.unit
def test_the_bootstrap_server_is_required(capsys):
    with pytest.raises(SystemExit) as e:
        main(["console-consumer", "--topic", "t"])
    assert (
        e.value.code == 2
        and "the following arguments are required: --bootstrap-server" in capsys.readouterr().err
    )


@pytest.mark.unit
def test_timeout_ms_ends_the_run_when_the_brokers_are_down(capsys, nowhere):
    """The consumer looks for its group's coordinator no longer than the poll's timeout, so the tool
    ends after --timeout-ms even when no broker answers (0.10.1's tool waited for ever)."""
    code = main(["console-consumer", "--bootstrap-server", nowhere, "--topic", "t", "--timeout-ms", "200"])
    out, err = capsys.readouterr()
    assert (code, out) == (0, "")
    assert err.endswith("Processed a total of 0 messages\n") and "Traceback" not in err


@pytest.mark.unit
def test_with_partition_brokers_that_do_not_answer_are_named_after_timeout_ms(capsys, nowhere):
    """--partition first asks the brokers for the topic's partitions; when none answers within
    --timeout-ms that is an error naming them, not a quiet run."""
    code = main(["console-consumer", "--bootstrap-server", nowhere, "--topic", "t", "--partition", "0",
                 "--timeout-ms", "300"])  # fmt: skip
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert (f"Timeout expired while fetching topic metadata (300 ms) (from --bootstrap-server {nowhere}: "
            "are the brokers up?)") in err and "Traceback" not in err  # fmt: skip
