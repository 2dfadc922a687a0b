"""Hypothesis strategies for the arguments of every handler-level operation.

Used by the differential tests (``tests/conformance/test_handler_level.py``), which
feed the same arguments to an implementation and to the spec and compare answers.
Inputs are kept small so that every branch of every table is reached often.
"""
from __future__ import annotations

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


def near(value: int, spread: int = 1):
    """Integers around ``value``: where the decision tables compare, equality matters most."""
    return st.integers(value - spread, value + spread)


def addressing():
    """Group and remoteId of a request: mostly this node's, sometimes another's (DLedgerServer's checks)."""
    return st.fixed_dictionaries({"group": st.sampled_from((DEFAULT_GROUP,) * 8 + ("other",)),
                                  "remote_id": st.sampled_from((None,) * 6 + ("n1", "n1", "n2"))})


@st.composite
def vote_args(draw) -> dict:
    """A vote request that, most of the time, is close to the voter's own term and ledger."""
    member = draw(member_views())
    request = VoteRequest(
        draw(near(member.curr_term) | terms), draw(st.sampled_from(IDS)),
        draw(near(member.ledger_end_term) | terms), draw(near(member.ledger_end_index) | st.integers(-1, 5)),
        **draw(addressing()))
    return {"member": member, "request": request, "self_vote": draw(st.booleans())}


@st.composite
def heartbeat_args(draw) -> dict:
    member = draw(member_views())
    request = HeartBeatRequest(draw(near(member.curr_term) | terms),
                               draw(st.sampled_from((member.leader_id,) + IDS if member.leader_id else IDS)),
                               **draw(addressing()))
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


def controller_events():
    """Events as the controller commits them, for this set or another, with registered ids or not."""
    names = st.sampled_from((NAME, NAME, "broker-b"))
    ids = st.sampled_from(BROKER_IDS + (4,))
    return st.one_of(
        st.builds(ApplyBrokerIdEvent, st.just(CLUSTER), names, ids.map(_address), ids,
                  ids.map(lambda i: _check_code(i))),
        st.builds(UpdateBrokerAddressEvent, st.just(CLUSTER), names, st.sampled_from((9, 1)).map(_address), ids),
        st.builds(ElectMasterEvent, names, st.just(True), ids),
        st.builds(ElectMasterEvent, names, st.just(False)),
        st.builds(AlterSyncStateSetEvent, names, st.frozensets(ids, min_size=1)),
        st.builds(CleanBrokerDataEvent, names, st.none() | st.frozensets(ids, min_size=1)),
    )


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

# The round operations share their generators with the fingerprint and the transcript recorder.
ARGUMENTS.update({name: st.randoms(use_true_random=False).map(make) for name, make in ROUND_INPUTS.items()})


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
