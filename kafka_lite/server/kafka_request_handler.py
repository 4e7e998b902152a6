"""The request handler threads: take a request off the channel, run KafkaApis on it, repeat.

Mirrors: kafka.server.KafkaRequestHandler and KafkaRequestHandlerPool
         (core/src/main/scala/kafka/server/KafkaRequestHandler.scala, Kafka 0.10.1)
Book:    chapter 2, 2.3.4 (the request handler threads: ``num.io.threads`` handlers share the one
         request queue)

The handlers never touch a socket: a handler's answer goes back through the request channel to the
processor that owns the connection. So a slow request (a disk flush, a ZooKeeper write) holds up one
handler, never a processor's other connections.
"""

from __future__ import annotations

import logging
import threading

from kafka_lite.network.request_channel import RequestChannel

log = logging.getLogger(__name__)


class KafkaRequestHandler(threading.Thread):
    def __init__(self, handler_id: int, request_channel: RequestChannel, apis) -> None:
        super().__init__(name=f"kafka-request-handler-{handler_id}", daemon=True)
        self.request_channel = request_channel
        self.apis = apis

    # --8<-- [start:run]
    def run(self) -> None:
        while True:
            request = self.request_channel.receive_request(300)
            if request is None:
                if self._stopping:
                    return
                continue
            self.apis.handle(request)

    # --8<-- [end:run]

    _stopping = False


class KafkaRequestHandlerPool:
    def __init__(self, request_channel: RequestChannel, apis, num_threads: int) -> None:
        self.request_channel = request_channel
        self.handlers = [KafkaRequestHandler(i, request_channel, apis) for i in range(num_threads)]
        for h in self.handlers:
            h.start()

    def shutdown(self) -> None:
        for h in self.handlers:
            h._stopping = True
        self.request_channel.shutdown(len(self.handlers))
        for h in self.handlers:
            h.join(5)
