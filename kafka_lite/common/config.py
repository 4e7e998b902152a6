"""Config definitions: each setting's name, type, default, validator and doc, checked in one place.

Mirrors: org.apache.kafka.common.config.ConfigDef (with Type, Importance, Range, ValidString)
         and AbstractConfig (clients/.../common/config/, Kafka 0.10.1)
Book:    used by every component; the book lists configs per chapter (``linger.ms``, ``log.segment.bytes`` ...)
Differs: Kafka's ConfigDef also drives dependents, recommenders and groups for Connect; we keep
         parsing, defaults, validation, docs, and ``validate_all`` (every setting's errors at once,
         for Connect's validate endpoint). Python callers may pass
         kafka-python-style keyword names (``linger_ms``), which :meth:`ConfigDef.parse` maps to
         Kafka's dotted names (``linger.ms``).

A bad value never slips through to fail later somewhere obscure: it is rejected at parse time with
a message naming the key, the value and what is allowed::

    ConfigException: Invalid value -5 for configuration linger.ms: Value must be at least 0
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_lite.common.errors import ConfigException
from kafka_lite.common.utils import INT32_MAX


class Type(enum.Enum):
    BOOLEAN = "boolean"
    STRING = "string"
    INT = "int"
    SHORT = "short"
    LONG = "long"
    DOUBLE = "double"
    LIST = "list"
    PASSWORD = "password"


class Importance(enum.Enum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT_VALUE"


NO_DEFAULT_VALUE = _NoDefault()  # a required setting: parse() fails when it is missing

_INT_RANGES = {
    Type.SHORT: (-(2**15), 2**15 - 1),
    Type.INT: (-(INT32_MAX + 1), INT32_MAX),
    Type.LONG: (-(2**63), 2**63 - 1),
}

Validator = Callable[[str, Any], None]  # raises ConfigException for a bad value


@dataclass(frozen=True)
class Range:
    """Numeric bounds, inclusive (Kafka's ``ConfigDef.Range``)."""

    min: float | None = None
    max: float | None = None

    @classmethod
    def at_least(cls, minimum: float) -> Range:
        return cls(minimum, None)

    @classmethod
    def between(cls, minimum: float, maximum: float) -> Range:
        return cls(minimum, maximum)

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigException(name, value, "Value must be non-null")
        if self.min is not None and value < self.min:
            raise ConfigException(name, value, f"Value must be at least {self.min}")
        if self.max is not None and value > self.max:
            raise ConfigException(name, value, f"Value must be no more than {self.max}")

    def __str__(self) -> str:
        if self.max is None:
            return f"[{self.min},...]"
        return f"[{self.min},...,{self.max}]"


@dataclass(frozen=True)
class ValidString:
    """One of a fixed set of strings (Kafka's ``ConfigDef.ValidString``)."""

    valid: tuple[str, ...]

    @classmethod
    def in_(cls, *valid: str) -> ValidString:
        return cls(tuple(valid))

    def __call__(self, name: str, value: Any) -> None:
        if value not in self.valid:
            raise ConfigException(name, value, f"String must be one of: {', '.join(self.valid)}")

    def __str__(self) -> str:
        return "[" + ", ".join(self.valid) + "]"


@dataclass(frozen=True)
class ValidList:
    """A list whose every item is one of a fixed set of strings (Kafka's ``ConfigDef.ValidList``)."""

    valid: ValidString

    @classmethod
    def in_(cls, *valid: str) -> ValidList:
        return cls(ValidString.in_(*valid))

    def __call__(self, name: str, value: Any) -> None:
        for item in value:
            self.valid(name, item)

    def __str__(self) -> str:
        return str(self.valid)


@dataclass(frozen=True)
class ConfigKey:
    name: str
    type: Type
    default: Any
    validator: Validator | None
    importance: Importance
    doc: str

    @property
    def required(self) -> bool:
        return self.default is NO_DEFAULT_VALUE


@dataclass
class ConfigValue:
    """One setting as ``validate_all`` found it: its parsed value and what is wrong with it
    (Kafka's ``ConfigValue``, without recommended values)."""

    name: str
    value: Any
    errors: list[str]


class ConfigDef:
    """A set of config definitions. Build with chained ``define`` calls, then ``parse`` settings."""

    def __init__(self) -> None:
        self.keys: dict[str, ConfigKey] = {}

    def define(
        self,
        name: str,
        type: Type,
        default: Any = NO_DEFAULT_VALUE,
        validator: Validator | None = None,
        importance: Importance = Importance.MEDIUM,
        doc: str = "",
    ) -> ConfigDef:
        if name in self.keys:
            raise ValueError(f"Configuration {name} is defined twice")
        if default is not NO_DEFAULT_VALUE and default is not None:
            default = parse_type(name, default, type)
            if validator is not None:
                validator(name, default)  # a bad default is a bug in the definition: fail at import
        self.keys[name] = ConfigKey(name, type, default, validator, importance, doc)
        return self

    def names(self) -> list[str]:
        return list(self.keys)

    def parse(self, props: Mapping[str, Any] | None = None, *, allow_unknown: bool = False) -> dict[str, Any]:
        """Parse and validate ``props`` (dotted or underscore names); return every key with its value.

        An unknown name raises (with the closest known names) unless ``allow_unknown``, in which case
        it is kept as given: a broker config file may carry settings kafka_lite does not implement.
        """
        given: dict[str, Any] = {}
        for raw_name, value in (props or {}).items():
            name = self._canonical(raw_name)
            if name is None:
                if not allow_unknown:
                    close = difflib.get_close_matches(raw_name.replace("_", "."), self.keys, n=3)
                    hint = f" (did you mean {', '.join(close)}?)" if close else ""
                    raise ConfigException(f"Unknown configuration '{raw_name}'{hint}")
                given[raw_name] = value
                continue
            given[name] = value
        values: dict[str, Any] = {}
        for name, key in self.keys.items():
            if name in given:
                value = parse_type(name, given.pop(name), key.type)
            elif key.required:
                raise ConfigException(f"Missing required configuration '{name}', which has no default value.")
            else:
                value = key.default
            if key.validator is not None and value is not None:
                key.validator(name, value)
            values[name] = value
        values.update(given)  # the unknown ones, when allowed
        return values

    def validate_all(self, props: Mapping[str, Any]) -> dict[str, ConfigValue]:
        """Every defined setting with its errors, instead of stopping at the first (Kafka's
        ``ConfigDef.validateAll``): what Connect's ``config/validate`` endpoint shows."""
        result = {}
        for name, key in self.keys.items():
            errors = []
            value = props.get(name, key.default)
            if name not in props and key.required:
                errors.append(f"Missing required configuration '{name}', which has no default value.")
                value = None
            else:
                try:
                    value = parse_type(name, value, key.type)
                    if key.validator is not None and value is not None:
                        key.validator(name, value)
                except ConfigException as e:
                    errors.append(str(e))
            result[name] = ConfigValue(name, value, errors)
        return result

    def _canonical(self, name: str) -> str | None:
        if name in self.keys:
            return name
        dotted = name.replace("_", ".")
        return dotted if dotted in self.keys else None

    def to_markdown(self) -> str:
        """A table of the definitions for the docs (the way Kafka generates its config docs)."""
        lines = [
            "| name | type | default | valid values | importance | description |",
            "|---|---|---|---|---|---|",
        ]
        for key in sorted(self.keys.values(), key=lambda k: (list(Importance).index(k.importance), k.name)):
            default = "(required)" if key.required else f"`{key.default!r}`"
            valid = str(key.validator) if key.validator is not None else ""
            lines.append(
                f"| `{key.name}` | {key.type.value} | {default} | {valid} | {key.importance.value} | {key.doc} |"
            )
        return "\n".join(lines)


_TRUE = {"true"}
_FALSE = {"false"}


class AbstractConfig:
    """Settings parsed by a ``ConfigDef`` (``values``), and every setting as given (``originals``),
    so that settings with a prefix can be handed on (Kafka's ``AbstractConfig``: Connect passes
    ``key.converter.*`` to the key converter and ``producer.*`` to its producers this way).
    Unknown settings are kept, as Kafka's are."""

    def __init__(self, definition: ConfigDef, originals: Mapping[str, Any]) -> None:
        self.originals = dict(originals)
        self.values = definition.parse(originals, allow_unknown=True)

    def get(self, name: str) -> Any:
        return self.values[name]

    def originals_with_prefix(self, prefix: str) -> dict[str, Any]:
        """The original settings whose names start with ``prefix``, the prefix removed."""
        return {k[len(prefix) :]: v for k, v in self.originals.items() if k.startswith(prefix)}


def parse_type(name: str, value: Any, type: Type) -> Any:
    """Convert ``value`` (a Python value, or a string from a properties file) to ``type``."""
    if value is None:
        return None
    if type == Type.BOOLEAN:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() == "true"
        raise ConfigException(name, value, "Expected value to be either true or false")
    if type in (Type.STRING, Type.PASSWORD):
        if isinstance(value, str):
            return value.strip()
        raise ConfigException(name, value, "Expected value to be a string")
    if type in _INT_RANGES:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ConfigException(name, value, f"Expected value to be a {_width(type)} integer")
        try:
            number = int(value.strip()) if isinstance(value, str) else value
        except ValueError:
            raise ConfigException(name, value, f"Expected value to be a {_width(type)} integer") from None
        lo, hi = _INT_RANGES[type]
        if not lo <= number <= hi:
            raise ConfigException(name, value, f"Value does not fit in a {_width(type)} integer")
        return number
    if type == Type.DOUBLE:
        if isinstance(value, bool):
            raise ConfigException(name, value, "Expected value to be a number")
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ConfigException(name, value, "Expected value to be a number") from None
    if type == Type.LIST:
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        if isinstance(value, list | tuple):
            return list(value)
        raise ConfigException(name, value, "Expected a comma separated list")
    raise AssertionError(f"unhandled config type {type}")


def _width(type: Type) -> str:
    return {Type.SHORT: "16-bit", Type.INT: "32-bit", Type.LONG: "64-bit"}[type]


def configured_instances(
    name: str, classes: Sequence[object], configs: Mapping[str, Any], kind: str, methods: Sequence[str]
) -> list[Any]:
    """An instance of each class listed in the setting ``name`` (``interceptor.classes``), made
    without arguments and handed the client's configs through its ``configure`` when it has one
    (Kafka's ``AbstractConfig.getConfiguredInstances``). Classes, not class names: kafka_lite loads
    no code by name. A class that cannot be made, or whose instances lack one of ``methods`` (what
    a ``kind`` must offer), is a ``ConfigException`` naming it."""
    instances = []
    for spec in classes:
        if not isinstance(spec, type):
            raise ConfigException(name, spec, f"Expected a class with {' and '.join(methods)} methods")
        try:
            instance = spec()
        except Exception as e:
            raise ConfigException(
                name, spec, f"{spec.__qualname__} cannot be created without arguments: {e}"
            ) from e
        for method in methods:
            if not callable(getattr(instance, method, None)):
                raise ConfigException(
                    name, spec, f"{spec.__qualname__} is not a {kind}: it has no {method} method"
                )
        configure = getattr(instance, "configure", None)
        if callable(configure):
            configure(dict(configs))
        instances.append(instance)
    return instances
