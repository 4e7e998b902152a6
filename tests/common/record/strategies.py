"""Hypothesis strategies for records, shared by the record-format tests."""

from __future__ import annotations

from hypothesis import strategies as st

from kafka_lite.common.record import CompressionType, Header

BASE_TS = 1_500_000_000_000

keys = st.none() | st.binary(max_size=40)
values = st.none() | st.binary(max_size=300)
headers = st.lists(
    st.builds(Header, st.text(max_size=12), st.none() | st.binary(max_size=20)), max_size=3
).map(tuple)
timestamps = st.integers(min_value=BASE_TS - 10_000, max_value=BASE_TS + 10_000_000)

# (timestamp, key, value, headers)
records_v2 = st.lists(st.tuples(timestamps, keys, values, headers), min_size=1, max_size=25)
records_legacy = st.lists(st.tuples(timestamps, keys, values), min_size=1, max_size=25)
codecs = st.sampled_from(list(CompressionType))
legacy_codecs = st.sampled_from([c for c in CompressionType if c != CompressionType.ZSTD])
