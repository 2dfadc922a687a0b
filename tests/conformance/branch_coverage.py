"""Branch coverage of spec/'s decision procedures under the handler-level generators.

The differential tests (tests/conformance/test_handler_level.py) and ``rmqha check`` /
``rmqha fingerprint`` feed every handler-level operation arguments drawn from
``conformance.strategies.ARGUMENTS``. This measures, with coverage.py, which branches of
spec/ those arguments reach: every operation gets the differential tests' budget (the
active Hypothesis profile's examples, ``ci``: 60, ``explore``: 2,000) drawn from its
strategy, and the spec answers each under *every* profile the operation depends on (an
implementation declares one profile, the generators must serve them all).

Scope (docs/testing.md, "Branch coverage"): every function of spec/ that the operations
enter, transitively, is a decision procedure at handler level, and each must have all its
branches taken. A function entered is all-or-nothing: a helper that only a missed branch
calls shows as that missed branch of its caller. Left out, with the reason: data records
and their codecs (``records.py``, ``messages.py``, ``wire.py``, ``codec.py``,
``frozenmap.py``: constructors and converters, not decisions), module and class bodies
(run at import). Functions no operation reaches (node-level procedures judged by step
conformance and the scenarios, invariants, proofs, abstract states) are listed, not
judged.

Run it as a user: ``python -m tests.conformance.branch_coverage`` (prints the table, exit 1
below 100%); tests/conformance/test_branch_coverage.py runs it in CI.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import attrs
import coverage
from hypothesis import HealthCheck, Phase, given, settings

from adapters.operations import OPERATIONS
from conformance.departures import UNDER_VARIANT
from conformance.outcomes import outcome
from conformance.strategies import strata
from spec.controller.rules import UnsupportedRequest
from spec.truncation.variants import MUTANTS as TRUNCATION_VARIANTS
from tests.budgets import share, stratum_share

ROOT = Path(__file__).parents[2]
# data records and codecs: constructors, converters and lookups, no decision of the protocol
NOT_DECISIONS = ("records.py", "messages.py", "wire.py", "codec.py", "frozenmap.py")


def draw(name: str, fraction: float = 1.0) -> list[dict]:
    """The operation's arguments: ``fraction`` of the active profile's examples, split across
    its strata as the differential tests split them (``conformance.strategies.strata``)."""
    drawn: list[dict] = []
    aims = strata(name)
    for strategy in aims.values():
        @settings(share(stratum_share(len(aims), fraction)), database=None, deadline=None,
                  phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
        @given(strategy)
        def collect(args):
            drawn.append(args)

        collect()
    return drawn


def drive(samples: dict[str, list[dict]]) -> Counter:
    """Every sample through the spec under every profile of its operation, and the epoch-file
    operations under every variant of spec/truncation/algebra.py (the upstream releases'
    departures and the catalogued slips, judged by ``conformance/departures.py``);
    answers' outcomes counted."""
    counts: Counter = Counter()
    for name, drawn in samples.items():
        for variant in TRUNCATION_VARIANTS.values():
            for args in drawn if name in UNDER_VARIANT else ():
                UNDER_VARIANT[name](args, variant.variant)
        op = OPERATIONS[name]
        for profile in op.profiles or (None,):
            for args in drawn:
                try:
                    answer = op.spec(profile, **args)
                except UnsupportedRequest:  # a call the profile's release does not have
                    counts[name, "unsupported by the profile"] += 1
                    continue
                counts[name, outcome(name, args, answer)] += 1
    return counts


# Branches no handler-level input can take, each with the reason: (module, function, the
# source line the branch leaves, the line it goes to) -> why. Lines, not numbers, so an edit
# elsewhere in the file keeps them.
UNREACHABLE = {
    ("spec/controller/checks.py", "first_match", "for rule in rules:",
     'raise ValueError(f"no rule decided: {[r.name for r in rules]}")'):
        "every rule table ends with a row that always decides; the raise guards a malformed table",
    ("spec/dledger/candidate.py", "next_time_after_parse", "if kind is NextVote.UNCHANGED:", "return current"):
        "candidate_round calls it only when the decision moves the time; step conformance "
        "(spec/steps/dledger.py) calls it with UNCHANGED",
    ("spec/dledger/rounds.py", "heartbeat_round",
     "elif isinstance(e, BecomeCandidate) and may_become_candidate(member.curr_term, e.term):",
     "for e in decision.effects:"):
        "a role change the member state refuses: no spec row emits one (a mutant's procedures, "
        "rules=..., can)",
    ("spec/dledger/rounds.py", "candidate_round",
     "elif isinstance(e, BecomeLeader) and may_become_leader(member.curr_term, e.term):",
     "for e in decision.effects:"):
        "a role change the member state refuses: no spec row emits one (a mutant's procedures, "
        "rules=..., can)",
    ("spec/truncation/algebra.py", "append", "if ops.concrete:", "ok = ops.and_(ok, f.count < len(f.epochs))"):
        "the symbolic (z3) form of the rule: proved by tests/truncation, not answered at handler level",
}


def _line(module: str, number: int, cache: dict) -> str:
    if module not in cache:
        cache[module] = (ROOT / module).read_text().splitlines()
    return cache[module][abs(number) - 1].strip()


@attrs.frozen
class FunctionCoverage:
    module: str
    function: str
    branches: int
    covered: int
    missing: tuple[tuple[int, int], ...]

    @property
    def complete(self) -> bool:
        return self.covered == self.branches


def judged(report: dict) -> tuple[list[FunctionCoverage], dict[str, list[str]]]:
    """(functions in scope, module -> functions never entered) from a coverage.py JSON report."""
    scope: list[FunctionCoverage] = []
    unreached: dict[str, list[str]] = defaultdict(list)
    lines: dict[str, list[str]] = {}
    for path, data in sorted(report["files"].items()):
        if Path(path).name in NOT_DECISIONS or "/proofs/" in path:
            continue
        for function, region in data.get("functions", {}).items():
            if not function:  # the module body: runs at import
                continue
            if not region["executed_lines"]:
                unreached[path].append(function)
                continue
            summary = region["summary"]
            missing = tuple(tuple(arc) for arc in region["missing_branches"]
                            if (path, function, _line(path, arc[0], lines), _line(path, arc[1], lines))
                            not in UNREACHABLE)
            exempt = len(region["missing_branches"]) - len(missing)
            scope.append(FunctionCoverage(path, function, summary["num_branches"] - exempt,
                                          summary["covered_branches"], missing))
    return scope, dict(unreached)


def measure(fraction: float = 1.0) -> tuple[list[FunctionCoverage], dict[str, list[str]], Counter]:
    samples = {name: draw(name, fraction) for name in sorted(OPERATIONS)}
    cov = coverage.Coverage(branch=True, source=[str(ROOT / "spec")], data_file=None)
    cov.start()
    try:
        counts = drive(samples)
    finally:
        cov.stop()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "coverage.json"
        cov.json_report(outfile=str(out), include=[str(ROOT / "spec" / "*")])
        report = json.loads(out.read_text())
    report["files"] = {str(Path(p).resolve().relative_to(ROOT)) if Path(p).is_absolute() else p: d
                       for p, d in report["files"].items()}
    scope, unreached = judged(report)
    return scope, unreached, counts


def per_module(scope: list[FunctionCoverage]) -> dict[str, tuple[int, int, int]]:
    """module -> (functions, branches covered, branches)."""
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for f in scope:
        row = table[f.module]
        row[0] += 1
        row[1] += f.covered
        row[2] += f.branches
    return {m: tuple(v) for m, v in sorted(table.items())}


def render(scope: list[FunctionCoverage], unreached: dict[str, list[str]]) -> str:
    lines = ["branch coverage of spec/'s decision procedures under the handler-level generators",
             f"{'module':36s} {'procedures':>10s} {'branches':>9s} {'covered':>8s}"]
    for module, (functions, covered, branches) in per_module(scope).items():
        pct = 100.0 * covered / branches if branches else 100.0
        lines.append(f"{module:36s} {functions:10d} {branches:9d} {pct:7.1f}%")
    covered = sum(f.covered for f in scope)
    branches = sum(f.branches for f in scope)
    lines.append(f"{'total':36s} {len(scope):10d} {branches:9d} {100.0 * covered / max(branches, 1):7.1f}%")
    for f in scope:
        if not f.complete:
            arcs = ", ".join(f"{a}->{b}" for a, b in f.missing)
            lines.append(f"MISSED {f.module}:{f.function}: {f.branches - f.covered} branch(es): {arcs}")
    entered_modules = {f.module for f in scope}
    lines.append("not reached by any handler-level operation (node-level procedures, invariants, abstract "
                 "states; judged elsewhere):")
    for module, functions in sorted(unreached.items()):
        where = "" if module in entered_modules else " (whole module)"
        lines.append(f"  {module}{where}: {len(functions)} function(s)")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.branch_coverage", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", help="also write the figures here (per function, outcome counts)")
    parser.add_argument("--share", type=float, default=1.0,
                        help="share of the Hypothesis profile's examples per operation (default: %(default)s)")
    args = parser.parse_args(argv)
    import conftest  # noqa: F401  (the repository's Hypothesis profiles, as pytest loads them)
    scope, unreached, counts = measure(args.share)
    print(render(scope, unreached))
    if args.json:
        outcomes: dict[str, dict[str, int]] = defaultdict(dict)
        for (name, label), n in sorted(counts.items()):
            outcomes[name][label] = n
        Path(args.json).write_text(json.dumps({
            "profile": settings.default.max_examples,
            "functions": [attrs.asdict(f) for f in scope],
            "modules": {m: dict(zip(("functions", "covered", "branches"), v)) for m, v in per_module(scope).items()},
            "unreached": unreached, "outcomes": outcomes}, indent=1))
    return 0 if all(f.complete for f in scope) else 1


if __name__ == "__main__":
    sys.exit(main())
