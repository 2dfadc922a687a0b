"""The elect policy's Java collection semantics, checked against the JDK's own classes.

``DefaultElectPolicy`` adds the alive candidates, in the iteration order of a
``java.util.HashSet<Long>``, to a ``java.util.TreeSet`` ordered by its comparator, and
takes ``first()``. The spec models that order (``java_hash_set_order``: equal candidates
keep it) and the #10578 variant models the tree itself (the narrowed comparator is not a
total order, so the winner depends on the red-black tree's shape). Both are compared here
with the real ``java.util`` classes through JPype (the JDK is all they need).
"""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.jvm import ensure_started
from reference.mutants_controller import _java_int, _java_tree_set_first
from spec.controller.elect_policy import java_hash_set_order, order_candidates
from spec.controller.heartbeat import BrokerLiveInfo

pytestmark = pytest.mark.jvm

# ids around the bucket boundaries: below 16, 16 and up (shared buckets), past 2^32 (high bits hashed)
IDS = st.sets(st.integers(0, 40) | st.integers(2**32 - 2, 2**32 + 20) | st.integers(0, 2**40), max_size=30)


@pytest.fixture(scope="module")
def java():
    return ensure_started([])


@given(IDS)
def test_hash_set_order_is_javas(java, ids):
    built = java.JClass("java.util.HashSet")()
    for i in sorted(ids):  # the spec's within-bucket order: a set built in ascending order
        built.add(java.JLong(i))
    assert [int(x) for x in built] == java_hash_set_order(ids)


def test_ids_from_16_interleave_with_small_ones():
    assert java_hash_set_order({1, 3, 16, 17}) == [16, 1, 17, 3]
    assert java_hash_set_order(range(1, 6)) == [1, 2, 3, 4, 5]


def test_equal_candidates_keep_the_hash_set_order():
    info = lambda i: BrokerLiveInfo("b", f"a{i}", i, 0, epoch=2, max_offset=100)  # noqa: E731
    assert order_candidates([(3, info(3)), (16, info(16))]) == [16, 3]  # upstream's TreeSet keeps 16, added first


def _narrowed(a: int, b: int) -> int:
    return _java_int(b - a)  # (int) (o2.maxOffset - o1.maxOffset): larger offsets first, narrowed


@given(st.lists(st.integers(0, 2**34), max_size=12))
def test_tree_set_first_is_javas_with_the_narrowed_comparator(java, offsets):
    narrowed = java.JProxy("java.util.Comparator", dict={"compare": lambda a, b: _narrowed(int(a), int(b))})
    tree = java.JClass("java.util.TreeSet")(narrowed)
    for o in offsets:
        tree.add(java.JLong(o))
    expected = int(tree.first()) if offsets else None
    assert _java_tree_set_first(offsets, _narrowed) == expected
