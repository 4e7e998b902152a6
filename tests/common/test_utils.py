"""Kafka's Utils.abs of a Java int, which spreads names over buckets (the __consumer_offsets partition
of a group, the replica fetcher of a partition)."""

from __future__ import annotations

import pytest

from kafka_lite.common.utils import abs_int

pytestmark = pytest.mark.unit

INT_MIN, INT_MAX = -(2**31), 2**31 - 1


def test_abs_is_math_abs_for_every_int_but_the_smallest():
    assert abs_int(7) == 7
    assert abs_int(-7) == 7
    assert abs_int(-1) == 1  # Utils.toPositive (n & 0x7fffffff) would give 2147483647
    assert abs_int(INT_MAX) == INT_MAX
    assert abs_int(INT_MIN + 1) == INT_MAX


def test_abs_of_integer_min_value_is_0():
    # Math.abs(Integer.MIN_VALUE) is Integer.MIN_VALUE, still negative; Kafka's Utils.abs returns 0.
    assert abs_int(INT_MIN) == 0


def test_abs_wraps_its_argument_as_java_int_arithmetic_does():
    # 31 * topic.hashCode() + partition overflows in Java: 2**31 wraps to Integer.MIN_VALUE, and
    # 2**32 - 5 to -5.
    assert abs_int(2**31) == 0
    assert abs_int(2**32 - 5) == 5
    # Java: int h = -2000000000; 31 * h + 3 == -1870457853.
    assert abs_int(31 * -2_000_000_000 + 3) == 1_870_457_853
