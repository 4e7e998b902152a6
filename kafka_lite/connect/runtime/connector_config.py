"""A connector's settings as the worker reads them: its name, class, task count, converters, transformations.

Mirrors: org.apache.kafka.connect.runtime.ConnectorConfig, SinkConnectorConfig and TaskConfig
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/ConnectorConfig.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (``transforms`` is beyond the book: Kafka 0.10.2's KIP-66)
Differs: a sink connector without ``topics`` is refused here, when its config is read, rather
         than when its first task starts; a transformation's type is a string looked up in
         ``connector_factory`` where Kafka's is a ``Type.CLASS`` loaded by name.

Everything else in a connector's properties file is the connector's own business (``file``,
``topic``): the worker passes the whole map to ``Connector.start``.

``transforms`` lists aliases; each alias brings settings that no fixed definition can know in
advance: ``transforms.<alias>.type`` names the transformation's class, and the class's own
``config()`` defines the rest, under the prefix ``transforms.<alias>.``. So the definition a config
is checked against depends on the config itself. ``enrich`` builds it: the base definition, plus
for each alias its ``type`` and the transformation's settings, renamed with the prefix (Kafka's
``ConfigDef.embed``). A ``ConnectorConfig`` parses the enriched definition, so a bad setting of a
transformation is refused with the connector's config, before any task runs; the herder's
validation enriches too, and reports each bad setting on its own key.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from kafka_lite.common.config import AbstractConfig, ConfigDef, Importance, Range, Type, Validator, parse_type
from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.runtime import connector_factory
from kafka_lite.connect.transforms.transformation import Transformation

NAME_CONFIG = "name"
CONNECTOR_CLASS_CONFIG = "connector.class"
TASKS_MAX_CONFIG = "tasks.max"
KEY_CONVERTER_CLASS_CONFIG = "key.converter"
VALUE_CONVERTER_CLASS_CONFIG = "value.converter"
TOPICS_CONFIG = "topics"
TASK_CLASS_CONFIG = "task.class"
TRANSFORMS_CONFIG = "transforms"


def _unique_aliases(name: str, value: Any) -> None:
    """``transforms``' validator: an alias names one transformation, so it may appear once."""
    if value is not None and len(value) > len(set(value)):
        raise ConfigException(name, value, "Duplicate alias provided.")


CONNECTOR_CONFIG_DEF = (
    ConfigDef()
    .define(NAME_CONFIG, Type.STRING, importance=Importance.HIGH,
            doc="Globally unique name to use for this connector.")
    .define(CONNECTOR_CLASS_CONFIG, Type.STRING, importance=Importance.HIGH,
            doc="Name or alias of the class for this connector: the full name "
                "(org.apache.kafka.connect.file.FileStreamSinkConnector), the simple name "
                "(FileStreamSinkConnector) or the simple name without Connector (FileStreamSink).")
    .define(TASKS_MAX_CONFIG, Type.INT, 1, Range.at_least(1), Importance.HIGH,
            "Maximum number of tasks to use for this connector.")
    .define(KEY_CONVERTER_CLASS_CONFIG, Type.STRING, None, None, Importance.LOW,
            "Converter class for this connector's keys, instead of the worker's.")
    .define(VALUE_CONVERTER_CLASS_CONFIG, Type.STRING, None, None, Importance.LOW,
            "Converter class for this connector's values, instead of the worker's.")
    .define(TRANSFORMS_CONFIG, Type.LIST, None, _unique_aliases, Importance.LOW,
            "Aliases for the transformations to be applied to records.")
)  # fmt: skip

SINK_CONNECTOR_CONFIG_DEF = ConfigDef()
SINK_CONNECTOR_CONFIG_DEF.keys.update(CONNECTOR_CONFIG_DEF.keys)
SINK_CONNECTOR_CONFIG_DEF.define(TOPICS_CONFIG, Type.LIST, importance=Importance.HIGH,
                                 doc="The topics to consume from, comma-separated.")  # fmt: skip


class ConnectorConfig(AbstractConfig):
    CONFIG_DEF = CONNECTOR_CONFIG_DEF

    def __init__(self, props: dict[str, Any]) -> None:
        # Kafka parses the base definition, then the enriched one; the enriched one holds the base's
        # keys too, so parsing it alone refuses the same configs.
        super().__init__(enrich(self.CONFIG_DEF, props, require_full_config=True), props)

    # --8<-- [start:transformations]
    def transformations(self) -> list[Transformation]:
        """A new, configured instance of each transformation ``transforms`` names, in its order."""
        transformations = []
        for alias in self.get(TRANSFORMS_CONFIG) or []:
            prefix = f"{TRANSFORMS_CONFIG}.{alias}."
            try:
                transformation = connector_factory.transformation_class(self.get(prefix + "type"))()
            except Exception as e:
                raise ConnectException(str(e)) from e
            transformation.configure(self.originals_with_prefix(prefix))
            transformations.append(transformation)
        return transformations

    # --8<-- [end:transformations]


class SinkConnectorConfig(ConnectorConfig):
    CONFIG_DEF = SINK_CONNECTOR_CONFIG_DEF


# --8<-- [start:enrich]
def enrich(base_config_def: ConfigDef, props: Mapping[str, Any], require_full_config: bool) -> ConfigDef:
    """``base_config_def`` plus, for each alias in ``props``' ``transforms``, its ``type`` and the
    transformation's own settings under ``transforms.<alias>.``. With ``require_full_config``, a
    missing or unknown type raises; without (validation), that alias gets its ``type`` only, whose
    validator then reports the error on that key."""
    transform_aliases = parse_type(TRANSFORMS_CONFIG, props.get(TRANSFORMS_CONFIG), Type.LIST)
    if transform_aliases is None:
        return base_config_def
    new_def = ConfigDef()
    new_def.keys.update(base_config_def.keys)
    for alias in dict.fromkeys(transform_aliases):  # a duplicate is reported by transforms' validator
        prefix = f"{TRANSFORMS_CONFIG}.{alias}."
        transformation_type_config = prefix + "type"
        new_def.define(transformation_type_config, Type.STRING, validator=_type_validator,
                       importance=Importance.HIGH, doc=f"Class for the '{alias}' transformation.")  # fmt: skip
        try:
            class_name = props.get(transformation_type_config)
            if class_name is None:
                raise ConfigException(
                    f"Missing required configuration '{transformation_type_config}', which has no default value."
                )
            transformation_config_def = config_def_from_transformation(
                transformation_type_config, parse_type(transformation_type_config, class_name, Type.STRING)
            )
        except ConfigException:
            if require_full_config:
                raise
            continue
        embed(new_def, prefix, transformation_config_def)
    return new_def


# --8<-- [end:enrich]


def _type_validator(name: str, class_name: str) -> None:
    config_def_from_transformation(name, class_name)


def config_def_from_transformation(key: str, class_name: str) -> ConfigDef:
    """The ``config()`` of the transformation ``class_name`` names, from an instance made for the
    purpose (Kafka's ``getConfigDefFromTransformation``)."""
    cls = connector_factory.transformation_class(class_name)
    if cls is None:
        raise ConfigException(key, class_name, f"Class {class_name} could not be found.")
    try:
        return cls().config()
    except Exception as e:
        raise ConfigException(
            key, class_name, f"Error getting config definition from Transformation: {e}"
        ) from e


def embed(config_def: ConfigDef, key_prefix: str, child: ConfigDef) -> None:
    """Add ``child``'s settings to ``config_def``, each name prefixed (Kafka's ``ConfigDef.embed``).
    A child's validator is given the name it knows, without the prefix, as Kafka's
    ``embeddedValidator`` gives it: the message of a bad value names the transformation's setting."""
    for key in child.keys.values():
        name = key_prefix + key.name
        config_def.keys[name] = dataclasses.replace(
            key, name=name, validator=_embedded_validator(key_prefix, key.validator)
        )


def _embedded_validator(key_prefix: str, validator: Validator | None) -> Validator | None:
    if validator is None:
        return None

    def ensure_valid(name: str, value: Any) -> None:
        validator(name[len(key_prefix) :], value)

    return ensure_valid
