"""Who a connection is: ``KafkaPrincipal`` (Kafka's ``org.apache.kafka.common.security.auth``)."""

from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal

__all__ = ["KafkaPrincipal"]
