"""The transaction coordinator on the 3-broker cluster, spoken to with raw protocol requests as a
transactional producer would: FindCoordinator(type 1), InitProducerId and fencing, AddPartitionsToTxn
for a missing topic, a transaction committed end to end (markers in the log, read_committed sees it),
offsets committed in a transaction, the coordinator's partition moved to another broker, and a
transaction left open aborted after its timeout."""

from __future__ import annotations

import time
import uuid

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.fetch_request import READ_COMMITTED, READ_UNCOMMITTED
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.utils import abs_int, java_string_hash
from kafka_lite.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC_NAME
from tests.support.waiting import wait_until
from tests.support.wire import WireClient, fetch_body, fetched, partition_response, produce_body

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]

T0 = int(time.time() * 1000) - 60_000
TXN_PARTITIONS = 4  # the test profile's transaction.state.log.num.partitions
RETRIABLE = (Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR,
             Errors.CONCURRENT_TRANSACTIONS)  # fmt: skip


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def topic(cluster):
    t = name("txn-coord")
    cluster.create_topic(t, partitions=2, replication_factor=3)
    return t


class Txn:
    """A transactional producer's requests, made by hand, to whichever broker coordinates the id."""

    def __init__(self, cluster, transactional_id: str, timeout_ms: int = 30_000) -> None:
        self.cluster = cluster
        self.transactional_id = transactional_id
        self.timeout_ms = timeout_ms
        self.producer_id, self.epoch = -1, -1

    def coordinator(self) -> WireClient:
        return WireClient(self.coordinator_node()["port"])

    def coordinator_node(self) -> dict:
        def found():
            any_broker = WireClient(next(s for s in self.cluster.servers if s.running).port)
            r = any_broker.call(
                ApiKeys.FIND_COORDINATOR, 1, {"coordinator_key": self.transactional_id, "coordinator_type": 1}
            )
            return r if r["error_code"] == 0 else None

        return wait_until(found, what=f"a transaction coordinator for {self.transactional_id}")["coordinator"]

    def call(self, api: ApiKeys, body: dict, error_of=lambda r: r["error_code"]) -> tuple[Errors, dict]:
        """Send to the coordinator, retrying the errors a producer retries; the final error and answer."""

        def attempt():
            r = self.coordinator().call(api, 0, body)
            error = Errors.for_code(error_of(r))
            return None if error in RETRIABLE else (error, r)

        return wait_until(attempt, what=f"{api.name} for {self.transactional_id} past retriable errors")

    def init(self) -> Errors:
        body = {"transactional_id": self.transactional_id, "transaction_timeout_ms": self.timeout_ms}
        error, r = self.call(ApiKeys.INIT_PRODUCER_ID, body)
        if error is Errors.NONE:
            self.producer_id, self.epoch = r["producer_id"], r["producer_epoch"]
        return error

    def head(self, epoch: int | None = None) -> dict:
        epoch = self.epoch if epoch is None else epoch
        return {
            "transactional_id": self.transactional_id,
            "producer_id": self.producer_id,
            "producer_epoch": epoch,
        }

    def add_partitions(self, partitions: dict[str, list[int]]) -> dict:
        body = {**self.head(), "topics": [{"topic": t, "partitions": ps} for t, ps in partitions.items()]}
        _, r = self.call(
            ApiKeys.ADD_PARTITIONS_TO_TXN, body, lambda r: r["errors"][0]["partition_errors"][0]["error_code"]
        )
        return {(t["topic"], p["partition"]): Errors.for_code(p["error_code"])
                for t in r["errors"] for p in t["partition_errors"]}  # fmt: skip

    def end(self, commit: bool, epoch: int | None = None) -> Errors:
        return self.call(ApiKeys.END_TXN, {**self.head(epoch), "transaction_result": commit})[0]

    def produce(self, topic: str, partition: int, values: list[bytes], seq: int = 0) -> None:
        records = MemoryRecords.with_records(
            [(T0 + i, None, v) for i, v in enumerate(values)],
            producer_id=self.producer_id, producer_epoch=self.epoch, base_sequence=seq, is_transactional=True,
        )  # fmt: skip
        leader = WireClient(self.cluster.server(self.cluster.leader_of(topic, partition)).port)
        body = produce_body(topic, partition, bytes(records.buffer()), acks=-1)
        body["transactional_id"] = self.transactional_id
        r = partition_response(leader.call(ApiKeys.PRODUCE, 3, body))
        assert r["error_code"] == 0, Errors.for_code(r["error_code"])


def read(cluster, topic: str, partition: int, isolation_level: int) -> tuple[list[bytes], int, int]:
    """(the data records' values, the control batches, the last stable offset) from the leader."""
    body = fetch_body(topic)
    body["isolation_level"] = isolation_level
    body["topics"][0]["partitions"][0]["partition"] = partition
    leader = WireClient(cluster.server(cluster.leader_of(topic, partition)).port)
    header, data = fetched(leader.call(ApiKeys.FETCH, 5, body))
    values, controls = [], 0
    aborted = [(a["producer_id"], a["first_offset"]) for a in header["aborted_transactions"] or ()]
    for batch in MemoryRecords(data).batches():
        if batch.is_control_batch:
            controls += 1
        elif not any(pid == batch.producer_id and batch.base_offset >= first for pid, first in aborted):
            values += [bytes(r.value) for r in batch]
    return values, controls, header["last_stable_offset"]


def test_find_coordinator_names_the_leader_of_the_ids_transaction_state_partition(cluster):
    txn = Txn(cluster, name("find"))
    node = txn.coordinator_node()
    partition = abs_int(java_string_hash(txn.transactional_id)) % TXN_PARTITIONS
    leader = cluster.leader_of(TRANSACTION_STATE_TOPIC_NAME, partition)
    assert (node["node_id"], node["port"]) == (leader, cluster.server(leader).port)
    # The broker that answered FindCoordinator knew the topic; the leader hears of it in its own
    # UpdateMetadata, which may come a moment later when the request created the topic.
    meta = wait_until(
        lambda: cluster.server(leader).metadata_cache.partitions(TRANSACTION_STATE_TOPIC_NAME) or None,
        what=f"broker {leader}'s metadata of {TRANSACTION_STATE_TOPIC_NAME}",
    )
    assert len(meta) == TXN_PARTITIONS and all(len(p.replicas) == 3 for p in meta.values())


def test_init_twice_fences_the_first_epoch(cluster, topic):
    first = Txn(cluster, name("fence"))
    assert first.init() is Errors.NONE and first.epoch == 0
    second = Txn(cluster, first.transactional_id)
    assert second.init() is Errors.NONE
    assert (second.producer_id, second.epoch) == (first.producer_id, 1)
    assert first.end(commit=True) is Errors.INVALID_PRODUCER_EPOCH
    assert first.add_partitions({topic: [0]}) == {(topic, 0): Errors.INVALID_PRODUCER_EPOCH}
    # the state is unchanged: still Empty, so the new epoch has nothing to end
    assert second.end(commit=True) is Errors.INVALID_TXN_STATE
    # a timeout above transaction.max.timeout.ms is refused
    assert Txn(cluster, name("long"), timeout_ms=60_001).init() is Errors.INVALID_TRANSACTION_TIMEOUT


def test_add_partitions_for_a_missing_topic_fails_the_whole_request(cluster, topic):
    txn = Txn(cluster, name("missing"))
    assert txn.init() is Errors.NONE
    missing = name("no-such-topic")
    assert txn.add_partitions({topic: [0, 1], missing: [0]}) == {
        (topic, 0): Errors.OPERATION_NOT_ATTEMPTED,
        (topic, 1): Errors.OPERATION_NOT_ATTEMPTED,
        (missing, 0): Errors.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert txn.end(commit=True) is Errors.INVALID_TXN_STATE  # nothing was added: still Empty
    assert txn.add_partitions({topic: [0, 1]}) == {(topic, 0): Errors.NONE, (topic, 1): Errors.NONE}


def test_a_transaction_committed_end_to_end_then_one_aborted(cluster, topic):
    txn = Txn(cluster, name("e2e"))
    assert txn.init() is Errors.NONE
    assert set(txn.add_partitions({topic: [0, 1]}).values()) == {Errors.NONE}
    txn.produce(topic, 0, [b"a0", b"a1"])
    txn.produce(topic, 1, [b"b0"])
    assert read(cluster, topic, 0, READ_COMMITTED)[0] == []  # open: read_committed sees nothing yet
    assert txn.end(commit=True) is Errors.NONE
    for partition, values in ((0, [b"a0", b"a1"]), (1, [b"b0"])):
        wait_until(lambda p=partition, v=values: read(cluster, topic, p, READ_COMMITTED)[:2] == (v, 1),
                   what=f"the commit marker on {topic}-{partition}")  # fmt: skip
    # the next transaction of the same producer, aborted: its records never reach read_committed
    assert set(txn.add_partitions({topic: [0]}).values()) == {Errors.NONE}
    txn.produce(topic, 0, [b"x"], seq=2)
    assert txn.end(commit=False) is Errors.NONE
    wait_until(lambda: read(cluster, topic, 0, READ_UNCOMMITTED)[1] == 2, what="the abort marker")
    assert read(cluster, topic, 0, READ_COMMITTED)[0] == [b"a0", b"a1"]
    assert read(cluster, topic, 0, READ_UNCOMMITTED)[0] == [b"a0", b"a1", b"x"]
    assert txn.end(commit=False) is Errors.NONE  # a retried EndTxn of a completed abort


def group_coordinator(cluster, group: str) -> WireClient | None:
    found = WireClient(cluster.servers[0].port).call(
        ApiKeys.FIND_COORDINATOR, 1, {"coordinator_key": group, "coordinator_type": 0}
    )
    return None if found["error_code"] else WireClient(found["coordinator"]["port"])


def offset_of(cluster, group: str, topic: str) -> int:
    def fetch():
        coordinator = group_coordinator(cluster, group)
        if coordinator is None:
            return None
        r = coordinator.call(
            ApiKeys.OFFSET_FETCH, 3, {"group_id": group, "topics": [{"topic": topic, "partitions": [0]}]}
        )
        return None if r["error_code"] else r["responses"][0]["partition_responses"][0]

    return wait_until(fetch, what=f"the offsets of {group}")["offset"]


def txn_offset_commit(cluster, txn: Txn, group: str, topic: str, offset: int, producer_id=None) -> Errors:
    def commit():
        coordinator = group_coordinator(cluster, group)
        if coordinator is None:
            return None
        body = {
            "transactional_id": txn.transactional_id, "consumer_group_id": group,
            "producer_id": txn.producer_id if producer_id is None else producer_id, "producer_epoch": txn.epoch,
            "topics": [{"topic": topic, "partitions": [{"partition": 0, "offset": offset, "metadata": ""}]}],
        }  # fmt: skip
        r = coordinator.call(ApiKeys.TXN_OFFSET_COMMIT, 0, body)
        error = Errors.for_code(r["topics"][0]["partitions"][0]["error_code"])
        return None if error in RETRIABLE else error

    return wait_until(commit, what="a TxnOffsetCommit past retriable errors")


def test_offsets_committed_in_a_transaction_are_the_groups_only_once_it_commits(cluster, topic):
    group = name("txn-group")
    txn = Txn(cluster, name("offsets"))
    assert txn.init() is Errors.NONE
    head = {**txn.head(), "consumer_group_id": group}
    assert txn.call(ApiKeys.ADD_OFFSETS_TO_TXN, head)[0] is Errors.NONE
    # an aborted transaction's offsets never become the group's
    assert txn_offset_commit(cluster, txn, group, topic, 5) is Errors.NONE
    assert txn.end(commit=False) is Errors.NONE
    assert offset_of(cluster, group, topic) == -1
    assert txn.call(ApiKeys.ADD_OFFSETS_TO_TXN, head)[0] is Errors.NONE
    assert txn_offset_commit(cluster, txn, group, topic, 7) is Errors.NONE
    assert offset_of(cluster, group, topic) == -1  # pending until the commit
    assert txn.end(commit=True) is Errors.NONE
    wait_until(lambda: offset_of(cluster, group, topic) == 7, what="the committed transaction's offset")
    # a request without a producer is refused, and stores nothing
    assert (
        txn_offset_commit(cluster, txn, group, topic, 9, producer_id=-1) is Errors.INVALID_PRODUCER_ID_MAPPING
    )
    assert offset_of(cluster, group, topic) == 7


def test_the_coordinator_moves_and_the_new_leader_loads_the_open_transaction(cluster, topic):
    txn = Txn(cluster, name("move"))
    assert txn.init() is Errors.NONE
    assert set(txn.add_partitions({topic: [0]}).values()) == {Errors.NONE}
    txn.produce(topic, 0, [b"kept"])
    partition = abs_int(java_string_hash(txn.transactional_id)) % TXN_PARTITIONS
    old = cluster.leader_of(TRANSACTION_STATE_TOPIC_NAME, partition)
    new = cluster.move_leader(TRANSACTION_STATE_TOPIC_NAME, partition)
    assert new != old
    assert txn.coordinator_node()["node_id"] == new
    # the new coordinator knows the producer, its epoch and the open transaction's partitions
    assert txn.end(commit=True) is Errors.NONE
    wait_until(
        lambda: read(cluster, topic, 0, READ_COMMITTED)[0] == [b"kept"],
        what="the commit via the new coordinator",
    )
    assert Txn(cluster, txn.transactional_id).init() is Errors.NONE  # and bumps the same producer's epoch
    old_api = cluster.server(old).apis.txn_coordinator
    assert old_api.txn_manager.get_transaction_state(txn.transactional_id)[0] is Errors.NOT_COORDINATOR


def test_a_transaction_left_open_is_aborted_after_its_timeout(cluster, topic):
    txn = Txn(cluster, name("abandoned"), timeout_ms=1000)
    assert txn.init() is Errors.NONE
    assert set(txn.add_partitions({topic: [1]}).values()) == {Errors.NONE}
    txn.produce(topic, 1, [b"never"])
    # the sweep (every 500 ms in the test profile) aborts it once its 1 s timeout passed
    wait_until(lambda: read(cluster, topic, 1, READ_UNCOMMITTED)[1] == 1, what="the timeout's abort marker")
    assert read(cluster, topic, 1, READ_COMMITTED)[0] == []
    assert txn.end(commit=True) is Errors.INVALID_TXN_STATE  # too late: the transaction was aborted
