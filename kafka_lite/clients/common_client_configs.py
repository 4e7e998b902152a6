"""The settings every client has, named and documented once for the producer and the consumer.

Mirrors: org.apache.kafka.clients.CommonClientConfigs
         (clients/src/main/java/org/apache/kafka/clients/CommonClientConfigs.java, Kafka 0.10.1)
Book:    chapter 2, 2.1 and chapter 4, 4.1 (the settings both clients take)
Differs: only the settings kafka_lite's clients implement (no socket buffers or metrics
         reporters); the SASL username and password are kafka-python's ``sasl.plain.username`` and
         ``sasl.plain.password``, or, as Kafka's Java clients take them, the options of a JAAS line
         in ``sasl.jaas.config`` (so one properties file serves Kafka's tools and kafka_lite's).

Each client's own config (``ProducerConfig``, ``ConsumerConfig``) defines these names with these
docs and its own defaults and importance, as Kafka's do: the consumer's ``request.timeout.ms`` is
longer than the producer's because it must outlast a JoinGroup held for the whole rebalance.
"""

from __future__ import annotations

from kafka_lite.common.config import ConfigDef, Importance, Type, ValidString
from kafka_lite.common.security.sasl import MECHANISMS, PLAIN
from kafka_lite.network.channel_builders import PLAINTEXT, SECURITY_PROTOCOLS


class CommonClientConfigs:
    BOOTSTRAP_SERVERS_CONFIG = "bootstrap.servers"
    BOOTSTRAP_SERVERS_DOC = "host:port pairs to find the cluster from; the client learns every broker from the first that answers."
    CLIENT_ID_CONFIG = "client.id"
    CLIENT_ID_DOC = "A name for this client in the brokers' request logs (producer-N or consumer-N if empty)."
    METADATA_MAX_AGE_CONFIG = "metadata.max.age.ms"
    METADATA_MAX_AGE_DOC = "Refresh metadata at least this often, even when nothing shows it stale."
    RECONNECT_BACKOFF_MS_CONFIG = "reconnect.backoff.ms"
    RECONNECT_BACKOFF_MS_DOC = "How long to wait before reconnecting to a broker that failed."
    RETRY_BACKOFF_MS_CONFIG = "retry.backoff.ms"
    RETRY_BACKOFF_MS_DOC = "The pause before a failed request is retried (and between metadata refreshes)."
    REQUEST_TIMEOUT_MS_CONFIG = "request.timeout.ms"
    REQUEST_TIMEOUT_MS_DOC = "How long to wait for a response before the request fails (or is retried)."
    # Security (Kafka 0.10.2-0.11's SASL; kafka-python's names for the credentials)
    SECURITY_PROTOCOL_CONFIG = "security.protocol"
    SECURITY_PROTOCOL_DOC = "PLAINTEXT, or SASL_PLAINTEXT to authenticate every connection with SASL."
    SASL_MECHANISM_CONFIG = "sasl.mechanism"
    SASL_MECHANISM_DOC = "The SASL mechanism with SASL_PLAINTEXT: PLAIN or SCRAM-SHA-256."
    SASL_PLAIN_USERNAME_CONFIG = "sasl.plain.username"
    SASL_PLAIN_USERNAME_DOC = "The user to authenticate as (PLAIN and SCRAM-SHA-256)."
    SASL_PLAIN_PASSWORD_CONFIG = "sasl.plain.password"
    SASL_PLAIN_PASSWORD_DOC = "That user's password."
    SASL_JAAS_CONFIG = "sasl.jaas.config"
    SASL_JAAS_CONFIG_DOC = (
        "A JAAS login line, as Kafka's Java clients take it (KIP-85): its username and password "
        "options are the login when sasl.plain.username is not set."
    )


def define_security_configs(config_def: ConfigDef) -> ConfigDef:
    """Add the five security settings to a client's ConfigDef, as Kafka adds
    ``CommonClientConfigs``' and ``SaslConfigs``' to ProducerConfig and ConsumerConfig."""
    c = CommonClientConfigs
    return (
        config_def.define(c.SECURITY_PROTOCOL_CONFIG, Type.STRING, PLAINTEXT, ValidString.in_(*SECURITY_PROTOCOLS),
                          Importance.MEDIUM, c.SECURITY_PROTOCOL_DOC)
        .define(c.SASL_MECHANISM_CONFIG, Type.STRING, PLAIN, ValidString.in_(*MECHANISMS), Importance.MEDIUM,
                c.SASL_MECHANISM_DOC)
        .define(c.SASL_PLAIN_USERNAME_CONFIG, Type.STRING, None, None, Importance.MEDIUM, c.SASL_PLAIN_USERNAME_DOC)
        .define(c.SASL_PLAIN_PASSWORD_CONFIG, Type.PASSWORD, None, None, Importance.MEDIUM, c.SASL_PLAIN_PASSWORD_DOC)
        .define(c.SASL_JAAS_CONFIG, Type.PASSWORD, None, None, Importance.MEDIUM, c.SASL_JAAS_CONFIG_DOC)
    )  # fmt: skip
