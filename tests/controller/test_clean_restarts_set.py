"""clean_restarts_set (spec/invariants/controller.py): which admin cleans leave a broker
set to start afresh at its next registration, the finding clean_restarts_broker_set; a
table naming each outcome."""
import pytest

from controller_cases import NAME, metadata
from spec.controller.events import CleanBrokerDataEvent, ElectMasterEvent
from spec.controller.records import EMPTY_METADATA
from spec.invariants.controller import clean_restarts_set

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
