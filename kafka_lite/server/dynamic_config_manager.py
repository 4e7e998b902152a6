"""Every broker's watch on ``/config/changes``: the notifications that some entity's overrides changed.

Mirrors: kafka.server.DynamicConfigManager (core/src/main/scala/kafka/server/DynamicConfigManager.scala,
         Kafka 0.11.0) with kafka.common.ZkNodeChangeNotificationListener, which it uses
Book:    chapter 7 (the admin tools write to ZooKeeper; the brokers watch it)
Differs: the notifications are processed on the listener's own thread (Kafka: ZkClient's event
         thread), since kazoo's watch thread must not wait on ZooKeeper calls.

How a config change travels (Kafka's ``AdminUtils.changeTopicConfig``, here ``ZkUtils.change_topic_config``)::

    /config/topics/orders            {"version":1,"config":{"retention.ms":"60000"}}   (1) the new set
    /config/changes/config_change_0000000007  {"version":2,"entity_path":"topics/orders"}  (2) "look"

Every broker watches the children of ``/config/changes``. For each notification newer than the last
one it processed it reads the entity's znode (the whole current set, not a diff) and hands it to the
handler of the entity type: ``TopicConfigHandler`` for ``topics``, ``BrokerConfigHandler`` for
``brokers``. A broker starting up first hands each handler every entity's current configs (a
throttle set before it started applies at once), then processes the notifications still there,
harmlessly, since each only says "re-read". Notifications older than ``change_expiration_ms`` (15
minutes, Kafka's) are deleted by whichever broker sees them after processing, so the directory does
not grow forever, while a broker that was briefly disconnected still finds what it missed. The watch,
the ordering and the purge are ``ZkNodeChangeNotificationListener``'s, which the authorizer's
``/kafka-acl-changes`` uses too; this manager is its handler for ``/config/changes``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping

from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.server.config_handler import ConfigHandler
from kafka_lite.zk.zk_node_change_notification_listener import (
    CHANGE_EXPIRATION_MS,
    ZkNodeChangeNotificationListener,
)
from kafka_lite.zk.zk_utils import ENTITY_CONFIG_CHANGE_ZNODE_PREFIX, ENTITY_CONFIG_CHANGES_PATH, ZkUtils

log = logging.getLogger(__name__)

__all__ = ["CHANGE_EXPIRATION_MS", "DynamicConfigManager"]


class DynamicConfigManager:
    def __init__(
        self,
        zk_utils: ZkUtils,
        config_handlers: Mapping[str, ConfigHandler],
        time: Time = SYSTEM,
        change_expiration_ms: int = CHANGE_EXPIRATION_MS,
    ) -> None:
        self.zk_utils = zk_utils
        self.config_handlers = dict(config_handlers)
        self.time = time
        self.config_change_listener = ZkNodeChangeNotificationListener(
            zk_utils,
            ENTITY_CONFIG_CHANGES_PATH,
            ENTITY_CONFIG_CHANGE_ZNODE_PREFIX,
            self._process_config_change,
            time,
            change_expiration_ms,
        )

    @property
    def last_executed_change(self) -> int:
        return self.config_change_listener.last_executed_change

    def startup(self) -> None:
        """Apply every entity's configs as they are now, then every change the watch reports."""
        self.bootstrap()
        self.config_change_listener.init()

    def bootstrap(self) -> None:
        """Hand each handler the configs of every entity of its type that has some (Kafka's startup
        does this for all types). One entity's bad set is logged and skipped: a broker starts with
        the defaults for it rather than not at all."""
        for entity_type, handler in self.config_handlers.items():
            for entity, configs in self.zk_utils.fetch_all_entity_configs(entity_type).items():
                try:
                    handler.process_config_changes(entity, configs)
                except Exception as e:
                    log.error(
                        "Error applying the configs %s of %s %s at startup: %s",
                        configs,
                        entity_type,
                        entity,
                        e,
                    )

    def shutdown(self) -> None:
        self.config_change_listener.close()

    def process_all_notifications(self) -> None:
        self.config_change_listener.process_all_notifications()

    def _process_config_change(self, data: bytes) -> None:
        try:
            value = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError):
            value = None
        if not isinstance(value, dict):
            log.warning("Ignoring config change notification %r: not a JSON object", data)
            return
        self.process_notification(value)

    # --8<-- [start:process_notifications]
    def process_notification(self, data: dict) -> None:
        """Kafka's ``ConfigChangedNotificationHandler``: version 1 names the entity type and name,
        version 2 (what 0.11 writes) an ``entity_path`` such as ``topics/orders``."""
        version = data.get("version")
        if version == 1:
            entity_type, entity = data.get("entity_type"), data.get("entity_name")
        elif version == 2:
            entity_type, _, entity = str(data.get("entity_path", "")).partition("/")
        else:
            raise ValueError(f"Config change notification has an unsupported version {version!r}")
        handler = self.config_handlers.get(entity_type)
        if handler is None or not entity:
            log.info(
                "Ignoring a config change of %s %r: this broker has no handler for it", entity_type, entity
            )
            return
        handler.process_config_changes(entity, self.zk_utils.fetch_entity_config(entity_type, entity))

    # --8<-- [end:process_notifications]
