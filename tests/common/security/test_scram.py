"""SCRAM-SHA-256: RFC 7677's worked example byte for byte, the stored credential's format, and every
way an exchange is refused."""

from __future__ import annotations

import base64

import pytest

from kafka_lite.common.security.sasl import SaslException
from kafka_lite.common.security.scram import scram_formatter, scram_sasl_server
from kafka_lite.common.security.scram.scram_credential_utils import (
    CredentialCache,
    credential_from_string,
    credential_to_string,
)
from kafka_lite.common.security.scram.scram_formatter import ScramCredential, generate_credential
from kafka_lite.common.security.scram.scram_messages import ClientFirstMessage, username_to_saslname
from kafka_lite.common.security.scram.scram_sasl_client import ScramSaslClient
from kafka_lite.common.security.scram.scram_sasl_server import ScramSaslServer

pytestmark = pytest.mark.unit

# RFC 7677, section 3: user "user", password "pencil"
RFC_SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
RFC_CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
RFC_SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
RFC_CLIENT_FINAL = b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
RFC_SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def rfc_server(monkeypatch) -> ScramSaslServer:
    monkeypatch.setattr(
        scram_sasl_server.formatter, "secure_random_string", lambda: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
    )
    credential = generate_credential("pencil", 4096, RFC_SALT)
    return ScramSaslServer({"user": credential}.get)


def test_rfc_7677_example_client_side():
    client = ScramSaslClient("user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    assert client.evaluate_challenge(b"") == RFC_CLIENT_FIRST
    assert client.evaluate_challenge(RFC_SERVER_FIRST) == RFC_CLIENT_FINAL
    assert client.evaluate_challenge(RFC_SERVER_FINAL) == b"" and client.is_complete()


def test_rfc_7677_example_server_side(monkeypatch):
    server = rfc_server(monkeypatch)
    assert server.evaluate_response(RFC_CLIENT_FIRST) == RFC_SERVER_FIRST
    assert server.evaluate_response(RFC_CLIENT_FINAL) == RFC_SERVER_FINAL
    assert server.is_complete() and server.authorization_id() == "user"


def test_stored_credential_round_trips_in_kafkas_format():
    credential = generate_credential("alice-secret")
    text = credential_to_string(credential)
    assert [part.split("=", 1)[0] for part in text.split(",")] == [
        "salt",
        "stored_key",
        "server_key",
        "iterations",
    ]
    assert text.endswith(",iterations=4096")
    assert "alice-secret" not in text
    assert credential_from_string(text) == credential


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("salt=AA==,stored_key=AA==,iterations=4096", "missing server_key"),
        ("salt=AA==,stored_key=AA==,server_key=!!,iterations=4096", "base64"),
        ("salt=AA==,stored_key=AA==,server_key=AA==,iterations=many", "iterations a number"),
        ("salt=AA==,stored_key=AA==,server_key=AA==,iterations=10", "below 4096"),
        ("just-text", "is not key=value"),
    ],
)
def test_malformed_stored_credentials_are_refused(text, says):
    with pytest.raises(ValueError, match=says):
        credential_from_string(text)


def test_too_few_iterations_are_refused_on_both_sides():
    with pytest.raises(ValueError, match="at least 4096"):
        generate_credential("x", 1000)
    weak = ScramCredential(b"salt", b"k" * 32, b"s" * 32, 1000)  # as if ZooKeeper held one
    server = ScramSaslServer({"u": weak}.get)
    client = ScramSaslClient("u", "x")
    server_first = server.evaluate_response(client.evaluate_challenge(b""))
    with pytest.raises(SaslException, match="less than the minimum 4096"):
        client.evaluate_challenge(server_first)


def exchange_until_final(password: str, stored_password: str = "right"):
    server = ScramSaslServer({"alice": generate_credential(stored_password)}.get)
    client = ScramSaslClient("alice", password)
    client_final = client.evaluate_challenge(server.evaluate_response(client.evaluate_challenge(b"")))
    return server, client, client_final


def test_a_wrong_password_fails_the_proof():
    server, _, client_final = exchange_until_final("wrong")
    with pytest.raises(SaslException, match="Invalid client credentials") as e:
        server.evaluate_response(client_final)
    assert e.value.username == "alice" and not server.is_complete()


def test_a_replayed_or_altered_final_message_fails():
    server, _, client_final = exchange_until_final("right")
    with pytest.raises(SaslException, match="Invalid client nonce"):
        server.evaluate_response(client_final.replace(b"r=", b"r=x", 1))
    server, _, client_final = exchange_until_final("right")
    with pytest.raises(SaslException, match="channel binding"):
        server.evaluate_response(client_final.replace(b"c=biws", b"c=eSws", 1))


def test_a_server_without_the_right_key_is_not_trusted():
    server, client, client_final = exchange_until_final("right")
    server.evaluate_response(client_final)
    with pytest.raises(SaslException, match="Invalid server signature"):
        client.evaluate_challenge(b"v=" + base64.b64encode(b"\x00" * 32))
    assert not client.is_complete()


@pytest.mark.parametrize(
    "token",
    [b"", b"n,,", b"y,,n=alice,r=abc", b"n,,n=alice", b"n,,r=abc,n=alice", b"\xff\xfe", b"n,,n=,r=abc"],
)
def test_malformed_client_first_messages_are_refused(token):
    with pytest.raises(SaslException, match=r"Invalid SCRAM client first message|not UTF-8"):
        ScramSaslServer({}.get).evaluate_response(token)


def test_unknown_user_is_refused_at_the_first_message():
    with pytest.raises(SaslException, match="Invalid user credentials") as e:
        ScramSaslServer({}.get).evaluate_response(ClientFirstMessage("mallory", "abc").to_bytes())
    assert e.value.username == "mallory"


def test_user_names_with_comma_and_equals_travel_escaped():
    assert username_to_saslname("a,b=c") == "a=2Cb=3Dc"
    name = "a,b=c"
    server = ScramSaslServer({name: generate_credential("pw")}.get)
    client = ScramSaslClient(name, "pw")
    token = client.evaluate_challenge(b"")
    while not server.is_complete():
        token = client.evaluate_challenge(server.evaluate_response(token))
    assert server.authorization_id() == name and client.is_complete()


def test_credential_cache_put_get_remove():
    cache = CredentialCache()
    credential = generate_credential("pw")
    cache.put("alice", credential)
    assert cache.get("alice") == credential and cache.users() == ["alice"]
    cache.remove("alice")
    assert cache.get("alice") is None


def test_xor_refuses_different_lengths():
    with pytest.raises(ValueError):
        scram_formatter.xor(b"ab", b"a")
