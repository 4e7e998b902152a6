"""JAAS configuration: the login modules a broker or client is told to use, and their options.

Mirrors: org.apache.kafka.common.security.JaasConfig and JaasContext (clients/src/main/java/org/
         apache/kafka/common/security/, Kafka 0.11)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
Differs: there is no Java login: an entry is only read for its options (the PLAIN users, the
         broker's own username and password); the module class names are checked, not loaded.

Kafka takes its SASL settings in the JAAS syntax of Java's ``Configuration``. One entry reads::

    org.apache.kafka.common.security.plain.PlainLoginModule required
        username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";

that is, a login module class, a control flag (required, requisite, sufficient, optional), then
``key=value`` options up to a semicolon. A broker finds its entries (``JaasContext.loadServerContext``)
in ``listener.name.<listener>.<mechanism>.sasl.jaas.config`` (KIP-85's inline form, one line), else in
the ``<listener>.KafkaServer`` or ``KafkaServer`` section of the file named by
``java.security.auth.login.config``, whose sections are written ``Name { entry; entry; };``. A
client reads its ``sasl.jaas.config`` or the file's ``KafkaClient`` section.

The tokenizer follows Java's ``StreamTokenizer`` as Kafka sets it up: words of letters, digits, ``.``,
``_``, ``-`` and ``$``; strings in double quotes with backslash escapes; ``//`` and ``/* */``
comments; every other character a token of its own.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_lite.common.errors import ConfigException

CONTROL_FLAGS = ("required", "requisite", "sufficient", "optional")
GLOBAL_CONTEXT_NAME_SERVER = "KafkaServer"
GLOBAL_CONTEXT_NAME_CLIENT = "KafkaClient"
JAVA_LOGIN_CONFIG_PARAM = "java.security.auth.login.config"
SASL_JAAS_CONFIG = "sasl.jaas.config"


class JaasConfigException(ConfigException):
    """A JAAS text that does not parse; the message says what is malformed and where."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


@dataclass(frozen=True)
class AppConfigurationEntry:
    """One login module line: its class, its control flag and its options (Java's class of the name)."""

    login_module_name: str
    control_flag: str
    options: dict[str, str] = field(default_factory=dict)


_WORD_PUNCTUATION = "._-$"


def _tokens(text: str, where: str) -> Iterator[tuple[str, str]]:
    """``(kind, value)`` pairs: kind is ``word``, ``string`` or the punctuation character itself."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise JaasConfigException(f"{where}: a /* comment is not closed")
            i = end + 2
        elif c == '"':
            value, i = _quoted(text, i + 1, where)
            yield "string", value
        elif c.isalnum() or c in _WORD_PUNCTUATION:
            start = i
            while i < n and (text[i].isalnum() or text[i] in _WORD_PUNCTUATION):
                i += 1
            yield "word", text[start:i]
        else:
            yield c, c
            i += 1


def _quoted(text: str, i: int, where: str) -> tuple[str, int]:
    out = []
    while i < len(text):
        c = text[i]
        if c == '"':
            return "".join(out), i + 1
        if c == "\\" and i + 1 < len(text):
            i += 1
            c = {"n": "\n", "t": "\t", "r": "\r"}.get(text[i], text[i])
        out.append(c)
        i += 1
    raise JaasConfigException(f'{where}: a quoted value is not closed (missing ")')


class _Parser:
    def __init__(self, text: str, where: str) -> None:
        self.where = where
        self._tokens = list(_tokens(text, where))
        self._pos = 0

    def peek(self) -> tuple[str, str] | None:
        return self._tokens[self._pos] if self._pos < len(self._tokens) else None

    def next(self) -> tuple[str, str] | None:
        token = self.peek()
        self._pos += token is not None
        return token

    def entry(self) -> AppConfigurationEntry:
        """``<LoginModule> <flag> key=value ... ;`` (Kafka's ``parseAppConfigurationEntry``)."""
        module = self.next()
        if module is None or module[0] != "word":
            raise JaasConfigException(
                f"{self.where}: expected a login module class name, got {_shown(module)}"
            )
        flag = self.next()
        if flag is None or flag[0] != "word":
            raise JaasConfigException(
                f"{self.where}: login module control flag not specified after {module[1]}"
            )
        if flag[1].lower() not in CONTROL_FLAGS:
            raise JaasConfigException(
                f"{self.where}: invalid login module control flag '{flag[1]}' (expected one of "
                f"{', '.join(CONTROL_FLAGS)})"
            )
        options: dict[str, str] = {}
        while (token := self.next()) is not None and token[0] != ";":
            if token[0] not in ("word", "string"):
                raise JaasConfigException(f"{self.where}: expected an option key, got {_shown(token)}")
            key = token[1]
            eq, value = self.next(), self.next()
            if eq is None or eq[0] != "=" or value is None or value[0] not in ("word", "string"):
                raise JaasConfigException(f"{self.where}: value not specified for key '{key}'")
            options[key] = value[1]
        if token is None:
            raise JaasConfigException(f"{self.where}: JAAS config entry not terminated by semi-colon")
        return AppConfigurationEntry(module[1], flag[1].lower(), options)


def _shown(token: tuple[str, str] | None) -> str:
    return "the end of the text" if token is None else repr(token[1])


def parse_jaas_config(text: str, where: str = SASL_JAAS_CONFIG) -> list[AppConfigurationEntry]:
    """The entries of an inline ``sasl.jaas.config`` value (Kafka's ``new JaasConfig(name, text)``)."""
    parser = _Parser(text, where)
    entries = []
    while parser.peek() is not None:
        entries.append(parser.entry())
    if not entries:
        raise JaasConfigException(f"{where}: login module not specified in JAAS config")
    return entries


def parse_jaas_file(text: str, where: str = "JAAS file") -> dict[str, list[AppConfigurationEntry]]:
    """The sections of a JAAS file, ``Name { entry; ... };``, by name."""
    parser = _Parser(text, where)
    sections: dict[str, list[AppConfigurationEntry]] = {}
    while (name := parser.next()) is not None:
        if name[0] != "word":
            raise JaasConfigException(f"{where}: expected a section name, got {_shown(name)}")
        brace = parser.next()
        if brace is None or brace[0] != "{":
            raise JaasConfigException(
                f"{where}: expected '{{' after section name {name[1]}, got {_shown(brace)}"
            )
        entries = []
        while (token := parser.peek()) is not None and token[0] != "}":
            entries.append(parser.entry())
        if parser.next() is None:
            raise JaasConfigException(f"{where}: section {name[1]} is not closed by '}}'")
        if (semi := parser.next()) is None or semi[0] != ";":
            raise JaasConfigException(f"{where}: section {name[1]} must end with '}};', got {_shown(semi)}")
        if not entries:
            raise JaasConfigException(f"{where}: section {name[1]} has no login module")
        sections[name[1]] = entries
    return sections


def load_server_context(
    listener_name: str, mechanism: str, configs: Mapping[str, Any]
) -> list[AppConfigurationEntry]:
    """A broker's entries for one listener and mechanism (``JaasContext.loadServerContext``): the
    listener's inline setting if there is one, else the file's ``<listener>.KafkaServer`` section, else
    its ``KafkaServer`` section."""
    prefix = f"listener.name.{listener_name.lower()}.{mechanism.lower()}."
    inline = configs.get(prefix + SASL_JAAS_CONFIG)
    if inline:
        return parse_jaas_config(str(inline), prefix + SASL_JAAS_CONFIG)
    path = configs.get(JAVA_LOGIN_CONFIG_PARAM)
    if not path:
        raise JaasConfigException(
            f"no JAAS configuration for listener {listener_name} and mechanism {mechanism}: set "
            f"{prefix}{SASL_JAAS_CONFIG} or {JAVA_LOGIN_CONFIG_PARAM}"
        )
    sections = _read_file(str(path))
    for name in (f"{listener_name.lower()}.{GLOBAL_CONTEXT_NAME_SERVER}", GLOBAL_CONTEXT_NAME_SERVER):
        if name in sections:
            return sections[name]
    raise JaasConfigException(
        f"{path}: no section {listener_name.lower()}.{GLOBAL_CONTEXT_NAME_SERVER} or "
        f"{GLOBAL_CONTEXT_NAME_SERVER} (found: {', '.join(sections) or 'none'})"
    )


def _read_file(path: str) -> dict[str, list[AppConfigurationEntry]]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise JaasConfigException(f"cannot read JAAS file {path} ({JAVA_LOGIN_CONFIG_PARAM}): {e}") from None
    return parse_jaas_file(text, path)


def config_entry_option(entries: list[AppConfigurationEntry], key: str, login_module: str) -> str | None:
    """An option of the entry for ``login_module`` (``JaasContext.configEntryOption``), or None."""
    for entry in entries:
        if entry.login_module_name == login_module and key in entry.options:
            return entry.options[key]
    return None


def client_credentials(text: str, where: str = SASL_JAAS_CONFIG) -> tuple[str, str]:
    """The ``username`` and ``password`` options of a client's one-line JAAS entry (what Kafka's
    PLAIN and SCRAM login modules read from ``sasl.jaas.config``)."""
    entries = parse_jaas_config(text, where)
    options = entries[0].options if entries else {}
    if "username" not in options or "password" not in options:
        raise ConfigException(f'{where}: the login needs username="..." and password="..." options')
    return options["username"], options["password"]
