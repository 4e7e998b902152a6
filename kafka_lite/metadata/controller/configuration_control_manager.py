"""The controller's dynamic configurations: topic and broker configs, kept as ConfigRecords.

Mirrors: org.apache.kafka.controller.ConfigurationControlManager, org.apache.kafka.common.requests.
         ApiError, kafka.server.ControllerConfigurationValidator (metadata/ and core/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft); chapter 7, 7.1.6 reads the ZooKeeper config znodes
Differs: topic configs are validated with kafka_lite's own LogConfig definitions (log/log_config.py),
         not Kafka 3.3's longer list; there is no AlterConfigPolicy and no KafkaConfigSchema (a
         topic's LIST settings and their defaults come from the same definitions).

In ZooKeeper mode a topic's overrides live in ``/config/topics/<name>`` and a change notification
tells every broker to reload them (chapter 7). In KRaft they are records: each ``ConfigRecord`` sets
one key of one resource (a topic, a broker, or the cluster default: a BROKER with an empty name),
and a null value deletes it. The manager keeps the current configs in timeline maps, so the
controller can read them as of the last committed offset and drop uncommitted ones on resignation.

Like every control manager, the ``alter`` methods only compute: they return the records to append
and the answer per resource; ``replay`` is the only thing that changes the maps. A resource's changes
succeed or fail together (one bad key fails the resource, with nothing written for it), but one
resource failing does not stop the others.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import ClassVar

from kafka_lite.common.config import ConfigDef
from kafka_lite.common.config import Type as ConfigType
from kafka_lite.common.errors import ApiException, ConfigException, Errors
from kafka_lite.common.metadata import ConfigRecord
from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.topic import validate_topic_name
from kafka_lite.log import log_config
from kafka_lite.metadata.config_resource import ConfigResource, ConfigResourceType
from kafka_lite.metadata.controller.controller_result import ControllerResult
from kafka_lite.metadata.timeline import LATEST_EPOCH, SnapshotRegistry, TimelineHashMap

log = logging.getLogger(__name__)


class OpType(enum.IntEnum):
    """IncrementalAlterConfigs' operations (KIP-339): APPEND and SUBTRACT edit a LIST setting item
    by item, so two clients adding to ``cleanup.policy`` do not overwrite each other."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


@dataclass(frozen=True)
class ApiError:
    """An error code and its message, as a response carries them (Kafka's ``ApiError``)."""

    error: Errors
    message: str | None = None

    NONE: ClassVar[ApiError]

    def is_success(self) -> bool:
        return self.error is Errors.NONE

    def is_failure(self) -> bool:
        return not self.is_success()

    def message_or_default(self) -> str:
        return self.message if self.message is not None else self.error.description

    def exception(self) -> ApiException:
        return self.error.exception(self.message_or_default())

    @staticmethod
    def from_throwable(exc: BaseException) -> ApiError:
        """The error a response names for ``exc``: its code, and its message only when it has one
        (Kafka leaves the message out when it says no more than the code's default)."""
        if isinstance(exc, ConfigException):
            return ApiError(Errors.INVALID_CONFIG, str(exc))
        error = Errors.for_exception(exc)
        message = str(exc) or None
        return ApiError(error, None if message == error.description else message)


ApiError.NONE = ApiError(Errors.NONE, None)


@dataclass(frozen=True)
class ResultOrError:
    """A read's answer for one resource: the result, or why there is none (Kafka's ResultOrError)."""

    error: ApiError
    result: dict[str, str] | None = None


def validate_config(resource: ConfigResource, configs: Mapping[str, str]) -> None:
    """What the controller checks of a resource's configs, all of them as they would be after the
    change (Kafka 3.3's ``ControllerConfigurationValidator``). A topic's name must be legal and every
    key and value one ``LogConfig`` accepts; a broker's name must be a broker id (or empty, the
    cluster default), and its values are left to the broker that applies them."""
    if resource.type == ConfigResourceType.TOPIC:
        validate_topic_name(resource.name)
        nulls = sorted(key for key, value in configs.items() if value is None)
        if nulls:
            raise Errors.INVALID_REQUEST.exception(
                f"Null value not supported for topic configs: {','.join(nulls)}"
            )
        log_config.validate(configs)
    elif resource.type == ConfigResourceType.BROKER:
        if resource.name and not resource.name.isdigit():
            raise Errors.INVALID_REQUEST.exception(
                "DescribeConfigs request for broker with invalid broker id: " + resource.name
            )
    else:
        raise Errors.INVALID_REQUEST.exception(f"Unknown resource type {resource.type}")


class ConfigurationControlManager:
    def __init__(
        self,
        snapshot_registry: SnapshotRegistry,
        topic_config_def: ConfigDef = log_config.CONFIG_DEF,
        existence_checker: Callable[[ConfigResource], None] = lambda resource: None,
        validator: Callable[[ConfigResource, Mapping[str, str]], None] = validate_config,
    ) -> None:
        self._snapshot_registry = snapshot_registry
        self._topic_config_def = topic_config_def
        # Raises when a resource does not exist (a topic not created, a broker not registered); the
        # controller passes one that asks the replication and cluster managers.
        self._existence_checker = existence_checker
        self._validator = validator
        # resource -> (key -> value): both levels are timeline maps, so a revert undoes a key's change
        # and a resource's appearance alike.
        self._config_data: TimelineHashMap = TimelineHashMap(snapshot_registry)

    # --8<-- [start:incremental_alter_configs]
    def incremental_alter_configs(
        self,
        config_changes: Mapping[ConfigResource, Mapping[str, tuple[OpType, str | None]]],
        new_resource: bool,
    ) -> ControllerResult[dict[ConfigResource, ApiError]]:
        """The records for IncrementalAlterConfigs: each key's operation applied to its current
        value. ``new_resource`` skips the existence check, for a topic being created in the same
        batch of records (CreateTopics passes its configs through here)."""
        records: list[ApiMessageAndVersion] = []
        results: dict[ConfigResource, ApiError] = {}
        for resource, keys_to_ops in config_changes.items():
            results[resource] = self._incremental_alter_config_resource(
                resource, keys_to_ops, new_resource, records
            )
        return ControllerResult.of(records, results)

    def _incremental_alter_config_resource(
        self,
        resource: ConfigResource,
        keys_to_ops: Mapping[str, tuple[OpType, str | None]],
        new_resource: bool,
        output_records: list[ApiMessageAndVersion],
    ) -> ApiError:
        new_records: list[ApiMessageAndVersion] = []
        current_configs = self._config_data.get(resource)
        for key, (op_type, op_value) in keys_to_ops.items():
            current_value = current_configs.get(key) if current_configs is not None else None
            if op_type == OpType.SET:
                new_value = op_value
            elif op_type == OpType.DELETE:
                new_value = None
            else:
                if not self._is_splittable(resource, key):
                    return ApiError(
                        Errors.INVALID_CONFIG,
                        f"Can't {op_type.name} to key {key} because its type is not LIST.",
                    )
                parts = self._get_parts(current_value, key, resource)
                for value in (op_value or "").split(","):
                    if op_type == OpType.APPEND and value not in parts:
                        parts.append(value)
                    elif op_type == OpType.SUBTRACT and value in parts:
                        parts.remove(value)
                new_value = ",".join(parts)
            # A broker's config is written even when unchanged: the record is what makes the broker
            # reload it (a keystore file replaced under the same path, say).
            if current_value != new_value or resource.type == ConfigResourceType.BROKER:
                new_records.append(_config_record(resource, key, new_value))
        error = self._validate_alter_config(resource, new_records, [], new_resource)
        if error.is_success():
            output_records.extend(new_records)
        return error

    # --8<-- [end:incremental_alter_configs]

    def legacy_alter_configs(
        self, new_configs: Mapping[ConfigResource, Mapping[str, str]], new_resource: bool
    ) -> ControllerResult[dict[ConfigResource, ApiError]]:
        """The records for the older AlterConfigs: each resource's configs replaced as a whole, so
        every key not named is deleted (the reason KIP-339 added the incremental form)."""
        records: list[ApiMessageAndVersion] = []
        results: dict[ConfigResource, ApiError] = {}
        for resource, configs in new_configs.items():
            results[resource] = self._legacy_alter_config_resource(resource, configs, new_resource, records)
        return ControllerResult.of(records, results)

    def _legacy_alter_config_resource(
        self,
        resource: ConfigResource,
        new_configs: Mapping[str, str],
        new_resource: bool,
        output_records: list[ApiMessageAndVersion],
    ) -> ApiError:
        current = self._config_data.get(resource)
        current_configs = dict(current.items()) if current is not None else {}
        explicitly_altered = [
            _config_record(resource, key, value)
            for key, value in new_configs.items()
            if current_configs.get(key) != value or resource.type == ConfigResourceType.BROKER
        ]
        implicitly_deleted = [
            _config_record(resource, key, None) for key in current_configs if key not in new_configs
        ]
        error = self._validate_alter_config(resource, explicitly_altered, implicitly_deleted, new_resource)
        if error.is_success():
            output_records.extend(explicitly_altered)
            output_records.extend(implicitly_deleted)
        return error

    def _validate_alter_config(
        self,
        resource: ConfigResource,
        explicitly_altered: list[ApiMessageAndVersion],
        implicitly_deleted: list[ApiMessageAndVersion],
        new_resource: bool,
    ) -> ApiError:
        """Check the resource's configs as the records would leave them: the whole set, so a value
        that is only invalid beside another (none here yet, but Kafka's validator may) is caught."""
        current = self._config_data.get(resource)
        all_configs: dict[str, str] = dict(current.items()) if current is not None else {}
        for record in explicitly_altered:
            if record.message.value is None:
                all_configs.pop(record.message.name, None)
            else:
                all_configs[record.message.name] = record.message.value
        for record in implicitly_deleted:
            all_configs.pop(record.message.name, None)
        try:
            self._validator(resource, all_configs)
            if not new_resource:
                self._existence_checker(resource)
        except Exception as exc:  # every failure is an answer, as Kafka catches Throwable
            error = ApiError.from_throwable(exc)
            if error.error is Errors.UNKNOWN:
                log.error("Unknown server error validating Alter Configs", exc_info=exc)
            return error
        return ApiError.NONE

    def _is_splittable(self, resource: ConfigResource, key: str) -> bool:
        if resource.type != ConfigResourceType.TOPIC:
            return False
        config_key = self._topic_config_def.keys.get(key)
        return config_key is not None and config_key.type == ConfigType.LIST

    def _get_parts(self, value: str | None, key: str, resource: ConfigResource) -> list[str]:
        """A LIST value's items; with no value set, the definition's default's."""
        if value is None:
            default = self._topic_config_def.keys[key].default
            if not default:
                return []
            value = ",".join(default)
        return [part for part in value.split(",") if part]

    # --8<-- [start:replay]
    def replay(self, record: ConfigRecord) -> None:
        """Apply one ConfigRecord: set the key, or delete it when the value is null; a resource
        left with no keys is dropped, so "no overrides" has one representation."""
        resource = ConfigResource(ConfigResourceType(record.resource_type), record.resource_name)
        configs = self._config_data.get(resource)
        if configs is None:
            configs = TimelineHashMap(self._snapshot_registry)
            self._config_data.put(resource, configs)
        if record.value is None:
            configs.remove(record.name)
        else:
            configs.put(record.name, record.value)
        if len(configs) == 0:
            self._config_data.remove(resource)
        log.info("%s: set configuration %s to %s", resource, record.name, record.value)

    # --8<-- [end:replay]

    def config_properties(self, resource: ConfigResource) -> dict[str, str]:
        """The resource's current configs (uncommitted ones included), as a plain dict."""
        configs = self._config_data.get(resource)
        return dict(configs.items()) if configs is not None else {}

    def describe_configs(
        self, last_committed_offset: int, resources: Mapping[ConfigResource, Collection[str]]
    ) -> dict[ConfigResource, ResultOrError]:
        """The configs of each resource as of the last committed offset (a read never shows what a
        standby could not yet see); an empty key list means all of them."""
        results: dict[ConfigResource, ResultOrError] = {}
        for resource, keys in resources.items():
            try:
                self._validator(resource, {})
                self._existence_checker(resource)
            except Exception as exc:  # the answer names the failure
                results[resource] = ResultOrError(ApiError.from_throwable(exc))
                continue
            configs = self._config_data.get(resource, last_committed_offset)
            found: dict[str, str] = {}
            if configs is not None:
                items = dict(configs.items(last_committed_offset))
                found = items if not keys else {key: items[key] for key in keys if key in items}
            results[resource] = ResultOrError(ApiError.NONE, found)
        return results

    def delete_topic_configs(self, name: str) -> None:
        """Forget a deleted topic's configs (replaying its RemoveTopicRecord calls this: the log holds
        no ConfigRecords deleting them)."""
        self._config_data.remove(ConfigResource(ConfigResourceType.TOPIC, name))

    def config_resources(self, epoch: int = LATEST_EPOCH) -> list[ConfigResource]:
        return list(self._config_data.keys(epoch))


def _config_record(resource: ConfigResource, key: str, value: str | None) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(
        ConfigRecord(resource_type=int(resource.type), resource_name=resource.name, name=key, value=value), 0
    )
