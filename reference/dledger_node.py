"""A minimal, sans-IO DLedger node: the elector plus a small replicated log.

It follows DLedgerLeaderElector's structure: a state maintainer that runs every
tick (10 ms) and, by role, campaigns, sends heartbeats or watches the leader's
heartbeats; request handlers that answer votes, heartbeats and pushes at once; and
one entry dispatcher per follower on the leader. Every decision is a spec call
(through ``DLedgerProcedures``); this module only keeps state, applies effects,
and turns them into messages.

While a vote round is open the maintainer is blocked, as the real one is on its
latch: the node still answers requests, but does not campaign, time out or send
heartbeats until the round closes. The leader's heartbeat round blocks the
maintainer the same way; the entry dispatchers run regardless.

Durable state (``DLedgerDurable``): currTerm, votedFor and the log. Everything else
starts afresh after a restart.
"""
from __future__ import annotations

from collections import Counter

import attrs

from reference.node_api import Draw, Message, Outbox, Ready
from reference.procedures import REFERENCE_PROCEDURES, DLedgerProcedures
from spec.dledger import effects as fx
from spec.dledger.candidate import (
    CandidateAction,
    NextVote,
    candidate_action,
    candidate_due_at,
    count_vote,
    next_time_after_parse,
    next_vote_time,
    start_vote_counts,
    vote_interval_spread,
    vote_round_closed,
)
from spec.dledger.heartbeat import (
    count_heartbeat,
    heartbeat_due_at,
    heartbeat_latch_open,
    leader_should_send_heartbeat,
    start_heartbeat_counts,
)
from spec.dledger.log import (
    Dispatcher,
    DispatcherState,
    commit_push,
    ledger_end_term,
    start_dispatcher,
)
from spec.dledger.member_state import (
    NEVER,
    MemberView,
    known_max_term_after_candidate,
    may_become_candidate,
    may_become_follower,
    may_become_leader,
    next_term,
    parse_result_after_becoming_follower,
)
from spec.dledger.profiles import DEFAULT_PROFILE, Profile, Timing
from spec.dledger.rounds import (
    heartbeat_decision_time,
    heartbeat_latch_deadline,
    heartbeat_latch_open_at_start,
    maintainer_run_at_or_after,
    maintainer_run_at_or_before,
    next_maintainer_run,
    vote_latch_deadline,
)
from spec.dledger.records import (
    NO_INDEX,
    ClientAppend,
    DLedgerView,
    Entry,
    HeartBeatRequest,
    HeartBeatResponse,
    ParseResult,
    PeerProgress,
    PushEntryRequest,
    PushEntryResponse,
    PushType,
    Role,
    VoteRequest,
    VoteResponse,
)


@attrs.frozen(slots=True)
class DLedgerDurable:
    """What survives a crash: the term/vote file and the log."""

    curr_term: int
    voted_for: str | None
    log: tuple[Entry, ...] = ()


class _VoteRound:
    __slots__ = ("id", "term", "counts", "deadline", "started", "answered_by")

    def __init__(self, round_id: int, term: int, deadline: int, started: int):
        self.id = round_id
        self.term = term
        self.counts = start_vote_counts(term)
        self.deadline = deadline
        self.started = started
        self.answered_by: set[str] = set()


class _HeartbeatRound:
    __slots__ = ("id", "term", "counts", "deadline", "decide_at", "answered_by")

    def __init__(self, round_id: int, term: int, deadline: int):
        self.id = round_id
        self.term = term
        self.counts = start_heartbeat_counts(term)
        self.deadline = deadline
        self.decide_at: int | None = None
        self.answered_by: set[str] = set()


class DLedgerNode(Outbox):
    summary_follows_version = True  # every change of summary() bumps version (the simulator relies on it)

    def __init__(
        self,
        node_id: str,
        peers: tuple[str, ...],
        draw: Draw,
        durable: DLedgerDurable | None = None,
        now: int = 0,
        profile: Profile = DEFAULT_PROFILE,
        timing: Timing | None = None,
        procedures: DLedgerProcedures = REFERENCE_PROCEDURES,
    ):
        self.node_id = node_id
        self.peers = tuple(sorted(peers))
        self._peer_set = frozenset(self.peers)
        self._others = tuple(p for p in self.peers if p != node_id)
        self.draw = draw
        self.profile = profile
        self.timing = timing or profile.timing  # the release's waits unless given
        self.proc = procedures
        if durable is None:
            durable = DLedgerDurable(profile.initial_term, None, ())
        # durable
        self.curr_term = durable.curr_term
        self.voted_for = durable.voted_for
        self.log: list[Entry] = list(durable.log)
        # memory only
        self.role = Role.CANDIDATE
        self.leader_id: str | None = None
        self.ledger_end_term = ledger_end_term(self.log)
        self.known_max_term = -1
        self.committed_index = NO_INDEX
        self.applied_index = NO_INDEX
        self.last_leader_heartbeat_time = NEVER
        self.last_send_heartbeat_time = NEVER
        self.last_succ_heartbeat_time = NEVER
        self.next_time_to_request_vote = -1
        self.need_increase_term_immediately = False
        self.last_parse_result = ParseResult.WAIT_TO_REVOTE
        self.last_vote_cost = 0
        self.taking_leadership = False  # leadership transfer is not modelled by the reference
        self._vote_round: _VoteRound | None = None
        self._hb_round: _HeartbeatRound | None = None
        self._round_ids = 0
        # the maintainer runs again maintainer_sleep_ms after each run returns
        self._next_run = now
        self._push_seq = 0
        self._dispatchers: dict[str, Dispatcher] = {}
        self._outstanding: dict[str, tuple[PushEntryRequest, int]] = {}
        self._last_commit_push: dict[str, int] = {}
        # bookkeeping for invariants and reports
        self.coverage: Counter = Counter()
        self.version = 0  # bumps whenever observable state changes
        self._own_reply: VoteResponse | None = None
        self._out: list[Message] = []
        self._dirty = False
        self._now = now

    # ------------------------------------------------------------------ views

    def member_view(self) -> MemberView:
        return MemberView(
            self_id=self.node_id,
            peers=self._peer_set,
            curr_term=self.curr_term,
            voted_for=self.voted_for,
            leader_id=self.leader_id,
            role=self.role,
            ledger_end_term=self.ledger_end_term,
            ledger_end_index=len(self.log) - 1,
            taking_leadership=self.taking_leadership,
        )

    def observe(self) -> DLedgerView:
        return DLedgerView(
            node_id=self.node_id,
            role=self.role,
            curr_term=self.curr_term,
            voted_for=self.voted_for,
            leader_id=self.leader_id,
            ledger_end_index=len(self.log) - 1,
            ledger_end_term=self.ledger_end_term,
            committed_index=self.committed_index,
            applied_index=self.applied_index,
            log=tuple(self.log),
            progress=self._progress() if self.role is Role.LEADER else None,
        )

    def _progress(self) -> tuple[PeerProgress, ...]:
        """The leader's replication state per follower: each dispatcher's writeIndex (the
        leader's end + 1 before its first compare, as upstream starts it) and the match
        index it counts for the commit quorum (the peer's water mark)."""
        start, dispatchers = len(self.log), self._dispatchers
        out = []
        for p in self._others:
            d = dispatchers[p]
            out.append(PeerProgress(p, d.next_index if d.next_index >= 0 else start, d.match_index))
        return tuple(out)

    def summary(self) -> dict:
        return {
            "role": self.role.value,
            "term": self.curr_term,
            "vote": self.voted_for,
            "leader": self.leader_id,
            "end": [self.ledger_end_term, len(self.log) - 1],
            "commit": self.committed_index,
        }

    def durable(self) -> DLedgerDurable:
        return DLedgerDurable(
            self.curr_term if self.proc.persist_term else self.profile.initial_term,
            self.voted_for if self.proc.persist_vote and self.proc.persist_term else None,
            tuple(self.log),
        )

    # ------------------------------------------------------------------ driver API

    def tick(self, now: int) -> Ready:
        self._now = now
        self._catch_up(now, tick=True)
        if self._vote_round is None and self._hb_round is None and now >= self._next_run:
            self._maintain(now)
        if self.role is Role.LEADER:
            self._dispatch_all(now)
        if self.applied_index < self.committed_index:
            self.applied_index = self.committed_index  # the state machine applies at once
            self.version += 1
        return self._ready()

    def step(self, message: Message, now: int) -> Ready:
        self._now = now
        self._catch_up(now, tick=False)
        payload = message.payload
        handler = _HANDLERS.get(type(payload))
        if handler is not None:
            handler(self, message.src, payload, now)
        return self._ready()

    def next_deadline(self) -> int:
        """The earliest time at which ``tick`` can do anything (the simulator's deadline):
        the end of an open round, else the maintainer's next run whose timer (by role) is
        due, the leader's dispatchers' next push, or at once while the state machine has
        entries to apply."""
        if self.applied_index < self.committed_index:
            return self._now
        if self._vote_round is not None:
            due = self._vote_round.deadline
        elif self._hb_round is not None:
            r = self._hb_round
            due = r.decide_at if r.decide_at is not None else r.deadline
        else:  # the maintainer's next run that can do something
            if self.role is Role.LEADER:
                due = heartbeat_due_at(self.last_send_heartbeat_time, self.timing)
            elif self.role is Role.FOLLOWER:
                due = self.proc.follower_timeout_at(self.last_leader_heartbeat_time, self.timing)
            else:
                due = candidate_due_at(self.next_time_to_request_vote, self.need_increase_term_immediately)
            if due is not None:
                due = maintainer_run_at_or_after(self._next_run, due, self.timing)
        if self.role is Role.LEADER:
            for peer in self._others:
                push = self._push_due(peer)
                if push is not None and (due is None or push < due):
                    due = push
        return due

    def _push_due(self, peer: str) -> int | None:
        """When ``_dispatch(peer)`` next sends something (None: not until the state changes)."""
        pending = self._outstanding.get(peer)
        if pending is not None:
            return self._push_timeout_at(pending[1])
        d, request = self.proc.next_push(self._dispatchers[peer], self.log, self.curr_term, self.node_id,
                               self.committed_index, self.profile.log_generation, self._push_seq + 1)
        if request is not None:
            return self._now
        return self._commit_push_due(peer) if d.state is DispatcherState.APPEND else None

    # ------------------------------------------------------------------ plumbing

    def _cover(self, procedure: str, outcome: str) -> None:
        self.coverage[(procedure, outcome)] += 1

    def _persist(self) -> None:
        self._dirty = True

    def _apply(self, effects: tuple, now: int) -> None:
        for e in effects:
            _EFFECTS[type(e)](self, e, now)
        if effects:
            self.version += 1

    # effects --------------------------------------------------------------

    def _set_voted_for(self, e: fx.SetVotedFor, now: int) -> None:
        self.voted_for = e.candidate
        self._persist()

    def _become_candidate(self, e: fx.BecomeCandidate, now: int) -> None:
        if not may_become_candidate(self.curr_term, e.term):
            return
        self.known_max_term = known_max_term_after_candidate(self.known_max_term, e.term)
        self.role = Role.CANDIDATE
        self.leader_id = None
        self._stop_leading()

    def _increase_term_immediately(self, e: fx.IncreaseTermImmediately, now: int) -> None:
        self.need_increase_term_immediately = True

    def _become_follower(self, e: fx.BecomeFollower, now: int) -> None:
        if not may_become_follower(self.curr_term, e.term):
            return
        self.last_parse_result = parse_result_after_becoming_follower(self.last_parse_result, self.profile)
        self.role = Role.FOLLOWER
        self.leader_id = e.leader
        self.last_leader_heartbeat_time = now
        self._stop_leading()

    def _become_leader(self, e: fx.BecomeLeader, now: int) -> None:
        if not may_become_leader(self.curr_term, e.term):
            return
        self.role = Role.LEADER
        self.leader_id = self.node_id
        self.last_send_heartbeat_time = NEVER
        self._dispatchers = {p: start_dispatcher() for p in self._others}
        self._outstanding.clear()
        self._last_commit_push = {p: now for p in self._others}

    def _stop_leading(self) -> None:
        self._dispatchers.clear()
        self._outstanding.clear()

    def _refresh_leader_heartbeat(self, e: fx.RefreshLeaderHeartbeat, now: int) -> None:
        self.last_leader_heartbeat_time = now

    def _record_heartbeat_quorum(self, e: fx.RecordHeartbeatQuorum, now: int) -> None:
        self.last_succ_heartbeat_time = now

    def _resend_heartbeat(self, e: fx.ResendHeartbeat, now: int) -> None:
        self.last_send_heartbeat_time = NEVER

    def _truncate_log(self, e: fx.TruncateLog, now: int) -> None:
        del self.log[e.from_index :]
        self.ledger_end_term = ledger_end_term(self.log)
        if self.proc.persist_truncation:
            self._persist()

    def _append_entries(self, e: fx.AppendEntries, now: int) -> None:
        self.log.extend(e.entries)
        self.ledger_end_term = self.proc.ledger_end_term_after_append(e.entries[-1], self.curr_term)
        self._persist()

    def _advance_commit_index(self, e: fx.AdvanceCommitIndex, now: int) -> None:
        if e.index > self.committed_index:
            self.committed_index = e.index

    def _clamp_commit_index(self, e: fx.ClampCommitIndex, now: int) -> None:
        if e.index < self.committed_index:
            self.committed_index = e.index
        if self.applied_index > self.committed_index:
            self.applied_index = self.committed_index

    # ------------------------------------------------------------------ maintainer

    def _catch_up(self, now: int, tick: bool) -> None:
        """Close a round whose wait ended before ``now``, stamped with the instant it ended.

        While a round is open the maintainer is blocked on its latch; the round ends at
        an instant of its own (a timeout, or 0.3.2+'s sleep after the heartbeat latch),
        whenever the node is next activated. Replies due at an instant come before the
        waiting thread wakes: a message at that very instant still counts, a tick at it
        closes the round.
        """
        r = self._vote_round
        if r is not None and _passed(r.deadline, now, tick):
            self._close_vote_round(r.deadline)
        h = self._hb_round
        if h is not None:
            if h.decide_at is None and _passed(h.deadline, now, tick):
                h.decide_at = heartbeat_decision_time(h.deadline, self.timing)
            if h.decide_at is not None and _passed(h.decide_at, now, tick):
                self._decide_heartbeat_round(h.decide_at)

    def _maintain(self, now: int) -> None:
        """The maintainer's run: decided at its last beat at or before ``now`` (when the
        node's timer is due by then), done at ``now`` (a simulator's tick may come a few ms
        after the beat: whether it wakes the node at the beat or ticks it on every grid
        time, the same tick acts)."""
        run = maintainer_run_at_or_before(self._next_run, now, self.timing)
        if self.role is Role.LEADER:
            if leader_should_send_heartbeat(run, self.last_send_heartbeat_time, self.timing):
                self._start_heartbeat_round(now)
        elif self.role is Role.FOLLOWER:
            if self.proc.follower_timed_out(run, self.last_leader_heartbeat_time, self.timing):
                self._cover("follower_timeout", "TIMED_OUT")
                self._apply((fx.BecomeCandidate(self.curr_term),), now)
        else:
            self._maintain_as_candidate(run, now)
        if self._vote_round is None and self._hb_round is None:
            # the run returned at once: the next one a sleep later, on the same beat
            self._next_run = next_maintainer_run(run, self.timing)

    def _vote_time(self, now: int) -> int:
        spread = vote_interval_spread(self.timing, self.taking_leadership)
        return next_vote_time(
            now, self.draw(spread), self.timing, self.taking_leadership, self.last_vote_cost, self.profile
        )

    def _maintain_as_candidate(self, run: int, now: int) -> None:
        action = candidate_action(
            run, self.next_time_to_request_vote, self.need_increase_term_immediately, self.last_parse_result
        )
        if action is CandidateAction.WAIT:
            return
        self._cover("candidate_round", action.value)
        if action is not CandidateAction.CAMPAIGN_SAME_TERM:
            self.curr_term = next_term(self.curr_term, self.known_max_term)
            self.voted_for = None
            self.last_parse_result = ParseResult.WAIT_TO_REVOTE
            self._persist()
            self.version += 1
        if action is CandidateAction.INCREASE_TERM_ONLY:
            self.need_increase_term_immediately = False
            self.next_time_to_request_vote = self._vote_time(now)
            return
        self._start_vote_round(now)

    def _start_vote_round(self, now: int) -> None:
        self._round_ids += 1
        term = self.curr_term
        deadline = vote_latch_deadline(now, self.draw(self.timing.max_vote_interval_ms), self.timing)
        r = self._vote_round = _VoteRound(self._round_ids, term, deadline, now)
        request = VoteRequest(term, self.node_id, self.ledger_end_term, len(self.log) - 1, r.id)
        for peer in self._others:
            self._send(peer, request)
        # the candidate answers its own request through the same handler
        self._on_vote_request(self.node_id, request, now, self_vote=True)
        self._on_vote_response(self.node_id, self._own_reply, now)

    def _close_vote_round(self, now: int) -> None:
        r = self._vote_round
        self._vote_round = None
        self._next_run = next_maintainer_run(now, self.timing)
        self.last_vote_cost = now - r.started
        decision = self.proc.parse_vote_result(r.counts, len(self.peers), self.profile)
        self._cover("parse_vote_result", decision.result.value)
        self.last_parse_result = decision.result
        if decision.next_vote is not NextVote.UNCHANGED:  # only then does upstream draw a next vote time
            self.next_time_to_request_vote = next_time_after_parse(
                decision, self.next_time_to_request_vote, self._vote_time(now), self.timing
            )
        self._apply(decision.effects, now)

    def _start_heartbeat_round(self, now: int) -> None:
        self._round_ids += 1
        self.last_send_heartbeat_time = now
        deadline = heartbeat_latch_deadline(now, self.timing)
        r = self._hb_round = _HeartbeatRound(self._round_ids, self.curr_term, deadline)
        request = HeartBeatRequest(self.curr_term, self.node_id, r.id)
        for peer in self._others:
            self._send(peer, request)
        if heartbeat_latch_open_at_start(r.counts, len(self.peers), self.timing):
            r.decide_at = heartbeat_decision_time(now, self.timing)

    def _decide_heartbeat_round(self, now: int) -> None:
        r = self._hb_round
        self._hb_round = None
        self._next_run = next_maintainer_run(now, self.timing)
        decision = self.proc.decide_heartbeat_round(
            r.counts, len(self.peers), now, self.last_succ_heartbeat_time, self.timing, self.profile
        )
        self._cover("heartbeat_round", decision.outcome.value)
        self._apply(decision.effects, now)

    # ------------------------------------------------------------------ handlers

    def _on_vote_request(self, src: str, request: VoteRequest, now: int, self_vote: bool = False) -> None:
        if not self_vote and self._vote_round is not None and not self.proc.answer_votes_while_campaigning:
            return
        decision = self.proc.handle_vote(self.member_view(), request, self_vote, self.profile)
        self._cover("handle_vote", decision.result.value)
        self._apply(decision.effects, now)
        reply = VoteResponse(decision.reply_term, decision.result, request.round)
        if self_vote:
            self._own_reply = reply
        else:
            self._send(src, reply)

    def _on_vote_response(self, src: str, reply: VoteResponse, now: int) -> None:
        r = self._vote_round
        if r is None or reply.round != r.id or src in r.answered_by:
            return  # late, duplicated or from another round: ignored like a completed future
        r.answered_by.add(src)
        r.counts = count_vote(r.counts, reply)
        if vote_round_closed(r.counts, len(self.peers)):
            self._close_vote_round(now)

    def _on_heartbeat(self, src: str, request: HeartBeatRequest, now: int) -> None:
        decision = self.proc.handle_heartbeat(self.member_view(), request)
        self._cover("handle_heartbeat", decision.code.name)
        self._apply(decision.effects, now)
        self._send(src, HeartBeatResponse(decision.reply_term, decision.code, request.round))

    def _on_heartbeat_response(self, src: str, reply: HeartBeatResponse, now: int) -> None:
        r = self._hb_round
        if r is None or reply.round != r.id or src in r.answered_by:
            return
        r.answered_by.add(src)
        r.counts = count_heartbeat(r.counts, reply)
        if r.decide_at is None and heartbeat_latch_open(r.counts, len(self.peers)):
            r.decide_at = heartbeat_decision_time(now, self.timing)
            if r.decide_at == now:  # no sleep after the latch (before 0.3.2): decide at once
                self._decide_heartbeat_round(now)

    def _on_push(self, src: str, request: PushEntryRequest, now: int) -> None:
        decision = self.proc.handle_push(
            self.member_view(), request, self.log, self.committed_index, self.profile
        )
        self._cover("handle_push", decision.row)
        self._apply(decision.effects, now)
        self._send(src, decision.response)

    def _on_push_response(self, src: str, response: PushEntryResponse, now: int) -> None:
        pending = self._outstanding.get(src)
        if self.role is not Role.LEADER or pending is None or pending[0].seq != response.seq:
            return
        request = pending[0]
        del self._outstanding[src]
        before = self._dispatchers[src]
        d = self.proc.on_push_response(before, request, response, self.profile.log_generation)
        self._dispatchers[src] = d
        if d.next_index != before.next_index or d.match_index != before.match_index:
            self.version += 1  # the leader's progress is part of what observe() shows
        self._advance_leader_commit()
        self._dispatch(src, now)

    def _on_client_append(self, src: str, request: ClientAppend, now: int) -> None:
        entry = self.proc.client_entry(self.member_view(), self.log, request.body)
        if entry is None:
            self._cover("client_append", "NOT_LEADER")
            return
        self._cover("client_append", "APPENDED")
        self._apply((fx.AppendEntries((entry,)),), now)
        if self.role is Role.LEADER:
            self._advance_leader_commit()
            self._dispatch_all(now)

    # ------------------------------------------------------------------ leader log

    def _advance_leader_commit(self) -> None:
        matches = [len(self.log) - 1] + [self._dispatchers[p].match_index for p in self._others]
        new = self.proc.leader_commit_index(
            matches, self.log, self.curr_term, self.committed_index, self.profile.log_generation
        )
        if new != self.committed_index:
            self.committed_index = new
            self.version += 1

    def _dispatch_all(self, now: int) -> None:
        for peer in self._others:
            self._dispatch(peer, now)

    def _commit_push_due(self, peer: str) -> int:
        return self._last_commit_push[peer] + self.timing.commit_push_interval_ms

    def _push_timeout_at(self, sent_at: int) -> int:
        return sent_at + self.timing.push_timeout_ms

    def _dispatch(self, peer: str, now: int) -> None:
        pending = self._outstanding.get(peer)
        if pending is not None:
            if now < self._push_timeout_at(pending[1]):
                return
            # no answer in time: the pusher starts over with a compare
            del self._outstanding[peer]
            d = self._dispatchers[peer]
            self._dispatchers[peer] = Dispatcher(DispatcherState.COMPARE, d.next_index, d.match_index)
        seq = self._push_seq + 1  # numbers the pushes sent (a request id; DLedger has none)
        d, request = self.proc.next_push(
            self._dispatchers[peer],
            self.log,
            self.curr_term,
            self.node_id,
            self.committed_index,
            self.profile.log_generation,
            seq,
        )
        self._dispatchers[peer] = d
        if request is None and d.state is DispatcherState.APPEND:
            if now >= self._commit_push_due(peer):
                request = commit_push(self.curr_term, self.node_id, self.committed_index, seq)
        if request is None:
            return
        self._push_seq = seq
        if request.type in (PushType.COMMIT, PushType.APPEND):
            self._last_commit_push[peer] = now
        self._outstanding[peer] = (request, now)
        self._send(peer, request)


def _passed(instant: int, now: int, tick: bool) -> bool:
    """Whether a wait ending at ``instant`` is over at an activation at ``now``."""
    return now > instant or (tick and now == instant)

_HANDLERS = {
    VoteRequest: DLedgerNode._on_vote_request,
    VoteResponse: DLedgerNode._on_vote_response,
    HeartBeatRequest: DLedgerNode._on_heartbeat,
    HeartBeatResponse: DLedgerNode._on_heartbeat_response,
    PushEntryRequest: DLedgerNode._on_push,
    PushEntryResponse: DLedgerNode._on_push_response,
    ClientAppend: DLedgerNode._on_client_append,
}

_EFFECTS = {
    fx.SetVotedFor: DLedgerNode._set_voted_for,
    fx.BecomeCandidate: DLedgerNode._become_candidate,
    fx.IncreaseTermImmediately: DLedgerNode._increase_term_immediately,
    fx.BecomeFollower: DLedgerNode._become_follower,
    fx.BecomeLeader: DLedgerNode._become_leader,
    fx.RefreshLeaderHeartbeat: DLedgerNode._refresh_leader_heartbeat,
    fx.RecordHeartbeatQuorum: DLedgerNode._record_heartbeat_quorum,
    fx.ResendHeartbeat: DLedgerNode._resend_heartbeat,
    fx.TruncateLog: DLedgerNode._truncate_log,
    fx.AppendEntries: DLedgerNode._append_entries,
    fx.AdvanceCommitIndex: DLedgerNode._advance_commit_index,
    fx.ClampCommitIndex: DLedgerNode._clamp_commit_index,
}
