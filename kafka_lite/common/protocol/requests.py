"""Request and response framing: the header, the body, and the checks a broker makes first.

Mirrors: org.apache.kafka.common.requests.RequestHeader, ResponseHeader and AbstractRequest.parse
         (clients/.../common/requests/, Kafka 0.11.0); kafka.network.RequestChannel.Request
Book:    chapter 2, 2.3 (the server reads a size-prefixed frame, then the header tells it how to
         read the rest)

A frame on the wire is ``int32 size`` + header + body. This module handles what follows the size:
it reads the header (request header v1: api key, version, correlation id, client id; v0, without
the client id, for ControlledShutdown v0 only; v2, which adds tagged fields, for a flexible version),
checks that
the api key and version are ones kafka_lite speaks, and decodes the body with that version's
schema. Each failure is a typed error that a broker turns into a closed connection and one
warning line (as Kafka's ``SocketServer`` does), never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.messages import (
    REQUEST_HEADER,
    REQUEST_HEADER_V0,
    REQUEST_HEADER_V2,
    RESPONSE_HEADER,
    RESPONSE_HEADER_V1,
)
from kafka_lite.common.protocol.types import Reader, Schema, SchemaException, decode, encode, is_flexible

# The header schemas by header version (Kafka's RequestHeaderData and ResponseHeaderData versions).
REQUEST_HEADERS: dict[int, Schema] = {0: REQUEST_HEADER_V0, 1: REQUEST_HEADER, 2: REQUEST_HEADER_V2}
RESPONSE_HEADERS: dict[int, Schema] = {0: RESPONSE_HEADER, 1: RESPONSE_HEADER_V1}


class UnknownApiKeyException(SchemaException):
    """The request names an API kafka_lite does not have."""


class UnsupportedVersionException(SchemaException):
    """The request uses a version of the API that kafka_lite does not speak."""


@dataclass(frozen=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None = ""

    @property
    def api(self) -> ApiKeys | None:
        return ApiKeys.for_id(self.api_key)

    def encode(self, header_version: int = 1) -> bytes:
        return encode(REQUEST_HEADERS[header_version], self.__dict__)


def request_header_version(api_key: int, api_version: int) -> int:
    """The header a request of the client table is sent with: v1; v0, without a client id, for
    ControlledShutdown v0 (Kafka 0.11's broker still reads it with the old Scala request class); v2
    for a flexible version (AddPartitionsToTxn v3+, the one flexible entry of the table)."""
    if (api_key, api_version) == (ApiKeys.CONTROLLED_SHUTDOWN, 0):
        return 0
    return 2 if _is_flexible_request(api_key, api_version) else 1


def client_response_header_version(api_key: int, api_version: int) -> int:
    """The response header for a version of the client table: v1 for a flexible one, else v0."""
    api = ApiKeys.for_id(api_key)
    flexible = api is not None and api.is_version_supported(api_version)
    return response_header_version(api_key, flexible and is_flexible(api.response_schema(api_version)))


def _is_flexible_request(api_key: int, api_version: int) -> bool:
    api = ApiKeys.for_id(api_key)
    return (
        api is not None
        and api.is_version_supported(api_version)
        and is_flexible(api.request_schema(api_version))
    )


def flexible_request_header_version(api_key: int, api_version: int, flexible: bool) -> int:
    """The request header for a version that may be flexible (Kafka 2.4+'s
    ``ApiMessageType.requestHeaderVersion``): v2 for a flexible version, else as
    ``request_header_version``."""
    return 2 if flexible else request_header_version(api_key, api_version)


def response_header_version(api_key: int, flexible: bool) -> int:
    """The response header (Kafka 2.4+'s ``ApiMessageType.responseHeaderVersion``): v1 for a flexible
    version, else v0; ApiVersions' response always has v0, so that a client that asked with a
    version the broker does not know can still read the error and the versions the broker has
    (KIP-511)."""
    if api_key == ApiKeys.API_VERSIONS:
        return 0
    return 1 if flexible else 0


class SchemaTableApi:
    """What an api-key table of Kafka 3.3's flexible era answers for each of its keys, read from its
    request and response schemas by version: the enum that mixes it in (``RaftApiKeys``,
    ``ControllerApiKeys``) gives its two tables in ``_tables``. A version without a schema (None) is
    one the table does not speak."""

    def _tables(self) -> tuple[dict, dict]:
        raise NotImplementedError

    @property
    def api_name(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("_"))

    @property
    def oldest_version(self) -> int:
        return next(v for v, s in enumerate(self._tables()[0][self]) if s is not None)

    @property
    def latest_version(self) -> int:
        return len(self._tables()[0][self]) - 1

    def is_version_supported(self, version: int) -> bool:
        schemas = self._tables()[0][self]
        return 0 <= version < len(schemas) and schemas[version] is not None

    def request_schema(self, version: int):
        return self._tables()[0][self][version]

    def response_schema(self, version: int):
        return self._tables()[1][self][version]

    def request_header_version(self, version: int) -> int:
        return flexible_request_header_version(self, version, is_flexible(self.request_schema(version)))

    def response_header_version(self, version: int) -> int:
        return response_header_version(self, is_flexible(self.response_schema(version)))


def parse_response_header(frame: bytes | bytearray | memoryview, header_version: int) -> tuple[int, int]:
    """The correlation id at the start of a response frame, and where the body starts."""
    r = Reader(frame)
    return RESPONSE_HEADERS[header_version].read(r)["correlation_id"], r.pos


def parse_request_header(
    frame: bytes | bytearray | memoryview, header_version: int | None = None
) -> tuple[RequestHeader, int]:
    """Read the header at the start of ``frame`` (v0 has no client id; by default the version the
    api key and version call for); return it and where the body starts."""
    r = Reader(frame)
    if header_version is None:
        head = REQUEST_HEADER_V0.fields[:2]  # api key and version come first in every header
        header_version = request_header_version(*(f.type.read(r) for f in head)) if len(frame) >= 4 else 1
        r = Reader(frame)
    value = REQUEST_HEADERS[header_version].read(r)
    header = RequestHeader(
        value["api_key"], value["api_version"], value["correlation_id"], value.get("client_id")
    )
    return header, r.pos


def parse_request(frame: bytes | bytearray | memoryview) -> tuple[RequestHeader, dict[str, Any]]:
    """Header and body of a request frame (size prefix already removed), validated end to end."""
    header, body_start = parse_request_header(frame)
    return header, parse_request_body(header, frame, body_start)


def parse_request_body(
    header: RequestHeader, frame: bytes | bytearray | memoryview, body_start: int
) -> dict[str, Any]:
    """The body that follows ``header`` in ``frame`` from ``body_start``, decoded with the schema of
    the header's api key and version (Kafka's ``AbstractRequest.getRequest``)."""
    api = header.api
    if api is None:
        raise UnknownApiKeyException(f"unknown api key {header.api_key}", field="api_key", position=0)
    return decode_request_body(api, header, frame, body_start)


def decode_request_body(
    api: Any, header: RequestHeader, frame: bytes | bytearray | memoryview, body_start: int
) -> dict[str, Any]:
    """The body after ``header``, decoded with ``api``'s schema at the header's version (``api`` is an
    entry of any api-key table); a version the table does not speak is refused, naming its range."""
    if not api.is_version_supported(header.api_version):
        raise UnsupportedVersionException(
            f"{api.api_name} v{header.api_version} is not supported (versions "
            f"{api.oldest_version}-{api.latest_version})",
            field="api_version",
            position=2,
        )
    return decode(api.request_schema(header.api_version), frame, body_start)


def encode_request(header: RequestHeader, body: dict[str, Any]) -> bytes:
    api = ApiKeys(header.api_key)
    return header.encode(request_header_version(api, header.api_version)) + encode(
        api.request_schema(header.api_version), body
    )


def encode_response(api: ApiKeys, version: int, correlation_id: int, body: dict[str, Any]) -> bytes:
    head = RESPONSE_HEADERS[client_response_header_version(api, version)]
    return encode(head, {"correlation_id": correlation_id}) + encode(api.response_schema(version), body)


def parse_response(
    api: ApiKeys, version: int, frame: bytes | bytearray | memoryview
) -> tuple[int, dict[str, Any]]:
    """Correlation id and body of a response frame for a request of ``api`` at ``version``."""
    r = Reader(frame)
    correlation_id = RESPONSE_HEADERS[client_response_header_version(api, version)].read(r)["correlation_id"]
    return correlation_id, decode(api.response_schema(version), frame, r.pos)
