"""Security's shared names: principals, and the protocols a listener speaks (Kafka's
``org.apache.kafka.common.security``)."""
