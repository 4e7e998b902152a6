"""``UserConfigHandler``: a user's SCRAM credential from ``/config/users/<user>`` into the broker's
credential cache; removed with the key; a malformed one refused, leaving the cache as it was."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.common.security.scram.scram_credential_utils import CredentialCache, credential_to_string
from kafka_lite.common.security.scram.scram_formatter import generate_credential
from kafka_lite.server.config_handler import UserConfigHandler

pytestmark = pytest.mark.unit


def test_credentials_follow_the_users_config():
    cache = CredentialCache()
    handler = UserConfigHandler(cache)
    first, second = generate_credential("one"), generate_credential("two")
    handler.process_config_changes("alice", {"SCRAM-SHA-256": credential_to_string(first)})
    assert cache.get("alice") == first
    handler.process_config_changes("alice", {"SCRAM-SHA-256": credential_to_string(second)})
    assert cache.get("alice") == second
    handler.process_config_changes("alice", {})
    assert cache.get("alice") is None


def test_a_malformed_credential_is_refused_and_changes_nothing():
    cache = CredentialCache()
    handler = UserConfigHandler(cache)
    good = generate_credential("pw")
    handler.process_config_changes("bob", {"SCRAM-SHA-256": credential_to_string(good)})
    with pytest.raises(ConfigException, match="Invalid SCRAM-SHA-256 credential of user bob"):
        handler.process_config_changes("bob", {"SCRAM-SHA-256": "salt=AA==,iterations=4096"})
    assert cache.get("bob") == good
