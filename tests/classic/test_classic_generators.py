"""The differential's classic inputs reach every outcome of every classic procedure.

``conformance.strategies.ARGUMENTS["classic.*"]`` feeds the handler-level differential
tests. Within the Hypothesis profile's budget each must reach every outcome the spec's
procedure has (under every profile it depends on), and its inputs must cross offsets
past 2^31.
"""
import collections

import attrs

import pytest
from hypothesis import given

from adapters.operations import OPERATIONS, call_spec
from conformance.strategies import ARGUMENTS
from spec.classic import commitlog, master, slave, write
from spec.classic.profiles import PROFILES


def _ints(value):
    """Every int in an argument, records and tuples included."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _ints(v)
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _ints(v)
    elif attrs.has(type(value)):
        for f in attrs.fields(type(value)):
            yield from _ints(getattr(value, f.name))


def _outcome(answer):
    for field in ("outcome", "kind"):
        if hasattr(answer, field):
            return getattr(answer, field).value
    if isinstance(answer, tuple):  # (FirstOffsetOutcome, offset)
        return answer[0].value
    return getattr(answer, "value", answer)


# every outcome each procedure can give (outside a profile's reach: named per profile below)
OUTCOMES = {
    "classic.place_message": {o.value for o in commitlog.PlaceOutcome},
    "classic.commit_log_data": {o.value for o in commitlog.DataOutcome},
    "classic.flush_commit_log": {o.value for o in commitlog.FlushOutcome},
    "classic.is_slave_ok": {o.value for o in write.SlaveOkOutcome},
    "classic.submit_replica_request": {o.value for o in write.ReplicaOutcome},
    "classic.transfer_status": {o.value for o in write.TransferOutcome},
    "classic.submit_flush_request": {o.value for o in write.FlushRequestOutcome},
    "classic.on_slave_report": {o.value for o in master.ReportOutcome},
    "classic.master_housekeeping": {o.value for o in master.HousekeepingOutcome},
    "classic.write_socket_round": {o.value for o in master.WriteOutcome},
    "classic.periodic_report": {"NONE", "HEARTBEAT"},
    "classic.progress_report": {"NONE", "PROGRESS"},
    "classic.on_frame": {o.value for o in slave.FrameOutcome},
    "classic.slave_housekeeping": {o.value for o in slave.ClientHousekeeping},
}


def test_every_classic_operation_is_covered():
    assert set(OUTCOMES) | {"classic.on_connect"} == {n for n in OPERATIONS if n.startswith("classic.")}


@pytest.mark.parametrize("name", sorted(OUTCOMES))
def test_classic_inputs_reach_every_outcome(name):
    op = OPERATIONS[name]
    profiles = op.profiles or (None,)
    reached: collections.Counter = collections.Counter()
    big = []

    @given(ARGUMENTS[name])
    def explore(args):
        for profile in profiles:
            reached[_outcome(call_spec(name, profile, args))] += 1
        big.append(any(v >= 2**31 for v in _ints(args)))

    explore()
    assert OUTCOMES[name] <= set(reached), f"{name} never reached {sorted(OUTCOMES[name] - set(reached))}"
    reads_offsets = name != "classic.submit_flush_request"  # (a config and a flag only)
    assert any(big) or not reads_offsets, f"{name}: no offset (or time) past 2^31"


def test_profiles_part_where_releases_differ():
    args = {"connection": master.ConnectionView(5, 5), "report": 101, "master_max_offset": 100,
            "push2_slave_max_offset": 5}
    answers = {p: call_spec("classic.on_slave_report", p, args).outcome for p in PROFILES}
    assert answers == {"rocketmq-4.9.3": master.ReportOutcome.ACK_BEYOND_MASTER,
                       "rocketmq-4.9.0": master.ReportOutcome.ACK, "rocketmq-5.0": master.ReportOutcome.ACK}
