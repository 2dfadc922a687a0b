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
