"""Generate a straight-line reader and writer for each protocol schema.

No Kafka twin: Kafka's Java ``Schema.read`` is fast as it is; in Python the per-field dispatch of a
schema walk (a loop, a method call and a cursor update per field) is most of a decode's cost. So each
``Schema`` compiles, on first use, Python source specialised to its fields: one ``struct`` call per
run of fixed-width fields, strings, bytes and arrays inlined, nested schemas called directly. The
generated code checks every claimed length like the plain code, but only raises ``_Fail``; the plain
reader or writer in ``types.py`` then runs again to report the field and byte of the problem.

Measured on 1 MiB Produce and Fetch messages, this took decoding from 1.1-1.3x to 2.5-3.6x
kafka-python's speed (``benchmarks/bench_protocol.py``).
"""

from __future__ import annotations

import struct
from typing import Any

from kafka_lite.common.protocol.types import (
    _INT16,
    _INT32,
    ArrayOf,
    Field,
    Reader,
    Schema,
    Type,
    _Boolean,
    _Bytes,
    _Fail,
    _String,
)


class CodeSource:
    """Shared by the generated reader and writer: named constants and indented source lines."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.lines: list[str] = []
        self.env: dict[str, Any] = {"_Fail": _Fail, "_I16": _INT16, "_I32": _INT32}
        self.n = 0

    def name(self, obj: Any, prefix: str) -> str:
        """Put ``obj`` in the generated code's globals under a fresh name; return the name."""
        self.n += 1
        key = f"_{prefix}{self.n}"
        self.env[key] = obj
        return key

    def emit(self, line: str, depth: int) -> None:
        self.lines.append("    " * depth + line)


class FastReaderSource(CodeSource):
    """Writes the source of a schema's generated reader (see ``Schema._compile_fast_reader``)."""

    def __init__(self, schema: Schema) -> None:
        super().__init__(schema)
        self.env["_unpack_many"] = struct.unpack_from

    def build(self) -> tuple[str, dict[str, Any]]:
        self.emit("def read(buf, pos, end):", 0)
        fields = self.struct_fields(self.schema, 1)
        self.emit("return {" + ", ".join(f"{f.name!r}: {v}" for f, v in fields) + "}, pos", 1)
        return "\n".join(self.lines) + "\n", self.env

    def struct_fields(self, schema: Schema, depth: int) -> list[tuple[Field, str]]:
        out = []
        for step in schema._plan:
            if step[0] == "fixed":
                names, st = step[1], step[2]
                self.n += 1
                variables = [f"v{self.n}_{i}" for i in range(len(names))]
                fmt = self.name(st, "S")
                self.emit(f"if pos + {st.size} > end: raise _Fail", depth)
                self.emit(f"{', '.join(variables)}, = {fmt}.unpack_from(buf, pos)", depth)
                self.emit(f"pos += {st.size}", depth)
                by_name = dict(zip(names, variables, strict=True))
                out += [(f, by_name[f.name]) for f in schema.fields if f.name in by_name]
            else:
                f = step[1]
                out.append((f, self.value(f.type, depth)))
        order = {f.name: i for i, f in enumerate(schema.fields)}
        return sorted(out, key=lambda fv: order[fv[0].name])

    def value(self, type_: Type, depth: int) -> str:
        """Emit code that reads one value of ``type_`` at ``pos``; return the variable holding it."""
        self.n += 1
        v = f"x{self.n}"
        if isinstance(type_, _String | _Bytes):
            width, struct_name = (2, "_I16") if isinstance(type_, _String) else (4, "_I32")
            self.emit(f"if pos + {width} > end: raise _Fail", depth)
            self.emit(f"(n,) = {struct_name}.unpack_from(buf, pos)", depth)
            if type_.nullable:
                self.emit(f"if n == -1: {v} = None; pos += {width}", depth)
                self.emit("else:", depth)
                depth += 1
            self.emit(f"if n < 0 or pos + {width} + n > end: raise _Fail", depth)
            span = f"buf[pos + {width} : pos + {width} + n]"
            if isinstance(type_, _String):
                read = f"str({span}, 'utf-8')"
            else:
                read = "memoryview(buf)[pos + 4 : pos + 4 + n]" if type_.view else f"bytes({span})"
            self.emit(f"{v} = {read}; pos += {width} + n", depth)
        elif isinstance(type_, _Boolean):
            self.emit("if pos >= end: raise _Fail", depth)
            self.emit(f"{v} = buf[pos] != 0; pos += 1", depth)
        elif isinstance(type_, Schema):
            reader = self.name(type_, "T")
            self.emit(f"{v}, pos = ({reader}._fast or {reader}._compile_fast_reader())(buf, pos, end)", depth)
        elif isinstance(type_, ArrayOf):
            self.array(type_, v, depth)
        elif type_.fixed is None and not isinstance(type_, ArrayOf | Schema):
            # Anything without an inline form (varints) goes through its own reader on a Reader.
            t = self.name(type_, "T")
            r = self.name(Reader, "R")
            self.emit(f"rd = {r}(buf, pos, end); {v} = {t}.read(rd); pos = rd.pos", depth)
        elif type_.fixed is not None:
            st = self.name(type_.fixed, "S")
            self.emit(f"if pos + {type_.fixed.size} > end: raise _Fail", depth)
            self.emit(f"({v},) = {st}.unpack_from(buf, pos); pos += {type_.fixed.size}", depth)
        else:
            raise TypeError(f"no fast reader for {type_!r}")
        return v

    def array(self, type_: ArrayOf, v: str, depth: int) -> None:
        self.emit("if pos + 4 > end: raise _Fail", depth)
        self.emit("(count,) = _I32.unpack_from(buf, pos); pos += 4", depth)
        if type_.nullable:
            self.emit(f"if count == -1: {v} = None", depth)
            self.emit("else:", depth)
            depth += 1
        self.emit(f"if count < 0 or count * {type_._element_min} > end - pos: raise _Fail", depth)
        element = type_.element
        if element.fixed is not None:
            fmt = element.fixed.format.lstrip(">")
            self.emit(f"{v} = list(_unpack_many('>' + {fmt!r} * count, buf, pos))", depth)
            self.emit(f"pos += {element.fixed.size} * count", depth)
        else:
            self.emit(f"{v} = []", depth)
            self.emit("for _ in range(count):", depth)
            item = self.value(element, depth + 1)
            self.emit(f"{v}.append({item})", depth + 1)


class FastWriterSource(CodeSource):
    """Writes the source of a schema's generated writer (see ``Schema._compile_fast_writer``).

    Strings longer than a STRING can hold, nulls where none is allowed, and numbers out of range all
    end in an exception here, and the plain writer then reports them field by field.
    """

    def __init__(self, schema: Schema) -> None:
        super().__init__(schema)
        self.env["_pack_many"] = struct.pack

    def build(self) -> tuple[str, dict[str, Any]]:
        self.emit("def write(out, value):", 0)
        self.struct_fields(self.schema, "value", 1)
        self.emit("return None", 1)
        return "\n".join(self.lines) + "\n", self.env

    def field_value(self, f: Field, holder: str) -> str:
        if f.default is None:
            return f"{holder}.get({f.name!r})"
        default = self.name(f.default, "D")
        return f"{holder}.get({f.name!r}, {default})"

    def struct_fields(self, schema: Schema, holder: str, depth: int) -> None:
        for step in schema._plan:
            if step[0] == "fixed":
                names, st = step[1], step[2]
                fmt = self.name(st, "S")
                by_name = {f.name: f for f in schema.fields}
                args = ", ".join(self.field_value(by_name[n], holder) for n in names)
                self.emit(f"out += {fmt}.pack({args})", depth)
            else:
                f = step[1]
                self.n += 1
                v = f"x{self.n}"
                self.emit(f"{v} = {self.field_value(f, holder)}", depth)
                self.value(f.type, v, depth)

    def value(self, type_: Type, v: str, depth: int) -> None:
        """Emit code that appends the encoding of variable ``v`` (of ``type_``) to ``out``."""
        if isinstance(type_, _String):
            self.emit(f"if {v} is None:", depth)
            self.emit("out += b'\\xff\\xff'" if type_.nullable else "raise _Fail", depth + 1)
            self.emit("else:", depth)
            self.emit(f"d = {v}.encode('utf-8')", depth + 1)
            self.emit("if len(d) > 32767: raise _Fail", depth + 1)
            self.emit("out += _I16.pack(len(d)); out += d", depth + 1)
        elif isinstance(type_, _Bytes):
            self.emit(f"if {v} is None:", depth)
            self.emit("out += b'\\xff\\xff\\xff\\xff'" if type_.nullable else "raise _Fail", depth + 1)
            self.emit("else:", depth)
            self.emit(f"out += _I32.pack(len({v})); out += {v}", depth + 1)
        elif isinstance(type_, _Boolean):
            self.emit(f"out.append(1 if {v} else 0)", depth)
        elif isinstance(type_, Schema):
            writer = self.name(type_, "T")
            self.emit(f"({writer}._fast_writer or {writer}._compile_fast_writer())(out, {v})", depth)
        elif isinstance(type_, ArrayOf):
            self.emit(f"if {v} is None:", depth)
            self.emit("out += b'\\xff\\xff\\xff\\xff'" if type_.nullable else "raise _Fail", depth + 1)
            self.emit("else:", depth)
            self.emit(f"out += _I32.pack(len({v}))", depth + 1)
            element = type_.element
            if element.fixed is not None:
                fmt = element.fixed.format.lstrip(">")
                self.emit(f"out += _pack_many('>' + {fmt!r} * len({v}), *{v})", depth + 1)
            else:
                self.n += 1
                item = f"e{self.n}"
                self.emit(f"for {item} in {v}:", depth + 1)
                self.value(element, item, depth + 2)
        elif type_.fixed is not None:
            st = self.name(type_.fixed, "S")
            self.emit(f"out += {st}.pack({v})", depth)
        elif not isinstance(type_, ArrayOf | Schema):
            t = self.name(type_, "T")
            self.emit(f"{t}.write(out, {v})", depth)
        else:
            raise TypeError(f"no fast writer for {type_!r}")
