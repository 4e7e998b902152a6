"""The REST API's errors: an exception that carries its HTTP status, and how each error is answered.

Mirrors: org.apache.kafka.connect.runtime.rest.errors
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/rest/errors/, Kafka 0.11)
Book:    chapter 8, 8.3.3
"""
