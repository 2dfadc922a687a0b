"""Handler level, differentially: the same arguments to ``--adapter`` and to the spec.

Every operation of adapters/operations.py is tested with Hypothesis-generated
arguments; the implementation's answer must equal the spec's (under the profile the
implementation declares) in every part that matters for conformance. An operation the
implementation does not offer is skipped and reported as not applicable, never passed.
"""
import pytest
from hypothesis import given, settings

from adapters import codec, resolve
from adapters.operations import OPERATIONS, namespace_profile
from adapters.protocol import Unsupported
from conformance.strategies import ARGUMENTS


@pytest.fixture(scope="module")
def implementation(adapter):
    return resolve(adapter)


def test_every_operation_has_arguments():
    assert set(ARGUMENTS) == set(OPERATIONS)


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_operation_agrees_with_the_spec(implementation, name):
    if name not in implementation.info.operations:
        pytest.skip(f"not applicable: {implementation.info.implementation} does not implement {name}")
    op = OPERATIONS[name]
    profile = namespace_profile(name, implementation.info.profiles)
    reg = codec.registry(op.namespace)

    @settings(max_examples=40)
    @given(ARGUMENTS[name])
    def agrees(args):
        expected = op.canonical(op.spec(profile, **args))
        try:
            raw = implementation.call(name, {k: codec.encode(v) for k, v in args.items()})
        except Unsupported:
            pytest.skip(f"not applicable: {name}")
        got = op.canonical(codec.decode(raw, op.result, reg, "result"))
        assert got == expected, f"{name}{args}: implementation {got}, spec {expected}"

    agrees()


def test_mutant_disagrees_where_its_bug_is():
    from adapters.codec import encode
    from spec.dledger.member_state import MemberView
    from spec.dledger.records import VoteRequest

    mutant = resolve("mutant:double-vote")
    member = MemberView("n1", frozenset({"n1", "n2", "n3"}), 5, "n3", None)
    args = {"member": encode(member), "request": encode(VoteRequest(5, "n2", -1, -1)), "self_vote": False}
    assert mutant.call("dledger.handle_vote", args)["result"] == "ACCEPT"
    assert resolve("reference").call("dledger.handle_vote", args)["result"] == "REJECT_ALREADY_VOTED"
