"""clean_restarts_set (spec/invariants/controller.py): which admin cleans leave a broker
set to start afresh at its next registration, the finding clean_restarts_broker_set; a
table naming each outcome."""
import attrs
import pytest

from controller_cases import NAME, metadata
from spec.controller.events import CleanBrokerDataEvent, ElectMasterEvent
from spec.controller.records import EMPTY_METADATA, BrokerRegistration
from spec.broker.records import LogEntry
from spec.invariants.controller import (
    CheckCodeHistory,
    clean_restarts_set,
    queue_offset_reuses,
    queue_offsets_unique,
    set_restarted,
)

SET = metadata(ids=(1, 2, 3), master=2, members={2})  # the master's set of one: {2}


@pytest.mark.parametrize("name, before, events, restarts", [
    ("the dead master's id, its set of one: emptied", SET, [CleanBrokerDataEvent(NAME, {2})], True),
    ("every id of a larger set", metadata(ids=(1, 2), master=1, members={1, 2}),
     [CleanBrokerDataEvent(NAME, {1, 2})], True),
    ("the whole set (no ids: cleanLivingBroker)", SET, [CleanBrokerDataEvent(NAME)], True),
    ("ids outside the SyncStateSet", SET, [CleanBrokerDataEvent(NAME, {1, 3})], False),
    ("the master's id, the set keeping another member", metadata(ids=(1, 2), master=1, members={1, 2}),
     [CleanBrokerDataEvent(NAME, {1})], False),
    ("a set the controller did not know", EMPTY_METADATA, [CleanBrokerDataEvent(NAME, {1})], False),
    ("no event (a refused clean)", SET, [], False),
    ("another event", SET, [ElectMasterEvent(NAME, False)], False),
])
def test_clean_restarts_set_outcomes(name, before, events, restarts):
    assert clean_restarts_set(before, events, NAME) is restarts, name


LATER = metadata(ids=(1, 2, 3), master=2, members={2}, master_epoch=3, ss_epoch=4)


@pytest.mark.parametrize("name, after, restarts", [
    ("unknown: the SyncStateSet dropped, the ids kept",
     LATER.with_set(NAME, attrs.evolve(LATER.get(NAME), sync_state=None)), True),
    ("gone altogether", EMPTY_METADATA, True),
    ("known again, its epochs started over", metadata(ids=(4,), master=4, members={4}), True),
    ("known again, the masterEpoch lower, the set's epoch not", metadata(ids=(4,), master=4, members={4},
                                                                        ss_epoch=4), True),
    ("unchanged", LATER, False),
    ("a newer masterEpoch (an election)", metadata(ids=(1, 2, 3), master=1, members={1}, master_epoch=4,
                                                   ss_epoch=5), False),
    ("a newer SyncStateSet epoch (an alter)", metadata(ids=(1, 2, 3), master=2, members={1, 2}, master_epoch=3,
                                                       ss_epoch=5), False),
])
def test_set_restarted_outcomes(name, after, restarts):
    """What a controller's metadata says, with no decision at hand (a clean its proposer
    never reported, seed 5928): the set known before is unknown after, or known again from
    lower epochs."""
    assert set_restarted(LATER, after, NAME) is restarts, name
    assert set_restarted(EMPTY_METADATA, after, NAME) is False


def registered(codes: dict[int, str]):
    """A set of ids 1 and 2 with ``codes`` (broker id -> registerCheckCode) registered too."""
    m = metadata(ids=(1, 2), master=1, members={1, 2})
    known = m.get(NAME)
    brokers = known.replicas.brokers
    for broker_id, code in codes.items():
        brokers = brokers.set(broker_id, BrokerRegistration(f"addr-{code}", code))
    return m.with_set(NAME, attrs.evolve(known, replicas=attrs.evolve(known.replicas, brokers=brokers)))


def test_a_cleaned_id_may_be_registered_again_with_another_check_code():
    """broker_id_check_code_stable after an admin clean (seed 5849 of the default controller
    search): a broker applies for an id a clean unregistered, with its own check code, and a
    lagging controller still shows the old registration; an id never cleaned must keep its
    code, in either order."""
    old, new = registered({5: "b3;1"}), registered({5: "b2;2"})
    history, found = CheckCodeHistory().observe(old)
    assert found == []
    _, found = history.observe(new)
    assert [v.invariant for v in found] == ["broker_id_check_code_stable"]  # never cleaned: taken over
    cleaned = history.note_clean(NAME, {5})
    history, found = cleaned.observe(new)
    assert found == []
    _, found = history.observe(old)  # a lagging controller, still before the clean
    assert found == []


@pytest.mark.parametrize("name, between, behind, reassigned", [
    ("a controller no other is ahead of no longer registers the id: cleaned", (), False, True),
    ("the set gone altogether", None, False, True),
    ("a controller behind another (replaying its log) lacks it: not a clean", (), True, False),
    ("the id still registered", (5,), False, False),
])
def test_a_clean_read_from_the_metadata_lets_the_id_be_registered_again(name, between, behind, reassigned):
    """A clean whose proposer lost its leadership before reporting it (seed 5928) tells the
    check-code history nothing: the metadata does. Id 5 registered with one code, then
    ``between`` (the ids a controller registers, or no set), then with another code, then
    a lagging controller still shows the first."""
    first = registered({5: "b3;1"})
    history, _ = CheckCodeHistory().observe(first)
    gap = EMPTY_METADATA if between is None else registered({i: "b3;1" for i in between})
    history, found = history.observe(gap, behind)
    assert found == []
    history, found = history.observe(registered({5: "b2;2"}))
    _, lagging = history.observe(first, behind=True)
    assert {v.invariant for v in found + lagging} == (set() if reassigned else {"broker_id_check_code_stable"}), name


@pytest.mark.parametrize("name, entries, reuses", [
    ("distinct offsets", [("m1", "q0", 0), ("m2", "q0", 1), ("m3", "q1", 0)], []),
    ("one offset twice", [("m1", "q1", 0), ("m2", "q1", 1), ("m31", "q1", 0)], [("q1", 0, "m1", "m31")]),
    ("the same message twice (a duplicate, not a reuse)", [("m1", "q0", 0), ("m1", "q0", 0)], []),
    ("three holders: each later one against the first", [("a", "q0", 0), ("b", "q0", 0), ("c", "q0", 0)],
     [("q0", 0, "a", "b"), ("q0", 0, "a", "c")]),
])
def test_queue_offset_reuses(name, entries, reuses):
    """What queue_offsets_never_reused and its clean-restart finding both read (seed 5813:
    a log holding the old set's m1 and the new set's m31 at q1@0)."""
    log = [LogEntry(msg_id, 10 * i, 10 * i + 10, queue, offset) for i, (msg_id, queue, offset) in enumerate(entries)]
    assert queue_offset_reuses(log) == reuses, name
    assert [v.subject for v in queue_offsets_unique(log)] == [f"{q}@{o}" for q, o, _, _ in reuses]
