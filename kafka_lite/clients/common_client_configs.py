"""The settings every client has, named and documented once for the producer and the consumer.

Mirrors: org.apache.kafka.clients.CommonClientConfigs
         (clients/src/main/java/org/apache/kafka/clients/CommonClientConfigs.java, Kafka 0.10.1)
Book:    chapter 2, 2.1 and chapter 4, 4.1 (the settings both clients take)
Differs: only the settings kafka_lite's clients implement (no socket buffers, metrics reporters or
         security protocol).

Each client's own config (``ProducerConfig``, ``ConsumerConfig``) defines these names with these
docs and its own defaults and importance, as Kafka's do: the consumer's ``request.timeout.ms`` is
longer than the producer's because it must outlast a JoinGroup held for the whole rebalance.
"""

from __future__ import annotations


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
