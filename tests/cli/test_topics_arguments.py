"""``kafka-lite topics`` with arguments or brokers that cannot work: one line naming what is wrong."""

from __future__ import annotations

import pytest

from kafka_lite.cli import topics
from kafka_lite.cli.main import main
from kafka_lite.utils.ports import free_port

pytestmark = pytest.mark.unit


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["topics", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_a_bad_bootstrap_server_is_named(capsys):
    code, _, err = _run(capsys, "--bootstrap-server", "localhost", "--list")
    assert code == 2 and "Invalid bootstrap server 'localhost': expected host:port" in err


def test_brokers_that_do_not_answer_fail_in_one_line_naming_them(capsys, monkeypatch):
    nowhere = f"127.0.0.1:{free_port()}"
    monkeypatch.setattr(topics, "REQUEST_TIMEOUT_MS", 200)
    code, out, err = _run(capsys, "--bootstrap-server", nowhere, "--list")
    assert (code, out) == (1, "")
    assert err == (f"kafka-lite topics: Timed out after 200 ms waiting for metadata (from "
                   f"--bootstrap-server {nowhere}: are the brokers up?)\n")  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--create"], "--create needs --topic"),
        (["--create", "--topic", "t"], "--create needs --partitions and --replication-factor"),
        (["--create", "--topic", "t", "--replica-assignment", "0:x"], "--replica-assignment '0:x'"),
        (["--create", "--topic", "t", "--partitions", "1", "--replication-factor", "1", "--config", "x"],
         "--config expects key=value, got 'x'"),
    ],
)  # fmt: skip
def test_create_names_what_it_lacks(capsys, args, message):
    code, _, err = _run(capsys, "--bootstrap-server", f"127.0.0.1:{free_port()}", *args)
    assert code == 2 and message in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bootstrap-server", "127.0.0.1:1", "--delete"], "--delete needs --topic"),
        (["--zookeeper", "127.0.0.1:1", "--delete"], "--delete needs --topic"),
        (["--zookeeper", "127.0.0.1:1", "--list"], "--zookeeper goes with --alter or --delete"),
        (["--zookeeper", "127.0.0.1:1", "--bootstrap-server", "127.0.0.1:1", "--delete", "--topic", "t"],
         "give --bootstrap-server or --zookeeper, not both"),
        (["--delete", "--topic", "t"], "--bootstrap-server is required (or --zookeeper with --alter or --delete)"),
    ],
)  # fmt: skip
def test_delete_names_what_is_wrong(capsys, args, message):
    code, _, err = _run(capsys, *args)
    assert code == 2 and message in err


def test_an_internal_topic_is_not_marked_for_deletion(capsys):
    code, out, err = _run(capsys, "--zookeeper", "127.0.0.1:1", "--delete", "--topic", "__consumer_offsets")
    assert (code, out) == (1, "")
    assert (
        "Topic __consumer_offsets is a kafka internal topic and is not allowed to be marked for deletion."
        in err
    )
