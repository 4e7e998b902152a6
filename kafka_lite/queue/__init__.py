"""The event queue: one thread that runs events one at a time, in order, with deadlines.

Mirrors: org.apache.kafka.queue (server-common/src/main/java/org/apache/kafka/queue/, Kafka 3.3.0)
Book:    beyond the book, chapter 12

The quorum controller runs every request, Raft callback and timer as an event on one of these; a
KRaft broker's metadata listener and its lifecycle manager each run on one too. Kafka keeps the
queue in server-common, below both the controller and the broker, and so does kafka_lite: the
broker uses the queue without importing the controller.
"""
