"""Lab 17 graded tests: the broker's side of SASL/PLAIN, then SimpleAclAuthorizer's decision.

Stage 1 gives the learner's ``PlainSaslServer`` tokens directly (good, malformed, wrong), then puts it
inside a real ``SaslServerAuthenticator`` and drives that over a ``socket.socketpair()`` with
kafka_lite's own ``SaslClientAuthenticator``, in both framings: SaslHandshake v1 with the tokens in
SaslAuthenticate requests (a failure is answered with SASL_AUTHENTICATION_FAILED), and v0 with raw
tokens (a failure closes the connection). When the broker's end refuses, the test closes that end of
the pair, as the broker's selector closes the connection.

Stage 2 puts ACLs into a real ZooKeeper (one for the module, started by the first test that needs it)
through ``SimpleAclAuthorizer.add_acls``, as CreateAcls and the ``acls`` tool do, and asks the
learner's ``authorize`` for a table of decisions. A second authorizer, configured with
``allow.everyone.if.no.acl.found=true`` once the ACLs are in, loads the same ACLs from ZooKeeper.
The last test starts one broker on the same ZooKeeper with ``SimpleAclAuthorizer`` (the learner's)
on a PLAINTEXT listener, so that it needs nothing of stage 1, and a kafka_lite consumer allowed to
Describe a topic but not to Read it. Before a stage-2 test starts ZooKeeper or the broker it checks
that the stage's functions are written, so the untouched starter fails at once on the lab's own
NotImplementedError.
"""

from __future__ import annotations

import hmac
import logging
import socket
import time
import uuid

import pytest

from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.common.errors import SaslAuthenticationException, TopicAuthorizationException
from kafka_lite.common.protocol.api_keys import ApiKeys, api_versions
from kafka_lite.common.protocol.requests import parse_response
from kafka_lite.common.security.auth.acl import (
    CLUSTER_RESOURCE,
    Acl,
    Operation,
    PermissionType,
    Resource,
    ResourceType,
)
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.common.security.plain.plain_sasl_client import PlainSaslClient
from kafka_lite.common.security.plain.plain_sasl_server import PlainSaslServer
from kafka_lite.common.security.sasl import SaslException
from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.kafka_consumer import KafkaConsumer
from kafka_lite.network.request_channel import Session
from kafka_lite.network.sasl_client_authenticator import SaslClientAuthenticator, SaslClientState
from kafka_lite.network.sasl_server_authenticator import (
    AUTHENTICATION_ERRORS,
    AuthenticationStats,
    SaslServerAuthenticator,
    SaslState,
)
from kafka_lite.security.auth.simple_acl_authorizer import SimpleAclAuthorizer
from kafka_lite.server.kafka_apis import KafkaApis
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.kafka_server import KafkaServer
from kafka_lite.testing.lab_stubs import written
from kafka_lite.zk.embedded import EmbeddedZooKeeper

pytestmark = [pytest.mark.lab(17), pytest.mark.timeout(30)]

# -- stage 1: the PLAIN exchange ----------------------------------------------------------------------

USERS = {"alice": "alice-secret", "bob": "bob-secret"}


def refused(token: bytes) -> SaslException:
    """The SaslException a fresh server raises for ``token`` (a test failure if it accepts it)."""
    server = PlainSaslServer(USERS)
    try:
        answer = server.evaluate_response(token)
    except SaslException as e:
        assert not server.is_complete(), f"{token!r} was refused, but is_complete() says True"
        return e
    raise AssertionError(
        f"the token {token!r} should be refused with a SaslException; it was accepted: {answer!r}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_good_token_completes_as_its_user():
    for token in (b"\x00alice\x00alice-secret", b"alice\x00alice\x00alice-secret"):
        server = PlainSaslServer(USERS)
        assert not server.is_complete()
        answer = server.evaluate_response(token)
        assert answer == b"", f"PLAIN has nothing to answer on success: b'', got {answer!r} for {token!r}"
        assert server.is_complete() and server.authorization_id() == "alice", (
            f"after {token!r}: is_complete() {server.is_complete()}, authorization_id() "
            f"{server.authorization_id() if server.is_complete() else '(not complete)'}; expected True and "
            "'alice' (an empty authzid, or alice's own, means alice)"
        )
    server = PlainSaslServer(USERS)
    server.evaluate_response(b"\x00bob\x00bob-secret")
    assert server.authorization_id() == "bob", "each user logs in as themselves"


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_a_token_without_three_fields_or_not_utf8_is_refused():
    cases = {
        b"": "no NUL at all: 1 field",
        b"alice": "1 field",
        b"\x00alice": "2 fields",
        b"a\x00alice\x00alice-secret\x00x": "4 fields",
        b"\x00\xff\xfe\x00alice-secret": "a user name that is not UTF-8",
    }
    for token, what in cases.items():
        e = refused(token)
        assert "Invalid SASL/PLAIN response" in str(e), (
            f"{token!r} ({what}) is malformed, but the refusal does not say so (Kafka's refusals of a "
            f"malformed message read 'Invalid SASL/PLAIN response: ...'): {str(e)!r}"
        )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_missing_user_or_password_and_a_wrong_one_are_refused_with_kafkas_messages(monkeypatch):
    compared: list[tuple] = []
    real_compare_digest = hmac.compare_digest

    def spy(a, b):
        compared.append((a, b))
        return real_compare_digest(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    cases = [
        (b"\x00\x00alice-secret", "Authentication failed: username not specified", None),
        (b"\x00alice\x00", "Authentication failed: password not specified", None),
        (b"\x00alice\x00guess", "Authentication failed: Invalid username or password", "alice"),
        (b"\x00mallory\x00alice-secret", "Authentication failed: Invalid username or password", "mallory"),
    ]
    for token, message, username in cases:
        e = refused(token)
        assert str(e) == message, f"{token!r} was refused with {str(e)!r}; Kafka's client is told {message!r}"
        if username:
            assert e.username == username, (
                f"{token!r} was refused, but the broker's log would not say who tried: the refusal names "
                f"the user {e.username!r}, the client claimed {username!r}"
            )
    assert compared, (
        "alice's password and the guesses were checked, and hmac.compare_digest was never called: the "
        "comparison's time may depend on how much of a guess was right"
    )


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_an_authzid_naming_someone_else_and_a_second_token_are_refused():
    e = refused(b"admin\x00alice\x00alice-secret")
    assert "authorization id" in str(e), (
        f"alice, with her own password, asked to act as admin; the refusal does not name the authorization "
        f"id: {str(e)!r}"
    )
    e = refused(b"admin\x00alice\x00guess")
    assert str(e) == "Authentication failed: Invalid username or password", (
        f"a client with a wrong password asked to act as admin, and the refusal tells it about more than "
        f"the failed login: {str(e)!r}"
    )
    server = PlainSaslServer(USERS)
    server.evaluate_response(b"\x00alice\x00alice-secret")
    with pytest.raises(SaslException):
        server.evaluate_response(b"\x00bob\x00bob-secret")  # a second token, after completion
    assert server.authorization_id() == "alice", "a refused second token leaves the login as it was"


API_VERSIONS = api_versions(KafkaApis.HANDLED)  # a broker that knows SaslAuthenticate: v1 framing
OLD_BROKER_API_VERSIONS = [v for v in API_VERSIONS if v["api_key"] != ApiKeys.SASL_AUTHENTICATE]  # v0


class RecordingClient(SaslClientAuthenticator):
    """kafka_lite's client authenticator, noting each answer the broker gives to a token."""

    def __init__(self, password: str) -> None:
        super().__init__("node-0", PlainSaslClient("alice", password), "lab17", "alice")
        self.answers: list = []

    def handle_frame(self, frame: bytes) -> None:
        if self.state is SaslClientState.INTERMEDIATE:
            v1 = self.handshake_version == 1
            self.answers.append(parse_response(ApiKeys.SASL_AUTHENTICATE, 0, frame)[1] if v1 else frame)
        super().handle_frame(frame)


class Connection:
    """One connection: the client authenticator on one end of a socket pair, the broker's
    ``SaslServerAuthenticator`` with your ``PlainSaslServer`` on the other."""

    def __init__(self, password: str, versions: list[dict]) -> None:
        self.stats = AuthenticationStats()
        servers = {"PLAIN": lambda: PlainSaslServer(USERS)}
        self.server = SaslServerAuthenticator("conn-1", ["PLAIN"], servers, versions, "10.0.0.7", self.stats)
        self.client = RecordingClient(password)
        self.server_error: Exception | None = None
        self.client_error: Exception | None = None

    def run(self) -> Connection:
        a, b = socket.socketpair()
        a.setblocking(False)
        b.setblocking(False)
        try:
            for _ in range(50):
                try:
                    self.client.authenticate(a)
                except (EOFError, *AUTHENTICATION_ERRORS) as e:
                    self.client_error = e
                    return self
                if self.client.complete():
                    return self
                if self.server_error is None:
                    try:
                        self.server.authenticate(b)
                    except AUTHENTICATION_ERRORS as e:
                        self.server_error = e
                        b.close()  # the broker's selector closes the connection
            raise AssertionError(f"no progress:\n{self.told()}")
        finally:
            a.close()
            b.close()

    def told(self) -> str:
        return (
            f"  client: state {self.client.state.name}, framing v{self.client.handshake_version}, "
            f"error {self.client_error!r}\n"
            f"  broker: state {self.server.state.name}, principal {self.server.principal()}, "
            f"error {self.server_error!r}\n"
            f"  the broker's answers to the client's tokens: {self.client.answers}"
        )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_saslhandshake_v1_logs_alice_in_and_answers_a_wrong_password_with_error_58():
    good = Connection("alice-secret", API_VERSIONS).run()
    assert good.client.handshake_version == 1, good.told()
    assert good.client.complete() and good.server.complete(), (
        f"alice's login with her password did not complete\n{good.told()}"
    )
    assert good.server.principal() == KafkaPrincipal("User", "alice"), (
        f"alice logged in, and the connection's principal is not User:alice\n{good.told()}"
    )
    assert good.client.answers == [{"error_code": 0, "error_message": None, "sasl_auth_bytes": b""}], (
        f"the broker's answer to alice's token is not a success with nothing more to say\n{good.told()}"
    )
    assert good.stats.get("v1", "ok") == 1, f"the broker did not count alice's v1 login\n{good.told()}"

    bad = Connection("guess", API_VERSIONS).run()
    answer = bad.client.answers[-1] if bad.client.answers else {}
    assert answer.get("error_code") == 58, (
        f"the broker's answer to a wrong password over SaslAuthenticate is not SASL_AUTHENTICATION_FAILED "
        f"(58): {answer or 'no answer'}\n{bad.told()}"
    )
    assert "Invalid username or password" in (answer.get("error_message") or ""), (
        f"the client was not told why its login failed\n{bad.told()}"
    )
    assert isinstance(bad.client_error, SaslAuthenticationException), (
        f"the client's end did not fail with the broker's refusal\n{bad.told()}"
    )
    assert bad.server.state is SaslState.FAILED and bad.server.principal() == KafkaPrincipal.ANONYMOUS, (
        f"after a wrong password the broker's end is not failed and anonymous\n{bad.told()}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_saslhandshake_v0_raw_tokens_log_alice_in_and_a_wrong_password_closes_the_connection():
    good = Connection("alice-secret", OLD_BROKER_API_VERSIONS).run()
    assert good.client.handshake_version == 0, good.told()
    assert good.client.complete() and str(good.server.principal()) == "User:alice", (
        f"alice's raw PLAIN token with her password did not log her in\n{good.told()}"
    )
    assert good.client.answers == [b""] and good.stats.get("v0", "ok") == 1, (
        f"the broker's answer to alice's raw token is not an empty frame, or her login was not counted\n"
        f"{good.told()}"
    )

    bad = Connection("guess", OLD_BROKER_API_VERSIONS).run()
    assert isinstance(bad.server_error, SaslAuthenticationException), (
        f"the broker's end did not refuse a raw token with a wrong password\n{bad.told()}"
    )
    assert "Invalid username or password" in str(bad.server_error), (
        f"the broker's end failed for another reason than the password\n{bad.told()}"
    )
    assert bad.client.answers == [] and isinstance(bad.client_error, EOFError), (
        f"after a refused raw token the client got an answer, or its connection stayed open\n{bad.told()}"
    )
    assert bad.stats.get("v0", "failed") == 1 and bad.stats.get("v0", "ok") == 0, (
        f"the broker did not count the refused raw token as a failed login\n{bad.told()}"
    )


# -- stage 2: the ACL decision ------------------------------------------------------------------------

READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, ALL = (
    Operation.READ, Operation.WRITE, Operation.CREATE, Operation.DELETE, Operation.ALTER, Operation.DESCRIBE,
    Operation.ALL,
)  # fmt: skip
ALICE, BOB, CAROL, DAVE, EVE, ADMIN = (
    KafkaPrincipal("User", n) for n in ("alice", "bob", "carol", "dave", "eve", "admin")
)
ANYONE = KafkaPrincipal("User", "*")
HERE, THERE = "127.0.0.1", "10.0.0.66"


def allow(principal: KafkaPrincipal, operation: Operation, host: str = "*") -> Acl:
    return Acl(principal, PermissionType.ALLOW, host, operation)


def deny(principal: KafkaPrincipal, operation: Operation, host: str = "*") -> Acl:
    return Acl(principal, PermissionType.DENY, host, operation)


def topic(name: str) -> Resource:
    return Resource(ResourceType.TOPIC, name)


def group(name: str) -> Resource:
    return Resource(ResourceType.GROUP, name)


# Every resource's ACLs, written to ZooKeeper once for the module (each test reads its own resources).
ACLS: dict[Resource, set[Acl]] = {
    topic("plain"): {allow(ALICE, READ)},
    topic("deny-anyone"): {allow(ALICE, READ), deny(ANYONE, READ)},
    topic("deny-there"): {allow(ALICE, READ), deny(ALICE, READ, THERE)},
    topic("deny-all"): {allow(ALICE, WRITE), deny(ALICE, ALL)},
    topic("open"): {allow(ANYONE, WRITE)},
    topic("alice-all"): {allow(ALICE, ALL)},
    group("*"): {deny(ALICE, READ), allow(ANYONE, DESCRIBE)},
    group("payments"): {allow(ALICE, READ), allow(BOB, READ)},
    topic("implied"): {
        allow(ALICE, READ),
        allow(BOB, WRITE),
        allow(CAROL, DELETE),
        allow(DAVE, ALTER),
        allow(EVE, CREATE),
    },
    topic("deny-read"): {allow(ALICE, DESCRIBE), deny(ALICE, READ)},
    topic("deny-describe"): {allow(ALICE, READ), deny(ALICE, DESCRIBE)},
    topic("configs"): {allow(ALICE, Operation.ALTER_CONFIGS)},
    topic("locked"): {deny(ANYONE, ALL)},
}
NO_ACLS = topic("no-acls")


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory):
    with EmbeddedZooKeeper(tmp_path_factory.mktemp("zookeeper")) as zk:
        yield zk


@pytest.fixture(scope="module")
def configured(zookeeper):
    """The strict authorizer (``super.users=User:admin``), which writes ``ACLS`` to ZooKeeper, then one
    with ``allow.everyone.if.no.acl.found=true`` that loads them from there."""
    base = {"zookeeper.connect": f"{zookeeper.connect_string}/lab17", "super.users": "User:admin"}
    strict = SimpleAclAuthorizer(MockTime())
    strict.configure(base)
    for resource, acls in ACLS.items():
        strict.add_acls(acls, resource)
    everyone = SimpleAclAuthorizer(MockTime())
    everyone.configure({**base, "allow.everyone.if.no.acl.found": "true"})
    yield {"strict": strict, "allow everyone": everyone}
    everyone.close()
    strict.close()


@pytest.fixture
def authorizers(request):
    """The two authorizers; first, your functions must be written (the starter fails here at once)."""
    written(SimpleAclAuthorizer.authorize, SimpleAclAuthorizer._acl_match)
    return request.getfixturevalue("configured")


Row = tuple[KafkaPrincipal, str, Operation, Resource, bool, str]


def check(authorizer: SimpleAclAuthorizer, rows: list[Row], name: str = "strict") -> None:
    """Ask ``authorizer`` each row's question; on any wrong answer, fail with the whole table and the
    ACLs of each resource that went wrong."""
    lines, wrong = [], []
    for principal, host, operation, resource, expected, why in rows:
        got = authorizer.authorize(Session(principal, host), operation, resource)
        mark = "ok   " if got == expected else "WRONG"
        verdict = lambda allowed: "allowed" if allowed else "denied"  # noqa: E731
        lines.append(
            f"  {mark} {principal} from {host} {operation} {resource}: {verdict(got)}, expected "
            f"{verdict(expected)} ({why})"
        )
        if got != expected:
            wrong.append(resource)
    if wrong:
        shown = []
        for resource in dict.fromkeys(wrong):
            wildcard = Resource(resource.resource_type, "*")
            for r in (resource, wildcard):
                acls = sorted(map(str, ACLS.get(r, ()))) or ["(no ACL)"]
                shown.append(f"  {r}:\n" + "\n".join(f"    {a}" for a in acls))
        extra = ", allow.everyone.if.no.acl.found=true" if name == "allow everyone" else ""
        raise AssertionError(
            f"the {name} authorizer (super.users=User:admin{extra}) decided:\n"
            + "\n".join(lines)
            + "\nthe ACLs of the resources it got wrong, and of their type's wildcard resource:\n"
            + "\n".join(dict.fromkeys(shown))
        )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_deny_wins_over_an_allow_through_each_wildcard(authorizers):
    check(authorizers["strict"], [
        (ALICE, HERE, READ, topic("plain"), True, "Allow alice Read from *"),
        (ALICE, THERE, READ, topic("plain"), True, "host * matches any host"),
        (BOB, HERE, READ, topic("plain"), False, "no ACL allows bob"),
        (ALICE, HERE, WRITE, topic("plain"), False, "an Allow of Read does not allow Write"),
        (ALICE, HERE, READ, topic("deny-anyone"), False, "Deny User:* Read names alice too, and a Deny wins"),
        (ALICE, HERE, READ, topic("deny-there"), True, "the Deny is for another host only"),
        (ALICE, THERE, READ, topic("deny-there"), False, "from 10.0.0.66 the Deny matches, and wins"),
        (ALICE, HERE, WRITE, topic("deny-all"), False, "Deny alice All denies Write despite the Allow"),
        (BOB, HERE, WRITE, topic("open"), True, "Allow User:* Write allows bob"),
        (BOB, HERE, READ, topic("open"), False, "but not Read"),
        (ALICE, HERE, DELETE, topic("alice-all"), True, "Allow alice All allows every operation"),
        (BOB, HERE, READ, group("payments"), True, "Allow bob Read on the group"),
        (ALICE, HERE, READ, group("payments"), False, "Deny alice Read on Group:* applies to every group"),
        (BOB, HERE, DESCRIBE, group("audit"), True, "Allow User:* Describe on Group:*, no ACL of its own"),
        (BOB, HERE, READ, group("audit"), False, "the Group:* ACLs do not allow Read"),
    ])  # fmt: skip


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_read_write_delete_or_alter_implies_describe_and_a_deny_implies_nothing(authorizers):
    check(authorizers["strict"], [
        (ALICE, HERE, DESCRIBE, topic("implied"), True, "Allow Read implies Describe"),
        (BOB, HERE, DESCRIBE, topic("implied"), True, "Allow Write implies Describe"),
        (CAROL, HERE, DESCRIBE, topic("implied"), True, "Allow Delete implies Describe"),
        (DAVE, HERE, DESCRIBE, topic("implied"), True, "Allow Alter implies Describe"),
        (EVE, HERE, DESCRIBE, topic("implied"), False, "Allow Create does not imply Describe"),
        (ALICE, HERE, WRITE, topic("implied"), False, "Read implies Describe, nothing else"),
        (ALICE, HERE, DESCRIBE, topic("deny-read"), True, "Deny Read does not deny Describe"),
        (ALICE, HERE, READ, topic("deny-read"), False, "an Allow of Describe does not allow Read"),
        (ALICE, HERE, READ, topic("deny-describe"), True, "Deny Describe does not deny Read"),
        (ALICE, HERE, DESCRIBE, topic("deny-describe"), False, "the Deny of Describe beats the implied Allow"),
        (ALICE, HERE, Operation.DESCRIBE_CONFIGS, topic("configs"), True, "Allow AlterConfigs implies DescribeConfigs"),
        (ALICE, HERE, DESCRIBE, topic("configs"), False, "but not Describe"),
    ])  # fmt: skip


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_super_user_beats_a_deny(authorizers):
    check(authorizers["strict"], [
        (ADMIN, HERE, READ, topic("locked"), True, "User:admin is a super user: Deny User:* All does not apply"),
        (ADMIN, THERE, ALTER, topic("locked"), True, "from anywhere, any operation"),
        (ADMIN, HERE, READ, NO_ACLS, True, "even where no ACL allows anything"),
        (ALICE, HERE, READ, topic("locked"), False, "Deny User:* All"),
        (BOB, HERE, DESCRIBE, topic("locked"), False, "Deny User:* All"),
    ])  # fmt: skip


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_resource_without_acls_follows_allow_everyone_if_no_acl_found(authorizers):
    check(authorizers["strict"], [
        (ALICE, HERE, READ, NO_ACLS, False, "no ACL, and allow.everyone.if.no.acl.found is false"),
        (BOB, HERE, WRITE, NO_ACLS, False, "no ACL, and allow.everyone.if.no.acl.found is false"),
    ])  # fmt: skip
    check(authorizers["allow everyone"], [
        (ALICE, HERE, READ, NO_ACLS, True, "no ACL on the topic nor on Topic:*: everyone is allowed"),
        (BOB, THERE, WRITE, NO_ACLS, True, "no ACL on the topic nor on Topic:*: everyone is allowed"),
        (ALICE, HERE, WRITE, topic("plain"), False, "the topic has ACLs: they decide, and none allows Write"),
        (BOB, HERE, READ, group("audit"), False, "no ACL of its own, but Group:* has some: they decide"),
        (ALICE, HERE, READ, topic("deny-anyone"), False, "a Deny still wins"),
    ], "allow everyone")  # fmt: skip


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_each_decision_goes_to_the_audit_log(authorizers, caplog):
    strict = authorizers["strict"]
    caplog.set_level(logging.DEBUG, logger="kafka.authorizer.logger")
    strict.authorize(Session(BOB, HERE), READ, topic("plain"))
    strict.authorize(Session(ALICE, THERE), READ, topic("plain"))
    logged = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "kafka.authorizer.logger"]
    expected = [
        ("INFO", "Principal = User:bob is Denied Operation = Read from host = 127.0.0.1 on resource = Topic:plain"),
        ("DEBUG", "Principal = User:alice is Allowed Operation = Read from host = 10.0.0.66 on resource = Topic:plain"),
    ]  # fmt: skip
    assert [e for e in expected if e in logged] == expected, (
        "the audit log (kafka.authorizer.logger) misses a decision, or has it at another level or in other "
        f"words:\nexpected {expected}\nlogged   {logged}"
    )


# -- stage 2, a real broker ---------------------------------------------------------------------------

ANONYMOUS = KafkaPrincipal.ANONYMOUS  # every client of a PLAINTEXT listener, the broker itself included
DEADLINE_S = 10


@pytest.fixture(scope="module")
def broker(zookeeper, tmp_path_factory):
    """One broker with SimpleAclAuthorizer (yours) on a PLAINTEXT listener, so that stage 2 needs
    nothing of stage 1: everyone is User:ANONYMOUS, the broker too, and no one is a super user. The
    ACLs, written before it starts, allow what the broker asks of itself (its controller's
    LeaderAndIsr and UpdateMetadata: ClusterAction on the cluster) and the creation of topics."""
    zk_connect = f"{zookeeper.connect_string}/lab17-broker"
    setup = SimpleAclAuthorizer(MockTime())
    setup.configure({"zookeeper.connect": zk_connect})
    setup.add_acls({allow(ANONYMOUS, Operation.CLUSTER_ACTION), allow(ANONYMOUS, CREATE)}, CLUSTER_RESOURCE)
    setup.close()
    server = KafkaServer(KafkaConfig({
        "broker.id": 0,
        "listeners": "PLAINTEXT://127.0.0.1:0",
        "log.dirs": str(tmp_path_factory.mktemp("broker")),
        "zookeeper.connect": zk_connect,
        "authorizer.class.name": "SimpleAclAuthorizer",
        "num.network.threads": 1,
        "num.io.threads": 2,
        "log.cleaner.enable": False,
        "offsets.topic.replication.factor": 1,
        "transaction.state.log.replication.factor": 1,
        "transaction.state.log.min.isr": 1,
    }))  # fmt: skip
    server.startup()
    yield server
    server.shutdown()


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_a_broker_refuses_a_consumer_without_read_through_your_authorizer(request):
    written(SimpleAclAuthorizer.authorize, SimpleAclAuthorizer._acl_match)
    broker = request.getfixturevalue("broker")
    bootstrap = f"127.0.0.1:{broker.port}"
    name = f"secret-{uuid.uuid4().hex[:6]}"
    admin = KafkaAdminClient(bootstrap)
    try:
        admin.create_topics([NewTopic(name, 1, 1)])  # allowed by Create on the cluster
    finally:
        admin.close()
    # the consumer may see the topic (Metadata, ListOffsets: Describe), not read it
    broker.authorizer.add_acls({allow(ANONYMOUS, DESCRIBE)}, topic(name))
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    polls, refused = 0, None
    try:
        consumer.assign([TopicPartition(name, 0)])
        deadline = time.monotonic() + DEADLINE_S
        while refused is None and time.monotonic() < deadline:
            try:
                records = consumer.poll(200)
                polls += 1
                assert not records, f"records reached a consumer that may not Read {name}: {records}"
            except TopicAuthorizationException as e:
                refused = e
    finally:
        consumer.close(autocommit=False)
    acls = {str(r): sorted(map(str, broker.authorizer.get_acls(r))) for r in (CLUSTER_RESOURCE, topic(name))}
    assert refused is not None and name in str(refused), (
        f"the consumer's fetch should be answered TOPIC_AUTHORIZATION_FAILED, which it raises as "
        f"TopicAuthorizationException naming the topic; after {polls} polls in {DEADLINE_S} s: {refused!r}.\n"
        f"The broker asked your authorize(Session(User:ANONYMOUS, 127.0.0.1), Read, Topic:{name}); the ACLs: {acls}"
    )
