"""The inter-broker protocol versions, for the broker's modules.

No Kafka twin: Kafka's ``kafka.api.ApiVersion`` is one class, defined in
``kafka_lite/common/record/api_version.py`` so that the log (a layer below the broker) can read a
topic's ``message.format.version``; the broker's modules import it from here, beside the settings
that name it (``inter.broker.protocol.version``, ``log.message.format.version``).
"""

from kafka_lite.common.record.api_version import (
    KAFKA_0_8_0,
    KAFKA_0_8_1,
    KAFKA_0_8_2,
    KAFKA_0_9_0,
    KAFKA_0_10_0_IV0,
    KAFKA_0_10_0_IV1,
    KAFKA_0_10_1_IV0,
    KAFKA_0_10_1_IV1,
    KAFKA_0_10_1_IV2,
    KAFKA_0_10_2_IV0,
    KAFKA_0_11_0_IV0,
    KAFKA_0_11_0_IV1,
    KAFKA_0_11_0_IV2,
    LATEST_VERSION,
    VERSION_NAMES,
    ApiVersion,
    ApiVersionValidator,
    api_version,
    uses_leader_epochs_for_truncation,
)

__all__ = [
    "KAFKA_0_8_0",
    "KAFKA_0_8_1",
    "KAFKA_0_8_2",
    "KAFKA_0_9_0",
    "KAFKA_0_10_0_IV0",
    "KAFKA_0_10_0_IV1",
    "KAFKA_0_10_1_IV0",
    "KAFKA_0_10_1_IV1",
    "KAFKA_0_10_1_IV2",
    "KAFKA_0_10_2_IV0",
    "KAFKA_0_11_0_IV0",
    "KAFKA_0_11_0_IV1",
    "KAFKA_0_11_0_IV2",
    "LATEST_VERSION",
    "VERSION_NAMES",
    "ApiVersion",
    "ApiVersionValidator",
    "api_version",
    "uses_leader_epochs_for_truncation",
]
