"""The stream partition assignor's parts: the user data it exchanges and the task assignor.

No Kafka twin: a package, Kafka's ``org.apache.kafka.streams.processor.internals.assignment``; each
module names the class it mirrors.
Book:    chapter 9, 9.1.3 (tasks placed on threads and instances)
"""
