"""The checker against Jepsen's own hand-made histories (``kafka_test.clj``), ported: each yields
exactly the error classes it shows, with the facts Jepsen's test asserts; a clean history yields
none. Values are letters where Jepsen's are keywords; keys are partitions 0 and 1 (Jepsen's x, y).
Each history is a list of (process, type, f, value); an op's index and time are its place."""

from __future__ import annotations

import pytest

from kafka_lite.jepsen.checker import allowed_error_types, analysis, check, condense_error
from kafka_lite.jepsen.history import Op

pytestmark = pytest.mark.unit

X, Y = 0, 1


def h(*specs: tuple) -> list[Op]:
    return [Op(i, type, process, f, value, i) for i, (process, type, f, value) in enumerate(specs)]


def errors(history: list[Op], **options) -> dict:
    return analysis(history, **options)["errors"]


def send(k, v):
    return ("send", k, v)


POLL = ("poll",)


def poll(reads: dict):
    return ("poll", reads)


# --- version orders and inconsistent offsets -------------------------------------------------------


def test_version_orders_from_polls_of_any_op_and_sends_of_committed_ones():
    # An ok poll reads a, b at offsets 0, 1; an info txn sent c at 1, b at 3 and d at 4 and must
    # have committed because b was read. Offset 1 holds b and c; offset 2 is a hole.
    history = h(
        (1, "invoke", "txn", [send(X, "c"), send(X, "b"), send(X, "d")]),
        (0, "invoke", "txn", [POLL]),
        (0, "ok", "txn", [poll({X: [(0, "a"), (1, "b")]})]),
        (1, "info", "txn", [send(X, (1, "c")), send(X, (3, "b")), send(X, (4, "d"))]),
    )
    result = analysis(history)
    assert result["version_orders"] == {X: [["a"], ["b", "c"], ["b"], ["d"]]}
    assert result["offsets"] == {X: [0, 1, 3, 4]}
    errs = result["errors"]
    # b sits at offsets 1 and 3 (so the poll's a -> b skips a record), and c, below b's first
    # index, was never read: all follow.
    assert set(errs) == {"inconsistent-offsets", "duplicate", "lost-write", "int-poll-skip"}
    assert errs["inconsistent-offsets"] == [{"key": X, "offset": 1, "index": 1, "values": ["b", "c"]}]
    assert errs["duplicate"] == [{"key": X, "value": "b", "count": 2, "offsets": [1, 3]}]
    assert [e["value"] for e in errs["lost-write"]] == ["c"]


def test_two_ok_sends_at_one_offset_are_inconsistent():
    # Jepsen's real-world example: two acknowledged sends both told offset 537.
    history = h(
        (379, "invoke", "send", [send(11, 641)]),
        (379, "ok", "send", [send(11, (537, 641))]),
        (363, "invoke", "send", [send(11, 645)]),
        (363, "ok", "send", [send(11, (537, 645))]),
    )
    errs = errors(history)
    assert set(errs) == {"inconsistent-offsets", "unseen"}
    assert errs["inconsistent-offsets"] == [{"key": 11, "offset": 537, "index": 0, "values": [641, 645]}]


def test_an_info_send_counts_in_the_log_only_once_one_of_its_sends_is_read():
    sends = [
        (0, "invoke", "send", [send(X, 1), send(Y, 1)]),
        (0, "info", "send", [send(X, (0, 1)), send(Y, 1)]),
        (1, "invoke", "send", [send(X, 2)]),
        (1, "ok", "send", [send(X, (0, 2))]),
    ]
    assert set(errors(h(*sends))) == {"unseen"}  # 2 never read; the info send may never have happened
    read_y = [(2, "invoke", "poll", [POLL]), (2, "ok", "poll", [poll({Y: [(5, 1)]})])]
    errs = errors(h(*sends, *read_y))
    assert set(errs) == {"inconsistent-offsets", "unseen"}
    assert errs["inconsistent-offsets"] == [{"key": X, "offset": 0, "index": 0, "values": [1, 2]}]


# --- G1a, precommitted read --------------------------------------------------------------------


def test_g1a_a_failed_write_read_by_an_ok_poll():
    history = h(
        (0, "invoke", "send", [send(X, 2), send(Y, 3)]),
        (0, "fail", "send", [send(X, 2), send(Y, 3)]),
        (1, "invoke", "poll", [POLL]),
        (1, "ok", "poll", [poll({X: [(0, 2)]})]),
    )
    errs = errors(history)
    assert set(errs) == {"G1a"}
    assert errs["G1a"] == [{"key": X, "value": 2, "writer": 1, "reader": 3}]


def test_precommitted_read_a_transaction_reads_its_own_write():
    history = h(
        (0, "invoke", "txn", [send(X, "a"), POLL]),
        (0, "ok", "txn", [send(X, (0, "a")), poll({X: [(0, "a")]})]),
    )
    errs = errors(history)
    assert set(errs) == {"precommitted-read"}
    assert errs["precommitted-read"] == [{"op": 1, "key": X, "value": "a"}]


# --- lost write --------------------------------------------------------------------------------


def test_lost_write_values_below_the_highest_read_never_read():
    # a at 0, b at 1, d at 3; a read of c at 2 means a and b should have been read.
    history = h(
        (0, "invoke", "send", [send(X, "a")]),
        (0, "ok", "send", [send(X, (0, "a"))]),
        (0, "invoke", "send", [send(X, "b"), send(X, "d")]),
        (0, "ok", "send", [send(X, (1, "b")), send(X, (3, "d"))]),
        (1, "invoke", "send", [send(X, "c")]),
        (1, "info", "send", [send(X, "c")]),
        (0, "invoke", "poll", [POLL]),
        (0, "ok", "poll", [poll({X: [(2, "c")]})]),
    )
    errs = errors(history)
    # b and d land apart (c between): an allowed int-send-skip; a, b, d are never read: unseen.
    assert set(errs) == {"lost-write", "int-send-skip", "unseen"}
    assert errs["lost-write"] == [
        {"key": X, "value": "a", "index": 0, "max_read_index": 2, "writer": 1, "max_read": 7},
        {"key": X, "value": "b", "index": 1, "max_read_index": 2, "writer": 3, "max_read": 7},
    ]


def test_lost_write_with_two_values_at_one_offset_uses_first_and_last_indexes():
    # a at 0 is overwritten by b at 0; c at 2 is read with b, so a was lost.
    history = h(
        (0, "invoke", "send", [send(X, "a")]),
        (0, "ok", "send", [send(X, (0, "a"))]),
        (0, "invoke", "send", [send(X, "b"), send(X, "c")]),
        (0, "ok", "send", [send(X, (0, "b")), send(X, (2, "c"))]),
        (0, "invoke", "poll", [POLL]),
        (0, "ok", "poll", [poll({X: [(0, "b"), (2, "c")]})]),
    )
    errs = errors(history)
    assert set(errs) == {"lost-write", "inconsistent-offsets", "unseen"}
    assert errs["lost-write"] == [
        {"key": X, "value": "a", "index": 0, "max_read_index": 1, "writer": 1, "max_read": 5}
    ]


def test_lost_write_of_an_info_transaction_proved_committed_by_a_read():
    send_ab = [
        (0, "invoke", "send", [send(X, "a"), send(Y, "b")]),
        (0, "info", "send", [send(X, "a"), send(Y, (0, "b"))]),
        (1, "invoke", "send", [send(Y, "c")]),
        (1, "info", "send", [send(Y, "c")]),
    ]
    poll_a = [(2, "invoke", "poll", [POLL]), (2, "ok", "poll", [poll({X: [(0, "a")]})])]
    poll_c = [(3, "invoke", "poll", [POLL]), (3, "ok", "poll", [poll({Y: [(1, "c")]})])]
    assert errors(h(*send_ab, *poll_c)) == {}  # send_ab may not have committed
    errs = errors(h(*send_ab, *poll_a, *poll_c))
    assert set(errs) == {"lost-write"}
    assert errs["lost-write"] == [
        {"key": Y, "value": "b", "index": 0, "max_read_index": 1, "writer": 1, "max_read": 7}
    ]


def test_a_write_whose_op_may_not_have_committed_is_not_lost():
    # e's send is info and nobody ok read it; an aborted poll places it at offset 1, below c.
    history = h(
        (1, "invoke", "send", [send(X, "e")]),
        (1, "info", "send", [send(X, (1, "e"))]),
        (2, "invoke", "poll", [POLL]),
        (2, "fail", "poll", [poll({X: [(1, "e")]})]),
        (0, "invoke", "poll", [POLL]),
        (0, "ok", "poll", [poll({X: [(2, "c")]})]),
    )
    assert analysis(history)["version_orders"] == {X: [["e"], ["c"]]}
    assert errors(history) == {}


# --- poll-skip and nonmonotonic-poll -----------------------------------------------------------

# Process 0 reads offsets 1, 2, then 4, then 7; others show 3 and 6 exist (5 may be a hole).
POLL_12 = [(0, "invoke", "poll", [POLL]), (0, "ok", "poll", [poll({X: [(1, "a"), (2, "b")]})])]
POLL_3 = [(1, "invoke", "poll", [POLL]), (1, "ok", "poll", [poll({X: [(3, "c")]})])]
POLL_4 = [(0, "invoke", "poll", [POLL]), (0, "ok", "poll", [poll({X: [(4, "d")]})])]
WRITE_6 = [(2, "invoke", "send", [send(X, "f")]), (2, "ok", "send", [send(X, (6, "f"))])]
POLL_7 = [(0, "invoke", "poll", [POLL]), (0, "ok", "poll", [poll({X: [(7, "g")]})])]
WRITE_ALL = [  # invoked first, info last: the values polled above, offsets unknown
    (3, "invoke", "send", [send(X, v) for v in "abcdg"]),
    (3, "info", "send", [send(X, v) for v in "abcdg"]),
]


def poll_skip_history(between_4: list, between_7: list) -> list[Op]:
    return h(
        WRITE_ALL[0], *POLL_12, *POLL_3, *between_4, *POLL_4, *between_7, *WRITE_6, *POLL_7, WRITE_ALL[1]
    )


def skip_facts(errs: list[dict], history: list[Op]) -> list[tuple]:
    return [(e["key"], e["delta"], e["skipped"], [history[i].value for i in e["ops"]]) for e in errs]


def test_poll_skip_a_process_jumps_over_records_it_knows_exist():
    history = poll_skip_history([], [])
    errs = errors(history)
    # f, at 6, is acknowledged and never read: lost (g at 7 was read) and unseen; write-all's d -> g
    # lands apart.
    assert set(errs) == {"poll-skip", "lost-write", "unseen", "int-send-skip"}
    assert skip_facts(errs["poll-skip"], history) == [
        (X, 2, ["c"], [POLL_12[1][3], POLL_4[1][3]]),
        (X, 2, ["f"], [POLL_4[1][3], POLL_7[1][3]]),
    ]


@pytest.mark.parametrize(
    ("between_4", "between_7", "skips"),
    [
        ([(0, "invoke", "subscribe", [Y]), (0, "ok", "subscribe", [Y])],
         [(0, "invoke", "assign", [Y]), (0, "info", "assign", [Y])], 0),
        ([(0, "invoke", "subscribe", [X, Y]), (0, "ok", "subscribe", [X, Y])],
         [(0, "invoke", "assign", [X, Y]), (0, "ok", "assign", [X, Y])], 2),
    ],
    ids=["assignment-without-x-forgets", "assignment-keeping-x-remembers"],
)  # fmt: skip
def test_poll_skip_tracking_follows_assign_and_subscribe(between_4, between_7, skips):
    errs = errors(poll_skip_history(between_4, between_7))
    assert len(errs.get("poll-skip", [])) == skips


SENDS_0_TO_5 = [
    (0, "invoke", "send", [send(X, i) for i in range(6)]),
    (0, "ok", "send", [send(X, (i, i)) for i in range(6)]),
    (1, "invoke", "txn", [POLL]),
    (1, "ok", "txn", [poll({X: [(0, 0)]})]),
    (1, "invoke", "txn", [POLL]),
    (1, "fail", "txn", [poll({X: [(1, 1), (2, 2)]})]),
]


def test_a_consumer_rewinds_after_an_aborted_transaction():
    history = h(
        *SENDS_0_TO_5[:4],
        (1, "invoke", "txn", [POLL]),
        (1, "fail", "txn", [poll({X: [(1, 1), (2, 2)]})]),
        (1, "invoke", "txn", [POLL]),
        (1, "info", "txn", [poll({X: [(1, 1), (2, 2)]})]),
        (1, "invoke", "txn", [POLL]),
        (1, "ok", "txn", [poll({X: [(1, 1), (2, 2)], Y: []})]),
    )
    # The last ok poll reads 1 and 2 and not 3..5: lost-write needs a higher read, unseen an ok one.
    assert set(errors(history)) == {"unseen"}
    assert check(history)["unseen"]["messages"] == {X: [3, 4, 5]}


def test_poll_skip_when_an_abort_does_not_rewind():
    history = h(
        *SENDS_0_TO_5,
        (1, "invoke", "txn", [POLL]),
        (1, "fail", "txn", [poll({X: [(3, 3), (4, 4)]})]),
        (1, "invoke", "txn", [POLL]),
        (1, "ok", "txn", [poll({X: [(5, 5)]})]),
    )
    errs = errors(history)
    assert set(errs) == {"poll-skip", "lost-write", "unseen"}
    assert errs["poll-skip"] == [
        {"key": X, "delta": 3, "skipped": [1, 2], "ops": [3, 7]},
        {"key": X, "delta": 5, "skipped": [1, 2, 3, 4], "ops": [3, 9]},
    ]


def test_poll_skip_by_an_info_transaction():
    history = h(
        *SENDS_0_TO_5, (1, "invoke", "txn", [POLL]), (1, "info", "txn", [poll({X: [(3, 3), (4, 4)]})])
    )
    errs = errors(history)
    assert set(errs) == {"poll-skip", "unseen"}
    assert errs["poll-skip"] == [{"key": X, "delta": 3, "skipped": [1, 2], "ops": [3, 7]}]


SEND_ABCD = [
    (0, "invoke", "send", [send(X, v) for v in "abcd"]),
    (0, "ok", "send", [send(X, v) for v in "abcd"]),
]
POLL_123 = [(0, "invoke", "poll", [POLL]), (0, "ok", "poll", [poll({X: [(1, "a"), (2, "b"), (3, "c")]})])]
POLL_234 = [(0, "invoke", "poll", [POLL]), (0, "ok", "poll", [poll({X: [(2, "b"), (3, "c"), (4, "d")]})])]


@pytest.mark.parametrize(
    ("between", "nonmonotonic"),
    [
        ([], True),
        ([(0, "invoke", "subscribe", [Y]), (0, "ok", "subscribe", [Y])], False),
        ([(0, "invoke", "assign", [Y]), (0, "ok", "assign", [Y])], False),
        ([(0, "invoke", "subscribe", [X, Y]), (0, "ok", "subscribe", [X, Y])], True),
        ([(0, "invoke", "assign", [X, Y]), (0, "ok", "assign", [X, Y])], True),
    ],
    ids=["together", "subscribe-y", "assign-y", "subscribe-xy", "assign-xy"],
)
def test_nonmonotonic_poll_a_process_reads_back(between, nonmonotonic):
    history = h(*SEND_ABCD, *POLL_123, *between, *POLL_234)
    errs = errors(history)
    assert set(errs) == ({"nonmonotonic-poll"} if nonmonotonic else set())
    if nonmonotonic:
        later = len(history) - 1
        assert errs["nonmonotonic-poll"] == [{"key": X, "values": ["c", "b"], "delta": -1, "ops": [3, later]}]


# --- sends -------------------------------------------------------------------------------------

SEND_34 = [
    (0, "invoke", "send", [send(X, "c"), send(X, "d")]),
    (0, "ok", "send", [send(X, (3, "c")), send(X, (4, "d"))]),
]
SEND_12 = [
    (0, "invoke", "send", [send(X, "a"), send(X, "b")]),
    (0, "ok", "send", [send(X, (1, "a")), send(X, (2, "b"))]),
]


@pytest.mark.parametrize(
    ("between", "nonmonotonic"),
    [
        ([], True),
        ([(0, "invoke", "subscribe", [Y]), (0, "ok", "subscribe", [Y])], False),
        ([(0, "invoke", "assign", [Y]), (0, "info", "assign", [Y])], False),
        ([(0, "invoke", "subscribe", [X, Y]), (0, "ok", "subscribe", [X, Y])], True),
        ([(0, "invoke", "assign", [X, Y]), (0, "ok", "assign", [X, Y])], True),
    ],
    ids=["together", "subscribe-y", "assign-y", "subscribe-xy", "assign-xy"],
)
def test_nonmonotonic_send_a_process_sends_below_its_last_send(between, nonmonotonic):
    history = h(*SEND_34, *between, *SEND_12)
    errs = errors(history)
    assert set(errs) == ({"nonmonotonic-send", "unseen"} if nonmonotonic else {"unseen"})
    if nonmonotonic:
        later = len(history) - 1
        assert errs["nonmonotonic-send"] == [{"key": X, "values": ["d", "a"], "delta": -3, "ops": [1, later]}]


def test_nonmonotonic_send_a_send_landing_where_the_last_one_did():
    # The same value sent again by the process lands at the same index: no step forward.
    history = h(*SEND_12, (0, "invoke", "send", [send(X, "b")]), (0, "ok", "send", [send(X, (2, "b"))]))
    errs = errors(history)
    assert set(errs) == {"nonmonotonic-send", "unseen"}
    assert errs["nonmonotonic-send"] == [{"key": X, "values": ["b", "b"], "delta": 0, "ops": [1, 3]}]


def test_int_poll_skip_within_one_poll_and_across_two_polls_of_one_op():
    history = h(
        (1, "invoke", "send", [send(X, v) for v in "abd"]),
        (1, "info", "send", [send(X, v) for v in "abd"]),
        (0, "invoke", "poll", [POLL]),
        (0, "ok", "poll", [poll({X: [(1, "a"), (4, "d")]})]),
        (0, "invoke", "poll", [POLL, POLL]),
        (0, "ok", "poll", [poll({X: [(1, "a")]}), poll({X: [(4, "d")]})]),
        (0, "invoke", "poll", [POLL]),
        (0, "ok", "poll", [poll({X: [(2, "b")]})]),
    )
    errs = errors(history)
    # Process 0 also reads back: a after d, then b after d.
    assert set(errs) == {"int-poll-skip", "nonmonotonic-poll"}
    assert errs["int-poll-skip"] == [
        {"key": X, "values": ["a", "d"], "delta": 2, "op": 3, "skipped": ["b"]},
        {"key": X, "values": ["a", "d"], "delta": 2, "op": 5, "skipped": ["b"]},
    ]


def test_int_poll_skip_exempts_keys_in_the_rebalance_log():
    history = h(
        (1, "invoke", "send", [send(X, v) for v in "abd"]),
        (1, "info", "send", [send(X, v) for v in "abd"]),
        (0, "invoke", "poll", [POLL]),
        (0, "ok", "poll", [poll({X: [(2, "b")]})]),
        (2, "invoke", "poll", [POLL]),
        (2, "ok", "poll", [poll({X: [(1, "a"), (4, "d")]})]),
    )
    assert set(errors(history)) == {"int-poll-skip"}
    rebalanced = [*history[:-1], Op(5, "ok", 2, "poll", history[-1].value, 5, rebalance_log=({"keys": [X]},))]
    assert errors(rebalanced) == {}


def test_int_send_skip_sends_of_one_op_land_apart():
    history = h(
        (0, "invoke", "send", [send(X, "a"), send(X, "c")]),
        (0, "ok", "send", [send(X, (1, "a")), send(X, "c")]),
        (1, "invoke", "send", [send(X, "b")]),
        (1, "info", "send", [send(X, "b")]),
        (2, "invoke", "poll", [POLL]),
        (2, "ok", "poll", [poll({X: [(2, "b"), (3, "c")]})]),
    )
    errs = errors(history)
    assert set(errs) == {"int-send-skip", "lost-write", "unseen"}  # a, below b, never read
    assert errs["int-send-skip"] == [{"key": X, "values": ["a", "c"], "delta": 2, "op": 1, "skipped": ["b"]}]


def test_int_nonmonotonic_poll_back_or_repeated_within_one_op():
    history = h(
        (0, "invoke", "send", [send(X, v) for v in "abc"]),
        (0, "info", "send", [send(X, v) for v in "abc"]),
        (0, "invoke", "poll", [POLL]),
        (0, "ok", "poll", [poll({X: [(3, "c"), (1, "a")]})]),
        (0, "invoke", "poll", [POLL]),
        (0, "ok", "poll", [poll({X: [(2, "b"), (3, "c")]}), poll({X: [(3, "c")]})]),
    )
    errs = errors(history)
    assert set(errs) == {"int-nonmonotonic-poll"}
    assert errs["int-nonmonotonic-poll"] == [
        {"key": X, "values": ["c", "a"], "delta": -2, "op": 3},
        {"key": X, "values": ["c", "c"], "delta": 0, "op": 5},
    ]


def test_int_nonmonotonic_send_sends_of_one_op_land_in_the_wrong_order():
    history = h(
        (0, "invoke", "send", [send(X, "c"), send(X, "a")]),
        (0, "ok", "send", [send(X, (3, "c")), send(X, (1, "a"))]),
        (0, "invoke", "send", [send(Y, "d"), send(Y, "b")]),
        (0, "info", "send", [send(Y, "d"), send(Y, "b")]),
        (1, "invoke", "send", [send(Y, "c")]),
        (1, "info", "send", [send(Y, "c")]),
        (0, "invoke", "poll", [POLL]),
        (0, "ok", "poll", [poll({Y: [(2, "b"), (3, "c"), (4, "d")]})]),
    )
    errs = errors(history)
    assert set(errs) == {"int-nonmonotonic-send", "unseen"}
    assert errs["int-nonmonotonic-send"] == [
        {"key": X, "values": ["c", "a"], "delta": -1, "op": 1},
        {"key": Y, "values": ["d", "b"], "delta": -2, "op": 3},
    ]


# --- duplicates --------------------------------------------------------------------------------


def test_duplicate_a_value_at_two_offsets():
    history = h(
        (0, "invoke", "send", [send(X, "a")]),
        (0, "ok", "send", [send(X, (1, "a"))]),
        (1, "invoke", "send", [send(X, "b")]),
        (1, "info", "send", [send(X, "b")]),
        (2, "invoke", "poll", [POLL]),
        (2, "ok", "poll", [poll({X: [(2, "b"), (3, "a")]})]),
    )
    errs = errors(history)
    assert set(errs) == {"duplicate"}
    assert errs["duplicate"] == [{"key": X, "value": "a", "count": 2, "offsets": [1, 3]}]


def test_duplicates_and_inconsistent_offsets_name_every_value():
    specs = []
    for value in range(10):  # each value sent at offset 0 and polled at offset 1
        specs += [
            (0, "invoke", "send", [send(X, value)]),
            (0, "ok", "send", [send(X, (0, value))]),
            (1, "invoke", "poll", [POLL]),
            (1, "ok", "poll", [poll({X: [(1, value)]})]),
        ]
    errs = errors(h(*specs))
    assert set(errs) == {"duplicate", "inconsistent-offsets"}
    assert sorted(e["value"] for e in errs["duplicate"]) == list(range(10))
    assert errs["inconsistent-offsets"] == [
        {"key": X, "offset": 0, "index": 0, "values": list(range(10))},
        {"key": X, "offset": 1, "index": 1, "values": list(range(10))},
    ]


def test_duplicate_read_by_an_aborted_poll_but_not_the_failed_send():
    history = h(
        (0, "invoke", "send", [send(X, 0)]),
        (0, "ok", "send", [send(X, (1, 0))]),
        (0, "invoke", "send", [send(X, 1)]),
        (0, "fail", "send", [send(X, (2, 1))]),
        (1, "invoke", "poll", [POLL]),
        (1, "fail", "poll", [poll({X: [(11, 0), (12, 1)]})]),
    )
    errs = errors(history)
    assert set(errs) == {"duplicate", "unseen"}
    assert errs["duplicate"] == [{"key": X, "value": 0, "count": 2, "offsets": [1, 11]}]


# --- realtime lag, unseen, an empty history -----------------------------------------------------


def test_realtime_lag():
    history = h(
        (0, "invoke", "assign", [X]),
        (0, "ok", "assign", [X]),
        (0, "invoke", "poll", [POLL]),  # observes nothing: nothing is written yet
        (0, "ok", "poll", [poll({X: []})]),
        (0, "invoke", "send", [send(X, "a")]),
        (0, "ok", "send", [send(X, (0, "a"))]),
        (0, "invoke", "poll", [POLL]),  # a was acknowledged at 5: lag 1
        (0, "ok", "poll", [poll({X: []})]),
        (1, "invoke", "send", [send(X, "c"), send(X, "d")]),
        (1, "ok", "send", [send(X, (2, "c")), send(X, (3, "d"))]),
        (0, "invoke", "poll", [POLL]),  # still nothing read: lag 10 - 5
        (0, "ok", "poll", [POLL]),
        (0, "invoke", "poll", [POLL]),  # b at 1 stopped being the end at 9: lag 3
        (0, "ok", "poll", [poll({X: [(0, "a"), (1, "b")]})]),
        (0, "invoke", "assign", [X, Y]),
        (0, "ok", "assign", [X, Y]),
        (0, "invoke", "poll", [POLL]),  # x keeps its position: 16 - 9; y is empty: 0
        (0, "ok", "poll", [poll({})]),
        (0, "invoke", "assign", [Y]),
        (0, "ok", "assign", [Y]),
        (0, "invoke", "assign", [X]),
        (0, "ok", "assign", [X]),
        (0, "invoke", "poll", [POLL]),  # x's position is forgotten: back to 22 - 5
        (0, "ok", "poll", [poll({})]),
        (0, "invoke", "poll", [POLL, POLL]),  # caught up: 0
        (0, "ok", "poll", [poll({X: [(0, "a"), (1, "b")]}), poll({X: [(2, "c"), (3, "d")]})]),
        (1, "invoke", "send", [send(X, "b")]),
        (1, "info", "send", [send(X, "b")]),
    )
    result = analysis(history)
    assert [(lag["time"], lag["process"], lag["key"], lag["lag"]) for lag in result["realtime_lag"]] == [
        (2, 0, X, 0), (6, 0, X, 1), (10, 0, X, 5), (12, 0, X, 3),
        (16, 0, X, 7), (16, 0, Y, 0), (22, 0, X, 17), (24, 0, X, 0),
    ]  # fmt: skip
    assert result["worst_realtime_lag"] == {"time": 22, "process": 0, "key": X, "lag": 17}
    assert check(history)["worst_realtime_lag"] == {"process": 0, "key": X, "lag_s": 17e-9, "time_s": 22e-9}


def test_realtime_lag_forgets_positions_on_subscribe():
    # After subscribe the group decides which keys the process holds: nothing is tracked until a
    # poll returns a key.
    history = h(
        (0, "invoke", "assign", [X]),
        (0, "ok", "assign", [X]),
        (1, "invoke", "send", [send(X, "a")]),
        (1, "ok", "send", [send(X, (0, "a"))]),
        (0, "invoke", "subscribe", [X]),
        (0, "ok", "subscribe", [X]),
        (0, "invoke", "poll", [POLL]),
        (0, "ok", "poll", [poll({})]),
        (0, "invoke", "poll", [POLL]),
        (0, "ok", "poll", [poll({X: [(0, "a")]})]),
    )
    lags = [(lag["time"], lag["key"], lag["lag"]) for lag in analysis(history)["realtime_lag"]]
    assert lags == [(8, X, 0)]


def test_unseen_counts_acknowledged_sends_no_ok_op_has_read():
    history = h(
        (0, "invoke", "poll", [POLL]),
        (0, "ok", "poll", [poll({})]),
        (0, "invoke", "send", [send(X, "a"), send(X, "b")]),
        (0, "ok", "send", [send(X, (0, "a")), send(X, (1, "b"))]),
        (0, "invoke", "poll", [POLL]),
        (0, "ok", "poll", [poll({X: [(0, "a")]})]),
        (0, "invoke", "poll", [POLL]),
        (0, "ok", "poll", [poll({X: [(1, "b")]})]),
    )
    assert analysis(history)["unseen"] == [
        {"time": 1, "unseen": {}},
        {"time": 3, "unseen": {X: 2}},
        {"time": 5, "unseen": {X: 1}},
        {"time": 7, "unseen": {X: 0}, "messages": {X: []}},
    ]
    assert check(history[:6])["errors"]["unseen"] == {
        "count": 1,
        "errs": [{"key": X, "count": 1, "values": ["b"]}],
    }


def test_a_history_with_nothing_to_check_is_not_valid():
    result = check(h((0, "invoke", "assign", [X]), (0, "ok", "assign", [X])))
    assert result["valid"] is False
    assert result["error_types"] == ["empty-transaction-graph"]


# --- cycles ------------------------------------------------------------------------------------


def test_g0_two_transactions_order_their_writes_differently():
    history = h(
        (0, "invoke", "send", [send(X, "a"), send(Y, "a")]),
        (1, "invoke", "send", [send(X, "b"), send(Y, "b")]),
        (0, "ok", "send", [send(X, (0, "a")), send(Y, (1, "a"))]),
        (1, "ok", "send", [send(X, (1, "b")), send(Y, (0, "b"))]),
    )
    assert set(errors(history)) == {"unseen"}  # without ww edges there is no cycle to see
    errs = errors(history, ww_deps=True)
    assert set(errs) == {"G0", "unseen"}
    assert errs["G0"] == [{
        "cycle": [2, 3, 2],
        "steps": [
            {"type": "ww", "key": X, "value": "a", "next_value": "b", "a_mop_index": 0, "b_mop_index": 0},
            {"type": "ww", "key": Y, "value": "b", "next_value": "a", "a_mop_index": 1, "b_mop_index": 1},
        ],
    }]  # fmt: skip


def test_a_g0_in_a_component_makes_the_classes_it_implies_redundant_there():
    # x: a, b; y: b, c, a. wc began after wb completed, so wb -> wc is a realtime edge as well as
    # a ww one; the component's G0 implies its G0-realtime, which is not reported.
    history = h(
        (0, "invoke", "send", [send(X, "a"), send(Y, "a")]),
        (1, "invoke", "send", [send(X, "b"), send(Y, "b")]),
        (0, "ok", "send", [send(X, (0, "a")), send(Y, (2, "a"))]),
        (1, "ok", "send", [send(X, (1, "b")), send(Y, (0, "b"))]),
        (2, "invoke", "send", [send(Y, "c")]),
        (2, "ok", "send", [send(Y, (1, "c"))]),
    )
    errs = errors(history, ww_deps=True)
    assert set(errs) == {"G0", "unseen"}
    assert errs["G0"][0]["cycle"] == [2, 3, 5, 2]


def test_g1c_each_transaction_reads_the_others_write():
    history = h(
        (0, "invoke", "txn", [send(X, "a"), POLL]),
        (1, "invoke", "txn", [send(Y, "b"), POLL]),
        (0, "ok", "txn", [send(X, (0, "a")), poll({Y: [(0, "b")]})]),
        (1, "ok", "txn", [send(Y, (0, "b")), poll({X: [(0, "a")]})]),
    )
    errs = errors(history)
    assert set(errs) == {"G1c"}
    assert errs["G1c"] == [{
        "cycle": [2, 3, 2],
        "steps": [
            {"type": "wr", "key": X, "value": "a", "a_mop_index": 0, "b_mop_index": 1},
            {"type": "wr", "key": Y, "value": "b", "a_mop_index": 0, "b_mop_index": 1},
        ],
    }]  # fmt: skip


def test_g1c_with_a_write_write_edge():
    history = h(
        (0, "invoke", "txn", [send(X, "a"), send(Y, "c")]),
        (1, "invoke", "txn", [POLL, send(Y, "b")]),
        (0, "ok", "txn", [send(X, (0, "a")), send(Y, (2, "c"))]),
        (1, "ok", "txn", [poll({X: [(0, "a")]}), send(Y, (1, "b"))]),
    )
    errs = errors(history, ww_deps=True)
    assert set(errs) == {"G1c", "unseen"}
    assert errs["G1c"] == [{
        "cycle": [2, 3, 2],
        "steps": [
            {"type": "wr", "key": X, "value": "a", "a_mop_index": 0, "b_mop_index": 0},
            {"type": "ww", "key": Y, "value": "b", "next_value": "c", "a_mop_index": 1, "b_mop_index": 1},
        ],
    }]  # fmt: skip


# A poll reads b, sent by an op invoked only after the poll completed: a read from the future.
READ_BEFORE_WRITE = [
    ("reader", "invoke", "poll", [POLL]),
    ("reader", "ok", "poll", [poll({X: [(0, "b")]})]),
    ("writer", "invoke", "send", [send(X, "b")]),
    ("writer", "ok", "send", [send(X, (0, "b"))]),
]


@pytest.mark.parametrize(
    ("reader", "writer", "name", "order"),
    [(0, 0, "G1c-process", "process"), (0, 1, "G1c-realtime", "realtime")],
)
def test_g1c_closed_by_a_process_or_by_real_time(reader, writer, name, order):
    processes = {"reader": reader, "writer": writer}
    history = h(*[(processes[p], type, f, value) for p, type, f, value in READ_BEFORE_WRITE])
    errs = errors(history)
    assert set(errs) == {name}
    [cycle] = errs[name]
    assert cycle["cycle"] == [1, 3, 1]
    assert [step["type"] for step in cycle["steps"]] == [order, "wr"]


def test_g0_closed_by_a_process():
    # Process 0 sends a (acknowledged at 1), then b, which lands at 0: b before a in the log.
    history = h(
        (0, "invoke", "send", [send(X, "a")]),
        (0, "ok", "send", [send(X, (1, "a"))]),
        (0, "invoke", "send", [send(X, "b")]),
        (0, "ok", "send", [send(X, (0, "b"))]),
    )
    errs = errors(history, ww_deps=True)
    assert set(errs) == {"G0-process", "nonmonotonic-send", "unseen"}
    assert [step["type"] for step in errs["G0-process"][0]["steps"]] == ["process", "ww"]


# --- the result map ----------------------------------------------------------------------------


def test_a_clean_history_is_valid_with_no_errors():
    history = h(
        (0, "invoke", "assign", [X, Y]),
        (0, "ok", "assign", [X, Y]),
        (1, "invoke", "txn", [send(X, "a"), send(Y, "b")]),
        (1, "ok", "txn", [send(X, (0, "a")), send(Y, (0, "b"))]),
        (1, "invoke", "send", [send(X, "c")]),
        (1, "info", "send", [send(X, "c")]),
        (0, "invoke", "poll", [POLL]),
        (0, "ok", "poll", [poll({X: [(0, "a"), (1, "c")], Y: [(0, "b")]})]),
        (2, "invoke", "send", [send(Y, "d")]),
        (2, "fail", "send", [send(Y, "d")]),
        ("nemesis", "info", "kill", {"node": 1}),
    )
    result = check(history, txn=True)
    assert (result["valid"], result["error_types"], result["bad_error_types"]) == (True, [], [])
    assert result["stats"] == {"ops": 5, "ok": 3, "info": 1, "fail": 1, "nemesis": 1}
    # Nobody lags: the first of the equal lags is the txn's own (it sent), at its invocation.
    assert result["worst_realtime_lag"] == {"process": 1, "key": X, "lag_s": 0.0, "time_s": 2e-9}
    assert result["info_txn_causes"] == [None]


@pytest.mark.parametrize(
    ("options", "allowed"),
    [
        ({}, {"int-send-skip", "G0", "G0-process", "G0-realtime"}),
        (
            {"subscribe": True},
            {"int-send-skip", "G0", "G0-process", "G0-realtime", "poll-skip", "nonmonotonic-poll"},
        ),
        (
            {"ww_deps": True},
            {"int-send-skip", "G0", "G0-process", "G0-realtime", "G1c", "G1c-process", "G1c-realtime"},
        ),
    ],
)
def test_allowed_error_types(options, allowed):
    assert allowed_error_types(**options) == allowed


def test_valid_is_false_only_for_a_class_outside_the_allowed_set():
    history = h(*SEND_ABCD, *POLL_123, *POLL_234)  # a nonmonotonic poll
    assert check(history)["bad_error_types"] == ["nonmonotonic-poll"]
    assert check(history)["valid"] is False
    assert check(history, subscribe=True)["valid"] is True


def test_condense_error_keeps_the_worst_examples_in_jepsens_order():
    skips = [{"delta": d} for d in (5, 2, 9, 3, 7, 4, 8, 6, 10, 11)]
    assert [e["delta"] for e in condense_error("poll-skip", skips)["errs"]] == [4, 5, 6, 7, 8, 9, 10, 11]
    backs = [{"delta": d} for d in (0, -5, -1, -9, -3, -7, -2, -4, -6, -8)]
    assert [e["delta"] for e in condense_error("nonmonotonic-poll", backs)["errs"]] == [
        -9,
        -8,
        -7,
        -6,
        -5,
        -4,
        -3,
        -2,
    ]
    assert condense_error("nonmonotonic-poll", backs)["count"] == 10
    cycles = [{"steps": [None] * n} for n in (4, 2, 3)]
    assert [len(e["steps"]) for e in condense_error("G1c", cycles)["errs"]] == [2, 3, 4]
    dups = [{"count": n} for n in range(40, 0, -1)]
    assert [e["count"] for e in condense_error("duplicate", dups)["errs"]] == list(range(1, 33))
    lost = [{"value": v} for v in range(20)]
    assert condense_error("lost-write", lost) == {"count": 20, "errs": lost}
