"""The handler-level fingerprint names the profile each procedure of an implementation matches."""
import shutil
import sys
from pathlib import Path

import pytest

from adapters import resolve
from adapters.reference_server import ReferenceServer
from adapters.transports import InProcessAdapter
from cli.main import main
from adapters.operations import OPERATIONS
from conformance.fingerprint import PROBE_OPERATION, VARIATION_FREE, fingerprint, probes, render
from spec.dledger.profiles import PROFILES

SAMPLES = 300
JS_SHIM = Path(__file__).parents[1] / "fixtures" / "js" / "dledger_shim.js"


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_the_reference_matches_its_own_profile_everywhere(profile):
    adapter = InProcessAdapter(f"reference@{profile}", ReferenceServer(dledger_profile=profile))
    adapter.hello()
    matches = fingerprint(adapter, SAMPLES)
    assert set(matches) == set(probes())
    declared = adapter.info.profiles  # every family's own profile: dledger's as given, the others' defaults
    assert all(declared[OPERATIONS[PROBE_OPERATION.get(op, op)].namespace] in names
               for op, names in matches.items()), matches


@pytest.mark.parametrize("mutant,operation,names", [
    ("pr48-term-before-log", "dledger.handle_vote", ["dledger-0.1"]),  # V-A order in a 0.4 node
    ("issue247-ignore-higher-term", "dledger.decide_heartbeat_round", ["dledger-0.1", "dledger-0.2"]),  # H-A
    ("g1-commit-rule", "dledger.leader_commit_index", ["dledger-0.1", "dledger-0.2"]),
    ("double-vote", "dledger.handle_vote", []),  # no release ever granted two candidates a term: no profile
])
def test_a_mutant_is_named_by_its_fingerprint(mutant, operation, names):
    assert fingerprint(resolve(f"mutant:{mutant}"), SAMPLES)[operation] == names


def test_render_names_procedures_briefly_and_marks_what_does_not_apply():
    text = render({"dledger.handle_vote": ["dledger-0.2", "dledger-0.4"],
                   "dledger.decide_heartbeat_round": ["dledger-0.2"], "dledger.handle_push": None,
                   "dledger.leader_commit_index": []})
    assert text == ("handle_vote: dledger-0.2/0.4; heartbeat round: dledger-0.2; log push: not applicable; "
                    "commit rule: no profile")


def test_an_implementation_without_handlers_is_not_applicable_everywhere():
    assert set(fingerprint(resolve("pysyncobj"), SAMPLES).values()) == {None}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_fingerprint_command_on_a_foreign_shim(capsys):
    assert main(["fingerprint", "--adapter", f"stdio:node {JS_SHIM}", "--samples", str(SAMPLES), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "dledger-shim-js 1.0.0" in out
    assert "handle_vote: dledger-0.2/0.4; handle_heartbeat: dledger-0.1/0.2/0.4; vote parse: not applicable" in out
    main(["fingerprint", "--adapter", f"stdio:node {JS_SHIM} --bug skip-voted", "--samples", str(SAMPLES),
          "--quiet"])
    assert "handle_vote: no profile" in capsys.readouterr().out


def test_a_result_of_the_wrong_shape_is_the_implementations_error(capsys):
    """An answer that does not decode as the operation's record: one line naming the
    operation, exit 3 (as ``rmqha check`` says it), never a ``CodecError`` traceback."""
    shim = Path(__file__).parents[1] / "fixtures" / "misbehaving_adapter.py"
    assert main(["fingerprint", "--quiet", "--samples", "20", "--adapter",
                 f"stdio:{sys.executable} {shim} wrong-vote"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "answered dledger.handle_vote with a value that is not a VoteDecision" in err, err


FEW = "40"


def test_every_handler_level_operation_is_fingerprinted_or_judged(capsys):
    """Profile-dependent operations name profiles; the others say they have no profile
    variation and give their verdict, never a match."""
    assert main(["fingerprint", "--adapter", "reference", "--samples", FEW, "--quiet"]) == 0
    out = capsys.readouterr().out
    table, free = out.split("no profile variation (judged against the spec):")
    assert "controller calls" in table and "rocketmq-5.1" in table and "classic.submit_replica_request" in table
    free_ops = {line.split()[0] for line in free.splitlines() if line.startswith("  ")}
    assert free_ops == set(VARIATION_FREE)
    assert all(line.split(None, 1)[1] == "agrees" for line in free.splitlines() if line.startswith("  "))
    assert "broker.maybe_shrink:" not in out.splitlines()[-4]  # the match line names profiles only
    assert set(OPERATIONS) == {PROBE_OPERATION.get(p, p) for p in probes()} | set(VARIATION_FREE)


def test_known_upstream_departures_keep_the_profile_and_are_named(capsys):
    """Answers that reproduce upstream's own departures (#10578's comparator, the NPE of an
    election without heartbeat data) are rocketmq-5.1's, named, as ``rmqha check`` counts
    them; before, the fingerprint said such a build matched no profile."""
    assert main(["fingerprint", "--adapter", "python:tests.fixtures.controller_as_released:controller",
                 "--samples", "200", "--quiet"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.strip().startswith("controller calls"))
    assert "rocketmq-5.1 but for known departures (" in line, out
    assert "elect-offset-comparator-overflow" in line and "elect-candidate-without-live-info-throws" in line
    assert "rocketmq-5.1: reproduced by every profile-dependent procedure the implementation answers" in out
    assert "against the spec, where no profile varies" not in out


@pytest.mark.parametrize("slip,line", [
    ("shrink_lag_at_bound", "broker.maybe_shrink"),
    ("elect_priority_reversed", "controller calls"),
])
def test_a_handler_slip_shows_in_the_fingerprint(capsys, slip, line):
    assert main(["fingerprint", "--adapter", f"python:tests.fixtures.handler_slips:{slip}", "--samples", FEW,
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    found = [x for x in out.splitlines() if x.strip().startswith(line)]
    assert found and ("disagrees" in found[0] or "no profile" in found[0]), found
    if "disagrees" in found[0]:  # the last line says so: the profile lines speak of profiles only
        assert out.splitlines()[-1].startswith(f"against the spec, where no profile varies: {line} (disagrees)")
