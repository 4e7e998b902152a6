"""AlterConfigs of a topic that does not exist, answered as Kafka 0.11.0 answers it: the
``AdminOperationException`` that ``AdminUtils.validateTopicConfig`` throws maps to no error code, so
the resource gets UNKNOWN with the exception's message, ``Topic "<name>" does not exist.`` (Kafka 2.7
answers UNKNOWN_TOPIC_OR_PARTITION). Nothing is written for it, ``validate_only`` or not."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from tests.support.topics import topic_name
from tests.support.wire import WireClient

pytestmark = pytest.mark.integration

TOPIC = 2  # ResourceType.TOPIC's code


@pytest.mark.parametrize("validate_only", [False, True])
def test_altering_a_missing_topic_answers_unknown_with_kafkas_message(cluster, validate_only):
    missing = topic_name("missing")
    client = WireClient(cluster.servers[0].port)
    try:
        body = {
            "resources": [
                {
                    "resource_type": TOPIC,
                    "resource_name": missing,
                    "config_entries": [{"config_name": "retention.ms", "config_value": "5"}],
                }
            ],
            "validate_only": validate_only,
        }
        [result] = client.call(ApiKeys.ALTER_CONFIGS, 0, body)["resources"]
    finally:
        client.close()
    assert (Errors.for_code(result["error_code"]), result["error_message"]) == (
        Errors.UNKNOWN,
        f'Topic "{missing}" does not exist.',
    )
    zk = cluster.servers[0].zk
    assert zk.get_topic_config(missing) == {}, "nothing written for a topic that does not exist"
