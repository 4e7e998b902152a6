"""Show any request or response as a field tree with byte offsets.

No Kafka twin: a teaching and debugging aid. It reuses the record inspector's ``FieldNode`` and
``render_tree``, so a Produce request's tree can hold its record batches' trees too.

    from kafka_lite.common.protocol.render import describe_request
    console.print(render_tree(describe_request(frame)))
"""

from __future__ import annotations

import struct

from kafka_lite.common.protocol.messages import REQUEST_HEADER
from kafka_lite.common.protocol.requests import parse_request_header
from kafka_lite.common.protocol.types import ArrayOf, Reader, Schema, SchemaException, Type
from kafka_lite.common.record.inspect import FieldNode, describe_batch, render_tree
from kafka_lite.common.record.memory_records import iter_batches

_COUNT = struct.Struct(">i")

__all__ = ["describe", "describe_request", "render_tree"]


def describe(
    schema: Type, buf: bytes | bytearray | memoryview, pos: int = 0, name: str = "body"
) -> FieldNode:
    """The field tree of one value of ``schema`` at ``buf[pos]``. Stops at the first bad field,
    which then appears as a node named ``!error`` holding the reason."""
    r = Reader(buf, pos)
    root = FieldNode(name, pos, 0)
    try:
        _walk(schema, r, root, buf)
    except SchemaException as e:
        root.children.append(FieldNode("!error", e.position or r.pos, 0, e.reason))
    root.size = r.pos - pos
    return root


def describe_request(frame: bytes | bytearray | memoryview) -> FieldNode:
    """Header and body of a request frame (size prefix removed), as one tree."""
    header, body_start = parse_request_header(frame)
    root = FieldNode("request", 0, len(frame))
    root.children.append(describe(REQUEST_HEADER, frame, 0, "header"))
    api = header.api
    if api is None or not api.is_version_supported(header.api_version):
        root.children.append(
            FieldNode("!error", 0, 0, f"api key {header.api_key} v{header.api_version} is unknown")
        )
        return root
    root.children.append(
        describe(
            api.request_schema(header.api_version),
            frame,
            body_start,
            f"{api.api_name}Request v{header.api_version}",
        )
    )
    return root


def _walk(schema: Type, r: Reader, parent: FieldNode, buf) -> None:
    if isinstance(schema, Schema):
        for f in schema.fields:
            start = r.pos
            if isinstance(f.type, Schema | ArrayOf):
                node = FieldNode(f.name, start, 0)
                parent.children.append(node)
                _walk(f.type, r, node, buf)
            else:
                value = f.type.read(r)
                shown = "null" if value is None else bytes(value) if isinstance(value, memoryview) else value
                node = FieldNode(f.name, start, 0, shown)
                parent.children.append(node)
                if f.type.name == "RECORDS" and value:
                    node.value = f"{len(value)} bytes of record batches"
                    _describe_records(node, buf, r.pos - len(value), r.pos)
            node.size = r.pos - start
    elif isinstance(schema, ArrayOf):
        r.need(4, "array count")
        (count,) = _COUNT.unpack_from(r.buf, r.pos)
        if count < -1 or (count == -1 and not schema.nullable):
            raise SchemaException(f"array count {count} is negative", position=r.pos)
        r.pos += 4
        parent.value = "null" if count == -1 else f"array of {count}"
        for i in range(max(count, 0)):  # each element's read checks its own bounds
            node = FieldNode(f"[{i}]", r.pos, 0)
            parent.children.append(node)
            if isinstance(schema.element, Schema | ArrayOf):
                _walk(schema.element, r, node, buf)
            else:
                node.value = schema.element.read(r)
            node.size = r.pos - node.offset


def _describe_records(node: FieldNode, buf, start: int, end: int) -> None:
    try:
        for batch in iter_batches(memoryview(buf)[:end], start, allow_partial_tail=True):
            if batch.magic == 2:
                node.children.append(describe_batch(buf, batch.position))
    except Exception as e:  # a damaged batch inside a request: show the request anyway, with the reason
        node.children.append(FieldNode("!error", start, 0, str(e)))
