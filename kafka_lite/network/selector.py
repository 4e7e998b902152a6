"""The selector: many non-blocking connections, one thread, one ``poll`` at a time.

Mirrors: org.apache.kafka.common.network.Selector (clients/.../common/network/Selector.java,
         Kafka 0.10.1), over Linux's epoll (``select.epoll``), as Java NIO's selector is on Linux
Book:    chapter 2, 2.1.4 (the selector handling network requests)
Differs: no staged receives: Kafka 0.10.1 hands out at most one receive per channel per poll and
         keeps the rest staged; here a channel's read returns at most one complete frame per poll
         anyway (the next one stays in the socket buffer), which gives the same ordering. No SSL. A channel
         that authenticates (SASL) is listed in ``connected`` once it is authenticated, not when its
         TCP connect completes, so a client sends nothing on it before (Kafka 0.10 lists it at once
         and checks ``isChannelReady``). A peer that cannot be reached is warned of once, and once
         when it is reached again, where Kafka warns at every attempt (``_connect_failed``).

``poll(timeout_ms)`` waits for I/O, finishes connects, advances sends and receives, and leaves the
results in four lists that the caller (``NetworkClient``, or the broker's ``Processor``) reads after
each poll: ``completed_sends``, ``completed_receives``, ``connected``, ``disconnected``. Nothing is
returned through callbacks; that is what lets one thread drive everything.
"""

from __future__ import annotations

import errno
import logging
import select
import selectors
import socket

from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.network.channel_builders import PLAINTEXT_CHANNEL_BUILDER, ChannelBuilder
from kafka_lite.network.kafka_channel import KafkaChannel
from kafka_lite.network.transfer import (
    UNLIMITED,
    InvalidReceiveException,
    NetworkReceive,
    NetworkSend,
    PeerClosedException,
)

log = logging.getLogger(__name__)

# A channel's interest (``selectors.EVENT_READ``/``EVENT_WRITE``, as KafkaChannel keeps it) as epoll's
# event bits. The selector talks to epoll itself rather than through ``selectors``, which would
# build a key object for every registration and look one up for every event, on every request's way.
_EPOLL_EVENTS = {
    selectors.EVENT_READ: select.EPOLLIN,
    selectors.EVENT_WRITE: select.EPOLLOUT,
    selectors.EVENT_READ | selectors.EVENT_WRITE: select.EPOLLIN | select.EPOLLOUT,
}
# An event is a read for every bit but EPOLLOUT and a write for every bit but EPOLLIN (as ``selectors``
# reads them): a hang-up or an error wakes a channel for whatever it waits for, and its read or write
# then meets it.
_NOT_READ = ~select.EPOLLOUT
_NOT_WRITE = ~select.EPOLLIN


class Selector:
    def __init__(
        self,
        max_receive_size: int = UNLIMITED,
        connections_max_idle_ms: int = 9 * 60 * 1000,
        time: Time = SYSTEM,
        channel_builder: ChannelBuilder = PLAINTEXT_CHANNEL_BUILDER,
        failed_authentication_delay_ms: int = 0,
    ) -> None:
        self.max_receive_size = max_receive_size
        self.failed_authentication_delay_ms = failed_authentication_delay_ms
        self._delayed_closes: dict[str, tuple[int, Exception]] = {}  # channel id -> (close at, why)
        self._unreachable: set[str] = set()  # ids whose last connect failed: warned once
        # Builds each connection's channel: with an authenticator on a SASL listener or client
        # (Kafka's ChannelBuilder, chosen by security.protocol), with none on PLAINTEXT.
        self.channel_builder = channel_builder
        self.connections_max_idle_ms = connections_max_idle_ms
        self.time = time
        self._epoll = select.epoll()
        self._by_fd: dict[int, KafkaChannel] = {}  # the channels epoll watches, by socket descriptor
        # channel id -> (its socket's descriptor, the events epoll watches for): Java's SelectionKey,
        # the descriptor kept for after the socket closes
        self._watched: dict[str, tuple[int, int]] = {}
        self.channels: dict[str, KafkaChannel] = {}
        self._last_active: dict[str, int] = {}  # insertion order = least recently active first
        self._next_idle_close_check_ms = 0  # no connection can have been idle long enough before this
        self.completed_sends: list[NetworkSend] = []
        self.completed_receives: list[NetworkReceive] = []
        self.connected: list[str] = []
        self.disconnected: list[str] = []
        # Why a channel in ``disconnected`` was closed, when its authentication failed (Kafka 1.0's
        # ``ChannelState.AUTHENTICATE``): the client turns it into its authentication error.
        self.authentication_failures: dict[str, Exception] = {}
        # Woken by ``wakeup()`` from another thread (the producer's send() wakes the Sender's poll).
        # Both ends are non-blocking: a poll drains every pending byte at once, and a wakeup never
        # waits for a poll to drain them.
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._wake_fd = self._wake_r.fileno()
        self._epoll.register(self._wake_fd, select.EPOLLIN)
        self._wakeup_pending = False  # a wakeup byte is written and not yet drained

    # -- connections ----------------------------------------------------------------------------------------

    def connect(
        self, channel_id: str, address: tuple[str, int], send_buffer: int = -1, receive_buffer: int = -1
    ) -> None:
        """Start a non-blocking connect to ``address``; it completes in a later ``poll``."""
        if channel_id in self.channels:
            raise RuntimeError(f"There is already a connection for id {channel_id}")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if send_buffer > 0:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
        if receive_buffer > 0:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        code = sock.connect_ex(address)
        if code not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK):
            sock.close()
            error = OSError(code, f"connect to {address} failed immediately")
            self._connect_failed(channel_id, error)
            raise error
        channel = self.channel_builder.build_channel(channel_id, sock, self.max_receive_size)
        channel.interest = selectors.EVENT_WRITE  # a connect completes when the socket turns writable
        self._add(channel)

    def register(self, channel_id: str, sock: socket.socket) -> None:
        """Adopt an already-connected socket (the broker's processor, after the acceptor hands it over)."""
        sock.setblocking(False)
        channel = self.channel_builder.build_channel(channel_id, sock, self.max_receive_size)
        channel.connected = True
        channel.interest = selectors.EVENT_READ
        self._add(channel)

    def _add(self, channel: KafkaChannel) -> None:
        self.channels[channel.id] = channel
        self._touch(channel.id)
        self._update_interest(channel)

    def close(self, channel_id: str) -> None:
        self._delayed_closes.pop(channel_id, None)
        channel = self.channels.pop(channel_id, None)
        self._last_active.pop(channel_id, None)
        if channel is not None:
            if channel_id in self._watched:
                self._unwatch(channel)
            channel.close()

    def close_all(self) -> None:
        for channel_id in list(self.channels):
            self.close(channel_id)
        self._epoll.close()
        self._wake_r.close()
        self._wake_w.close()

    # -- I/O ------------------------------------------------------------------------------------------------

    def send(self, send: NetworkSend) -> None:
        """Queue ``send`` on its channel; it goes out during the following polls."""
        channel = self.channels.get(send.destination)
        if channel is None:
            raise RuntimeError(f"Attempt to send to node {send.destination} with no connection")
        channel.set_send(send)
        self._update_interest(channel)

    def mute(self, channel_id: str) -> None:
        channel = self.channels[channel_id]
        channel.mute()
        self._update_interest(channel)

    def unmute(self, channel_id: str) -> None:
        channel = self.channels[channel_id]
        channel.unmute()
        self._update_interest(channel)

    def wakeup(self) -> None:
        """Make a ``poll`` blocked in another thread return now.

        As Java's selector (``EPollSelectorImpl.wakeup``), a wakeup already pending is not written
        again: a producer may call this for every record while the sender is busy, and one byte
        wakes the poll as well as a thousand. The flag is set before the byte is written and
        cleared after the bytes are drained, so a wakeup is never lost: a caller that finds it set
        is served by the poll that is about to drain it.
        """
        if self._wakeup_pending:
            return
        self._wakeup_pending = True
        try:
            self._wake_w.send(b"\x00")
        except BlockingIOError:
            pass  # the socket's buffer is full of wakeups not yet drained: the poll will return anyway
        except OSError:
            pass  # the selector is closed: there is no poll to wake

    # --8<-- [start:poll]
    def poll(self, timeout_ms: int) -> None:
        """Do whatever I/O is ready (waiting up to ``timeout_ms``), and record what completed."""
        self.completed_sends.clear()
        self.completed_receives.clear()
        self.connected.clear()
        self.disconnected.clear()
        self.authentication_failures.clear()
        if self._delayed_closes:  # wake for the first close that falls due
            first = min(deadline for deadline, _ in self._delayed_closes.values())
            timeout_ms = min(timeout_ms, max(first - self.time.milliseconds(), 0))
        events = self._epoll.poll(max(timeout_ms, 0) / 1000.0)
        for fd, event in events:
            if fd == self._wake_fd:
                self._drain_wakeups()
                continue
            channel = self._by_fd.get(fd)
            if channel is None:  # closed by an earlier event of this poll
                continue
            mask = (selectors.EVENT_READ if event & _NOT_READ else 0) | (
                selectors.EVENT_WRITE if event & _NOT_WRITE else 0
            )
            try:
                self._handle(channel, mask)
            except (OSError, EOFError, InvalidReceiveException) as e:
                # Kafka's Selector logs and closes a failing connection; the caller sees it in
                # ``disconnected`` and fails that connection's in-flight requests. A close between
                # frames is how every client says goodbye, and a reset is a peer that went away
                # (a process killed, a socket closed with unread data): neither is worth a warning.
                # A frame cut short or impossible is.
                if isinstance(e, (PeerClosedException, ConnectionResetError, BrokenPipeError)):
                    log.debug("Connection with %s closed by peer: %s", channel.id, e)
                elif not channel.connected:
                    self._connect_failed(channel.id, e)
                else:
                    log.warning("Connection with %s disconnected: %s", channel.id, e)
                self.close(channel.id)
                self.disconnected.append(channel.id)
            except Exception as e:
                if channel.ready():
                    raise
                # The authenticator refused the peer (wrong credentials, a request out of turn) or
                # could not read its bytes: close this connection, and nothing else.
                log.info("Closing connection %s: authentication failed: %s", channel.id, e)
                self._close_after_failed_authentication(channel, e)
        self._close_delayed_channels()
        self._expire_idle_connections()

    # --8<-- [end:poll]

    def _handle(self, channel: KafkaChannel, mask: int) -> None:
        self._touch(channel.id)
        if not channel.connected and mask & selectors.EVENT_WRITE:
            channel.finish_connect()
            if channel.ready():
                self._mark_connected(channel.id)
            self._update_interest(channel)
            return
        if channel.connected and not channel.ready():
            # Authenticating: the authenticator reads and writes its own frames until it is done, and
            # only then does the connection count as connected (the client) or carry requests.
            channel.prepare()
            if channel.ready():
                self._mark_connected(channel.id)
            self._update_interest(channel)
            return
        if channel.connected and mask & selectors.EVENT_READ and not channel.muted:
            receive = channel.read()
            if receive is not None:
                self.completed_receives.append(receive)
        if channel.connected and mask & selectors.EVENT_WRITE:
            send = channel.write()
            if send is not None:
                self.completed_sends.append(send)
        self._update_interest(channel)

    def _connect_failed(self, channel_id: str, error: Exception) -> None:
        """A connection that could not be made. Kafka's NetworkClient warns at each attempt, once
        every ``reconnect.backoff.ms`` for as long as the peer is down. Here the first failure warns
        and the rest are debug, until a connection to the same id is made again: a reader watching
        a quorum or a cluster through a node's death sees one line, not one every 50 ms."""
        if channel_id in self._unreachable:
            log.debug("Connection to %s could not be established: %s", channel_id, error)
        else:
            self._unreachable.add(channel_id)
            log.warning(
                "Connection to %s could not be established: %s (retrying; said again once it is)",
                channel_id,
                error,
            )

    def _mark_connected(self, channel_id: str) -> None:
        self.connected.append(channel_id)
        if channel_id in self._unreachable:
            self._unreachable.discard(channel_id)
            # At the warning's own level: whoever was told the peer was lost is told it is back.
            log.warning("Connection to %s established again", channel_id)

    def _close_after_failed_authentication(self, channel: KafkaChannel, error: Exception) -> None:
        """Close a channel whose authentication failed: at once, or after
        ``failed_authentication_delay_ms`` (Kafka 2.1's ``connection.failed.authentication.delay.ms``,
        KIP-306). The broker's error response is written by then; closing right behind it lets a
        client that reads the close together with the response (kafka-python does) lose the
        response, and slows down no one guessing passwords."""
        if self.failed_authentication_delay_ms <= 0:
            self.close(channel.id)
            self.disconnected.append(channel.id)
            self.authentication_failures[channel.id] = error
            return
        channel.interest = 0  # nothing more is read from it or written to it
        self._update_interest(channel)
        deadline = self.time.milliseconds() + self.failed_authentication_delay_ms
        self._delayed_closes[channel.id] = (deadline, error)

    def _close_delayed_channels(self) -> None:
        if not self._delayed_closes:
            return
        now = self.time.milliseconds()
        for channel_id, (deadline, error) in list(self._delayed_closes.items()):
            if now >= deadline:
                del self._delayed_closes[channel_id]
                self.close(channel_id)
                self.disconnected.append(channel_id)
                self.authentication_failures[channel_id] = error

    def _update_interest(self, channel: KafkaChannel) -> None:
        """Tell the OS what this channel now waits for, if that changed (after most reads and writes
        it has not). A channel that wants nothing (muted, with nothing to send) leaves epoll until it
        wants something again, as Java's epoll selector removes a key whose interest set is empty."""
        if channel.id not in self.channels:
            return
        fd, watched = self._watched.get(channel.id, (None, 0))
        interest = channel.interest
        if interest == watched:
            return
        if not interest:
            self._unwatch(channel)
            return
        if fd is None:
            fd = channel.socket.fileno()
            self._epoll.register(fd, _EPOLL_EVENTS[interest])
            self._by_fd[fd] = channel
        else:
            self._epoll.modify(fd, _EPOLL_EVENTS[interest])
        self._watched[channel.id] = (fd, interest)

    def _unwatch(self, channel: KafkaChannel) -> None:
        """Stop watching ``channel``'s socket (Java's key cancelled). A socket already closed has left
        epoll by itself, and its number may belong to another socket by now: only the record goes."""
        fd, _ = self._watched.pop(channel.id)
        if self._by_fd.get(fd) is channel:  # the number may name a newer socket by now
            del self._by_fd[fd]
        if channel.socket.fileno() == fd:
            self._epoll.unregister(fd)

    def _drain_wakeups(self) -> None:
        # One read: ``wakeup`` writes a byte only when none is pending, so there is one byte here, or
        # a few when threads raced; any left over wake the next poll at once, which is harmless.
        try:
            self._wake_r.recv(1024)
        except (BlockingIOError, InterruptedError):
            pass
        # Cleared after draining, as Java does: cleared before, a byte written meanwhile could be
        # drained here and leave the flag set with nothing to wake the next poll.
        self._wakeup_pending = False

    # -- idle connections (connections.max.idle.ms) ------------------------------------------------------------

    def _touch(self, channel_id: str) -> None:
        self._last_active.pop(channel_id, None)
        self._last_active[channel_id] = self.time.milliseconds()

    def _expire_idle_connections(self) -> None:
        """Close the least recently active connection if it has been idle longer than
        ``connections.max.idle.ms`` (Kafka's ``maybeCloseOldestConnection``): at most one a poll,
        and only the oldest is looked at, once the time it could expire has come."""
        if self.connections_max_idle_ms < 0:
            return
        now = self.time.milliseconds()
        if now <= self._next_idle_close_check_ms:
            return
        if not self._last_active:
            self._next_idle_close_check_ms = now + self.connections_max_idle_ms
            return
        channel_id, last_active = next(iter(self._last_active.items()))
        self._next_idle_close_check_ms = last_active + self.connections_max_idle_ms
        if now > self._next_idle_close_check_ms:
            log.debug("Closing idle connection %s", channel_id)
            self.close(channel_id)
            self.disconnected.append(channel_id)
