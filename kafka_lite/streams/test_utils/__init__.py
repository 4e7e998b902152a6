"""Testing a topology without a broker: ``TopologyTestDriver``."""

from kafka_lite.streams.test_utils.topology_test_driver import TopologyTestDriver

__all__ = ["TopologyTestDriver"]
