"""What the notebook ``sasl_handshake.ipynb`` plays the client with: Kafka frames written by hand on one
end of a socket pair, a broker-side ``SaslServerAuthenticator`` run once per frame on the other end,
and a table of every byte of a frame, field by field.

No Kafka twin: notebook tooling over ``kafka_lite.network.sasl_server_authenticator`` (Kafka's
``SaslServerAuthenticator``, which a broker's selector runs whenever the socket turns readable or
writable; here the notebook decides when). Chapter 11 (security), beyond the book.
"""

from __future__ import annotations

import socket
import struct

from rich.console import Console
from rich.table import Table

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.messages import RESPONSE_HEADER
from kafka_lite.common.protocol.render import describe, describe_request
from kafka_lite.common.protocol.requests import RequestHeader, encode_request, parse_response

console = Console(width=100)


def socket_pair(opened: list[socket.socket]) -> tuple[socket.socket, socket.socket]:
    """A new connection's two ends, both added to ``opened`` for the notebook's last cell to close:
    the broker's (non-blocking, like a processor's socket) and the client's (ours: blocking, with a
    timeout so that a missing answer fails the cell instead of hanging it)."""
    broker_end, client_end = socket.socketpair()
    broker_end.setblocking(False)
    client_end.settimeout(5)
    opened.extend([broker_end, client_end])
    return broker_end, client_end


def frame(payload: bytes) -> bytes:
    """Every Kafka frame: a 4-byte big-endian size, then that many bytes."""
    return struct.pack(">i", len(payload)) + payload


def request(api: ApiKeys, version: int, correlation_id: int, body: dict) -> bytes:
    """A whole request frame from the client id ``notebook``."""
    return frame(encode_request(RequestHeader(api, version, correlation_id, "notebook"), body))


def recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError(f"the broker closed the connection ({len(data)} of {n} bytes read)")
        data += chunk
    return data


def read_frame(sock: socket.socket) -> bytes:
    """One frame from our end of the socket, its size included."""
    size = recv_exactly(sock, 4)
    return size + recv_exactly(sock, struct.unpack(">i", size)[0])


def exchange(authenticator, broker_end: socket.socket, client_end: socket.socket, wire: bytes) -> bytes:
    """Write ``wire`` from our end, run the authenticator once (what the broker's selector does when
    the socket turns readable: read a whole frame, act on it, write the answer), read the answer."""
    client_end.sendall(wire)
    authenticator.authenticate(broker_end)
    return read_frame(client_end)


def body_of(api: ApiKeys, version: int, wire: bytes) -> dict:
    """The body of ``api``'s response at ``version``, from a whole frame."""
    return parse_response(api, version, wire[4:])[1]


def hex_lines(data: bytes, width: int = 12) -> str:
    return "\n".join(data[i : i + width].hex(" ") for i in range(0, len(data), width)) or "(none)"


def shown(name: str, value) -> str:
    """A field's value, with the name of an api key or an error code."""
    if name.endswith("(count)"):
        return value.removeprefix("array of ")
    if value == "null":  # a null string: its length is -1 (ff ff) and no bytes follow
        return "null"
    if name.endswith("api_key"):
        return f"{value} ({ApiKeys(value).api_name})"
    if name.endswith("error_code"):
        return f"{value} ({Errors.for_code(value).name})"
    return "" if value is None else repr(value) if isinstance(value, bytes | str) else str(value)


def fields(node, keep, prefix=""):
    """(offset, size, name, value) of every field that owns bytes, in wire order: an array's 4-byte
    count, then its elements; a run of elements ``keep`` refuses becomes one "not shown" row."""
    is_array = isinstance(node.value, str) and node.value.startswith("array of")
    if not node.children and not is_array:
        yield node.offset, node.size, prefix + node.name, node.value
        return
    if is_array:
        yield node.offset, 4, f"{prefix}{node.name} (count)", node.value
        prefix = f"{prefix}{node.name}"
    skipped = 0
    for child in node.children:
        if child.name.startswith("[") and not keep(child):
            skipped += 1
            continue
        if skipped:
            yield None, 0, f"  ... {skipped} more not shown", None
            skipped = 0
        element = child.name.startswith("[")
        yield from fields(child, keep, prefix + child.name + "." if element and child.children else prefix)
    if skipped:
        yield None, 0, f"  ... {skipped} more not shown", None


def dump(
    title: str, wire: bytes, api: ApiKeys | None = None, version: int = 0, keep=lambda entry: True
) -> None:
    """The frame ``wire`` as a table of its bytes, field by field, decoded with kafka_lite's own
    schemas (``render.describe``): a request if ``api`` is None, else ``api``'s response at
    ``version``. Offsets count from the first byte of the size."""
    payload = wire[4:]
    if api is None:
        trees = describe_request(payload).children
    else:
        trees = [describe(RESPONSE_HEADER, payload, 0, "header"),
                 describe(api.response_schema(version), payload, 4, "body")]  # fmt: skip
    table = Table("offset", "bytes", "field", "value", title=title, title_justify="left")
    table.columns[1].no_wrap = True
    table.add_row("0", hex_lines(wire[:4]), "size", str(len(payload)), end_section=True)
    for tree in trees:
        if not tree.children and tree.size == 0:
            table.add_row(str(tree.offset + 4), "(none)", tree.name, "no fields")
            continue
        for offset, size, name, value in fields(tree, keep):
            if offset is None:
                table.add_row("", "", name, "")
            else:
                table.add_row(
                    str(offset + 4), hex_lines(payload[offset : offset + size]), name, shown(name, value)
                )
        table.add_section()
    console.print(table)
