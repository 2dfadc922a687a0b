"""Hypothesis strategies for the arguments of every handler-level operation.

Used by the differential tests (``tests/conformance/test_handler_level.py``), which
feed the same arguments to an implementation and to the spec and compare answers.
Inputs are kept small so that every branch of every table is reached often.
"""
from __future__ import annotations

from hypothesis import strategies as st

from spec.controller.heartbeat import StaticLiveness
from spec.controller.records import (
    EMPTY_METADATA,
    AlterSyncStateSetRequest,
    ApplyBrokerIdRequest,
    CleanBrokerDataRequest,
    ElectMasterRequest,
    GetNextBrokerIdRequest,
    GetReplicaInfoRequest,
    RegisterBrokerRequest,
)
from spec.controller.rules import ControllerRules
from spec.dledger.candidate import VoteCounts, count_vote, start_vote_counts
from spec.dledger.heartbeat import HeartbeatCounts
from spec.dledger.member_state import MemberView
from spec.dledger.records import (
    Entry,
    HeartBeatRequest,
    PushEntryRequest,
    PushType,
    Role,
    VoteRequest,
    VoteResponse,
    VoteResult,
)
from spec.truncation.epoch_file import EpochEntry, EpochFile

IDS = ("n1", "n2", "n3", "x9")
PEERS = frozenset({"n1", "n2", "n3"})
terms = st.integers(-1, 6)


def member_views():
    return st.builds(
        MemberView,
        self_id=st.just("n1"), peers=st.just(PEERS), curr_term=terms,
        voted_for=st.none() | st.sampled_from(IDS), leader_id=st.none() | st.sampled_from(IDS[:3]),
        role=st.sampled_from(list(Role)), ledger_end_term=terms, ledger_end_index=st.integers(-1, 5),
        taking_leadership=st.booleans(),
    )


def logs(max_size: int = 5):
    return st.lists(st.integers(0, 4), max_size=max_size).map(
        lambda ts: tuple(Entry(i, t, f"e{i}") for i, t in enumerate(sorted(ts))))


def near(value: int, spread: int = 1):
    """Integers around ``value``: where the decision tables compare, equality matters most."""
    return st.integers(value - spread, value + spread)


@st.composite
def vote_args(draw) -> dict:
    """A vote request that, most of the time, is close to the voter's own term and ledger."""
    member = draw(member_views())
    request = VoteRequest(
        draw(near(member.curr_term) | terms), draw(st.sampled_from(IDS)),
        draw(near(member.ledger_end_term) | terms), draw(near(member.ledger_end_index) | st.integers(-1, 5)))
    return {"member": member, "request": request, "self_vote": draw(st.booleans())}


@st.composite
def heartbeat_args(draw) -> dict:
    member = draw(member_views())
    request = HeartBeatRequest(draw(near(member.curr_term) | terms),
                               draw(st.sampled_from((member.leader_id,) + IDS if member.leader_id else IDS)))
    return {"member": member, "request": request}


@st.composite
def vote_counts(draw) -> VoteCounts:
    counts = start_vote_counts(draw(st.integers(0, 5)))
    for _ in range(draw(st.integers(0, 5))):
        reply = draw(st.none() | st.builds(VoteResponse, st.integers(0, 8), st.sampled_from(list(VoteResult))))
        counts = count_vote(counts, reply)
    return counts


@st.composite
def push_args(draw) -> dict:
    member = draw(member_views())
    flog = draw(logs())
    kind = draw(st.sampled_from(list(PushType)))
    entries = tuple(Entry(len(flog) + i, 5, "x") for i in range(draw(st.integers(0, 2))))
    request = PushEntryRequest(
        draw(st.sampled_from([member.curr_term, member.curr_term + 1, member.curr_term - 1])),
        draw(st.sampled_from([member.leader_id or "n2", "n3"])), kind, draw(st.integers(-1, 6)),
        draw(st.integers(-1, 6)), draw(st.integers(-1, 4)), entries)
    return {"member": member, "request": request, "log": flog, "committed_index": draw(st.integers(-1, 3))}


@st.composite
def epoch_files(draw) -> EpochFile:
    starts = sorted(draw(st.lists(st.integers(0, 60), max_size=4, unique=True)))
    epochs = sorted(draw(st.lists(st.integers(0, 9), min_size=len(starts), max_size=len(starts), unique=True)))
    return EpochFile(tuple(EpochEntry(e, s) for e, s in zip(epochs, starts)))


# ------------------------------------------------------------------ controller

NAME = "broker-a"
CLUSTER = "c1"


def _address(i: int) -> str:
    return f"10.0.0.{i}:30911"


def controller_requests():
    ids = st.integers(-1, 4)
    return st.one_of(
        st.builds(GetNextBrokerIdRequest, st.just(CLUSTER), st.just(NAME)),
        st.builds(ApplyBrokerIdRequest, st.just(CLUSTER), st.just(NAME), ids,
                  st.integers(1, 3).map(lambda i: f"{_address(i)};{i}")),
        st.builds(RegisterBrokerRequest, st.just(CLUSTER), st.just(NAME), st.integers(1, 3).map(_address), ids),
        st.builds(GetReplicaInfoRequest, st.just(NAME)),
        st.builds(AlterSyncStateSetRequest, st.just(NAME), st.none() | ids, st.integers(0, 3),
                  st.frozensets(st.integers(1, 3)), st.integers(0, 3)),
        st.builds(ElectMasterRequest, st.just(CLUSTER), st.just(NAME), ids),
        st.builds(CleanBrokerDataRequest, st.just(CLUSTER), st.just(NAME), st.frozensets(st.integers(1, 3))),
    )


@st.composite
def controller_args(draw) -> dict:
    """A metadata snapshot reached by applying random calls, then one more call."""
    rules = ControllerRules()
    metadata = EMPTY_METADATA
    alive = draw(st.frozensets(st.integers(1, 3)))
    liveness = StaticLiveness.of(NAME, alive_ids=sorted(alive),
                                 infos={i: (draw(st.integers(0, 3)), draw(st.integers(0, 500))) for i in sorted(alive)})
    for _ in range(draw(st.integers(0, 6))):
        try:
            _, metadata = rules.execute(metadata, draw(controller_requests()), liveness)
        except (TypeError, ValueError):
            continue
    return {"metadata": metadata, "request": draw(controller_requests()), "liveness": liveness,
            "is_leader": draw(st.booleans() | st.just(True))}


# ------------------------------------------------------------------ operation -> arguments

ids3 = st.frozensets(st.integers(1, 3), min_size=1)

ARGUMENTS = {
    "dledger.handle_vote": vote_args(),
    "dledger.handle_heartbeat": heartbeat_args(),
    "dledger.parse_vote_result": st.fixed_dictionaries({"counts": vote_counts(), "peer_size": st.integers(1, 5)}),
    "dledger.decide_heartbeat_round": st.fixed_dictionaries({
        "counts": st.builds(HeartbeatCounts, st.integers(0, 5), st.integers(1, 5), st.integers(1, 5),
                            st.integers(0, 4), st.booleans(), st.integers(-1, 8)),
        "peer_size": st.integers(1, 5), "now": st.just(10_000),
        "last_succ_heartbeat_time": st.sampled_from([-1, 2_000, 3_999, 4_000, 9_000])}),
    "dledger.handle_push": push_args(),
    "dledger.leader_commit_index": logs(6).filter(bool).flatmap(lambda lg: st.fixed_dictionaries({
        "match_indexes": st.lists(st.integers(-1, len(lg) - 1), min_size=1, max_size=5).map(tuple),
        "log": st.just(lg), "curr_term": st.integers(0, 5), "committed_index": st.integers(-1, 2)})),
    "truncation.find_consistent_point": st.fixed_dictionaries({
        "local": epoch_files(), "local_max": st.integers(0, 80), "master": epoch_files(),
        "master_max": st.integers(0, 80)}),
    "truncation.append": st.fixed_dictionaries({
        "epoch_file": epoch_files(), "epoch": st.integers(0, 10), "start_offset": st.integers(0, 80)}),
    "truncation.slave_handshake": st.fixed_dictionaries({
        "local": epoch_files(), "local_max": st.integers(0, 80), "master": epoch_files(),
        "master_max": st.integers(0, 80)}),
    "truncation.change_to_master": st.fixed_dictionaries({
        "epoch_file": epoch_files(), "epoch": st.integers(0, 10), "valid_max_offset": st.integers(0, 80),
        "had_dirty_tail": st.booleans()}),
    "controller.handle": controller_args(),
    "broker.maybe_shrink": ids3.flatmap(lambda local: st.fixed_dictionaries({
        "local": st.just(local), "master_id": st.sampled_from(sorted(local)),
        "caught_up_time": st.dictionaries(st.integers(1, 3), st.integers(0, 40_000), max_size=3),
        "now": st.integers(0, 40_000)})),
    "broker.maybe_expand": st.fixed_dictionaries({
        "local": ids3, "slave_id": st.integers(1, 4), "ack_offset": st.integers(-1, 300),
        "confirm_offset": st.integers(0, 300), "epoch_start_offset": st.integers(0, 300),
        "is_async_learner": st.booleans()}),
    "broker.compute_master_confirm_offset": ids3.flatmap(lambda s: st.fixed_dictionaries({
        "max_offset": st.integers(0, 300), "sync_state_set": st.just(s), "master_id": st.sampled_from(sorted(s)),
        "acks": st.dictionaries(st.integers(1, 4), st.integers(-1, 300), max_size=4),
        "current_confirm_offset": st.integers(0, 300)})),
}
