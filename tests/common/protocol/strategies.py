"""Hypothesis strategies that generate values for any kafka_lite protocol schema."""

from __future__ import annotations

from hypothesis import strategies as st

from kafka_lite.common.protocol import types as t

_SCALARS = {
    t.INT8: st.integers(-(2**7), 2**7 - 1),
    t.INT16: st.integers(-(2**15), 2**15 - 1),
    t.INT32: st.integers(-(2**31), 2**31 - 1),
    t.INT64: st.integers(-(2**63), 2**63 - 1),
    t.BOOLEAN: st.booleans(),
    t.STRING: st.text(max_size=12),
    t.NULLABLE_STRING: st.none() | st.text(max_size=12),
    t.BYTES: st.binary(max_size=24),
    t.NULLABLE_BYTES: st.none() | st.binary(max_size=24),
    t.RECORDS: st.none() | st.binary(max_size=48),
    t.COMPACT_STRING: st.text(max_size=12),
    t.COMPACT_NULLABLE_STRING: st.none() | st.text(max_size=12),
}


def values_for(schema: t.Type, max_items: int = 3) -> st.SearchStrategy:
    if schema in _SCALARS:
        return _SCALARS[schema]
    if isinstance(schema, t.ArrayOf):
        items = st.lists(values_for(schema.element, max_items), max_size=max_items)
        return st.none() | items if schema.nullable else items
    if isinstance(schema, t.Schema):
        return st.fixed_dictionaries({f.name: values_for(f.type, max_items) for f in schema.fields})
    raise TypeError(f"no strategy for {schema!r}")
