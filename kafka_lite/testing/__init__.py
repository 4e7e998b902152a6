"""Harnesses that build kafka_lite's runtime parts in one process: most on one ``MockTime``, and a
real cluster (``EmbeddedKafkaCluster``, ZooKeeper and brokers) for the notebooks that talk to one.

No Kafka twin: Kafka keeps the same harnesses in its test sources (``MockTimer``, replica managers
built by hand in ``ReplicaManagerTest``, a group metadata manager over a mocked log, Streams'
``EmbeddedKafkaCluster``); kafka_lite ships them in the package because the chapter notebooks, the
labs and the guides' pictures step the real classes with them. Nothing in the broker or the clients
imports this package.
"""
