"""The epoch file: every operation's branches, named, plus properties."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.truncation.algebra import PY, UPSTREAM_EMPTY_EPOCH, EpochArrays, Variant, find_consistent_point_arrays
from spec.truncation.epoch_file import (
    NO_POINT,
    AppendOutcome,
    EpochEntry,
    EpochFile,
    append,
    covered,
    end_offset,
    find_consistent_point,
    find_entry_by_epoch,
    find_entry_by_offset,
    next_entry,
    of,
    set_last_end,
    truncate_prefix_by_offset,
    truncate_suffix_by_epoch,
    truncate_suffix_by_offset,
    well_formed,
)

F = of((1, 0), (3, 100), (5, 250))

APPEND = [
    ("first_entry_always", EpochFile(), 4, 0, AppendOutcome.FIRST_ENTRY, ((4, 0),)),
    ("appended", F, 6, 300, AppendOutcome.APPENDED, ((1, 0), (3, 100), (5, 250), (6, 300))),
    ("equal_epoch_refused", F, 5, 300, AppendOutcome.REFUSED_EPOCH_NOT_GREATER, None),
    ("older_epoch_refused", F, 2, 300, AppendOutcome.REFUSED_EPOCH_NOT_GREATER, None),
    ("equal_start_refused", F, 6, 250, AppendOutcome.REFUSED_START_NOT_GREATER, None),
    ("smaller_start_refused", F, 6, 200, AppendOutcome.REFUSED_START_NOT_GREATER, None),
]


@pytest.mark.parametrize("case", APPEND, ids=[c[0] for c in APPEND])
def test_append(case):
    _, f, epoch, start, outcome, entries = case
    new, got = append(f, epoch, start)
    assert got is outcome
    assert new == (f if entries is None else of(*entries))


def test_equal_start_append_variant_accepts():
    new, got = append(F, 6, 250, Variant(equal_start_append=True))
    assert got is AppendOutcome.APPENDED and not well_formed(new)


def test_end_offsets_and_set_last_end():
    assert [end_offset(F, i) for i in range(3)] == [100, 250, None]
    assert end_offset(set_last_end(F, 400), 2) == 400
    assert set_last_end(F, 200) == F  # below the last start: refused
    assert set_last_end(EpochFile(), 5) == EpochFile()


TRUNCATIONS = [
    ("suffix_by_offset_inside_an_epoch", truncate_suffix_by_offset(F, 200), ((1, 0), (3, 100))),
    ("suffix_by_offset_at_a_start_drops_it", truncate_suffix_by_offset(F, 250), ((1, 0), (3, 100))),
    ("suffix_by_offset_past_the_end", truncate_suffix_by_offset(F, 999), ((1, 0), (3, 100), (5, 250))),
    ("suffix_by_offset_everything", truncate_suffix_by_offset(F, 0), ()),
    ("suffix_by_epoch", truncate_suffix_by_epoch(F, 3), ((1, 0),)),
    ("suffix_by_epoch_none", truncate_suffix_by_epoch(F, 9), ((1, 0), (3, 100), (5, 250))),
    ("prefix_by_offset", truncate_prefix_by_offset(F, 100), ((3, 100), (5, 250))),
    ("prefix_by_offset_inside", truncate_prefix_by_offset(F, 99), ((1, 0), (3, 100), (5, 250))),
    ("prefix_never_the_last", truncate_prefix_by_offset(F, 10_000), ((5, 250),)),
]


@pytest.mark.parametrize("case", TRUNCATIONS, ids=[c[0] for c in TRUNCATIONS])
def test_truncations(case):
    _, got, entries = case
    assert got.entries == of(*entries).entries


UPSTREAM_TRUNCATION = Variant(finite_end_after_suffix_truncation=True)


def test_suffix_truncation_reopens_the_survivor_unless_the_variant():
    """EpochFileCache.doTruncateSuffix sets Long.MAX_VALUE on the copy lastEntry() returns: the
    survivor keeps its end, the start of the first dropped entry (upstream's behaviour)."""
    closed = set_last_end(F, 400)
    assert truncate_suffix_by_offset(closed, 200).last_end is None
    buggy = truncate_suffix_by_offset(F, 200, UPSTREAM_TRUNCATION)
    assert buggy.last_end == 250 and find_entry_by_offset(buggy, 300) is None
    assert truncate_suffix_by_epoch(F, 5, UPSTREAM_TRUNCATION).last_end == 250


def test_prefix_truncation_drops_a_last_entry_with_a_finite_end_only_in_the_variant():
    """EpochFileCache.truncatePrefixByOffset removes every entry whose end is <= the offset, the
    last one included when its end is finite (the stale end above, or a comparison's)."""
    stale = truncate_suffix_by_offset(F, 200, UPSTREAM_TRUNCATION)  # [e1@0, e3@100] with e3 ending at 250
    assert truncate_prefix_by_offset(stale, 300).entries == of((3, 100)).entries  # the reference: never the last
    assert truncate_prefix_by_offset(stale, 300, UPSTREAM_TRUNCATION) == EpochFile()
    assert truncate_prefix_by_offset(stale, 249, UPSTREAM_TRUNCATION) == EpochFile(of((3, 100)).entries, 250)
    assert truncate_prefix_by_offset(F, 10_000, UPSTREAM_TRUNCATION).entries == of((5, 250)).entries  # open: kept


def test_upstream_compares_an_entry_beyond_the_log_end_as_open_ended():
    """setLastEpochEntryEndOffset ignores an end below the last start: upstream (before #9942)
    compares such an entry as open-ended and can answer Long.MAX_VALUE."""
    side = of((1, 0), (2, 500))  # epoch 2 started at 500, the log ends at 300 (a dropped dirty tail)
    assert find_consistent_point(side, 300, side, 300) == 300
    assert find_consistent_point(side, 300, side, 300, UPSTREAM_EMPTY_EPOCH) == 2**63 - 1


LOOKUPS = [
    ("offset_in_first", find_entry_by_offset(F, 0), (1, 0)),
    ("offset_at_a_start", find_entry_by_offset(F, 100), (3, 100)),
    ("offset_in_open_last", find_entry_by_offset(F, 10**9), (5, 250)),
    ("offset_before_first", find_entry_by_offset(of((2, 50)), 10), None),
    ("next_entry", next_entry(F, 3), (5, 250)),
    ("next_entry_between", next_entry(F, 2), (3, 100)),
    ("next_entry_none", next_entry(F, 5), None),
    ("by_epoch", find_entry_by_epoch(F, 3), (3, 100)),
]


@pytest.mark.parametrize("case", LOOKUPS, ids=[c[0] for c in LOOKUPS])
def test_lookups(case):
    _, got, expected = case
    assert (None if got is None else (got.epoch, got.start_offset)) == expected


def test_last_epoch_of_empty_file():
    assert EpochFile().last_epoch == -1


CONSISTENT = [
    ("min_of_ends", of((1, 0)), 1000, of((1, 0), (2, 900)), 1200, 900),
    ("own_end_when_shorter", of((1, 0)), 800, of((1, 0), (2, 900)), 1200, 800),
    ("latest_shared_epoch_decides", of((1, 0), (2, 300)), 700, of((1, 0), (2, 300), (4, 600)), 800, 600),
    ("start_must_match", of((1, 200)), 400, of((1, 0)), 500, NO_POINT),
    ("unknown_epoch", of((3, 0)), 400, of((2, 0)), 500, NO_POINT),
    ("empty_local", EpochFile(), 0, of((1, 0)), 100, NO_POINT),
    ("empty_master", of((1, 0)), 100, EpochFile(), 0, NO_POINT),
    ("data_less_entry_ignored", of((1, 0), (3, 300)), 300, of((1, 0), (2, 300)), 600, 300),
]


@pytest.mark.parametrize("case", CONSISTENT, ids=[c[0] for c in CONSISTENT])
def test_find_consistent_point(case):
    _, local, lmax, master, mmax, expected = case
    assert find_consistent_point(local, lmax, master, mmax) == expected


# ------------------------------------------------------------------ properties

starts = st.lists(st.integers(0, 60), min_size=0, max_size=5, unique=True).map(sorted)


@st.composite
def files(draw):
    ss = draw(starts)
    epochs = sorted(draw(st.lists(st.integers(0, 9), min_size=len(ss), max_size=len(ss), unique=True)))
    return EpochFile(tuple(zip(epochs, ss)) and of(*zip(epochs, ss)).entries)


@given(files(), st.integers(0, 80), files(), st.integers(0, 80))
def test_consistent_point_never_beyond_either_log(local, lmax, master, mmax):
    t = find_consistent_point(local, lmax, master, mmax)
    assert t == NO_POINT or 0 <= t <= max(lmax, mmax)
    if t != NO_POINT and all(e.start_offset < lmax for e in local.entries) and all(
            e.start_offset < mmax for e in master.entries):
        assert t <= min(lmax, mmax)


@given(files(), st.integers(0, 9), st.integers(0, 80))
def test_append_keeps_files_well_formed(f, epoch, start):
    new, outcome = append(f, epoch, start)
    assert well_formed(new)
    assert (new == f) == (outcome in (AppendOutcome.REFUSED_EPOCH_NOT_GREATER, AppendOutcome.REFUSED_START_NOT_GREATER))


@given(files(), st.integers(0, 80), files(), st.integers(0, 80),
       st.sampled_from([Variant(), Variant(max_of_ends=True), Variant(ascending_scan=True),
                        Variant(epoch_only_match=True), Variant(skip_empty_epochs=False)]))
def test_z3_terms_and_python_agree_on_the_same_definition(local, lmax, master, mmax, variant):
    """The proofs evaluate the very functions the spec runs: check it on concrete values."""
    import z3

    from spec.proofs.truncation_model import Z3

    if not local.entries or not master.entries:
        return
    py = find_consistent_point_arrays(local.arrays(lmax), master.arrays(mmax), PY, variant)
    as_z3 = lambda f, m: EpochArrays([z3.IntVal(e.epoch) for e in f.entries],
                                     [z3.IntVal(e.start_offset) for e in f.entries], z3.IntVal(len(f.entries)),
                                     z3.IntVal(m))
    term = find_consistent_point_arrays(as_z3(local, lmax), as_z3(master, mmax), Z3, variant)
    assert z3.simplify(term).as_long() == py


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 60)), max_size=5),
       st.one_of(st.none(), st.integers(0, 70)))
def test_covered_ranges_are_exactly_the_offsets_an_entry_covers(entries, last_end):
    # any file, well-formed or not (a mutant's): the ranges hold an offset exactly when
    # find_entry_by_offset finds an entry for it
    f = EpochFile(tuple(EpochEntry(e, s) for e, s in entries), last_end if entries else None)
    ranges = covered(f)
    assert all(a < b for a, b in ranges) and all(b < c for (_, b), (c, _) in zip(ranges, ranges[1:]))
    for offset in range(-1, 75):
        assert any(a <= offset < b for a, b in ranges) == (find_entry_by_offset(f, offset) is not None), offset
