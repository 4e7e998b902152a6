"""``/connectors``: create, read, change, pause, restart and delete connectors and their tasks.

Mirrors: org.apache.kafka.connect.runtime.rest.resources.ConnectorsResource
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/rest/resources/ConnectorsResource.java, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: a FastAPI router of functions where Kafka has a JAX-RS class of methods, the herder
         reached through a dependency (``herder_of``) where Kafka's constructor takes it; a config's
         values may be JSON numbers or booleans, turned into strings (as Jackson does for Kafka's
         ``Map<String, String>``).

Every handler asks the herder and waits for its callback (``FutureCallback``) at most
``REQUEST_TIMEOUT_MS``: the distributed herder answers on its own thread, after a rebalance if one
is under way. A handler runs on one of the server's worker threads, never on its event loop, so
that waiting blocks only its own request.

``complete_or_forward_request`` is where a cluster of workers looks like one: a worker that may not
serve a request (a config write on a worker that is not the leader) answers its callback with a
``RequestTargetException`` naming the worker that can, and the request is sent there, with
``?forward=``. A request from a user has no ``forward`` flag and may be forwarded with
``forward=true``, which the next worker may forward once more with ``forward=false``; a worker
that gets ``forward=false`` and still cannot serve it answers 409, because two hops that do not
find the target mean the group changed meanwhile. The status, pause and resume calls read or write
local state and are never forwarded.

Each route is one of ``ConnectorsResource``'s methods under its name, in Kafka's order, with
Kafka's path and status code. The herder is the application's (``app.state.herder``, set by
``rest_app``): ``Depends(herder_of)`` hands it to each route, as Jersey hands Kafka's resource
the herder its constructor was given.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel

from kafka_lite.connect.runtime.connector_config import NAME_CONFIG
from kafka_lite.connect.runtime.distributed.request_target_exception import (
    RebalanceNeededException,
    RequestTargetException,
)
from kafka_lite.connect.runtime.herder import Created, Herder
from kafka_lite.connect.runtime.rest import rest_client
from kafka_lite.connect.runtime.rest.errors.connect_rest_exception import (
    BadRequestException,
    ConnectRestException,
)
from kafka_lite.connect.util.callback import FutureCallback
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId

log = logging.getLogger(__name__)

# Long, because a request may have to wait for a rebalance, which can take a whole session timeout.
REQUEST_TIMEOUT_MS = 90 * 1000

# A config value as JSON may give it; the herder gets strings.
ConfigValue = str | int | float | bool | None


class CreateConnectorRequest(BaseModel):
    """``POST /connectors``'s body (Kafka's ``CreateConnectorRequest``)."""

    name: str
    config: dict[str, ConfigValue] = {}


def config_strings(config: dict[str, ConfigValue]) -> dict[str, str]:
    """A connector config as the herder takes it: every value a string, as in a properties file."""
    strings = {}
    for key, value in config.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        strings[key] = None if value is None else str(value)
    return strings


def to_json(value: Any) -> Any:
    """A herder's answer as the API sends it; a forwarded answer is JSON already."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, list):
        return [to_json(item) for item in value]
    return value


def complete_or_forward_request(
    cb: FutureCallback,
    path: str,
    method: str,
    body: Any,
    forward: bool | None,
    translator: Callable[[rest_client.HttpResponse], Any] = lambda response: response.body,
) -> Any:
    """Wait for the herder's answer; if another worker must serve the request, send it there."""
    try:
        return cb.result(REQUEST_TIMEOUT_MS / 1000)
    except RequestTargetException as e:
        if forward is None or forward:
            # Only a request from a user (no flag) may be forwarded again: two hops at most.
            recursive_forward = forward is None
            if e.forward_url is None:
                raise ConnectRestException(409, f"Cannot complete request: {e}") from e
            forward_url = (
                f"{e.forward_url.rstrip('/')}{path}?forward={'true' if recursive_forward else 'false'}"
            )
            log.debug("Forwarding request %s %s %s", forward_url, method, body)
            return translator(rest_client.http_request(forward_url, method, body))
        # Two hops did not find the target: the group has probably rebalanced meanwhile.
        raise ConnectRestException(
            409, "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
        ) from e
    except RebalanceNeededException as e:
        raise ConnectRestException(
            409,
            "Cannot complete request momentarily due to stale configuration "
            "(typically caused by a concurrent config change)",
        ) from e
    except TimeoutError as e:
        # None of the timeout status codes fits a request the server itself gave up on.
        raise ConnectRestException(500, "Request timed out") from e


def created_connector_info(response: rest_client.HttpResponse) -> Created:
    """A forwarded create's answer: 201 if the other worker created the connector."""
    return Created(response.status == 201, response.body)


def herder_of(request: Request) -> Herder:
    """The herder this server answers for: ``rest_app`` keeps it in the application's state."""
    return request.app.state.herder


HerderDep = Annotated[Herder, Depends(herder_of)]

router = APIRouter(prefix="/connectors", tags=["connectors"])


def connector_path(connector: str, rest: str = "") -> str:
    """The path a forwarded request is sent to: the connector's name quoted, ``/`` and all."""
    return f"/connectors/{quote(connector, safe='')}{rest}"


@router.get("", summary="List the connectors")
def list_connectors(herder: HerderDep, forward: bool | None = None) -> list[str]:
    cb = FutureCallback()
    herder.connectors(cb)
    return complete_or_forward_request(cb, "/connectors", "GET", None, forward)


@router.post("", status_code=201, summary="Create a connector")
def create_connector(
    herder: HerderDep, response: Response, create_request: CreateConnectorRequest, forward: bool | None = None
) -> dict[str, Any]:
    name = create_request.name
    if "/" in name:
        raise BadRequestException("connector name should not contain '/'")
    configs = config_strings(create_request.config)
    configs.setdefault(NAME_CONFIG, name)
    cb = FutureCallback()
    herder.put_connector_config(name, configs, False, cb)
    body = {"name": name, "config": configs}  # what a forwarded request sends, the name added
    info = complete_or_forward_request(cb, "/connectors", "POST", body, forward, created_connector_info)
    response.headers["Location"] = connector_path(name)
    return to_json(info.result)


@router.get("/{connector}", summary="A connector's config and tasks")
def get_connector(herder: HerderDep, connector: str, forward: bool | None = None) -> dict[str, Any]:
    cb = FutureCallback()
    herder.connector_info(connector, cb)
    return to_json(complete_or_forward_request(cb, connector_path(connector), "GET", None, forward))


@router.get("/{connector}/config", summary="A connector's config")
def get_connector_config(herder: HerderDep, connector: str, forward: bool | None = None) -> dict[str, str]:
    cb = FutureCallback()
    herder.connector_config(connector, cb)
    return complete_or_forward_request(cb, connector_path(connector, "/config"), "GET", None, forward)


@router.get("/{connector}/status", summary="A connector's state and its tasks'")
def get_connector_status(herder: HerderDep, connector: str) -> dict[str, Any]:
    return herder.connector_status(connector).to_json()


@router.put("/{connector}/config", summary="Create a connector, or replace its config")
def put_connector_config(
    herder: HerderDep,
    response: Response,
    connector: str,
    connector_config: dict[str, ConfigValue],
    forward: bool | None = None,
) -> dict[str, Any]:
    config = config_strings(connector_config)
    included_name = config.get(NAME_CONFIG)
    if included_name is None:
        config[NAME_CONFIG] = connector
    elif included_name != connector:
        raise BadRequestException(
            f"Connector name configuration ({included_name}) doesn't match connector name in the URL "
            f"({connector})"
        )
    cb = FutureCallback()
    herder.put_connector_config(connector, config, True, cb)
    created = complete_or_forward_request(
        cb, connector_path(connector, "/config"), "PUT", config, forward, created_connector_info
    )
    if created.created:
        response.status_code = 201
        response.headers["Location"] = connector_path(connector)
    return to_json(created.result)


@router.post("/{connector}/restart", status_code=204, summary="Restart a connector (not its tasks)")
def restart_connector(herder: HerderDep, connector: str, forward: bool | None = None) -> None:
    cb = FutureCallback()
    herder.restart_connector(connector, cb)
    complete_or_forward_request(cb, connector_path(connector, "/restart"), "POST", None, forward)


@router.put("/{connector}/pause", status_code=202, summary="Pause a connector and its tasks")
def pause_connector(herder: HerderDep, connector: str) -> Response:
    herder.pause_connector(connector)
    return Response(status_code=202)  # accepted: the tasks pause on their own threads, later


@router.put("/{connector}/resume", status_code=202, summary="Resume a paused connector")
def resume_connector(herder: HerderDep, connector: str) -> Response:
    herder.resume_connector(connector)
    return Response(status_code=202)


@router.get("/{connector}/tasks", summary="A connector's tasks and their configs")
def get_task_configs(herder: HerderDep, connector: str, forward: bool | None = None) -> list[dict[str, Any]]:
    cb = FutureCallback()
    herder.task_configs(connector, cb)
    return to_json(complete_or_forward_request(cb, connector_path(connector, "/tasks"), "GET", None, forward))


@router.post(
    "/{connector}/tasks", status_code=204, summary="Set a connector's task configs (between workers)"
)
def put_task_configs(
    herder: HerderDep, connector: str, task_configs: list[dict[str, ConfigValue]], forward: bool | None = None
) -> None:
    configs = [config_strings(config) for config in task_configs]
    cb = FutureCallback()
    herder.put_task_configs(connector, configs, cb)
    complete_or_forward_request(cb, connector_path(connector, "/tasks"), "POST", configs, forward)


@router.get("/{connector}/tasks/{task}/status", summary="A task's state")
def get_task_status(herder: HerderDep, connector: str, task: int) -> dict[str, Any]:
    return herder.task_status(ConnectorTaskId(connector, task)).to_json()


@router.post("/{connector}/tasks/{task}/restart", status_code=204, summary="Restart a task")
def restart_task(herder: HerderDep, connector: str, task: int, forward: bool | None = None) -> None:
    cb = FutureCallback()
    herder.restart_task(ConnectorTaskId(connector, task), cb)
    path = connector_path(connector, f"/tasks/{task}/restart")
    complete_or_forward_request(cb, path, "POST", None, forward)


@router.delete("/{connector}", status_code=204, summary="Stop and delete a connector")
def destroy_connector(herder: HerderDep, connector: str, forward: bool | None = None) -> None:
    cb = FutureCallback()
    herder.delete_connector_config(connector, cb)
    complete_or_forward_request(cb, connector_path(connector), "DELETE", None, forward)
