"""MemberMetadata: a member's protocols, its vote, its metadata per protocol, and its summary
(Kafka 0.10.1's MemberMetadataTest, and the checks of our own)."""

from __future__ import annotations

import pytest

from kafka_lite.coordinator.member_metadata import IllegalArgumentException, MemberMetadata, MemberSummary

pytestmark = pytest.mark.unit


def member(protocols, member_id="memberId") -> MemberMetadata:
    return MemberMetadata(member_id, "groupId", "clientId", "clientHost", 60000, 10000, "consumer", protocols)


def test_a_new_member_has_no_assignment_no_parked_request_and_no_heartbeat():
    m = member([("range", b"\x00")])
    assert (m.member_id, m.group_id, m.client_id, m.client_host) == (
        "memberId",
        "groupId",
        "clientId",
        "clientHost",
    )
    assert (m.rebalance_timeout_ms, m.session_timeout_ms, m.protocol_type) == (60000, 10000, "consumer")
    assert m.assignment == b""
    assert m.awaiting_join_callback is None and m.awaiting_sync_callback is None
    assert m.latest_heartbeat == -1
    assert m.is_leaving is False


def test_matches_only_the_same_protocols_in_the_same_order_with_the_same_metadata():
    protocols = [("range", b"")]
    m = member(protocols)
    assert m.matches(protocols)
    assert m.matches([("range", b"")])
    assert not m.matches([("range", b"\x00")])
    assert not m.matches([("roundrobin", b"")])
    assert not m.matches([("range", b""), ("roundrobin", b"")])
    two = member([("range", b""), ("roundrobin", b"")])
    assert not two.matches([("roundrobin", b""), ("range", b"")])


def test_protocols_are_the_names_as_a_set():
    assert member([("range", b"a"), ("roundrobin", b"b")]).protocols() == {"range", "roundrobin"}


def test_vote_is_the_first_of_its_own_protocols_among_the_candidates():
    m = member([("range", b""), ("roundrobin", b"")])
    assert m.vote({"range", "roundrobin"}) == "range"
    assert m.vote({"blah", "roundrobin"}) == "roundrobin"
    # Its own order decides, not the candidates'.
    assert m.vote(["roundrobin", "range"]) == "range"


def test_vote_raises_when_no_candidate_is_supported():
    m = member([("range", b""), ("roundrobin", b"")])
    with pytest.raises(IllegalArgumentException) as e:
        m.vote({"blah"})
    assert str(e.value) == (
        "Member does not support any of the candidate protocols: member memberId supports "
        "['range', 'roundrobin'], the candidates are ['blah']"
    )


def test_metadata_is_the_members_blob_for_that_protocol():
    m = member([("range", b"\x00"), ("roundrobin", b"\x01")])
    assert m.metadata("range") == b"\x00"
    assert m.metadata("roundrobin") == b"\x01"


def test_metadata_raises_on_an_unsupported_protocol():
    m = member([("range", b""), ("roundrobin", b"")])
    with pytest.raises(IllegalArgumentException) as e:
        m.metadata("blah")
    assert str(e.value) == (
        "Member does not support protocol 'blah': member memberId supports ['range', 'roundrobin']"
    )
    assert isinstance(e.value, ValueError)


def test_rejoining_with_new_protocols_replaces_them():
    m = member([("range", b"\x00")])
    m.supported_protocols = [("roundrobin", b"\x01"), ("range", b"\x02")]
    assert m.metadata("range") == b"\x02"
    assert m.vote({"range", "roundrobin"}) == "roundrobin"
    assert m.matches([("roundrobin", b"\x01"), ("range", b"\x02")])


def test_summary_carries_metadata_and_assignment_only_with_a_protocol():
    m = member([("range", b"\x00"), ("roundrobin", b"\x01")])
    m.assignment = b"\x07"
    assert m.summary("roundrobin") == MemberSummary("memberId", "clientId", "clientHost", b"\x01", b"\x07")
    assert m.summary_no_metadata() == MemberSummary("memberId", "clientId", "clientHost", b"", b"")
    with pytest.raises(IllegalArgumentException, match="does not support protocol 'blah'"):
        m.summary("blah")


def test_to_string_is_kafkas():
    assert str(member([("range", b"")])) == "[memberId,clientId,clientHost,10000]"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("session_timeout_ms", 10.5, "session_timeout_ms must be an int number of milliseconds, not float"),
        (
            "rebalance_timeout_ms",
            "60000",
            "rebalance_timeout_ms must be an int number of milliseconds, not str",
        ),
        ("session_timeout_ms", True, "session_timeout_ms must be an int number of milliseconds, not bool"),
        ("member_id", None, "member_id must be a str, not NoneType"),
        ("protocol_type", b"consumer", "protocol_type must be a str, not bytes"),
    ],
)
def test_bad_fields_are_refused_naming_the_field(field, value, message):
    kwargs = dict(
        member_id="m",
        group_id="g",
        client_id="c",
        client_host="h",
        rebalance_timeout_ms=60000,
        session_timeout_ms=10000,
        protocol_type="consumer",
        supported_protocols=[("range", b"")],
    )
    kwargs[field] = value
    with pytest.raises(TypeError, match=message):
        MemberMetadata(**kwargs)


@pytest.mark.parametrize(
    ("protocols", "message"),
    [
        ("range", "supported_protocols must be a list of \\(name, metadata\\) pairs, not str"),
        ([("range",)], "supported_protocols\\[0\\] must be a \\(name, metadata\\) pair"),
        (
            [("range", b""), ("roundrobin", "meta")],
            "supported_protocols\\[1\\] must be \\(str, bytes\\), not \\(str, str\\)",
        ),
    ],
)
def test_bad_protocols_are_refused_naming_the_entry(protocols, message):
    with pytest.raises(TypeError, match=message):
        member(protocols)
    m = member([("range", b"")])
    with pytest.raises(TypeError, match=message):
        m.supported_protocols = protocols
    assert m.supported_protocols == [("range", b"")]
