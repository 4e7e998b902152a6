"""The worker's settings: where Kafka is, which converters, how often offsets are committed.

Mirrors: org.apache.kafka.connect.runtime.WorkerConfig and
         org.apache.kafka.connect.runtime.standalone.StandaloneConfig
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/WorkerConfig.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: a converter setting is Kafka's class name, mapped to kafka_lite's class (see
         ``connector_factory``). Other settings of Kafka's worker pass unchecked.

Settings with a prefix go to what the prefix names, the prefix removed: ``key.converter.*`` and
``value.converter.*`` to the converters, ``internal.key.converter.*`` to the offsets' converters,
``producer.*`` to every source task's producer, ``consumer.*`` to every sink task's consumer.

On a secure cluster a worker logs in up to three times, as Kafka's does. The client security
settings at the top level (``security.protocol``, ``sasl.mechanism``, ``sasl.jaas.config``) are the
worker's own: its group membership and the clients of its internal topics (offsets, and in
distributed mode configs and statuses) log in with them. The tasks' clients do not inherit them: a
source task's producer logs in with ``producer.security.protocol`` and so on, a sink task's consumer
with ``consumer.*``, so the connectors' data may be read and written under another principal than
the worker's bookkeeping (Kafka's Connect guide: the settings "set up to three times in the worker
configuration").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_lite.clients.common_client_configs import define_security_configs
from kafka_lite.common.config import AbstractConfig, ConfigDef, Importance, Range, Type

H, M, L = Importance.HIGH, Importance.MEDIUM, Importance.LOW

BOOTSTRAP_SERVERS_CONFIG = "bootstrap.servers"
KEY_CONVERTER_CLASS_CONFIG = "key.converter"
VALUE_CONVERTER_CLASS_CONFIG = "value.converter"
INTERNAL_KEY_CONVERTER_CLASS_CONFIG = "internal.key.converter"
INTERNAL_VALUE_CONVERTER_CLASS_CONFIG = "internal.value.converter"
TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_CONFIG = "task.shutdown.graceful.timeout.ms"
OFFSET_COMMIT_INTERVAL_MS_CONFIG = "offset.flush.interval.ms"
OFFSET_COMMIT_TIMEOUT_MS_CONFIG = "offset.flush.timeout.ms"
REST_HOST_NAME_CONFIG = "rest.host.name"
REST_PORT_CONFIG = "rest.port"
REST_ADVERTISED_HOST_NAME_CONFIG = "rest.advertised.host.name"
REST_ADVERTISED_PORT_CONFIG = "rest.advertised.port"
OFFSET_STORAGE_FILE_FILENAME_CONFIG = "offset.storage.file.filename"

WORKER_CONFIG_DEF = define_security_configs(
    ConfigDef()
    .define(BOOTSTRAP_SERVERS_CONFIG, Type.LIST, "localhost:9092", None, H,
            "A list of host/port pairs to use for establishing the initial connection to the Kafka cluster.")
    .define(KEY_CONVERTER_CLASS_CONFIG, Type.STRING, importance=H,
            doc="Converter class for key Connect data, such as org.apache.kafka.connect.json.JsonConverter.")
    .define(VALUE_CONVERTER_CLASS_CONFIG, Type.STRING, importance=H,
            doc="Converter class for value Connect data.")
    .define(INTERNAL_KEY_CONVERTER_CLASS_CONFIG, Type.STRING, importance=L,
            doc="Converter class for the keys of internal data: the offsets' keys.")
    .define(INTERNAL_VALUE_CONVERTER_CLASS_CONFIG, Type.STRING, importance=L,
            doc="Converter class for the values of internal data: the offsets.")
    .define(TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_CONFIG, Type.LONG, 5000, Range.at_least(0), L,
            "How long to wait for tasks to shut down gracefully, in total for all tasks.")
    .define(OFFSET_COMMIT_INTERVAL_MS_CONFIG, Type.LONG, 60000, Range.at_least(1), L,
            "Interval at which to try committing offsets for tasks.")
    .define(OFFSET_COMMIT_TIMEOUT_MS_CONFIG, Type.LONG, 5000, Range.at_least(0), L,
            "How long to wait for records to flush and offsets to be committed before cancelling "
            "the commit and retrying it in a later attempt.")
    .define(REST_HOST_NAME_CONFIG, Type.STRING, None, None, L,
            "Hostname for the REST API. If this is set, it will only bind to this interface.")
    .define(REST_PORT_CONFIG, Type.INT, 8083, Range.between(0, 65535), L,
            "Port for the REST API to listen on (0: any free port).")
    .define(REST_ADVERTISED_HOST_NAME_CONFIG, Type.STRING, None, None, L,
            "If this is set, this is the hostname that will be given out to other workers to connect to.")
    .define(REST_ADVERTISED_PORT_CONFIG, Type.INT, None, Range.between(1, 65535), L,
            "If this is set, this is the port that will be given out to other workers to connect to.")
)  # fmt: skip

STANDALONE_CONFIG_DEF = ConfigDef()
STANDALONE_CONFIG_DEF.keys.update(WORKER_CONFIG_DEF.keys)
STANDALONE_CONFIG_DEF.define(
    OFFSET_STORAGE_FILE_FILENAME_CONFIG, Type.STRING, importance=H, doc="File to store offset data in"
)


# The worker's own login, handed to the clients of its group membership and its internal topics.
SECURITY_CONFIGS = ("security.protocol", "sasl.mechanism", "sasl.plain.username", "sasl.plain.password",
                    "sasl.jaas.config")  # fmt: skip


def worker_security_configs(values: Mapping[str, Any]) -> dict[str, Any]:
    """The client security settings among the worker's parsed ``values`` (those set: a login the
    worker was not given is left to the clients' defaults)."""
    return {name: values[name] for name in SECURITY_CONFIGS if values.get(name) is not None}


class WorkerConfig(AbstractConfig):
    """The parsed settings (``values``) and every setting as given (``originals``)."""

    CONFIG_DEF = WORKER_CONFIG_DEF

    def __init__(self, props: dict[str, Any]) -> None:
        super().__init__(self.CONFIG_DEF, props)


class StandaloneConfig(WorkerConfig):
    CONFIG_DEF = STANDALONE_CONFIG_DEF
