"""kafka_lite's protocol codec against an independent one: kafka-python's own protocol classes.

For every client API and every version kafka_lite advertises, over generated values: the bytes
kafka_lite encodes decode with kafka-python to the same values, and the bytes kafka-python encodes
decode with kafka_lite to the same values. Field names differ between the two (kafka-python follows
Kafka's newer message JSON), so values are compared by position, as the bytes are.
"""

from __future__ import annotations

import importlib
import io
import pkgutil

import kafka.protocol.old as kp_old
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_lite.common.protocol import types as t
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.types import decode, encode

from .kafka_python_oracle import as_tuple, flatten_kafka_python, from_kafka_python, nest_for_kafka_python
from .strategies import values_for

pytestmark = pytest.mark.unit


def _kafka_python_classes() -> dict[tuple[int, int, str], type]:
    found = {}
    for info in pkgutil.iter_modules(kp_old.__path__):
        module = importlib.import_module(f"kafka.protocol.old.{info.name}")
        for name in dir(module):
            cls = getattr(module, name)
            if isinstance(cls, type) and isinstance(getattr(cls, "API_KEY", None), int):
                if isinstance(getattr(cls, "API_VERSION", None), int) and hasattr(cls, "SCHEMA"):
                    kind = "request" if name.split("_v")[0].endswith("Request") else "response"
                    found[(cls.API_KEY, cls.API_VERSION, kind)] = cls
    return found


KP = _kafka_python_classes()
# kafka-python's old classes stop before the flexible versions (AddPartitionsToTxn v3+): those are
# checked against its message classes, byte for byte, in test_flexible_client_versions.py.
CASES = [
    (api, version, kind)
    for api in ApiKeys
    if not api.inter_broker
    for version in range(api.oldest_version, api.latest_version + 1)
    if not t.is_flexible(api.request_schema(version))
    for kind in ("request", "response")
]


def _schema(api: ApiKeys, version: int, kind: str) -> t.Schema:
    return api.request_schema(version) if kind == "request" else api.response_schema(version)


@pytest.mark.parametrize(("api", "version", "kind"), CASES, ids=lambda c: str(c))
def test_both_codecs_agree(api, version, kind):
    schema = _schema(api, version, kind)
    theirs = KP.get((api.value, version, kind))
    assert theirs is not None, f"kafka-python has no {api.api_name} v{version} {kind}"

    @settings(max_examples=25, deadline=None)
    @given(value=values_for(schema))
    def check(value):
        ours = encode(schema, value)
        decoded = theirs.SCHEMA.decode(io.BytesIO(ours))
        flat = flatten_kafka_python(theirs.SCHEMA, decoded)
        assert from_kafka_python(schema, flat) == as_tuple(schema, value)
        back = decode(
            schema, theirs.SCHEMA.encode(nest_for_kafka_python(theirs.SCHEMA, as_tuple(schema, value)))
        )
        assert as_tuple(schema, back) == as_tuple(schema, value)

    check()


def test_every_client_api_and_version_is_covered():
    expected = {
        (a, v)
        for a in ApiKeys
        if not a.inter_broker
        for v in range(a.oldest_version, a.latest_version + 1)
        if not t.is_flexible(a.request_schema(v))
    }
    flexible = {
        (ApiKeys.ADD_PARTITIONS_TO_TXN, 3),
        (ApiKeys.ADD_PARTITIONS_TO_TXN, 4),
        (ApiKeys.DESCRIBE_PRODUCERS, 0),
        (ApiKeys.END_TXN, 3),
        (ApiKeys.END_TXN, 4),
        (ApiKeys.END_TXN, 5),
    }
    every = {
        (a, v) for a in ApiKeys if not a.inter_broker for v in range(a.oldest_version, a.latest_version + 1)
    }
    assert every - expected == flexible, "only these are left to test_flexible_client_versions.py"
    assert {(a, v) for a, v, _ in CASES} == expected
    assert len(CASES) == 2 * len(expected)


@given(st.data())
def test_decoding_what_we_encode_round_trips(data):
    api = data.draw(st.sampled_from(list(ApiKeys)))
    version = data.draw(st.integers(api.oldest_version, api.latest_version))
    for kind in ("request", "response"):
        schema = _schema(api, version, kind)
        value = data.draw(values_for(schema))
        assert as_tuple(schema, decode(schema, encode(schema, value))) == as_tuple(schema, value)
