"""Handler-level operations: stateless calls an implementation can answer.

Each operation names its parameters (decoded with ``adapters.codec`` in the
operation's namespace), its spec implementation (what the reference answers, given a
profile), and the *canonical* form of an answer: the parts that must agree for the
implementation to conform (decisions are compared by outcome, reply and effects, not
by the name of the spec's internal table row). docs/adapter-protocol.md lists them.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import attrs

from spec.dledger import candidate, heartbeat, rounds, vote
from spec.dledger import log as dledger_log
from spec.dledger.candidate import VoteCounts
from spec.dledger.heartbeat import HeartbeatCounts
from spec.dledger.member_state import MemberView
from spec.dledger.profiles import DEFAULT_TIMING, PROFILES
from spec.dledger.records import Entry, HeartBeatRequest, PushEntryRequest, VoteRequest
from spec.dledger.rounds import CandidateState, HeartbeatReply, LeaderTimes, RoundDraws, VoteReply
from spec.truncation import epoch_file as ef
from spec.truncation import replication
from spec.truncation.epoch_file import EpochFile
from spec.broker import confirm_offset as broker_confirm
from spec.broker import sync_state_set as broker_sss
from spec.controller import events as controller_events
from spec.controller import heartbeat as controller_heartbeat
from spec.controller.heartbeat import BrokerHeartbeat, HeartbeatTable, StaticLiveness
from spec.controller.records import BrokerIdentity, ControllerMetadata
from spec.controller.rules import ControllerRules
from spec.controller.profiles import PROFILES as CONTROLLER_PROFILES
from spec.classic import commitlog as classic_commitlog
from spec.classic import master as classic_master
from spec.classic import slave as classic_slave
from spec.classic import write as classic_write
from spec.classic.profiles import DEFAULT_PROFILE as CLASSIC_DEFAULT_PROFILE
from spec.classic.profiles import PROFILES as CLASSIC_PROFILES
from spec.classic.records import ClassicConfig, TransferHeader


@attrs.frozen(slots=True)
class Operation:
    name: str  # "<namespace>.<procedure>"
    namespace: str  # codec namespace and profile family
    params: tuple[tuple[str, Any], ...]  # (name, type) in call order
    result: Any  # type of the answer
    spec: Callable[..., Any]  # spec(profile_name, **args) -> answer
    canonical: Callable[[Any], Any] = lambda x: x
    profiles: tuple[str, ...] = ()  # profiles the answer depends on (empty: none)


def _dledger(fn):
    return lambda profile, **kw: fn(PROFILES[profile], **kw)


def _decision(*fields: str) -> Callable[[Any], Any]:
    return lambda d: tuple(getattr(d, f) for f in fields)


DLEDGER_PROFILES = tuple(PROFILES)

OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in (
        Operation(
            "dledger.handle_vote", "dledger",
            (("member", MemberView), ("request", VoteRequest), ("self_vote", bool)), vote.VoteDecision,
            _dledger(lambda p, member, request, self_vote: vote.handle_vote(member, request, self_vote, p)),
            _decision("result", "reply_term", "effects", "code"), DLEDGER_PROFILES,
        ),
        Operation(
            "dledger.handle_heartbeat", "dledger",
            (("member", MemberView), ("request", HeartBeatRequest)), heartbeat.HeartbeatDecision,
            _dledger(lambda p, member, request: heartbeat.handle_heartbeat(member, request)),
            _decision("code", "reply_term", "effects"), DLEDGER_PROFILES,
        ),
        Operation(
            "dledger.parse_vote_result", "dledger",
            (("counts", VoteCounts), ("peer_size", int)), candidate.ParseDecision,
            _dledger(lambda p, counts, peer_size: candidate.parse_vote_result(counts, peer_size, p)),
            _decision("result", "next_vote", "effects"), DLEDGER_PROFILES,
        ),
        Operation(
            "dledger.decide_heartbeat_round", "dledger",
            (("counts", HeartbeatCounts), ("peer_size", int), ("now", int), ("last_succ_heartbeat_time", int)),
            heartbeat.HeartbeatRoundDecision,
            _dledger(lambda p, counts, peer_size, now, last_succ_heartbeat_time: heartbeat.decide_heartbeat_round(
                counts, peer_size, now, last_succ_heartbeat_time, DEFAULT_TIMING, p)),
            _decision("outcome", "effects"), DLEDGER_PROFILES,
        ),
        Operation(
            "dledger.heartbeat_round", "dledger",
            (("member", MemberView), ("now", int), ("times", LeaderTimes), ("replies", tuple[HeartbeatReply, ...])),
            rounds.HeartbeatRoundResult,
            _dledger(lambda p, member, now, times, replies: rounds.heartbeat_round(member, now, times, replies, p)),
            _decision("sent", "returns_at", "member", "times", "role_changes"), DLEDGER_PROFILES,
        ),
        Operation(
            "dledger.candidate_round", "dledger",
            (("member", MemberView), ("now", int), ("state", CandidateState), ("replies", tuple[VoteReply, ...]),
             ("draws", RoundDraws)),
            rounds.CandidateRoundResult,
            _dledger(lambda p, member, now, state, replies, draws: rounds.candidate_round(
                member, now, state, replies, draws, p)),
            _decision("returns_at", "member", "state", "role_changes", "draws"), DLEDGER_PROFILES,
        ),
        Operation(
            "dledger.handle_push", "dledger",
            (("member", MemberView), ("request", PushEntryRequest), ("log", tuple[Entry, ...]),
             ("committed_index", int)), dledger_log.PushDecision,
            _dledger(lambda p, member, request, log, committed_index: dledger_log.handle_push(
                member, request, log, committed_index, p)),
            lambda d: (d.response.code, d.response.end_index, d.response.x_term, d.response.x_index, d.effects),
            DLEDGER_PROFILES,
        ),
        Operation(
            "dledger.leader_commit_index", "dledger",
            (("match_indexes", tuple[int, ...]), ("log", tuple[Entry, ...]), ("curr_term", int),
             ("committed_index", int)), int,
            _dledger(lambda p, match_indexes, log, curr_term, committed_index: dledger_log.leader_commit_index(
                match_indexes, log, curr_term, committed_index, p.log_generation)),
            lambda x: x, DLEDGER_PROFILES,
        ),
        Operation(
            "truncation.find_consistent_point", "truncation",
            (("local", EpochFile), ("local_max", int), ("master", EpochFile), ("master_max", int)), int,
            lambda profile, local, local_max, master, master_max: ef.find_consistent_point(
                local, local_max, master, master_max),
        ),
        Operation(
            "truncation.append", "truncation",
            (("epoch_file", EpochFile), ("epoch", int), ("start_offset", int)),
            tuple[EpochFile, ef.AppendOutcome],
            lambda profile, epoch_file, epoch, start_offset: ef.append(
                epoch_file, epoch, start_offset),
        ),
        Operation(
            "truncation.slave_handshake", "truncation",
            (("local", EpochFile), ("local_max", int), ("master", EpochFile), ("master_max", int)),
            replication.HandshakeDecision,
            lambda profile, local, local_max, master, master_max: replication.slave_handshake(
                local, local_max, master, master_max),
        ),
        Operation(
            "truncation.change_to_master", "truncation",
            (("epoch_file", EpochFile), ("epoch", int), ("valid_max_offset", int), ("had_dirty_tail", bool)),
            replication.MasterChange,
            lambda profile, epoch_file, epoch, valid_max_offset, had_dirty_tail: replication.change_to_master(
                epoch_file, epoch, valid_max_offset, had_dirty_tail),
        ),
    )
}


_ENTRY = Optional[ef.EpochEntry]

# The rest of the epoch file (``EpochFileCache``): truncations, lookups, the last end.
OPERATIONS.update({
    op.name: op
    for op in (
        Operation("truncation.truncate_suffix_by_offset", "truncation", (("epoch_file", EpochFile), ("offset", int)),
                  EpochFile, lambda profile, epoch_file, offset: ef.truncate_suffix_by_offset(epoch_file, offset)),
        Operation("truncation.truncate_suffix_by_epoch", "truncation", (("epoch_file", EpochFile), ("epoch", int)),
                  EpochFile, lambda profile, epoch_file, epoch: ef.truncate_suffix_by_epoch(epoch_file, epoch)),
        Operation("truncation.truncate_prefix_by_offset", "truncation", (("epoch_file", EpochFile), ("offset", int)),
                  EpochFile, lambda profile, epoch_file, offset: ef.truncate_prefix_by_offset(epoch_file, offset)),
        Operation("truncation.set_last_end", "truncation", (("epoch_file", EpochFile), ("end", int)),
                  EpochFile, lambda profile, epoch_file, end: ef.set_last_end(epoch_file, end)),
        Operation("truncation.find_entry_by_offset", "truncation", (("epoch_file", EpochFile), ("offset", int)),
                  _ENTRY, lambda profile, epoch_file, offset: ef.find_entry_by_offset(epoch_file, offset)),
        Operation("truncation.find_entry_by_epoch", "truncation", (("epoch_file", EpochFile), ("epoch", int)),
                  _ENTRY, lambda profile, epoch_file, epoch: ef.find_entry_by_epoch(epoch_file, epoch)),
        Operation("truncation.next_entry", "truncation", (("epoch_file", EpochFile), ("epoch", int)),
                  _ENTRY, lambda profile, epoch_file, epoch: ef.next_entry(epoch_file, epoch)),
        Operation(
            "truncation.on_transfer_header", "truncation",
            (("epoch_file", EpochFile), ("slave_max", int), ("header", replication.TransferHeader)),
            replication.HeaderDecision,
            lambda profile, epoch_file, slave_max, header: replication.on_transfer_header(epoch_file, slave_max,
                                                                                          header),
        ),
    )
})


def _controller(profile: str | None, metadata, request, liveness, is_leader=True):
    rules = ControllerRules.for_profile(profile or "rocketmq-5.1")
    return rules.handle(metadata, request, liveness, is_leader=is_leader)


OPERATIONS.update({
    op.name: op
    for op in (
        Operation(
            "controller.handle", "controller",
            (("metadata", ControllerMetadata), ("request", Any), ("liveness", StaticLiveness), ("is_leader", bool)),
            Any, _controller,
            lambda r: (r.response, r.events), tuple(CONTROLLER_PROFILES),
        ),
        # the replicated state machine: one committed event applied to the metadata
        Operation(
            "controller.apply_event", "controller", (("metadata", ControllerMetadata), ("event", Any)),
            ControllerMetadata, lambda profile, metadata, event: controller_events.apply_event(metadata, event),
        ),
        # one controller node's heartbeat table (DefaultBrokerHeartbeatManager)
        Operation(
            "controller.on_broker_heartbeat", "controller",
            (("table", HeartbeatTable), ("heartbeat", BrokerHeartbeat), ("now", int)), HeartbeatTable,
            lambda profile, table, heartbeat, now: controller_heartbeat.on_broker_heartbeat(table, heartbeat, now),
        ),
        Operation(
            "controller.is_broker_active", "controller",
            (("table", HeartbeatTable), ("identity", BrokerIdentity), ("now", int)), bool,
            lambda profile, table, identity, now: controller_heartbeat.is_broker_active(table, identity, now),
        ),
        Operation(
            "controller.scan_not_active_broker", "controller", (("table", HeartbeatTable), ("now", int)),
            tuple[HeartbeatTable, tuple[BrokerIdentity, ...]],
            lambda profile, table, now: controller_heartbeat.scan_not_active_broker(table, now),
        ),
        Operation(
            "broker.maybe_shrink", "broker",
            (("local", frozenset[int]), ("master_id", int), ("caught_up_time", dict[int, int]), ("now", int)),
            broker_sss.ShrinkDecision,
            lambda profile, local, master_id, caught_up_time, now: broker_sss.maybe_shrink(
                local, master_id, caught_up_time, now),
            lambda d: (d.changed, d.new_set),
        ),
        Operation(
            "broker.maybe_expand", "broker",
            (("local", frozenset[int]), ("slave_id", int), ("ack_offset", int), ("confirm_offset", int),
             ("epoch_start_offset", int), ("is_async_learner", bool)),
            broker_sss.ExpandDecision,
            lambda profile, **kw: broker_sss.maybe_expand(**kw),
            lambda d: (d.outcome, d.new_set),
        ),
        Operation(
            "broker.compute_master_confirm_offset", "broker",
            (("max_offset", int), ("sync_state_set", frozenset[int]), ("master_id", int), ("acks", dict[int, int]),
             ("current_confirm_offset", int)),
            Any,
            lambda profile, **kw: broker_confirm.compute_master_confirm_offset(**kw),
        ),
    )
})


def _classic(fn):
    """A classic procedure under the named profile (default: the spec's)."""
    return lambda profile, **kw: fn(CLASSIC_PROFILES.get(profile or "", CLASSIC_DEFAULT_PROFILE), **kw)


CLASSIC_PROFILE_NAMES = tuple(CLASSIC_PROFILES)

OPERATIONS.update({
    op.name: op
    for op in (
        Operation(
            "classic.place_message", "classic",
            (("max_offset", int), ("size", int), ("file_size", int)), classic_commitlog.Placement,
            lambda profile, **kw: classic_commitlog.place_message(**kw),
        ),
        Operation(
            "classic.commit_log_data", "classic",
            (("offset", int), ("min_offset", int), ("max_offset", int), ("file_size", int)),
            classic_commitlog.DataSlice,
            lambda profile, **kw: classic_commitlog.commit_log_data(**kw),
        ),
        Operation(
            "classic.flush_commit_log", "classic",
            (("flushed", int), ("max_offset", int), ("file_size", int), ("least_pages", int), ("page_size", int)),
            classic_commitlog.FlushDecision,
            lambda profile, **kw: classic_commitlog.flush_commit_log(**kw),
        ),
        Operation(
            "classic.is_slave_ok", "classic",
            (("connection_count", int), ("push2_slave_max_offset", int), ("master_put_where", int),
             ("config", ClassicConfig)), classic_write.SlaveOkOutcome,
            lambda profile, **kw: classic_write.is_slave_ok(**kw),
        ),
        Operation(
            "classic.submit_replica_request", "classic",
            (("wrote_offset", int), ("wrote_bytes", int), ("now", int), ("connection_count", int),
             ("push2_slave_max_offset", int), ("wait_store_msg_ok", bool), ("config", ClassicConfig)),
            classic_write.ReplicaDecision,
            _classic(lambda p, **kw: classic_write.submit_replica_request(profile=p, **kw)),
            lambda d: (d.outcome, d.status, d.request), CLASSIC_PROFILE_NAMES,
        ),
        Operation(
            "classic.transfer_status", "classic",
            (("request", classic_write.ReplicaRequest), ("push2_slave_max_offset", int),
             ("connection_acks", tuple[tuple[int, int], ...]), ("now", int)), classic_write.TransferOutcome,
            lambda profile, **kw: classic_write.transfer_status(**kw),
        ),
        Operation(
            "classic.submit_flush_request", "classic",
            (("config", ClassicConfig), ("wait_store_msg_ok", bool)), classic_write.FlushRequestOutcome,
            lambda profile, **kw: classic_write.submit_flush_request(**kw),
        ),
        Operation(
            "classic.on_slave_report", "classic",
            (("connection", classic_master.ConnectionView), ("report", int), ("master_max_offset", int),
             ("push2_slave_max_offset", int)), classic_master.ReportDecision,
            _classic(lambda p, **kw: classic_master.on_slave_report(profile=p, **kw)),
            lambda d: (d.outcome, d.connection, d.push2_slave_max_offset, d.close), CLASSIC_PROFILE_NAMES,
        ),
        Operation(
            "classic.master_housekeeping", "classic",
            (("last_read_ms", int), ("now", int), ("config", ClassicConfig)), classic_master.HousekeepingOutcome,
            lambda profile, **kw: classic_master.master_housekeeping(**kw),
        ),
        Operation(
            "classic.write_socket_round", "classic",
            (("view", classic_master.WriteView), ("log", classic_master.LogView), ("now", int),
             ("config", ClassicConfig)), classic_master.WriteDecision,
            lambda profile, **kw: classic_master.write_socket_round(**kw),
        ),
        Operation(
            "classic.on_connect", "classic",
            (("max_offset", int), ("now", int), ("last_write_ms", int)), classic_slave.ClientView,
            _classic(lambda p, **kw: classic_slave.on_connect(profile=p, **kw)), lambda x: x, CLASSIC_PROFILE_NAMES,
        ),
        Operation(
            "classic.periodic_report", "classic",
            (("view", classic_slave.ClientView), ("now", int), ("config", ClassicConfig)),
            classic_slave.SlaveReportDecision,
            lambda profile, **kw: classic_slave.periodic_report(**kw),
        ),
        Operation(
            "classic.progress_report", "classic",
            (("view", classic_slave.ClientView), ("max_offset", int)), classic_slave.SlaveReportDecision,
            lambda profile, **kw: classic_slave.progress_report(**kw),
        ),
        Operation(
            "classic.on_frame", "classic",
            (("slave_max_offset", int), ("header", TransferHeader), ("config", ClassicConfig)),
            classic_slave.FrameDecision,
            lambda profile, **kw: classic_slave.on_frame(**kw),
        ),
        Operation(
            "classic.slave_housekeeping", "classic",
            (("view", classic_slave.ClientView), ("now", int), ("config", ClassicConfig)),
            classic_slave.ClientHousekeeping,
            _classic(lambda p, **kw: classic_slave.slave_housekeeping(profile=p, **kw)), lambda x: x,
            CLASSIC_PROFILE_NAMES,
        ),
    )
})


def call_spec(name: str, profile: str | None, args: dict) -> Any:
    op = OPERATIONS[name]
    return op.spec(profile, **args)


def namespace_profile(name: str, profiles: dict[str, str]) -> str | None:
    """The profile an operation is judged under, from an adapter's declared profiles."""
    op = OPERATIONS[name]
    return profiles.get(op.namespace) if op.profiles else None


# How a set of DLedger decision procedures (``reference.procedures.DLedgerProcedures``,
# possibly a mutant's) answers each DLedger operation under a profile: the reference
# server answers with them, and the fingerprint of an in-process node uses them.
PROCEDURE_CALLS: dict[str, Callable[[Any, Any, dict], Any]] = {
    "dledger.handle_vote": lambda proc, p, a: proc.handle_vote(a["member"], a["request"], a["self_vote"], p),
    "dledger.handle_heartbeat": lambda proc, p, a: proc.handle_heartbeat(a["member"], a["request"]),
    "dledger.parse_vote_result": lambda proc, p, a: proc.parse_vote_result(a["counts"], a["peer_size"], p),
    "dledger.decide_heartbeat_round": lambda proc, p, a: proc.decide_heartbeat_round(
        a["counts"], a["peer_size"], a["now"], a["last_succ_heartbeat_time"], DEFAULT_TIMING, p),
    "dledger.heartbeat_round": lambda proc, p, a: rounds.heartbeat_round(
        a["member"], a["now"], a["times"], a["replies"], p, rules=proc),
    "dledger.candidate_round": lambda proc, p, a: rounds.candidate_round(
        a["member"], a["now"], a["state"], a["replies"], a["draws"], p, rules=proc),
    "dledger.handle_push": lambda proc, p, a: proc.handle_push(a["member"], a["request"], a["log"],
                                                              a["committed_index"], p),
    "dledger.leader_commit_index": lambda proc, p, a: proc.leader_commit_index(
        a["match_indexes"], a["log"], a["curr_term"], a["committed_index"], p.log_generation),
}
