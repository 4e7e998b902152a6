"""``kafka-lite perf consumer`` against the session's cluster: it reads exactly N records in a new
group and prints Kafka's header and summary line, whose counts and bytes match what was written; the
detailed lines; the progress bar at a terminal; a topic that runs dry before N is an error naming the
timeout; every bad argument is one line naming what is wrong."""

from __future__ import annotations

import re

import pytest
from kafka import KafkaProducer

from kafka_lite.cli.main import main
from kafka_lite.utils.ports import free_port
from tests.support.topics import topic_name

DATE = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}"
NUMBER = r"(\d+\.\d{4})"
# Kafka's summary line: start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg,
# nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
SUMMARY = re.compile(
    rf"^({DATE}), ({DATE}), {NUMBER}, {NUMBER}, (\d+), {NUMBER}, (\d+), (-?\d+), {NUMBER}, {NUMBER}$"
)
HEADER = (
    "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
    "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
)
VALUE_SIZE, KEY_SIZE = 100, 4


def produce(bootstrap: str, topic: str, n: int) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    try:
        for i in range(n):
            producer.send(topic, b"v" * VALUE_SIZE, key=b"%04d" % (i % 10_000))
        producer.flush(timeout=30)
    finally:
        producer.close()


@pytest.fixture(scope="module")
def topic(cluster) -> str:
    """3,000 records with 4-byte keys and 100-byte values over three partitions."""
    name = topic_name("perf-consumer")
    cluster.create_topic(name, partitions=3)
    produce(cluster.bootstrap_servers, name, 3000)
    return name


@pytest.mark.integration
@pytest.mark.xdist_group("cluster")
def test_reads_n_records_and_prints_kafkas_header_and_summary(cluster, topic, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")  # the summary is one line however narrow the terminal
    code = main(["perf", "consumer", "--bootstrap-server", cluster.bootstrap_servers, "--topic", topic,
                 "--messages", "2345", "--timeout", "30000"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0 and err == "", "no progress bar when stderr is not a terminal"
    header, summary = out.splitlines()
    assert header == HEADER
    m = SUMMARY.match(summary)
    assert m, f"not Kafka's summary format: {summary!r}"
    start, end, mb, mb_sec, n, n_sec, rebalance_ms, fetch_ms, fetch_mb_sec, fetch_n_sec = m.groups()
    assert int(n) == 2345, "exactly --messages records, though polls bring up to 500 (max.poll.records)"
    assert float(mb) == pytest.approx(2345 * (KEY_SIZE + VALUE_SIZE) / 2**20, abs=1e-4), "keys and values"
    assert start <= end
    assert int(rebalance_ms) >= 0 and int(fetch_ms) >= 0
    assert float(fetch_n_sec) >= float(n_sec) > 0, "the fetch rate leaves the rebalance time out"
    assert float(fetch_mb_sec) >= float(mb_sec) > 0


@pytest.mark.integration
@pytest.mark.xdist_group("cluster")
def test_from_latest_and_a_dry_topic_fail_naming_the_timeout(cluster, topic, capsys):
    code = main(["perf", "consumer", "--bootstrap-server", cluster.bootstrap_servers, "--topic", topic,
                 "--messages", "10", "--from-latest", "--timeout", "1500", "--hide-header"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 1
    m = SUMMARY.match(out.strip())
    assert m and m.group(5) == "0", f"the summary of what was read (nothing after the log end): {out!r}"
    assert err.startswith("kafka-lite perf: Exiting before consuming the expected number of messages: ")
    assert "timeout (1500 ms) exceeded after 0 of 10" in err and "--timeout option" in err


@pytest.mark.integration
@pytest.mark.xdist_group("cluster")
def test_detailed_stats_replace_the_summary(cluster, topic, capsys):
    code = main(["perf", "consumer", "--bootstrap-server", cluster.bootstrap_servers, "--topic", topic,
                 "--messages", "3000", "--show-detailed-stats", "--reporting-interval", "1",
                 "--timeout", "30000", "--group", topic_name("perf-group")])  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 0
    header, *lines = out.splitlines()
    assert header.startswith("time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, ")
    assert lines, "a line at least every poll with a 1 ms interval"
    detailed = re.compile(
        rf"^{DATE}, 0, {NUMBER}, {NUMBER}, (\d+), {NUMBER}, (\d+), (-?\d+), {NUMBER}, {NUMBER}$"
    )
    counts = []
    for line in lines:
        m = detailed.match(line)
        assert m, f"not Kafka's detailed line: {line!r}"
        counts.append(int(m.group(3)))
    assert counts == sorted(counts) and counts[-1] <= 3000, "running totals"


@pytest.mark.integration
@pytest.mark.xdist_group("cluster")
def test_a_progress_bar_at_a_terminal_unless_told_not_to(cluster, topic, capsys, monkeypatch):
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # rich takes stdout and stderr for terminals
    perf = ["perf", "consumer", "--bootstrap-server", cluster.bootstrap_servers, "--topic", topic,
            "--messages", "500", "--hide-header"]  # fmt: skip
    assert main(perf) == 0
    out, err = capsys.readouterr()
    assert re.search(r"500/500\S* records read", err), "the bar, on stderr, at its end"
    assert SUMMARY.match(out.strip()), f"stdout holds the summary line alone: {out!r}"
    assert main([*perf, "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and SUMMARY.match(out.strip())


# -- bad arguments ------------------------------------------------------------------------------------------


def _perf(*args: str) -> list[str]:
    return ["perf", "consumer", "--bootstrap-server", f"127.0.0.1:{free_port()}", "--topic", "t",
            "--messages", "10", *args]  # fmt: skip


@pytest.mark.unit
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--messages", "0"], "argument --messages: 0 records: give at least 1"),
        (["--messages", "many"], "argument --messages: 'many' is not a whole number"),
        (["--timeout", "0"], "argument --timeout: 0 ms: give at least 1"),
        (["--timeout", "soon"], "argument --timeout: 'soon' is not a whole number of ms"),
        (["--fetch-size", "1M"], "argument --fetch-size: '1M' is not a whole number of bytes"),
        (["--reporting-interval", "-1"], "argument --reporting-interval: -1 ms: give at least 1"),
    ],
)
def test_options_of_the_wrong_kind_are_named(capsys, args, message):
    with pytest.raises(SystemExit) as e:
        main(_perf(*args))
    assert e.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.unit
def test_required_options_are_named(capsys):
    with pytest.raises(SystemExit) as e:
        main(["perf", "consumer", "--topic", "t"])
    assert e.value.code == 2
    assert (
        "the following arguments are required: --bootstrap-server/--broker-list, --messages"
        in capsys.readouterr().err
    )


@pytest.mark.unit
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--consumer.config", "/nonexistent/c.properties"],
         "--consumer.config: Config file /nonexistent/c.properties does not exist"),
        (["--fetch-size", str(2**31)],
         "Invalid value '2147483648' for configuration max.partition.fetch.bytes: Value does not fit in a 32-bit integer"),
    ],
)  # fmt: skip
def test_a_bad_setting_is_named(capsys, args, message):
    assert main(_perf(*args)) == 2
    err = capsys.readouterr().err
    assert err.startswith("kafka-lite perf: ") and message in err and "Traceback" not in err


@pytest.mark.unit
def test_a_bad_setting_in_the_config_file_is_named(capsys, tmp_path):
    config = tmp_path / "consumer.properties"
    config.write_text("session.timeout.ms=soon\n")
    assert main(_perf("--consumer.config", str(config))) == 2
    err = capsys.readouterr().err
    assert (
        "Invalid value 'soon' for configuration session.timeout.ms: Expected value to be a 32-bit integer"
        in err
    )
