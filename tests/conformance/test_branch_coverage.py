"""The handler-level generators reach every branch of spec/'s decision procedures.

tests/conformance/branch_coverage.py measures it with coverage.py (every operation at the
differential tests' budget, the spec under every profile); this runs it as a user does, in
a process of its own (so that a pytest run under coverage is not disturbed), and fails
below 100%, naming each branch missed. docs/testing.md, "Branch coverage", says what is in
scope and why the rest is not.
"""
import json
import subprocess
import sys

import pytest

from adapters.operations import OPERATIONS
from spec.controller.api import ELECT_MASTER_OUTCOMES
from spec.dledger.candidate import PARSE_OUTCOMES
from spec.dledger.heartbeat import HEARTBEAT_ROUND_OUTCOMES, HEARTBEAT_ROWS
from spec.dledger.log import PUSH_ROWS
from spec.dledger.vote import VOTE_OUTCOMES
from tests.conformance.branch_coverage import NOT_DECISIONS, ROOT, UNREACHABLE, _line, judged

# the procedure behind each family of operations: the scope must hold them (a measurement
# that saw nothing would otherwise pass)
ENTRY_POINTS = {
    ("spec/dledger/vote.py", "handle_vote"), ("spec/dledger/log.py", "handle_push"),
    ("spec/dledger/heartbeat.py", "decide_heartbeat_round"), ("spec/dledger/rounds.py", "candidate_round"),
    ("spec/controller/api.py", "alter_sync_state_set"), ("spec/controller/api.py", "elect_master"),
    ("spec/controller/elect_policy.py", "elect"), ("spec/controller/events.py", "apply_event"),
    ("spec/broker/sync_state_set.py", "maybe_shrink"), ("spec/truncation/epoch_file.py", "find_consistent_point"),
    ("spec/truncation/replication.py", "on_transfer_header"), ("spec/classic/master.py", "write_socket_round"),
}


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """One run of the measurement, as a user runs it: (the finished process, its JSON figures)."""
    out = tmp_path_factory.mktemp("branch-coverage") / "coverage.json"
    done = subprocess.run([sys.executable, "-m", "tests.conformance.branch_coverage", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    return done, json.loads(out.read_text())


def test_every_decision_branch_is_reached_at_the_differential_tests_budget(measured):
    done, figures = measured
    print(done.stdout)
    missed = [f"{f['module']}:{f['function']} {f['missing']}" for f in figures["functions"]
              if f["covered"] != f["branches"]]
    assert done.returncode == 0 and not missed, done.stdout + done.stderr
    scope = {(f["module"], f["function"]) for f in figures["functions"]}
    assert ENTRY_POINTS <= scope, ENTRY_POINTS - scope
    assert sum(f["branches"] for f in figures["functions"]) > 300
    assert set(figures["outcomes"]) == set(OPERATIONS)  # every operation was driven


# operation -> (the outcomes its spec names, how a counted label shows one: its head or its row)
DECLARED_OUTCOMES = {
    "dledger.handle_vote": (VOTE_OUTCOMES, "head"),
    "dledger.handle_push": (PUSH_ROWS, "row"),
    "dledger.handle_heartbeat": (HEARTBEAT_ROWS, "row"),
    "dledger.decide_heartbeat_round": (HEARTBEAT_ROUND_OUTCOMES, "head"),
    "dledger.parse_vote_result": (PARSE_OUTCOMES, "head"),
    "controller.handle": (ELECT_MASTER_OUTCOMES, "row"),
}


def test_every_declared_outcome_is_reached_by_its_own_operation(measured):
    """Branch coverage can be reached through another operation (a candidate round parses
    votes too); each operation's own generator must reach every outcome its spec names."""
    outcomes = measured[1]["outcomes"]
    missing = {}
    for operation, (declared, part) in DECLARED_OUTCOMES.items():
        seen = {label.split(":")[-1].split("/")[0 if part == "head" else -1] for label in outcomes[operation]}
        missing[operation] = sorted(set(declared) - seen)
    assert not any(missing.values()), missing


def _report(missing, executed=((1, 2),)):
    region = {"executed_lines": [1], "missing_branches": [list(a) for a in missing],
              "summary": {"num_branches": len(missing) + len(executed), "covered_branches": len(executed)}}
    return {"files": {"spec/controller/checks.py": {"functions": {"first_match": region, "": region,
                                                                  "never": {**region, "executed_lines": []}}},
                      "spec/controller/records.py": {"functions": {"known": region}}}}


def test_a_missed_branch_fails_and_only_the_listed_unreachable_ones_are_exempt():
    checks = (ROOT / "spec/controller/checks.py").read_text().splitlines()
    loop = next(i for i, text in enumerate(checks, 1) if text.strip() == "for rule in rules:")
    raise_line = next(i for i, text in enumerate(checks, 1) if text.strip().startswith("raise ValueError"))
    scope, unreached = judged(_report([(loop, raise_line)]))
    assert [(f.module, f.function, f.complete) for f in scope] == [("spec/controller/checks.py", "first_match", True)]
    assert unreached == {"spec/controller/checks.py": ["never"]}  # records.py is data: out of scope
    scope, _ = judged(_report([(loop, loop + 1)]))
    assert not scope[0].complete and scope[0].missing == ((loop, loop + 1),)


def test_every_unreachable_entry_names_lines_that_exist():
    """A stale entry (the code moved or changed) must not exempt anything silently."""
    cache: dict = {}
    for module, function, source, target in UNREACHABLE:
        lines = [_line(module, i, cache) for i in range(1, len((ROOT / module).read_text().splitlines()) + 1)]
        assert source in lines and target in lines, (module, function)
    assert "records.py" in NOT_DECISIONS and "codec.py" in NOT_DECISIONS
