"""``kafka-lite streams reset`` without a cluster: every bad argument is a message naming what is wrong
(exit code 2, no traceback), before anything connects. Against the session's cluster:
tests/cli/test_streams_reset.py."""

from __future__ import annotations

import pytest

from kafka_lite.cli.main import main
from kafka_lite.utils.ports import free_port

pytestmark = pytest.mark.unit


@pytest.fixture
def nowhere() -> str:
    """A loopback address nothing listens on; these tests fail before anything connects."""
    return f"127.0.0.1:{free_port()}"


def _run(capsys, *args: str) -> tuple[int, str, str]:
    try:
        code = main(["streams", *args])
    except SystemExit as e:  # argparse's own errors: usage on stderr, exit code 2
        code = e.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["reset", "--application-id", "app"], "the following arguments are required: --bootstrap-server"),
        (["reset", "--bootstrap-server", "{b}"], "the following arguments are required: --application-id"),
        (["reset", "--application-id", " ", "--bootstrap-server", "{b}"], "--application-id cannot be empty"),
        (["reset", "--application-id", "app", "--bootstrap-server", "{b}", "--input-topics", "a,,b"],
         "argument --input-topics: 'a,,b' has an empty topic name"),
        (["reset", "--application-id", "app", "--bootstrap-server", "{b}", "--intermediate-topics", "c,c"],
         "argument --intermediate-topics: c given more than once in --intermediate-topics"),
        (["reset", "--application-id", "app", "--bootstrap-server", "{b}", "--input-topics", "bad topic"],
         "argument --input-topics: 'bad topic': Topic name \"bad topic\" is illegal"),
        (["reset", "--application-id", "app", "--bootstrap-server", "{b}", "--input-topics", "a,c",
          "--intermediate-topics", "c"], "c given in both --input-topics and --intermediate-topics"),
        (["reset", "--application-id", "app", "--bootstrap-server", "not-a-host"], "--bootstrap-server 'not-a-host'"),
        ([], "the following arguments are required: STREAMS_COMMAND"),
    ],
    ids=["no-bootstrap", "no-application-id", "empty-application-id", "empty-topic", "repeated-topic",
         "illegal-topic", "input-and-intermediate", "bad-bootstrap", "no-sub-command"],
)  # fmt: skip
def test_a_bad_argument_is_named(capsys, nowhere, args, message):
    code, out, err = _run(capsys, *[a.replace("{b}", nowhere) for a in args])
    assert code == 2, err
    assert out == ""
    assert message in " ".join(err.split()), err


def test_the_group_lists_reset_in_its_help(capsys):
    code, out, _ = _run(capsys, "--help")
    assert code == 0 and "reset" in out
    code, out, _ = _run(capsys, "reset", "--help")
    assert code == 0
    for flag in (
        "--application-id",
        "--bootstrap-server",
        "--input-topics",
        "--intermediate-topics",
        "--zookeeper",
    ):
        assert flag in out
