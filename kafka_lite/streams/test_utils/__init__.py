"""Testing a topology without a broker: ``TopologyTestDriver``.

No Kafka twin: a package, Kafka's ``streams/test-utils`` artifact (Kafka 1.1, KIP-247), whose
driver ``topology_test_driver.py`` mirrors.
Book:    chapter 9, 9.1 (a topology stepped record by record)
"""

from kafka_lite.streams.test_utils.topology_test_driver import TopologyTestDriver

__all__ = ["TopologyTestDriver"]
