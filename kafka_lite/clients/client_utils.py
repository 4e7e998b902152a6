"""Helpers the clients share: the bootstrap servers' addresses.

Mirrors: org.apache.kafka.clients.ClientUtils.parseAndValidateAddresses
         (clients/src/main/java/org/apache/kafka/clients/ClientUtils.java, Kafka 0.10.1)
Book:    chapter 2, 2.1 (the producer's configuration: bootstrap.servers)
Differs: no DNS lookup here: an address is resolved when the client connects to it.
"""

from __future__ import annotations

from kafka_lite.common.errors import KafkaException


def parse_bootstrap(servers: str | list[str]) -> list[tuple[str, int]]:
    """``"host:port,host:port"`` (or a list) into addresses; a bad entry names itself."""
    entries = servers.split(",") if isinstance(servers, str) else list(servers)
    addresses = []
    for entry in (e.strip() for e in entries if e.strip()):
        host, sep, port = entry.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise KafkaException(f"Invalid bootstrap server '{entry}': expected host:port")
        addresses.append((host, int(port)))
    if not addresses:
        raise KafkaException("No bootstrap servers given")
    return addresses
