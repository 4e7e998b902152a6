"""The thread a broker sends its own requests to other brokers from: one ``NetworkClient``, a round of
work at a time, until shut down.

Mirrors: kafka.common.InterBrokerSendThread (core/src/main/scala/kafka/common/InterBrokerSendThread.scala,
         Kafka 0.11.0)
Book:    beyond the book (Kafka 0.11's transaction markers); its model is the controller's
         ``RequestSendThread``, chapter 7, 7.1.7
Differs: the subclass's ``do_work`` makes, sends and polls its requests itself, where Kafka's thread
         asks the subclass for ``generateRequests`` and sends them.

It lives beside the ``NetworkClient`` it drives, below the broker's packages, so that both the
coordinator's and the server's senders can build on it. Two kinds of sender use it: the transaction coordinator's marker writer
(``TransactionMarkerChannelManager``) and the leaders' verification of transactional writes
(``AddPartitionsToTxnManager``).
"""

from __future__ import annotations

import logging
import threading

from kafka_lite.clients.network_client import NetworkClient

log = logging.getLogger(__name__)


class InterBrokerSendThread:
    def __init__(self, name: str, network_client: NetworkClient) -> None:
        self.name = name
        self.network_client = network_client
        self._running = threading.Event()
        self._thread: threading.Thread | None = None

    def do_work(self) -> None:
        """One round: send what is due, and poll the network (at most a short while)."""
        raise NotImplementedError

    def start(self) -> None:
        self._running.set()
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while self._running.is_set():
            try:
                self.do_work()
            except Exception:
                log.exception("Error in %s", self.name)
        self.network_client.close_all()

    def shutdown(self) -> None:
        self._running.clear()
        self.network_client.wakeup()
        if self._thread is not None:
            self._thread.join(5)
