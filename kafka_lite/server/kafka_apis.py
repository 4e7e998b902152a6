"""The request handlers: one method per API, turning a parsed request into a response.

Mirrors: kafka.server.KafkaApis (core/src/main/scala/kafka/server/KafkaApis.scala, Kafka 0.10.1, with
         0.11's InitProducerId, OffsetsForLeaderEpoch and record-batch v2 Produce/Fetch)
Book:    chapter 2, 2.3.3 (``KafkaApis.handle`` switches on the api key); 6.2 (produce and fetch);
         7.2-7.3 (LeaderAndIsr, UpdateMetadata, StopReplica from the controller)
Differs: no group APIs, no quotas (zero throttle time), no transactions. Client requests that
         arrive before the controller's first UpdateMetadata wait for it
         (``server/delayed_client_request.py`` says why).

``KafkaApis`` is given what it uses, as Kafka's constructor is: the request channel, the replica
manager, the admin manager, the controller, the metadata cache, the producer id manager, the config,
the cluster id and the time. It owns no state of its own beyond the purgatory of early requests.

Produce and Fetch at old versions speak message sets v0/v1 (the book's format); the log stores v2
batches only, so a Produce v0-2 is up-converted on the way in and a Fetch v0-3 down-converted on the
way out. Fetch v4+ sends records straight from the segment file: with ``fetch.sendfile.enable`` as a
``FileRegion`` that the processor hands to ``os.sendfile``, otherwise (the default) read with one
``pread`` and sent from memory; the benchmark page compares the two.
"""

from __future__ import annotations

import logging
from typing import Any

from kafka_lite.common.errors import ApiException, Errors, KafkaException
from kafka_lite.common.protocol.api_keys import ApiKeys, api_versions
from kafka_lite.common.protocol.messages import API_VERSIONS_RESPONSE_V0, RESPONSE_HEADER
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.constants import MAGIC_OFFSET, MAGIC_VALUE_V2
from kafka_lite.common.record.convert import down_convert, up_convert
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.common.time import Time
from kafka_lite.common.topic import TopicPartition, validate_topic_name
from kafka_lite.controller.kafka_controller import KafkaController
from kafka_lite.log.log import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from kafka_lite.network.request_channel import Request, RequestChannel, Response, ResponseAction
from kafka_lite.network.transfer import FileRegion, PieceWriter
from kafka_lite.server.admin_manager import AdminManager, TopicDetails
from kafka_lite.server.delayed_client_request import FIRST_METADATA, DelayedClientRequest
from kafka_lite.server.delayed_create_topics import CreateTopicsResults
from kafka_lite.server.delayed_operation import DelayedOperationPurgatory
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.metadata_cache import MetadataCache
from kafka_lite.server.producer_id_manager import ProducerIdManager
from kafka_lite.server.replica_manager import (
    FetchMetadata,
    FetchPartitionRequest,
    LogReadResult,
    PartitionResponse,
    ReplicaManager,
)

log = logging.getLogger(__name__)

# Kafka's AdminUtils.AdminClientId: the one client allowed to produce to internal topics (__...)
ADMIN_CLIENT_ID = "__admin_client"


class KafkaApis:
    # The APIs this broker has handlers for: exactly what ApiVersions advertises.
    HANDLED = (
        ApiKeys.PRODUCE,
        ApiKeys.FETCH,
        ApiKeys.LIST_OFFSETS,
        ApiKeys.METADATA,
        ApiKeys.LEADER_AND_ISR,
        ApiKeys.STOP_REPLICA,
        ApiKeys.UPDATE_METADATA,
        ApiKeys.API_VERSIONS,
        ApiKeys.CREATE_TOPICS,
        ApiKeys.INIT_PRODUCER_ID,
        ApiKeys.OFFSETS_FOR_LEADER_EPOCH,
    )

    def __init__(
        self,
        request_channel: RequestChannel,
        replica_manager: ReplicaManager,
        admin_manager: AdminManager,
        controller: KafkaController,
        metadata_cache: MetadataCache,
        producer_id_manager: ProducerIdManager,
        config: KafkaConfig,
        cluster_id: str,
        time: Time,
    ) -> None:
        self.request_channel = request_channel
        self.replica_manager = replica_manager
        self.admin_manager = admin_manager
        self.controller = controller
        self.metadata_cache = metadata_cache
        self.producer_id_manager = producer_id_manager
        self.config = config
        self.cluster_id = cluster_id
        self.time = time
        self.client_request_purgatory = DelayedOperationPurgatory("ClientRequest", time)
        self._handlers = {
            ApiKeys.PRODUCE: self.handle_produce_request,
            ApiKeys.FETCH: self.handle_fetch_request,
            ApiKeys.LIST_OFFSETS: self.handle_list_offsets_request,
            ApiKeys.METADATA: self.handle_topic_metadata_request,
            ApiKeys.LEADER_AND_ISR: self.handle_leader_and_isr_request,
            ApiKeys.STOP_REPLICA: self.handle_stop_replica_request,
            ApiKeys.UPDATE_METADATA: self.handle_update_metadata_request,
            ApiKeys.API_VERSIONS: self.handle_api_versions_request,
            ApiKeys.CREATE_TOPICS: self.handle_create_topics_request,
            ApiKeys.INIT_PRODUCER_ID: self.handle_init_producer_id_request,
            ApiKeys.OFFSETS_FOR_LEADER_EPOCH: self.handle_offsets_for_leader_epoch_request,
        }
        self._api_versions = api_versions(self.HANDLED)

    # --8<-- [start:handle]
    def handle(self, request: Request) -> None:
        try:
            if request.api not in self._handlers:
                # Parsed fine but not an API this broker serves (a group API: there is no group
                # coordinator): Kafka closes the connection for an API it does not know.
                log.warning(
                    "Closing connection %s: no handler for %s (not in ApiVersions)",
                    request.connection_id, request.api.api_name,
                )  # fmt: skip
                self.request_channel.close_connection(request)
            elif self._waits_for_first_metadata(request):
                delayed = DelayedClientRequest(
                    self.config["controller.socket.timeout.ms"],
                    request,
                    self.metadata_cache,
                    self._handle_request,
                )
                self.client_request_purgatory.try_complete_else_watch(delayed, [FIRST_METADATA])
            else:
                self._handle_request(request)
        finally:
            # The handler's own work is done; a response still to come is waiting in a purgatory
            # (the request's "remote" time). A response already sent has set this itself.
            if not request.api_local_complete_ns:
                request.api_local_complete_ns = self.time.nanoseconds()

    def _waits_for_first_metadata(self, request: Request) -> bool:
        """A client request before the controller's first UpdateMetadata (ApiVersions never waits)."""
        return (
            not self.metadata_cache.has_metadata()
            and not request.api.inter_broker
            and request.api is not ApiKeys.API_VERSIONS
        )

    def _handle_request(self, request: Request) -> None:
        try:
            self._handlers[request.api](request)
        except Exception as e:
            # A request that parsed but that a handler could not serve: one line, and the connection
            # closed (the client reconnects); the traceback only at debug level, for developers.
            log.warning(
                "Closing connection %s: error handling %s v%d: %r",
                request.connection_id, request.api.api_name, request.header.api_version, e,
            )  # fmt: skip
            log.debug("Traceback of the %s error", request.api.api_name, exc_info=True)
            self.request_channel.close_connection(request)

    # --8<-- [end:handle]

    def _send_response(self, request: Request, body: dict[str, Any], schema=None) -> None:
        """Encode ``body`` with the request's response schema (or ``schema``) behind the response
        header, and hand it to the request's processor."""
        out = PieceWriter()
        RESPONSE_HEADER.write(out, {"correlation_id": request.header.correlation_id})
        (schema or request.api.response_schema(request.header.api_version)).write(out, body)
        now = self.time.nanoseconds()
        if not request.api_local_complete_ns:  # answered by the handler itself: no remote phase
            request.api_local_complete_ns = now
        request.api_remote_complete_ns = now
        self.request_channel.send_response(
            Response(request.processor, request, ResponseAction.SEND, out.finish())
        )

    # -- ApiVersions ----------------------------------------------------------------------------------------

    def handle_api_versions_request(self, request: Request) -> None:
        if request.unsupported_version:
            # KIP-35/511: answer in the v0 layout with UNSUPPORTED_VERSION and the versions we speak, so the
            # client can retry with one of them (kafka-python retries at our max, librdkafka at v0).
            body = {"error_code": Errors.UNSUPPORTED_VERSION.code, "api_versions": self._api_versions}
            self._send_response(request, body, API_VERSIONS_RESPONSE_V0)
            return
        self._send_response(
            request, {"error_code": 0, "api_versions": self._api_versions, "throttle_time_ms": 0}
        )

    # -- Metadata ---------------------------------------------------------------------------------------------

    # --8<-- [start:metadata]
    def handle_topic_metadata_request(self, request: Request) -> None:
        version = request.header.api_version
        requested = request.body["topics"]
        all_topics = requested is None or (version == 0 and not requested)
        topics = self.metadata_cache.topics() if all_topics else list(dict.fromkeys(requested))
        allow_auto_create = request.body.get("allow_auto_topic_creation", True)
        known = self.metadata_cache.topic_metadata(topics)
        found = {t["topic"] for t in known}
        for topic in topics:
            if topic not in found:
                known.append(self._unknown_topic_metadata(topic, allow_auto_create))
        brokers = [
            {"node_id": b.id, "host": b.host, "port": b.port, "rack": b.rack}
            for b in self.metadata_cache.alive_brokers()
        ]
        self._send_response(
            request,
            {
                "throttle_time_ms": 0,
                "brokers": brokers,
                "cluster_id": self.cluster_id,
                "controller_id": self.metadata_cache.controller_id,
                "topic_metadata": known,
            },
        )

    def _unknown_topic_metadata(self, topic: str, allow_auto_create: bool) -> dict:
        error = Errors.UNKNOWN_TOPIC_OR_PARTITION
        try:
            validate_topic_name(topic)
            if self.config["auto.create.topics.enable"] and allow_auto_create:
                self.admin_manager.create_topic(
                    topic, self.config["num.partitions"], self.config["default.replication.factor"]
                )
                error = Errors.LEADER_NOT_AVAILABLE  # created: the client asks again once it has leaders
        except ApiException as e:
            error = Errors.for_exception(e)
            if error is Errors.TOPIC_ALREADY_EXISTS:  # created by someone else meanwhile
                error = Errors.LEADER_NOT_AVAILABLE
        return {
            "topic_error_code": error.code,
            "topic": topic,
            "is_internal": False,
            "partition_metadata": [],
        }

    # --8<-- [end:metadata]

    # -- Produce -------------------------------------------------------------------------------------------------

    # --8<-- [start:produce]
    def handle_produce_request(self, request: Request) -> None:
        body, version = request.body, request.header.api_version
        acks = body["acks"]
        entries: dict[TopicPartition, MemoryRecords] = {}
        results: dict[TopicPartition, tuple[Errors, int, int]] = {}
        for topic_data in body["topic_data"]:
            for p in topic_data["data"]:
                tp = (topic_data["topic"], p["partition"])
                if acks not in (-1, 0, 1):
                    results[tp] = (Errors.INVALID_REQUIRED_ACKS, -1, -1)
                    continue
                try:
                    entries[tp] = self._produce_records(p["record_set"], version)
                except ApiException as e:
                    results[tp] = (Errors.for_exception(e), -1, -1)

        def send_response_callback(responses: dict[TopicPartition, PartitionResponse]) -> None:
            for tp, r in responses.items():
                results[tp] = (r.error, r.base_offset, r.log_append_time)
            self._send_produce_response(request, acks, results)

        if not entries:  # nothing valid to append: answer with the errors
            send_response_callback({})
            return
        self.replica_manager.append_records(
            body["timeout"],
            acks,
            request.header.client_id == ADMIN_CLIENT_ID,
            entries,
            send_response_callback,
        )

    def _send_produce_response(
        self, request: Request, acks: int, results: dict[TopicPartition, tuple[Errors, int, int]]
    ) -> None:
        if acks == 0:
            # No response at all. If something failed, closing the connection is the only signal the
            # producer gets (it then refreshes its metadata): Kafka does the same.
            if any(error is not Errors.NONE for error, _, _ in results.values()):
                log.info("Closing connection %s after a failed acks=0 produce", request.connection_id)
                self.request_channel.close_connection(request)
            else:
                self.request_channel.no_operation(request)
            return
        by_topic: dict[str, list] = {}
        for (topic, partition), (error, base_offset, append_time) in results.items():
            by_topic.setdefault(topic, []).append(
                {
                    "partition": partition,
                    "error_code": error.code,
                    "base_offset": base_offset,
                    "log_append_time": append_time,
                }
            )
        self._send_response(
            request,
            {
                "responses": [{"topic": t, "partition_responses": ps} for t, ps in by_topic.items()],
                "throttle_time_ms": 0,
            },
        )

    # --8<-- [end:produce]

    @staticmethod
    def _produce_records(record_set, version: int) -> MemoryRecords:
        if record_set is None or len(record_set) == 0:
            raise Errors.CORRUPT_MESSAGE.exception("empty record set")
        if len(record_set) <= MAGIC_OFFSET:
            raise Errors.CORRUPT_MESSAGE.exception(f"record set of {len(record_set)} bytes is too short")
        magic = record_set[MAGIC_OFFSET]
        records = MemoryRecords(record_set)
        if magic == MAGIC_VALUE_V2:
            return records
        if version >= 3:  # Produce v3 carries record batches v2 only (Kafka rejects older formats there)
            raise Errors.CORRUPT_MESSAGE.exception(f"Produce v{version} requires magic 2, got magic {magic}")
        try:
            return up_convert(records)  # the log stores v2: convert the book's message sets on the way in
        except KafkaException as e:
            raise Errors.CORRUPT_MESSAGE.exception(str(e)) from None

    # -- Fetch -------------------------------------------------------------------------------------------------

    # --8<-- [start:fetch]
    def handle_fetch_request(self, request: Request) -> None:
        body, version = request.body, request.header.api_version
        partitions = {}
        for t in body["topics"]:
            for p in t["partitions"]:
                partitions[(t["topic"], p["partition"])] = FetchPartitionRequest(
                    p["fetch_offset"], p["max_bytes"]
                )
        fetch = FetchMetadata(
            min_bytes=body["min_bytes"],
            max_bytes=body.get("max_bytes", 2**31 - 1) if version >= 3 else 2**31 - 1,
            replica_id=body["replica_id"],
            partitions=partitions,
            max_wait_ms=body["max_wait_time"],
        )
        self.replica_manager.fetch_messages(
            fetch, lambda results: self._send_fetch_response(request, results)
        )

    def _send_fetch_response(self, request: Request, results: dict[TopicPartition, LogReadResult]) -> None:
        version = request.header.api_version
        by_topic: dict[str, list] = {}
        for (topic, partition), r in results.items():
            header = {
                "partition": partition,
                "error_code": r.error.code,
                "high_watermark": r.high_watermark,
                "last_stable_offset": r.high_watermark,  # no transactions: everything below the HW is stable
                "log_start_offset": r.log_start_offset,
                "aborted_transactions": None,
            }
            by_topic.setdefault(topic, []).append(
                {"partition_header": header, "record_set": self._fetched_bytes(r.records, version)}
            )
        self._send_response(
            request,
            {
                "throttle_time_ms": 0,
                "responses": [{"topic": t, "partition_responses": ps} for t, ps in by_topic.items()],
            },
        )

    def _fetched_bytes(self, records, version: int):
        if records is None or records.size_in_bytes() == 0:
            return b""
        if version < 4:  # Fetch v0-3 clients read message sets v0 (Fetch v0-1) or v1 (v2-3)
            data = records.read_bytes() if isinstance(records, FileRecords) else bytes(records.buffer())
            return down_convert(MemoryRecords(data), 0 if version < 2 else 1).buffer()
        if isinstance(records, FileRecords):
            region = FileRegion(records.fd, records.start, records.size_in_bytes())
            return region if self.config["fetch.sendfile.enable"] else region.read()
        return records.buffer()

    # --8<-- [end:fetch]

    # -- ListOffsets -------------------------------------------------------------------------------------------

    def handle_list_offsets_request(self, request: Request) -> None:
        version = request.header.api_version
        responses = []
        for t in request.body["topics"]:
            parts = []
            for p in t["partitions"]:
                tp = (t["topic"], p["partition"])
                entry: dict[str, Any] = {"partition": p["partition"]}
                try:
                    partition = self.replica_manager.get_leader_partition(tp)
                    offsets = self._list_offset(partition, p["timestamp"], request.body["replica_id"])
                    error = Errors.NONE
                except ApiException as e:
                    offsets, error = None, Errors.for_exception(e)
                entry["error_code"] = error.code
                if version == 0:
                    entry["offsets"] = [offsets[1]] if offsets and offsets[1] >= 0 else []
                else:
                    entry["timestamp"], entry["offset"] = offsets if offsets else (-1, -1)
                parts.append(entry)
            responses.append({"topic": t["topic"], "partition_responses": parts})
        self._send_response(request, {"throttle_time_ms": 0, "responses": responses})

    @staticmethod
    def _list_offset(partition, timestamp: int, replica_id: int) -> tuple[int, int]:
        """(timestamp, offset): the log start for -2, the high watermark for -1 (a consumer must not
        see beyond it), else the first offset whose timestamp is at or after ``timestamp``."""
        log_ = partition.log
        if timestamp == EARLIEST_TIMESTAMP:
            return -1, log_.log_start_offset
        if timestamp == LATEST_TIMESTAMP:
            return -1, partition.high_watermark() if replica_id < 0 else log_.log_end_offset
        found = log_.fetch_offset_by_timestamp(timestamp)
        return found if found is not None else (-1, -1)

    # -- CreateTopics ---------------------------------------------------------------------------------------------

    # --8<-- [start:create_topics]
    def handle_create_topics_request(self, request: Request) -> None:
        """Only the controller creates topics; duplicates in one request are refused here; the
        admin manager validates, writes to ZooKeeper and answers once the leaders are known."""
        body = request.body
        entries = body["create_topic_requests"]
        names = [t["topic"] for t in entries]
        if not self.controller.is_active():
            message = "This is not the correct controller for this cluster."
            self._send_create_topics_response(
                request, names, {name: (Errors.NOT_CONTROLLER, message) for name in names}
            )
            return
        duplicates = {name for name in names if names.count(name) > 1}
        valid_topics = {
            t["topic"]: TopicDetails(
                t["num_partitions"],
                t["replication_factor"],
                {a["partition_id"]: list(a["replicas"]) for a in t["replica_assignment"]},
                {c["config_name"]: c["config_value"] for c in t["config_entries"]},
            )
            for t in entries
            if t["topic"] not in duplicates
        }

        def send_response_with_duplicates_callback(results: CreateTopicsResults) -> None:
            message = "Create topics request from client contains duplicate topic names"
            duplicate_errors = {name: (Errors.INVALID_REQUEST, message) for name in duplicates}
            self._send_create_topics_response(request, names, {**results, **duplicate_errors})

        self.admin_manager.create_topics(
            body["timeout"],
            body.get("validate_only", False),
            valid_topics,
            send_response_with_duplicates_callback,
        )

    def _send_create_topics_response(
        self, request: Request, names: list[str], results: CreateTopicsResults
    ) -> None:
        """One entry per topic, in the request's order."""
        topic_errors = []
        for topic in dict.fromkeys(names):
            error, message = results[topic]
            topic_errors.append(
                {
                    "topic": topic,
                    "error_code": error.code,
                    "error_message": message if error is not Errors.NONE else None,
                }
            )
        self._send_response(request, {"throttle_time_ms": 0, "topic_errors": topic_errors})

    # --8<-- [end:create_topics]

    # -- InitProducerId ---------------------------------------------------------------------------------------------

    def handle_init_producer_id_request(self, request: Request) -> None:
        if request.body["transactional_id"] is not None:
            log.info(
                "InitProducerId with transactional id %r: transactions are not implemented",
                request.body["transactional_id"],
            )
            body = {
                "throttle_time_ms": 0,
                "error_code": Errors.INVALID_REQUEST.code,
                "producer_id": -1,
                "producer_epoch": -1,
            }
        else:
            try:
                pid = self.producer_id_manager.generate_producer_id()
                body = {"throttle_time_ms": 0, "error_code": 0, "producer_id": pid, "producer_epoch": 0}
            except KafkaException as e:
                log.warning("Cannot allocate a producer id: %s", e)
                body = {
                    "throttle_time_ms": 0,
                    "error_code": Errors.COORDINATOR_NOT_AVAILABLE.code,
                    "producer_id": -1,
                    "producer_epoch": -1,
                }
        self._send_response(request, body)

    # -- from the controller --------------------------------------------------------------------------------------

    def handle_leader_and_isr_request(self, request: Request) -> None:
        self._send_partition_errors(request, *self.replica_manager.become_leader_or_follower(request.body))

    def handle_stop_replica_request(self, request: Request) -> None:
        self._send_partition_errors(request, *self.replica_manager.stop_replicas(request.body))

    def _send_partition_errors(self, request: Request, error: Errors, partitions: dict) -> None:
        """LeaderAndIsr and StopReplica answer alike: the request's error and one per partition."""
        entries = [{"topic": t, "partition": p, "error_code": e.code} for (t, p), e in partitions.items()]
        self._send_response(request, {"error_code": error.code, "partitions": entries})

    def handle_update_metadata_request(self, request: Request) -> None:
        body = request.body
        if body["controller_epoch"] < self.metadata_cache.controller_epoch:
            self._send_response(request, {"error_code": Errors.STALE_CONTROLLER_EPOCH.code})
            return
        self.metadata_cache.update_cache(
            body["controller_id"], body["controller_epoch"], body, request.header.api_version
        )
        if self.admin_manager.has_delayed_topic_operations():
            for topic in {s["topic"] for s in body["partition_states"]}:
                self.admin_manager.try_complete_delayed_topic_operations(topic)
        self._send_response(request, {"error_code": 0})
        # The controller is answered first; then the client requests that waited for this cache.
        self.client_request_purgatory.check_and_complete(FIRST_METADATA)

    # -- from followers ---------------------------------------------------------------------------------------------

    def handle_offsets_for_leader_epoch_request(self, request: Request) -> None:
        """OffsetsForLeaderEpoch (Kafka 0.11, KIP-101): where each requested leader epoch ends in this
        leader's log. A follower asks after a leader change and truncates there, where the book's Kafka
        0.10 truncates to its high watermark. Kafka's ``handleOffsetForLeaderEpochRequest``."""
        requested = {
            (t["topic"], p["partition_id"]): p["leader_epoch"]
            for t in request.body["topics"]
            for p in t["partitions"]
        }
        results = self.replica_manager.last_offset_for_leader_epoch(requested)
        by_topic: dict[str, list[dict]] = {}
        for (topic, partition), (error, end_offset) in results.items():
            by_topic.setdefault(topic, []).append(
                {"error_code": error.code, "partition_id": partition, "end_offset": end_offset}
            )
        topics = [{"topic": topic, "partitions": partitions} for topic, partitions in by_topic.items()]
        self._send_response(request, {"topics": topics})

    def shutdown(self) -> None:
        self.client_request_purgatory.shutdown()
