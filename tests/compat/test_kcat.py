"""kcat (Debian's, on librdkafka 2.0.2: it picks features by exact API versions) against a 3-broker
kafka_lite cluster.

On the KRaft cluster the codec-and-acks sweep runs one pair, acks=all with lz4: a codec is the
client's business, which no controller sees (``codec_and_acks_sweep``)."""

from __future__ import annotations

import shutil
import subprocess
import uuid

import pytest

from tests.support.kraft_cluster import codec_and_acks_sweep
from tests.support.topics import topic_name

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("cluster")]

KCAT = shutil.which("kcat") or shutil.which("kafkacat")


@pytest.fixture(scope="module")
def kcat():
    if KCAT is None:
        pytest.fail("kcat is not installed: scripts/bootstrap installs it (apt-get install kcat)")
    return KCAT


def run(kcat: str, *args: str, input: bytes | None = None) -> bytes:
    result = subprocess.run([kcat, *args], input=input, capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    return result.stdout


def test_metadata_lists_brokers_and_topics(cluster, kcat):
    name = topic_name("kcat-meta")
    cluster.create_topic(name, partitions=3)
    out = run(kcat, "-b", cluster.bootstrap_servers, "-L").decode()
    assert "3 brokers:" in out
    assert f'topic "{name}" with 3 partitions' in out


@codec_and_acks_sweep(["0", "1", "all"], ["none", "gzip", "snappy", "lz4"], on_kraft=("all", "lz4"))
def test_produce_and_consume_every_codec_and_acks(cluster, kcat, acks, codec):
    name = topic_name("kcat")
    cluster.create_topic(name, partitions=3)
    lines = [f"k{i}:value-{i}-{uuid.uuid4().hex}" for i in range(200)]
    run(kcat, "-b", cluster.bootstrap_servers, "-P", "-t", name, "-K:", "-z", codec, "-X", f"acks={acks}",
        input="\n".join(lines).encode() + b"\n")  # fmt: skip
    out = run(kcat, "-b", cluster.bootstrap_servers, "-C", "-t", name, "-o", "beginning", "-e", "-q",
              "-f", "%k:%s\n", "-c", "200")  # fmt: skip
    assert sorted(out.decode().splitlines()) == sorted(lines)


def test_consume_from_an_offset_and_query_offset_by_time(cluster, kcat):
    name = topic_name("kcat-offsets")
    cluster.create_topic(name, partitions=1)
    run(kcat, "-b", cluster.bootstrap_servers, "-P", "-t", name, "-p", "0",
        input="\n".join(f"v{i}" for i in range(30)).encode() + b"\n")  # fmt: skip
    out = run(
        kcat,
        "-b",
        cluster.bootstrap_servers,
        "-C",
        "-t",
        name,
        "-p",
        "0",
        "-o",
        "25",
        "-e",
        "-q",
        "-f",
        "%o=%s\n",
    )
    assert out.decode().splitlines() == [f"{i}=v{i}" for i in range(25, 30)]
    # -Q asks ListOffsets for the first offset at or after a timestamp; every record is older than now+1h
    out = run(kcat, "-b", cluster.bootstrap_servers, "-Q", "-t", f"{name}:0:0").decode()
    assert "offset 0" in out
