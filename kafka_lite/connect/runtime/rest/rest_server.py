"""The worker's REST server: the Connect API over HTTP, on ``rest.host.name:rest.port``.

Mirrors: org.apache.kafka.connect.runtime.rest.RestServer
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/rest/RestServer.java, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: a FastAPI application served by uvicorn, where Kafka runs Jersey in Jetty; the
         advertised port defaults to the port actually bound (Kafka's is ``rest.port``, wrong for
         port 0); no CORS settings; FastAPI's interactive page is at ``/docs`` (Swagger UI), its
         script and stylesheet served by the worker itself.

The server is the one place of kafka_lite's Connect with an event loop: uvicorn runs it on a thread
of its own, and the handlers, which block on the herder, run on its worker threads. The socket is
bound in the constructor, as Kafka configures Jetty's connector there, so that ``advertised_url``
is known before the herder starts: in distributed mode it is what this worker tells the others,
and where they forward requests. ``start(herder)`` serves the resources of that herder;
``stop`` lets the requests under way finish, then closes.

FastAPI's own ``/docs`` page loads Swagger UI's script and stylesheet from a CDN, so it is blank on a
machine without internet access, a classroom's or a laptop's on a train. The app is built by
``fastapi_offline``'s ``FastAPIOffline`` instead, FastAPI's recipe for self-hosted docs assets
packaged with Swagger UI's files: the same page, every file served by this server under
``/static-offline-docs``. FastAPI's other page, ``/redoc``, is left out: ReDoc's bundle fetches its
maker's logo from a CDN whatever serves the bundle.
"""

from __future__ import annotations

import logging
import socket
import threading

import uvicorn
from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.runtime.herder import Herder
from kafka_lite.connect.runtime.rest.errors import connect_exception_mapper
from kafka_lite.connect.runtime.rest.resources import (
    connector_plugins_resource,
    connectors_resource,
    root_resource,
)
from kafka_lite.connect.runtime.worker_config import (
    REST_ADVERTISED_HOST_NAME_CONFIG,
    REST_ADVERTISED_PORT_CONFIG,
    REST_HOST_NAME_CONFIG,
    REST_PORT_CONFIG,
    WorkerConfig,
)

log = logging.getLogger(__name__)

GRACEFUL_SHUTDOWN_TIMEOUT_MS = 60 * 1000
START_TIMEOUT_S = 30


def rest_app(herder: Herder) -> FastAPI:
    """The API's paths, each answered by the herder, every error as ``{"error_code", "message"}``; and
    the interactive page, ``/docs``, which needs nothing but this server."""
    app = FastAPIOffline(
        redoc_url=None,
        title="Kafka Connect REST API (kafka_lite)",
        version=root_resource.version(),
        description="Kafka 0.11's Connect REST API: connectors, their tasks and statuses, and plugins.",
    )
    # The routes are module-level, one app's or another's; each reaches its herder through the
    # app's state (connectors_resource.herder_of), so two workers in one process keep their own.
    app.state.herder = herder
    app.include_router(root_resource.router)
    app.include_router(connectors_resource.router)
    app.include_router(connector_plugins_resource.router)
    connect_exception_mapper.register(app)
    return app


class _Server(uvicorn.Server):
    """uvicorn's server, which says when it listens."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets)
        finally:
            self.listening.set()


class RestServer:
    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.hostname = config.get(REST_HOST_NAME_CONFIG) or None  # None: every interface
        self.socket = socket.create_server(
            (self.hostname or "", config.get(REST_PORT_CONFIG)), reuse_port=False
        )
        self.server: _Server | None = None
        self.thread: threading.Thread | None = None

    def start(self, herder: Herder) -> None:
        log.info("Starting REST server")
        uvicorn_config = uvicorn.Config(rest_app(herder), log_level="warning", lifespan="off",
                                        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_TIMEOUT_MS // 1000)  # fmt: skip
        self.server = _Server(uvicorn_config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, name="connect-rest-server", daemon=True
        )
        self.thread.start()
        if not self.server.listening.wait(START_TIMEOUT_S) or not self.server.started:
            raise ConnectException("Unable to start REST server")
        log.info(
            "REST server listening at %s, advertising URL %s", self.listening_url(), self.advertised_url()
        )

    def stop(self) -> None:
        log.info("Stopping REST server")
        if self.server is not None:
            self.server.should_exit = True
            self.thread.join(GRACEFUL_SHUTDOWN_TIMEOUT_MS / 1000 + 5)
        self.socket.close()
        log.info("REST server stopped")

    def port(self) -> int:
        """The port bound: ``rest.port``, or the one the system chose for port 0."""
        return self.socket.getsockname()[1]

    def listening_url(self) -> str:
        return f"http://{self.hostname or '0.0.0.0'}:{self.port()}/"

    def advertised_url(self) -> str:
        """The URL other workers and clients are given for this worker."""
        host = self.config.get(REST_ADVERTISED_HOST_NAME_CONFIG) or self.hostname or socket.gethostname()
        port = self.config.get(REST_ADVERTISED_PORT_CONFIG) or self.port()
        return f"http://{host}:{port}/"
