"""The consumer's internals: the group protocol it embeds, and what its coordinator calls.

Mirrors: org.apache.kafka.clients.consumer.internals (Kafka 0.10.1)
"""
