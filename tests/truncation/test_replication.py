"""Role changes, the slave handshake and the transfer rules: every branch by name."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.truncation.algebra import Variant
from spec.truncation.epoch_file import EpochFile, of
from spec.truncation.replication import (
    HandshakeOutcome as H,
    HeaderOutcome,
    Message,
    RoleChangeOutcome,
    TransferHeader,
    change_to_master,
    change_to_slave,
    flushed_for_transfer,
    next_batch,
    on_transfer_header,
    slave_confirm_offset,
    slave_handshake,
)

MASTER_CHANGES = [
    ("refused_older_epoch", of((1, 0), (4, 100)), 3, 200, False, RoleChangeOutcome.REFUSED_OLDER_EPOCH,
     ((1, 0), (4, 100))),
    ("append_new_epoch", of((1, 0)), 2, 300, False, RoleChangeOutcome.ACCEPTED, ((1, 0), (2, 300))),
    ("nothing_written_since_last_start", of((1, 0), (2, 300)), 3, 300, False, RoleChangeOutcome.ACCEPTED,
     ((1, 0), (2, 300))),
    ("same_epoch_again_keeps_its_start", of((1, 0), (2, 300)), 2, 400, False, RoleChangeOutcome.ACCEPTED,
     ((1, 0), (2, 300))),
    ("same_epoch_after_losing_it_to_a_dirty_tail", of((1, 0), (2, 300)), 2, 250, True, RoleChangeOutcome.ACCEPTED,
     ((1, 0), (2, 250))),
    ("dirty_tail_cuts_the_file", of((1, 0), (2, 300)), 3, 250, True, RoleChangeOutcome.ACCEPTED,
     ((1, 0), (3, 250))),
    ("no_dirty_tail_no_cut", of((1, 0), (2, 300)), 3, 300, False, RoleChangeOutcome.ACCEPTED, ((1, 0), (2, 300))),
    ("first_epoch_of_a_new_broker", EpochFile(), 1, 0, False, RoleChangeOutcome.ACCEPTED, ((1, 0),)),
]


@pytest.mark.parametrize("case", MASTER_CHANGES, ids=[c[0] for c in MASTER_CHANGES])
def test_change_to_master(case):
    _, f, epoch, max_offset, dirty, outcome, entries = case
    change = change_to_master(f, epoch, max_offset, dirty)
    assert change.outcome is outcome
    assert change.epoch_file == of(*entries)


def test_change_to_slave():
    assert change_to_slave(of((1, 0), (4, 100)), 3) is RoleChangeOutcome.REFUSED_OLDER_EPOCH
    assert change_to_slave(of((1, 0), (4, 100)), 4) is RoleChangeOutcome.ACCEPTED


HANDSHAKES = [
    ("empty_file_transfers_from_start", EpochFile(), 0, of((1, 0)), 500, H.TRANSFER_FROM_START, 0, None, ()),
    ("data_less_file_transfers_from_start", of((1, 0)), 0, of((2, 0)), 500, H.TRANSFER_FROM_START, 0, None, ()),
    ("truncate_to_consistent_point", of((1, 0)), 1000, of((1, 0), (2, 900)), 1200, H.TRUNCATE_AND_TRANSFER, 900,
     900, ((1, 0),)),
    ("point_at_own_end_no_truncation", of((1, 0)), 900, of((1, 0), (2, 1000)), 1200, H.TRUNCATE_AND_TRANSFER, 900,
     None, ((1, 0),)),
    ("entries_past_the_point_are_dropped", of((1, 0), (3, 950)), 1000, of((1, 0), (2, 900)), 1200,
     H.TRUNCATE_AND_TRANSFER, 900, 900, ((1, 0),)),
    ("no_consistent_point_fails", of((1, 0)), 400, of((2, 0)), 300, H.NO_CONSISTENT_POINT, -1, None, ((1, 0),)),
]


@pytest.mark.parametrize("case", HANDSHAKES, ids=[c[0] for c in HANDSHAKES])
def test_slave_handshake(case):
    _, local, lmax, master, mmax, outcome, start, cut, entries = case
    d = slave_handshake(local, lmax, master, mmax)
    assert (d.outcome, d.transfer_from, d.truncate_log_to) == (outcome, start, cut)
    assert d.epoch_file == of(*entries)


def test_upstream_fails_the_one_sided_empty_epoch():
    d = slave_handshake(of((1, 0)), 0, of((2, 0)), 500, variant=Variant(skip_empty_epochs=False))
    assert d.outcome is H.NO_CONSISTENT_POINT


LOG = (Message(0, 40, 1), Message(40, 40, 1), Message(80, 30, 2), Message(110, 30, 2), Message(140, 10, 3))
MFILE = of((1, 0), (2, 80), (3, 140))

BATCHES = [
    ("batch_within_an_epoch", 0, 200, TransferHeader(0, 1, 0, 50, 80)),
    ("cut_at_the_epoch_end", 40, 200, TransferHeader(40, 1, 0, 50, 40)),
    ("next_epoch_with_its_label", 80, 200, TransferHeader(80, 2, 80, 50, 60)),
    ("byte_limit_keeps_whole_messages", 0, 50, TransferHeader(0, 1, 0, 50, 40)),
    ("oversized_first_message_goes_alone", 0, 10, TransferHeader(0, 1, 0, 50, 40)),
    ("nothing_to_send", 150, 200, None),
]


@pytest.mark.parametrize("case", BATCHES, ids=[c[0] for c in BATCHES])
def test_next_batch(case):
    _, start, limit, header = case
    assert next_batch(MFILE, LOG, start, 50, limit) == header


FLUSHES = [
    # (name, flushed before, batch [offset, offset + size), variant, flushed after)
    ("unflushed_batch_is_flushed_first", 0, (0, 30), Variant(), 30),
    ("partly_flushed_batch_flushed_to_its_end", 20, (10, 30), Variant(), 40),
    ("flushed_exactly_to_the_end", 40, (10, 30), Variant(), 40),
    ("flushed_past_the_end_unchanged", 41, (10, 30), Variant(), 41),
    ("ships_unflushed_flushes_nothing", 0, (0, 30), Variant(ships_unflushed=True), 0),
    ("past_2_to_the_31", 2**31 - 5, (2**31 - 5, 10), Variant(), 2**31 + 5),
]


@pytest.mark.parametrize("case", FLUSHES, ids=[c[0] for c in FLUSHES])
def test_flushed_for_transfer(case):
    _, flushed, (offset, size), variant, after = case
    assert flushed_for_transfer(flushed, TransferHeader(offset, 1, 0, 0, size), variant) == after


@given(st.integers(0, 2**40), st.integers(0, 2**40), st.integers(1, 2**20))
def test_a_master_has_flushed_every_byte_it_sends(flushed, offset, size):
    after = flushed_for_transfer(flushed, TransferHeader(offset, 1, 0, 0, size))
    assert after >= offset + size and after >= flushed and after in (flushed, offset + size)


def test_label_switched_variant_labels_the_last_batch_with_the_next_epoch():
    h = next_batch(MFILE, LOG, 40, 50, 200, Variant(label_switched_early=True))
    assert (h.offset, h.size, h.epoch, h.epoch_start_offset) == (40, 40, 2, 80)


HEADERS = [
    ("same_epoch_appends", of((1, 0)), 40, TransferHeader(40, 1, 0, 30, 40), HeaderOutcome.APPEND, ((1, 0),), 30),
    ("new_epoch_recorded", of((1, 0)), 80, TransferHeader(80, 2, 80, 200, 60), HeaderOutcome.APPEND_AND_RECORD_EPOCH,
     ((1, 0), (2, 80)), 140),
    ("first_header_of_a_new_slave", EpochFile(), 0, TransferHeader(0, 1, 0, 10, 40),
     HeaderOutcome.APPEND_AND_RECORD_EPOCH, ((1, 0),), 10),
    ("offset_mismatch_drops", of((1, 0)), 40, TransferHeader(80, 2, 80, 50, 60), HeaderOutcome.OFFSET_MISMATCH,
     ((1, 0),), 40),
    # AutoSwitchHAClient checks the header offset only when the slave's max offset is not 0:
    # an empty slave takes a first batch from a prefix-truncated master (or one syncing from
    # its last file) where it starts, and its log begins there.
    ("empty_slave_takes_a_first_batch_at_a_later_offset", EpochFile(), 0, TransferHeader(1024, 3, 512, 2000, 40),
     HeaderOutcome.APPEND_AND_RECORD_EPOCH, ((3, 512),), 1064),
    ("a_slave_with_data_still_checks", of((3, 512)), 1064, TransferHeader(1024, 3, 512, 2000, 40),
     HeaderOutcome.OFFSET_MISMATCH, ((3, 512),), 1064),
]


@pytest.mark.parametrize("case", HEADERS, ids=[c[0] for c in HEADERS])
def test_on_transfer_header(case):
    _, f, slave_max, header, outcome, entries, confirm = case
    d = on_transfer_header(f, slave_max, header)
    assert (d.outcome, d.epoch_file, d.confirm_offset) == (outcome, of(*entries), confirm)


@given(st.integers(0, 10**6), st.integers(0, 10**6))
def test_slave_confirm_offset_never_beyond_its_log(header_confirm, own_max):
    c = slave_confirm_offset(header_confirm, own_max)
    assert c <= own_max and c <= header_confirm and c in (header_confirm, own_max)


@given(st.integers(0, 150), st.integers(1, 200))
def test_batches_never_cross_an_epoch_end(start, limit):
    h = next_batch(MFILE, LOG, start, 0, limit)
    if h is not None:
        ends = [80, 140]
        assert not any(h.offset < e < h.offset + h.size for e in ends)
