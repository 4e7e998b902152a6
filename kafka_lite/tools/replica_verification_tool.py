"""Check that every replica of a partition holds the same batches, and report how far the check lags.

Mirrors: kafka.tools.ReplicaVerificationTool (core/src/main/scala/kafka/tools/ReplicaVerificationTool.scala,
         Kafka 0.10.1, with 0.11's comparison of record batches), run by
         bin/kafka-replica-verification.sh
Book:    chapter 6, 6.2.2 (partitions and replicas: the followers' copies, the HW)
Differs: Kafka runs a fetcher thread per broker and two barriers, so that one round's fetches have
         all come back before one of the threads verifies; here one ``NetworkClient`` sends the
         round's fetches together and waits for every answer, which is the same round without the
         threads. A replica on a broker that is not alive, or a partition without a leader, is
         named at the start and left out (Kafka's tool leaves out the first silently and fails on
         the second). The run can end after a number of reports (``max_reports``).

A replica that is not the leader answers only a fetch whose ``replica_id`` is -2, Kafka's
*debugging consumer* (a consumer's is -1, a follower's its broker id), and answers it as it would a
consumer, up to its own HW: so each round asks every broker for its replica of every partition, from
the offset verified so far. Then, partition by partition, the batches of all the replicas are walked
side by side, as far as every replica has one below its HW: the same batch must have the same last
offset on every replica (else the replicas have diverged, and the tool stops), and the same checksum
(else a replica holds other records at those offsets, which is reported). The checksum is the CRC
stored in the batch's header, as its producer wrote it, not one computed again: the check finds
batches that differ, not bytes damaged since (the broker checks those when it appends). A follower
copies the leader's batches as they are, offsets and all, so on a healthy cluster both hold. The offset up to
which every replica agrees is where the next round fetches from; the *lag* is the highest HW among
the replicas minus that offset, and each report names the partition where it is largest::

    2026-11-24 08:15:02,311: verification process is started.
    2026-11-24 08:15:32,420: max lag is 0 for partition [orders,2] at offset 1200 among 3 partitions
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass

from kafka_lite.clients.admin import KafkaAdminClient, OffsetSpec
from kafka_lite.clients.network_client import ClientRequest, ClientResponse
from kafka_lite.common.errors import Errors, KafkaException, TimeoutException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.fetch_request import DEBUGGING_CONSUMER_ID, FETCH_VERSION, fetch_request_body
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.topic_partition import TopicPartition

CLIENT_ID = "replicaVerificationTool"
DEFAULT_FETCH_SIZE = 1024 * 1024  # Kafka's ConsumerConfig.FetchSize
DEFAULT_MAX_WAIT_MS = 1000
DEFAULT_REPORT_INTERVAL_MS = 30_000


class ReplicasDivergedException(KafkaException):
    """Two replicas hold batches that end at different offsets: their logs are not copies."""


def now_string(time: Time) -> str:
    """Kafka's ``yyyy-MM-dd HH:mm:ss,SSS``, local time."""
    ms = time.milliseconds()
    moment = datetime.datetime.fromtimestamp(ms / 1000)
    return moment.strftime("%Y-%m-%d %H:%M:%S,") + f"{ms % 1000:03d}"


def whitelist(text: str) -> re.Pattern:
    """Kafka's ``Whitelist``: a Java regex, with commas read as '|', that must match the whole topic."""
    regex = text.strip().replace(",", "|").replace(" ", "").strip("\"'")
    try:
        return re.compile(regex)
    except re.error as e:
        raise KafkaException(f"{text} is an invalid regex: {e}") from None


@dataclass(frozen=True)
class PartitionData:
    """One replica's answer for one partition: its HW and the record bytes from the asked offset."""

    high_watermark: int
    records: bytes


@dataclass(frozen=True)
class MessageInfo:
    """The first replica's batch at this step of the walk, which the others' must match."""

    replica_id: int
    offset: int  # the batch's last offset
    next_offset: int
    checksum: int


class ReplicaBuffer:
    """Each partition's offset verified so far and the replicas' answers of the current round
    (Kafka's ``ReplicaBuffer``); ``verify_checksum`` compares them and reports the lag."""

    def __init__(
        self,
        expected_replicas_per_partition: dict[TopicPartition, int],
        initial_offsets: dict[TopicPartition, int],
        report_interval_ms: int,
        out: Callable[[str], None],
        time: Time = SYSTEM,
    ) -> None:
        self.expected_replicas_per_partition = expected_replicas_per_partition
        self.fetch_offset_map: dict[TopicPartition, int] = dict(initial_offsets)
        self.message_set_cache: dict[TopicPartition, dict[int, PartitionData]] = {
            tp: {} for tp in expected_replicas_per_partition
        }
        self.report_interval_ms = report_interval_ms
        self.out = out
        self.time = time
        self.last_report_time = time.milliseconds()
        self.reports = 0
        self.max_lag = -1
        self.offset_with_max_lag = -1
        self.max_lag_partition: TopicPartition | None = None

    def add_fetched_data(self, tp: TopicPartition, replica_id: int, data: PartitionData) -> None:
        self.message_set_cache[tp][replica_id] = data

    def get_offset(self, tp: TopicPartition) -> int:
        return self.fetch_offset_map[tp]

    # --8<-- [start:verify_checksum]
    def verify_checksum(self) -> None:
        """Walk every partition's replicas batch by batch up to their HWs; move the verified offset
        past each batch all of them hold alike; report the largest lag once per interval."""
        self.max_lag = -1
        for tp, fetch_response_per_replica in self.message_set_cache.items():
            expected = self.expected_replicas_per_partition[tp]
            if len(fetch_response_per_replica) != expected:
                raise KafkaException(
                    f"fetched {len(fetch_response_per_replica)} replicas for {_name(tp)}, but expected "
                    f"{expected} replicas"
                )
            batch_iterators = {
                replica_id: MemoryRecords(data.records).batches(allow_partial_tail=True)
                for replica_id, data in fetch_response_per_replica.items()
            }
            max_hw = max(data.high_watermark for data in fetch_response_per_replica.values())
            # One batch at a time from every replica, until one has none below its HW.
            is_message_in_all_replicas = True
            while is_message_in_all_replicas:
                first: MessageInfo | None = None
                for replica_id, batches in batch_iterators.items():
                    batch = next(batches, None)
                    if batch is None:
                        is_message_in_all_replicas = False
                    elif batch.last_offset >= fetch_response_per_replica[replica_id].high_watermark:
                        is_message_in_all_replicas = False  # only verify up to the high watermark
                    elif first is None:
                        first = MessageInfo(replica_id, batch.last_offset, batch.next_offset, batch.checksum)
                    else:
                        if first.offset != batch.last_offset:
                            raise ReplicasDivergedException(
                                f"{now_string(self.time)}: partition {_name(tp)}: replica "
                                f"{first.replica_id}'s offset {first.offset} doesn't match replica "
                                f"{replica_id}'s offset {batch.last_offset}"
                            )
                        if first.checksum != batch.checksum:
                            self.out(
                                f"{now_string(self.time)}: partition {_name(tp)} has unmatched checksum "
                                f"at offset {batch.last_offset}; replica {first.replica_id}'s checksum "
                                f"{first.checksum}; replica {replica_id}'s checksum {batch.checksum}"
                            )
                if is_message_in_all_replicas:
                    self.fetch_offset_map[tp] = first.next_offset
            lag = max_hw - self.fetch_offset_map[tp]
            if lag > self.max_lag:
                self.offset_with_max_lag = self.fetch_offset_map[tp]
                self.max_lag = lag
                self.max_lag_partition = tp
            fetch_response_per_replica.clear()
        now = self.time.milliseconds()
        if now - self.last_report_time >= self.report_interval_ms:
            self.out(
                f"{now_string(self.time)}: max lag is {self.max_lag} for partition "
                f"{_name(self.max_lag_partition)} at offset {self.offset_with_max_lag} among "
                f"{len(self.message_set_cache)} partitions"
            )
            self.last_report_time = now
            self.reports += 1

    # --8<-- [end:verify_checksum]


class ReplicaVerificationTool:
    """Set up from the cluster's metadata (the partitions and their replicas), then fetch and verify
    round after round (``run``)."""

    def __init__(
        self,
        bootstrap_servers: str,
        topic_white_list: str = ".*",
        initial_offset_time: int = OffsetSpec.LATEST_TIMESTAMP,
        fetch_size: int = DEFAULT_FETCH_SIZE,
        max_wait_ms: int = DEFAULT_MAX_WAIT_MS,
        report_interval_ms: int = DEFAULT_REPORT_INTERVAL_MS,
        out: Callable[[str], None] = print,
        time: Time = SYSTEM,
        request_timeout_ms: int = 30_000,
    ) -> None:
        self.fetch_size = fetch_size
        self.max_wait_ms = max_wait_ms
        self.out = out
        self.time = time
        allowed = whitelist(topic_white_list)
        self.admin = KafkaAdminClient(
            bootstrap_servers, client_id=CLIENT_ID, request_timeout_ms=request_timeout_ms, time=time
        )
        try:
            cluster = self.admin.describe_cluster()
            partitions = sorted(tp for tp in cluster.partitions if allowed.fullmatch(tp[0]))
            if not partitions:
                raise KafkaException(
                    "No topics found. --topic-white-list, if specified, is either filtering out all "
                    "topics or there is no topic."
                )
            # Which broker holds which replica: only live brokers can be asked.
            self.partitions_per_broker: dict[int, list[TopicPartition]] = {}
            expected: dict[TopicPartition, int] = {}
            for tp in partitions:
                info = cluster.partitions[tp]
                if info.leader is None:
                    out(f"partition {_name(tp)} has no leader: not verified")
                    continue
                for replica_id in info.replicas:
                    if replica_id not in cluster.nodes:
                        out(f"partition {_name(tp)}: replica {replica_id} is down: not verified")
                        continue
                    self.partitions_per_broker.setdefault(replica_id, []).append(tp)
                    expected[tp] = expected.get(tp, 0) + 1
            if not expected:
                raise KafkaException("No partition has a leader: nothing to verify.")
            spec = OffsetSpec(initial_offset_time)
            offsets = self.admin.list_offsets({tp: spec for tp in expected})
            initial = {tp: info.offset for tp, info in offsets.items()}
            after_the_last = [tp for tp, offset in initial.items() if offset < 0]
            if after_the_last:  # a time after a partition's last record: start at its end
                latest = self.admin.list_offsets({tp: OffsetSpec.latest() for tp in after_the_last})
                initial.update({tp: info.offset for tp, info in latest.items()})
        except BaseException:
            self.admin.close()
            raise
        self.replica_buffer = ReplicaBuffer(expected, initial, report_interval_ms, out, time)

    def run(self, max_reports: int | None = None) -> None:
        """Fetch and verify until ``max_reports`` reports are out in all (for ever if None); raises
        ``ReplicasDivergedException`` when replicas have diverged."""
        self.out(f"{now_string(self.time)}: verification process is started.")
        while max_reports is None or self.replica_buffer.reports < max_reports:
            for broker_id, answers in self.fetch_round().items():
                for tp, data in answers.items():
                    self.replica_buffer.add_fetched_data(tp, broker_id, data)
            self.replica_buffer.verify_checksum()

    def close(self) -> None:
        self.admin.close()

    # --8<-- [start:fetch_round]
    def fetch_round(self) -> dict[int, dict[TopicPartition, PartitionData]]:
        """One Fetch to every broker for its replicas, from each partition's verified offset, all in
        flight together; every answer, each partition's HW and records. A broker that cannot be
        reached, or a partition it answers with an error, gives no records this round (as in
        Kafka's fetcher): the check waits for it, and the lag shows it."""
        client, buffer = self.admin.client, self.replica_buffer
        requests = {
            broker_id: self._fetch_request_body({tp: buffer.get_offset(tp) for tp in partitions})
            for broker_id, partitions in self.partitions_per_broker.items()
        }
        responses: dict[int, ClientResponse] = {}
        sent: set[int] = set()

        def answered(broker_id: int) -> Callable[[ClientResponse], None]:
            return lambda response: responses.__setitem__(broker_id, response)

        deadline = self.time.milliseconds() + self.admin.request_timeout_ms
        while len(responses) < len(requests):
            now = self.time.milliseconds()
            for broker_id, body in requests.items():
                node = str(broker_id)
                if broker_id in sent:
                    continue
                if client.ready(node, now):  # connected (ready starts connecting if not)
                    sent.add(broker_id)
                    request = ClientRequest(
                        node, ApiKeys.FETCH, FETCH_VERSION, body, callback=answered(broker_id)
                    )
                    client.send(request, now)
                elif client.connection_failed(node):  # as a fetch that got no answer
                    sent.add(broker_id)
                    failed = ClientRequest(node, ApiKeys.FETCH, FETCH_VERSION, body)
                    responses[broker_id] = ClientResponse(failed, now, disconnected=True)
            if len(responses) == len(requests):
                break
            if now >= deadline:
                raise TimeoutException(
                    f"Timed out after {self.admin.request_timeout_ms} ms waiting for the fetches of brokers "
                    f"{sorted(set(requests) - set(responses))}"
                )
            client.poll(min(100, deadline - now), now)
        if all(r.disconnected for r in responses.values()):
            # No broker answered: wait as a client backs off, rather than asking again at once.
            self.time.sleep(self.admin.retry_backoff_ms)
        answers: dict[int, dict[TopicPartition, PartitionData]] = {}
        for broker_id, response in responses.items():
            got = answers[broker_id] = {
                tp: PartitionData(-1, b"") for tp in self.partitions_per_broker[broker_id]
            }
            if response.disconnected:
                continue
            for topic in response.body["responses"]:
                for p in topic["partition_responses"]:
                    header = p["partition_header"]
                    if Errors.for_code(header["error_code"]) is Errors.NONE:
                        tp = TopicPartition(topic["topic"], header["partition"])
                        got[tp] = PartitionData(header["high_watermark"], bytes(p["record_set"] or b""))
        return answers

    # --8<-- [end:fetch_round]

    def _fetch_request_body(self, offsets: dict[TopicPartition, int]) -> dict:
        """As the debugging consumer, with Kafka's ``minBytes`` 1: wait for anything new."""
        return fetch_request_body(
            DEBUGGING_CONSUMER_ID,
            max_wait_ms=self.max_wait_ms,
            min_bytes=1,
            max_bytes=self.fetch_size * max(1, len(offsets)),  # no cap beyond the partitions' own
            offsets=offsets,
            partition_max_bytes=self.fetch_size,
        )


def _name(tp: TopicPartition | None) -> str:
    """Kafka's ``TopicAndPartition`` as it prints: ``[topic,partition]``."""
    return "none" if tp is None else f"[{tp[0]},{tp[1]}]"
