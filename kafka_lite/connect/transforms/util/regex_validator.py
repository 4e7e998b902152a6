"""A config validator: the string must compile as a regular expression.

Mirrors: org.apache.kafka.connect.transforms.util.RegexValidator
         (connect/transforms/src/main/java/.../util/RegexValidator.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book)
Differs: the regex is compiled by Python's ``re`` (``compile_pattern``), so the message after
         "Invalid regex: " is ``re``'s, not ``java.util.regex``'s.
"""

from __future__ import annotations

import re
from typing import Any

from kafka_lite.common.errors import ConfigException

_JAVA_NAMED_GROUP = re.compile(r"\(\?<([A-Za-z][A-Za-z0-9]*)>")


def compile_pattern(regex: str) -> re.Pattern[str]:
    """``regex`` compiled by ``re``, Java's named groups ``(?<name>...)`` read as ``(?P<name>...)``:
    the one place a transformation's regex is compiled, so the validator and its user agree."""
    return re.compile(_JAVA_NAMED_GROUP.sub(r"(?P<\1>", regex))


class RegexValidator:
    def __call__(self, name: str, value: Any) -> None:
        try:
            compile_pattern(value)
        except re.error as e:
            raise ConfigException(name, value, f"Invalid regex: {e}") from e

    def __str__(self) -> str:
        return "valid regex"
