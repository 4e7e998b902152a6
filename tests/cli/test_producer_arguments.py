"""``kafka-lite console-producer`` and ``perf producer``: every bad argument is one line naming what is
wrong, with exit code 2 and no traceback (argparse's own errors for a value of the wrong type)."""

from __future__ import annotations

import io
import sys

import pytest

from kafka_lite.cli.main import main
from kafka_lite.utils.ports import free_port

pytestmark = pytest.mark.unit


@pytest.fixture
def nowhere() -> str:
    """A loopback address nothing listens on; these tests fail before anything connects."""
    return f"127.0.0.1:{free_port()}"


def _console_producer(monkeypatch, capsys, stdin: bytes, *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = main(["console-producer", *args])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--property", "parse.key"], "--property expects key=value, got 'parse.key'"),
        (["--property", "parse.kye=true"], "Unknown --property parse.kye: the line reader takes parse.key"),
        (["--property", "parse.key=yes"], "--property parse.key=yes: expected true or false"),
        (["--producer-property", "linger.ms"], "--producer-property expects key=value, got 'linger.ms'"),
        (["--producer-property", "linger.mss=5"], "Unknown configuration 'linger.mss' (did you mean linger.ms?)"),
        (["--producer-property", "linger.ms=soon"],
         "Invalid value 'soon' for configuration linger.ms: Expected value to be a 64-bit integer"),
        (["--producer-property", "acks=2"], "Invalid value '2' for configuration acks: String must be one of"),
        (["--timeout", "-1"], "Invalid value -1 for configuration linger.ms: Value must be at least 0"),
        (["--producer.config", "/nonexistent/producer.properties"],
         "--producer.config: Config file /nonexistent/producer.properties does not exist"),
    ],
)  # fmt: skip
def test_console_producer_names_a_bad_setting(monkeypatch, capsys, nowhere, args, message):
    code, err = _console_producer(
        monkeypatch, capsys, b"", "--bootstrap-server", nowhere, "--topic", "t", *args
    )
    assert code == 2
    assert err.startswith("kafka-lite console-producer: ") and message in err


def test_console_producer_names_a_bad_bootstrap_server(monkeypatch, capsys):
    code, err = _console_producer(monkeypatch, capsys, b"", "--bootstrap-server", "localhost", "--topic", "t")
    assert code == 2 and "Invalid bootstrap server 'localhost': expected host:port" in err


def test_a_line_without_a_key_stops_the_console_producer_naming_the_line(monkeypatch, capsys, nowhere):
    code, err = _console_producer(monkeypatch, capsys, b"just a value\n", "--bootstrap-server", nowhere,
                                  "--topic", "t", "--property", "parse.key=true")  # fmt: skip
    assert code == 1
    assert "No key found on line 1: just a value" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--compression-codec", "brotli"], "argument --compression-codec: invalid choice: 'brotli'"),
        (["--request-required-acks", "2"], "argument --request-required-acks: invalid choice: '2'"),
        (["--request-timeout-ms", "soon"], "argument --request-timeout-ms: invalid int value: 'soon'"),
    ],
)
def test_console_producer_options_of_the_wrong_kind_are_named(capsys, nowhere, args, message):
    with pytest.raises(SystemExit) as e:
        main(["console-producer", "--bootstrap-server", nowhere, "--topic", "t", *args])
    assert e.value.code == 2 and message in capsys.readouterr().err


PERF = [
    "perf",
    "producer",
    "--topic",
    "t",
    "--num-records",
    "10",
    "--record-size",
    "100",
    "--throughput",
    "-1",
]


def _perf(*args: str) -> list[str]:
    """The perf command with ``args`` in place of the defaults above (a later flag wins in argparse)."""
    return [*PERF, *args]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--throughput", "fast"], "argument --throughput: 'fast' is not a number: give records/s, or -1"),
        (["--throughput", "0"], "argument --throughput: 0 records/s would send nothing"),
        (["--throughput", "nan"], "argument --throughput: 'nan': give a finite records/s"),
        (["--record-size", "-4"], "argument --record-size: -4 bytes: a record size cannot be negative"),
        (["--record-size", "1k"], "argument --record-size: '1k' is not a whole number of bytes"),
        (["--num-records", "0"], "argument --num-records: 0 records: give at least 1"),
        (["--num-records", "ten"], "argument --num-records: 'ten' is not a whole number"),
    ],
)
def test_perf_options_of_the_wrong_kind_are_named(capsys, nowhere, args, message):
    with pytest.raises(SystemExit) as e:
        main(_perf("--bootstrap-server", nowhere, *args))
    assert e.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "no brokers to connect to: give --bootstrap-server HOST:PORT"),
        (["--producer-props", "acks"], "--producer-props expects key=value, got 'acks'"),
        (["--producer-props", "bootstrap.servers=127.0.0.1:1", "ack=1"],
         "Unknown configuration 'ack' (did you mean acks?)"),
        (["--producer-props", "bootstrap.servers=127.0.0.1:1", "batch.size=big"],
         "Invalid value 'big' for configuration batch.size: Expected value to be a 32-bit integer"),
        (["--producer.config", "/nonexistent/p.properties"], "--producer.config: Config file"),
    ],
)  # fmt: skip
def test_perf_names_a_bad_setting(capsys, args, message):
    assert main(_perf(*args)) == 2
    err = capsys.readouterr().err
    assert err.startswith("kafka-lite perf: ") and message in err and "Traceback" not in err
