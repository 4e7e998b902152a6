"""ZooKeeper for kafka_lite: the embedded server, Kafka 0.10's paths and JSON, and replica assignment.

Mirrors: kafka.utils.ZkUtils and kafka.admin.AdminUtils (core/src/main/scala/kafka/{utils,admin}/, Kafka 0.10.1)
Book:    chapter 7, 7.1 (ZooKeeper holds the cluster's state; the controller acts on it)

Import from the modules themselves (``kafka_lite.zk.zk_utils``, ``kafka_lite.zk.embedded``,
``kafka_lite.zk.admin_utils``): the package re-exports nothing, so ``kafka_lite.zk.embedded``, which
the CLI loads to start a server, does not load kazoo.
"""
