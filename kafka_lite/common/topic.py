"""What a topic may be called: it becomes a directory name (``<topic>-<partition>``) on every broker.

Mirrors: org.apache.kafka.common.internals.Topic.validate (clients/.../common/internals/Topic.java,
         Kafka 0.11.0) and kafka.common.Topic (Kafka 0.10.1)
Book:    chapter 6, 6.1.1 (a partition's log is a directory named after its topic)
"""

from __future__ import annotations

import re

from kafka_lite.common.errors import Errors

LEGAL_CHARS = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_NAME_LENGTH = 249  # 255 (a file name) minus room for "-<partition>" and a ".deleted" suffix


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
