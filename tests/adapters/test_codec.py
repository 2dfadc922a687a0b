"""The codec: every operation's arguments and answers survive JSON, and every bad value is
refused with the path of the value named (docs/adapter-protocol.md, "Values")."""
import json
from typing import Optional

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters import codec
from adapters.operations import OPERATIONS
from conformance.strategies import ARGUMENTS
from spec.dledger.member_state import MemberView
from spec.dledger.records import Role
from spec.dledger.vote import VoteDecision

DLEDGER = codec.registry("dledger")
MEMBER = MemberView("n1", frozenset({"n1", "n2", "n3"}), 3, "n2", None, Role.FOLLOWER, 2, 7)


def through_json(value):
    return json.loads(json.dumps(codec.encode(value)))


@given(st.sampled_from(sorted(OPERATIONS)).flatmap(lambda name: st.tuples(st.just(name), ARGUMENTS[name])))
def test_every_operation_survives_json(case):
    """Arguments and the spec's answer decode back to what was encoded, in each operation's namespace."""
    name, args = case
    op = OPERATIONS[name]
    reg = codec.registry(op.namespace)
    for param, hint in op.params:
        assert codec.decode(through_json(args[param]), hint, reg, param) == args[param]
    answer = op.spec(op.profiles[0] if op.profiles else None, **args)
    assert op.canonical(codec.decode(through_json(answer), op.result, reg, "result")) == op.canonical(answer)


def member(**changes):
    raw = through_json(MEMBER)
    raw.update(changes)
    return raw


@pytest.mark.parametrize("raw, hint, message", [
    (member(extra=1), MemberView, "member: unknown field(s) extra for MemberView"),
    (member(curr_term="3"), MemberView, "member.curr_term: expected an integer, got '3'"),
    (member(curr_term=True), MemberView, "member.curr_term: expected an integer, got True"),
    (member(voted_for=5), MemberView, "member.voted_for: does not fit"),
    (member(role="BOSS"), MemberView, "member.role: expected one of CANDIDATE, FOLLOWER, LEADER, got 'BOSS'"),
    (member(role=["LEADER"]), MemberView, "member.role: expected one of"),
    (member(peers=["n1", 3]), MemberView, "member.peers[1]: expected a string, got 3"),
    (member(peers="n1"), MemberView, "member.peers: expected an array, got str"),
    ({k: v for k, v in member().items() if k != "self_id"}, MemberView, "member.self_id: missing field"),
    (member(**{"@type": "VoteRequest"}), MemberView, "member: expected type MemberView, got 'VoteRequest'"),
    (member(**{"@type": ["MemberView"]}), MemberView, "member: expected type MemberView, got ['MemberView']"),
    ([1], MemberView, "member: expected a MemberView object, got list"),
    ({"@type": "VoteDecision", "result": "ACCEPT", "reply_term": 1, "effects": [{"@type": "Nope"}]}, VoteDecision,
     "member.effects[0]: an object needs a known \"@type\" (got 'Nope')"),
    ({"@type": "VoteDecision", "result": "ACCEPT", "reply_term": 1, "effects": [], "row": 3}, VoteDecision,
     "member.row: expected a string, got 3"),
    ([1, 2, 3], tuple[int, int], "member: expected 2 items, got 3"),
    ([1, "x"], tuple[int, ...], "member[1]: expected an integer, got 'x'"),
    ([[1]], dict[int, int], "member[0]: expected a [key, value] pair"),
    ([[1, "x"]], dict[int, int], "member[0][1]: expected an integer, got 'x'"),
    ("x", Optional[int], "member: does not fit typing.Optional[int] (member: expected an integer, got 'x')"),
])
def test_bad_values_are_refused_with_their_path(raw, hint, message):
    with pytest.raises(codec.CodecError) as err:
        codec.decode(raw, hint, DLEDGER, "member")
    assert str(err.value).startswith(message)


def test_unions_of_plain_types_keep_each_value_and_refuse_others():
    """``int | None`` and ``str | None`` fields are checked inline (the compiled fast path):
    the same answers as trying each option in turn."""
    assert codec.decode(member(voted_for=None, leader_id="n3"), MemberView, DLEDGER) == attrs.evolve(
        MEMBER, voted_for=None, leader_id="n3")
    assert codec.decode([True, 1], tuple[bool | int, ...], DLEDGER) == (True, 1)
    assert codec.decode([1, 2.5], tuple[float, ...], DLEDGER) == (1.0, 2.5)
    assert type(codec.decode([1], tuple[float | int, ...], DLEDGER)[0]) is float  # the first option that fits
    with pytest.raises(codec.CodecError, match=r"\[0\]: does not fit"):
        codec.decode([1.5], tuple[int | None, ...], DLEDGER)


def test_decoders_are_compiled_once_per_type():
    assert codec.decoder(MemberView) is codec.decoder(MemberView)
    assert codec.decoder(tuple[int, ...]) is codec.decoder(tuple[int, ...])
