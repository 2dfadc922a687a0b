"""Heartbeat liveness, the expiry scan and the controller-side elections."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller_cases import CLUSTER, NAME, R51, addr, metadata, state_of
from spec.controller.heartbeat import (
    DEFAULT_ELECTION_PRIORITY,
    FIRST_HEARTBEAT_CONFIRM_OFFSET,
    BrokerHeartbeat,
    HeartbeatLiveness,
    HeartbeatTable,
    is_broker_active,
    on_broker_channel_close,
    on_broker_heartbeat,
    scan_not_active_broker,
)
from spec.controller.records import BrokerIdentity, ResponseCode as RC
from spec.controller.scheduling import (
    enters_leader_state,
    on_broker_inactive,
    scan_inactive_master_and_reelect,
    scan_need_reelect_broker_sets,
    scan_not_active_broker_and_elect,
    trigger_elect_master,
)


def hb(broker_id, epoch=1, max_offset=100, confirm=50, timeout=10_000, priority=DEFAULT_ELECTION_PRIORITY, name=NAME):
    return BrokerHeartbeat(CLUSTER, name, addr(broker_id), broker_id, epoch, max_offset, confirm, timeout, priority)


def ident(broker_id, name=NAME):
    return BrokerIdentity(CLUSTER, name, broker_id)


def table_of(*beats_at):
    table = HeartbeatTable()
    for beat, now in beats_at:
        table = on_broker_heartbeat(table, beat, now)
    return table


def test_first_heartbeat_creates_the_entry_for_any_broker_with_confirm_offset_zero():
    """DefaultBrokerHeartbeatManager.onBrokerHeartbeat builds a new entry with the BrokerLiveInfo
    constructor that has no confirmOffset parameter: the first heartbeat's confirmOffset (200
    here) is dropped and the entry holds 0 until (epoch, maxOffset) grow (5.1.x and develop)."""
    table = table_of((hb(7, epoch=2, max_offset=300, confirm=200, priority=3), 1_000))
    info = table.get(ident(7))
    assert (info.last_update_timestamp, info.epoch, info.max_offset, info.confirm_offset, info.election_priority) == (
        1_000, 2, 300, FIRST_HEARTBEAT_CONFIRM_OFFSET, 3)
    assert FIRST_HEARTBEAT_CONFIRM_OFFSET == 0
    grown = on_broker_heartbeat(table, hb(7, epoch=2, max_offset=301, confirm=250), 2_000).get(ident(7))
    assert grown.confirm_offset == 250


@pytest.mark.parametrize(
    "second,expected",
    [
        (dict(epoch=2, max_offset=50, confirm=40), (2, 50, 40)),  # larger epoch: replaced
        (dict(epoch=1, max_offset=150, confirm=90), (1, 150, 90)),  # same epoch, larger offset: replaced
        # kept: the first heartbeat's entry, whose confirmOffset is 0 (see above)
        (dict(epoch=1, max_offset=100, confirm=99), (1, 100, 0)),  # equal: kept
        (dict(epoch=1, max_offset=80, confirm=70), (1, 100, 0)),  # smaller offset (e.g. after truncation): kept
        (dict(epoch=0, max_offset=900, confirm=800), (1, 100, 0)),  # smaller epoch: kept
    ],
    ids=["epoch-grows", "offset-grows", "equal", "offset-shrinks", "epoch-shrinks"],
)
def test_live_entry_progress_is_replaced_only_when_it_grows(second, expected):
    table = table_of((hb(1), 0), (hb(1, timeout=5_000, priority=2, **second), 700))
    info = table.get(ident(1))
    assert (info.epoch, info.max_offset, info.confirm_offset) == expected
    # timestamp, timeout and priority always follow the latest heartbeat
    assert (info.last_update_timestamp, info.heartbeat_timeout_millis, info.election_priority) == (700, 5_000, 2)


def test_alive_iff_last_heartbeat_plus_timeout_is_not_before_now():
    table = table_of((hb(1, timeout=10_000), 1_000))
    assert is_broker_active(table, ident(1), 11_000)
    assert not is_broker_active(table, ident(1), 11_001)
    assert not is_broker_active(table, ident(2), 0)


def test_scan_removes_exactly_the_expired_entries():
    table = table_of((hb(1), 0), (hb(2), 5_000), (hb(3, name="broker-b"), 0))
    kept, expired = scan_not_active_broker(table, 10_001)
    assert expired == (ident(1), ident(3, "broker-b"))
    assert set(kept.entries) == {ident(2)}
    assert scan_not_active_broker(table, 10_000)[1] == ()


def test_channel_close_removes_at_once():
    table, removed = on_broker_channel_close(table_of((hb(1), 0)), ident(1))
    assert removed and table.get(ident(1)) is None
    assert on_broker_channel_close(table, ident(1)) == (table, False)


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 500), st.integers(0, 2_000)), max_size=12))
def test_heartbeat_progress_never_goes_down(beats):
    table, last = HeartbeatTable(), None
    for now, (epoch, offset, step) in enumerate(beats):
        table = on_broker_heartbeat(table, hb(1, epoch=epoch, max_offset=offset), now * 1_000 + step)
        info = table.get(ident(1))
        if last is not None:
            assert (info.epoch, info.max_offset) >= last
        last = (info.epoch, info.max_offset)


# ----------------------------------------------------------------- scheduling


def test_on_broker_inactive_triggers_only_for_the_recorded_master():
    m = metadata(master=2)
    assert on_broker_inactive(m, ident(2))
    assert not on_broker_inactive(m, ident(1))
    assert not on_broker_inactive(m, ident(2, "other"))


def test_controller_trigger_retries_three_times_each_clearing_the_master():
    m = metadata(master=1, master_epoch=4, members={1, 2})
    outcome = trigger_elect_master(m, NAME, HeartbeatLiveness(HeartbeatTable(), 0), R51)
    assert [a.code for a in outcome.attempts] == [RC.CONTROLLER_MASTER_NOT_AVAILABLE] * 3
    assert not outcome.succeeded
    assert (state_of(outcome.metadata).master_broker_id, state_of(outcome.metadata).master_epoch) == (None, 7)


def test_controller_trigger_stops_at_first_success():
    m = metadata(master=1, master_epoch=4, members={1, 2})
    outcome = trigger_elect_master(m, NAME, HeartbeatLiveness(table_of((hb(2), 0)), 0), R51)
    assert [a.code for a in outcome.attempts] == [RC.SUCCESS] and outcome.succeeded
    assert state_of(outcome.metadata).master_broker_id == 2


def test_expired_master_is_reelected_by_the_leader_only():
    m = metadata(master=1, master_epoch=4, members={1, 2})
    table = table_of((hb(1), 0), (hb(2), 9_000))
    led = scan_not_active_broker_and_elect(m, table, 10_001, R51)
    assert led.expired == (ident(1),) and state_of(led.metadata).master_broker_id == 2
    follower = scan_not_active_broker_and_elect(m, table, 10_001, R51, is_leader=False)
    assert follower.expired == (ident(1),) and follower.metadata == m and follower.table == led.table


def test_expired_slave_triggers_nothing():
    m = metadata(master=1, members={1, 2})
    result = scan_not_active_broker_and_elect(m, table_of((hb(1), 9_000), (hb(2), 0)), 10_001, R51)
    assert result.expired == (ident(2),) and result.elections == () and result.metadata == m


@pytest.mark.parametrize(
    "meta,beats,expected",
    [
        (dict(master=1, members={1, 2}), [hb(2)], (NAME,)),  # dead master, live replica
        (dict(master=1, members={1, 2}), [hb(1), hb(2)], ()),  # master alive
        (dict(master=1, members={1, 2}), [], ()),  # nobody alive
        (dict(master=None, master_epoch=3, members={1, 2}), [hb(2)], ()),  # no master recorded
        (dict(master=1, members={1}), [hb(3)], (NAME,)),  # live replica outside the set counts
    ],
    ids=["dead-master", "master-alive", "all-dead", "no-master", "replica-outside-set"],
)
def test_scan_need_reelect(meta, beats, expected):
    table = table_of(*[(b, 0) for b in beats])
    assert scan_need_reelect_broker_sets(metadata(**meta), HeartbeatLiveness(table, 1)) == expected


def test_periodic_reelect_catches_a_master_this_node_never_saw():
    # After a controller leader change the new leader has no entry for the dead master:
    # its expiry scan never fires, only the periodic re-elect elects.
    m = metadata(master=1, master_epoch=4, members={1, 2})
    table = table_of((hb(2), 0))
    assert scan_not_active_broker_and_elect(m, table, 1_000, R51).elections == ()
    result = scan_inactive_master_and_reelect(m, table, 1_000, R51)
    assert [e.broker_name for e in result.elections] == [NAME]
    assert state_of(result.metadata).master_broker_id == 2
    assert scan_inactive_master_and_reelect(m, table, 1_000, R51, is_leader=False).metadata == m


# ------------------------------------------------------------------ the leader state (RoleChangeHandler)


@pytest.mark.parametrize("outcome, applied, own_empty_proposal, last_applied_term, term, serves", [
    ("not_proposed_yet", 5, -1, 2, 2, False),
    ("own_proposal_not_yet_applied", 5, 5, 2, 2, False),
    ("own_proposal_just_applied", 6, 5, 2, 2, True),
    ("entries_after_own_proposal_applied", 9, 5, 2, 2, True),
    ("an_entry_of_its_term_applied_before_its_own_proposal", 3, 5, 2, 2, False),
    ("first_entry_is_its_own_proposal", 1, 0, 1, 1, True),
])
def test_enters_leader_state_once_its_own_empty_proposal_is_applied(outcome, applied, own_empty_proposal,
                                                                      last_applied_term, term, serves):
    assert enters_leader_state(applied, own_empty_proposal, last_applied_term, term) is serves


@given(st.integers(0, 2**40), st.integers(-1, 2**40), st.integers(0, 50), st.integers(0, 50))
def test_a_leader_never_serves_before_its_own_proposal_and_keeps_serving_after(applied, own, last_term, term):
    serves = enters_leader_state(applied, own, last_term, term)
    if applied <= own or own < 0:
        assert not serves  # its own empty proposal (or one not made yet) is not applied: whatever the terms
    if serves:
        assert enters_leader_state(applied + 1, own, last_term, term)  # applying more never takes it back
    assert enters_leader_state(own + 1, own, last_term, term) is (own >= 0)  # the entry itself is enough
