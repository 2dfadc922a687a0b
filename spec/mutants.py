"""The record every known-bad variant ("mutant") carries, whichever layer it changes.

Each mutant set keeps its records beside the variants themselves: DLedger in
``reference/mutants.py``, the controller and broker in ``reference/mutants_controller.py``,
the truncation algorithm in ``spec/truncation/variants.py``. Each set's record type
extends this one with what that set changes (procedures, a rules bundle, algorithm
flags); a scenario's registry (``conformance/scenarios/registry.py``) lists the records
as they are, and ``rmqha mutants`` reads the fields below.
"""
from __future__ import annotations

import attrs


@attrs.frozen(slots=True)
class MutantInfo:
    """One known-bad variant, runnable as adapter ``mutant:NAME``."""

    name: str
    issue: str | None  # the upstream issue or PR it reproduces ("dledger #278"); None for a synthetic one
    description: str
    violates: str | None  # the scenario invariant expected to catch it; None: none is recorded
