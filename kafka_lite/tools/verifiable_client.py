"""Produce, consume, validate: which acknowledged records does a consumer get back?

Mirrors: org.apache.kafka.tools.VerifiableProducer and VerifiableConsumer
         (tools/src/main/java/org/apache/kafka/tools/, Kafka 0.10.1), and the system tests'
         produce-consume-validate check (tests/kafkatest/tests/produce_consume_validate.py)
Book:    chapter 6, 6.2 (replication: acks, the ISR, the high watermark, and what survives a
         leader's failure)
Differs: one module of three functions instead of two command-line tools that print JSON lines and
         a Python test that reads them; values are strings; the consumer assigns itself every
         partition (no group) and reads up to the end offsets it finds when it starts.
Labs:    lab 12 (validate; produce and consume; can_lose_acknowledged)

A durability check in the manner of Kafka's system tests: the producer sends distinct values and
writes down, from the producer's own callbacks, which ones the cluster acknowledged and where
(partition, offset), and which failed and why. Faults happen meanwhile. Then a consumer reads the
topic from the beginning, and ``validate`` compares: an acknowledged value that the consumer never
read is *lost*. A value that failed is not a loss: the producer was told it might not be written.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from kafka_lite.common.errors import TimeoutException
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.kafka_consumer import KafkaConsumer
from kafka_lite.producer.kafka_producer import KafkaProducer

CONSUME_TIMEOUT_S = 30.0  # how long ``consume`` may take to reach the end offsets it found


@dataclass(frozen=True)
class Acknowledgement:
    """One value the cluster acknowledged, and where it said the value was written
    (VerifiableProducer's ``producer_send_success`` line)."""

    value: str
    partition: int
    offset: int


@dataclass(frozen=True)
class ConsumedValue:
    """One record the consumer read back (VerifiableConsumer's ``records_consumed``, one record)."""

    value: str
    partition: int
    offset: int


@dataclass
class ProduceResult:
    """What the producer was told: each value either acknowledged or failed, never both."""

    acknowledged: list[Acknowledgement] = field(default_factory=list)  # in the order the answers came
    failed: dict[str, str] = field(default_factory=dict)  # value -> the error's class name


@dataclass(frozen=True)
class Verdict:
    """The comparison of what was acknowledged with what was read back."""

    acknowledged: int  # how many values were acknowledged
    found: list[Acknowledgement]  # acknowledged and read back, by partition, then offset
    lost: list[Acknowledgement]  # acknowledged and never read back, by partition, then offset
    duplicated: list[str]  # values read back more than once, sorted

    @property
    def ok(self) -> bool:
        """Nothing acknowledged was lost (duplicates are allowed: a retried batch can cause them)."""
        return not self.lost


# -- stage 1: the verdict ------------------------------------------------------------------------------------


def validate(acknowledged: list[Acknowledgement], consumed: list[ConsumedValue]) -> Verdict:
    """Compare the acknowledged values with the values read back. The values are distinct, so a value
    identifies its record: an acknowledged value counts as found wherever the consumer read it."""
    # BEGIN SOLUTION
    # Matching by value, not by (partition, offset): after an election the offset a lost record
    # was acknowledged at may hold another record, and that record is not the acknowledged one.
    read = Counter(c.value for c in consumed)
    in_log_order = sorted(acknowledged, key=lambda a: (a.partition, a.offset))
    return Verdict(
        acknowledged=len(acknowledged),
        found=[a for a in in_log_order if read[a.value]],
        lost=[a for a in in_log_order if not read[a.value]],
        duplicated=sorted(value for value, times in read.items() if times > 1),
    )
    # END SOLUTION


# -- stage 2: the producer and the consumer ------------------------------------------------------------------


def produce(bootstrap_servers: str, topic: str, values: list[str], acks: int) -> ProduceResult:
    """Send every value to ``topic`` with ``acks`` (0, 1 or -1 for all), each value's bytes its UTF-8
    encoding, and return what the producer's callbacks said of each once all have answered."""
    # BEGIN SOLUTION
    result = ProduceResult()
    # The producer's defaults otherwise, as VerifiableProducer's: retries=0 (0.10.1's default), so a
    # batch whose leader dies fails rather than waiting for the election.
    producer = KafkaProducer(bootstrap_servers=bootstrap_servers, acks=acks, value_serializer=str.encode)
    try:
        for value in values:
            future = producer.send(topic, value)
            # The callbacks run on the producer's network thread, one at a time; each writes one
            # value's answer, so the two collections need no lock.
            future.add_callback(
                lambda metadata, value=value: result.acknowledged.append(
                    Acknowledgement(value, metadata.partition, metadata.offset)
                )
            )
            future.add_errback(
                lambda error, value=value: result.failed.__setitem__(value, type(error).__name__)
            )
        producer.flush()  # until every value has its answer, an acknowledgement or an error
    finally:
        producer.close()
    return result
    # END SOLUTION


def consume(bootstrap_servers: str, topic: str, timeout_s: float = CONSUME_TIMEOUT_S) -> list[ConsumedValue]:
    """Read every partition of ``topic`` from the beginning up to the end offsets (high watermarks)
    it has when the read starts, and return the records in the order read; raise
    ``TimeoutException`` if they are not all read within ``timeout_s`` seconds."""
    # BEGIN SOLUTION
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap_servers, enable_auto_commit=False, value_deserializer=bytes.decode
    )
    try:
        partitions = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        # A consumer reads only below the high watermark, and the end offset is that: what every
        # in-sync replica has, so what any leader elected cleanly from now on will also have.
        end = consumer.end_offsets(partitions)
        consumed: list[ConsumedValue] = []
        deadline = time.monotonic() + timeout_s
        while any(consumer.position(tp) < end[tp] for tp in partitions):
            if time.monotonic() > deadline:
                behind = {f"{tp[0]}-{tp[1]}": (consumer.position(tp), end[tp]) for tp in partitions}
                raise TimeoutException(
                    f"read {len(consumed)} records in {timeout_s} s; (position, end): {behind}"
                )
            for tp, records in consumer.poll(timeout_ms=200).items():
                consumed.extend(ConsumedValue(r.value, tp[1], r.offset) for r in records)
        return consumed
    finally:
        consumer.close(autocommit=False)
    # END SOLUTION


# -- stage 3: the explanation ------------------------------------------------------------------------------


def can_lose_acknowledged(
    acks: int, replication_factor: int, min_insync_replicas: int, unclean_leader_election: bool
) -> bool:
    """Whether a value the producer saw acknowledged can be missing from what a consumer reads later,
    when brokers crash (SIGKILL) or freeze (SIGSTOP) and restart with their logs intact, and leaders
    are elected as the topic's ``unclean.leader.election.enable`` allows. Lab 12 asks for the
    reasoning too, in comments beside each rule."""
    # BEGIN SOLUTION
    # acks=0: the producer counts a value as sent once it is on the socket; the broker may never
    # append it. Lost, whatever the replication.
    if acks == 0:
        return True
    # One replica: it comes back with its log after a crash (the records are in its files, and a
    # process that dies does not take the page cache with it), and there is no other replica to
    # elect meanwhile: the partition is offline until then, but nothing acknowledged is gone.
    if replication_factor <= 1:
        return False
    # acks=1: the leader acknowledges once it alone has appended. If it dies before a follower has
    # copied the record, a follower still in the ISR is elected cleanly without it, and the old
    # leader truncates it away when it returns as a follower.
    if acks == 1:
        return True
    # acks=all: the leader acknowledges once every replica in the ISR has the record, and a clean
    # election picks the new leader from the ISR, so it has the record. Only an unclean election,
    # of a replica outside the ISR, can lose it; a replica can be outside the ISR at the moment of
    # the acknowledgement only if min.insync.replicas is below the replication factor.
    return unclean_leader_election and min_insync_replicas < replication_factor
    # END SOLUTION
