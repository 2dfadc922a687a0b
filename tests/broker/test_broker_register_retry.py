"""The reference broker's registration retries (reference/controller_broker.py,
spec/broker/register.py ``retry_pause_ms``): a step the controller refuses is tried
again after a pause, as upstream's ``ReplicasManager.startBasicService`` sleeps after a
failed ``register()``; a step that succeeds, or a controller that is not the leader
(the next one is asked), goes on at once.

Before the pause, a broker whose registerBroker was refused asked again on every answer:
in a searched controller run about 68,000 registerBroker decisions in 150 simulated
seconds (docs/performance.md, session 11).
"""
from reference.controller_broker import BrokerDurable, BrokerSetup, ControllerModeBroker
from reference.node_api import Message
from spec.broker import register as reg
from spec.broker.records import BrokerRoleState
from spec.controller.messages import ControllerAnswer, ControllerCall
from spec.controller.records import (
    ApplyBrokerIdRequest,
    ApplyBrokerIdResponse,
    GetNextBrokerIdRequest,
    GetNextBrokerIdResponse,
    RegisterBrokerRequest,
    RegisterBrokerResponse,
    ResponseCode as RC,
)

CONTROLLERS = ("c1", "c2", "c3")
REGISTRATION = (GetNextBrokerIdRequest, ApplyBrokerIdRequest, RegisterBrokerRequest)


def _broker(registered_id=None):
    setup = BrokerSetup("cluster", "set", CONTROLLERS)
    broker = ControllerModeBroker("b1", (), setup)
    if registered_id is not None:  # a broker with its metadata file, restarted
        durable = broker.durable()
        state = reg.BrokerRegistrationState("cluster", "set", "b1", reg.RegisterState.CREATE_METADATA_FILE_DONE,
                                            broker_id=registered_id)
        broker = ControllerModeBroker("b1", (), setup, BrokerDurable(durable.replica, state,
                                                                      BrokerRoleState(broker_id=registered_id), 0))
    return broker


def _drive(broker, answer, until_ms):
    """Run the broker alone until ``until_ms``, each registration call answered at once by
    ``answer(dst, request)``; returns the (time, controller, request) of every registration call."""
    calls, now = [], 0
    ready = broker.tick(now)
    while True:
        for m in ready.messages:
            if isinstance(m.payload, ControllerCall) and isinstance(m.payload.request, REGISTRATION):
                calls.append((now, m.dst, m.payload.request))
        if len(calls) > 1_000:  # a broker asking again on every answer: time stands still
            return calls
        replies = [Message(m.dst, m.src, ControllerAnswer(m.payload.call_id, answer(m.dst, m.payload.request)))
                   for m in ready.messages
                   if isinstance(m.payload, ControllerCall) and isinstance(m.payload.request, REGISTRATION)]
        if replies:
            msgs = []
            for r in replies:
                msgs += broker.step(r, now).messages
            ready = type(ready)(tuple(msgs))
            continue
        now = broker.next_deadline()
        if now > until_ms:
            return calls
        ready = broker.tick(now)


def _refuse(dst, request):
    return RegisterBrokerResponse(RC.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED)


def test_a_refused_registration_pauses_before_the_next_try():
    calls = _drive(_broker(registered_id=1), _refuse, 30_000)
    times = [t for t, _, _ in calls]
    assert all(isinstance(r, RegisterBrokerRequest) for _, _, r in calls)
    # upstream's pace: a pause after each failed try, a longer one after every fifth
    assert 8 <= len(times) <= 16, times
    assert all(b - a >= reg.RETRY_PAUSE_MS for a, b in zip(times, times[1:])), times
    for k in range(reg.TRIES_PER_ROUND, len(times)):
        assert times[k] - times[k - reg.TRIES_PER_ROUND] > reg.ROUND_PAUSE_MS, times


def test_a_refused_id_starts_over_after_a_pause():
    # two brokers were offered the same id: the one whose applyBrokerId is refused
    # deletes its temp file and asks for a new id, a pause later (upstream's random sleep)
    def taken(dst, request):
        if isinstance(request, GetNextBrokerIdRequest):
            return GetNextBrokerIdResponse(RC.SUCCESS, next_broker_id=2)
        return ApplyBrokerIdResponse(RC.CONTROLLER_BROKER_ID_INVALID)

    calls = _drive(_broker(), taken, 3_500)
    assert [(t, type(r)) for t, _, r in calls] == [
        (0, GetNextBrokerIdRequest), (0, ApplyBrokerIdRequest),
        (1_000, GetNextBrokerIdRequest), (1_000, ApplyBrokerIdRequest),
        (2_000, GetNextBrokerIdRequest), (2_000, ApplyBrokerIdRequest),
        (3_000, GetNextBrokerIdRequest), (3_000, ApplyBrokerIdRequest)]


def _leader(dst, request):
    """An active controller that accepts every registration step."""
    if isinstance(request, GetNextBrokerIdRequest):
        return GetNextBrokerIdResponse(RC.SUCCESS, next_broker_id=1)
    if isinstance(request, ApplyBrokerIdRequest):
        return ApplyBrokerIdResponse(RC.SUCCESS)
    return RegisterBrokerResponse(RC.SUCCESS)


def test_a_successful_step_goes_on_at_once():
    broker = _broker()
    calls = _drive(broker, _leader, 10_000)
    assert [(t, type(r)) for t, _, r in calls] == [
        (0, GetNextBrokerIdRequest), (0, ApplyBrokerIdRequest), (0, RegisterBrokerRequest)]
    assert broker.registration.state is reg.RegisterState.REGISTERED


def test_the_leader_found_after_a_not_leader_answer_registers_at_once():
    def only_c2(dst, request):
        if dst != "c2":
            return GetNextBrokerIdResponse(RC.CONTROLLER_NOT_LEADER)
        return _leader(dst, request)

    broker = _broker()
    calls = _drive(broker, only_c2, 10_000)
    assert [(t, c) for t, c, _ in calls] == [(0, "c1"), (0, "c2"), (0, "c2"), (0, "c2")]
    assert broker.registration.state is reg.RegisterState.REGISTERED
