"""Which topics a client may not write: the brokers' own (``__consumer_offsets`` and
``__transaction_state``, Kafka 0.11's ``Topic.isInternal``), not every name that starts with ``__``.
A user may create ``__x``; it is an ordinary topic, written and trimmed as any other."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.testing.in_process_replicas import replicated_partition

pytestmark = pytest.mark.unit
USER_TOPIC = ("__x", 0)


def _append(manager, tp) -> Errors:
    answers: list = []
    records = MemoryRecords.with_records([(1000, None, b"v")])
    manager.append_records(1000, 1, False, {tp: records}, answers.append)
    [answer] = answers
    return answer[tp].error


def test_a_user_topic_named_with_two_underscores_is_written_and_trimmed_as_any_other(tmp_path):
    with replicated_partition(tmp_path, MockTime(), USER_TOPIC) as (leader, *_):
        assert _append(leader, USER_TOPIC) is Errors.NONE
        assert leader.get_partition(USER_TOPIC).log.log_end_offset == 1
        answers: list = []
        leader.delete_records(1000, {USER_TOPIC: 0}, answers.append)
        # accepted: it waits for the followers' log starts, where a refusal is answered at once
        assert answers == [] and leader.delayed_delete_records_purgatory.delayed() == 1


@pytest.mark.parametrize("topic", ["__consumer_offsets", "__transaction_state"])
def test_a_client_may_not_write_or_trim_the_brokers_own_topics(tmp_path, topic):
    with replicated_partition(tmp_path, MockTime(), USER_TOPIC) as (leader, *_):
        assert _append(leader, (topic, 0)) is Errors.INVALID_TOPIC_EXCEPTION
        answers: list = []
        leader.delete_records(1000, {(topic, 0): 0}, answers.append)
        assert answers[0][(topic, 0)].error is Errors.INVALID_TOPIC_EXCEPTION
