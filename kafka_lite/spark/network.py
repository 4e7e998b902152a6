"""The network back-end: the driver asks the cluster with an admin client, the executors fetch from leaders.

No Kafka twin: modelled on Spark's Kafka connector (Spark 4.x), after its classes
         org.apache.spark.sql.kafka010.KafkaOffsetReaderAdmin (the driver: an AdminClient's
         metadata and listOffsets) and consumer.KafkaDataConsumer (the executors: a consumer
         assigned one partition, seeking to the range's start and polling to its end)
         (connector/kafka-0-10-sql/src/main/scala/org/apache/spark/sql/kafka010/, Spark 4.x)
Book:    chapter 4, 4.1.4 (the consumer fetching messages from the leader); chapter 6, 6.2.2 (the
         high watermark: what consumers may read)
Differs: an executor sends the Fetch requests itself, on kafka_lite's consumer network client, and
         keeps the record batches whole (a KafkaConsumer would decode them into ConsumerRecords one
         by one, and rows.py decodes them straight into columns instead). Its client lives for one
         task; Spark caches consumers per executor.

The driver side is ``KafkaAdminClient``: ``describe_cluster`` for the partitions, ``list_offsets``
for earliest (-2: the log start offset), latest (-1: the high watermark, since the request comes
from a consumer, replica id -1) and times.

The executor side reads one ``OffsetRange``: find the partition's leader in the metadata, send it
Fetch v5 for the range's next offset, yield the batches of the answer, and go on from the offset
after the last batch until the range's end. A compacted partition may have no record at the end
offset, or none at all between a position and the end: the broker then answers with the next batch
after the gap (which may lie past the end, and ends the read), or with nothing, since it never
returns records above the high watermark, and nothing also ends the read. A fetch below the log
start offset (retention deleted it) fails with OFFSET_OUT_OF_RANGE; ``failOnDataLoss`` decides.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_lite.clients.admin import KafkaAdminClient, OffsetSpec
from kafka_lite.clients.client_utils import parse_bootstrap
from kafka_lite.clients.metadata import Metadata, Node
from kafka_lite.clients.network_client import NetworkClient
from kafka_lite.common.errors import (
    DisconnectException,
    Errors,
    IllegalArgumentException,
    KafkaException,
    RetriableException,
    TimeoutException,
)
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.fetch_request import CONSUMER_REPLICA_ID, FETCH_VERSION, fetch_request_body
from kafka_lite.common.record.memory_records import MemoryRecords
from kafka_lite.common.time import SYSTEM
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.internals.consumer_network_client import ConsumerNetworkClient
from kafka_lite.network.selector import Selector
from kafka_lite.spark.offsets import OffsetRange, PartitionOffsets, check_range_start, tp_name
from kafka_lite.spark.options import BOOTSTRAP_SERVERS, ClientSettings

DEFAULT_MAX_PARTITION_FETCH_BYTES = 1024 * 1024  # the consumer's max.partition.fetch.bytes
DEFAULT_RETRY_BACKOFF_MS = 100


def _unreachable(client: ClientSettings, e: Exception) -> KafkaException:
    return KafkaException(
        f"Option '{BOOTSTRAP_SERVERS}': no broker of {client.bootstrap_servers} answered within "
        f"{client.request_timeout_ms} ms (kafka.request.timeout.ms): {e}"
    )


class NetworkOffsetReader:
    """The driver's view through ``KafkaAdminClient`` (Spark's KafkaOffsetReaderAdmin)."""

    def __init__(self, client: ClientSettings) -> None:
        self.settings = client
        try:
            parse_bootstrap(client.bootstrap_servers or "")
        except KafkaException as e:
            raise IllegalArgumentException(f"Option '{BOOTSTRAP_SERVERS}': {e}") from None
        self.admin = KafkaAdminClient(
            client.bootstrap_servers,
            client_id=client.kafka_params.get("client.id", "kafka-lite-spark-driver"),
            request_timeout_ms=client.request_timeout_ms,
            retry_backoff_ms=int(client.kafka_params.get("retry.backoff.ms", DEFAULT_RETRY_BACKOFF_MS)),
        )

    def topic_partitions(self) -> dict[str, list[int]]:
        try:
            cluster = self.admin.describe_cluster()
        except TimeoutException as e:
            raise _unreachable(self.settings, e) from None
        topics: dict[str, list[int]] = {}
        for topic, partition in sorted(cluster.partitions):
            topics.setdefault(topic, []).append(partition)
        return topics

    def _list(self, specs: dict[TopicPartition, OffsetSpec]) -> dict[TopicPartition, int]:
        try:
            found = self.admin.list_offsets(specs)
        except TimeoutException as e:
            raise _unreachable(self.settings, e) from None
        return {tp: info.offset for tp, info in found.items()}

    def earliest_offsets(self, tps: list[TopicPartition]) -> PartitionOffsets:
        return self._list({tp: OffsetSpec.earliest() for tp in tps}) if tps else {}

    def latest_offsets(self, tps: list[TopicPartition]) -> PartitionOffsets:
        return self._list({tp: OffsetSpec.latest() for tp in tps}) if tps else {}

    def offsets_for_times(self, times: dict[TopicPartition, int]) -> PartitionOffsets:
        return self._list({tp: OffsetSpec.for_timestamp(ts) for tp, ts in times.items()}) if times else {}

    def close(self) -> None:
        self.admin.close()


class NetworkDataConsumer:
    """An executor's reader: Fetch requests for exactly one range, to the partition's leader."""

    def __init__(self, client: ClientSettings) -> None:
        self.settings = client
        params = client.kafka_params
        self.request_timeout_ms = client.request_timeout_ms
        self.retry_backoff_ms = int(params.get("retry.backoff.ms", DEFAULT_RETRY_BACKOFF_MS))
        self.fetch_size = int(params.get("max.partition.fetch.bytes", DEFAULT_MAX_PARTITION_FETCH_BYTES))
        self.time = SYSTEM
        self.metadata = Metadata(refresh_backoff_ms=self.retry_backoff_ms, time=self.time)
        self.metadata.bootstrap(parse_bootstrap(client.bootstrap_servers or ""), self.time.milliseconds())
        network = NetworkClient(
            Selector(time=self.time),
            params.get("client.id", "kafka-lite-spark-executor"),
            request_timeout_ms=self.request_timeout_ms,
            time=self.time,
            metadata=self.metadata,
        )
        self.client = ConsumerNetworkClient(
            network, self.metadata, self.time, self.retry_backoff_ms, self.request_timeout_ms
        )

    def fetch(self, range_: OffsetRange, fail_on_data_loss: bool) -> Iterator:
        """Yield the batches holding ``range_``'s records, fetched from the partition's leader."""
        tp = range_.topic_partition
        position = range_.from_offset
        deadline = self.time.milliseconds() + self.settings.poll_timeout_ms
        while position < range_.until_offset:
            header, records = self._fetch_once(tp, position, deadline)
            error = Errors.for_code(header["error_code"])
            if error.name == "OFFSET_OUT_OF_RANGE" and position < header["log_start_offset"]:
                # Retention deleted the offsets: fail, or go on from the log start (failOnDataLoss).
                position = check_range_start(
                    OffsetRange(tp[0], tp[1], position, range_.until_offset), header["log_start_offset"],
                    fail_on_data_loss,
                )  # fmt: skip
                continue
            if error.name in (
                "NOT_LEADER_FOR_PARTITION",
                "UNKNOWN_TOPIC_OR_PARTITION",
                "LEADER_NOT_AVAILABLE",
            ):
                self._backoff(deadline, f"{error.name} fetching {tp_name(tp)}")
                self.metadata.request_update()
                continue
            if error.name != "NONE":
                raise error.exception(
                    f"Fetching offset {position} of {tp_name(tp)}: {error.name}: {error.description}"
                )
            last = None
            for batch in records.batches(allow_partial_tail=True):
                if batch.next_offset <= position:
                    continue  # a compressed batch comes back whole, earlier records included
                if batch.base_offset >= range_.until_offset:
                    return
                yield batch
                last = batch
            if last is None:
                return  # nothing at or after the position below the high watermark: compacted away
            position = last.next_offset

    def _fetch_once(self, tp: TopicPartition, position: int, deadline: int) -> tuple[dict, MemoryRecords]:
        """One Fetch request for ``tp`` at ``position`` to its leader: its partition header and records."""
        while True:
            leader = self._leader(tp, deadline)
            body = fetch_request_body(
                CONSUMER_REPLICA_ID,
                max_wait_ms=0,  # the range is below the high watermark: nothing to wait for
                min_bytes=0,
                max_bytes=self.fetch_size,
                offsets={tp: position},
                partition_max_bytes=self.fetch_size,
            )
            future = self.client.send(leader, ApiKeys.FETCH, FETCH_VERSION, body)
            if not self.client.poll_future(future, max(deadline - self.time.milliseconds(), 0)):
                raise TimeoutException(
                    f"Cannot fetch record for offset {position} of {tp_name(tp)} in "
                    f"{self.settings.poll_timeout_ms} milliseconds (kafkaConsumer.pollTimeoutMs)"
                )
            if future.failed():
                e = future.exception()
                if isinstance(e, (DisconnectException, RetriableException)):
                    self._backoff(deadline, f"{type(e).__name__} fetching {tp_name(tp)}: {e}")
                    self.metadata.request_update()
                    continue
                raise e
            for topic in future.value().body["responses"]:
                for partition in topic["partition_responses"]:
                    header = partition["partition_header"]
                    if (topic["topic"], header["partition"]) == tp:
                        raw = partition["record_set"]
                        return header, MemoryRecords(b"" if raw is None else raw)
            raise KafkaException(
                f"The Fetch response from broker {leader.id} has no answer for {tp_name(tp)}"
            )

    def _leader(self, tp: TopicPartition, deadline: int) -> Node:
        self.metadata.add(tp[0])
        while True:
            leader = None if self.metadata.cluster.is_bootstrap else self.metadata.cluster.leader_for(*tp)
            if leader is not None:
                return leader
            remaining = deadline - self.time.milliseconds()
            if remaining <= 0:
                raise _unreachable(self.settings, TimeoutException(f"no leader known for {tp_name(tp)}"))
            self.client.await_metadata_update(min(remaining, self.request_timeout_ms))

    def _backoff(self, deadline: int, what: str) -> None:
        if self.time.milliseconds() + self.retry_backoff_ms >= deadline:
            raise TimeoutException(
                f"Gave up after {self.settings.poll_timeout_ms} ms (kafkaConsumer.pollTimeoutMs): {what}"
            )
        self.time.sleep(self.retry_backoff_ms)

    def close(self) -> None:
        self.client.close()
