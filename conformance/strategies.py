"""Hypothesis strategies for the arguments of every handler-level operation.

Used by the differential tests (``tests/conformance/test_handler_level.py``), which
feed the same arguments to an implementation and to the spec and compare answers.
Inputs are kept small so that every branch of every table is reached often.
"""
from __future__ import annotations

import random

import attrs
from hypothesis import strategies as st

from conformance.round_inputs import ROUND_INPUTS
from spec.controller.events import (
    AlterSyncStateSetEvent,
    ApplyBrokerIdEvent,
    CleanBrokerDataEvent,
    ElectMasterEvent,
    UpdateBrokerAddressEvent,
)
from spec.controller.heartbeat import (
    DEFAULT_ELECTION_PRIORITY,
    BrokerHeartbeat,
    HeartbeatTable,
    StaticLiveness,
    on_broker_heartbeat,
)
from spec.controller.records import (
    CONTROLLER_TRIGGER_BROKER_ID,
    EMPTY_METADATA,
    BrokerIdentity,
    BrokerRegistration,
    BrokerReplicaInfo,
    BrokerSetMetadata,
    ControllerMetadata,
    SyncStateInfo,
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
from spec.dledger.profiles import DEFAULT_TIMING
from spec.broker.records import DEFAULT_HA_CONFIG
from spec.dledger.records import (
    DEFAULT_GROUP,
    Entry,
    HeartBeatRequest,
    PushEntryRequest,
    PushType,
    Role,
    VoteRequest,
    VoteResponse,
    VoteResult,
)
from spec.truncation.epoch_file import EpochEntry, EpochFile, set_last_end
from spec.truncation.replication import TransferHeader
from spec.classic.master import ConnectionView, LogView, WriteView
from spec.classic.records import BrokerRole, ClassicConfig, FlushDiskType
from spec.classic.records import TransferHeader as ClassicTransferHeader
from spec.classic.slave import ClientView
from spec.classic.write import ReplicaRequest

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


# Mostly True: a generator aims at the input the procedure's later rows need (Hypothesis
# draws the first element of a sampled_from as its simplest, so aiming is the default).
AIMED = st.sampled_from((True, True, False))


def near(value: int, spread: int = 1):
    """Integers around ``value``: where the decision tables compare, equality matters most."""
    return st.integers(value - spread, value + spread)


def addressing():
    """Group and remoteId of a request: mostly this node's, sometimes another's (DLedgerServer's checks)."""
    return st.fixed_dictionaries({"group": st.sampled_from((DEFAULT_GROUP,) * 8 + ("other",)),
                                  "remote_id": st.sampled_from((None,) * 6 + ("n1", "n1", "n2"))})


@st.composite
def _any_vote_args(draw) -> dict:
    """A vote request that, most of the time, is close to the voter's own term and ledger."""
    member = draw(member_views())
    request = VoteRequest(
        draw(near(member.curr_term) | terms), draw(st.sampled_from(IDS)),
        draw(near(member.ledger_end_term) | terms), draw(near(member.ledger_end_index) | st.integers(-1, 5)),
        **draw(addressing()))
    return {"member": member, "request": request, "self_vote": draw(st.booleans())}


# What a vote request aims at: the server's addressing checks, the candidate's identity, the
# ledger comparisons (term and index each below, equal, one above), a vote already given in
# the term (with and without a known leader), a term ahead or behind, a term below the
# voter's ledger, a voter taking leadership (its end index equal to the candidate's, one
# either side), and plain acceptance.
VOTE_AIMS = ("wrong_remote", "wrong_group", "unknown_candidate", "self_candidate", "ledger", "voted_other",
             "term_above", "term_below", "term_below_ledger", "taking_leadership", "accept", "any")


@st.composite
def vote_args(draw, aim: str | None = None) -> dict:
    aim = aim or draw(st.sampled_from(VOTE_AIMS))
    if aim == "any":
        return draw(_any_vote_args())
    member = attrs.evolve(draw(member_views()), voted_for=draw(st.sampled_from((None, "n2"))),
                          taking_leadership=aim == "taking_leadership")
    candidate = {"unknown_candidate": "x9", "self_candidate": "n1"}.get(aim) or draw(st.sampled_from(("n2", "n3")))
    early = aim in ("wrong_remote", "wrong_group", "unknown_candidate", "self_candidate")
    term = member.curr_term + {"term_above": 1, "term_below": -1}.get(aim, draw(near(0)) if early else 0)
    ledger_term, ledger_index = member.ledger_end_term, member.ledger_end_index
    if early:  # the rows checked first: any ledger relation (a check order slip shows there)
        ledger_term, ledger_index = ledger_term + draw(near(0)), ledger_index + draw(near(0))
    if aim in ("ledger", "taking_leadership"):
        ledger_term += 0 if aim == "taking_leadership" else draw(st.sampled_from((0, -1, 1)))
        ledger_index += draw(st.sampled_from((0, -1, 1)))
    if aim == "voted_other":  # every other check passes: only the vote already given rejects
        member = attrs.evolve(member, voted_for=draw(st.sampled_from([i for i in IDS if i != candidate])),
                              leader_id=draw(st.none() | st.sampled_from(IDS[:3])),
                              ledger_end_term=min(member.ledger_end_term, member.curr_term))
        ledger_term = member.ledger_end_term
    if aim == "term_below_ledger":
        member = attrs.evolve(member, ledger_end_term=member.curr_term + draw(st.integers(1, 2)))
    if aim == "accept":
        member = attrs.evolve(member, voted_for=draw(st.sampled_from((None, candidate))))
        ledger_term = max(ledger_term, member.ledger_end_term)
    addressed = {"wrong_remote": {"group": DEFAULT_GROUP, "remote_id": "n2"},
                 "wrong_group": {"group": "other", "remote_id": None}}.get(aim, {"group": DEFAULT_GROUP,
                                                                                "remote_id": None})
    request = VoteRequest(term, candidate, ledger_term, ledger_index, **addressed)
    self_vote = aim == "self_candidate" and draw(st.booleans())
    return {"member": member, "request": request, "self_vote": self_vote}


# What a heartbeat aims at: each row of handle_heartbeat (addressing, an unknown or self
# sender, a term below, equal with the same, no or another leader, a term above).
HEARTBEAT_AIMS = ("wrong_remote", "wrong_group", "unknown_member", "unexpected_member", "expired_term",
                  "same_leader", "no_leader_yet", "inconsistent_leader", "term_not_ready", "any")


@st.composite
def heartbeat_args(draw, aim: str | None = None) -> dict:
    aim = aim or draw(st.sampled_from(HEARTBEAT_AIMS))
    member = draw(member_views())
    if aim == "any":
        request = HeartBeatRequest(draw(near(member.curr_term) | terms),
                                   draw(st.sampled_from((member.leader_id,) + IDS if member.leader_id else IDS)),
                                   **draw(addressing()))
        return {"member": member, "request": request}
    leader = {"unknown_member": "x9", "unexpected_member": "n1"}.get(aim) or draw(st.sampled_from(("n2", "n3")))
    member = attrs.evolve(member, leader_id={"same_leader": leader, "no_leader_yet": None}.get(
        aim, draw(st.sampled_from(("n1", "n2", "n3")).filter(lambda i: i != leader))))
    # the rows before the term's are checked first: their requests carry any term (a check
    # order that looks at the term too early shows only then)
    early = aim in ("wrong_remote", "wrong_group", "unknown_member", "unexpected_member")
    term = member.curr_term + {"expired_term": -draw(st.integers(1, 2)), "term_not_ready": draw(st.integers(1, 2))
                               }.get(aim, draw(st.sampled_from((-1, 0, 1))) if early else 0)
    addressed = {"wrong_remote": {"remote_id": "n3"}, "wrong_group": {"group": "other"}}.get(aim, {})
    return {"member": member, "request": HeartBeatRequest(term, leader, **addressed)}


@st.composite
def vote_counts(draw) -> VoteCounts:
    counts = start_vote_counts(draw(st.integers(0, 5)))
    for _ in range(draw(st.integers(0, 5))):
        reply = draw(st.none() | st.builds(VoteResponse, st.integers(0, 8), st.sampled_from(list(VoteResult))))
        counts = count_vote(counts, reply)
    return counts


# What a push aims at: the follower's checks, then each type's cases (the compare position at
# the end, one past it, before the first entry, on a matching or conflicting entry; entries
# right after the end, overlapping it (a push that must not overwrite without a compare) or
# leaving a gap).
PUSH_AIMS = ("term_below", "term_above", "other_leader", "compare_empty", "compare_before_first", "compare_at",
             "compare_conflict", "compare_past_end", "truncate", "truncate_out_of_range", "append_next",
             "append_overlap", "append_held", "append_gap", "append_nothing", "commit", "any")


@st.composite
def push_args(draw, aim: str | None = None) -> dict:
    """A push aimed at one row (``PUSH_AIMS``; any of them when ``aim`` is None)."""
    aim = aim or draw(st.sampled_from(PUSH_AIMS))
    member = attrs.evolve(draw(member_views()), leader_id=draw(st.sampled_from(IDS[:3])))
    flog = draw(logs())
    end = len(flog) - 1
    term, leader = member.curr_term, member.leader_id
    if aim == "term_below":
        term -= draw(st.integers(1, 2))
    elif aim == "term_above":
        term += draw(st.integers(1, 2))
    elif aim == "other_leader":
        leader = draw(st.sampled_from([i for i in IDS if i != member.leader_id]))
    kind = {"compare": PushType.COMPARE, "truncate": PushType.TRUNCATE, "append": PushType.APPEND,
            "commit": PushType.COMMIT}.get(aim.split("_")[0]) or draw(st.sampled_from(list(PushType)))
    prev_index = {"compare_empty": -1, "compare_before_first": draw(st.sampled_from((-1, -2))),
                  "compare_past_end": end + draw(st.integers(1, 2)),
                  "truncate_out_of_range": draw(st.sampled_from((-1, end + 2)))}.get(aim)
    runs = [i for i in range(1, end + 1) if flog[i - 1].term == flog[i].term]  # a conflict's hint walks back
    if prev_index is None and aim == "compare_conflict" and runs:
        prev_index = draw(st.sampled_from(runs))
    if prev_index is None:
        prev_index = draw(st.integers(0, end)) if end >= 0 and aim != "any" else draw(near(end) | st.integers(-1, 6))
    if aim == "compare_before_first" and prev_index == -1:
        prev_term = draw(st.integers(0, 6))
    elif 0 <= prev_index <= end and aim != "any":
        prev_term = flog[prev_index].term + (draw(st.sampled_from((1, -1, 2))) if aim == "compare_conflict" else 0)
    else:
        prev_term = draw(st.just(-1) | st.integers(-1, 6))
    if aim in ("append_overlap", "append_held") and end < 0:  # these need a log: one entry of the member's term
        flog, end = (Entry(0, max(member.curr_term, 0), "e0"),), 0
    first = {"append_overlap": draw(st.integers(0, max(end, 0))), "append_held": draw(st.integers(0, max(end, 0))),
             "append_gap": end + 2}.get(aim, end + 1)
    count = 0 if aim == "append_nothing" else draw(st.integers(1 if aim.startswith("append") else 0, 2))
    entries = tuple(Entry(max(first, 0) + i, 5, "x") for i in range(count))
    if aim == "append_held":  # entries it holds again (a lost ack, a duplicated push), up to its end
        entries = tuple(flog[first:first + count])
    committed = draw(st.integers(-1, 3))
    commit = draw(near(committed) | near(end) | st.integers(-1, 6))
    request = PushEntryRequest(term, leader, kind, commit, prev_index, prev_term, entries)
    return {"member": member, "request": request, "log": flog, "committed_index": committed}


@st.composite
def epoch_files(draw) -> EpochFile:
    starts = sorted(draw(st.lists(st.integers(0, 60), max_size=4, unique=True)))
    epochs = sorted(draw(st.lists(st.integers(0, 9), min_size=len(starts), max_size=len(starts), unique=True)))
    return EpochFile(tuple(EpochEntry(e, s) for e, s in zip(epochs, starts)))


@st.composite
def closed_epoch_files(draw) -> EpochFile:
    """An epoch file whose last entry is open, or closed at an end the cache accepts
    (``set_last_end``: at or after the last start), as a comparison leaves it."""
    f = draw(epoch_files())
    if f.entries and draw(st.booleans()):
        f = set_last_end(f, draw(near(f.entries[-1].start_offset, 2) | st.integers(0, 80)))
    return f


def _offsets_of(f: EpochFile):
    """Offsets where the file's rules compare: each start, one either side, and anywhere."""
    points = [e.start_offset for e in f.entries] + ([f.last_end] if f.last_end is not None else [])
    return st.one_of(st.integers(0, 80), *(near(p) for p in points)) if points else st.integers(0, 80)


def _epochs_of(f: EpochFile):
    return st.one_of(st.integers(-1, 10), *(near(e.epoch) for e in f.entries)) if f.entries else st.integers(-1, 10)


def epoch_file_and(name: str, values):
    """``{"epoch_file": f, name: v}`` with ``v`` drawn from ``values(f)``."""
    return closed_epoch_files().flatmap(lambda f: st.fixed_dictionaries({"epoch_file": st.just(f), name: values(f)}))


@st.composite
def append_args(draw, aim: str = "any") -> dict:
    """An entry to append; ``edge``: its epoch equal to the last one's or one above, its start
    equal to the last start or one either side (the rule wants both strictly greater)."""
    f = draw(closed_epoch_files() if aim == "any" else epoch_files().filter(lambda f: f.entries))
    if aim == "any":
        return {"epoch_file": f, "epoch": draw(_epochs_of(f)), "start_offset": draw(_offsets_of(f))}
    last = f.entries[-1]
    return {"epoch_file": f, "epoch": last.epoch + draw(st.sampled_from((1, 0))),
            "start_offset": max(0, last.start_offset + draw(st.sampled_from((1, 0, -1))))}


@st.composite
def transfer_header_args(draw) -> dict:
    f = draw(epoch_files())
    slave_max = draw(st.sampled_from((0, 0)) | st.integers(0, 80))
    offset = draw(st.just(slave_max) | st.integers(0, 80))
    entry = draw(st.sampled_from(f.entries)) if f.entries and draw(st.booleans()) else EpochEntry(
        draw(st.integers(0, 10)), draw(st.integers(0, offset)))
    header = TransferHeader(offset, entry.epoch, entry.start_offset, draw(st.integers(0, 100)), draw(st.integers(1, 40)))
    return {"epoch_file": f, "slave_max": slave_max, "header": header}


# ------------------------------------------------------------------ controller

NAME = "broker-a"
CLUSTER = "c1"


def _address(i: int) -> str:
    return f"10.0.0.{i}:30911"


# Broker ids: the controller's first ids, and ids from 16 on, which share HashSet buckets
# with the small ones (17 with 1, 16 comes first): the elect policy's tie order shows there.
BROKER_IDS = (1, 2, 3, 16, 17)
# maxOffset values: small ones (ties are frequent) and ones around and beyond 2^31, where a
# comparator that narrows the difference to an int (#10578) orders candidates wrongly.
BIG_OFFSETS = (2**31 - 1, 2**31, 2**31 + 1, 2**32 + 7, 3 * 2**31)
# electionPriority: upstream's default (Integer.MAX_VALUE, lowest) and configured ones.
PRIORITIES = (1, 0, 2, 2**31 - 2, DEFAULT_ELECTION_PRIORITY)


def elect_request(broker_id: int):
    """An electMaster naming ``broker_id``: the controller's trigger (-1), a broker's, or an admin's.

    An admin always designates a broker: no client sends designateElect without one, and
    releases differ on it (5.1.x reads only a null brokerId as the controller's trigger and
    would elect "-1" at a set's first election), so it is outside what the spec models."""
    designated = st.booleans() if broker_id != CONTROLLER_TRIGGER_BROKER_ID else st.just(False)
    return designated.map(lambda d: ElectMasterRequest(CLUSTER, NAME, broker_id, d))


def controller_requests():
    ids = st.sampled_from((-1, 4) + BROKER_IDS)
    return st.one_of(
        st.builds(GetNextBrokerIdRequest, st.just(CLUSTER), st.just(NAME)),
        st.builds(ApplyBrokerIdRequest, st.just(CLUSTER), st.just(NAME), ids,
                  st.sampled_from(BROKER_IDS).map(lambda i: f"{_address(i)};{i}")),
        st.builds(RegisterBrokerRequest, st.just(CLUSTER), st.just(NAME), st.sampled_from(BROKER_IDS).map(_address),
                  ids),
        st.builds(GetReplicaInfoRequest, st.just(NAME)),
        st.builds(AlterSyncStateSetRequest, st.just(NAME), st.none() | ids, st.integers(0, 3),
                  st.frozensets(st.sampled_from(BROKER_IDS)), st.integers(0, 3)),
        # broker and controller triggers, and admin-designated elections (designate_elect)
        ids.flatmap(elect_request),
        st.builds(CleanBrokerDataRequest, st.just(CLUSTER), st.just(NAME),
                  st.none() | st.frozensets(st.sampled_from(BROKER_IDS)), st.booleans()),
    )


def live_infos(alive):
    """(epoch, maxOffset, electionPriority) per alive broker: often equal, sometimes 2^31 apart."""
    offsets = st.integers(0, 500) | st.sampled_from(BIG_OFFSETS)
    return st.fixed_dictionaries({i: st.tuples(st.integers(0, 3), offsets, st.sampled_from(PRIORITIES))
                                  for i in sorted(alive)})


def _check_code(i: int, millis: int = 1) -> str:
    return f"{_address(i)};{millis}"


@st.composite
def controller_metadata(draw):
    """A broker set in any state the controller can reach: never elected, with a master, with
    its master lost, with a master cleaned out of the SyncStateSet, or only half known (a
    clean removed one of upstream's two tables); or nothing at all."""
    if draw(st.integers(0, 9)) == 0:
        return EMPTY_METADATA
    ids = draw(st.frozensets(st.sampled_from(BROKER_IDS), min_size=1))
    brokers = {i: BrokerRegistration(_address(i), _check_code(i)) for i in sorted(ids)}
    replicas = BrokerReplicaInfo(next_assign_broker_id=len(ids) + 1 + draw(st.sampled_from((0, 0, 1, 15))),
                                 brokers=brokers)
    master_epoch = draw(st.sampled_from((0, 1, 2, 3, 7)))
    if master_epoch == 0:
        state = SyncStateInfo()
    else:
        master = draw(st.none() | st.sampled_from(sorted(ids)) | st.sampled_from(BROKER_IDS))
        members = draw(st.frozensets(st.sampled_from(sorted(ids))))
        if master is not None and draw(st.integers(0, 4)):
            members |= {master}
        state = SyncStateInfo(master, master_epoch, members, draw(st.integers(1, 5)))
    half = draw(st.sampled_from(("both",) * 8 + ("replicas", "sync_state")))
    found = BrokerSetMetadata(CLUSTER, replicas if half != "sync_state" else None, state if half != "replicas" else None)
    return ControllerMetadata({NAME: found})


def _known_ids(metadata) -> tuple[int, ...]:
    found = metadata.get(NAME)
    return tuple(sorted(found.replicas.all_brokers())) if found is not None and found.replicas else ()


@st.composite
def controller_request_for(draw, metadata):
    """A request aimed at ``metadata`` most of the time: registered ids, the recorded master
    and epochs, or one off; any request otherwise."""
    found = metadata.get(NAME)
    if found is None or found.sync_state is None or not draw(st.integers(0, 4)):
        return draw(controller_requests())
    ids = _known_ids(metadata) or BROKER_IDS
    state = found.sync_state
    some_id = st.sampled_from(ids) | st.sampled_from((-1, 4) + BROKER_IDS)
    kind = draw(st.sampled_from(("apply", "register", "alter", "alter", "elect", "elect", "clean", "read")))
    if kind == "apply":
        applied = draw(st.sampled_from(ids + (found.replicas.next_assign_broker_id if found.replicas else 1, 1)))
        return ApplyBrokerIdRequest(CLUSTER, NAME, applied, _check_code(applied, draw(st.sampled_from((1, 1, 2)))))
    if kind == "register":
        broker = draw(some_id)
        return RegisterBrokerRequest(CLUSTER, NAME, _address(draw(st.sampled_from((broker, 9)))), broker)
    if kind == "alter":
        master = state.master_broker_id if draw(st.integers(0, 3)) else draw(st.none() | some_id)
        members = draw(st.frozensets(st.sampled_from(ids + (4,))))
        if master is not None and draw(st.integers(0, 3)):
            members |= {master}
        exact = draw(st.integers(0, 2))  # mostly the current epochs: the later checks are reached
        return AlterSyncStateSetRequest(NAME, master, state.master_epoch if exact else draw(near(state.master_epoch)),
                                        members, state.sync_state_set_epoch if exact == 1 else
                                        draw(near(state.sync_state_set_epoch)))
    if kind == "elect":
        return draw(some_id.flatmap(elect_request))
    if kind == "clean":
        return CleanBrokerDataRequest(CLUSTER, NAME, draw(st.none() | st.frozensets(st.sampled_from(ids + (4,)))),
                                      draw(st.booleans()))
    return draw(st.sampled_from((GetReplicaInfoRequest(NAME), GetNextBrokerIdRequest(CLUSTER, NAME))))


ELECTIONS = ("mixed", "offsets_far_apart", "priorities", "tie", "designated")


@st.composite
def policy_election_args(draw, kind: str = "mixed") -> dict:
    """An election the policy decides: a SyncStateSet of 2-4 brokers whose master (if any) is
    gone, and candidates that are ``kind``: equal in (epoch, maxOffset) but for configured
    priorities (``priorities``), equal in everything, with ids from 16 on among them
    (``tie``: the HashSet order decides), one of them 2^31 or more bytes ahead or behind
    (``offsets_far_apart``), any mix (``mixed``); or an admin designating one (``designated``)."""
    members = draw(st.lists(st.sampled_from(BROKER_IDS), min_size=2, max_size=4, unique=True))
    if kind == "tie":
        members = sorted(set(members) | {draw(st.sampled_from((16, 17)))} | {draw(st.sampled_from((1, 2, 3)))})
    master = draw(st.sampled_from(members) | st.none()) if len(members) > 2 else None  # two candidates remain
    ids = frozenset(members) | draw(st.frozensets(st.sampled_from(BROKER_IDS)))
    brokers = {i: BrokerRegistration(_address(i), _check_code(i)) for i in sorted(ids)}
    state = SyncStateInfo(master, draw(st.integers(1, 4)), frozenset(members), draw(st.integers(1, 4)))
    metadata = ControllerMetadata({NAME: BrokerSetMetadata(CLUSTER, BrokerReplicaInfo(len(ids) + 1, brokers), state)})
    alive = sorted(frozenset(members) - {master})
    common = (2, 100, draw(st.sampled_from(PRIORITIES)))
    if kind in ("tie", "designated"):
        infos = {i: common for i in alive}
    elif kind == "priorities":
        infos = {i: common[:2] + (p,) for i, p in zip(alive, draw(st.permutations(PRIORITIES)))}
    elif kind == "offsets_far_apart":
        far = draw(st.sampled_from((2**31 + 100, 2**32 + 7, 3 * 2**31, 0)))
        infos = {i: common if i != alive[-1] else (2, far, common[2]) for i in alive}
    else:  # each candidate keeps the common (epoch, maxOffset, priority) or differs in one of them
        varied = st.one_of(st.just(common), st.sampled_from((1, 3)).map(lambda e: (e,) + common[1:]),
                           st.sampled_from(BIG_OFFSETS + (0,)).map(lambda o: (2, o, common[2])),
                           st.sampled_from(PRIORITIES).map(lambda p: common[:2] + (p,)))
        infos = draw(st.fixed_dictionaries({i: varied for i in alive}))
    trigger = draw(st.sampled_from((-1,) + tuple(members)))
    if kind == "designated":  # an admin designates a live broker (mqadmin electMaster)
        request = ElectMasterRequest(CLUSTER, NAME, draw(st.sampled_from(alive)), True)
    else:  # broker and controller triggers go to the policy
        request = ElectMasterRequest(CLUSTER, NAME, trigger, False)
    return {"metadata": metadata, "request": request,
            "liveness": StaticLiveness.of(NAME, alive_ids=alive, infos=infos), "is_leader": True}


@st.composite
def admin_call_args(draw, forced: bool = False) -> dict:
    """cleanBrokerData on a registered set: with or without an id list, forced
    (``cleanLivingBroker``) or not."""
    metadata = draw(controller_metadata().filter(lambda m: m.known(NAME) is not None))
    ids = _known_ids(metadata)
    alive = draw(st.frozensets(st.sampled_from(ids)))
    listed = st.frozensets(st.sampled_from(ids + (4,)), min_size=1)
    request = CleanBrokerDataRequest(CLUSTER, NAME, draw(listed if forced else st.none() | listed),
                                     forced or draw(st.booleans()))
    return {"metadata": metadata, "request": request, "is_leader": True,
            "liveness": StaticLiveness.of(NAME, alive_ids=sorted(alive), infos=draw(live_infos(alive)))}


@st.composite
def alter_member_args(draw) -> dict:
    """An alterSyncStateSet from the real master at the current epochs whose new set mixes ids
    below 16 and from 16 on, some unregistered or dead: upstream checks members in HashSet
    order, so which failure is reported depends on it."""
    ids = sorted(set(draw(st.lists(st.sampled_from(BROKER_IDS), min_size=1, max_size=4))) | {1})
    brokers = {i: BrokerRegistration(_address(i), _check_code(i)) for i in ids}
    state = SyncStateInfo(1, draw(st.integers(1, 4)), frozenset({1}), draw(st.integers(1, 4)))
    metadata = ControllerMetadata({NAME: BrokerSetMetadata(CLUSTER, BrokerReplicaInfo(len(ids) + 1, brokers), state)})
    members = frozenset({1}) | draw(st.frozensets(st.sampled_from((2, 3, 4, 5, 16, 17, 20)), min_size=2))
    alive = {1} | draw(st.frozensets(st.sampled_from(ids)))
    return {"metadata": metadata, "is_leader": True,
            "request": AlterSyncStateSetRequest(NAME, 1, state.master_epoch, members, state.sync_state_set_epoch),
            "liveness": StaticLiveness.of(NAME, alive_ids=sorted(alive), infos=draw(live_infos(alive)))}


def controller_args():
    """``controller.handle`` arguments: any state and call; each kind of election the policy
    decides; an operator's clean, forced with an id list or any; an alter whose members'
    HashSet order decides."""
    targeted = st.one_of(*(policy_election_args(k) for k in ELECTIONS), admin_call_args(),
                         admin_call_args(forced=True), alter_member_args())
    # half and half (a flat one_of would give "any" one share in eight)
    return st.booleans().flatmap(lambda aimed: targeted if aimed else any_controller_args())


MANY_IDS = tuple(range(1, 21))  # more than 12 ids: a HashSet of them grows past 16 buckets
# a set only one of whose two tables exists (a clean removed the other): its replicas unknown
HALF_KNOWN = ControllerMetadata({NAME: BrokerSetMetadata(CLUSTER, None, SyncStateInfo(1, 1, frozenset({1}), 1))})


@st.composite
def _registered_set(draw, ids=None, master="any", master_epoch=None, members=None):
    """A known broker set of ``ids`` (drawn if None) with the given master (``"any"``: drawn,
    maybe none) at ``master_epoch`` (drawn if None), its SyncStateSet ``members`` (drawn)."""
    ids = tuple(sorted(ids if ids is not None else draw(st.frozensets(st.sampled_from(BROKER_IDS), min_size=1))))
    if master == "any":
        master = draw(st.none() | st.sampled_from(ids))
    epoch = master_epoch if master_epoch is not None else draw(st.integers(1, 4))
    if members is None:
        members = draw(st.frozensets(st.sampled_from(ids))) | ({master} if master is not None else set())
    brokers = {i: BrokerRegistration(_address(i), _check_code(i)) for i in ids}
    state = SyncStateInfo(master, epoch, frozenset(members), draw(st.integers(1, 4)))
    return ControllerMetadata({NAME: BrokerSetMetadata(CLUSTER, BrokerReplicaInfo(max(ids) + 1, brokers), state)})


def _call(metadata, request, alive, infos=None, is_leader=True) -> dict:
    alive = sorted(alive)
    return {"metadata": metadata, "request": request, "is_leader": is_leader,
            "liveness": StaticLiveness.of(NAME, alive_ids=alive, infos=infos if infos is not None else
                                          {i: (2, 100, DEFAULT_ELECTION_PRIORITY) for i in alive})}


# What a controller call aims at, beyond the elections and admin calls above: reads of known,
# unknown and half-known sets; applyBrokerId of a free id, a held one with the same or another
# check code, into an unknown set; registerBroker of an unknown set or id, from the recorded
# or a moved address, with the master alive or not (and 5.0's id-by-address and
# elect-in-register paths); alters that are compare-and-sets at the exact epochs, one off,
# equal to the current set or without the master, of live or dead members; a set's first
# election, an old master still alive (an admin designating another meanwhile), a controller
# trigger with nobody alive, candidates
# without heartbeat data, more than 12 ids; a listed broker still alive; a follower controller.
CONTROLLER_AIMS = ("read", "apply", "register", "register_known", "register_outside_set", "alter_cas",
                   "alter_dead_member", "elect_first", "elect_old_master_alive", "elect_designated_master_alive",
                   "elect_nobody_alive", "elect_no_data", "elect_many_ids", "clean_listed", "clean_master_recorded",
                   "unknown_set", "not_leader")


@st.composite
def controller_call(draw, aim: str) -> dict:
    if aim == "read":
        metadata = draw(st.sampled_from((EMPTY_METADATA, HALF_KNOWN)) | controller_metadata())
        request = draw(st.sampled_from((GetReplicaInfoRequest(NAME), GetNextBrokerIdRequest(CLUSTER, NAME))))
        return _call(metadata, request, _known_ids(metadata))
    if aim == "not_leader":
        return {**draw(any_controller_args()), "is_leader": False}
    if aim == "apply":
        metadata = draw(st.just(EMPTY_METADATA) | _registered_set())
        ids = _known_ids(metadata)
        applied = draw(st.sampled_from(ids + (1, max(ids, default=0) + 1, 4)))
        code = _check_code(applied, draw(st.sampled_from((1, 2))))
        return _call(metadata, ApplyBrokerIdRequest(CLUSTER, NAME, applied, code), ids)
    if aim == "register_known":  # a registered id, from its recorded address or a moved one
        metadata = draw(_registered_set())
        ids = _known_ids(metadata)
        broker = draw(st.sampled_from(ids))
        address = _address(draw(st.sampled_from((broker, 9))))
        return _call(metadata, RegisterBrokerRequest(CLUSTER, NAME, address, broker),
                     draw(st.frozensets(st.sampled_from(ids))))
    if aim == "register_outside_set":  # no master, and the registrant is not in the SyncStateSet
        ids = draw(st.frozensets(st.sampled_from(BROKER_IDS), min_size=2))
        broker = draw(st.sampled_from(sorted(ids) + [4]))
        metadata = draw(_registered_set(ids=ids, master=None, members=ids - {broker} - {min(ids - {broker})}))
        return _call(metadata, RegisterBrokerRequest(CLUSTER, NAME, _address(broker), broker), ids)
    if aim == "register":
        ids = draw(st.frozensets(st.sampled_from(BROKER_IDS), min_size=1))
        masterless = draw(st.booleans())
        metadata = draw(st.just(EMPTY_METADATA) | _registered_set(
            ids=ids, master=None if masterless else "any", members=ids if masterless else None))
        ids = _known_ids(metadata)
        broker = draw(st.sampled_from(ids + (4,)) if ids else st.sampled_from((1, 4)))
        address = _address(draw(st.sampled_from((broker, broker, 9))))
        alive = draw(st.frozensets(st.sampled_from(ids))) if ids else frozenset()
        return _call(metadata, RegisterBrokerRequest(CLUSTER, NAME, address, broker), alive)
    if aim in ("alter_cas", "alter_dead_member"):
        ids = draw(st.frozensets(st.sampled_from(BROKER_IDS), min_size=2))
        master = draw(st.sampled_from(sorted(ids)))
        metadata = draw(_registered_set(ids=ids, master=master))
        state = metadata.get(NAME).sync_state
        members = draw(st.frozensets(st.sampled_from(sorted(ids)))) | (
            {master} if draw(AIMED) else frozenset())
        if aim == "alter_dead_member":  # every check passes but a live member's
            members = members | {master, draw(st.sampled_from(sorted(ids - {master})))}
        if members == state.sync_state_set and draw(AIMED):  # a change: the later checks are reached
            members = members ^ {draw(st.sampled_from(sorted(ids - {master})))}
        dead = draw(st.sampled_from(sorted((members - {master}) or ids)))
        alive = ids if aim == "alter_cas" else ids - {dead}
        off = (0, 0) if aim == "alter_dead_member" or draw(AIMED) else (draw(near(0)), draw(near(0)))
        request = AlterSyncStateSetRequest(NAME, master, state.master_epoch + off[0], members,
                                           state.sync_state_set_epoch + off[1])
        return _call(metadata, request, alive)
    if aim == "elect_first":
        metadata = draw(_registered_set(master=None, master_epoch=0, members=()))
        ids = _known_ids(metadata)
        return _call(metadata, draw(st.sampled_from(ids + (-1,)).flatmap(elect_request)),
                     draw(st.frozensets(st.sampled_from(ids))))
    if aim == "elect_old_master_alive":
        metadata = draw(_registered_set(master=draw(st.sampled_from(BROKER_IDS)),
                                        ids=draw(st.frozensets(st.sampled_from(BROKER_IDS), min_size=2))
                                        | {1, 2, 3, 16, 17}))
        ids = _known_ids(metadata)
        trigger = draw(st.sampled_from((-1,) + ids).flatmap(elect_request))
        return _call(metadata, trigger, draw(st.frozensets(st.sampled_from(ids), min_size=1))
                     | {metadata.get(NAME).sync_state.master_broker_id})
    if aim == "elect_designated_master_alive":  # an admin designates another broker; the old master lives
        ids = draw(st.frozensets(st.sampled_from(BROKER_IDS), min_size=2))
        master = draw(st.sampled_from(sorted(ids)))
        metadata = draw(_registered_set(ids=ids, master=master, members=ids))
        designated = draw(st.sampled_from(sorted(ids - {master})))
        return _call(metadata, ElectMasterRequest(CLUSTER, NAME, designated, True), ids)
    if aim == "elect_nobody_alive":
        metadata = draw(_registered_set())
        ids = _known_ids(metadata)
        return _call(metadata, draw(st.sampled_from((-1,) + ids).flatmap(elect_request)), ())
    if aim == "elect_no_data":
        ids = draw(st.frozensets(st.sampled_from(BROKER_IDS), min_size=3))
        metadata = draw(_registered_set(ids=ids, master=None, members=ids))
        alive = sorted(ids)
        infos = {i: (2, draw(near(100)), DEFAULT_ELECTION_PRIORITY) for i in alive[:draw(st.integers(0, 1))]}
        return _call(metadata, ElectMasterRequest(CLUSTER, NAME, -1, False), alive, infos)
    if aim == "elect_many_ids":
        ids = frozenset(draw(st.lists(st.sampled_from(MANY_IDS), min_size=13, max_size=20, unique=True)))
        metadata = draw(_registered_set(ids=ids, master=None, members=ids))
        common = (2, 100, DEFAULT_ELECTION_PRIORITY)
        return _call(metadata, ElectMasterRequest(CLUSTER, NAME, -1, False), ids, {i: common for i in ids})
    if aim == "unknown_set":
        request = draw(st.sampled_from((-1, 1, 2)).flatmap(elect_request) | controller_requests())
        return _call(draw(st.sampled_from((EMPTY_METADATA, HALF_KNOWN))), request, ())
    if aim == "clean_master_recorded":
        metadata = draw(_registered_set(master=draw(st.sampled_from(BROKER_IDS)), ids=BROKER_IDS))
        return _call(metadata, CleanBrokerDataRequest(CLUSTER, NAME, None, False),
                     draw(st.frozensets(st.sampled_from(BROKER_IDS))))
    assert aim == "clean_listed", aim
    metadata = draw(_registered_set())
    ids = _known_ids(metadata)
    listed = draw(st.frozensets(st.sampled_from(ids), min_size=1))
    return _call(metadata, CleanBrokerDataRequest(CLUSTER, NAME, listed, False),
                 draw(st.frozensets(st.sampled_from(sorted(listed)))))


@st.composite
def any_controller_args(draw) -> dict:
    """A metadata snapshot, maybe moved on by a few calls, then one more call aimed at it.

    Every alive broker has heartbeat data, as with upstream's heartbeat manager (a broker is
    alive only through its heartbeat entry).
    """
    rules = ControllerRules()
    metadata = draw(controller_metadata())
    ids = frozenset(_known_ids(metadata))
    found = metadata.get(NAME)
    master = found.sync_state.master_broker_id if found is not None and found.sync_state else None
    how = draw(st.sampled_from(("failover", "all", "all", "any")))
    if how == "failover":  # the master is gone, the others live: the policy chooses
        alive = ids - {master}
    elif how == "all":
        alive = ids
    else:
        alive = draw(st.frozensets(st.sampled_from(BROKER_IDS)))
    liveness = StaticLiveness.of(NAME, alive_ids=sorted(alive), infos=draw(live_infos(alive)))
    for _ in range(draw(st.integers(0, 2))):
        request = draw(controller_request_for(metadata))
        if not isinstance(request, CleanBrokerDataRequest):  # keep the set for the call under test
            _, metadata = rules.execute(metadata, request, liveness)
    return {"metadata": metadata, "request": draw(controller_request_for(metadata)), "liveness": liveness,
            "is_leader": draw(st.booleans() | st.just(True))}


def controller_event_kinds() -> dict[str, st.SearchStrategy]:
    """Events as the controller commits them, per kind, for this set or another, with
    registered ids or not (and rocketmq-5.0's first registrant, which carries its address)."""
    names = st.sampled_from((NAME, NAME, "broker-b"))
    ids = st.sampled_from(BROKER_IDS + (4,))
    return {
        "apply_broker_id": st.builds(ApplyBrokerIdEvent, st.just(CLUSTER), names, ids.map(_address), ids,
                                     ids.map(lambda i: _check_code(i))),
        "update_address": st.builds(UpdateBrokerAddressEvent, st.just(CLUSTER), names,
                                    st.sampled_from((9, 1)).map(_address), ids),
        "elected": st.builds(ElectMasterEvent, names, st.just(True), ids),
        "first_registrant": st.builds(ElectMasterEvent, names, st.just(True), st.just(1), st.just(CLUSTER),
                                      st.none() | ids.map(_address)),
        "no_master": st.builds(ElectMasterEvent, names, st.just(False)),
        "alter": st.builds(AlterSyncStateSetEvent, names, st.frozensets(ids, min_size=1)),
        "clean": st.builds(CleanBrokerDataEvent, names, st.none() | st.frozensets(ids, min_size=1)),
    }


def controller_events():
    return st.one_of(*controller_event_kinds().values())


def heartbeats(identity_ids=BROKER_IDS):
    return st.builds(
        BrokerHeartbeat, st.just(CLUSTER), st.just(NAME), st.sampled_from(identity_ids).map(_address),
        st.sampled_from(identity_ids), st.integers(-1, 3), st.integers(-1, 300) | st.sampled_from(BIG_OFFSETS),
        st.integers(-1, 300), st.sampled_from((10_000, 3_000)), st.sampled_from(PRIORITIES))


@st.composite
def heartbeat_tables(draw) -> tuple[HeartbeatTable, int]:
    """A table built by heartbeats at increasing times, and the time it is read at."""
    table, now = HeartbeatTable(), draw(st.integers(0, 1_000))
    for beat in draw(st.lists(heartbeats(), max_size=4)):
        table = on_broker_heartbeat(table, beat, now)
        now += draw(st.sampled_from((0, 1, 999, 3_000, 10_000, 10_001)))
    return table, now


@st.composite
def broker_heartbeat_args(draw) -> dict:
    """One more heartbeat, often from a broker in the table with its progress one either side."""
    table, now = draw(heartbeat_tables())
    beat = draw(heartbeats())
    if table.entries and draw(st.booleans()):
        prev = table.entries[draw(st.sampled_from(sorted(table.entries, key=lambda i: i.broker_id)))]
        beat = BrokerHeartbeat(CLUSTER, NAME, prev.broker_address, prev.broker_id, draw(near(prev.epoch)),
                               draw(near(prev.max_offset)), draw(st.integers(-1, 300)), prev.heartbeat_timeout_millis,
                               prev.election_priority)
    return {"table": table, "heartbeat": beat, "now": now + draw(st.sampled_from((0, 1, 5_000)))}


@st.composite
def scan_args(draw) -> dict:
    """A table read where entries expire: at each entry's last update plus its timeout, one either side."""
    table, now = draw(heartbeat_tables())
    edges = [i.last_update_timestamp + i.heartbeat_timeout_millis for i in table.entries.values()]
    return {"table": table, "now": draw(st.one_of(st.just(now), *(near(e) for e in edges)))}


@st.composite
def active_args(draw) -> dict:
    args = draw(scan_args())
    ids = [i for i in args["table"].entries] + [BrokerIdentity(CLUSTER, NAME, 4)]
    return {**args, "identity": draw(st.sampled_from(ids))}


# ------------------------------------------------------------------ decide_heartbeat_round, parse

_NOW = 10_000
_LEASE = DEFAULT_TIMING.lease_ms


@st.composite
def heartbeat_round_decision_args(draw, aim: str = "any") -> dict:
    """A heartbeat round's counts and the last quorum's time: that time at the lease's edge (one
    either side), long ago, never; ``keep``: a minority of successes with no higher term nor
    inconsistent leader, so that the lease alone decides (``inconsistent_leader``: with one;
    ``lease_edge``: the lease alone decides, a lease ago exactly or 1 ms either side)."""
    n = draw(st.integers(1, 5))
    if aim in ("keep", "inconsistent_leader", "lease_edge"):
        counts = HeartbeatCounts(draw(st.integers(0, 5)), draw(st.integers(1, 5)), 1, 0,
                                 aim == "inconsistent_leader", -1)
        n = max(n, 3)
    else:
        counts = draw(st.builds(HeartbeatCounts, st.integers(0, 5), st.integers(1, 5), st.integers(1, 5),
                                st.integers(0, 4), st.booleans(), st.integers(-1, 8)))
    edges = (_NOW - _LEASE - 1, _NOW - _LEASE, _NOW - _LEASE + 1)
    last = draw(st.sampled_from(edges if aim == "lease_edge" else edges + (-1, 2_000, _NOW - 1)))
    return {"counts": counts, "peer_size": n, "now": _NOW, "last_succ_heartbeat_time": last}


@st.composite
def parse_args(draw, aim: str = "any") -> dict:
    """Vote counts to parse; ``known_leader``: a voter answered that it has a leader, and no
    larger term was seen (the already-has-leader rows decide); ``not_ready_quorum``: a quorum
    counting the voters not ready for the term, a minority without them; ``accepted_quorum``:
    a quorum of accepts, or one short of it."""
    if aim == "accepted_quorum":  # a quorum of accepts, or one short of it
        n = draw(st.integers(1, 5))
        accepted = n // 2 + 1 - draw(st.sampled_from((0, 0, 1)))
        return {"counts": VoteCounts(draw(st.integers(0, 5)), n, n, accepted), "peer_size": n}
    if aim == "not_ready_quorum":  # a quorum only with the voters whose term was not ready
        n = draw(st.integers(3, 5))
        ready = draw(st.integers(1, n // 2))
        not_ready = n // 2 + 1 - ready
        counts = VoteCounts(draw(st.integers(0, 5)), ready + not_ready, ready + not_ready, ready, not_ready)
        return {"counts": counts, "peer_size": n}
    counts = draw(vote_counts())
    if aim == "known_leader":
        counts = attrs.evolve(counts, already_has_leader=True, known_max_term=min(counts.known_max_term, counts.term))
    return {"counts": counts, "peer_size": draw(st.integers(1, 5))}


@st.composite
def commit_index_args(draw) -> dict:
    """Followers' match indexes around the leader's commit index and end, and the leader's term
    that of the entries there, or one either side (the leader commits only its own term's)."""
    log = draw(logs(6).filter(bool))
    end = len(log) - 1
    committed = draw(st.integers(-1, min(2, end)))
    matches = draw(st.lists(near(committed) | near(end) | st.integers(-1, end), min_size=1, max_size=5))
    pick = log[draw(st.integers(max(committed, 0), end))].term
    return {"match_indexes": tuple(max(-1, min(m, end)) for m in matches), "log": log,
            "curr_term": draw(near(pick) | st.integers(0, 5)), "committed_index": committed}


# ------------------------------------------------------------------ broker: shrink, expand, confirmOffset

_MAX_LAG = DEFAULT_HA_CONFIG.ha_max_time_slave_not_catchup_ms


@st.composite
def shrink_args(draw, aim: str = "any") -> dict:
    """A SyncStateSet check; ``lag_edge``: a member's caught-up time exactly the allowed lag
    before now, or one either side (the ``>`` that keeps it, not ``>=``)."""
    local = draw(st.frozensets(st.integers(1, 3), min_size=1))
    master = draw(st.sampled_from(sorted(local)))
    now = draw(st.integers(_MAX_LAG, 40_000))
    times = draw(st.dictionaries(st.integers(1, 3), st.integers(0, 40_000), max_size=3))
    if aim == "lag_edge":
        times = {m: now - _MAX_LAG + draw(st.sampled_from((0, 1, -1))) for m in local}
    return {"local": local, "master_id": master, "caught_up_time": times, "now": now}


@st.composite
def expand_args(draw, aim: str = "any") -> dict:
    """A slave's ack at, or one either side of, confirmOffset and the epoch's start offset;
    ``outsider``: a slave not in the set yet (``async_learner``: an async learner)."""
    confirm, start = draw(st.integers(0, 300)), draw(st.integers(0, 300))
    ack = draw(near(confirm) | near(start) | st.integers(-1, 300))
    local = draw(st.frozensets(st.integers(1, 3), min_size=1))
    slave = 4 if aim != "any" else draw(st.integers(1, 4))
    return {"local": local, "slave_id": slave, "ack_offset": ack, "confirm_offset": confirm,
            "epoch_start_offset": start, "is_async_learner": aim == "async_learner" or (
                aim == "any" and draw(st.sampled_from((False, False, True))))}


@st.composite
def confirm_args(draw) -> dict:
    """Acks at, or one either side of, the master's max offset and each other."""
    local = draw(st.frozensets(st.integers(1, 3), min_size=1))
    max_offset = draw(st.integers(0, 300) | st.sampled_from(BIG_OFFSETS))
    acks = draw(st.dictionaries(st.integers(1, 4), near(max_offset) | st.integers(-1, 300) | st.just(-1), max_size=4))
    return {"max_offset": max_offset, "sync_state_set": local, "master_id": draw(st.sampled_from(sorted(local))),
            "acks": acks, "current_confirm_offset": draw(near(max_offset) | st.integers(0, 300))}


# ------------------------------------------------------------------ operation -> arguments

# Strata: an operation whose rows need very different inputs has one strategy per aim. The
# differential tests and the branch-coverage measurement split the profile's examples across
# them (``strata``), so each aim is reached in every run: Hypothesis's own choice among the
# branches of a one_of is far from uniform in 60 derandomized examples.
STRATA: dict[str, dict[str, st.SearchStrategy]] = {
    "dledger.handle_push": {aim: push_args(aim) for aim in PUSH_AIMS},
    "dledger.handle_vote": {aim: vote_args(aim) for aim in VOTE_AIMS},
    "dledger.handle_heartbeat": {aim: heartbeat_args(aim) for aim in HEARTBEAT_AIMS},
    "dledger.decide_heartbeat_round": {aim: heartbeat_round_decision_args(aim)
                                       for aim in ("any", "keep", "inconsistent_leader", "lease_edge")},
    "dledger.parse_vote_result": {aim: parse_args(aim)
                                  for aim in ("any", "known_leader", "not_ready_quorum", "accepted_quorum")},
    "broker.maybe_shrink": {aim: shrink_args(aim) for aim in ("any", "lag_edge")},
    "truncation.append": {aim: append_args(aim) for aim in ("any", "edge")},
    "broker.maybe_expand": {aim: expand_args(aim) for aim in ("any", "outsider", "async_learner")},
    # events for a set the metadata does not know (both tables or one of them missing)
    # each kind of event on any metadata, and on a set the metadata does not (fully) know
    "controller.apply_event": {
        **{kind: st.fixed_dictionaries({"metadata": controller_metadata(), "event": events})
           for kind, events in controller_event_kinds().items()},
        "unknown_set": st.fixed_dictionaries({"metadata": st.sampled_from((EMPTY_METADATA, HALF_KNOWN)),
                                              "event": controller_events()})},
    "controller.handle": {**{f"elect_{kind}": policy_election_args(kind) for kind in ELECTIONS},
                          "clean": admin_call_args(), "clean_forced": admin_call_args(forced=True),
                          "alter_members": alter_member_args(), "any": any_controller_args(),
                          **{aim: controller_call(aim) for aim in CONTROLLER_AIMS}},
}

ids3 = st.frozensets(st.integers(1, 3), min_size=1)

ARGUMENTS = {
    "dledger.handle_vote": vote_args(),
    "dledger.handle_heartbeat": heartbeat_args(),
    "dledger.parse_vote_result": parse_args(),
    "dledger.decide_heartbeat_round": heartbeat_round_decision_args(),
    "dledger.handle_push": push_args(),
    "dledger.leader_commit_index": commit_index_args(),
    "truncation.find_consistent_point": st.fixed_dictionaries({
        "local": epoch_files(), "local_max": st.integers(0, 80), "master": epoch_files(),
        "master_max": st.integers(0, 80)}),
    "truncation.append": append_args(),
    "truncation.slave_handshake": st.fixed_dictionaries({
        "local": epoch_files(), "local_max": st.integers(0, 80), "master": epoch_files(),
        "master_max": st.integers(0, 80)}),
    "truncation.change_to_master": st.fixed_dictionaries({
        "epoch_file": epoch_files(), "epoch": st.integers(0, 10), "valid_max_offset": st.integers(0, 80),
        "had_dirty_tail": st.booleans()}),
    "truncation.truncate_suffix_by_offset": epoch_file_and("offset", _offsets_of),
    "truncation.truncate_suffix_by_epoch": epoch_file_and("epoch", _epochs_of),
    "truncation.truncate_prefix_by_offset": epoch_file_and("offset", _offsets_of),
    "truncation.set_last_end": epoch_file_and("end", _offsets_of),
    "truncation.find_entry_by_offset": epoch_file_and("offset", _offsets_of),
    "truncation.find_entry_by_epoch": epoch_file_and("epoch", _epochs_of),
    "truncation.next_entry": epoch_file_and("epoch", _epochs_of),
    "truncation.on_transfer_header": transfer_header_args(),
    "controller.handle": controller_args(),
    "controller.apply_event": st.fixed_dictionaries({"metadata": controller_metadata(), "event": controller_events()}),
    "controller.on_broker_heartbeat": broker_heartbeat_args(),
    "controller.is_broker_active": active_args(),
    "controller.scan_not_active_broker": scan_args(),
    "broker.maybe_shrink": shrink_args(),
    "broker.maybe_expand": expand_args(),
    "broker.compute_master_confirm_offset": confirm_args(),
}

# The round operations share their generators with the fingerprint and the transcript recorder.
# They are driven by a seeded ``random.Random`` (a Hypothesis-drawn seed): Hypothesis's own
# ``st.randoms`` answers ``random()`` with 0.0 so often that the generators' weighted
# choices collapse to their first case (a candidate never waits, for example).
ARGUMENTS.update({name: st.integers(0, 2**32 - 1).map(lambda seed, make=make: make(random.Random(seed)))
                  for name, make in ROUND_INPUTS.items()})


def _with_stray_replies(args: dict) -> dict:
    """A round whose replies include a second one from a peer that already answered, and one
    from a node that was not asked: only the first reply of each asked peer counts."""
    replies = args["replies"]
    if not replies:
        return args
    first = replies[0]
    stray = (attrs.evolve(first, at=first.at + 1), attrs.evolve(first, peer="x9", at=max(first.at - 1, 0)))
    return {**args, "replies": replies + stray}


def _waiting(args: dict) -> dict:
    """A candidate whose next vote is still ahead (1 ms to 3 s away, the edge included)."""
    state = args["state"]
    ahead = 1 + args["member"].ledger_end_index % 3 * 1_500
    return {**args, "state": attrs.evolve(state, need_increase_term_immediately=False,
                                          next_time_to_request_vote=args["now"] + ahead)}


def _taking_leadership(args: dict) -> dict:
    """A preferred leader campaigning for the term it is to take leadership in, due now."""
    state = attrs.evolve(args["state"], preferred_leader=True, term_to_take_leadership=args["member"].curr_term,
                         next_time_to_request_vote=-1)
    return {**args, "state": state}


def _not_candidate(args: dict) -> dict:
    """A node due to campaign that has meanwhile become a follower or the leader."""
    role = Role.FOLLOWER if args["member"].curr_term % 2 else Role.LEADER
    return {**_taking_leadership(args), "member": attrs.evolve(args["member"], role=role)}


STRATA.update({name: {"any": ARGUMENTS[name], "stray_replies": ARGUMENTS[name].map(_with_stray_replies)}
               for name in ROUND_INPUTS})
STRATA["dledger.candidate_round"].update({
    "waiting": ARGUMENTS["dledger.candidate_round"].map(_waiting),
    "taking_leadership": ARGUMENTS["dledger.candidate_round"].map(_taking_leadership),
    "not_candidate": ARGUMENTS["dledger.candidate_round"].map(_not_candidate)})


# ---------------------------------------------------------------------- classic HA

CLASSIC_OFFSETS = st.one_of(st.integers(0, 5000), st.integers(2**31 - 64, 2**31 + 64), st.integers(0, 2**40))
CLASSIC_TIMES = st.one_of(st.integers(0, 10**6), st.integers(2**31 - 10**4, 2**31 + 10**4))
FILE_BASES = st.one_of(st.integers(0, 3), st.integers(2**31 // 1024 - 2, 2**31 // 1024 + 2))  # in files of 1 KiB


@st.composite
def classic_configs(draw) -> ClassicConfig:
    file_size = draw(st.sampled_from((64, 1024, 4096, 1 << 30)))
    return ClassicConfig(
        broker_role=draw(st.sampled_from(BrokerRole)), flush_disk_type=draw(st.sampled_from(FlushDiskType)),
        mapped_file_size_commit_log=file_size,
        ha_transfer_batch_size=draw(st.integers(1, file_size)),
        ha_max_gap_not_in_sync=draw(st.sampled_from((1, 2048, 256 * 1024 * 1024))),
        in_sync_replicas=draw(st.integers(1, 3)),
    )


@st.composite
def classic_place_args(draw) -> dict:
    file_size = draw(st.sampled_from((64, 1024)))
    start = draw(FILE_BASES) * 1024
    max_offset = start + draw(st.integers(0, file_size))
    size = draw(st.one_of(st.integers(0, file_size + 2), near(file_size - max_offset % file_size - 8)))
    return {"max_offset": max_offset, "size": max(size, 0), "file_size": file_size}


@st.composite
def classic_data_args(draw) -> dict:
    file_size = 1024
    min_offset = draw(FILE_BASES) * file_size
    max_offset = min_offset + draw(st.integers(0, 4 * file_size))
    offset = draw(st.one_of(st.just(0), near(min_offset), near(max_offset), st.integers(0, max_offset + file_size)))
    return {"offset": max(offset, 0), "min_offset": min_offset, "max_offset": max_offset, "file_size": file_size}


@st.composite
def classic_flush_args(draw) -> dict:
    page = draw(st.sampled_from((64, 256)))
    flushed = draw(FILE_BASES) * 1024 + draw(st.integers(0, 1024))
    max_offset = flushed + draw(st.one_of(st.integers(0, 2048), near(4 * page), st.just(0)))
    return {"flushed": flushed, "max_offset": max_offset, "file_size": 1024,
            "least_pages": draw(st.sampled_from((0, 4))), "page_size": page}


@st.composite
def classic_slave_ok_args(draw) -> dict:
    config = draw(classic_configs())
    push2 = draw(CLASSIC_OFFSETS)
    return {"connection_count": draw(st.integers(0, 2)), "push2_slave_max_offset": push2,
            "master_put_where": push2 + draw(near(config.ha_max_gap_not_in_sync)), "config": config}


@st.composite
def classic_replica_args(draw) -> dict:
    # mostly a SYNC_MASTER with messages that wait for the store: where the rows part
    role = draw(st.sampled_from((BrokerRole.SYNC_MASTER,) * 4 + (BrokerRole.ASYNC_MASTER, BrokerRole.SLAVE)))
    config = attrs.evolve(draw(classic_configs()), broker_role=role)
    push2 = draw(CLASSIC_OFFSETS)
    wrote = push2 + draw(st.one_of(near(config.ha_max_gap_not_in_sync - 64, 2), st.integers(0, 100)))
    return {"wrote_offset": max(wrote, 0), "wrote_bytes": 64, "now": draw(CLASSIC_TIMES),
            "connection_count": draw(st.sampled_from((0, 1, 1, 2))), "push2_slave_max_offset": push2,
            "wait_store_msg_ok": draw(st.sampled_from((True, True, True, False))), "config": config}


@st.composite
def classic_transfer_args(draw) -> dict:
    wrote = draw(CLASSIC_OFFSETS)
    end = wrote + draw(st.integers(8, 300))
    deadline = draw(CLASSIC_TIMES)
    acks = draw(st.lists(st.tuples(st.one_of(st.just(0), near(wrote)), near(end)), max_size=3))
    return {"request": ReplicaRequest(wrote, end, deadline, draw(st.integers(1, 3))),
            "push2_slave_max_offset": draw(near(end)), "connection_acks": tuple(acks),
            "now": draw(near(deadline))}


@st.composite
def classic_report_args(draw) -> dict:
    master_max = draw(CLASSIC_OFFSETS)
    first = draw(st.booleans())
    request = -1 if first else draw(st.integers(0, master_max))
    connection = ConnectionView(request, request, draw(st.sampled_from((0, master_max))))
    return {"connection": connection, "report": max(0, draw(near(master_max))), "master_max_offset": master_max,
            "push2_slave_max_offset": draw(st.integers(0, master_max + 1))}


@st.composite
def classic_housekeeping_args(draw, master: bool) -> dict:
    last = draw(CLASSIC_TIMES)
    config = draw(classic_configs())
    now = last + draw(st.one_of(near(config.ha_housekeeping_interval_ms), near(config.ha_housekeeping_interval_ms + 5000)))
    if master:
        return {"last_read_ms": last, "now": now, "config": config}
    view = ClientView(draw(CLASSIC_OFFSETS), last, last + draw(st.sampled_from((-6000, 0, 5001, 6000))))
    return {"view": view, "now": now, "config": config}


@st.composite
def classic_write_round_args(draw) -> dict:
    config = attrs.evolve(draw(classic_configs()), mapped_file_size_commit_log=1024,
                          ha_transfer_batch_size=draw(st.sampled_from((1, 256, 1024))))
    min_offset = draw(FILE_BASES) * 1024
    max_offset = min_offset + draw(st.integers(0, 3 * 1024))
    request = draw(st.one_of(st.just(-1), st.just(0), st.integers(min_offset, max_offset + 1024)))
    where = draw(st.one_of(st.just(-1), near(max_offset), st.integers(min_offset, max_offset + 1024)))
    last = draw(CLASSIC_TIMES)
    return {"view": WriteView(request, -1 if request == -1 else where, last),
            "log": LogView(min_offset, max_offset), "config": config,
            "now": last + draw(near(config.ha_send_heartbeat_interval_ms))}


@st.composite
def classic_connect_args(draw) -> dict:
    return {"max_offset": draw(CLASSIC_OFFSETS), "now": draw(CLASSIC_TIMES), "last_write_ms": draw(CLASSIC_TIMES)}


@st.composite
def classic_periodic_args(draw) -> dict:
    config = draw(classic_configs())
    last = draw(CLASSIC_TIMES)
    return {"view": ClientView(draw(CLASSIC_OFFSETS), last, last), "config": config,
            "now": last + draw(near(config.ha_send_heartbeat_interval_ms))}


@st.composite
def classic_progress_args(draw) -> dict:
    reported = draw(CLASSIC_OFFSETS)
    return {"view": ClientView(reported, 0, 0), "max_offset": max(0, draw(near(reported)))}


@st.composite
def classic_frame_args(draw) -> dict:
    config = draw(classic_configs())
    slave_max = draw(st.one_of(st.just(0), CLASSIC_OFFSETS))
    offset = max(0, draw(st.one_of(near(slave_max), st.integers(0, 2**40))))
    return {"slave_max_offset": slave_max, "header": ClassicTransferHeader(offset, draw(st.integers(0, 300))),
            "config": config}


ARGUMENTS.update({
    "classic.place_message": classic_place_args(),
    "classic.commit_log_data": classic_data_args(),
    "classic.flush_commit_log": classic_flush_args(),
    "classic.is_slave_ok": classic_slave_ok_args(),
    "classic.submit_replica_request": classic_replica_args(),
    "classic.transfer_status": classic_transfer_args(),
    "classic.submit_flush_request": st.fixed_dictionaries({"config": classic_configs(),
                                                          "wait_store_msg_ok": st.booleans()}),
    "classic.on_slave_report": classic_report_args(),
    "classic.master_housekeeping": classic_housekeeping_args(True),
    "classic.write_socket_round": classic_write_round_args(),
    "classic.on_connect": classic_connect_args(),
    "classic.periodic_report": classic_periodic_args(),
    "classic.progress_report": classic_progress_args(),
    "classic.on_frame": classic_frame_args(),
    "classic.slave_housekeeping": classic_housekeeping_args(False),
})


def strata(name: str) -> dict[str, st.SearchStrategy]:
    """Aim -> strategy for ``name``'s arguments (one stratum, ``any``, if it has no aims)."""
    return STRATA.get(name) or {"any": ARGUMENTS[name]}
