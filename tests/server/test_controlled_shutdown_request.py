"""The ControlledShutdown request at its edges, on the session's cluster: asked of a broker that is not
the controller, or about a broker that does not exist, it is answered with Kafka's error code and
changes nothing. Version 0 comes with request header v0 (no client id)."""

from __future__ import annotations

import struct

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import parse_response
from tests.support.wire import WireClient

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]


def _call_v0(port: int, broker_id: int) -> dict:
    """ControlledShutdown v0: api key, version, correlation id (no client id), then the broker id."""
    client = WireClient(port)
    try:
        client.send_raw(struct.pack(">hhii", ApiKeys.CONTROLLED_SHUTDOWN, 0, 7, broker_id))
        correlation_id, body = parse_response(ApiKeys.CONTROLLED_SHUTDOWN, 0, client.read_frame())
        assert correlation_id == 7
        return body
    finally:
        client.close()


@pytest.mark.parametrize("version", [0, 1])
def test_a_broker_that_is_not_the_controller_answers_stale_controller_epoch(cluster, version):
    controller = cluster.controller()
    other = next(s for s in cluster.servers if s.broker_id != controller.broker_id)
    if version == 0:
        response = _call_v0(other.port, other.broker_id)
    else:
        client = WireClient(other.port)
        response = client.call(ApiKeys.CONTROLLED_SHUTDOWN, 1, {"broker_id": other.broker_id})
        client.close()
    # Kafka's code for a ControllerMovedException: the asking broker looks the controller up again
    assert response == {"error_code": Errors.STALE_CONTROLLER_EPOCH.code, "partitions_remaining": []}
    assert controller.context.shutting_down_broker_ids == set()


@pytest.mark.parametrize("version", [0, 1])
def test_the_controller_answers_broker_not_available_for_an_unknown_broker(cluster, version):
    controller = cluster.controller()
    port = next(s.port for s in cluster.servers if s.broker_id == controller.broker_id)
    if version == 0:
        response = _call_v0(port, 99)
    else:
        client = WireClient(port)
        response = client.call(ApiKeys.CONTROLLED_SHUTDOWN, 1, {"broker_id": 99})
        client.close()
    assert response == {"error_code": Errors.BROKER_NOT_AVAILABLE.code, "partitions_remaining": []}
    assert controller.context.shutting_down_broker_ids == set()
    assert controller.context.live_broker_ids() == {s.broker_id for s in cluster.servers if s.running}
