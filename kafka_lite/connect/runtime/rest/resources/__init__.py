"""The REST API's resources: one module per group of paths, as Kafka's JAX-RS resource classes.

Mirrors: org.apache.kafka.connect.runtime.rest.resources
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/rest/resources/, Kafka 0.11)
Book:    chapter 8, 8.3.1 and 8.3.3
"""
