"""The error classes a client program catches, under Kafka's names and under kafka-python's.

No Kafka twin: the front door for errors, as kafka-python's ``kafka.errors`` is. Kafka's Java
clients keep their exceptions in ``org.apache.kafka.common.errors`` (kafka_lite's
``common/errors.py``, where every protocol error's class is made from one table) and in
``org.apache.kafka.clients.consumer`` (``CommitFailedException`` and the offset exceptions, beside
the consumer).

A program written for kafka-python imports its errors from ``kafka.errors``; with ``kafka_lite.errors``
in its place it catches the same failures, because each kafka-python name here is bound to the
class kafka_lite raises for that failure: ``TopicAlreadyExistsError`` is ``TopicExistsException``,
``KafkaError`` is ``KafkaException``, the base of everything kafka_lite raises on purpose. Kafka's own
names work too. Where kafka-python has one class for what Kafka has two (a request timed out on the
broker, or a client gave up waiting), both of its names point at Kafka's one ``TimeoutException``.
"""

from __future__ import annotations

from kafka_lite.common.errors import (
    ERROR_TABLE,
    ApiException,
    ConfigException,
    CorruptRecordException,
    DisconnectException,
    Errors,
    IllegalArgumentException,
    IllegalStateException,
    InvalidMetadataException,
    KafkaException,
    RetriableException,
    SerializationException,
    TimeoutException,
    WakeupException,
)
from kafka_lite.consumer import (
    CommitFailedException,
    InvalidOffsetException,
    NoOffsetForPartitionException,
    RetriableCommitFailedException,
)
from kafka_lite.consumer import OffsetOutOfRangeException as ConsumerOffsetOutOfRangeException

# Each protocol error's kafka-python name, by code, where it differs from Kafka's class name.
KAFKA_PYTHON_NAMES: dict[int, tuple[str, ...]] = {
    -1: ("UnknownError",),  # UNKNOWN
    1: ("OffsetOutOfRangeError",),  # OFFSET_OUT_OF_RANGE
    2: ("CorruptRecordError",),  # CORRUPT_MESSAGE
    3: ("UnknownTopicOrPartitionError",),  # UNKNOWN_TOPIC_OR_PARTITION
    4: ("InvalidFetchRequestError",),  # INVALID_FETCH_SIZE
    5: ("LeaderNotAvailableError",),  # LEADER_NOT_AVAILABLE
    6: ("NotLeaderForPartitionError",),  # NOT_LEADER_FOR_PARTITION
    7: ("RequestTimedOutError",),  # REQUEST_TIMED_OUT
    8: ("BrokerNotAvailableError",),  # BROKER_NOT_AVAILABLE
    9: ("ReplicaNotAvailableError",),  # REPLICA_NOT_AVAILABLE
    10: ("MessageSizeTooLargeError",),  # MESSAGE_TOO_LARGE
    11: ("StaleControllerEpochError",),  # STALE_CONTROLLER_EPOCH
    12: ("OffsetMetadataTooLargeError",),  # OFFSET_METADATA_TOO_LARGE
    13: ("NetworkExceptionError",),  # NETWORK_EXCEPTION
    14: ("CoordinatorLoadInProgressError",),  # COORDINATOR_LOAD_IN_PROGRESS
    15: ("CoordinatorNotAvailableError",),  # COORDINATOR_NOT_AVAILABLE
    16: ("NotCoordinatorError",),  # NOT_COORDINATOR
    17: ("InvalidTopicError",),  # INVALID_TOPIC_EXCEPTION
    18: ("RecordListTooLargeError",),  # RECORD_LIST_TOO_LARGE
    19: ("NotEnoughReplicasError",),  # NOT_ENOUGH_REPLICAS
    20: ("NotEnoughReplicasAfterAppendError",),  # NOT_ENOUGH_REPLICAS_AFTER_APPEND
    21: ("InvalidRequiredAcksError",),  # INVALID_REQUIRED_ACKS
    22: ("IllegalGenerationError",),  # ILLEGAL_GENERATION
    23: ("InconsistentGroupProtocolError",),  # INCONSISTENT_GROUP_PROTOCOL
    24: ("InvalidGroupIdError",),  # INVALID_GROUP_ID
    25: ("UnknownMemberIdError",),  # UNKNOWN_MEMBER_ID
    26: ("InvalidSessionTimeoutError",),  # INVALID_SESSION_TIMEOUT
    27: ("RebalanceInProgressError",),  # REBALANCE_IN_PROGRESS
    28: ("InvalidCommitOffsetSizeError",),  # INVALID_COMMIT_OFFSET_SIZE
    29: ("TopicAuthorizationFailedError",),  # TOPIC_AUTHORIZATION_FAILED
    30: ("GroupAuthorizationFailedError",),  # GROUP_AUTHORIZATION_FAILED
    31: ("ClusterAuthorizationFailedError",),  # CLUSTER_AUTHORIZATION_FAILED
    32: ("InvalidTimestampError",),  # INVALID_TIMESTAMP
    33: ("UnsupportedSaslMechanismError",),  # UNSUPPORTED_SASL_MECHANISM
    34: ("IllegalSaslStateError",),  # ILLEGAL_SASL_STATE
    35: ("UnsupportedVersionError", "IncompatibleBrokerVersion"),  # UNSUPPORTED_VERSION
    36: ("TopicAlreadyExistsError",),  # TOPIC_ALREADY_EXISTS
    37: ("InvalidPartitionsError",),  # INVALID_PARTITIONS
    38: ("InvalidReplicationFactorError",),  # INVALID_REPLICATION_FACTOR
    39: ("InvalidReplicationAssignmentError",),  # INVALID_REPLICA_ASSIGNMENT
    40: ("InvalidConfigurationError",),  # INVALID_CONFIG
    41: ("NotControllerError",),  # NOT_CONTROLLER
    42: ("InvalidRequestError",),  # INVALID_REQUEST
    43: ("UnsupportedForMessageFormatError",),  # UNSUPPORTED_FOR_MESSAGE_FORMAT
    44: ("PolicyViolationError",),  # POLICY_VIOLATION
    45: ("OutOfOrderSequenceNumberError",),  # OUT_OF_ORDER_SEQUENCE_NUMBER
    46: ("DuplicateSequenceNumberError",),  # DUPLICATE_SEQUENCE_NUMBER
    47: (
        "InvalidProducerEpochError",
        "ProducerFencedError",
    ),  # INVALID_PRODUCER_EPOCH (Kafka 2.7 gave the fence its own code, 90)
    48: ("InvalidTxnStateError",),  # INVALID_TXN_STATE
    49: ("InvalidProducerIdMappingError",),  # INVALID_PRODUCER_ID_MAPPING
    50: ("InvalidTransactionTimeoutError",),  # INVALID_TRANSACTION_TIMEOUT
    51: ("ConcurrentTransactionsError",),  # CONCURRENT_TRANSACTIONS
    52: ("TransactionCoordinatorFencedError",),  # TRANSACTION_COORDINATOR_FENCED
    53: ("TransactionalIdAuthorizationFailedError",),  # TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    54: ("SecurityDisabledError",),  # SECURITY_DISABLED
    55: ("OperationNotAttemptedError",),  # OPERATION_NOT_ATTEMPTED
    58: ("SaslAuthenticationFailedError",),  # SASL_AUTHENTICATION_FAILED (Kafka 1.0)
}

# The errors no broker sends: kafka-python's names for Kafka's client-side classes.
KafkaError = KafkaException
BrokerResponseError = ApiException
RetriableError = RetriableException
InvalidMetadataError = InvalidMetadataException
IllegalStateError = IllegalStateException
IllegalArgumentError = IllegalArgumentException
KafkaConfigurationError = ConfigException
KafkaConnectionError = DisconnectException
KafkaTimeoutError = TimeoutException
CommitFailedError = CommitFailedException
NoOffsetForPartitionError = NoOffsetForPartitionException

__all__ = [
    "ERROR_TABLE",
    "KAFKA_PYTHON_NAMES",
    "RAISED_BY_THE_CONSUMER",
    "ApiException",
    "BrokerResponseError",
    "CommitFailedError",
    "CommitFailedException",
    "ConfigException",
    "CorruptRecordException",
    "DisconnectException",
    "Errors",
    "IllegalArgumentError",
    "IllegalArgumentException",
    "IllegalStateError",
    "IllegalStateException",
    "InvalidMetadataError",
    "InvalidMetadataException",
    "InvalidOffsetException",
    "KafkaConfigurationError",
    "KafkaConnectionError",
    "KafkaError",
    "KafkaException",
    "KafkaTimeoutError",
    "NoOffsetForPartitionError",
    "NoOffsetForPartitionException",
    "RetriableCommitFailedException",
    "RetriableError",
    "RetriableException",
    "SerializationException",
    "TimeoutException",
    "WakeupException",
]

# Every protocol error's class, under Kafka's name and kafka-python's.
for _code, _name, _class_name, _base, _description in ERROR_TABLE:
    _cls = Errors.for_code(_code).exception_class
    for _alias in (_class_name, *KAFKA_PYTHON_NAMES.get(_code, ())):
        globals()[_alias] = _cls
        if _alias not in __all__:
            __all__.append(_alias)

# OFFSET_OUT_OF_RANGE as a program meets it: the consumer raises Kafka's
# org.apache.kafka.clients.consumer.OffsetOutOfRangeException (it names each partition and its
# offset) when auto.offset.reset is none, where kafka-python raises its OffsetOutOfRangeError. Both
# names are the consumer's class here; the protocol error's own class stays
# ``Errors.OFFSET_OUT_OF_RANGE.exception_class``.
RAISED_BY_THE_CONSUMER: dict[int, type[KafkaException]] = {1: ConsumerOffsetOutOfRangeException}
for _code, _cls in RAISED_BY_THE_CONSUMER.items():
    for _alias in (Errors.for_code(_code).exception_class.__name__, *KAFKA_PYTHON_NAMES[_code]):
        globals()[_alias] = _cls
