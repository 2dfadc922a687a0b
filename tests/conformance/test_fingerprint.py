"""The handler-level fingerprint names the profile each procedure of an implementation matches."""
import shutil
import sys
from pathlib import Path

import pytest

from adapters import resolve
from conformance.cli import main
from conformance.fingerprint import PROCEDURES, fingerprint_adapter, fingerprint_procedures, render
from reference.mutants import MUTANTS
from reference.procedures import REFERENCE_PROCEDURES
from spec.dledger.profiles import PROFILES

SAMPLES = 300
JS_SHIM = Path(__file__).parents[1] / "adapters" / "shims" / "dledger_shim.js"


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_the_reference_matches_its_own_profile_everywhere(profile):
    matches = fingerprint_procedures(REFERENCE_PROCEDURES, PROFILES[profile], SAMPLES)
    assert set(matches) == set(PROCEDURES)
    assert all(profile in names for names in matches.values()), matches


@pytest.mark.parametrize("mutant,procedure,names", [
    ("pr48-term-before-log", "handle_vote", ["dledger-0.1"]),  # V-A order in a 0.4 node
    ("issue247-ignore-higher-term", "heartbeat_round", ["dledger-0.1", "dledger-0.2"]),  # H-A in a 0.4 node
    ("g1-commit-rule", "commit_rule", ["dledger-0.1", "dledger-0.2"]),
    ("double-vote", "handle_vote", []),  # no release ever granted two candidates a term: no profile
])
def test_a_mutant_is_named_by_its_fingerprint(mutant, procedure, names):
    profile, procedures = MUTANTS[mutant].apply(PROFILES["dledger-0.4"])
    assert fingerprint_procedures(procedures, profile, SAMPLES)[procedure] == names


def test_through_the_protocol_the_reference_and_its_mutants_fingerprint_the_same():
    for spec in ("reference", "mutant:pr48-term-before-log"):
        name = spec.partition(":")[2]
        profile, procedures = MUTANTS[name].apply(PROFILES["dledger-0.4"]) if name else (
            PROFILES["dledger-0.4"], REFERENCE_PROCEDURES)
        assert fingerprint_adapter(resolve(spec), SAMPLES) == fingerprint_procedures(procedures, profile, SAMPLES)


def test_render_names_profiles_briefly_and_marks_what_does_not_apply():
    text = render({"handle_vote": ["dledger-0.2", "dledger-0.4"], "heartbeat_round": ["dledger-0.2"],
                   "handle_push": None, "commit_rule": []})
    assert text == ("handle_vote: dledger-0.2/0.4; heartbeat_round: dledger-0.2; handle_push: not applicable; "
                    "commit_rule: no profile")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_fingerprint_command_on_a_foreign_shim(capsys):
    assert main(["fingerprint", "--adapter", f"stdio:node {JS_SHIM}", "--samples", str(SAMPLES)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("dledger-shim-js 1.0.0 (stdio:node ")
    assert "handle_vote: dledger-0.2/0.4; handle_heartbeat: dledger-0.1/0.2/0.4; parse_vote_result: not applicable" \
        in out
    # a shim with a bug matches no profile: exit 1
    assert main(["fingerprint", "--adapter", f"stdio:node {JS_SHIM} --bug skip-voted", "--samples",
                 str(SAMPLES)]) == 1
    assert "handle_vote: no profile" in capsys.readouterr().out


def test_fingerprint_command_rejects_bad_input(capsys):
    assert main(["fingerprint", "--adapter", "nonsense"]) == 2
    assert "unknown adapter 'nonsense'" in capsys.readouterr().err
    assert main(["fingerprint", "--samples", "0"]) == 2
