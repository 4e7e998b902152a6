"""Helpers the clients share: the bootstrap servers' addresses, and the channel builder their
security settings call for.

Mirrors: org.apache.kafka.clients.ClientUtils.parseAndValidateAddresses and createChannelBuilder
         (clients/src/main/java/org/apache/kafka/clients/ClientUtils.java, Kafka 0.10.1)
Book:    chapter 2, 2.1 (the producer's configuration: bootstrap.servers)
Differs: no DNS lookup here: an address is resolved when the client connects to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.security.jaas_config import client_credentials
from kafka_lite.network.channel_builders import ChannelBuilder, client_channel_builder


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


def create_channel_builder(config: Mapping[str, Any], client_id: str) -> ChannelBuilder:
    """A client's channel builder from its parsed ``security.protocol``, ``sasl.mechanism`` and
    login: ``sasl.plain.username`` and ``sasl.plain.password``, else ``sasl.jaas.config``'s."""
    username, password = config["sasl.plain.username"], config["sasl.plain.password"]
    if username is None and config.get("sasl.jaas.config"):
        username, password = client_credentials(config["sasl.jaas.config"])
    return client_channel_builder(
        config["security.protocol"], config["sasl.mechanism"], username, password, client_id
    )
