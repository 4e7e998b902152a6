"""Kafka Connect's REST API: the JSON entities, the resources and the server.

Mirrors: org.apache.kafka.connect.runtime.rest
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/rest/, Kafka 0.11)
Book:    chapter 8, 8.3.1 and 8.3.3 (using connectors; the REST server beside the herder)

Only the modules of this package that serve HTTP import FastAPI and uvicorn (``layers.toml``'s
``confined_dependencies``); the herders import its entities and errors alone.
"""
