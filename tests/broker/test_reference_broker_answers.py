"""The reference controller-mode broker takes an answer only for the call it answers
(reference/controller_broker.py ``_on_answer``): a controller that answers a call with a
reply of another kind (a slip of the controller under test, which its own step
conformance names) must not move the broker as if it had answered correctly."""
from __future__ import annotations

import pytest

from reference.controller_broker import BrokerSetup, ControllerModeBroker
from reference.node_api import Message
from spec.controller.messages import ControllerAnswer, ControllerCall
from spec.controller.records import (
    ElectMasterResponse,
    GetNextBrokerIdResponse,
    RegisterBrokerResponse,
    ResponseCode,
)


def calling() -> tuple[ControllerModeBroker, ControllerCall]:
    """b1 at boot asks controller c1 for its broker id (GetNextBrokerIdRequest)."""
    broker = ControllerModeBroker("b1", ("b2",), BrokerSetup("c", "broker-a", ("c1",)))
    (call,) = [m.payload for m in broker.tick(0).messages if isinstance(m.payload, ControllerCall)]
    return broker, call


@pytest.mark.parametrize("outcome, response", [
    ("an_election_reply", ElectMasterResponse(ResponseCode.SUCCESS, master_broker_id=1, master_address="b1",
                                              master_epoch=1, sync_state_set_epoch=1, sync_state_set=frozenset({1}))),
    ("a_registration_reply", RegisterBrokerResponse(ResponseCode.SUCCESS)),
])
def test_an_answer_of_another_kind_is_ignored_and_the_call_stays_open(outcome, response):
    broker, call = calling()
    before = (broker.registration, broker.role_state)
    broker.step(Message("c1", "b1", ControllerAnswer(call.call_id, response)), 10)
    assert (broker.registration, broker.role_state) == before
    assert call.call_id in broker.calls


def test_the_answer_of_its_kind_is_taken():
    broker, call = calling()
    broker.step(Message("c1", "b1", ControllerAnswer(call.call_id, GetNextBrokerIdResponse(ResponseCode.SUCCESS, 1))),
                10)
    assert broker.registration.temp_broker_id == 1 and call.call_id not in broker.calls
