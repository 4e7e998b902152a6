"""The broker's listener on the metadata log: committed records replayed into a delta, a new image
published from it.

Mirrors: kafka.server.metadata.BrokerMetadataListener
         (core/src/main/scala/kafka/server/metadata/BrokerMetadataListener.scala, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the event queue is passed in (Kafka's builds its own KafkaEventQueue), so a test or a
         notebook can step it on a MockTime; the broker writes no metadata snapshots of its own
         (Kafka's ``MetadataSnapshotter``) and keeps no batch-size or latency histograms; a record
         that fails to replay is logged and skipped, as 3.3's non-fatal loading fault handler does.

The Raft client calls ``handle_commit`` and ``handle_snapshot`` on its own thread; each becomes an
event on this listener's queue, so that replaying and publishing never hold up Raft. All the state
below (the image, the delta, the publisher) is touched only by the queue's thread, except
``highest_metadata_offset``, which the lifecycle manager's heartbeat reads from its own.

How publishing goes, as in 3.3::

    before start_publishing:  every commit is replayed into one delta; nothing is published
    start_publishing(p):      (the broker has caught up with the metadata log: the controller's
                              heartbeat answer said so) the whole delta so far is published at once,
                              the "initial MetadataDelta", then p is kept
    after:                    each handle_commit (or snapshot) publishes its own delta

Publishing applies the delta to the current image (``MetadataDelta.apply``), starts a new empty
delta from the new image, and hands both the delta and the new image to the publisher: the delta
says what changed (the replica manager's work), the image what is (the metadata cache's).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any, Protocol

from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.time import Time
from kafka_lite.metadata.image import MetadataDelta, MetadataImage
from kafka_lite.queue.event_queue import Event, EventQueue, FunctionEvent
from kafka_lite.raft.raft_client import Batch, LeaderAndEpoch, Listener

log = logging.getLogger(__name__)


class MetadataPublisher(Protocol):
    """What the listener hands each new image to (Kafka's ``MetadataPublisher``)."""

    def publish(self, delta: MetadataDelta, new_image: MetadataImage) -> None: ...


FaultHandler = Callable[[str, BaseException], None]


def log_fault(message: str, cause: BaseException) -> None:
    """The default fault handler: log and go on (Kafka's LoggingFaultHandler)."""
    log.error("Encountered metadata loading fault: %s", message, exc_info=cause)


class BrokerMetadataListener(Listener):
    def __init__(
        self, broker_id: int, time: Time, event_queue: EventQueue, fault_handler: FaultHandler = log_fault
    ) -> None:
        self.broker_id = broker_id
        self.time = time
        self.event_queue = event_queue
        self.fault_handler = fault_handler
        self._highest_offset = -1  # written only on the queue's thread; read by any
        self._highest_timestamp = -1
        self._image = MetadataImage.EMPTY
        self._delta = MetadataDelta(self._image)
        self._publisher: MetadataPublisher | None = None

    def highest_metadata_offset(self) -> int:
        """The offset of the last record replayed (what the heartbeat reports). Thread-safe: one
        int read."""
        return self._highest_offset

    # --8<-- [start:handle_commit]
    def handle_commit(self, batches: list[Batch]) -> None:
        self.event_queue.append(FunctionEvent(lambda: self._handle_commits(batches)))

    def _handle_commits(self, batches: list[Batch]) -> None:
        self._load_batches(self._delta, batches)
        if self._publisher is not None:
            self._publish(self._publisher)

    def handle_snapshot(self, reader: Any) -> None:
        self.event_queue.append(FunctionEvent(lambda: self._handle_snapshot(reader)))

    def _handle_snapshot(self, reader: Any) -> None:
        """A snapshot is the whole state at its offset: the delta starts again from the current
        image, every record of the snapshot is replayed at the snapshot's offset and epoch, and
        ``finish_snapshot`` removes what the image had that the snapshot does not."""
        snapshot_id = reader.snapshot_id()
        name = f"{snapshot_id.offset}-{snapshot_id.epoch}"
        log.info("Loading snapshot %s", name)
        self._delta = MetadataDelta(self._image)  # discard any previous deltas
        self._load_batches(
            self._delta,
            reader,
            last_append_timestamp=reader.last_contained_log_timestamp(),
            last_committed_offset=reader.last_contained_log_offset(),
            last_committed_epoch=reader.last_contained_log_epoch(),
            snapshot_name=name,
        )
        try:
            self._delta.finish_snapshot()
        except Exception as e:
            self.fault_handler(f"Error finishing snapshot {name}", e)
        reader.close()
        if self._publisher is not None:
            self._publish(self._publisher)

    def _load_batches(
        self,
        delta: MetadataDelta,
        batches: Iterable[Batch],
        last_append_timestamp: int | None = None,
        last_committed_offset: int | None = None,
        last_committed_epoch: int | None = None,
        snapshot_name: str | None = None,
    ) -> int:
        """Replay every record of ``batches`` into ``delta``; return how many. In the log each record
        is at its own offset (the batch's base offset plus its index); in a snapshot every record is
        at the snapshot's last contained offset and epoch, which is what the image will say."""
        num_records = 0
        for batch in batches:
            epoch = batch.epoch if last_committed_epoch is None else last_committed_epoch
            self._highest_timestamp = (
                batch.append_timestamp if last_append_timestamp is None else last_append_timestamp
            )
            for index, message in enumerate(batch.records):
                offset = batch.base_offset + index if last_committed_offset is None else last_committed_offset
                self._highest_offset = offset
                record = message.message if isinstance(message, ApiMessageAndVersion) else message
                try:
                    delta.replay(offset, epoch, record)
                except Exception as e:
                    if snapshot_name is None:
                        self.fault_handler(f"Error replaying metadata log record at offset {offset}", e)
                    else:
                        self.fault_handler(
                            f"Error replaying record {index} from snapshot {snapshot_name} at offset {offset}",
                            e,
                        )
                num_records += 1
        return num_records

    # --8<-- [end:handle_commit]

    # --8<-- [start:publish]
    def start_publishing(self, publisher: MetadataPublisher) -> Future:
        """From now on publish to ``publisher``, starting with everything replayed so far. The
        broker calls this once the controller says it has caught up with the metadata log, so the
        first image it serves from is a whole one. The future completes once that first publish
        has run."""
        event = _StartPublishingEvent(self, publisher)
        self.event_queue.append(event)
        return event.future

    def _publish(self, publisher: MetadataPublisher) -> None:
        delta = self._delta
        try:
            self._image = delta.apply()
        except Exception as e:
            # The image stays as it was; the next commit tries again with this delta and more.
            self.fault_handler(f"Error applying metadata delta {delta}", e)
            raise
        self._delta = MetadataDelta(self._image)
        log.debug(
            "Publishing new metadata delta %s at offset %d.",
            delta,
            self._image.highest_offset_and_epoch.offset,
        )
        publisher.publish(delta, self._image)

    # --8<-- [end:publish]

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        pass  # a broker follows whoever leads; nothing to do

    def begin_shutdown(self) -> None:
        self.event_queue.begin_shutdown("beginShutdown")

    def close(self) -> None:
        self.begin_shutdown()
        self.event_queue.close()


class _StartPublishingEvent(Event):
    """Kafka's StartPublishingEvent: its future fails if the event cannot run (the queue is closing)."""

    def __init__(self, listener: BrokerMetadataListener, publisher: MetadataPublisher) -> None:
        self.listener = listener
        self.publisher = publisher
        self.future: Future = Future()

    def run(self) -> None:
        self.listener._publisher = self.publisher
        log.info("Starting to publish metadata events at offset %d.", self.listener.highest_metadata_offset())
        self.listener._publish(self.publisher)
        self.future.set_result(None)

    def handle_exception(self, exc: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(exc)
