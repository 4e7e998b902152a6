"""One connection: its socket, at most one send in progress, and the receive being assembled.

Mirrors: org.apache.kafka.common.network.KafkaChannel (clients/.../common/network/KafkaChannel.java,
         Kafka 0.10.1), with PlaintextTransportLayer folded in (no TLS in kafka_lite)
Book:    chapter 2, 2.1.3 (the client's network connection objects)

A channel may carry an authenticator (a SASL listener's, or a SASL client's): until it is complete
the channel is not ``ready()``, and the selector calls ``prepare()`` instead of reading requests, as
Kafka's does. A PLAINTEXT channel has none and is ready once connected, as ``User:ANONYMOUS``.

Why one send at a time: Kafka keeps request order per connection. The selector only asks the OS to
tell it when the socket is writable (``OP_WRITE``) while a send is in progress, and a second
``set_send`` before the first completes is a bug, not a queue.

Muting (removing ``OP_READ`` interest) is how the broker keeps responses in request order: a
processor mutes a connection while its request is being handled, so the next request waits in the
socket buffer (book 2.3.2).
"""

from __future__ import annotations

import os
import selectors
import socket
from typing import Protocol

from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.network.transfer import UNLIMITED, NetworkReceive, NetworkSend, PeerClosedException


class Authenticator(Protocol):
    """Kafka's ``Authenticator``: runs on a connected channel until ``complete()``, doing its own I/O."""

    def authenticate(self, sock: socket.socket) -> None: ...

    def has_pending_send(self) -> bool: ...

    def complete(self) -> bool: ...

    def principal(self) -> KafkaPrincipal: ...


class KafkaChannel:
    def __init__(
        self,
        channel_id: str,
        sock: socket.socket,
        max_receive_size: int = UNLIMITED,
        authenticator: Authenticator | None = None,
    ) -> None:
        self.id = channel_id
        self.socket = sock
        self.max_receive_size = max_receive_size
        self.authenticator = authenticator
        self.interest = 0  # the selectors.EVENT_* bits this channel wants
        self.connected = False
        self.muted = False
        self._send: NetworkSend | None = None
        self._receive: NetworkReceive | None = None

    # -- sending ------------------------------------------------------------------------------------

    def set_send(self, send: NetworkSend) -> None:
        if self._send is not None:
            raise RuntimeError(
                "Attempt to begin a send operation with prior send operation still in progress."
            )
        self._send = send
        self.interest |= selectors.EVENT_WRITE

    def write(self) -> NetworkSend | None:
        """Push the current send; return it once it is complete (and stop asking for writability)."""
        send = self._send
        if send is None:
            return None
        send.write_to(self.socket)
        if not send.completed():
            return None
        self._send = None
        self.interest &= ~selectors.EVENT_WRITE
        return send

    # -- receiving ------------------------------------------------------------------------------------

    def read(self) -> NetworkReceive | None:
        """Read what has arrived; return a complete receive, or None while one is being assembled."""
        if self._receive is None:
            self._receive = NetworkReceive(self.id, self.max_receive_size)
        try:
            self._receive.read_from(self.socket)
        except EOFError:
            if not self._receive.started():
                raise PeerClosedException("connection closed by peer") from None
            raise EOFError("connection closed by peer in the middle of a frame") from None
        if not self._receive.complete():
            return None
        done, self._receive = self._receive, None
        return done

    def mute(self) -> None:
        self.muted = True
        self.interest &= ~selectors.EVENT_READ

    def unmute(self) -> None:
        self.muted = False
        if self.connected:
            self.interest |= selectors.EVENT_READ

    # -- connecting --------------------------------------------------------------------------------------

    def finish_connect(self) -> bool:
        """Complete a non-blocking connect; raise ``OSError`` if it failed."""
        error = self.socket.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if error:
            raise OSError(error, f"connection to node {self.id} failed: {os.strerror(error)}")
        self.connected = True
        if self.authenticator is not None and not self.authenticator.complete():
            self.interest = selectors.EVENT_WRITE | selectors.EVENT_READ  # the first prepare() decides
            return True
        # While connecting, writability meant "the connect finished"; from now on it means "a send
        # can make progress", so keep asking only if a send is waiting.
        self.interest = selectors.EVENT_WRITE if self._send is not None else 0
        if not self.muted:
            self.interest |= selectors.EVENT_READ
        return True

    # -- authenticating ------------------------------------------------------------------------------------

    def ready(self) -> bool:
        """Connected, and authenticated if this channel authenticates (Kafka's ``KafkaChannel.ready``)."""
        return self.connected and (self.authenticator is None or self.authenticator.complete())

    def prepare(self) -> None:
        """Let the authenticator read or write (Kafka's ``KafkaChannel.prepare``); while it works it
        alone decides what the channel waits for."""
        assert self.authenticator is not None
        self.authenticator.authenticate(self.socket)
        if self.authenticator.complete():
            self.interest = selectors.EVENT_WRITE if self._send is not None else 0
            if not self.muted:
                self.interest |= selectors.EVENT_READ
        elif self.authenticator.has_pending_send():
            self.interest = selectors.EVENT_WRITE
        else:
            self.interest = selectors.EVENT_READ

    def principal(self) -> KafkaPrincipal:
        """Who the peer authenticated as: ``User:ANONYMOUS`` on a channel that does not authenticate."""
        return KafkaPrincipal.ANONYMOUS if self.authenticator is None else self.authenticator.principal()

    def close(self) -> None:
        try:
            self.socket.close()
        except OSError:
            pass

    def __repr__(self) -> str:
        return f"KafkaChannel(id={self.id}, connected={self.connected}, muted={self.muted})"
