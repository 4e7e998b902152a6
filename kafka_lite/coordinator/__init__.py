"""The group coordinator: the broker's side of consumer groups, their members and their offsets.

Mirrors: kafka.coordinator (core/src/main/scala/kafka/coordinator/, Kafka 0.10.1)
Book:    chapter 5
"""
