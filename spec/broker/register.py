"""The broker's registration flow in rocketmq-5.1 (``ReplicasManager.register``).

getNextBrokerId -> write a temp metadata file (id, "addr;millis") -> applyBrokerId
(failure: delete the temp file and start over) -> metadata file (temp deleted) ->
registerBroker. The files are durable, so a restart resumes from the furthest step
it reached (``confirmNowRegisteringState``). After registering, a broker that learnt
no master asks electMaster for itself (spec/broker/role.py).

A step the controller refuses is tried again after a pause (:func:`retry_pause_ms`),
never at once: upstream's ``ReplicasManager.startBasicService`` (5.1.1 on) sleeps
``random.nextInt(1000)`` ms after each failed ``register()`` ("to avoid registration
concurrency conflicts"), and after five failed tries returns to ``start``'s retry
thread, which sleeps ``RETRY_INTERVAL_SECOND`` (5 s) before five more. When the broker
tries is a freedom of step conformance (spec/steps/broker.py); this is what the
reference broker does (reference/controller_broker.py).
"""
from __future__ import annotations

import enum
from typing import Optional, Union

import attrs

from spec.controller.records import (
    ApplyBrokerIdRequest,
    ApplyBrokerIdResponse,
    GetNextBrokerIdRequest,
    GetNextBrokerIdResponse,
    RegisterBrokerRequest,
    RegisterBrokerResponse,
    ResponseCode,
)


class RegisterState(enum.Enum):
    INITIAL = "INITIAL"
    CREATE_TEMP_METADATA_FILE_DONE = "CREATE_TEMP_METADATA_FILE_DONE"
    CREATE_METADATA_FILE_DONE = "CREATE_METADATA_FILE_DONE"
    REGISTERED = "REGISTERED"


@attrs.frozen(slots=True)
class BrokerRegistrationState:
    cluster_name: str
    broker_name: str
    broker_address: str
    state: RegisterState = RegisterState.INITIAL
    # The metadata file's id (CREATE_METADATA_FILE_DONE and later).
    broker_id: Optional[int] = None
    # The temp metadata file (CREATE_TEMP_METADATA_FILE_DONE).
    temp_broker_id: Optional[int] = None
    temp_register_check_code: Optional[str] = None


def on_restart(persisted: BrokerRegistrationState) -> BrokerRegistrationState:
    """Resume from the files: a metadata file wins over a temp file; REGISTERED is not durable."""
    if persisted.broker_id is not None:
        return attrs.evolve(persisted, state=RegisterState.CREATE_METADATA_FILE_DONE, temp_broker_id=None, temp_register_check_code=None)
    if persisted.temp_broker_id is not None:
        return attrs.evolve(persisted, state=RegisterState.CREATE_TEMP_METADATA_FILE_DONE)
    return attrs.evolve(persisted, state=RegisterState.INITIAL)


# startBasicService: a failed register() is followed by a sleep of random.nextInt(1000) ms
# (taken here at its bound), and every fifth by RETRY_INTERVAL_SECOND more.
RETRY_PAUSE_MS = 1_000
TRIES_PER_ROUND = 5
ROUND_PAUSE_MS = 5_000


def retry_pause_ms(failures: int) -> int:
    """The pause before the next try after ``failures`` (>= 1) failed tries in a row."""
    return RETRY_PAUSE_MS + (ROUND_PAUSE_MS if failures % TRIES_PER_ROUND == 0 else 0)


Request = Union[GetNextBrokerIdRequest, ApplyBrokerIdRequest, RegisterBrokerRequest]


def next_request(s: BrokerRegistrationState) -> Optional[Request]:
    """The controller call the broker makes next (None once registered)."""
    if s.state is RegisterState.INITIAL:
        return GetNextBrokerIdRequest(s.cluster_name, s.broker_name)
    if s.state is RegisterState.CREATE_TEMP_METADATA_FILE_DONE:
        return ApplyBrokerIdRequest(s.cluster_name, s.broker_name, s.temp_broker_id, s.temp_register_check_code)
    if s.state is RegisterState.CREATE_METADATA_FILE_DONE:
        return RegisterBrokerRequest(s.cluster_name, s.broker_name, s.broker_address, s.broker_id)
    return None


def on_reply(s: BrokerRegistrationState, response, now: int) -> BrokerRegistrationState:
    """Advance on the reply to :func:`next_request`; ``now`` stamps a new check code."""
    if s.state is RegisterState.INITIAL and isinstance(response, GetNextBrokerIdResponse):
        if response.code != ResponseCode.SUCCESS:
            return s
        return attrs.evolve(
            s,
            state=RegisterState.CREATE_TEMP_METADATA_FILE_DONE,
            temp_broker_id=response.next_broker_id,
            temp_register_check_code=f"{s.broker_address};{now}",
        )
    if s.state is RegisterState.CREATE_TEMP_METADATA_FILE_DONE and isinstance(response, ApplyBrokerIdResponse):
        if response.code != ResponseCode.SUCCESS:
            # The id is taken: delete the temp file and start over.
            return attrs.evolve(s, state=RegisterState.INITIAL, temp_broker_id=None, temp_register_check_code=None)
        return attrs.evolve(
            s,
            state=RegisterState.CREATE_METADATA_FILE_DONE,
            broker_id=s.temp_broker_id,
            temp_broker_id=None,
            temp_register_check_code=None,
        )
    if s.state is RegisterState.CREATE_METADATA_FILE_DONE and isinstance(response, RegisterBrokerResponse):
        if response.code != ResponseCode.SUCCESS:
            return s
        return attrs.evolve(s, state=RegisterState.REGISTERED)
    raise ValueError(f"reply {type(response).__name__} does not answer a request made in state {s.state.value}")
