"""Every profile carries its timing, every value has a source, and docs/dledger.md shows the same table."""
import re
from pathlib import Path

import attrs
import pytest

from spec.dledger.candidate import (
    VOTE_INTERVAL,
    VOTE_WAIT,
    draw_bound,
    next_vote_time,
    next_vote_time_range,
    vote_round_wait_ms,
    vote_round_wait_range,
)
from spec.dledger.profiles import DEFAULT_PROFILE, DEFAULT_TIMING, PROFILES, TIMING_SOURCES, Timing

DOC = Path(__file__).parents[2] / "docs" / "dledger.md"


def test_every_timing_field_has_a_source():
    fields = {f.name for f in attrs.fields(Timing)}
    assert set(TIMING_SOURCES) == fields | {"Profile.vote_interval_adds_last_cost"}


def _doc_table() -> dict[str, list[str]]:
    text = DOC.read_text()
    table = text[text.index("| field | dledger-0.1"):].split("\n\n")[0]
    rows = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        for name in re.findall(r"`(\w+)`", cells[0]):
            rows[name] = cells[1:4]
    return rows


def test_docs_table_states_each_profiles_values():
    rows = _doc_table()
    names = [p for p in ("dledger-0.1", "dledger-0.2", "dledger-0.4")]
    for field in attrs.fields(Timing):
        assert field.name in rows, field.name
        assert rows[field.name] == [str(getattr(PROFILES[n].timing, field.name)) for n in names], field.name
    assert rows["vote_interval_adds_last_cost"] == ["yes" if PROFILES[n].vote_interval_adds_last_cost else "no"
                                                    for n in names]


@pytest.mark.parametrize("name,base,result_wait", [("dledger-0.1", 3000, 0), ("dledger-0.2", 2000, 0),
                                                   ("dledger-0.4", 2000, 10)])
def test_the_releases_differ_where_upstream_changed(name, base, result_wait):
    t = PROFILES[name].timing
    assert (t.vote_round_base_wait_ms, t.heartbeat_result_wait_ms) == (base, result_wait)
    assert t.heartbeat_latch_wait_ms == 2000 - result_wait
    assert t.lease_ms == 6000


def test_default_timing_is_the_default_profiles():
    assert DEFAULT_TIMING is DEFAULT_PROFILE.timing


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_random_ranges(name):
    p = PROFILES[name]
    t = p.timing
    waits = vote_round_wait_range(t)
    assert (waits[0], waits[-1]) == (vote_round_wait_ms(0, t), vote_round_wait_ms(draw_bound(VOTE_WAIT, t) - 1, t))
    assert len(waits) == t.max_vote_interval_ms
    for taking, (low, high) in ((False, (300, 999)), (True, (30, 99))):
        r = next_vote_time_range(10_000, t, taking, 500, p)
        cost = 500 if p.vote_interval_adds_last_cost else 0
        assert (r[0], r[-1]) == (10_000 + cost + low, 10_000 + cost + high)
        assert r[-1] == next_vote_time(10_000, draw_bound(VOTE_INTERVAL, t, taking) - 1, t, taking, 500, p)
