"""The epoch file (EpochFileCache), as immutable records and pure functions.

Entries ``(epoch, start_offset)`` ordered by epoch; an entry's end offset is the next
entry's start, and the last entry's end is "no bound" (``None``) until
``set_last_end`` fixes it — with the log's max offset, before comparing. Only
``(epoch, start)`` is persisted.

Every rule the proofs reason about (end offsets, well-formedness, which entry holds
an offset, the append rule, suffix truncation, find_consistent_point) is defined once
in ``algebra.py`` and evaluated here on Python ints.
"""
from __future__ import annotations

import enum

import attrs

from spec.truncation import algebra
from spec.truncation.algebra import (
    NO_BOUND,
    NO_EPOCH,
    NO_POINT,
    PY,
    REFERENCE,
    EpochArrays,
    Variant,
    entry_end,
    find_consistent_point_arrays,
)


@attrs.frozen(slots=True)
class EpochEntry:
    epoch: int
    start_offset: int


@attrs.frozen(slots=True)
class EpochFile:
    entries: tuple[EpochEntry, ...] = ()
    last_end: int | None = None  # None: the last entry is open-ended

    @property
    def last_epoch(self) -> int:
        return self.entries[-1].epoch if self.entries else NO_EPOCH

    @property
    def last_entry(self) -> EpochEntry | None:
        return self.entries[-1] if self.entries else None

    def arrays(self, last_end: int | None = None) -> EpochArrays:
        end = last_end if last_end is not None else self.last_end
        return EpochArrays(
            [e.epoch for e in self.entries],
            [e.start_offset for e in self.entries],
            len(self.entries),
            end if end is not None else NO_BOUND,
        )

    @classmethod
    def of_arrays(cls, a: EpochArrays) -> "EpochFile":
        """The file the algebra computed (its first ``count`` entries; an end of
        ``NO_BOUND`` is open-ended)."""
        entries = tuple(EpochEntry(e, s) for e, s in zip(a.epochs[: a.count], a.starts[: a.count]))
        return cls(entries, None if a.last_end >= NO_BOUND else a.last_end)

    def render(self) -> str:
        if not self.entries:
            return "(empty)"
        return " ".join(f"[e{e.epoch}@{e.start_offset}]" for e in self.entries)


def of(*pairs: tuple[int, int]) -> EpochFile:
    """EpochFile from (epoch, start) pairs, e.g. ``of((1, 0), (2, 900))``."""
    return EpochFile(tuple(EpochEntry(e, s) for e, s in pairs))


class AppendOutcome(enum.Enum):
    APPENDED = "APPENDED"
    FIRST_ENTRY = "FIRST_ENTRY"
    REFUSED_EPOCH_NOT_GREATER = "REFUSED_EPOCH_NOT_GREATER"
    REFUSED_START_NOT_GREATER = "REFUSED_START_NOT_GREATER"


def append(f: EpochFile, epoch: int, start: int, variant: Variant = REFERENCE) -> tuple[EpochFile, AppendOutcome]:
    """appendEntry: refused (no change) unless epoch and start are both strictly greater.

    So an epoch during which nothing was written is never recorded twice at one start.
    """
    appended, ok = algebra.append(f.arrays(), epoch, start, PY, variant)
    if ok:
        outcome = AppendOutcome.APPENDED if f.entries else AppendOutcome.FIRST_ENTRY
        return EpochFile.of_arrays(appended), outcome
    if epoch <= f.last_epoch:
        return f, AppendOutcome.REFUSED_EPOCH_NOT_GREATER
    return f, AppendOutcome.REFUSED_START_NOT_GREATER


def end_offset(f: EpochFile, index: int, variant: Variant = REFERENCE) -> int | None:
    """The end of entry ``index`` (None: open-ended last entry)."""
    if index == len(f.entries) - 1 and f.last_end is None:
        return None
    return entry_end(f.arrays(), index, PY, variant)


def set_last_end(f: EpochFile, end: int) -> EpochFile:
    """setLastEpochEntryEndOffset: only if ``end`` >= the last entry's start."""
    if not f.entries or end < f.entries[-1].start_offset:
        return f
    return attrs.evolve(f, last_end=end)


def truncate_suffix_by_offset(f: EpochFile, offset: int, variant: Variant = REFERENCE) -> EpochFile:
    """Drop entries starting at or after ``offset``; the survivor becomes open-ended."""
    return EpochFile.of_arrays(algebra.truncate_suffix_by_offset(f.arrays(), offset, PY, variant))


def truncate_suffix_by_epoch(f: EpochFile, epoch: int, variant: Variant = REFERENCE) -> EpochFile:
    """Drop epochs >= ``epoch``; the survivor becomes open-ended."""
    return EpochFile.of_arrays(algebra.truncate_suffix_by_epoch(f.arrays(), epoch, PY, variant))


def truncate_prefix_by_offset(f: EpochFile, offset: int, variant: Variant = REFERENCE) -> EpochFile:
    """Drop entries ending at or before ``offset`` (never the last: it is open-ended).

    Under ``finite_end_after_suffix_truncation`` (upstream's ``EpochFileCache``) the
    last entry is judged by its own end like the others: one whose end is finite (left
    by suffix truncation, or set for a comparison) and ``<= offset`` is dropped too.
    """
    last = len(f.entries) - 1
    drop_last = variant.finite_end_after_suffix_truncation and f.last_end is not None and f.last_end <= offset
    kept = tuple(
        e for i, e in enumerate(f.entries)
        if (i == last and not drop_last) or (i < last and f.entries[i + 1].start_offset > offset)
    )
    return attrs.evolve(f, entries=kept, last_end=f.last_end if kept else None)


def find_entry_by_offset(f: EpochFile, offset: int) -> EpochEntry | None:
    """The entry with start <= offset < end."""
    a = f.arrays()
    for i, e in enumerate(f.entries):
        if e.start_offset <= offset < entry_end(a, i, PY):
            return e
    return None


def covered(f: EpochFile) -> tuple[tuple[int, int], ...]:
    """The offsets some entry covers (start <= offset < end, as ``find_entry_by_offset``
    finds one), as sorted disjoint ranges [start, end): a log's positions are checked
    against them at once instead of one search of the entries each."""
    a = f.arrays()
    ranges = sorted((e.start_offset, entry_end(a, i, PY)) for i, e in enumerate(f.entries))
    merged: list[tuple[int, int]] = []
    for start, end in ranges:
        if start >= end:
            continue  # (an empty entry covers nothing)
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return tuple(merged)


def next_entry(f: EpochFile, epoch: int) -> EpochEntry | None:
    """The entry with the smallest epoch greater than ``epoch``."""
    return next((e for e in f.entries if e.epoch > epoch), None)


def find_entry_by_epoch(f: EpochFile, epoch: int) -> EpochEntry | None:
    return next((e for e in f.entries if e.epoch == epoch), None)


def find_consistent_point(local: EpochFile, local_max: int, master: EpochFile, master_max: int,
                          variant: Variant = REFERENCE) -> int:
    """The largest offset below which the slave's log equals the master's, or -1.

    Each side's last end is its max offset. -1 (either side empty, or no entry with
    the same epoch and start): the slave cannot proceed by itself; an operator must wipe it.
    """
    if not local.entries or not master.entries:
        return NO_POINT
    return find_consistent_point_arrays(algebra.compared(local.arrays(), local_max, PY, variant),
                                        algebra.compared(master.arrays(), master_max, PY, variant), PY, variant)


def well_formed(f: EpochFile) -> bool:
    """Epochs and starts strictly increasing."""
    return algebra.increasing(f.arrays(), PY)


__all__ = [
    "NO_POINT", "EpochEntry", "EpochFile", "AppendOutcome", "of", "append", "end_offset", "set_last_end",
    "truncate_suffix_by_offset", "truncate_suffix_by_epoch", "truncate_prefix_by_offset", "find_entry_by_offset",
    "next_entry", "find_entry_by_epoch", "find_consistent_point", "well_formed",
]
