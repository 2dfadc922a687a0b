"""Handler level, differentially: the same arguments to ``--adapter`` and to the spec.

Every operation of adapters/operations.py is tested with Hypothesis-generated
arguments; the implementation's answer must equal the spec's (under the profile the
implementation declares) in every part that matters for conformance, or reproduce a
known upstream departure (named in the run's summary). An operation the implementation
does not offer, or answers ``unsupported`` for every input, is skipped and reported as
not applicable, never passed.

The profile's examples are split across the operation's strata (one strategy per aim:
each row, each comparison's edge; ``conformance.strategies.strata``), and the run's
summary counts, per operation, the outcomes the spec gave (``conformance/outcomes.py``):
an outcome missing there is one the generators did not reach.
tests/conformance/test_branch_coverage.py holds the same generators to 100% of spec/'s
decision branches.
"""
import pytest
from hypothesis import Phase, given, settings

from adapters import resolve
from adapters.operations import OPERATIONS
from adapters.protocol import Unsupported
from conformance.differential import compare, judged_profile
from conformance.outcomes import outcome
from conformance.strategies import ARGUMENTS, strata
from tests.budgets import share, stratum_share


def test_every_operation_has_arguments():
    assert set(ARGUMENTS) == set(OPERATIONS)


def differential(implementation, name, on_departure=None, on_outcome=None, shrink=True) -> tuple[int, list[str]]:
    """The differential test of one operation: the profile's examples split across its strata,
    each answer compared with the spec's; an unexplained disagreement fails (AssertionError,
    shrunk by Hypothesis unless ``shrink`` is off). (inputs judged, reasons given for inputs
    answered ``unsupported``)."""
    judged, unsupported = [0], []
    profile = judged_profile(implementation, name)
    aims = strata(name)
    phases = {} if shrink else {"phases": [Phase.explicit, Phase.reuse, Phase.generate]}

    for strategy in aims.values():
        @settings(share(stratum_share(len(aims)), **phases))
        @given(strategy)
        def agrees(args):
            try:
                disagreement = compare(implementation, name, args)
            except Unsupported as exc:  # this input is outside what the implementation drives
                unsupported.append(str(exc))
                return
            judged[0] += 1
            if on_outcome is not None:
                on_outcome(name, outcome(name, args, OPERATIONS[name].spec(profile, **args)))
            if disagreement is not None:
                assert disagreement.explained, disagreement.render()
                if on_departure is not None:
                    on_departure(implementation.spec, name, disagreement)

        agrees()
    return judged[0], unsupported


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_operation_agrees_with_the_spec(implementation, name, known_departures, outcome_counts):
    """Every answer agrees with the spec, or reproduces a known upstream departure, which is
    reported by name at the end of the run (``conformance/departures.py``)."""
    if not implementation.info.supports(name):
        pytest.skip(f"not applicable: {implementation.info.implementation} does not implement {name}")
    judged, unsupported = differential(implementation, name, known_departures.record, outcome_counts.record)
    if not judged:
        pytest.skip(f"not applicable: {name} ({unsupported[0] if unsupported else 'no input judged'})")


def test_mutant_disagrees_where_its_bug_is():
    from spec.dledger.member_state import MemberView
    from spec.dledger.records import VoteRequest

    args = {"member": MemberView("n1", frozenset({"n1", "n2", "n3"}), 5, "n3", None),
            "request": VoteRequest(5, "n2", -1, -1), "self_vote": False}
    disagreement = compare(resolve("mutant:double-vote"), "dledger.handle_vote", args)
    assert disagreement is not None and disagreement.got[0].name == "ACCEPT"
    assert disagreement.expected[0].name == "REJECT_ALREADY_VOTED"
    assert compare(resolve("reference"), "dledger.handle_vote", args) is None
