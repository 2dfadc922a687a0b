"""Table tests of the classic invariants' history predicates (spec/invariants/classic.py)."""
import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.invariants import classic as inv


@attrs.frozen
class View:
    node_id: str
    min_offset: int
    max_offset: int
    data: bytes = b""


def view(node_id: str, lo: int, hi: int) -> View:
    return View(node_id, lo, hi, bytes(hi - lo))


# what masters wrote: a 64-byte record at 0, one at 960 ending at 1024, one at 1024 ending at 1088
WRITTEN = {0: [bytes(64)], 960: [bytes(64)], 1024: [bytes(64)]}


@pytest.mark.parametrize("case, slave, master, written, want", [
    ("empty past the master's end, where a master's log reached", view("b1", 1024, 1024), view("b3", 0, 64),
     WRITTEN, True),
    ("empty one past the master's end", view("b1", 65, 65), view("b3", 0, 64), {0: [bytes(65)]}, True),
    ("empty at the master's end: not past it", view("b1", 64, 64), view("b3", 0, 64), WRITTEN, False),
    ("empty before the master's end", view("b1", 0, 0), view("b3", 0, 64), WRITTEN, False),
    ("past the master's end, but no master's log reached there", view("b1", 2048, 2048), view("b3", 0, 64),
     WRITTEN, False),
    ("a log that reached exactly the slave's end", view("b1", 1088, 1088), view("b3", 0, 64), WRITTEN, True),
    ("one byte short of the slave's end", view("b1", 1089, 1089), view("b3", 0, 64), WRITTEN, False),
    ("holds bytes (first_difference and explain_divergence judge those)", view("b1", 1024, 1088),
     view("b3", 0, 64), WRITTEN, False),
    ("nothing written by any master", view("b1", 1024, 1024), view("b3", 0, 0), {}, False),
])
def test_positioned_past_master(case, slave, master, written, want):
    assert inv.positioned_past_master(slave, master, written) is want, case


offsets = st.integers(0, 4096)
lengths = st.one_of(st.just(0), st.integers(1, 300))  # an empty slave log half the time


@given(offsets, lengths, offsets, lengths, st.dictionaries(offsets, st.lists(st.binary(min_size=1, max_size=300),
                                                                              min_size=1, max_size=2)))
def test_positioned_past_master_sees_only_what_first_difference_cannot(s_lo, s_len, m_lo, m_len, written):
    # a slave that holds bytes differs (or not) byte by byte; one that holds nothing,
    # past its master's end, is the case only this predicate judges
    slave, master = view("s", s_lo, s_lo + s_len), view("m", m_lo, m_lo + m_len)
    if inv.positioned_past_master(slave, master, written):
        assert inv.first_difference(slave, master) is None
        assert slave.max_offset > master.max_offset


# two masters' histories: one wrote A-records at 0 and 8, the other a longer C-record at 4
# (its log ended at 4 before it), then B at 14
HISTORIES = {0: [b"AAAAAAAA"], 8: [b"aaaaaaaa"], 4: [b"CCCCCCCCCC"], 14: [b"BBBB"]}


@pytest.mark.parametrize("case, held, start, want", [
    ("a whole record a master wrote there", b"AAAAAAAA", 0, True),
    ("the beginning of one (a slave's log ends inside it)", b"AAAA", 0, True),
    ("spliced: the first master's beginning, the second's bytes after it", b"AAAACCCCCC", 0, True),
    ("spliced across the second master's next record too", b"AAAACCCCCCCCCCBB", 0, True),
    ("spliced, and a byte no master wrote at its offset", b"AAAACCCCCX", 0, False),
    ("spliced, then bytes past everything written", b"AAAACCCCCCCCCCBBBBZ", 0, False),
    ("a record no master began there", b"XAAAAAAA", 0, False),
    ("the second master's bytes at the first's offset", b"CCCCCCCC", 0, False),
    ("nothing written at its start", b"AAAA", 2, False),
])
def test_held_by_history(case, held, start, want):
    assert inv.held_by_history(held, start, HISTORIES) is want, case


@pytest.mark.parametrize("case, data, offset, want", [
    ("one master's bytes", b"CCCC", 6, True),
    ("two masters' bytes, run by run", b"AACCCCCCCCCCBB", 2, True),
    ("a shifted byte", b"ACAA", 0, False),
    ("nothing", b"", 3, True),
    ("where nothing was written", b"Z", 40, False),
])
def test_written_bytes(case, data, offset, want):
    assert inv.written_bytes(data, offset, HISTORIES) is want, case


@given(st.dictionaries(st.integers(0, 64), st.lists(st.binary(min_size=1, max_size=24), min_size=1, max_size=2),
                       min_size=1), st.data())
def test_a_record_cut_from_what_masters_wrote_is_held_by_history(written, data):
    # any slice of one master's record, at its offset, and any splice of a record's
    # beginning with the bytes written after it is explained; a byte changed to one no
    # master wrote at that offset is not
    start = data.draw(st.sampled_from(sorted(written)))
    record = data.draw(st.sampled_from(written[start]))
    cut = data.draw(st.integers(1, len(record)))
    assert inv.held_by_history(record[:cut], start, written)
    assert inv.written_bytes(record[cut - 1:], start + cut - 1, written)
    at = data.draw(st.integers(0, cut - 1))
    seen = {r[at + start - s] for s, rs in written.items() for r in rs if s <= at + start < s + len(r)}
    foreign = next(b for b in range(256) if b not in seen)
    changed = record[:at] + bytes([foreign]) + record[at + 1:cut]
    assert not inv.held_by_history(changed, start, written)
