"""A distributed worker put together: stores, worker, herder and REST server, started and stopped as one.

Mirrors: org.apache.kafka.connect.cli.ConnectDistributed (its wiring) and
         org.apache.kafka.connect.runtime.Connect
         (connect/runtime/src/main/java/org/apache/kafka/connect/cli/ConnectDistributed.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: the wiring is a function of its own, so that tests build in-process workers exactly as
         ``kafka-lite connect distributed`` does; the REST server is Kafka 0.11's shape (it binds
         in its constructor, so the advertised URL is known before the herder starts).

The REST server is created first, because its advertised URL is the worker's identity: the herder
tells the group that URL (others forward requests there), and the worker id written in every
status is its ``host:port``. Three stores share the internal converter (JSON without schemas in
the quick start): the offset store goes to the worker, the status and config stores to the herder.
``start`` starts the herder's thread, then serves the API; ``stop`` stops serving, then stops the
herder (which stops the tasks, leaves the group and stops the stores and the worker).
"""

from __future__ import annotations

import logging
import urllib.parse
from typing import Any

from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.connect.runtime import connector_factory
from kafka_lite.connect.runtime.distributed.distributed_config import DistributedConfig
from kafka_lite.connect.runtime.distributed.distributed_herder import DistributedHerder
from kafka_lite.connect.runtime.rest.rest_server import RestServer
from kafka_lite.connect.runtime.worker import Worker
from kafka_lite.connect.runtime.worker_config import INTERNAL_VALUE_CONVERTER_CLASS_CONFIG
from kafka_lite.connect.storage.converter import Converter
from kafka_lite.connect.storage.kafka_config_backing_store import KafkaConfigBackingStore
from kafka_lite.connect.storage.kafka_offset_backing_store import KafkaOffsetBackingStore
from kafka_lite.connect.storage.kafka_status_backing_store import KafkaStatusBackingStore

log = logging.getLogger(__name__)


class Connect:
    """A worker's herder and REST server, as one thing to start and stop."""

    def __init__(self, herder: DistributedHerder, rest: RestServer) -> None:
        self.herder = herder
        self.rest = rest

    def start(self) -> None:
        log.info("Kafka Connect starting")
        self.herder.start()
        self.rest.start(self.herder)
        log.info("Kafka Connect started")

    def stop(self) -> None:
        log.info("Kafka Connect stopping")
        self.rest.stop()
        self.herder.stop()
        log.info("Kafka Connect stopped")


def internal_value_converter(config: DistributedConfig) -> Converter:
    converter = connector_factory.new_converter(config.get(INTERNAL_VALUE_CONVERTER_CLASS_CONFIG))
    converter.configure(config.originals_with_prefix("internal.value.converter."), False)
    return converter


def connect_distributed(props: dict[str, Any], time: Time = SYSTEM) -> Connect:
    """Build (not start) a distributed worker from its properties; a bad setting raises
    ``ConfigException``, a REST port in use ``OSError``."""
    config = DistributedConfig(props)
    rest = RestServer(config)  # binds now: its URL is the worker's identity
    try:
        advertised_url = rest.advertised_url()
        address = urllib.parse.urlsplit(advertised_url)
        worker_id = f"{address.hostname}:{address.port}"
        worker = Worker(worker_id, config, KafkaOffsetBackingStore(time), time)
        status_backing_store = KafkaStatusBackingStore(internal_value_converter(config), time)
        status_backing_store.configure(config.values)
        config_backing_store = KafkaConfigBackingStore(internal_value_converter(config), time)
        config_backing_store.configure(config.values)
        herder = DistributedHerder(config, worker, worker_id, status_backing_store, config_backing_store,
                                   advertised_url, time)  # fmt: skip
    except BaseException:
        rest.stop()
        raise
    return Connect(herder, rest)
