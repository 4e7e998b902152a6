"""Kafka Connect: connectors that copy data between Kafka and other systems, and the worker that runs them.

Mirrors: org.apache.kafka.connect (connect/api, connect/runtime, connect/json and connect/file, Kafka 0.10.1)
Book:    chapter 8, 8.3 (Kafka Connect)

A *connector* describes a copy job and splits it into *tasks*; a *worker* runs the tasks, turning
each record into bytes with a *converter* and writing it with a producer (a source task), or
reading it with a consumer and handing it to the task (a sink task). ``runtime`` holds the worker
and the herders (``runtime/standalone``, ``runtime/distributed``), with the REST API that drives a
herder (``runtime/rest``); ``storage`` the offset, config and status stores; ``file`` Kafka's two
example connectors, ``sqlite`` a SQLite sink and source, ``json`` the JSON converter. Standalone
mode is one process, connector configs from properties files or the REST API, source offsets in a
local file; distributed mode is a group of workers keeping all three in compacted topics.
"""
