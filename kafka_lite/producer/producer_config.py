"""The producer's settings, with Kafka's names, defaults and checks.

Mirrors: org.apache.kafka.clients.producer.ProducerConfig
         (clients/src/main/java/.../producer/ProducerConfig.java, Kafka 0.11.0)
Book:    chapter 2, 2.1 (batch.size, linger.ms, buffer.memory, acks, retries ...)
Differs: only the settings kafka_lite's producer implements are defined, so a setting it would
         ignore is an error rather than a silent no-op. Serializers and the partitioner are Python
         callables passed beside the configs (``key_serializer=str.encode``), as kafka-python takes
         them, not class names; so are the classes in ``interceptor.classes``. ``compression.type`` also takes ``zstd``, which kafka_lite's broker
         stores (Kafka added it in 2.1).

Python callers use kafka-python's keyword spelling (``linger_ms=5``); ``ConfigDef.parse`` maps it to
Kafka's dotted name, and every error names the setting::

    ConfigException: Invalid value -1 for configuration linger.ms: Value must be at least 0
"""

from __future__ import annotations

from kafka_lite.clients.common_client_configs import CommonClientConfigs, define_security_configs
from kafka_lite.common.config import NO_DEFAULT_VALUE, ConfigDef, Importance, Range, Type, ValidString
from kafka_lite.common.utils import INT32_MAX

H = Importance.HIGH
M = Importance.MEDIUM
L = Importance.LOW

# --8<-- [start:config_def]
CONFIG_DEF = (
    ConfigDef()
    .define(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, Type.LIST, NO_DEFAULT_VALUE, None, H,
            CommonClientConfigs.BOOTSTRAP_SERVERS_DOC)
    .define(CommonClientConfigs.CLIENT_ID_CONFIG, Type.STRING, "", None, M, CommonClientConfigs.CLIENT_ID_DOC)
    .define("acks", Type.STRING, "1", ValidString.in_("all", "-1", "0", "1"), H,
            "0: do not wait for the broker; 1: the leader wrote it; all (-1): every in-sync replica did.")
    .define("batch.size", Type.INT, 16384, Range.at_least(0), M,
            "Bytes of records per partition batch; a full batch is sent without waiting for linger.ms.")
    .define("linger.ms", Type.LONG, 0, Range.at_least(0), M,
            "How long a batch waits for more records before it is sent anyway.")
    .define("buffer.memory", Type.LONG, 32 * 1024 * 1024, Range.at_least(0), H,
            "Bytes of records the producer may hold unsent; send blocks when they are used up.")
    .define("max.block.ms", Type.LONG, 60_000, Range.at_least(0), M,
            "How long send and partitions_for may block for metadata or for buffer memory.")
    .define(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG, Type.INT, 30_000, Range.at_least(0), M,
            CommonClientConfigs.REQUEST_TIMEOUT_MS_DOC + " It also bounds how long a batch may wait to be sent.")
    .define("retries", Type.INT, 0, Range.between(0, INT32_MAX), H,
            "How many times to resend a batch that failed with a retriable error.")
    .define(CommonClientConfigs.RETRY_BACKOFF_MS_CONFIG, Type.LONG, 100, Range.at_least(0), L,
            CommonClientConfigs.RETRY_BACKOFF_MS_DOC)
    .define("max.in.flight.requests.per.connection", Type.INT, 5, Range.at_least(1), L,
            "Produce requests a broker may have unanswered; 1 keeps retried batches in order.")
    .define("compression.type", Type.STRING, "none", ValidString.in_("none", "gzip", "snappy", "lz4", "zstd"), H,
            "The codec each batch is compressed with.")
    .define("max.request.size", Type.INT, 1024 * 1024, Range.at_least(0), M,
            "The largest produce request, and so the largest record, in bytes.")
    .define(CommonClientConfigs.METADATA_MAX_AGE_CONFIG, Type.LONG, 300_000, Range.at_least(0), L,
            CommonClientConfigs.METADATA_MAX_AGE_DOC)
    .define(CommonClientConfigs.RECONNECT_BACKOFF_MS_CONFIG, Type.LONG, 50, Range.at_least(0), L,
            CommonClientConfigs.RECONNECT_BACKOFF_MS_DOC)
    .define("interceptor.classes", Type.LIST, [], None, L,
            "Interceptor classes: each sees every record before it is serialized, and every acknowledgement.")
    .define("enable.idempotence", Type.BOOLEAN, False, None, L,
            "Write each record exactly once per partition despite retries: acks=all, retries > 0 and at most "
            "5 requests in flight (acks and retries default to those when it is on).")
    .define("transactional.id", Type.STRING, None, None, L,
            "The id that ties this producer's transactions together across restarts: a new producer with "
            "the same id fences the old one and completes its open transaction. Implies enable.idempotence.")
    .define("transaction.timeout.ms", Type.INT, 60_000, Range.at_least(1), L,
            "How long the transaction coordinator waits for a transaction to end before aborting it.")
    .define("transaction.version", Type.INT, 0, Range.between(0, 2), L,
            "2: take a new epoch at the end of every transaction (KIP-890 part 2, EndTxn v5); 0: Kafka "
            "0.11's transactions. Kafka 4.0's producer reads it from the cluster's finalized feature of "
            "this name in the brokers' ApiVersions answer; kafka_lite's client negotiates no versions, "
            "so it is set here.")
)  # fmt: skip
# --8<-- [end:config_def]
define_security_configs(CONFIG_DEF)
