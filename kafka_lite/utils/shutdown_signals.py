"""What a foreground process waits on until SIGTERM or Ctrl-C: Kafka's shutdown hook and ``awaitShutdown``.

Mirrors: the end of ``kafka.Kafka.main`` (core/src/main/scala/kafka/Kafka.scala, Kafka 0.10.1): a
         JVM shutdown hook calls ``server.shutdown()``, and the main thread waits in
         ``awaitShutdown`` on a ``CountDownLatch`` the shutdown counts down.
Book:    chapter 2, 2.3 (the server side: its start-up and shutdown)
Differs: the JVM runs a shutdown hook on a thread of its own; Python runs a signal handler on the
         main thread, between two of its bytecodes, wherever that thread is. So the handler here only
         records the signal, and the main thread, woken, does the shutdown.

Why the handler takes no lock: the obvious handler, ``lambda *_: stop.set()`` with the main thread
in ``stop.wait(1)``, can hang for ever. ``Event.wait`` is Python code that holds the event's lock
around its wait; a signal landing while the main thread holds it runs the handler there, and
``set`` waits for the lock its own thread holds. A recorded number and a byte on a socket take no
lock.

Why a socket: the kernel may deliver SIGTERM to any of the process's threads, and Python runs the
handler only once the main thread next runs Python code. ``signal.set_wakeup_fd`` makes the C-level
handler, on whichever thread, write a byte the main thread's ``select`` is watching, so it wakes at
once (after SIGSTOP and SIGCONT too, as ``kafka-lite cluster pause`` does).
"""

from __future__ import annotations

import select
import signal
import socket
import threading
import time


class ShutdownSignals:
    """Install in the main thread, before starting the threads, then ``wait`` there."""

    def __init__(self, signals: tuple[int, ...] = (signal.SIGTERM, signal.SIGINT)) -> None:
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("only the main thread can wait for signals")
        self.received: int | None = None
        self._wakeup, self._wakeup_writer = socket.socketpair()
        self._wakeup.setblocking(False)
        self._wakeup_writer.setblocking(False)
        self._previous_wakeup_fd = signal.set_wakeup_fd(
            self._wakeup_writer.fileno(), warn_on_full_buffer=False
        )
        self._poller = select.poll()
        self._poller.register(self._wakeup, select.POLLIN)
        self._signals = signals
        for signum in signals:
            signal.signal(signum, self._record)

    def _record(self, signum: int, frame) -> None:
        self.received = signum

    def wait(self, timeout_s: float | None = None) -> bool:
        """Until a signal has arrived (True) or ``timeout_s`` has passed (False)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while self.received is None:
            remaining = 1.0 if deadline is None else deadline - time.monotonic()
            if remaining <= 0:
                return False
            # At most a second at a time: the byte wakes the select, and the handler that records
            # the signal runs at the main thread's next bytecode, which may be after the check above.
            # poll, not select: a broker holding a thousand segment files and sockets has
            # descriptor numbers past select's limit of 1024.
            ready = self._poller.poll(min(remaining, 1.0) * 1000)
            if ready:
                try:
                    self._wakeup.recv(4096)
                except BlockingIOError:
                    pass
        return True

    def close(self) -> None:
        """Once the shutdown begins: the signals are ignored from here, so that a second one (a second
        Ctrl-C, a service manager's repeated SIGTERM) cuts no shutdown short and, arriving as the
        interpreter exits (whose last act is to restore the default actions), does not turn a clean
        exit into a death by signal; and the wake-up descriptor is given back."""
        for signum in self._signals:
            signal.signal(signum, signal.SIG_IGN)
        signal.set_wakeup_fd(self._previous_wakeup_fd)
        self._wakeup.close()
        self._wakeup_writer.close()
