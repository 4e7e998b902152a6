"""Helpers the clients share: the bootstrap servers' addresses, the channel builder their security
settings call for, and the login those settings name.

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
    username, password = login_credentials(config)
    return client_channel_builder(
        config["security.protocol"], config["sasl.mechanism"], username, password, client_id
    )


def login_credentials(config: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The username and password a client logs in with: ``sasl.plain.username`` and
    ``sasl.plain.password`` if given, else the options of ``sasl.jaas.config``'s one entry."""
    username, password = config.get("sasl.plain.username"), config.get("sasl.plain.password")
    if username is None and config.get("sasl.jaas.config"):
        username, password = client_credentials(config["sasl.jaas.config"])
    return username, password


def admin_client_login(config: Mapping[str, Any]) -> dict[str, Any]:
    """A client's dotted security settings as ``KafkaAdminClient``'s arguments, which are
    kafka-python's names: so a tool's admin client logs in as the same principal as its producer and
    consumers (Streams' internal topics, Connect's offset, config and status topics)."""
    username, password = login_credentials(config)
    return {
        "security_protocol": config.get("security.protocol") or "PLAINTEXT",
        "sasl_mechanism": config.get("sasl.mechanism") or "PLAIN",
        "sasl_plain_username": username,
        "sasl_plain_password": password,
    }
