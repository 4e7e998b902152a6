"""Tools that read the cluster or its files, load it, or copy it to another cluster.

Mirrors: kafka.tools (core/src/main/scala/kafka/tools/, Kafka 0.10.1): MirrorMaker,
         DumpLogSegments (0.11's), ConsoleProducer, ConsoleConsumer and ConsumerPerformance
         (Kafka 1.0's);
         StreamsResetter (kafka-streams-application-reset.sh);
         org.apache.kafka.tools (tools/src/main/java/org/apache/kafka/tools/, Kafka 0.11.0):
         ProducerPerformance and ThroughputThrottler
Book:    chapter 8, 8.1 (MirrorMaker, which Kafka keeps among these tools)
"""
