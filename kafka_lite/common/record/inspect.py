"""Show a batch as a tree of fields with their byte offsets; point a caret at a bad byte.

No Kafka twin: Kafka's closest tool is ``DumpLogSegments --deep-iteration``, which prints
values but not where they sit. This module exists for learners, notebooks and lab failure
messages: every field of a batch and of each record, with ``[offset:+size]``, so the format can
be read off the bytes.

    from kafka_lite.common.record.inspect import describe_batch, render_tree
    console.print(render_tree(describe_batch(buf)))
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from rich.tree import Tree

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record.compression import CompressionType, decompress
from kafka_lite.common.record.constants import MAGIC_OFFSET, MAGIC_VALUE_V2
from kafka_lite.common.record.default_record_batch import (
    HEADER_FIELDS,
    RECORD_BATCH_OVERHEAD,
    DefaultRecordBatch,
)
from kafka_lite.common.record.varint import read_varint


@dataclass
class FieldNode:
    """One field: its name, where it starts, how many bytes it takes, and its decoded value."""

    name: str
    offset: int
    size: int
    value: object = None
    children: list[FieldNode] = field(default_factory=list)

    def find(self, name: str) -> FieldNode:
        """The first descendant (or self) called ``name``."""
        if self.name == name:
            return self
        for child in self.children:
            try:
                return child.find(name)
            except KeyError:
                pass
        raise KeyError(name)


def describe_batch(buf: bytes | bytearray | memoryview, pos: int = 0) -> FieldNode:
    """The field tree of the v2 batch at ``buf[pos]``. Record fields get absolute byte offsets
    (for a compressed batch: offsets into the decompressed records, marked as such)."""
    if len(buf) - pos <= MAGIC_OFFSET or buf[pos + MAGIC_OFFSET] != MAGIC_VALUE_V2:
        raise CorruptRecordException(f"no v2 record batch at byte {pos}", position=pos)
    batch = DefaultRecordBatch(buf, pos)
    root = FieldNode(f"RecordBatch v2 @ {pos}", pos, batch.size_in_bytes)
    for f in HEADER_FIELDS:
        (value,) = struct.unpack_from(f.fmt, buf, pos + f.offset)
        root.children.append(FieldNode(f.name, pos + f.offset, f.size, value))
    start = pos + RECORD_BATCH_OVERHEAD
    end = min(pos + batch.size_in_bytes, len(buf))
    codec = batch.compression_type
    if codec == CompressionType.NONE:
        data, base, label = memoryview(buf)[:end], start, "records"
    else:
        data = decompress(codec, memoryview(buf)[start:end], position=start)
        base, label = (
            0,
            f"records ({codec.config_name}-compressed: {end - start} bytes at {start}; offsets below are into the decompressed data)",
        )
    records = FieldNode(label, start, end - start)
    root.children.append(records)
    p = base
    for i in range(batch.num_records):
        node, p = _describe_record(data, p, i)
        records.children.append(node)
    return root


def _describe_record(data, p: int, index: int) -> tuple[FieldNode, int]:
    start = p
    node = FieldNode(f"record {index}", start, 0)

    def varint(name: str, max_bytes: int = 5) -> int:
        nonlocal p
        value, q = read_varint(data, p, max_bytes)
        node.children.append(FieldNode(name, p, q - p, value))
        p = q
        return value

    def blob(name: str, length: int) -> None:
        nonlocal p
        if length >= 0:
            node.children.append(FieldNode(name, p, length, bytes(data[p : p + length])))
            p += length

    length = varint("length")
    node.children.append(FieldNode("attributes", p, 1, data[p]))
    p += 1
    varint("timestampDelta", 10)
    varint("offsetDelta")
    blob("key", varint("keyLength"))
    blob("value", varint("valueLength"))
    for h in range(varint("headersCount")):
        blob(f"header {h} key", varint(f"header {h} keyLength"))
        blob(f"header {h} value", varint(f"header {h} valueLength"))
    node.size = p - start
    node.value = f"{length} bytes after the length"
    return node, p


def render_tree(node: FieldNode, highlight: int | None = None) -> Tree:
    """A rich ``Tree`` of the fields; the field holding byte ``highlight`` is shown in red."""
    tree = Tree(_label(node, highlight))
    _add_children(tree, node, highlight)
    return tree


def _add_children(tree: Tree, node: FieldNode, highlight: int | None) -> None:
    for child in node.children:
        _add_children(tree.add(_label(child, highlight)), child, highlight)


def _label(node: FieldNode, highlight: int | None) -> str:
    span = f"[dim][{node.offset}:+{node.size}][/dim]"
    value = "" if node.value is None else f" = {node.value!r}"
    text = f"{span} [bold]{node.name}[/bold]{value}"
    if highlight is not None and not node.children and node.offset <= highlight < node.offset + node.size:
        text = f"[red]{text}  <-- byte {highlight}[/red]"
    return text


def caret_dump(buf: bytes | bytearray | memoryview, position: int, context: int = 16) -> str:
    """A hex dump of the bytes around ``position`` with a caret under it (for failure messages)."""
    lo = max(0, position - context)
    hi = min(len(buf), position + context + 1)
    cells = [f"{b:02x}" for b in bytes(buf[lo:hi])]
    line = f"{lo:>8}: " + " ".join(cells)
    caret = " " * (10 + 3 * (position - lo)) + "^^ byte " + str(position)
    return line + "\n" + caret
