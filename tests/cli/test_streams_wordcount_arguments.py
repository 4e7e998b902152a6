"""``kafka-lite streams wordcount`` without a cluster: a bad argument or setting is a message naming
it (exit code 2, no traceback), before anything connects. On the cluster:
tests/streams/cluster/test_streams_cli.py."""

from __future__ import annotations

import pytest

from kafka_lite.cli.main import main
from kafka_lite.utils.ports import free_port

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "the following arguments are required: --bootstrap-server"),
        (["--property", "num.stream.threads"], "--property 'num.stream.threads': expected KEY=VALUE"),
        (
            ["--property", "num.threads=2"],
            "Unknown configuration 'num.threads' (did you mean num.stream.threads?)",
        ),
        (["--property", "num.stream.threads=0"], "num.stream.threads"),
        (["--property", "commit.interval.ms=soon"], "commit.interval.ms"),
        (["--input-topic", "no spaces"], "--input-topic:"),
        (["--output-topic", ".."], "--output-topic:"),
        (["--application-id", ""], "application id must not be empty"),
    ],
)
def test_a_bad_argument_is_named_before_anything_connects(capsys, args, message):
    bootstrap = [] if not args else ["--bootstrap-server", f"127.0.0.1:{free_port()}"]
    try:
        code = main(["streams", "wordcount", *bootstrap, *args])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    assert code == 2
    assert message in out + err
    assert "Traceback" not in err
