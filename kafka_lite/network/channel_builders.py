"""Channel builders: what each new connection is given to speak, by the listener's security protocol.

Mirrors: org.apache.kafka.common.network.ChannelBuilder, PlaintextChannelBuilder and
         SaslChannelBuilder (clients/src/main/java/org/apache/kafka/common/network/, Kafka 0.11)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
Differs: no TLS, so no SslChannelBuilder; the builder is handed the authenticator's collaborators
         (mechanisms, credentials) rather than reading them from the configs itself.

A selector builds every channel it opens or adopts through its builder. PLAINTEXT channels need no
authentication and are ``User:ANONYMOUS``; SASL channels get a fresh authenticator each, the broker's
``SaslServerAuthenticator`` on a SASL listener, or a ``SaslClientAuthenticator`` in a client whose
``security.protocol`` is SASL_PLAINTEXT.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Protocol

from kafka_lite.common.errors import ConfigException
from kafka_lite.common.security.plain.plain_sasl_client import PlainSaslClient
from kafka_lite.common.security.sasl import MECHANISMS, SCRAM_SHA_256, SaslClient
from kafka_lite.common.security.scram.scram_sasl_client import ScramSaslClient
from kafka_lite.network.kafka_channel import Authenticator, KafkaChannel
from kafka_lite.network.sasl_client_authenticator import SaslClientAuthenticator
from kafka_lite.network.transfer import UNLIMITED

PLAINTEXT = "PLAINTEXT"
SASL_PLAINTEXT = "SASL_PLAINTEXT"
SECURITY_PROTOCOLS = (PLAINTEXT, SASL_PLAINTEXT)


class ChannelBuilder(Protocol):
    def build_channel(
        self, channel_id: str, sock: socket.socket, max_receive_size: int = UNLIMITED
    ) -> KafkaChannel: ...


class PlaintextChannelBuilder:
    def build_channel(
        self, channel_id: str, sock: socket.socket, max_receive_size: int = UNLIMITED
    ) -> KafkaChannel:
        return KafkaChannel(channel_id, sock, max_receive_size)


PLAINTEXT_CHANNEL_BUILDER = PlaintextChannelBuilder()


class SaslChannelBuilder:
    """Gives each channel its own authenticator, made by ``new_authenticator(channel_id, sock)``."""

    def __init__(self, new_authenticator: Callable[[str, socket.socket], Authenticator]) -> None:
        self.new_authenticator = new_authenticator

    def build_channel(
        self, channel_id: str, sock: socket.socket, max_receive_size: int = UNLIMITED
    ) -> KafkaChannel:
        return KafkaChannel(channel_id, sock, max_receive_size, self.new_authenticator(channel_id, sock))


def client_channel_builder(
    security_protocol: str = PLAINTEXT,
    sasl_mechanism: str = "PLAIN",
    sasl_plain_username: str | None = None,
    sasl_plain_password: str | None = None,
    client_id: str = "kafka-lite",
) -> ChannelBuilder:
    """The channel builder of a client (``ChannelBuilders.clientChannelBuilder``), from kafka-python's
    setting names: ``security_protocol``, ``sasl_mechanism``, ``sasl_plain_username`` and
    ``sasl_plain_password`` (the username and password serve SCRAM as well, as in kafka-python)."""
    if security_protocol == PLAINTEXT:
        return PLAINTEXT_CHANNEL_BUILDER
    if security_protocol != SASL_PLAINTEXT:
        raise ConfigException(
            "security_protocol", security_protocol, f"expected one of {', '.join(SECURITY_PROTOCOLS)}"
        )
    if sasl_mechanism not in MECHANISMS:
        raise ConfigException("sasl_mechanism", sasl_mechanism, f"expected one of {', '.join(MECHANISMS)}")
    if not sasl_plain_username or sasl_plain_password is None:
        raise ConfigException(
            "sasl_plain_username",
            sasl_plain_username,
            f"SASL_PLAINTEXT with {sasl_mechanism} needs sasl_plain_username and sasl_plain_password",
        )
    username, password = sasl_plain_username, sasl_plain_password

    def new_authenticator(node: str, sock: socket.socket) -> SaslClientAuthenticator:
        return SaslClientAuthenticator(
            node, new_sasl_client(sasl_mechanism, username, password), client_id, username
        )

    return SaslChannelBuilder(new_authenticator)


def new_sasl_client(mechanism: str, username: str, password: str) -> SaslClient:
    if mechanism == SCRAM_SHA_256:
        return ScramSaslClient(username, password)
    return PlainSaslClient(username, password)
