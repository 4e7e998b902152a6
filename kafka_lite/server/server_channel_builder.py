"""The broker's channel builder, chosen by its listener's security protocol, with the SASL mechanisms'
servers built from the broker's JAAS configuration.

Mirrors: org.apache.kafka.common.network.ChannelBuilders.serverChannelBuilder (clients/src/main/java/
         org/apache/kafka/common/network/ChannelBuilders.java, Kafka 0.11)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
Differs: it lives with the broker (``server/``), since it reads the broker's config; the network layer
         stays free of configuration.

Each listener gets its own builder, from its security protocol (Kafka 0.10.2 builds one per end
point). A PLAINTEXT listener builds plain channels. A SASL_PLAINTEXT listener gives each connection a
``SaslServerAuthenticator`` with the enabled mechanisms: PLAIN checks the ``user_<name>`` options of
that listener's JAAS entry; SCRAM-SHA-256 checks the salted credentials kept in ZooKeeper, through the
broker's credential cache.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

from kafka_lite.common.security.plain.plain_sasl_server import PlainSaslServer, plain_users
from kafka_lite.common.security.sasl import PLAIN, SCRAM_SHA_256, SaslServer
from kafka_lite.network.channel_builders import (
    PLAINTEXT_CHANNEL_BUILDER,
    SASL_PLAINTEXT,
    ChannelBuilder,
    SaslChannelBuilder,
)
from kafka_lite.network.sasl_server_authenticator import AuthenticationStats, SaslServerAuthenticator
from kafka_lite.network.socket_server import Listener
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.zk.zk_utils import EndPoint


def sasl_servers(
    config: KafkaConfig,
    scram_server: Callable[[], SaslServer] | None = None,
    listener_name: str | None = None,
) -> dict[str, Callable[[], SaslServer]]:
    """A factory of each enabled mechanism's server (Kafka's ``SaslServerFactory`` per mechanism),
    from the JAAS entries of ``listener_name`` (the first listener's when None)."""
    listener_name = listener_name or config.listeners[0].listener_name
    factories: dict[str, Callable[[], SaslServer]] = {}
    for mechanism, entries in config.sasl_jaas_entries_by_listener.get(listener_name, {}).items():
        if mechanism == PLAIN:
            users = plain_users(entries)
            factories[PLAIN] = lambda users=users: PlainSaslServer(users)
        elif mechanism == SCRAM_SHA_256 and scram_server is not None:
            factories[SCRAM_SHA_256] = scram_server
    return factories


def server_channel_builder(
    config: KafkaConfig,
    api_versions: list[dict[str, int]],
    stats: AuthenticationStats,
    scram_server: Callable[[], SaslServer] | None = None,
    listener: EndPoint | None = None,
) -> ChannelBuilder:
    """The builder of ``listener``'s connections (the first listener's when None)."""
    listener = listener or config.listeners[0]
    if listener.security_protocol != SASL_PLAINTEXT:
        return PLAINTEXT_CHANNEL_BUILDER
    mechanisms = list(config["sasl.enabled.mechanisms"])
    servers = sasl_servers(config, scram_server, listener.listener_name)

    def new_authenticator(channel_id: str, sock: socket.socket) -> SaslServerAuthenticator:
        try:
            client_address = sock.getpeername()[0]
        except OSError:
            client_address = ""
        return SaslServerAuthenticator(channel_id, mechanisms, servers, api_versions, client_address, stats)

    return SaslChannelBuilder(new_authenticator)


def listeners_with_channel_builders(
    config: KafkaConfig,
    endpoints: list[EndPoint],
    api_versions: list[dict[str, int]],
    stats: AuthenticationStats,
    scram_server: Callable[[], SaslServer] | None = None,
) -> list[Listener]:
    """The socket server's listeners for ``endpoints``, each with the channel builder of its security
    protocol (Kafka 0.10.2's ``SocketServer.startup`` builds one per end point; a KRaft node's
    broker and controller socket servers do the same for their own end points)."""
    listeners = []
    for e in endpoints:
        builder = server_channel_builder(config, api_versions, stats, scram_server=scram_server, listener=e)
        listeners.append(Listener(e.listener_name, e.security_protocol, e.host, e.port, builder))
    return listeners
