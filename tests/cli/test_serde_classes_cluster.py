"""Kafka's (de)serializer class names through ``kafka-lite console-producer`` and ``console-consumer``
on the session's cluster: longs written by the producer's ``--value-serializer`` are 8 bytes to an
independent reader (kafka-python) and numbers again to the consumer's ``value.deserializer``; a
record the deserializer cannot read stops the consumer with a line naming it."""

from __future__ import annotations

import io
import struct
import sys

import pytest

from kafka_lite.cli.main import main
from tests.support.topics import consume_all, topic_name

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]

P = "org.apache.kafka.common.serialization."


def test_longs_go_in_and_come_out_through_kafkas_class_names(cluster, monkeypatch, capsys):
    bootstrap, topic = cluster.bootstrap_servers, topic_name("serde-longs")
    cluster.create_topic(topic, partitions=1)
    monkeypatch.setattr(
        sys, "stdin", io.TextIOWrapper(io.BytesIO(b"apples:3\npears:-12\nplums:9000000000\n"))
    )
    code = main(["console-producer", "--bootstrap-server", bootstrap, "--topic", topic,
                 "--property", "parse.key=true", "--property", "key.separator=:",
                 "--key-serializer", P + "StringSerializer", "--value-serializer", P + "LongSerializer"])  # fmt: skip
    assert (code, capsys.readouterr().err) == (0, "")
    written = [(r.key, r.value) for r in consume_all(bootstrap, topic, 1, 3)]
    assert written == [(b"apples", struct.pack(">q", 3)), (b"pears", struct.pack(">q", -12)),
                       (b"plums", struct.pack(">q", 9_000_000_000))], "8-byte big-endian longs"  # fmt: skip

    # Kafka's quick start spelling: --formatter, print.key, the two deserializer properties
    read = ["console-consumer", "--bootstrap-server", bootstrap, "--topic", topic, "--from-beginning",
            "--formatter", "kafka.tools.DefaultMessageFormatter", "--property", "print.key=true",
            "--property", "key.deserializer=" + P + "StringDeserializer",
            "--property", "value.deserializer=" + P + "LongDeserializer"]  # fmt: skip
    code = main([*read, "--max-messages", "3"])
    out, err = capsys.readouterr()
    assert (code, out) == (0, "apples\t3\npears\t-12\nplums\t9000000000\n")
    assert err == "Processed a total of 3 messages\n"

    # a value that is not 8 bytes: the consumer stops at it, naming the record, after the ones it printed
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"figs:many\n")))
    code = main(["console-producer", "--bootstrap-server", bootstrap, "--topic", topic,
                 "--property", "parse.key=true", "--property", "key.separator=:"])  # fmt: skip
    assert code == 0
    capsys.readouterr()
    # --value-deserializer wins over the property, as Kafka 0.11 sets it after the properties
    code = main([*read[:5], *read[6:], "--partition", "0", "--offset", "3", "--max-messages", "1",
                 "--value-deserializer", P + "StringDeserializer"])  # fmt: skip
    assert (code, capsys.readouterr().out) == (0, "figs\tmany\n")
    code = main([*read, "--timeout-ms", "5000"])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "apples\t3\npears\t-12\nplums\t9000000000\n")
    assert (
        f"SerializationException: Size of data received by LongDeserializer is not 8: the value of {topic}-0 "
        "at offset 3 (4 bytes) is not what LongDeserializer reads"
    ) in err and "Traceback" not in err, err
