"""What a topic may be called (it becomes a directory name, ``<topic>-<partition>``, on every
broker), and which topics are the broker's own.

Mirrors: org.apache.kafka.common.internals.Topic.validate and isInternal
         (clients/.../common/internals/Topic.java, Kafka 0.11.0) and kafka.common.Topic (Kafka 0.10.1)
Book:    chapter 6, 6.1.1 (a partition's log is a directory named after its topic)
"""

from __future__ import annotations

import re

from kafka_lite.common.errors import Errors

LEGAL_CHARS = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_NAME_LENGTH = 249  # 255 (a file name) minus room for "-<partition>" and a ".deleted" suffix

# The topics the brokers keep for themselves (Kafka 0.11's ``Topic.INTERNAL_TOPICS``): the group
# coordinators' offsets and the transaction coordinators' log. A name is internal by being one of
# these, not by its ``__`` prefix: a user may create ``__x``, and it is an ordinary topic.
GROUP_METADATA_TOPIC_NAME = "__consumer_offsets"
TRANSACTION_STATE_TOPIC_NAME = "__transaction_state"
INTERNAL_TOPICS = frozenset({GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME})


def is_internal(topic: str) -> bool:
    """Whether ``topic`` is one of the brokers' own (Kafka's ``Topic.isInternal``), as a Metadata
    answer's ``is_internal`` says."""
    return topic in INTERNAL_TOPICS


def validate_topic_name(topic: str) -> None:
    """Raise ``InvalidTopicException`` (INVALID_TOPIC_EXCEPTION) naming what is wrong with ``topic``."""
    if not topic:
        raise Errors.INVALID_TOPIC_EXCEPTION.exception("Topic name is illegal, it can't be empty")
    if topic in (".", ".."):
        raise Errors.INVALID_TOPIC_EXCEPTION.exception('Topic name cannot be "." or ".."')
    if len(topic) > MAX_NAME_LENGTH:
        raise Errors.INVALID_TOPIC_EXCEPTION.exception(
            f"Topic name is illegal, it can't be longer than {MAX_NAME_LENGTH} characters, topic name: {topic}"
        )
    if not LEGAL_CHARS.match(topic):
        raise Errors.INVALID_TOPIC_EXCEPTION.exception(
            f'Topic name "{topic}" is illegal, it contains a character other than ASCII alphanumerics, '
            "'.', '_' and '-'"
        )
