"""The leaders' verification sender (KIP-890 part 1, Kafka 3.6's ``AddPartitionsToTxnManager``), without
a network: what it queues per coordinator, how it answers two questions for one transactional id,
and how it reads the coordinator's answer. Its requests over a real cluster:
tests/jepsen/test_hanging_transaction.py."""

from __future__ import annotations

import pytest

from kafka_lite.clients.network_client import ClientResponse
from kafka_lite.common.errors import Errors
from kafka_lite.common.time import MockTime
from kafka_lite.server.add_partitions_to_txn_manager import VERIFY_VERSION, AddPartitionsToTxnManager

pytestmark = pytest.mark.unit

COORDINATOR = 2


class _NoNetwork:
    """What the manager's queueing side touches of its network client."""

    def wakeup(self) -> None:
        pass


def manager() -> AddPartitionsToTxnManager:
    return AddPartitionsToTxnManager(1, metadata_cache=None, network_client=_NoNetwork(), time=MockTime())


def ask(m: AddPartitionsToTxnManager, txn: str, epoch: int, *partitions, answers: list) -> None:
    m.add_txn_data(
        COORDINATOR, txn, 7, epoch, list(partitions), lambda errors: answers.append((txn, epoch, errors))
    )


def test_one_request_per_coordinator_batches_the_transactions_verify_only():
    m, answers = manager(), []
    ask(m, "a", 0, ("t", 0), ("t", 1), answers=answers)
    ask(m, "b", 3, ("u", 0), answers=answers)
    ((node, transactions),) = m._generate_requests()
    assert node == COORDINATOR and answers == []
    assert [t.to_struct() for t in transactions] == [
        {"transactional_id": "a", "producer_id": 7, "producer_epoch": 0, "verify_only": True,
         "topics": [{"topic": "t", "partitions": [0, 1]}]},
        {"transactional_id": "b", "producer_id": 7, "producer_epoch": 3, "verify_only": True,
         "topics": [{"topic": "u", "partitions": [0]}]},
    ]  # fmt: skip
    assert m._generate_requests() == [], "nothing more queued"


def test_a_second_question_for_one_id_replaces_the_first_by_kafkas_epoch_rule():
    m, answers = manager(), []
    ask(m, "a", 1, ("t", 0), answers=answers)
    ask(m, "a", 1, ("t", 0), answers=answers)  # a retry: the queued one is answered retriably
    assert answers == [("a", 1, {("t", 0): Errors.NETWORK_EXCEPTION})]
    ask(m, "a", 2, ("t", 0), answers=answers)  # a newer epoch fences the queued one
    assert answers[-1] == ("a", 1, {("t", 0): Errors.INVALID_PRODUCER_EPOCH})
    ask(m, "a", 0, ("t", 0), answers=answers)  # an older epoch is fenced itself, and not queued
    assert answers[-1] == ("a", 0, {("t", 0): Errors.INVALID_PRODUCER_EPOCH})
    ((_, transactions),) = m._generate_requests()
    assert [(t.transactional_id, t.producer_epoch) for t in transactions] == [("a", 2)]


def test_the_coordinators_answer_goes_to_each_question_as_its_failed_partitions():
    m, answers = manager(), []
    ask(m, "a", 0, ("t", 0), ("t", 1), answers=answers)
    ask(m, "b", 0, ("u", 0), answers=answers)
    ask(m, "c", 0, ("v", 0), answers=answers)
    ((node, transactions),) = m._generate_requests()
    handler = m._handler(node, transactions)
    request = type("Sent", (), {"created_ms": 0})()
    body = {"throttle_time_ms": 0, "error_code": 0, "results_by_transaction": [
        {"transactional_id": "a", "topic_results": [{"topic": "t", "partition_errors": [
            {"partition": 0, "error_code": 0}, {"partition": 1, "error_code": Errors.INVALID_TXN_STATE.code}]}]},
        {"transactional_id": "b", "topic_results": [{"topic": "u", "partition_errors": [
            {"partition": 0, "error_code": 0}]}]},
    ]}  # fmt: skip
    handler(ClientResponse(request, 5, body))
    assert sorted(answers) == [
        ("a", 0, {("t", 1): Errors.INVALID_TXN_STATE}),
        ("b", 0, {}),  # verified: nothing failed
        ("c", 0, {("v", 0): Errors.NETWORK_EXCEPTION}),  # left out of the answer: its producer retries
    ]


def test_a_refused_or_lost_request_answers_every_question_alike():
    for response, error in (
        ({"throttle_time_ms": 0, "error_code": Errors.CLUSTER_AUTHORIZATION_FAILED.code,
          "results_by_transaction": []}, Errors.INVALID_TXN_STATE),  # never shown to a producer as is
        (None, Errors.NETWORK_EXCEPTION),
    ):  # fmt: skip
        m, answers = manager(), []
        ask(m, "a", 0, ("t", 0), answers=answers)
        ((node, transactions),) = m._generate_requests()
        request = type("Sent", (), {"created_ms": 0})()
        m._handler(node, transactions)(ClientResponse(request, 5, response, disconnected=response is None))
        assert answers == [("a", 0, {("t", 0): error})]
    assert VERIFY_VERSION == 4
