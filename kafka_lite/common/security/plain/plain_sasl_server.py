"""The broker's side of SASL/PLAIN: one token holding a username and a password, checked against the
JAAS entry's ``user_<name>`` options.

Mirrors: org.apache.kafka.common.security.plain.PlainSaslServer (clients/src/main/java/org/apache/
         kafka/common/security/plain/PlainSaslServer.java, Kafka 0.11)
Book:    beyond the book: chapter 11 (security, Kafka 0.10.2–0.11)
Differs: the expected passwords are handed in as a dict, read from the JAAS entry once per
         listener, instead of being looked up in the ``JaasContext`` at each login.
Labs:    lab 17, stage 1 (``PlainSaslServer.evaluate_response``)

The token (RFC 4616) is ``[authzid] NUL authcid NUL passwd``: an optional name to act as (empty means
the user itself), the user and the password, in UTF-8. PLAIN sends the password in clear, so Kafka
pairs it with TLS in production (SASL_SSL); kafka_lite has no TLS, and SASL_PLAINTEXT is for learning
and for loopback. Kafka compares the passwords with ``String.equals``; here ``hmac.compare_digest``
compares them in constant time, which costs nothing and leaks nothing through timing.
"""

from __future__ import annotations

import hmac

from kafka_lite.common.security.jaas_config import AppConfigurationEntry
from kafka_lite.common.security.sasl import PLAIN, SaslException

PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
JAAS_USER_PREFIX = "user_"


def plain_users(entries: list[AppConfigurationEntry]) -> dict[str, str]:
    """The ``user_<name>="<password>"`` options of the PlainLoginModule entry, by user name."""
    return {
        key[len(JAAS_USER_PREFIX) :]: value
        for entry in entries
        if entry.login_module_name == PLAIN_LOGIN_MODULE
        for key, value in entry.options.items()
        if key.startswith(JAAS_USER_PREFIX)
    }


class PlainSaslServer:
    mechanism = PLAIN

    def __init__(self, users: dict[str, str]) -> None:
        self.users = users
        self._complete = False
        self._authorization_id = ""

    # --8<-- [start:evaluate_response]
    def evaluate_response(self, response: bytes) -> bytes:
        """Check the client's one token, ``[authzid] NUL authcid NUL passwd``: on success remember the
        user and return ``b""`` (PLAIN has nothing to answer); else raise ``SaslException``."""
        # BEGIN SOLUTION
        if self._complete:
            raise SaslException("SASL/PLAIN authentication is already complete")
        try:
            tokens = bytes(response).decode("utf-8").split("\x00")
        except UnicodeDecodeError:
            raise SaslException("Invalid SASL/PLAIN response: not UTF-8") from None
        if len(tokens) != 3:
            raise SaslException(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(tokens)}")
        authorization_id, username, password = tokens
        if not username:
            raise SaslException("Authentication failed: username not specified")
        if not password:
            raise SaslException("Authentication failed: password not specified")
        expected = self.users.get(username)
        if expected is None or not hmac.compare_digest(password.encode(), expected.encode()):
            raise SaslException("Authentication failed: Invalid username or password", username)
        if authorization_id and authorization_id != username:
            # Kafka 0.11 accepts any authzid and ignores it (the principal is the username); refusing
            # one that names someone else, as later Kafkas do, keeps a user from claiming another name.
            raise SaslException(
                "Authentication failed: Client requested an authorization id that is different from username",
                username,
            )
        self._authorization_id = username
        self._complete = True
        return b""
        # END SOLUTION

    # --8<-- [end:evaluate_response]

    def is_complete(self) -> bool:
        return self._complete

    def authorization_id(self) -> str:
        if not self._complete:
            raise SaslException("SASL/PLAIN authentication not completed")
        return self._authorization_id
