"""Client quotas on MockTime: the rate over the windows, Kafka's throttle time, the delay queue and
its reaper, the quota that applies (override, dynamic default, static default), the request quota,
and the configs a client id may be given."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import RequestHeader, encode_request, parse_request
from kafka_lite.common.quota import Quota
from kafka_lite.common.time import MockTime
from kafka_lite.network.request_channel import Request, RequestChannel, ResponseAction
from kafka_lite.server import quota_factory
from kafka_lite.server.client_quota_manager import (
    DEFAULT_ENTITY_NAME,
    ClientQuotaManager,
    ClientQuotaManagerConfig,
    ClientRequestQuotaManager,
    ThrottledResponse,
    nanos_to_percentage,
)
from kafka_lite.server.config_handler import ClientIdConfigHandler, validate_client_config
from kafka_lite.server.kafka_apis import KafkaApis
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.metadata_cache import MetadataCache
from kafka_lite.server.replication_quota_manager import QuotaType
from kafka_lite.testing.in_process_replicas import in_process_brokers, leader_and_isr
from kafka_lite.utils.timer.delay_queue import DelayQueue
from tests.support.waiting import wait_until

pytestmark = pytest.mark.unit

# Kafka's ClientQuotaManagerTest: a 500 B/s default, ten whole 1-s windows and the current one
CONFIG = ClientQuotaManagerConfig(
    quota_bytes_per_second_default=500, num_quota_samples=11, quota_window_size_seconds=1
)


@pytest.fixture
def time() -> MockTime:
    return MockTime()


@pytest.fixture
def manager(time):
    """A produce quota manager whose reaper the test drives by hand (its thread stopped)."""
    m = ClientQuotaManager(CONFIG, QuotaType.PRODUCE, time)
    m.throttled_request_reaper.shutdown()
    yield m
    m.shutdown()


class Callbacks:
    def __init__(self) -> None:
        self.throttle_times: list[int] = []

    def __call__(self, throttle_time_ms: int) -> None:
        self.throttle_times.append(throttle_time_ms)


def test_the_rate_counts_at_least_ten_whole_windows_then_the_live_ones(manager, time):
    calls = Callbacks()
    manager.record_and_maybe_throttle("c", 400, calls)
    # One value in the first window is not 400 B/s over 1 ms: Rate assumes samples - 1 = 10 whole windows.
    assert manager.rate("c") == pytest.approx(40.0)
    for _ in range(9):
        time.sleep(1000)
        manager.record_and_maybe_throttle("c", 400, calls)
    time.sleep(1000)
    assert manager.rate("c") == pytest.approx(4000 / 10.0)  # ten windows of 400, spanning 10 s
    assert calls.throttle_times == [0] * 10, "under the quota: every response at once"
    time.sleep(11_000)  # all windows older than 11 windows: reset
    assert manager.rate("c") == 0.0


def test_a_spike_is_throttled_by_kafkas_formula_and_released_when_due(manager, time):
    """Kafka's testQuotaViolation: 400*10 + 2300 = 6300 B over 10.5 s is 600 B/s; against 500 B/s,
    X = (600 - 500) / 500 * 10.5 s = 2100 ms."""
    calls = Callbacks()
    for _ in range(10):
        manager.record_and_maybe_throttle("c", 400, calls)
        time.sleep(1000)
    time.sleep(500)
    throttle = manager.record_and_maybe_throttle("c", 2300, calls)
    assert throttle == 2100
    assert len(manager.delay_queue) == 1 and len(calls.throttle_times) == 10, "held, not sent"
    assert manager.throttle_time_sensor("c").max == 2100

    time.sleep(2099)
    assert manager.delay_queue.poll(0) is None, "not due 1 ms early"
    time.sleep(1)
    manager.throttled_request_reaper.do_work()
    assert calls.throttle_times[-1] == 2100 and len(manager.delay_queue) == 0

    # Windows keep the spike for a while; once it has rolled out, nothing is throttled.
    for _ in range(10):
        manager.record_and_maybe_throttle("c", 400, calls)
        time.sleep(1000)
    assert manager.record_and_maybe_throttle("c", 0, calls) == 0


def test_the_delay_queue_releases_in_due_order_at_the_due_mock_time(time):
    queue = DelayQueue(time)
    released: list[str] = []
    for name, delay in [("c", 300), ("a1", 100), ("b", 200), ("a2", 100)]:
        queue.offer(ThrottledResponse(time, delay, lambda _ms, name=name: released.append(name)))

    def drain() -> None:
        while (response := queue.poll(0)) is not None:
            response.execute()

    drain()
    assert released == []
    time.sleep(99)
    drain()
    assert released == []
    time.sleep(1)
    drain()
    assert released == ["a1", "a2"], "equal due times leave in the order they came"
    time.sleep(100)
    drain()
    assert released == ["a1", "a2", "b"]
    time.sleep(100)
    drain()
    assert released == ["a1", "a2", "b", "c"] and len(queue) == 0


def test_the_reaper_thread_sends_held_responses_when_mock_time_reaches_them(time):
    manager = ClientQuotaManager(CONFIG, QuotaType.FETCH, time)
    try:
        calls = Callbacks()
        first = manager.record_and_maybe_throttle("x", 10_000, calls)  # 10 kB over 10 s: 1000 B/s
        second = manager.record_and_maybe_throttle("y", 20_000, calls)
        assert (first, second) == (10_000, 30_000)  # (1000-500)/500*10 s, (2000-500)/500*10 s
        time.sleep(9_999)
        assert manager.delay_queue.poll(0) is None and calls.throttle_times == []
        time.sleep(1)
        wait_until(lambda: calls.throttle_times == [10_000], timeout_s=5, what="the first held response")
        time.sleep(20_000)
        wait_until(lambda: calls.throttle_times == [10_000, 30_000], timeout_s=5, what="the second")
    finally:
        manager.shutdown()
    assert not manager.throttled_request_reaper.is_alive()


def test_an_override_beats_the_dynamic_default_which_beats_the_static_one(manager, time):
    calls = Callbacks()
    manager.record_and_maybe_throttle("a", 100, calls)  # a's sensor exists before the changes
    assert manager.quota("a") == Quota.upper_bound(500)

    manager.update_quota(DEFAULT_ENTITY_NAME, Quota.upper_bound(1000))
    manager.update_quota("b", Quota.upper_bound(200))
    assert manager.quota("a") == Quota.upper_bound(1000)
    assert manager.quota("b") == Quota.upper_bound(200)
    assert manager.get_or_create_quota_sensors("a").quota_sensor.config.quota.bound == 1000, (
        "live sensor updated"
    )

    # 3000 B in the first window is 300 B/s: within a's default of 1000, over b's own 200.
    assert manager.record_and_maybe_throttle("a", 2900, calls) == 0
    assert manager.record_and_maybe_throttle("b", 3000, calls) == 5000  # (300-200)/200*10 s

    manager.update_quota("b", None)
    assert manager.quota("b") == Quota.upper_bound(1000), "back to the dynamic default"
    assert manager.get_or_create_quota_sensors("b").quota_sensor.config.quota.bound == 1000
    manager.update_quota(DEFAULT_ENTITY_NAME, None)
    assert manager.quota("a") == manager.quota("b") == Quota.upper_bound(500), "back to the static default"


def test_each_client_id_is_measured_apart(manager):
    calls = Callbacks()
    assert manager.record_and_maybe_throttle("a", 5000, calls) == 0  # 500 B/s: at the bound, allowed
    assert manager.record_and_maybe_throttle("b", 5000, calls) == 0, "b has its own rate"
    assert manager.record_and_maybe_throttle("a", 1000, calls) == 2000  # (600-500)/500*10 s


def test_the_request_quota_throttles_at_most_one_window_and_exempts_what_it_is_told(time):
    manager = ClientRequestQuotaManager(ClientQuotaManagerConfig(), time)
    manager.throttled_request_reaper.shutdown()
    try:
        manager.update_quota("c", Quota.upper_bound(10.0))  # 10 % of one handler thread
        calls = Callbacks()
        manager.record_no_throttle("c", nanos_to_percentage(5_000_000_000))  # 5 s of handler time
        assert calls.throttle_times == [], "recording alone never sends or holds anything"
        assert manager.rate("c") == pytest.approx(50.0)  # 500 %·s over 10 s
        # (50 - 10) / 10 * 10 s is 40 s; a request quota holds a response for one window at most.
        assert manager.maybe_throttle("c", calls) == 1000
        assert manager.maybe_throttle("other", calls) == 0 and calls.throttle_times == [0]
        manager.record_exempt(nanos_to_percentage(9_000_000_000))
        assert manager.exempt_sensor.measure() == pytest.approx(90.0)
        assert manager.rate("other") == 0.0, "exempt time is no client's"
    finally:
        manager.shutdown()


def test_nanos_to_percentage_is_a_share_of_one_thread_second():
    assert nanos_to_percentage(1_000_000_000) == pytest.approx(100.0)
    assert nanos_to_percentage(250_000_000) == pytest.approx(25.0)


@pytest.fixture
def quotas():
    managers = quota_factory.instantiate(
        KafkaConfig({"zookeeper.connect": "127.0.0.1:2181", "broker.id": 0, "quota.producer.default": 4096}),
        MockTime(),
    )
    yield managers
    managers.shutdown()


def test_the_factory_reads_the_brokers_quota_settings(quotas):
    assert quotas.produce.quota("any") == Quota.upper_bound(4096)
    assert quotas.fetch.quota("any").bound == 2**63 - 1, "quota.consumer.default: unlimited"
    assert quotas.request.config.num_quota_samples == 11 and quotas.request.max_throttle_time_ms == 1000


def test_the_client_id_handler_sets_and_removes_the_three_quotas(quotas):
    handler = ClientIdConfigHandler(quotas)
    handler.process_config_changes(
        "c", {"producer_byte_rate": "1024", "consumer_byte_rate": "2048", "request_percentage": "12.5"}
    )
    assert quotas.produce.quota("c") == Quota.upper_bound(1024)
    assert quotas.fetch.quota("c") == Quota.upper_bound(2048)
    assert quotas.request.quota("c") == Quota.upper_bound(12.5)
    handler.process_config_changes("c", {"consumer_byte_rate": "2048"})
    assert quotas.produce.quota("c") == Quota.upper_bound(4096), "removed: the static default again"
    assert quotas.fetch.quota("c") == Quota.upper_bound(2048)
    handler.process_config_changes(DEFAULT_ENTITY_NAME, {"producer_byte_rate": "100"})
    assert quotas.produce.quota("someone") == Quota.upper_bound(100)


@pytest.mark.parametrize("key", ["producer_byte_rate", "consumer_byte_rate", "request_percentage"])
@pytest.mark.parametrize(
    ("value", "reason"), [("-5", "Value must be above 0"), ("abc", "Expected value to be a")]
)
def test_a_quota_that_is_not_a_number_above_zero_is_refused_naming_key_and_value(quotas, key, value, reason):
    with pytest.raises(ConfigException) as e:
        validate_client_config({key: value})
    assert key in str(e.value) and value in str(e.value) and reason in str(e.value)
    with pytest.raises(ConfigException):
        ClientIdConfigHandler(quotas).process_config_changes("c", {"producer_byte_rate": "10", key: value})
    assert quotas.produce.quota("c") == Quota.upper_bound(4096), "a refused set changes nothing"


def test_an_unknown_client_config_is_refused():
    with pytest.raises(ConfigException, match=r"Unknown Dynamic Configuration 'retention\.ms'"):
        validate_client_config({"retention.ms": "5"})
    assert validate_client_config({"request_percentage": "0.5"})["request_percentage"] == 0.5


def test_the_request_quota_holds_back_fetch_but_answers_metadata_at_once(tmp_path, time):
    """Over its request quota, a client's Fetch response waits (at most one window), while its
    Metadata is answered at once: kafka_lite holds back Produce and Fetch only, Kafka 0.11 every API."""
    config = KafkaConfig({"zookeeper.connect": "unused:2181", "broker.id": 0})
    quotas = quota_factory.instantiate(config, time)
    quotas.request.update_quota("c", Quota.upper_bound(10.0))
    quotas.request.record_no_throttle("c", nanos_to_percentage(5_000_000_000))  # far over 10 %
    channel = RequestChannel(1, 16)
    with in_process_brokers(tmp_path, time, count=1) as (replica_manager,):
        replica_manager.become_leader_or_follower(leader_and_isr(("t", 0), 0, [0], [0]))
        cache = MetadataCache(0)  # told of broker 0, as an UpdateMetadata would: requests need not wait
        end_point = {"port": 9092, "host": "h", "listener_name": "PLAINTEXT", "security_protocol_type": 0}
        cache.update_cache(
            0,
            1,
            {"live_brokers": [{"id": 0, "end_points": [end_point], "rack": None}], "partition_states": []},
            3,
        )
        apis = KafkaApis(
            channel, replica_manager, None, None, None, None, cache, None, quotas, config, "c1", time
        )

        def call(api: ApiKeys, body: dict) -> None:
            header, parsed = parse_request(encode_request(RequestHeader(api, 0, 1, "c"), body))
            apis.handle(Request(0, "c-connection", header, parsed, 0, "127.0.0.1", 0))

        try:
            call(ApiKeys.METADATA, {"topics": []})
            metadata = channel.receive_response(0)
            assert metadata is not None and metadata.action is ResponseAction.SEND, "Metadata was held back"
            fetch = {"partition": 0, "fetch_offset": 0, "max_bytes": 1024}
            call(ApiKeys.FETCH, {"replica_id": -1, "max_wait_time": 0, "min_bytes": 0,
                                 "topics": [{"topic": "t", "partitions": [fetch]}]})  # fmt: skip
            assert channel.receive_response(0) is None, "Fetch was answered over the request quota"
            time.sleep(1000)  # one window: the most a request quota holds a response
            wait_until(lambda: channel.receive_response(0) is not None, timeout_s=5, what="the held Fetch")
        finally:
            quotas.shutdown()
