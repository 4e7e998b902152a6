"""The ``quorum-state`` file: a voter's epoch, vote and leader, one line of JSON.

Mirrors: org.apache.kafka.raft.FileBasedStateStore
         (raft/src/main/java/org/apache/kafka/raft/FileBasedStateStore.java, Kafka 3.3.0)
         and the JSON form of QuorumStateData (raft/src/main/resources/common/message/QuorumStateData.json)
Book:    beyond the book: chapter 12 (KRaft)
Differs: Kafka raises ``UncheckedIOException``; we raise ``OSError``, Python's ``IOException``.

The file holds QuorumStateData as Kafka's generated JSON converter writes it (camelCase field
names), plus a ``data_version`` field naming the schema version, so a reader knows how to read the
rest before it reads it::

    {"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,
     "currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}

A write must never leave half a file: a voter that crashed mid-write and came back with no vote
could vote twice in one epoch. So, as Kafka does, the new state goes to ``quorum-state.tmp``, is
fsynced, and is renamed over the old file (``os.replace``, a single atomic rename on POSIX), and
the directory is fsynced so the rename itself survives a power cut. A crash leaves the old file or the
new one, never a mix.

``clusterId`` and ``appliedOffset`` are written as Kafka 3.3 writes them (empty, 0): nothing reads
them yet.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.quorum_state_store import NOT_VOTED, UNKNOWN_LEADER_ID, QuorumStateStore

log = logging.getLogger(__name__)

DATA_VERSION = "data_version"
# QuorumStateData's only version (validVersions "0"); what this store writes and can read.
HIGHEST_SUPPORTED_VERSION = 0
# Every field of QuorumStateData v0 is mandatory in the JSON, as Kafka's generated converter has it.
_FIELDS = ("clusterId", "leaderId", "leaderEpoch", "votedId", "appliedOffset", "currentVoters")


class FileBasedStateStore(QuorumStateStore):
    def __init__(self, state_file: str | os.PathLike[str]) -> None:
        self.state_file = Path(state_file)

    def _temp_file(self) -> Path:
        return self.state_file.with_name(self.state_file.name + ".tmp")

    def read_election_state(self) -> ElectionState | None:
        if not self.state_file.exists():
            return None
        data = self._read_state_from_file(self.state_file)
        leader_id = data["leaderId"]
        voted_id = data["votedId"]
        return ElectionState(
            data["leaderEpoch"],
            None if leader_id == UNKNOWN_LEADER_ID else leader_id,
            None if voted_id == NOT_VOTED else voted_id,
            {voter["voterId"] for voter in data["currentVoters"] or ()},
        )

    def _read_state_from_file(self, path: Path) -> dict:
        try:
            with open(path, encoding="utf-8") as reader:
                line = reader.readline()
            if not line:
                raise OSError("File ended prematurely.")
            node = json.loads(line)
            if not isinstance(node, dict):
                raise OSError(f"Deserialized node {line.strip()} is not an object node")
            if DATA_VERSION not in node:
                raise OSError(f"Deserialized node {line.strip()} does not have {DATA_VERSION} field")
            return _read_quorum_state_data(node, node[DATA_VERSION])
        except (OSError, ValueError) as e:
            # A file that cannot be read is as good as corrupt; QuorumState.initialize clears it
            # and starts from epoch 0, as Kafka's does.
            raise OSError(f"Error while reading the Quorum status from the file {path}: {e}") from e

    def write_election_state(self, latest: ElectionState) -> None:
        data = {
            "clusterId": "",
            "leaderId": latest.leader_id() if latest.has_leader() else UNKNOWN_LEADER_ID,
            "leaderEpoch": latest.epoch,
            "votedId": latest.voted_id() if latest.has_voted() else NOT_VOTED,
            "appliedOffset": 0,
            "currentVoters": [{"voterId": voter_id} for voter_id in sorted(latest.voters())],
            DATA_VERSION: HIGHEST_SUPPORTED_VERSION,
        }
        self._write_election_state_to_file(data)

    def _write_election_state_to_file(self, data: dict) -> None:
        temp = self._temp_file()
        _delete_file_if_exists(temp)
        log.debug("Writing tmp quorum state %s", temp)
        try:
            with open(temp, "w", encoding="utf-8") as writer:
                writer.write(json.dumps(data, separators=(",", ":")))
                writer.flush()
                os.fsync(writer.fileno())
            # Kafka's Utils.atomicMoveWithFallback: the rename, then the directory's fsync.
            os.replace(temp, self.state_file)
            _fsync_directory(self.state_file.parent)
        except OSError as e:
            raise OSError(
                f"Error while writing the Quorum status from the file {self.state_file}: {e}"
            ) from e
        finally:
            # Gone after a success (renamed), and removed after a failure, as Kafka's finally does.
            _delete_file_if_exists(temp)

    def clear(self) -> None:
        _delete_file_if_exists(self.state_file)
        _delete_file_if_exists(self._temp_file())

    def __repr__(self) -> str:
        return f"Quorum state filepath: {self.state_file.absolute()}"


def _read_quorum_state_data(node: dict, version: object) -> dict:
    """Check ``node`` as Kafka's QuorumStateDataJsonConverter.read does, for ``version``."""
    if not isinstance(version, int) or not 0 <= version <= HIGHEST_SUPPORTED_VERSION:
        raise OSError(f"QuorumStateData: unsupported {DATA_VERSION} {version!r}")
    for field in _FIELDS:
        if field not in node:
            raise OSError(
                f"QuorumStateData: unable to locate field '{field}', which is mandatory in version {version}"
            )
    for field in ("leaderId", "leaderEpoch", "votedId", "appliedOffset"):
        if not isinstance(node[field], int) or isinstance(node[field], bool):
            raise OSError(f"QuorumStateData expected an integer {field}, but got {node[field]!r}")
    voters = node["currentVoters"]
    if voters is not None and (
        not isinstance(voters, list)
        or not all(isinstance(v, dict) and isinstance(v.get("voterId"), int) for v in voters)
    ):
        raise OSError(
            f'QuorumStateData expected currentVoters to be a list of {{"voterId": int}}, but got {voters!r}'
        )
    return node


def _fsync_directory(directory: Path) -> None:
    # Windows cannot open a directory for fsync; there, as in Kafka, the rename is left to the OS.
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _delete_file_if_exists(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as e:
        raise OSError(f"Error while deleting file {path.absolute()}: {e}") from e
