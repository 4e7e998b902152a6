"""Kafka's error codes, and one typed exception per code.

Mirrors: org.apache.kafka.common.protocol.Errors and org.apache.kafka.common.errors.*
         (clients/src/main/java/org/apache/kafka/common/, Kafka 0.11.0)
Book:    the codes appear wherever a response carries ``error_code`` (chapters 2, 4-7)
Differs: Kafka writes ~55 exception classes by hand; here the table ``ERROR_TABLE`` is the single
         source and the classes are generated from it, so a code, its name, its exception and its
         retriability cannot disagree. Names are Kafka 0.11-2.5's (``NOT_COORDINATOR``; 2.6 renamed
         code 6 ``NOT_LEADER_OR_FOLLOWER``);
         where Kafka 0.10 used another name, ``OLD_NAMES`` records it for the docs. The later codes
         chapter 12's Raft answers with (Kafka 3.3.0's) are ``LATER_ERROR_TABLE``, read the same way.

How it is used: a response decoder turns an ``error_code`` into an exception with
``Errors.for_code(code).exception()``; a broker handler catches an ``ApiException`` and answers with
``Errors.for_exception(e).code``. ``RetriableException`` marks the errors a client may retry after
refreshing metadata or backing off (Kafka's ``RetriableException`` hierarchy).
"""

from __future__ import annotations

from dataclasses import dataclass


class KafkaException(Exception):
    """Base of every error kafka_lite raises on purpose (Kafka's ``KafkaException``)."""


class ApiException(KafkaException):
    """An error that has a protocol error code (Kafka's ``ApiException``)."""

    error: Errors  # set on each generated subclass

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or self.error.description)


class RetriableException(ApiException):
    """A transient error: the same request may succeed if retried (Kafka's ``RetriableException``)."""


class InvalidMetadataException(RetriableException):
    """The client's view of the cluster is stale: refresh metadata, then retry."""


class SerializationException(KafkaException):
    """A key or value could not be turned into bytes, or back (Kafka's ``SerializationException``)."""


class IllegalStateException(KafkaException, RuntimeError):
    """Java's ``java.lang.IllegalStateException``, as Kafka's classes throw it: a call the object's
    state does not allow (a group transition its table refuses, mixing a consumer's subscription
    types). A bug in the caller, not a client's error."""


class IllegalArgumentException(KafkaException, ValueError):
    """Java's ``java.lang.IllegalArgumentException``: an argument the method cannot serve."""


class WakeupException(KafkaException):
    """A blocking call was interrupted by ``wakeup()`` from another thread (Kafka's
    ``WakeupException``): how ``KafkaConsumer.wakeup`` breaks a long ``poll``. Not an
    ``ApiException``: no broker sends it, so it has no error code."""


class DisconnectException(RetriableException):
    """The connection to a node closed before the request was answered (Kafka's
    ``DisconnectException``): retriable, once the client has reconnected or found another node.
    It has no error code of its own (a broker never sends it); a response with one is answered
    as UNKNOWN, as Kafka's ``Errors.forException`` does."""

    def __init__(self, message: str | None = None) -> None:
        KafkaException.__init__(self, message or "The connection to the node was closed.")


class ConfigException(KafkaException):
    """A configuration value is missing or invalid (Kafka's ``ConfigException``).

    The message names the key, the value and what is allowed, e.g.
    ``Invalid value -1 for configuration linger.ms: Value must be at least 0``.
    """

    def __init__(self, name: str, value: object = None, message: str | None = None) -> None:
        self.name = name
        self.value = value
        if message is None:
            text = name  # Kafka's one-argument form: the whole message
        else:
            text = f"Invalid value {value!r} for configuration {name}: {message}"
        super().__init__(text)


# (code, NAME, ExceptionClass, base, description). The description is ours; the facts (code, name,
# class, retriability) are Kafka 0.11.0's, except that DUPLICATE_SEQUENCE_NUMBER (46) is not retriable,
# as from Kafka 1.0, whose idempotent producer kafka_lite's follows (0.11's was retriable). Base "R" = RetriableException, "M" = InvalidMetadataException,
# "A" = ApiException.
ERROR_TABLE: tuple[tuple[int, str, str, str, str], ...] = (
    (
        -1,
        "UNKNOWN",
        "UnknownServerException",
        "A",
        "The broker hit an unexpected error while handling the request.",
    ),
    (
        1,
        "OFFSET_OUT_OF_RANGE",
        "OffsetOutOfRangeException",
        "A",
        "The offset is outside the range the partition's log holds.",
    ),
    (
        2,
        "CORRUPT_MESSAGE",
        "CorruptRecordException",
        "R",
        "A record or batch failed its CRC, has an impossible size, or is otherwise malformed.",
    ),
    (
        3,
        "UNKNOWN_TOPIC_OR_PARTITION",
        "UnknownTopicOrPartitionException",
        "M",
        "This broker does not host the topic-partition.",
    ),
    (4, "INVALID_FETCH_SIZE", "InvalidFetchSizeException", "A", "The fetch size is not valid."),
    (
        5,
        "LEADER_NOT_AVAILABLE",
        "LeaderNotAvailableException",
        "M",
        "The partition has no leader right now (an election is under way).",
    ),
    (
        6,
        "NOT_LEADER_FOR_PARTITION",
        "NotLeaderForPartitionException",
        "M",
        "This broker does not lead the partition; refresh metadata to find the leader.",
    ),
    (7, "REQUEST_TIMED_OUT", "TimeoutException", "R", "The request did not complete in time."),
    (8, "BROKER_NOT_AVAILABLE", "BrokerNotAvailableException", "A", "The broker is not available."),
    (
        9,
        "REPLICA_NOT_AVAILABLE",
        "ReplicaNotAvailableException",
        "A",
        "A replica of the partition is not available.",
    ),
    (
        10,
        "MESSAGE_TOO_LARGE",
        "RecordTooLargeException",
        "A",
        "A record batch is larger than the broker accepts (message.max.bytes).",
    ),
    (
        11,
        "STALE_CONTROLLER_EPOCH",
        "ControllerMovedException",
        "A",
        "The request came from a controller that is no longer the controller.",
    ),
    (
        12,
        "OFFSET_METADATA_TOO_LARGE",
        "OffsetMetadataTooLarge",
        "A",
        "The metadata string committed with an offset is too long.",
    ),
    (13, "NETWORK_EXCEPTION", "NetworkException", "M", "The connection closed before a response arrived."),
    (
        14,
        "COORDINATOR_LOAD_IN_PROGRESS",
        "CoordinatorLoadInProgressException",
        "R",
        "The coordinator is still loading its state.",
    ),
    (
        15,
        "COORDINATOR_NOT_AVAILABLE",
        "CoordinatorNotAvailableException",
        "R",
        "The group coordinator is not available.",
    ),
    (
        16,
        "NOT_COORDINATOR",
        "NotCoordinatorException",
        "R",
        "This broker is not the coordinator of the group.",
    ),
    (
        17,
        "INVALID_TOPIC_EXCEPTION",
        "InvalidTopicException",
        "A",
        "The topic name is not valid, or the operation is not allowed on it.",
    ),
    (
        18,
        "RECORD_LIST_TOO_LARGE",
        "RecordBatchTooLargeException",
        "A",
        "A record batch is larger than the segment size.",
    ),
    (
        19,
        "NOT_ENOUGH_REPLICAS",
        "NotEnoughReplicasException",
        "R",
        "Fewer in-sync replicas than min.insync.replicas: the write was refused.",
    ),
    (
        20,
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
        "NotEnoughReplicasAfterAppendException",
        "R",
        "The write was appended, but the in-sync replicas fell below min.insync.replicas.",
    ),
    (21, "INVALID_REQUIRED_ACKS", "InvalidRequiredAcksException", "A", "acks must be -1, 0 or 1."),
    (
        22,
        "ILLEGAL_GENERATION",
        "IllegalGenerationException",
        "A",
        "The group generation in the request is not the current one.",
    ),
    (
        23,
        "INCONSISTENT_GROUP_PROTOCOL",
        "InconsistentGroupProtocolException",
        "A",
        "The member's protocols share none with the group's.",
    ),
    (24, "INVALID_GROUP_ID", "InvalidGroupIdException", "A", "The group id is not valid."),
    (
        25,
        "UNKNOWN_MEMBER_ID",
        "UnknownMemberIdException",
        "A",
        "The coordinator does not know this member id.",
    ),
    (
        26,
        "INVALID_SESSION_TIMEOUT",
        "InvalidSessionTimeoutException",
        "A",
        "The session timeout is outside the broker's group.min/max.session.timeout.ms.",
    ),
    (
        27,
        "REBALANCE_IN_PROGRESS",
        "RebalanceInProgressException",
        "A",
        "The group is rebalancing: rejoin it.",
    ),
    (
        28,
        "INVALID_COMMIT_OFFSET_SIZE",
        "InvalidCommitOffsetSizeException",
        "A",
        "The offset commit is too large.",
    ),
    (
        29,
        "TOPIC_AUTHORIZATION_FAILED",
        "TopicAuthorizationException",
        "A",
        "Not authorized to access the topic.",
    ),
    (
        30,
        "GROUP_AUTHORIZATION_FAILED",
        "GroupAuthorizationException",
        "A",
        "Not authorized to access the group.",
    ),
    (
        31,
        "CLUSTER_AUTHORIZATION_FAILED",
        "ClusterAuthorizationException",
        "A",
        "Not authorized for this cluster operation.",
    ),
    (32, "INVALID_TIMESTAMP", "InvalidTimestampException", "A", "A timestamp is outside the accepted range."),
    (
        33,
        "UNSUPPORTED_SASL_MECHANISM",
        "UnsupportedSaslMechanismException",
        "A",
        "The SASL mechanism is not supported.",
    ),
    (
        34,
        "ILLEGAL_SASL_STATE",
        "IllegalSaslStateException",
        "A",
        "The request is not valid in the connection's SASL state.",
    ),
    (
        35,
        "UNSUPPORTED_VERSION",
        "UnsupportedVersionException",
        "A",
        "The broker does not support this API version.",
    ),
    (36, "TOPIC_ALREADY_EXISTS", "TopicExistsException", "A", "A topic with this name already exists."),
    (37, "INVALID_PARTITIONS", "InvalidPartitionsException", "A", "The number of partitions is not valid."),
    (
        38,
        "INVALID_REPLICATION_FACTOR",
        "InvalidReplicationFactorException",
        "A",
        "The replication factor is not valid (larger than the number of brokers?).",
    ),
    (
        39,
        "INVALID_REPLICA_ASSIGNMENT",
        "InvalidReplicaAssignmentException",
        "A",
        "The replica assignment is not valid.",
    ),
    (
        40,
        "INVALID_CONFIG",
        "InvalidConfigurationException",
        "A",
        "A configuration in the request is not valid.",
    ),
    (41, "NOT_CONTROLLER", "NotControllerException", "R", "This broker is not the controller."),
    (
        42,
        "INVALID_REQUEST",
        "InvalidRequestException",
        "A",
        "The request is malformed or not valid for this broker; its log says more.",
    ),
    (
        43,
        "UNSUPPORTED_FOR_MESSAGE_FORMAT",
        "UnsupportedForMessageFormatException",
        "A",
        "The topic's message format version cannot serve this request.",
    ),
    (
        44,
        "POLICY_VIOLATION",
        "PolicyViolationException",
        "A",
        "The request breaks a policy configured on the broker.",
    ),
    (
        45,
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
        "OutOfOrderSequenceException",
        "A",
        "The producer's sequence number skips ahead of what the broker expects.",
    ),
    (
        46,
        "DUPLICATE_SEQUENCE_NUMBER",
        "DuplicateSequenceNumberException",
        "A",
        "The broker already has a batch with this producer sequence number.",
    ),
    (
        47,
        "INVALID_PRODUCER_EPOCH",
        "ProducerFencedException",
        "A",
        "The producer epoch is old: a newer producer with the same id exists.",
    ),
    (
        48,
        "INVALID_TXN_STATE",
        "InvalidTxnStateException",
        "A",
        "The transactional operation is not valid in the transaction's state.",
    ),
    (
        49,
        "INVALID_PRODUCER_ID_MAPPING",
        "InvalidPidMappingException",
        "A",
        "The producer id is not the one assigned to this transactional id.",
    ),
    (
        50,
        "INVALID_TRANSACTION_TIMEOUT",
        "InvalidTxnTimeoutException",
        "A",
        "The transaction timeout exceeds max.transaction.timeout.ms.",
    ),
    (
        51,
        "CONCURRENT_TRANSACTIONS",
        "ConcurrentTransactionsException",
        "A",
        "Another operation on the same transaction is in progress.",
    ),
    (
        52,
        "TRANSACTION_COORDINATOR_FENCED",
        "TransactionCoordinatorFencedException",
        "A",
        "The transaction coordinator that sent this is no longer current.",
    ),
    (
        53,
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
        "TransactionalIdAuthorizationException",
        "A",
        "Not authorized for this transactional id.",
    ),
    (
        54,
        "SECURITY_DISABLED",
        "SecurityDisabledException",
        "A",
        "Security features are disabled on this broker.",
    ),
    (
        55,
        "OPERATION_NOT_ATTEMPTED",
        "OperationNotAttemptedException",
        "A",
        "The broker skipped this operation because another in the same request failed.",
    ),
    (
        58,
        "SASL_AUTHENTICATION_FAILED",
        "SaslAuthenticationException",
        "A",
        "SASL authentication failed: the credentials were not accepted.",
    ),
)

# Kafka 0.10's names for codes that were renamed later (shown in the docs beside the current name).
OLD_NAMES = {
    14: "GROUP_LOAD_IN_PROGRESS",
    15: "GROUP_COORDINATOR_NOT_AVAILABLE",
    16: "NOT_COORDINATOR_FOR_GROUP",
}

# The codes Kafka added after 0.11 that kafka_lite's Raft (chapter 12, Kafka 3.3.0) answers with. They
# are a table of their own so that 0.11's table above stays the broker's and the clients' (no 0.11
# broker sends these), yet they are ``Errors`` like every other code: one lookup, one exception
# class per code. Same columns as ``ERROR_TABLE``; the facts are Kafka 3.3.0's
# (``clients/.../protocol/Errors.java`` and ``common/errors/*Exception.java``). A voter fences a
# request from an older epoch (74) and cannot yet answer one from a newer epoch (75); a sender outside
# the voters is refused (94); a follower asks for a snapshot the leader no longer has (98) or a byte
# past its end (99); Fetch v13 names topics by id (100, 103); a message from another cluster (104).
# The quorum controller (chapter 12's metadata module) refuses a broker's request from an older
# registration (77), a second broker under a registered id (101) or an unknown one (102), an
# AlterPartition built on an older partition epoch (95) or naming a fenced replica (107), and tells
# a leader its change went through under a new leader (108).
LATER_ERROR_TABLE: tuple[tuple[int, str, str, str, str], ...] = (
    (
        74,
        "FENCED_LEADER_EPOCH",
        "FencedLeaderEpochException",
        "M",
        "The leader epoch in the request is older than the epoch on the broker.",
    ),
    (
        75,
        "UNKNOWN_LEADER_EPOCH",
        "UnknownLeaderEpochException",
        "R",
        "The leader epoch in the request is newer than the epoch on the broker.",
    ),
    (
        94,
        "INCONSISTENT_VOTER_SET",
        "InconsistentVoterSetException",
        "A",
        "The sender or the receiver of a request only voters send is not one of the expected voters.",
    ),
    (98, "SNAPSHOT_NOT_FOUND", "SnapshotNotFoundException", "A", "The requested snapshot was not found."),
    (
        99,
        "POSITION_OUT_OF_RANGE",
        "PositionOutOfRangeException",
        "A",
        "The requested position is negative or not less than the size of the snapshot.",
    ),
    (77, "STALE_BROKER_EPOCH", "StaleBrokerEpochException", "A", "Broker epoch has changed."),
    (
        95,
        "INVALID_UPDATE_VERSION",
        "InvalidUpdateVersionException",
        "A",
        "The given update version was invalid.",
    ),
    (100, "UNKNOWN_TOPIC_ID", "UnknownTopicIdException", "M", "This broker does not host this topic id."),
    (
        101,
        "DUPLICATE_BROKER_REGISTRATION",
        "DuplicateBrokerRegistrationException",
        "A",
        "This broker ID is already in use.",
    ),
    (
        102,
        "BROKER_ID_NOT_REGISTERED",
        "BrokerIdNotRegisteredException",
        "A",
        "The given broker ID was not registered.",
    ),
    (
        103,
        "INCONSISTENT_TOPIC_ID",
        "InconsistentTopicIdException",
        "M",
        "The topic id of the log does not match the topic id in the request.",
    ),
    (
        104,
        "INCONSISTENT_CLUSTER_ID",
        "InconsistentClusterIdException",
        "A",
        "The cluster id in the request does not match the one this server belongs to.",
    ),
    (
        107,
        "INELIGIBLE_REPLICA",
        "IneligibleReplicaException",
        "A",
        "The new ISR contains at least one ineligible replica.",
    ),
    (
        108,
        "NEW_LEADER_ELECTED",
        "NewLeaderElectedException",
        "A",
        "The AlterPartition request successfully updated the partition state but the leader has changed.",
    ),
)

# Kafka 2.6+'s names for codes of the table above (Kafka 3.3's Raft code uses these; shown in the docs
# beside the table's name).
NEW_NAMES = {
    -1: "UNKNOWN_SERVER_ERROR",
    6: "NOT_LEADER_OR_FOLLOWER",
}

_BASES = {"A": ApiException, "R": RetriableException, "M": InvalidMetadataException}


@dataclass(frozen=True)
class Errors:
    """One protocol error: its code, name, description and exception class."""

    code: int
    name: str
    description: str
    exception_class: type[ApiException] | None

    @property
    def retriable(self) -> bool:
        return self.exception_class is not None and issubclass(self.exception_class, RetriableException)

    def exception(self, message: str | None = None) -> ApiException:
        """An instance of this error's exception (NONE has none: asking for it is a bug)."""
        if self.exception_class is None:
            raise ValueError("Errors.NONE has no exception")
        return self.exception_class(message)

    def maybe_raise(self, message: str | None = None) -> None:
        """Raise this error's exception unless it is NONE (Kafka's ``Errors.maybeThrow``)."""
        if self.exception_class is not None:
            raise self.exception_class(message)

    @staticmethod
    def for_code(code: int) -> Errors:
        """The error for ``code``; an unknown code maps to UNKNOWN, as Kafka's clients do."""
        return _BY_CODE.get(code, _BY_CODE[-1])

    @staticmethod
    def for_exception(exc: BaseException) -> Errors:
        """The error to put in a response for ``exc``: the nearest class in the table, else UNKNOWN."""
        for cls in type(exc).__mro__:
            err = _BY_CLASS.get(cls)
            if err is not None:
                return err
        return _BY_CODE[-1]

    def __repr__(self) -> str:
        return f"Errors.{self.name}({self.code})"


NONE = Errors(0, "NONE", "No error.", None)
_BY_CODE: dict[int, Errors] = {0: NONE}
_BY_CLASS: dict[type, Errors] = {}

for _code, _name, _cls_name, _base, _description in ERROR_TABLE + LATER_ERROR_TABLE:
    _cls = type(
        _cls_name, (_BASES[_base],), {"__module__": __name__, "__doc__": f"{_name} ({_code}): {_description}"}
    )
    _err = Errors(_code, _name, _description, _cls)
    _cls.error = _err
    _BY_CODE[_code] = _err
    _BY_CLASS[_cls] = _err
    globals()[_cls_name] = _cls  # so ``from kafka_lite.common.errors import CorruptRecordException`` works
    setattr(Errors, _name, _err)
Errors.NONE = NONE  # type: ignore[attr-defined]


def _corrupt_init(self, message: str | None = None, position: int | None = None) -> None:
    # A corrupt record is only useful to report if we say *where*: ``position`` is the byte offset in
    # the buffer or file being read, and the message includes it.
    self.position = position
    ApiException.__init__(self, message)


CorruptRecordException = _BY_CODE[2].exception_class  # re-bound for type checkers and readers
CorruptRecordException.__init__ = _corrupt_init  # type: ignore[method-assign]
