"""The Processor API's runtime: a task, its record queues and partition group, its context, its collector.

No Kafka twin: a package, Kafka's ``org.apache.kafka.streams.processor.internals``; each module
names the class it mirrors.
Book:    chapter 9, 9.1.3 (threads and tasks), 9.1.4 (state)
"""
