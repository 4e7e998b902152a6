"""Each stateless KStream operator, run record by record through the driver: what comes out, in
what order, and which node names it adds."""

from __future__ import annotations

import pytest

from kafka_lite.streams.kstream import KeyValue, KStreamBuilder

from .support import STRING, driver_for, pipe, read_all

pytestmark = pytest.mark.unit

INPUT = [("a", "1"), ("b", "22"), ("c", "333"), ("d", "4444")]


def run(build, records=INPUT, outputs=("out",)):
    """Build ``stream("in")`` -> ``build(stream)``, pipe ``records``, return what each output got."""
    builder = KStreamBuilder()
    build(builder.stream("in", key_serde=STRING, value_serde=STRING))
    driver = driver_for(builder)
    for key, value in records:
        pipe(driver, "in", key, value)
    return [read_all(driver, topic) for topic in outputs]


def test_filter_and_filter_not_split_the_records_between_them():
    def build(stream):
        stream.filter(lambda k, v: len(v) % 2 == 0).to("out", STRING, STRING)
        stream.filter_not(lambda k, v: len(v) % 2 == 0).to("rest", STRING, STRING)

    even, odd = run(build, outputs=("out", "rest"))
    assert even == [("b", "22"), ("d", "4444")]
    assert odd == [("a", "1"), ("c", "333")]


def test_map_changes_key_and_value():
    [out] = run(lambda s: s.map(lambda k, v: KeyValue(v, k.upper())).to("out", STRING, STRING))
    assert out == [("1", "A"), ("22", "B"), ("333", "C"), ("4444", "D")]


def test_map_values_keeps_the_key():
    [out] = run(lambda s: s.map_values(lambda v: v + "!").to("out", STRING, STRING))
    assert out == [("a", "1!"), ("b", "22!"), ("c", "333!"), ("d", "4444!")]


def test_select_key_keeps_the_value():
    [out] = run(lambda s: s.select_key(lambda k, v: k + v).to("out", STRING, STRING))
    assert out == [("a1", "1"), ("b22", "22"), ("c333", "333"), ("d4444", "4444")]


def test_flat_map_makes_zero_or_more_records_per_record():
    # One record per character of the value, keyed by the character; "a"'s one character, ...
    def build(stream):
        stream.flat_map(lambda k, v: [KeyValue(f"{k}{i}", c) for i, c in enumerate(v[:2])]).to(
            "out", STRING, STRING
        )

    [out] = run(build, records=[("a", "1"), ("b", ""), ("c", "333")])
    assert out == [("a0", "1"), ("c0", "3"), ("c1", "3")]


def test_flat_map_values_keeps_the_key_for_each_value():
    [out] = run(
        lambda s: s.flat_map_values(lambda v: v.split("-")).to("out", STRING, STRING),
        records=[("k", "x-y-z"), ("j", "w")],
    )
    assert out == [("k", "x"), ("k", "y"), ("k", "z"), ("j", "w")]


def test_branch_sends_each_record_to_the_first_matching_predicate_only():
    def build(stream):
        short, medium, anything = stream.branch(
            lambda k, v: len(v) <= 1,
            lambda k, v: len(v) <= 3,
            lambda k, v: True,  # would take every record, but sees only what the others leave
        )
        short.to("short", STRING, STRING)
        medium.to("medium", STRING, STRING)
        anything.to("rest", STRING, STRING)

    short, medium, rest = run(build, outputs=("short", "medium", "rest"))
    assert short == [("a", "1")]
    assert medium == [("b", "22"), ("c", "333")]
    assert rest == [("d", "4444")]


def test_branch_drops_a_record_no_predicate_takes_and_needs_a_predicate():
    [out] = run(lambda s: s.branch(lambda k, v: k == "c")[0].to("out", STRING, STRING))
    assert out == [("c", "333")]
    with pytest.raises(ValueError, match="at least one predicate"):
        KStreamBuilder().stream("in").branch()


def test_foreach_sees_every_record_in_order():
    seen = []
    run(lambda s: s.foreach(lambda k, v: seen.append((k, v))))
    assert seen == INPUT


def test_through_writes_the_topic_and_reads_it_back():
    def build(stream):
        stream.map_values(str.upper).through("middle", STRING, STRING).map_values(lambda v: v * 2).to(
            "out", STRING, STRING
        )

    middle, out = run(build, records=[("a", "x"), ("b", "y")], outputs=("middle", "out"))
    assert middle == [("a", "X"), ("b", "Y")]  # still readable, and piped back in by the driver
    assert out == [("a", "XX"), ("b", "YY")]


def test_operators_are_named_with_one_counter():
    builder = KStreamBuilder()
    stream = builder.stream("in")
    stream.filter(lambda k, v: True).map(lambda k, v: KeyValue(k, v)).to("out")
    branches = stream.branch(lambda k, v: True, lambda k, v: False)
    branches[1].flat_map_values(lambda v: [v]).foreach(print)
    assert list(builder.node_factories) == [
        "KSTREAM-SOURCE-0000000000",
        "KSTREAM-FILTER-0000000001",
        "KSTREAM-MAP-0000000002",
        "KSTREAM-SINK-0000000003",
        "KSTREAM-BRANCH-0000000004",
        "KSTREAM-BRANCHCHILD-0000000005",
        "KSTREAM-BRANCHCHILD-0000000006",
        "KSTREAM-FLATMAPVALUES-0000000007",
        "KSTREAM-FOREACH-0000000008",
    ]


def test_the_key_changing_operators_mark_the_stream_for_repartitioning():
    stream = KStreamBuilder().stream("in")
    assert not stream.repartition_required
    assert not stream.filter(lambda k, v: True).map_values(str).flat_map_values(list).repartition_required
    assert stream.map(lambda k, v: (k, v)).repartition_required
    assert stream.flat_map(lambda k, v: []).repartition_required
    assert stream.select_key(lambda k, v: v).filter(lambda k, v: True).repartition_required
    assert not stream.select_key(lambda k, v: v).through("t").repartition_required
