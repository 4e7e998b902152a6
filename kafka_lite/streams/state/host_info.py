"""Where an instance of a Streams application can be reached for interactive queries.

Mirrors: org.apache.kafka.streams.state.HostInfo
         (streams/src/main/java/org/apache/kafka/streams/state/HostInfo.java, Kafka 0.10.1)
Book:    chapter 9, 9.1.3 (the assignment tells every instance which host holds which partitions)
"""

from __future__ import annotations

from typing import NamedTuple


class HostInfo(NamedTuple):
    """An instance's ``application.server`` end point, ``host:port``."""

    host: str
    port: int

    @classmethod
    def parse(cls, end_point: str) -> HostInfo:
        """The ``HostInfo`` of ``"host:port"``, as the assignor splits ``user_end_point``."""
        host, _, port = end_point.rpartition(":")
        return cls(host, int(port))
