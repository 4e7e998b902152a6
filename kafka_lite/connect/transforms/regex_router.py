"""RegexRouter: rename the record's topic with a regular expression and a replacement.

Mirrors: org.apache.kafka.connect.transforms.RegexRouter
         (connect/transforms/src/main/java/.../transforms/RegexRouter.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: transformations came in Kafka 0.10.2, KIP-66)
Differs: the regex is Python's ``re`` (Java's ``(?<name>...)`` groups are read as Python's
         ``(?P<name>...)``); the replacement keeps Java's syntax (``$1``, ``${name}``, ``\\$``).

A sink writes a record to the table (or index, or file) its topic names, and a source writes it to
the topic its task chose; ``regex=(.*)`` with ``replacement=dc1-$1`` moves every record to a topic
with a prefix, and ``regex=(.*)-(\\d{8})`` with ``replacement=$1`` folds daily topics into one.
As Kafka's, the regex must match the *whole* topic (``Matcher.matches``); then its first match
is replaced (``Matcher.replaceFirst``). A topic that does not match is left as it is.
"""

from __future__ import annotations

import re
from typing import Any

from kafka_lite.common.config import NO_DEFAULT_VALUE, ConfigDef, Importance, Type
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.transforms.transformation import R, Transformation
from kafka_lite.connect.transforms.util.regex_validator import RegexValidator, compile_pattern
from kafka_lite.connect.transforms.util.simple_config import SimpleConfig


class ConfigName:
    REGEX = "regex"
    REPLACEMENT = "replacement"


def java_replacement(match: re.Match[str], replacement: str) -> str:
    """``replacement`` with its group references filled from ``match``, read as Java's
    ``Matcher.appendReplacement`` reads it: ``$n`` (as many digits as make a group number that
    exists), ``${name}``, and ``\\`` to take the next character as it is."""
    out = []
    i = 0
    while i < len(replacement):
        c = replacement[i]
        if c == "\\":
            i += 1
            if i == len(replacement):
                raise DataException("character to be escaped is missing")
            out.append(replacement[i])
            i += 1
        elif c == "$":
            i += 1
            if i == len(replacement):
                raise DataException("Illegal group reference: group index is missing")
            if replacement[i] == "{":
                end = replacement.find("}", i)
                if end == -1:
                    raise DataException("named capturing group is missing trailing '}'")
                name = replacement[i + 1 : end]
                if name not in match.re.groupindex:
                    raise DataException(f"No group with name {{{name}}}")
                group = match.group(name)
                i = end + 1
            elif replacement[i].isdigit():
                number = int(replacement[i])
                i += 1
                # Java takes one more digit while the longer number is still a group of the regex.
                while i < len(replacement) and replacement[i].isdigit():
                    longer = number * 10 + int(replacement[i])
                    if longer > match.re.groups:
                        break
                    number = longer
                    i += 1
                if number > match.re.groups:
                    raise DataException(f"No group {number}")
                group = match.group(number)
            else:
                raise DataException("Illegal group reference")
            out.append(group or "")  # a group that took no part in the match adds nothing
        else:
            out.append(c)
            i += 1
    return "".join(out)


class RegexRouter(Transformation[R]):
    OVERVIEW_DOC = (
        "Update the record topic using the configured regular expression and replacement string."
        "<p/>Under the hood, the regex is compiled to a <code>java.util.regex.Pattern</code>. "
        "If the pattern matches the input topic, <code>java.util.regex.Matcher#replaceFirst()</code> is used with "
        "the replacement string to obtain the new topic."
    )

    CONFIG_DEF = (
        ConfigDef()
        .define(ConfigName.REGEX, Type.STRING, NO_DEFAULT_VALUE, RegexValidator(), Importance.HIGH,
                "Regular expression to use for matching.")
        .define(ConfigName.REPLACEMENT, Type.STRING, NO_DEFAULT_VALUE, importance=Importance.HIGH,
                doc="Replacement string.")
    )  # fmt: skip

    def configure(self, props: dict[str, Any]) -> None:
        config = SimpleConfig(self.CONFIG_DEF, props)
        self._regex = compile_pattern(config.get_string(ConfigName.REGEX))
        self._replacement = config.get_string(ConfigName.REPLACEMENT)

    def apply(self, record: R) -> R:
        if self._regex.fullmatch(record.topic):
            topic = self._regex.sub(lambda m: java_replacement(m, self._replacement), record.topic, count=1)
            return record.new_record(topic, record.kafka_partition, record.key_schema, record.key,
                                     record.value_schema, record.value, record.timestamp)  # fmt: skip
        return record

    def close(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF
