"""z3 proofs: the reference holds at small bounds; each known-bad variant is refuted.

Larger bounds (K up to 5 and beyond) are timed in benchmarks/prove_truncation.py.
"""
import attrs
import pytest
import z3

from spec.proofs.truncation_model import PROPERTIES, VARIANTS, build_history, check, render_counterexample
from spec.truncation import algebra
from spec.truncation.algebra import REFERENCE


def test_reference_proved_for_two_epochs():
    verdicts = check("reference", K=2)
    assert {v.property: v.status for v in verdicts} == {p: "proved" for p in PROPERTIES}


# the property through which each variant shows at K=3 (found by `rmqha prove truncation`)
REFUTED_BY = {
    "max-of-end-offsets": "prefix-agreement",
    "ascending-scan": "maximality",
    "end-off-by-one": "prefix-agreement",
    "equal-start-append": "well-formed",
    "label-switched-before-header": "prefix-agreement",
    "finite-end-after-suffix-truncation": "well-formed",
    "upstream-empty-epoch": "existence",
    "header-epoch-not-recorded": "maximality",
    "ships-unflushed": "prefix-agreement",
}


@pytest.mark.parametrize("variant,prop", sorted(REFUTED_BY.items()))
def test_variant_refuted_with_a_readable_counterexample(variant, prop):
    (v,) = check(variant, K=3, properties=(prop,))
    assert v.status == "refuted"
    assert "epoch file" in v.counterexample and "log (epoch of each message" in v.counterexample


def test_every_variant_has_a_refutation_or_an_outside_the_model_case():
    assert set(VARIANTS) == set(REFUTED_BY) | {"epoch-only-match"}


def test_epoch_only_match_is_equivalent_inside_the_model():
    (v,) = check("epoch-only-match", K=2, properties=("prefix-agreement",))
    assert v.status == "proved"


def test_the_proof_needs_the_re_confirmation_rule(monkeypatch):
    """The histories re-confirm a master in its own epoch, and the keep-entry rule
    carries weight: with upstream's role change instead (the epoch's entry dropped and
    (epoch, max offset) appended again, moving the epoch's start) the reference is refuted."""
    keeping = algebra.change_to_master

    def moving_entry(f, epoch, valid_max_offset, had_dirty_tail, ops, variant=algebra.REFERENCE, enabled=True):
        rule = keeping(f, epoch, valid_max_offset, had_dirty_tail, ops, variant, enabled)
        dropped = algebra.truncate_suffix_by_epoch(rule.file, epoch, ops, variant, where=rule.kept_entry)
        moved, _ = algebra.append(dropped, epoch, valid_max_offset, ops, variant, enabled=rule.kept_entry)
        return attrs.evolve(rule, file=moved)

    monkeypatch.setattr(algebra, "change_to_master", moving_entry)
    (v,) = check("reference", K=2, properties=("existence",))
    assert v.status == "refuted" and "again" in v.counterexample
    (v,) = check("reference", K=2, properties=("existence",), reconfirm=False)
    assert v.status == "proved"



@pytest.mark.parametrize("variant,shape,divergent", [
    ("ships-unflushed", "epoch 1 again", True),  # re-confirmed in its epoch after a quick restart (controller seed 48269)
    ("ships-unflushed", "epoch 2:", True),  # failed over to again, nothing to append (truncation seed 56120)
    ("reference", "epoch 1 again", False),
    ("reference", "epoch 2:", False),
])
def test_the_two_former_holes_diverge_only_where_a_master_ships_unflushed_bytes(variant, shape, divergent):
    """Both runs of docs/truncation.md "A master ships only what it has flushed", at K=2: a
    crash takes from the master a message its slave holds, and the master writes another at
    that offset under the entry they share. The model labels messages by the round that
    wrote them, so it tells the two apart (labelled by epoch, it proved both histories)."""
    h = build_history(2, 2, REFERENCE if variant == "reference" else VARIANTS[variant])
    solver = z3.Solver()
    solver.add(*h.solver_constraints)
    solver.add(h.choices["e2_reconfirm"] == ("again" in shape))
    solver.add(z3.Or(*[c.violated for c in h.checks if c.property == "prefix-agreement"]))
    assert (solver.check() == z3.sat) == divergent
    if divergent:
        text = render_counterexample(h, solver.model(), "prefix-agreement")
        assert shape in text and "crashes and keeps only" in text, text
