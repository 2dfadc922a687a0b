"""z3 proofs: the reference holds at small bounds; each known-bad variant is refuted.

Larger bounds (K up to 5 and beyond) are timed in benchmarks/prove_truncation.py.
"""
import pytest

from spec.proofs.truncation_model import PROPERTIES, VARIANTS, check


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
}


@pytest.mark.parametrize("variant,prop", sorted(REFUTED_BY.items()))
def test_variant_refuted_with_a_readable_counterexample(variant, prop):
    (v,) = check(variant, K=3, properties=(prop,))
    assert v.status == "refuted"
    assert "epoch file" in v.counterexample and "log (epoch of each message)" in v.counterexample


def test_every_variant_has_a_refutation_or_an_outside_the_model_case():
    assert set(VARIANTS) == set(REFUTED_BY) | {"epoch-only-match"}


def test_epoch_only_match_is_equivalent_inside_the_model():
    (v,) = check("epoch-only-match", K=2, properties=("prefix-agreement",))
    assert v.status == "proved"
