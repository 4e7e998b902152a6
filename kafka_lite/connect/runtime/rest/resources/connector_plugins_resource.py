"""``/connector-plugins``: the connector classes this worker can run, and a config checked against one.

Mirrors: org.apache.kafka.connect.runtime.rest.resources.ConnectorPluginsResource
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/rest/resources/ConnectorPluginsResource.java, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: the plugin in the path and the config's ``connector.class`` must name the same class
         through ``connector_factory`` (full name, simple name or alias), where Kafka compares
         the names' endings.

``PUT /connector-plugins/{plugin}/config/validate`` is what a user interface calls while a config
is typed: every setting of the worker's and the connector's definitions, each with its value and
its errors, and the count of errors; nothing is started or written. The body is the config, with
its ``connector.class``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.runtime import connector_factory
from kafka_lite.connect.runtime.connector_config import CONNECTOR_CLASS_CONFIG
from kafka_lite.connect.runtime.rest.errors.connect_rest_exception import BadRequestException
from kafka_lite.connect.runtime.rest.resources.connectors_resource import (
    ConfigValue,
    HerderDep,
    config_strings,
)


def _same_connector(included: str, requested: str) -> bool:
    try:
        return connector_factory.connector_class(included) is connector_factory.connector_class(requested)
    except ConnectException as e:
        raise BadRequestException(str(e)) from e


router = APIRouter(prefix="/connector-plugins", tags=["connector-plugins"])


@router.put("/{connector_type}/config/validate", summary="Check a connector config, setting by setting")
def validate_configs(
    herder: HerderDep, connector_type: str, connector_config: dict[str, ConfigValue]
) -> dict[str, Any]:
    config = config_strings(connector_config)
    included = config.get(CONNECTOR_CLASS_CONFIG)
    if included is not None and not _same_connector(included, connector_type):
        raise BadRequestException(
            f"Included connector type {included} does not match request type {connector_type}"
        )
    return herder.validate_connector_config(config).to_json()


@router.get("", summary="The connector classes this worker can run")
def list_connector_plugins(herder: HerderDep) -> list[dict[str, Any]]:
    return [plugin.to_json() for plugin in herder.connector_plugins()]
