"""The truncation rules written once, for two kinds of numbers.

Every rule the proofs reason about is written here against a tiny operations
interface (``Ops``): an entry's end offset, well-formedness and coverage, the append
rule, suffix truncation (by offset and by epoch), the role change to master (with its
re-confirmation rule), find_consistent_point and the slave's handshake decision, the
label of a transfer batch, how far a master has flushed once it sends one, and the
epoch entry a slave records from a batch header.
``PY`` evaluates them on Python ints (the spec's concrete functions in
``epoch_file.py`` and ``replication.py`` call them); ``spec/proofs`` passes z3
operations and gets z3 terms of the very same definitions. There is no second copy
of a rule anywhere.

A *file* here is an ``EpochArrays``: entries as parallel sequences ``epochs[i]``,
``starts[i]`` (valid for ``i < count``; z3 models keep K slots, Python lists may hold
stale values past ``count``), plus ``last_end``: the end of the last entry (the log's
max offset when comparing; the file's own end otherwise, ``NO_BOUND`` when open).

Known-bad variants (the note's list) are flags of ``Variant``; the reference
algorithm is ``Variant()``.
"""
from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence

import attrs


class Ops(Protocol):
    concrete: bool  # values are plain ints and bools (a choice evaluates one side only)

    def ite(self, c: Any, a: Any, b: Any) -> Any: ...
    def and_(self, *xs: Any) -> Any: ...
    def or_(self, *xs: Any) -> Any: ...
    def not_(self, x: Any) -> Any: ...
    def min(self, a: Any, b: Any) -> Any: ...
    def max(self, a: Any, b: Any) -> Any: ...
    def at(self, values: Sequence[Any], index: Any, default: Any) -> Any: ...  # values[index], default outside


class _PythonOps:
    concrete = True

    @staticmethod
    def at(values, index, default):
        return values[index] if 0 <= index < len(values) else default

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
NO_EPOCH = -1  # the last epoch of an empty file
NO_BOUND = 2**63 - 1  # the end of an open-ended last entry: Long.MAX_VALUE, as the real cache gives it


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
    header_epoch_not_recorded: bool = False  # a slave never records the epoch a batch header carries
    ships_unflushed: bool = False  # a master sends bytes it has not flushed (upstream with ASYNC_FLUSH)
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


# ------------------------------------------------------------------ file shape


def last_epoch(f: EpochArrays, ops: Ops) -> Any:
    return ops.at(f.epochs, f.count - 1, NO_EPOCH)


def last_start(f: EpochArrays, ops: Ops) -> Any:
    return ops.at(f.starts, f.count - 1, 0)


def empty_like(f: EpochArrays) -> EpochArrays:
    """No entries, open-ended (what a slave keeps when it copies everything again)."""
    return EpochArrays(f.epochs, f.starts, 0, NO_BOUND)


def choose(cond: Any, a: EpochArrays, b: EpochArrays, ops: Ops) -> EpochArrays:
    """``a`` where ``cond`` holds, else ``b``."""
    if ops.concrete:
        return a if cond else b

    def pick(x, y):  # a term both sides share needs no choice
        return x if x is y else ops.ite(cond, x, y)

    return EpochArrays([pick(x, y) for x, y in zip(a.epochs, b.epochs)], [pick(x, y) for x, y in zip(a.starts, b.starts)],
                       pick(a.count, b.count), pick(a.last_end, b.last_end))


def increasing(f: EpochArrays, ops: Ops) -> Any:
    """Well-formed: epochs and start offsets strictly increase."""
    return ops.and_(*[ops.or_(ops.not_(i + 1 < f.count),
                              ops.and_(f.epochs[i] < f.epochs[i + 1], f.starts[i] < f.starts[i + 1]))
                      for i in range(len(f.epochs) - 1)])


def covers(f: EpochArrays, offset: Any, ops: Ops) -> Any:
    """Some entry holds ``offset``: start <= offset < the entry's end."""
    return ops.or_(*[ops.and_(i < f.count, f.starts[i] <= offset, offset < entry_end(f, i, ops))
                     for i in range(len(f.epochs))])


# ------------------------------------------------------------------ changing a file


def append(f: EpochArrays, epoch: Any, start: Any, ops: Ops, variant: Variant = REFERENCE,
           enabled: Any = True) -> tuple[EpochArrays, Any]:
    """appendEntry under the append rule, where ``enabled``: (the file, whether the entry
    was appended). The new entry is open-ended; a file with K slots (z3) has room for K."""
    ok = ops.and_(enabled, append_allowed(last_epoch(f, ops), last_start(f, ops), f.count, epoch, start, ops, variant))
    if ops.concrete:
        if not ok:
            return f, False
        return EpochArrays(list(f.epochs[: f.count]) + [epoch], list(f.starts[: f.count]) + [start],
                           f.count + 1, NO_BOUND), True
    ok = ops.and_(ok, f.count < len(f.epochs))
    slot = [ops.and_(ok, f.count == i) for i in range(len(f.epochs))]
    return EpochArrays([ops.ite(c, epoch, e) for c, e in zip(slot, f.epochs)],
                       [ops.ite(c, start, s) for c, s in zip(slot, f.starts)],
                       ops.ite(ok, f.count + 1, f.count), ops.ite(ok, NO_BOUND, f.last_end)), ok


def _keep_first(f: EpochArrays, count: Any, ops: Ops, variant: Variant, where: Any) -> EpochArrays:
    """The first ``count`` entries, where ``where`` holds; the survivor becomes open-ended
    (the finite-end variant leaves it ending where the first dropped entry started)."""
    end: Any = NO_BOUND
    if variant.finite_end_after_suffix_truncation:
        end = ops.ite(count > 0, ops.at(f.starts, count, NO_BOUND), NO_BOUND)
    return EpochArrays(f.epochs, f.starts, ops.ite(where, count, f.count),
                       ops.ite(ops.and_(where, count < f.count), end, f.last_end))


def truncate_suffix_by_offset(f: EpochArrays, offset: Any, ops: Ops, variant: Variant = REFERENCE,
                              where: Any = True) -> EpochArrays:
    """truncateSuffixByOffset (where ``where``): drop the entries starting at or after ``offset``."""
    return _keep_first(f, suffix_truncated_count(f, offset, ops), ops, variant, where)


def truncate_suffix_by_epoch(f: EpochArrays, epoch: Any, ops: Ops, variant: Variant = REFERENCE,
                             where: Any = True) -> EpochArrays:
    """truncateSuffixByEpoch (where ``where``): drop the epochs >= ``epoch``."""
    count: Any = 0
    for i in range(len(f.epochs)):
        count = ops.ite(ops.and_(i < f.count, f.epochs[i] < epoch), i + 1, count)
    return _keep_first(f, count, ops, variant, where)


@attrs.frozen(slots=True)
class MasterChangeRule:
    accepted: Any  # False: the epoch is older than the file's last one
    kept_entry: Any  # re-confirmed master of the epoch the file ends with: its entry stands
    recorded: Any  # (epoch, max offset) was appended
    file: EpochArrays


def change_to_master(f: EpochArrays, epoch: Any, valid_max_offset: Any, had_dirty_tail: Any, ops: Ops,
                     variant: Variant = REFERENCE, enabled: Any = True) -> MasterChangeRule:
    """The epoch file when a replica becomes master of ``epoch`` (where ``enabled``) with
    valid data up to ``valid_max_offset`` (replication.change_to_master tells why each
    step). Each step applies only where the ones before it leave it to apply, so a z3
    model gets flat terms."""
    accepted = ops.and_(enabled, ops.not_(epoch < last_epoch(f, ops)))
    cut = truncate_suffix_by_offset(f, valid_max_offset, ops, variant, where=ops.and_(accepted, had_dirty_tail))
    kept = ops.and_(cut.count > 0, last_epoch(cut, ops) == epoch, last_start(cut, ops) <= valid_max_offset)
    moving = ops.and_(accepted, ops.not_(kept))
    older = truncate_suffix_by_epoch(cut, epoch, ops, variant, where=ops.and_(moving, last_epoch(cut, ops) >= epoch))
    appended, ok = append(older, epoch, valid_max_offset, ops, variant, enabled=moving)
    return MasterChangeRule(accepted, ops.and_(accepted, kept), ok, appended)


def compared(f: EpochArrays, max_offset: Any, ops: Ops, variant: Variant = REFERENCE) -> EpochArrays:
    """``f`` as a comparison sees it: its last entry ends at the log's max offset.

    The reference leaves out entries starting at or beyond the log's end
    (``effective_count``), so the max offset always ends its last compared entry.
    Without that cut (upstream before PR #9942) the end is set as
    ``setLastEpochEntryEndOffset`` sets it: not at all when the last entry starts beyond
    the log's end, which then stays open (``NO_BOUND``).
    """
    if variant.skip_empty_epochs:
        return EpochArrays(f.epochs, f.starts, f.count, max_offset)
    return EpochArrays(f.epochs, f.starts, f.count, ops.ite(max_offset >= last_start(f, ops), max_offset, NO_BOUND))


@attrs.frozen(slots=True)
class HandshakeRule:
    from_start: Any  # nothing comparable: the slave clears its file and copies from the master's first offset
    failed: Any  # no consistent point: the handshake fails, the slave keeps everything
    point: Any  # the decision's point: 0 when copying from the start, else the consistent point (NO_POINT: none)
    log_end: Any  # where the slave's log ends after the decision
    file: EpochArrays  # the slave's epoch file after the decision


def slave_handshake(local: EpochArrays, local_max: Any, master: EpochArrays, master_max: Any, ops: Ops,
                    variant: Variant = REFERENCE, name: Callable[[Any], Any] = lambda t: t) -> HandshakeRule:
    """The slave's decision on the master's handshake reply (its max offset and entries).

    No epoch to compare — or, the reference's handling of upstream #9942's case, only an
    epoch that holds no data: no data of the log is vouched for by an epoch entry, so
    everything is copied from the start. Otherwise the consistent point t: the file is
    cut at t, the log at min(t, local_max); none: the handshake fails. ``name`` may
    stand t in for a constant (a z3 model names it once instead of repeating its
    definition in every term that uses it).
    """
    mine = compared(local, local_max, ops, variant)
    from_start = effective_count(mine, ops, variant) == 0
    t = name(find_consistent_point_arrays(mine, compared(master, master_max, ops, variant), ops, variant))
    failed = ops.and_(ops.not_(from_start), t == NO_POINT)
    return HandshakeRule(from_start, failed, ops.ite(from_start, 0, t),
                         ops.ite(from_start, 0, ops.ite(failed, local_max, ops.min(t, local_max))),
                         handshake_file(local, from_start, failed, t, ops, variant))


def handshake_file(local: EpochArrays, from_start: Any, failed: Any, point: Any, ops: Ops,
                   variant: Variant = REFERENCE, enabled: Any = True) -> EpochArrays:
    """The slave's epoch file after a handshake decision (where ``enabled``): cleared when
    it copies from the start, cut at the consistent point otherwise, kept when it failed."""
    go = ops.and_(enabled, ops.not_(failed))
    cut = truncate_suffix_by_offset(local, point, ops, variant, where=ops.and_(go, ops.not_(from_start)))
    clear = ops.and_(go, from_start)
    return EpochArrays(cut.epochs, cut.starts, ops.ite(clear, 0, cut.count), ops.ite(clear, NO_BOUND, cut.last_end))


# ------------------------------------------------------------------ transfer


def containing_entry_end(f: EpochArrays, offset: Any, ops: Ops) -> tuple[Any, Any]:
    """(whether an entry holds ``offset``, where a batch starting there must stop): a
    batch never crosses into the next epoch, so it stops at the next entry's start (no
    bound after the last entry)."""
    found: Any = False
    stop: Any = NO_BOUND
    k = len(f.epochs)
    for i in range(k):
        inside = ops.and_(i < f.count, f.starts[i] <= offset, offset < entry_end(f, i, ops))
        stop_i = ops.ite(i + 1 < f.count, f.starts[i + 1], NO_BOUND) if i + 1 < k else NO_BOUND
        found, stop = ops.or_(found, inside), ops.ite(inside, stop_i, stop)
    return found, stop


def batch_label(f: EpochArrays, first_offset: Any, batch_end: Any, ops: Ops,
                variant: Variant = REFERENCE) -> tuple[Any, Any]:
    """The (epoch, epoch start) a batch header carries: the entry holding the batch's
    first message. The label-switched variant labels a batch that ends its epoch with
    the next epoch already, as upstream does."""
    epoch: Any = 0
    start: Any = 0
    for i in range(len(f.epochs)):
        end_i = entry_end(f, i, ops)
        inside = ops.and_(i < f.count, f.starts[i] <= first_offset, first_offset < end_i)
        e_i, s_i = f.epochs[i], f.starts[i]
        if variant.label_switched_early and i + 1 < len(f.epochs):
            switch = ops.and_(i + 1 < f.count, batch_end == end_i)
            e_i, s_i = ops.ite(switch, f.epochs[i + 1], e_i), ops.ite(switch, f.starts[i + 1], s_i)
        epoch, start = ops.ite(inside, e_i, epoch), ops.ite(inside, s_i, start)
    return epoch, start


def flushed_for_transfer(flushed: Any, batch_end: Any, ops: Ops, variant: Variant = REFERENCE) -> Any:
    """How far a master's log must be flushed once it sends a batch ending at ``batch_end``.

    A master ships only what it has flushed, so a crash never takes from it a message a
    slave already holds: otherwise it could write another message at the same offset
    under an epoch entry the slave shares (re-confirmed in its epoch after a quick
    restart, or failed over to again with nothing to append), and the slave, whose
    consistent point lies past the divergence, would keep the lost message
    (docs/truncation.md, "A master ships only what it has flushed"). Upstream's transfer
    reads the page cache, flushed or not (ASYNC_FLUSH): the ``ships-unflushed`` variant.
    """
    return flushed if variant.ships_unflushed else ops.max(flushed, batch_end)


def flushed_for_report(flushed: Any, slave_max: Any, ops: Ops) -> Any:
    """How far a slave's log must be flushed once it reports ``slave_max`` after appending
    a batch: all of it (a slave acknowledges only what it has flushed, so an acknowledged
    write survives the crash of every replica but one; upstream's ASYNC_FLUSH slave reports
    its page cache)."""
    return ops.max(flushed, slave_max)


def record_header_epoch(f: EpochArrays, header_epoch: Any, header_start: Any, ops: Ops,
                        variant: Variant = REFERENCE, enabled: Any = True) -> tuple[EpochArrays, Any]:
    """A slave receiving a batch header (where ``enabled``) records (epoch, epoch start)
    when the header's epoch is not its last one: (the file, whether the header carried
    a new epoch)."""
    new_epoch = ops.and_(enabled, header_epoch != last_epoch(f, ops), not variant.header_epoch_not_recorded)
    if ops.concrete and not new_epoch:
        return f, False  # (evaluation shortcut: nothing to append)
    appended, _ = append(f, header_epoch, header_start, ops, variant, enabled=new_epoch)
    return appended, new_epoch
