"""What one campaign run is asked to do and what it reports.

This is the contract between the runners (``conformance.campaign.run_one``, called
in-process or inside Spark executors) and the results datasets
(``results``), which flatten these records into Parquet rows.
"""
from __future__ import annotations

from typing import Literal

import attrs

Verdict = Literal["pass", "fail", "error"]
PropertyVerdictValue = Literal["pass", "fail", "error", "not_applicable"]


@attrs.frozen(slots=True)
class RunConfig:
    campaign: str
    seed: int
    adapter: str  # adapter spec string, e.g. "reference", "mutant:vote-not-durable"
    scenario: str  # "dledger", "truncation", "controller"
    profile: str  # e.g. "dledger-0.4", "rocketmq-5.1"
    group_size: int
    fault_mix: str  # "none", "crash", "partition", "lossy", "mixed"
    duration_ms: int  # length of the fault phase in simulated milliseconds
    # the search's lineage (conformance/search.py): () for a run generated from its seed;
    # else the seeds of its ancestors, oldest first: the script of origin[0], mutated by
    # each later ancestor's seed and then by this run's own
    origin: tuple[int, ...] = ()
    # a searched run's: the campaign's fault mixes, whose faults and nemeses its lineage's
    # insert edits draw from (conformance/search.py); () for a sampled run, and for a
    # lineage whose edits draw only from its own ``fault_mix``
    search_fault_mixes: tuple[str, ...] = ()
    # a searched run's: the group size of its lineage's first script (``origin[0]``'s, which
    # ``campaign.script_for`` generates; ``group_size`` is the size the run ran with, once
    # its lineage's resize edits added or removed nodes); None for a sampled run (the same)
    origin_group_size: int | None = None
    # a searched run's: the campaign's group sizes, between which its lineage's resize
    # edits move (dledger, raft); () for a sampled run, and for a lineage that keeps its size
    search_group_sizes: tuple[int, ...] = ()

    @property
    def root_group_size(self) -> int:
        """The group size of the script this run's lineage starts from (generated from
        ``origin[0]``, or from its own seed)."""
        return self.group_size if self.origin_group_size is None else self.origin_group_size


@attrs.frozen(slots=True)
class PropertyVerdict:
    name: str  # invariant name, e.g. "election-safety"
    verdict: PropertyVerdictValue
    violations: int = 0
    first_step: int | None = None


@attrs.frozen(slots=True)
class Metric:
    """One measurement; a run may report the same name several times (failover_ms)."""

    name: str  # time_to_first_leader_ms, failover_ms, terms_per_election, messages_per_election
    value: float


@attrs.frozen(slots=True)
class Coverage:
    """How often an outcome of a spec decision procedure was exercised in the run."""

    procedure: str  # e.g. "handle_vote"
    outcome: str  # e.g. "REJECT_TERM_NOT_READY"
    count: int


@attrs.frozen(slots=True)
class Counterexample:
    property: str
    message: str  # one line: what was violated, where
    script: str  # minimal scenario script (conformance/script.py format), replayable
    trace_jsonl: str  # canonical JSON lines of the minimal script's trace (for diagrams)
    original_steps: int  # length of the generated script
    shrunk_steps: int  # length of ``script`` (without its expect lines)
    shrunk: bool = True  # False: the generated script cut after the violating step, not shrunk
    # Another property ``script`` violated strictly earlier in simulated time, the first
    # of them, and how many simulated ms before this one's first violation: this
    # violation may be a consequence of that one (a checker goes on from the spec's
    # reading after a wrong step, so one slip can break several properties). None:
    # nothing was violated before it.
    preceded_by: str | None = None
    preceded_by_ms: int | None = None


@attrs.frozen(slots=True)
class RunResult:
    config: RunConfig
    implementation: str
    implementation_version: str
    verdict: Verdict
    steps: int
    simulated_ms: int
    wall_ms: float
    elections: int
    leader_changes: int
    max_term: int
    first_violation: str | None = None
    first_violation_step: int | None = None
    properties: tuple[PropertyVerdict, ...] = ()
    metrics: tuple[Metric, ...] = ()
    coverage: tuple[Coverage, ...] = ()
    # one per violated property (in the order they were first violated)
    counterexamples: tuple[Counterexample, ...] = ()
    error: str | None = None  # one line, for verdict == "error"
