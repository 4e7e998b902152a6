"""``KafkaServer.controlled_shutdown`` against a scripted controller: it asks the controller ZooKeeper
names, retries ``controlled.shutdown.max.retries`` times ``controlled.shutdown.retry.backoff.ms``
apart (on a MockTime) while the answer lists partitions or the connection fails, and gives up after
its last attempt without waiting again."""

from __future__ import annotations

import pytest

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import encode_response
from kafka_lite.common.time import MockTime
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.kafka_server import KafkaServer
from kafka_lite.zk.zk_utils import Broker
from tests.support.scripted_broker import CLOSE_CONNECTION, ScriptedServer

pytestmark = pytest.mark.unit

BACKOFF_MS = 5000
REMAINING = {"error_code": 0, "partitions_remaining": [{"topic": "t", "partition": 0}]}
DONE = {"error_code": 0, "partitions_remaining": []}


class ScriptedController(ScriptedServer):
    """Answers each ControlledShutdown with the next of ``answers``; records who asked."""

    def __init__(self, answers: list) -> None:
        super().__init__()
        self.answers = list(answers)
        self.asked: list[int] = []

    def answer(self, header, body):
        assert header.api_key == ApiKeys.CONTROLLED_SHUTDOWN
        self.asked.append(body["broker_id"])
        answer = self.answers.pop(0)
        if answer == CLOSE_CONNECTION:
            return answer
        return encode_response(ApiKeys.CONTROLLED_SHUTDOWN, header.api_version, header.correlation_id, answer)


class ZooKeeperNaming:
    """The two reads the controlled shutdown makes of ZooKeeper: who the controller is, and where."""

    def __init__(self, controller: ScriptedController | None) -> None:
        self.controller = controller

    def get_controller_id(self) -> int:
        return -1 if self.controller is None else 0

    def get_broker(self, broker_id: int) -> Broker:
        return Broker(broker_id, "127.0.0.1", self.controller.port, None, 1)


def server(tmp_path, controller: ScriptedController | None, **overrides) -> tuple[KafkaServer, MockTime]:
    config = KafkaConfig(
        {
            "broker.id": 3,
            "zookeeper.connect": "127.0.0.1:1",
            "log.dirs": str(tmp_path),
            "controlled.shutdown.retry.backoff.ms": BACKOFF_MS,
            "controller.socket.timeout.ms": 5000,
            **overrides,
        }
    )
    time = MockTime()
    s = KafkaServer(config, time)
    s.zk = ZooKeeperNaming(controller)
    return s, time


@pytest.mark.parametrize(
    ("answers", "succeeded", "backoffs"),
    [
        ([DONE], True, 0),
        ([REMAINING, DONE], True, 1),
        ([CLOSE_CONNECTION, DONE], True, 1),  # a dropped connection: connect again and ask again
        ([REMAINING, REMAINING, REMAINING], False, 2),  # no wait after the last attempt
        ([{"error_code": 11, "partitions_remaining": []}, DONE], True, 1),  # the controller moved
    ],
    ids=["at-once", "after-remaining", "after-disconnect", "gives-up", "after-an-error"],
)
def test_retries_until_nothing_remains(tmp_path, answers, succeeded, backoffs):
    controller = ScriptedController(answers)
    try:
        s, time = server(tmp_path, controller)
        start = time.milliseconds()
        assert s.controlled_shutdown() is succeeded
        assert controller.asked == [3] * len(answers)
        assert time.milliseconds() - start == backoffs * BACKOFF_MS
    finally:
        controller.close()


def test_no_controller_known_means_three_attempts_then_the_shutdown_goes_on(tmp_path):
    s, time = server(tmp_path, None)
    start = time.milliseconds()
    assert s.controlled_shutdown() is False
    assert time.milliseconds() - start == 2 * BACKOFF_MS


def test_disabled_asks_nobody(tmp_path):
    controller = ScriptedController([])
    try:
        s, _ = server(tmp_path, controller, **{"controlled.shutdown.enable": False})
        assert s.controlled_shutdown() is False
        assert controller.asked == [] and controller.connections == 0
    finally:
        controller.close()
