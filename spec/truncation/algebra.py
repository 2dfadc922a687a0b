"""The truncation rules written once, for two kinds of numbers.

The epoch-file rules that the proofs reason about — an entry's end offset, the
append rule, suffix truncation, and find_consistent_point — are written here against
a tiny operations interface (``Ops``). ``PY`` evaluates them on Python ints (the
spec's concrete functions in ``epoch_file.py`` call them); ``spec/proofs`` passes z3
operations and gets z3 terms of the very same definitions. There is no second copy
of a rule anywhere.

A *file* here is an ``EpochArrays``: up to K entries as parallel sequences
``epochs[i]``, ``starts[i]`` (valid for ``i < count``), plus ``last_end``: the end of
the last entry (the log's max offset when comparing; "no bound" otherwise).

Known-bad variants (the note's list) are flags of ``Variant``; the reference
algorithm is ``Variant()``.
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence

import attrs


class Ops(Protocol):
    def ite(self, c: Any, a: Any, b: Any) -> Any: ...
    def and_(self, *xs: Any) -> Any: ...
    def or_(self, *xs: Any) -> Any: ...
    def not_(self, x: Any) -> Any: ...
    def min(self, a: Any, b: Any) -> Any: ...
    def max(self, a: Any, b: Any) -> Any: ...


class _PythonOps:
    @staticmethod
    def ite(c, a, b):
        return a if c else b

    @staticmethod
    def and_(*xs):
        return all(xs)

    @staticmethod
    def or_(*xs):
        return any(xs)

    @staticmethod
    def not_(x):
        return not x

    @staticmethod
    def min(a, b):
        return a if a <= b else b

    @staticmethod
    def max(a, b):
        return a if a >= b else b


PY = _PythonOps()

NO_POINT = -1  # find_consistent_point: no consistent point, an operator must wipe the slave


@attrs.frozen(slots=True)
class Variant:
    """A known-bad variation of the algorithm (all False: the reference)."""

    epoch_only_match: bool = False  # match entries on epoch alone, ignoring the start offset
    max_of_ends: bool = False  # take max instead of min of the two end offsets
    ascending_scan: bool = False  # scan entries by ascending epoch (first match is the oldest)
    end_off_by_one: bool = False  # an entry's end offset is one past the next entry's start
    equal_start_append: bool = False  # accept an append whose start equals the last start
    label_switched_early: bool = False  # the last chunk of an epoch is labelled with the next epoch
    finite_end_after_suffix_truncation: bool = False  # truncation leaves the survivor's old end
    skip_empty_epochs: bool = True  # reference: entries holding no data are ignored when comparing

    def name(self) -> str:
        on = [f.name for f in attrs.fields(Variant) if f.name != "skip_empty_epochs" and getattr(self, f.name)]
        return ",".join(on) if on else "reference"


REFERENCE = Variant()
UPSTREAM_EMPTY_EPOCH = Variant(skip_empty_epochs=False)  # upstream before PR #9942


@attrs.frozen(slots=True)
class EpochArrays:
    epochs: Sequence[Any]
    starts: Sequence[Any]
    count: Any
    last_end: Any  # the last entry's end (max offset when comparing)


def entry_end(f: EpochArrays, i: int, ops: Ops, variant: Variant = REFERENCE) -> Any:
    """End offset of entry ``i``: the next entry's start, or ``last_end`` for the last one."""
    k = len(f.epochs)
    nxt = f.starts[i + 1] if i + 1 < k else f.last_end
    end = ops.ite(i + 1 < f.count, nxt, f.last_end) if i + 1 < k else f.last_end
    return end + 1 if variant.end_off_by_one else end


def effective_count(f: EpochArrays, ops: Ops, variant: Variant = REFERENCE) -> Any:
    """How many entries take part in a comparison.

    Reference: entries that start at or beyond the log's end (``last_end``) are left
    out — they vouch for no data: an epoch during which nothing was written (upstream
    PR #9942's case, where such an epoch recorded on one side only hid an otherwise
    consistent point), or entries past a tail lost in a crash (a slave drops its dirty
    tail from the commitlog but not from its epoch file). This is the cut that
    ``change_to_master`` makes, applied before comparing.
    """
    if not variant.skip_empty_epochs:
        return f.count
    return suffix_truncated_count(f, f.last_end, ops)


def find_consistent_point_arrays(local: EpochArrays, master: EpochArrays, ops: Ops,
                                 variant: Variant = REFERENCE) -> Any:
    """Walk local entries by descending epoch; the first whose epoch exists on the master
    with the same start gives min(local end, master end); none: NO_POINT.

    Entries are sorted by epoch, so "descending epoch" is descending index: iterating
    indexes upwards and letting a later match override an earlier one yields the
    highest matching index, i.e. the first match of a descending walk.
    """
    k_l, k_m = len(local.epochs), len(master.epochs)
    n_l = effective_count(local, ops, variant)
    n_m = effective_count(master, ops, variant)
    local_eff = attrs.evolve(local, count=n_l, last_end=local.last_end)
    master_eff = attrs.evolve(master, count=n_m, last_end=master.last_end)
    result: Any = NO_POINT
    order = range(k_l - 1, -1, -1) if variant.ascending_scan else range(k_l)
    for i in order:
        value: Any = NO_POINT
        found: Any = False
        for j in range(k_m):
            same = local.epochs[i] == master.epochs[j]
            if not variant.epoch_only_match:
                same = ops.and_(same, local.starts[i] == master.starts[j])
            match_ij = ops.and_(j < n_m, same)
            e_l = entry_end(local_eff, i, ops, variant)
            e_m = entry_end(master_eff, j, ops, variant)
            point = ops.max(e_l, e_m) if variant.max_of_ends else ops.min(e_l, e_m)
            value = ops.ite(match_ij, point, value)
            found = ops.or_(found, match_ij)
        result = ops.ite(ops.and_(i < n_l, found), value, result)
    return result


def append_allowed(last_epoch: Any, last_start: Any, count: Any, epoch: Any, start: Any, ops: Ops,
                   variant: Variant = REFERENCE) -> Any:
    """The append rule: a first entry always; else epoch and start strictly greater."""
    start_ok = start >= last_start if variant.equal_start_append else start > last_start
    return ops.or_(count == 0, ops.and_(epoch > last_epoch, start_ok))


def suffix_truncated_count(f: EpochArrays, offset: Any, ops: Ops) -> Any:
    """Entries left after truncate_suffix_by_offset(offset): those starting before it."""
    k = len(f.epochs)
    count: Any = 0
    for i in range(k):
        count = ops.ite(ops.and_(i < f.count, f.starts[i] < offset), i + 1, count)
    return count
