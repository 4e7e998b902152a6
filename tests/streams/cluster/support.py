"""What the Streams cluster tests share: fast settings, the word count and its oracle, and readers."""

from __future__ import annotations

import re
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

from kafka_lite import KafkaProducer
from kafka_lite.streams.kafka_streams import KafkaStreams, State
from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder
from kafka_lite.streams.serialization import Serdes
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until

# A test cluster's group settles in well under a second with these; commits every 100 ms keep the
# records a crash makes the survivor process again to a few.
FAST = {
    "commit.interval.ms": 100,
    "poll.ms": 50,
    "consumer.session.timeout.ms": 3000,
    "consumer.heartbeat.interval.ms": 300,
}


def wordcount_builder(input_topic: str, output_topic: str) -> KStreamBuilder:
    builder = KStreamBuilder()
    (
        builder.stream(input_topic, key_serde=Serdes.String(), value_serde=Serdes.String())
        .flat_map_values(lambda line: [w for w in re.split(r"\W+", line.lower()) if w])
        .group_by(lambda key, word: word, key_serde=Serdes.String(), value_serde=Serdes.String())
        .count("Counts")
        .to_stream()
        .to(output_topic, key_serde=Serdes.String(), value_serde=Serdes.Long())
    )
    return builder


def wordcount_topics(cluster, partitions: int = 3) -> tuple[str, str]:
    """A new input topic of lines and output topic of counts, with ``partitions`` partitions each."""
    source, sink = topic_name("wc-lines"), topic_name("wc-counts")
    cluster.create_topic(source, partitions=partitions)
    cluster.create_topic(sink, partitions=partitions)
    return source, sink


def oracle_counts(lines: list[str]) -> Counter:
    """What Kafka's WordCountDemo computes, written plainly."""
    return Counter(w for line in lines for w in re.split(r"\W+", line.lower()) if w)


def latest_counts(bootstrap: str, topic: str) -> dict[str, int]:
    """Each word's last count in the output topic (the table the changelog stream describes)."""
    latest = {}
    for record in read_topic(bootstrap, topic):
        latest[record.key.decode()] = int.from_bytes(record.value, "big", signed=True)
    return latest


def produce_lines(bootstrap: str, topic: str, lines: list[str]) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="lines-producer")
    try:
        for i, line in enumerate(lines):
            producer.send(topic, key=str(i).encode(), value=line.encode())
        producer.flush()
    finally:
        producer.close()


@contextmanager
def running(builder: KStreamBuilder, bootstrap: str, app_id: str, state_dir: Path, **overrides):
    """A started ``KafkaStreams``, closed on the way out (even when the test fails); a failure
    inside names any stream thread that died, and its error."""
    props = {"application.id": app_id, "bootstrap.servers": bootstrap, "state.dir": str(state_dir), **FAST}
    props.update({k.replace("_", "."): v for k, v in overrides.items()})
    streams = KafkaStreams(builder, props)
    died: list[tuple[str, BaseException]] = []
    streams.set_uncaught_exception_handler(lambda thread, e: died.append((thread.name, e)))
    streams.start()
    try:
        yield streams
    except BaseException as e:
        # A wait that timed out because a stream thread died says which, and of what.
        for name, cause in died:
            e.add_note(f"stream thread {name} died of {cause!r} (caused by {cause.__cause__!r})")
        raise
    finally:
        assert streams.close(30_000), "the stream threads did not stop within 30 s"


def wait_running(streams: KafkaStreams, what: str = "the instance to be RUNNING") -> None:
    wait_until(lambda: streams.state() is State.RUNNING, 30, what)
