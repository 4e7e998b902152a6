"""The settings of a Raft quorum voter: who the voters are, and the quorum's timeouts.

Mirrors: org.apache.kafka.raft.RaftConfig
         (raft/src/main/java/org/apache/kafka/raft/RaftConfig.java, Kafka 3.3.0),
         with the definitions KafkaConfig gives its ``controller.quorum.*`` settings
Book:    beyond the book: chapter 12 (KRaft)
Differs: the timeouts refuse negative values (Kafka 3.3 defines them without a validator), and a
         voter's address is a ``(host, port)`` pair, not a resolved ``InetSocketAddress``.

``controller.quorum.voters`` lists the voters as ``{id}@{host}:{port}`` entries, e.g.
``1@localhost:9093,2@localhost:9094,3@localhost:9095``. Every voter must be configured with the same
list: the quorum's majority is counted over it. A voter whose address is not known at startup may be
given as ``0.0.0.0:0``, Kafka's non-routable address; it gets ``UNKNOWN_ADDRESS_SPEC``.

The timeouts are short next to the clients' (1 s to elect, 2 s without a fetch): in KRaft a change
of leader is meant to be quick, because the standby controllers are hot, their metadata already
replayed, so failing over costs little.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_lite.clients.common_client_configs import CommonClientConfigs
from kafka_lite.common.config import AbstractConfig, ConfigDef, Importance, Range, Type
from kafka_lite.common.errors import ConfigException, IllegalArgumentException

QUORUM_PREFIX = "controller.quorum."

QUORUM_VOTERS_CONFIG = QUORUM_PREFIX + "voters"
QUORUM_VOTERS_DOC = (
    "Map of id/endpoint information for the set of voters in a comma-separated list of "
    "`{id}@{host}:{port}` entries. For example: `1@localhost:9092,2@localhost:9093,3@localhost:9094`"
)
DEFAULT_QUORUM_VOTERS: list[str] = []

QUORUM_ELECTION_TIMEOUT_MS_CONFIG = QUORUM_PREFIX + "election.timeout.ms"
DEFAULT_QUORUM_ELECTION_TIMEOUT_MS = 1_000

QUORUM_FETCH_TIMEOUT_MS_CONFIG = QUORUM_PREFIX + "fetch.timeout.ms"
DEFAULT_QUORUM_FETCH_TIMEOUT_MS = 2_000

QUORUM_ELECTION_BACKOFF_MAX_MS_CONFIG = QUORUM_PREFIX + "election.backoff.max.ms"
DEFAULT_QUORUM_ELECTION_BACKOFF_MAX_MS = 1_000

QUORUM_LINGER_MS_CONFIG = QUORUM_PREFIX + "append.linger.ms"
DEFAULT_QUORUM_LINGER_MS = 25

QUORUM_REQUEST_TIMEOUT_MS_CONFIG = QUORUM_PREFIX + CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG
DEFAULT_QUORUM_REQUEST_TIMEOUT_MS = 2_000

QUORUM_RETRY_BACKOFF_MS_CONFIG = QUORUM_PREFIX + CommonClientConfigs.RETRY_BACKOFF_MS_CONFIG
DEFAULT_QUORUM_RETRY_BACKOFF_MS = 20

# Kafka's non-routable address: a voter whose endpoint is not known yet.
NON_ROUTABLE_ADDRESS = ("0.0.0.0", 0)

# Kafka's Utils.HOST_PORT_PATTERN: a host (an IPv6 one in brackets), a colon, a port.
_HOST_PORT_PATTERN = re.compile(r".*?\[?([0-9a-zA-Z\-%._:]*)\]?:([0-9]+)")


@dataclass(frozen=True)
class InetAddressSpec:
    """A voter's known endpoint."""

    host: str
    port: int

    def __post_init__(self) -> None:
        if (self.host, self.port) == NON_ROUTABLE_ADDRESS:
            raise IllegalArgumentException(f"Invalid address: {self.host}:{self.port}")


@dataclass(frozen=True)
class UnknownAddressSpec:
    """A voter whose endpoint is not known at startup (configured as ``0.0.0.0:0``)."""


UNKNOWN_ADDRESS_SPEC = UnknownAddressSpec()
AddressSpec = InetAddressSpec | UnknownAddressSpec


def _parse_voter_id(id_string: str) -> int:
    try:
        return int(id_string)
    except ValueError:
        raise ConfigException(f"Failed to parse voter ID as an integer from {id_string}") from None


def parse_voter_connections(voter_entries: Sequence[str]) -> dict[int, AddressSpec]:
    """``["1@host:9093", ...]`` as ``{1: InetAddressSpec("host", 9093), ...}``, with Kafka's errors."""
    voter_map: dict[int, AddressSpec] = {}
    form = "Each entry should be in the form `{id}@{host}:{port}`."
    for entry in voter_entries:
        id_and_address = entry.split("@")
        if len(id_and_address) != 2:
            raise ConfigException(f"Invalid configuration value for {QUORUM_VOTERS_CONFIG}. {form}")
        voter_id = _parse_voter_id(id_and_address[0])
        match = _HOST_PORT_PATTERN.match(id_and_address[1])
        if match is None:
            raise ConfigException(
                f"Failed to parse host name from entry {entry} for the configuration {QUORUM_VOTERS_CONFIG}. {form}"
            )
        host, port = match.group(1), int(match.group(2))
        if (host, port) == NON_ROUTABLE_ADDRESS:
            voter_map[voter_id] = UNKNOWN_ADDRESS_SPEC
        else:
            voter_map[voter_id] = InetAddressSpec(host, port)
    return voter_map


def quorum_voter_strings_to_nodes(voters: Sequence[str]) -> list[tuple[int, str, int]]:
    """The voters with known endpoints as ``(id, host, port)``: what a client bootstraps from."""
    return voter_connections_to_nodes(parse_voter_connections(voters))


def voter_connections_to_nodes(voter_connections: Mapping[int, AddressSpec]) -> list[tuple[int, str, int]]:
    return [
        (voter_id, spec.host, spec.port)
        for voter_id, spec in voter_connections.items()
        if isinstance(spec, InetAddressSpec)
    ]


class ControllerQuorumVotersValidator:
    """Kafka's ``RaftConfig.ControllerQuorumVotersValidator``: the list must parse."""

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigException(name, None, "Value must be non-null")
        parse_voter_connections(value)

    def __str__(self) -> str:
        return "non-empty list"


_AT_LEAST_0 = Range.at_least(0)

# --8<-- [start:config_def]
CONFIG_DEF = (
    ConfigDef()
    .define(
        QUORUM_VOTERS_CONFIG,
        Type.LIST,
        DEFAULT_QUORUM_VOTERS,
        ControllerQuorumVotersValidator(),
        Importance.HIGH,
        QUORUM_VOTERS_DOC,
    )
    .define(
        QUORUM_ELECTION_TIMEOUT_MS_CONFIG,
        Type.INT,
        DEFAULT_QUORUM_ELECTION_TIMEOUT_MS,
        _AT_LEAST_0,
        Importance.HIGH,
        "Maximum time in milliseconds to wait without being able to fetch from the leader before "
        "triggering a new election",
    )
    .define(
        QUORUM_FETCH_TIMEOUT_MS_CONFIG,
        Type.INT,
        DEFAULT_QUORUM_FETCH_TIMEOUT_MS,
        _AT_LEAST_0,
        Importance.HIGH,
        "Maximum time without a successful fetch from the current leader before becoming a candidate "
        "and triggering an election for voters",
    )
    .define(
        QUORUM_ELECTION_BACKOFF_MAX_MS_CONFIG,
        Type.INT,
        DEFAULT_QUORUM_ELECTION_BACKOFF_MAX_MS,
        _AT_LEAST_0,
        Importance.HIGH,
        "Maximum time in milliseconds before starting new elections. This is used in the binary "
        "exponential backoff mechanism that helps prevent gridlocked elections",
    )
    .define(
        QUORUM_LINGER_MS_CONFIG,
        Type.INT,
        DEFAULT_QUORUM_LINGER_MS,
        _AT_LEAST_0,
        Importance.MEDIUM,
        "The duration in milliseconds that the leader will wait for writes to accumulate before "
        "flushing them to disk.",
    )
    .define(
        QUORUM_REQUEST_TIMEOUT_MS_CONFIG,
        Type.INT,
        DEFAULT_QUORUM_REQUEST_TIMEOUT_MS,
        _AT_LEAST_0,
        Importance.MEDIUM,
        "How long to wait for the answer to a quorum request (Vote, BeginQuorumEpoch, Fetch, ...) "
        "before sending it again.",
    )
    .define(
        QUORUM_RETRY_BACKOFF_MS_CONFIG,
        Type.INT,
        DEFAULT_QUORUM_RETRY_BACKOFF_MS,
        _AT_LEAST_0,
        Importance.LOW,
        "How long to wait before retrying a failed quorum request to a given voter.",
    )
)
# --8<-- [end:config_def]


class RaftConfig:
    def __init__(
        self,
        voter_connections: Mapping[int, AddressSpec],
        request_timeout_ms: int,
        retry_backoff_ms: int,
        election_timeout_ms: int,
        election_backoff_max_ms: int,
        fetch_timeout_ms: int,
        append_linger_ms: int,
    ) -> None:
        self._voter_connections = dict(voter_connections)
        self._request_timeout_ms = request_timeout_ms
        self._retry_backoff_ms = retry_backoff_ms
        self._election_timeout_ms = election_timeout_ms
        self._election_backoff_max_ms = election_backoff_max_ms
        self._fetch_timeout_ms = fetch_timeout_ms
        self._append_linger_ms = append_linger_ms

    @classmethod
    def from_config(cls, config: AbstractConfig | Mapping[str, Any]) -> RaftConfig:
        """Parse settings (a broker's ``AbstractConfig`` or a plain mapping) with ``CONFIG_DEF``."""
        # From an AbstractConfig, its settings as given: its own ConfigDef may not define these.
        originals = config.originals if isinstance(config, AbstractConfig) else config
        values = CONFIG_DEF.parse(originals, allow_unknown=True)
        return cls(
            parse_voter_connections(values[QUORUM_VOTERS_CONFIG]),
            values[QUORUM_REQUEST_TIMEOUT_MS_CONFIG],
            values[QUORUM_RETRY_BACKOFF_MS_CONFIG],
            values[QUORUM_ELECTION_TIMEOUT_MS_CONFIG],
            values[QUORUM_ELECTION_BACKOFF_MAX_MS_CONFIG],
            values[QUORUM_FETCH_TIMEOUT_MS_CONFIG],
            values[QUORUM_LINGER_MS_CONFIG],
        )

    def request_timeout_ms(self) -> int:
        return self._request_timeout_ms

    def retry_backoff_ms(self) -> int:
        return self._retry_backoff_ms

    def election_timeout_ms(self) -> int:
        return self._election_timeout_ms

    def election_backoff_max_ms(self) -> int:
        return self._election_backoff_max_ms

    def fetch_timeout_ms(self) -> int:
        return self._fetch_timeout_ms

    def append_linger_ms(self) -> int:
        return self._append_linger_ms

    def quorum_voter_ids(self) -> set[int]:
        return set(self._voter_connections)

    def quorum_voter_connections(self) -> dict[int, AddressSpec]:
        return self._voter_connections
