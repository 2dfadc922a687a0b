"""Step conformance of DLedger nodes (``spec/steps/__init__.py`` says what a step is).

``DLedgerSteps.check(event)`` judges one step of one node against the profile's
procedures and returns the violations. What it judges, by input:

| input | procedure | what must hold |
|---|---|---|
| VoteRequest | ``handle_vote`` | the reply (result, reply term, round) and the state after are the spec's |
| HeartBeatRequest | ``handle_heartbeat`` | the reply and the state after are the spec's |
| PushEntryRequest | ``handle_push`` | the reply (code, end, conflict hint) and the log / commit index after are the spec's |
| VoteResponse | ``parse_vote_result`` | the node becomes leader exactly when its vote round passes (latch at a quorum or when all answered) |
| tick, candidate | ``candidate_action`` | a term is raised alone only when needIncreaseTermImmediately is set; a round is at the term the last ParseResult allows, not before nextTimeToRequestVote, asks every peer with the node's ledger end |
| tick, candidate | ``parse_vote_result`` | a round closed at its deadline makes the node leader only if it passed |
| tick, follower | ``follower_timed_out`` | no step-down before the lease (maxHeartBeatLeak x heartBeatTimeIntervalMs) since the leader's last heartbeat |
| tick, leader | ``decide_heartbeat_round`` | the leader steps down exactly when its heartbeat round says so, before its next round |
| any, leader | ``leader_commit_index`` | the commit index moves only up, to an index a quorum holds (what the leader was told), of the leader's term in G2 |
| any, leader | ``next_push`` | pushes carry the leader's own entries, in its term, and append only on a prefix the follower was shown to match |
| ClientAppend | ``client_append`` | a leader appends the entry at its end in its term; a node that does not lead changes nothing |
| any | ``persist`` | what the step persisted is the node's term, vote and log after it |

At a tick nothing else may change and no other message may be sent; what does is
charged to the procedure that runs at a tick in the node's role before it
(``candidate_action``, ``follower_timed_out``, ``decide_heartbeat_round``).

The checker rebuilds the node's hidden state from what it saw: the open vote round
(the replies folded into ``VoteCounts``), the last ParseResult, knownMaxTermInGroup,
needIncreaseTermImmediately, the heartbeat round, the time of the leader's last
heartbeat, and what the leader was told of each follower's log. Where the spec leaves
a choice (when a timer fires within its range, how many entries a push carries, how
stale a commit index a push announces), every allowed outcome is accepted, and where
the timing makes several histories possible (a reply arriving as a deadline fires)
each is kept until a later step decides; docs/step-conformance.md lists the freedoms.
Leadership transfer (takingLeadership) is not modelled: a node is judged as one that
is not taking leadership.
"""
from __future__ import annotations

from collections import Counter
from functools import reduce
from typing import Any, Iterable

import attrs

from spec.dledger import effects as fx
from spec.dledger.candidate import (
    count_vote,
    next_time_after_parse,
    next_vote_time,
    parse_vote_result,
    start_vote_counts,
    vote_round_closed,
    vote_round_wait_range,
)
from spec.dledger.heartbeat import (
    HeartbeatRoundOutcome,
    count_heartbeat,
    decide_heartbeat_round,
    follower_timed_out,
    handle_heartbeat,
    heartbeat_latch_open,
    start_heartbeat_counts,
)
from spec.dledger.log import client_entry, handle_push, quorum_match_index
from spec.dledger.member_state import (
    NEVER,
    MemberView,
    elapsed,
    known_max_term_after_candidate,
    may_become_candidate,
    may_become_follower,
    may_become_leader,
    next_term,
    parse_result_after_becoming_follower,
)
from spec.dledger.profiles import DEFAULT_PROFILE, DEFAULT_TIMING, Profile, Timing
from spec.dledger.records import (
    NO_TERM,
    ClientAppend,
    DLedgerView,
    Entry,
    HeartBeatRequest,
    HeartBeatResponse,
    ParseResult,
    PushEntryRequest,
    PushEntryResponse,
    PushType,
    ResponseCode,
    Role,
    VoteRequest,
    VoteResponse,
)
from spec.dledger.rounds import heartbeat_decision_time, heartbeat_latch_deadline
from spec.dledger.vote import handle_vote
from spec.steps import BOOT, CRASH, TICK, StepEvent, StepViolation, step_property, violation

# enum members as module constants: in CPython 3.11 reading ``Role.LEADER`` through its
# class costs six times a global's read, and a step reads several
_LEADER, _CANDIDATE, _FOLLOWER = Role.LEADER, Role.CANDIDATE, Role.FOLLOWER
_PASSED, _WAIT_TO_REVOTE = ParseResult.PASSED, ParseResult.WAIT_TO_REVOTE
_WAIT_TO_VOTE_NEXT = ParseResult.WAIT_TO_VOTE_NEXT
_COMPARE, _TRUNCATE, _APPEND = PushType.COMPARE, PushType.TRUNCATE, PushType.APPEND
_SUCCESS = ResponseCode.SUCCESS

PROCEDURES: dict[str, str] = {
    "handle_vote": "a vote request is answered, and the state changed, as handle_vote says",
    "handle_heartbeat": "a heartbeat is answered, and the state changed, as handle_heartbeat says",
    "handle_push": "a push is answered, and the log and commit index changed, as handle_push says",
    "parse_vote_result": "a candidate becomes leader exactly when its vote round passes",
    "candidate_action": "a candidate raises its term and opens vote rounds only as maintainAsCandidate allows",
    "decide_heartbeat_round": "a leader steps down exactly when its heartbeat round says so",
    "follower_timed_out": "a follower steps down only after a lease without its leader's heartbeat",
    "leader_commit_index": "a leader commits only what a quorum holds (of its own term in G2)",
    "next_push": "a leader pushes its own entries in its term, appending only on a matched prefix",
    "client_append": "a leader appends a client's entry at its end in its term; others change nothing",
    "persist": "what a step persists is the node's term, vote and log",
}

_STEP_DOWNS = frozenset({
    HeartbeatRoundOutcome.STEP_DOWN_HIGHER_TERM,
    HeartbeatRoundOutcome.STEP_DOWN_INCONSISTENT_LEADER,
    HeartbeatRoundOutcome.STEP_DOWN_LEASE_EXPIRED,
})
_INF = float("inf")
# what runs at a tick, by role: a change at a tick is charged to it
_MAINTAINER = {_CANDIDATE: "candidate_action", _FOLLOWER: "follower_timed_out",
               _LEADER: "decide_heartbeat_round"}
# more possible histories of one node than this are not kept (in practice: two or three)
MAX_HISTORIES = 16
_REPLIES = {VoteRequest: VoteResponse, HeartBeatRequest: HeartBeatResponse, PushEntryRequest: PushEntryResponse}
_TICK_SENDS = frozenset({PushEntryRequest, VoteRequest, HeartBeatRequest})  # what a tick may send


# ------------------------------------------------------------------ hidden state


@attrs.define(slots=True)
class _Round:
    """A vote round or a heartbeat round: the counts after each reply, and when it opened."""

    id: int
    term: int
    start: int
    counts: list  # counts[k]: after k replies (vote rounds: the self vote included in counts[0])
    times: list  # times[k - 1]: when reply k arrived
    answered: set
    latch: int | None = None  # the k at which the latch opened, if it did
    not_before: int = 0  # (vote rounds) the deadline is known to be at or after this instant

    def copy(self) -> "_Round":
        return _Round(self.id, self.term, self.start, list(self.counts), list(self.times), set(self.answered),
                      self.latch, self.not_before)


@attrs.define(slots=True)
class _Node:
    view: DLedgerView
    known_max: frozenset = frozenset({-1})  # possible knownMaxTermInGroup values
    need_increase: bool = False
    parse: frozenset = frozenset({_WAIT_TO_REVOTE})  # possible lastParseResult values
    next_vote_lo: float = -_INF  # lower bound of nextTimeToRequestVote
    vote: _Round | None = None
    hb: _Round | None = None
    last_leader_hb: int = NEVER
    last_succ: int = NEVER  # lastSuccHeartBeatTime
    # leader side, for the current leadership
    matched: dict = attrs.Factory(dict)  # follower -> largest index it was shown to hold
    frontier: dict = attrs.Factory(dict)  # follower -> largest index matched or sent on a matched prefix
    sent: dict = attrs.Factory(dict)  # follower -> {seq: push}
    # this step: the state the handler saw (after any round that ended before it was
    # closed), and a round decision the step must show (procedure, message) or None
    pre: Any = None
    forced: Any = None

    def key(self) -> tuple:
        """What tells two histories apart; equal keys are merged, keeping the laxer time bounds."""
        v, h = self.vote, self.hb
        return (None if v is None else (v.id, v.latch, len(v.counts)), self.parse, self.known_max,
                self.need_increase, None if h is None else (h.id, h.latch, len(h.counts)),
                self.last_succ, self.last_leader_hb)

    def copy(self) -> "_Node":
        v, h = self.vote, self.hb
        return _Node(self.view, self.known_max, self.need_increase, self.parse, self.next_vote_lo,
                     v.copy() if v else None, h.copy() if h else None, self.last_leader_hb, self.last_succ,
                     dict(self.matched), dict(self.frontier), {p: dict(x) for p, x in self.sent.items()},
                     self.pre, self.forced)


class _Expect:
    """The observable state a step should leave, built by applying the spec's effects."""

    __slots__ = ("role", "curr_term", "voted_for", "leader_id", "log", "committed_index", "before")

    def __init__(self, v: DLedgerView):
        self.role, self.curr_term, self.voted_for = v.role, v.curr_term, v.voted_for
        self.leader_id, self.log, self.committed_index = v.leader_id, v.log, v.committed_index
        self.before = v

    def diff(self, v: DLedgerView) -> list[str]:
        b = self.before
        if (self.role is v.role and self.curr_term == v.curr_term and self.voted_for == v.voted_for
                and self.leader_id == v.leader_id and self.committed_index == v.committed_index
                and (self.log is v.log or self.log == v.log)
                and (self.log is b.log and v.ledger_end_index == b.ledger_end_index
                     and v.ledger_end_term == b.ledger_end_term
                     or (v.ledger_end_index, v.ledger_end_term) == (len(self.log) - 1,
                                                                    self.log[-1].term if self.log else NO_TERM))):
            return []  # (the usual case, decided without building messages)
        out = [f"{name} {_show(getattr(v, name))} where the spec leaves {_show(getattr(self, name))}"
               for name in ("role", "curr_term", "voted_for", "leader_id", "committed_index")
               if getattr(self, name) != getattr(v, name)]
        if self.log != v.log:
            out.append(f"log {_show_log(v.log)} where the spec leaves {_show_log(self.log)}")
        end_term = self.log[-1].term if self.log else NO_TERM
        b = self.before
        unchanged = self.log is b.log and (v.ledger_end_index, v.ledger_end_term) == (b.ledger_end_index,
                                                                                     b.ledger_end_term)
        # (a ledger end that was already wrong before the step is not this step's doing)
        if not unchanged and (v.ledger_end_index, v.ledger_end_term) != (len(self.log) - 1, end_term):
            out.append(f"ledger end ({v.ledger_end_term}, {v.ledger_end_index}) where the spec leaves "
                       f"({end_term}, {len(self.log) - 1})")
        return out


def _show(x: Any) -> str:
    return x.value if isinstance(x, Role) else repr(x) if isinstance(x, str) else str(x)


def _show_log(log: tuple) -> str:
    if len(log) > 6:
        return f"[{len(log)} entries ... " + ", ".join(f"{e.index}:{e.term}" for e in log[-3:]) + "]"
    return "[" + ", ".join(f"{e.index}:{e.term}" for e in log) + "]"


def _show_payload(p: Any) -> str:
    if p is None:
        return "nothing"
    fields = ", ".join(f"{f.name}={_show(getattr(p, f.name))}" for f in attrs.fields(type(p))
                       if f.name != "entries") if attrs.has(type(p)) else repr(p)
    entries = getattr(p, "entries", None)
    if entries:
        fields += f", entries={_show_log(tuple(entries))}"
    return f"{type(p).__name__}({fields})"


# ------------------------------------------------------------------ the checker


class DLedgerSteps:
    """Judges every step of the nodes of one DLedger group (``peers``: every node id)."""

    def __init__(self, peers: Iterable[str], profile: Profile = DEFAULT_PROFILE, timing: Timing = DEFAULT_TIMING,
                 persist_expected: bool = True):
        self.peers = frozenset(peers)
        self.n = len(self.peers)
        self.profile = profile
        self.timing = timing
        self._vote_waits = vote_round_wait_range(timing)
        self._wait_first, self._wait_last = self._vote_waits[0], self._vote_waits[-1]
        # a node that hands its durable state over in each step (the reference) must do so
        # whenever its term, vote or log changes; one that says at its crash what survives
        # (an implementation behind the adapter protocol) is judged only on what it hands over
        self.persist_expected = persist_expected
        self.nodes: dict[str, list[_Node]] = {}  # node -> its possible histories
        self.judged: Counter = Counter()  # procedure -> steps judged by it
        self._tally: list[str] = []  # the procedures the history being judged ran in this step
        # derived values the spec gives for the same input each time: MemberView of a node's
        # latest view (node -> (view, member)), parse_vote_result of a round's counts
        self._members: dict[str, tuple] = {}
        self._parsed: dict = {}
        self._last_request: tuple | None = None  # (view, request, answer) of the last request decided
        self._others = {p: sorted(self.peers - {p}) for p in self.peers}  # node -> the peers it asks
        # what judges a step whose input is a message, by the message's type
        self._handlers = {VoteRequest: self._request, HeartBeatRequest: self._request,
                          PushEntryRequest: self._request, VoteResponse: self._vote_response,
                          HeartBeatResponse: self._heartbeat_response, PushEntryResponse: self._push_response,
                          ClientAppend: self._client_append}

    # ------------------------------------------------------------------ entry point

    def check(self, e: StepEvent) -> list[StepViolation]:
        """Judge one step (a ``StepEvent``, or any object with its fields: only read). Each
        node has one or a few possible histories of its hidden state (where timing leaves it
        open whether a round had ended); a step is allowed when it is allowed in one of them,
        and the histories that cannot explain it are dropped."""
        if e.input == CRASH:
            self.nodes.pop(e.node, None)
            return []
        histories = self.nodes.get(e.node)
        if histories is None or e.input == BOOT:
            self.nodes[e.node] = [_Node(e.view)]
            return []
        if len(histories) == 1:
            s = histories[0]
            if s.hb is None and s.vote is None:  # (no round open: nothing ended before this step)
                s.pre, s.forced = s.view, None
                ways = None
            else:
                ways = self._catch_up(s, e)
                s = ways[0] if len(ways) == 1 else None
            if s is not None:  # (the usual case: one history, one reading of the step)
                tally = self._tally = []
                out = self._judge(s, e)
                judged = self.judged
                for procedure in tally:  # (cheaper than Counter.update for the one or two of a step)
                    judged[procedure] += 1
                if s is not histories[0]:
                    self.nodes[e.node] = [s]
                return out
        alive, failed = [], None
        for history in histories:
            # (one history: already caught up above; several: each in turn, as it is judged)
            for s in ways if len(histories) == 1 else self._catch_up(history, e):
                self._tally = []
                out = self._judge(s, e)
                if not out:
                    alive.append((s, self._tally))
                elif failed is None:
                    failed = (s, out, self._tally)
        if len(alive) == 1:  # (the usual case: nothing to merge)
            self._count(alive[0][1])
            self.nodes[e.node] = [alive[0][0]]
            return []
        if alive:
            self._count(alive[0][1])
            kept: dict = {}
            for s, _ in alive:
                same = kept.setdefault(s.key(), s)
                if same is not s:  # one history for both, the laxer bounds of the two
                    same.next_vote_lo = min(same.next_vote_lo, s.next_vote_lo)
                    if same.vote is not None:
                        same.vote.not_before = min(same.vote.not_before, s.vote.not_before)
            self.nodes[e.node] = list(kept.values())[:MAX_HISTORIES]
            return []
        self._count(failed[2])
        self.nodes[e.node] = [failed[0]]  # go on from the spec's own reading of the step
        return failed[1]

    def _count(self, tally: list[str]) -> None:
        judged = self.judged
        for procedure in tally:  # (cheaper than Counter.update for the one or two of a step)
            judged[procedure] += 1

    def _judge(self, s: _Node, e: StepEvent) -> list[StepViolation]:
        """Judge the step on one history of the node's hidden state (``s``, updated in place)."""
        out: list[StepViolation] = []
        before, after = s.view, e.view
        if s.forced is not None and after.role is before.role and after.curr_term == before.curr_term:
            # a round ended before this step with a decision the node does not show
            procedure, what, expected = s.forced
            out.append(violation(procedure, e.node, what, expected, f"it stays {after.role.value}"))
            s.pre = before
        if e.input == TICK:
            self._tick(s, e, out)
        else:
            handler = self._handlers.get(type(e.payload))
            if handler is not None:  # (anything else is not a DLedger message: nothing to judge)
                handler(s, e, out)
        if after is not before:  # (an unchanged view starts or ends no leadership, moves no commit index)
            if after.role is _LEADER and (before.role is not _LEADER or before.curr_term != after.curr_term):
                self._start_leading(s, after)
            elif after.role is not _LEADER and before.role is _LEADER:
                self._stop_leading(s)
            if before.role is _LEADER and after.role is _LEADER and before.curr_term == after.curr_term:
                self._leader_commit(s, e, before, after, out)
        outputs = e.outputs
        if outputs and (len(outputs) > 1 or type(outputs[0].payload) is PushEntryRequest):
            self._pushes(s, e, after, out)
        if after is not before or e.persist is not None:  # (nothing changed and nothing persisted: allowed)
            self._persist(e, before, after, out)
        s.view, s.pre, s.forced = after, None, None
        return out

    # ------------------------------------------------------------------ rounds that end between steps

    def _passed(self, instant: float, e: StepEvent) -> bool:
        """Whether a wait ending at ``instant`` is over when the node is activated by ``e``:
        replies due at an instant come before the waiting thread wakes, a tick at it wakes it."""
        return e.time > instant or (e.input == TICK and e.time == instant)

    def _catch_up(self, s: _Node, e: StepEvent) -> list[_Node]:
        """The node's possible histories up to the start of this step.

        A round that ended (its latch timed out, its decision is due) is closed, with its
        effects, before the step's input is handled. A heartbeat round's decision instant
        is known; a vote round's deadline is random within its range, so the round may or
        may not be over yet: each possibility is judged, the first that explains the step
        wins (still open first: that keeps the others for later)."""
        s.pre, s.forced = s.view, None
        if s.hb is not None:
            instant = self._hb_instant(s.hb)
            if instant is not None and self._passed(instant, e):
                self._decide_hb(s, instant)
        r = s.vote
        if r is None or r.latch is not None:
            return [s]
        lo, hi = self._vote_deadline(r)
        latest = e.time if e.input == TICK else e.time - 1
        if latest < lo:  # (the round cannot have ended yet)
            return [s]
        if hi < latest:
            latest = hi
        ways = self._vote_closes(r, latest)
        passed = [w for w in ways if w[0].result is _PASSED]
        other = [w for w in ways if w[0].result is not _PASSED]
        branches = []
        if latest < hi:  # it may still be open
            still = s.copy()
            still.vote.not_before = latest + 1
            branches.append(still)
        # a round whose parse raises knownMaxTerm makes a follower a candidate: a history each
        groups = [other]
        if s.pre.role is not _CANDIDATE:
            raising = [w for w in other if any(type(x) is fx.BecomeCandidate for x in w[0].effects)]
            groups = [g for g in (raising, [w for w in other if w not in raising]) if g]
        for group in groups if other else ():
            closed = s if not passed and group is groups[-1] else s.copy()  # (s itself: its last use)
            x = _Expect(closed.pre)
            self._apply(closed, x, group[0][0].effects, group[0][1])
            self._close_vote(closed, group)
            if x.role is not closed.pre.role:
                closed.pre = attrs.evolve(closed.pre, role=x.role, leader_id=x.leader_id)
            branches.append(closed)
        if passed:
            lead = s
            self._close_vote(lead, passed)
            lead.pre = attrs.evolve(lead.view, role=_LEADER, leader_id=lead.view.node_id)
            if latest >= hi and not other:
                lead.forced = ("parse_vote_result", f"{e.node}'s vote round of term {r.term} ended by "
                               f"{latest}", f"PASSED ({_counts(r.counts[-1])}): the node becomes leader")
            branches.append(lead)
        return branches

    def _vote_deadline(self, r: _Round) -> tuple[int, int]:
        """The instants a vote round without an open latch can end at: 2000 (3000 in
        release-0.1) + rand[0, maxVoteIntervalMs) after it started."""
        first = r.start + self._wait_first
        return (first if first >= r.not_before else r.not_before), r.start + self._wait_last

    def _vote_closes(self, r: _Round, latest: int) -> list[tuple[Any, int, int]]:
        """Every way the round can have ended by ``latest``: (ParseDecision, earliest, latest instant);
        the replies counted are those that arrived by the instant."""
        lo, _ = self._vote_deadline(r)
        ways = []
        for k in range(len(r.counts)):
            t_k = r.start if k == 0 else r.times[k - 1]
            nxt = r.times[k] - 1 if k < len(r.times) else latest
            a, b = max(lo, t_k), min(latest, nxt)
            if a <= b:
                ways.append((self._parse(r.counts[k]), a, b))
        return ways

    def _close_vote(self, s: _Node, decisions: list) -> None:
        """Fold the possible outcomes [(ParseDecision, earliest, latest)] of the round into the hidden state."""
        results, known, lows = set(), set(), []
        for d, lo, hi in decisions:
            results.add(d.result)
            raised = [e.term for e in d.effects if type(e) is fx.BecomeCandidate]
            known |= {reduce(known_max_term_after_candidate, raised, k) for k in s.known_max}
            # the earliest nextTimeToRequestVote: the round ending at its earliest, the smallest draw
            lows.append(next_time_after_parse(d, s.next_vote_lo, next_vote_time(lo, 0, self.timing), self.timing))
        s.parse, s.known_max, s.next_vote_lo = frozenset(results), frozenset(known), min(lows)
        s.vote = None

    def decides_at(self, node: str, t: int) -> bool:
        """Whether a heartbeat round of ``node`` is decided at ``t`` in one of its
        histories: a tick then must be judged even if it shows nothing, since a reply
        of the same instant counts only if it came before the tick."""
        return any(s.hb is not None and self._hb_instant(s.hb) == t for s in self.nodes.get(node, ()))

    def _hb_instant(self, r: _Round) -> int | None:
        """When the leader decides the round: heartBeatResultWait (0.3.2+: 10 ms, before: 0)
        after its latch opened at a reply or timed out (heartBeatTimeIntervalMs - that wait)."""
        woke = heartbeat_latch_deadline(r.start, self.timing)
        if r.latch is not None and r.latch > 0 and r.times[r.latch - 1] < woke:
            woke = r.times[r.latch - 1]
        return heartbeat_decision_time(woke, self.timing)

    def _decide_hb(self, s: _Node, instant: int) -> None:
        """The round's decision at ``instant``, over the replies that arrived by then."""
        r, s.hb = s.hb, None
        k = sum(1 for x in r.times if x <= instant)
        d = decide_heartbeat_round(r.counts[k], self.n, instant, s.last_succ, self.timing, self.profile)
        if d.outcome is HeartbeatRoundOutcome.QUORUM_ACK:
            s.last_succ = instant
        x = _Expect(s.pre)
        self._apply(s, x, d.effects, instant)
        if x.role is not s.pre.role:
            s.pre = attrs.evolve(s.pre, role=x.role, leader_id=x.leader_id)
            s.forced = ("decide_heartbeat_round", f"{s.view.node_id}'s heartbeat round of term {r.term} "
                        f"(opened at {r.start}) decided at {instant}",
                        f"{d.outcome.value} ({_counts(r.counts[k])}): the leader steps down")
        self._tally.append("decide_heartbeat_round")

    # ------------------------------------------------------------------ helpers

    def _member(self, v: DLedgerView) -> MemberView:
        known = self._members.get(v.node_id)
        if known is not None and known[0] is v:
            return known[1]
        member = MemberView(v.node_id, self.peers, v.curr_term, v.voted_for, v.leader_id, v.role,
                            v.ledger_end_term, v.ledger_end_index, False)
        self._members[v.node_id] = (v, member)
        return member

    def _asked(self, node: str) -> list[str]:
        """The peers a round of ``node`` asks: every other member."""
        others = self._others.get(node)
        return others if others is not None else sorted(self.peers - {node})

    def _parse(self, counts: Any) -> Any:
        """parse_vote_result of a round's counts in this group and profile (a round's counts
        are parsed again at each step that may close it: kept, a few hundred at most)."""
        parsed = self._parsed.get(counts)
        if parsed is None:
            if len(self._parsed) >= 4096:
                self._parsed.clear()
            parsed = self._parsed[counts] = parse_vote_result(counts, self.n, self.profile)
        return parsed

    def _apply(self, s: _Node, x: _Expect, effects: tuple, t: int) -> None:
        """Apply a decision's effects to the expected state and to the hidden state."""
        for e in effects:
            kind = type(e)
            if kind is fx.SetVotedFor:
                x.voted_for = e.candidate
            elif kind is fx.BecomeCandidate:
                if may_become_candidate(x.curr_term, e.term):
                    x.role, x.leader_id = _CANDIDATE, None
                    s.known_max = frozenset(known_max_term_after_candidate(k, e.term) for k in s.known_max)
            elif kind is fx.IncreaseTermImmediately:
                s.need_increase = True
            elif kind is fx.BecomeFollower:
                if may_become_follower(x.curr_term, e.term):
                    x.role, x.leader_id = _FOLLOWER, e.leader
                    s.last_leader_hb = t
                    if s.vote is None:  # (with a round still open, its close sets lastParseResult afterwards)
                        s.parse = frozenset(parse_result_after_becoming_follower(p, self.profile) for p in s.parse)
            elif kind is fx.BecomeLeader:
                if may_become_leader(x.curr_term, e.term):
                    x.role, x.leader_id = _LEADER, s.view.node_id
            elif kind is fx.RefreshLeaderHeartbeat:
                s.last_leader_hb = t
            elif kind is fx.TruncateLog:
                x.log = x.log[: e.from_index]
            elif kind is fx.AppendEntries:
                x.log = x.log + tuple(e.entries)
            elif kind is fx.AdvanceCommitIndex:
                if e.index > x.committed_index:
                    x.committed_index = e.index
            elif kind is fx.ClampCommitIndex:
                if e.index < x.committed_index:
                    x.committed_index = e.index

    def _reply(self, e: StepEvent, kind: type) -> tuple[Any, list]:
        """The step's reply to its input (None: none), and the other messages it sent."""
        reply, others, more = None, [], []
        for o in e.outputs:
            if o.dst == e.src and type(o.payload) is kind:
                if reply is None:
                    reply = o.payload
                else:
                    more.append(o)
            else:
                others.append(o)
        return reply, others + more

    def _unexpected(self, e: StepEvent, others: list, procedure: str, out: list, allowed=(PushEntryRequest,)) -> None:
        for o in others:
            if type(o.payload) not in allowed:
                out.append(violation(procedure, e.node, f"{e.node} sent {_show_payload(o.payload)} to {o.dst}",
                                     "no such message from this step", "it was sent"))

    # ------------------------------------------------------------------ messages

    def _request(self, s: _Node, e: StepEvent, out: list) -> None:
        before, after, request = s.pre, e.view, e.payload
        kind = type(request)
        last = self._last_request
        if last is not None and last[0] is before and last[1] is request:
            procedure, d, expected_reply = last[2]
        else:
            procedure, d, expected_reply = self._decide_request(before, request, kind)
        row = d.row
        self._tally.append(procedure)
        outputs = e.outputs
        if len(outputs) == 1 and outputs[0].dst == e.src and type(outputs[0].payload) is _REPLIES[kind]:
            reply, others = outputs[0].payload, ()  # (the usual case: the reply alone)
        else:
            reply, others = self._reply(e, _REPLIES[kind])
        if not reply == expected_reply:
            out.append(violation(procedure, e.node, f"{e.node} handled {_show_payload(request)} from {e.src}",
                                 f"reply {_show_payload(expected_reply)} ({self.profile.name}, row {row})",
                                 f"reply {_show_payload(reply)}"))
        if d.effects or after is not before:  # (no effect and an unchanged view: no change)
            x = _Expect(before)
            self._apply(s, x, d.effects, e.time)
            diff = x.diff(after)
            if diff:
                out.append(violation(procedure, e.node, f"{e.node} handled {_show_payload(request)} from {e.src}",
                                     f"state after as {self.profile.name} row {row} leaves it", "; ".join(diff)))
        if others:
            self._unexpected(e, others, procedure, out)

    def _decide_request(self, before: DLedgerView, request: Any, kind: type) -> tuple[str, Any, Any]:
        """(procedure, the spec's decision, the reply it makes) for a request to a node in
        state ``before``; the last answer is kept (``_last_request``), for the other histories
        of the same step (the same view and request objects: the same answer)."""
        if kind is VoteRequest:
            d = handle_vote(self._member(before), request, False, self.profile)
            answer: tuple = ("handle_vote", d, VoteResponse(d.reply_term, d.result, request.round))
        elif kind is HeartBeatRequest:
            d = handle_heartbeat(self._member(before), request)
            answer = ("handle_heartbeat", d, HeartBeatResponse(d.reply_term, d.code, request.round))
        else:
            d = handle_push(self._member(before), request, before.log, before.committed_index, self.profile)
            answer = ("handle_push", d, d.response)
        self._last_request = (before, request, answer)
        return answer

    def _vote_response(self, s: _Node, e: StepEvent, out: list) -> None:
        pre, after, reply, r = s.pre, e.view, e.payload, s.vote
        decided = None
        if r is not None and reply.round == r.id and e.src not in r.answered and r.latch is None:
            self._tally.append("parse_vote_result")
            r.answered.add(e.src)
            r.counts.append(count_vote(r.counts[-1], reply))
            r.times.append(e.time)
            if vote_round_closed(r.counts[-1], self.n):  # the latch opens: decided in this step
                r.latch = len(r.counts) - 1
                decided = self._parse(r.counts[-1])
                self._close_vote(s, [(decided, e.time, e.time)])
        if decided is not None or after is not pre:  # (no decision and an unchanged view: no change)
            x = _Expect(pre)
            if decided is not None:
                self._apply(s, x, decided.effects, e.time)
            diff = x.diff(after)
            if diff:
                expected = (f"{decided.result.value} ({_counts(r.counts[-1])}) leaves it" if decided is not None
                            else "no change (the reply closes no round)")
                out.append(violation("parse_vote_result", e.node,
                                     f"{e.node} received {_show_payload(reply)} from {e.src}", expected, "; ".join(diff)))
        if e.outputs:
            self._unexpected(e, e.outputs, "parse_vote_result", out)

    def _heartbeat_response(self, s: _Node, e: StepEvent, out: list) -> None:
        r, reply = s.hb, e.payload
        if r is not None and reply.round == r.id and e.src not in r.answered:
            r.answered.add(e.src)
            r.counts.append(count_heartbeat(r.counts[-1], reply))
            r.times.append(e.time)
            if r.latch is None and heartbeat_latch_open(r.counts[-1], self.n):
                r.latch = len(r.counts) - 1
                # this reply woke the waiting thread and no sleep follows (before 0.3.2): decided
                # now. A latch that had timed out wakes the thread by itself: its decision, even
                # at this very instant, is the tick's, after the replies of the instant (seed
                # 15591 of the default search from 15000, stream b: the reference stepped down
                # at its tick, the checker had decided within the reply before it)
                woke_by_reply = e.time < heartbeat_latch_deadline(r.start, self.timing)
                if woke_by_reply and self._hb_instant(r) <= e.time:
                    self._decide_hb(s, e.time)
                    if s.forced is not None and e.view.role is not s.view.role:
                        s.forced = None
        if e.view is not s.pre or e.outputs:  # (else nothing changed and nothing was sent)
            self._frame(s, e, "decide_heartbeat_round", out)

    def _push_response(self, s: _Node, e: StepEvent, out: list) -> None:
        before, response = s.pre, e.payload
        if before.role is _LEADER:
            sent = s.sent.get(e.src)
            request = sent.pop(response.seq, None) if sent is not None else None
            if request is not None and response.code is _SUCCESS and response.type is request.type:
                if request.type is _COMPARE:
                    shown = request.prev_index
                elif request.type is _TRUNCATE:
                    shown = response.end_index
                elif request.type is _APPEND:
                    shown = request.entries[-1].index
                else:
                    shown = None
                if shown is not None:
                    s.matched[e.src] = max(s.matched.get(e.src, -1), shown)
                    s.frontier[e.src] = max(s.frontier.get(e.src, -2), shown)
        if e.view is not s.pre or e.outputs:  # (else nothing changed and nothing was sent)
            self._frame(s, e, "leader_commit_index", out, commit_may_move=True)

    def _client_append(self, s: _Node, e: StepEvent, out: list) -> None:
        before, after = s.pre, e.view
        self._tally.append("client_append")
        x = _Expect(before)
        entry = client_entry(self._member(before), before.log, e.payload.body)
        if entry is not None:
            x.log = before.log + (entry,)
            x.committed_index = after.committed_index  # judged by the commit rule
        diff = x.diff(after)
        if diff:
            out.append(violation("client_append", e.node, f"{e.node} ({before.role.value}) received {_show_payload(e.payload)}",
                                 "the entry appended at the end in the leader's term" if before.role is _LEADER
                                 else "nothing changes on a node that does not lead", "; ".join(diff)))
        if e.outputs:
            self._unexpected(e, e.outputs, "client_append", out)

    def _frame(self, s: _Node, e: StepEvent, procedure: str, out: list, commit_may_move=False) -> None:
        """A step whose only visible effect may be a leader's commit index: nothing else changes."""
        if e.view is not s.pre:  # (an unchanged view is no change)
            x = _Expect(s.pre)
            if commit_may_move and s.pre.role is _LEADER:
                x.committed_index = e.view.committed_index
            diff = x.diff(e.view)
            if diff:
                out.append(violation(procedure, e.node, f"{e.node} received {_show_payload(e.payload)} from {e.src}",
                                     "no change", "; ".join(diff)))
        if e.outputs:
            self._unexpected(e, e.outputs, procedure, out)

    # ------------------------------------------------------------------ ticks

    def _tick(self, s: _Node, e: StepEvent, out: list) -> None:
        before, after = s.pre, e.view
        sends = {type(o.payload) for o in e.outputs}
        if before.role is _CANDIDATE:
            if VoteRequest in sends or (self.n == 1 and (after.curr_term != before.curr_term
                                                       or after.role is _LEADER)):
                self._campaign(s, e, out)
            elif after.curr_term != before.curr_term:
                self._increase_term(s, e, out)
            elif after.role is _LEADER:
                self._tally.append("parse_vote_result")
                out.append(violation("parse_vote_result", e.node, f"{e.node} became leader of term {after.curr_term}",
                                     "a vote round of that term that passed (a quorum accepted)",
                                     "no round that passed" if s.vote is None else
                                     f"the round still open ({_counts(s.vote.counts[-1])})"))
            else:
                self._tick_frame(s, e, out)
        elif before.role is _FOLLOWER:
            if after.role is _CANDIDATE:
                self._follower_timeout(s, e, out)
            else:
                self._tick_frame(s, e, out)
        else:
            if HeartBeatRequest in sends:
                self._heartbeat_round(s, e, out)
            elif after.role is not _LEADER:
                self._tally.append("decide_heartbeat_round")
                out.append(violation("decide_heartbeat_round", e.node, f"{e.node} stepped down as leader of term "
                                     f"{before.curr_term} at {e.time}", "a heartbeat round whose decision is a step-down",
                                     "no heartbeat round decided" if s.hb is None else
                                     f"the round opened at {s.hb.start} undecided until {self._hb_instant(s.hb)}"))
            else:
                self._tick_frame(s, e, out, commit=True)
        if not sends <= _TICK_SENDS:
            self._unexpected(e, [o for o in e.outputs if type(o.payload) not in _TICK_SENDS],
                             _MAINTAINER[before.role], out)
        if VoteRequest in sends and before.role is not _CANDIDATE:
            self._unexpected(e, [o for o in e.outputs if type(o.payload) is VoteRequest], "candidate_action", out,
                             allowed=())
        if HeartBeatRequest in sends and before.role is not _LEADER:
            self._unexpected(e, [o for o in e.outputs if type(o.payload) is HeartBeatRequest],
                             "decide_heartbeat_round", out, allowed=())

    def _tick_frame(self, s: _Node, e: StepEvent, out: list, role=None, leader_id=None, commit=False) -> None:
        """Nothing changes at a tick but what the procedure of the node's role did."""
        if role is None and e.view is s.pre:  # (an unchanged view is no change)
            return
        x = _Expect(s.pre)
        if role is not None:
            x.role, x.leader_id = role, leader_id
        if commit:
            x.committed_index = e.view.committed_index  # the leader's commit rule judges it
        diff = x.diff(e.view)
        if diff:
            out.append(violation(_MAINTAINER[s.pre.role], e.node, f"{e.node} ({s.pre.role.value}) at a tick",
                                 "no change but what a procedure of its role allows", "; ".join(diff)))

    def _campaign(self, s: _Node, e: StepEvent, out: list) -> None:
        before, after, t = s.pre, e.view, e.time
        self._tally.append("candidate_action")
        what = f"{e.node} opened a vote round at term {after.curr_term}"
        if s.need_increase:
            out.append(violation("candidate_action", e.node, what,
                                 f"INCREASE_TERM_ONLY: needIncreaseTermImmediately is set, so the term is raised "
                                 f"to {_terms(before.curr_term, s.known_max)} without a vote round",
                                 f"a vote round at term {after.curr_term}"))
        self._blocked(s, e, what, out)
        parse, next_round = s.parse, _WAIT_TO_VOTE_NEXT
        # (the same term is allowed by any lastParseResult but WAIT_TO_VOTE_NEXT: asked first)
        if not (after.curr_term == before.curr_term and len(parse) > (next_round in parse)):
            allowed = set()
            if next_round in parse:
                allowed |= {next_term(before.curr_term, k) for k in s.known_max}
            if parse - {next_round}:
                allowed.add(before.curr_term)
        else:
            allowed = (before.curr_term,)
        if after.curr_term not in allowed:
            out.append(violation("candidate_action", e.node, what,
                                 f"a round at term {' or '.join(map(str, sorted(allowed)))} (lastParseResult "
                                 f"{' or '.join(sorted(p.value for p in s.parse))}, currTerm {before.curr_term})",
                                 f"term {after.curr_term}"))
        if t < s.next_vote_lo:
            out.append(violation("candidate_action", e.node, what,
                                 f"no round before nextTimeToRequestVote (at least {int(s.next_vote_lo)})",
                                 f"a round at {t}"))
        requests = [o for o in e.outputs if type(o.payload) is VoteRequest]
        ids = {o.payload.round for o in requests}
        rid = next(iter(ids)) if len(ids) == 1 else 0
        wanted = VoteRequest(after.curr_term, e.node, after.ledger_end_term, after.ledger_end_index, rid)
        if not _all_are(requests, wanted) or sorted(o.dst for o in requests) != self._asked(e.node):
            out.append(violation("candidate_action", e.node, what,
                                 f"{_show_payload(wanted)} to each of {', '.join(sorted(self.peers - {e.node}))}",
                                 ", ".join(f"{_show_payload(o.payload)} to {o.dst}" for o in requests) or "no request"))
        new_term = after.curr_term != before.curr_term
        if new_term:
            s.parse = frozenset({_WAIT_TO_REVOTE})
        member = MemberView(e.node, self.peers, after.curr_term, None if new_term else before.voted_for, None,
                            _CANDIDATE, after.ledger_end_term, after.ledger_end_index, False)
        own = handle_vote(member, wanted, True, self.profile)  # (its own vote: the request it sends)
        x = _Expect(before)
        x.curr_term, x.voted_for, x.leader_id, x.role = after.curr_term, member.voted_for, None, _CANDIDATE
        self._apply(s, x, own.effects, t)
        counts = count_vote(start_vote_counts(after.curr_term), VoteResponse(own.reply_term, own.result, rid))
        s.vote = _Round(rid, after.curr_term, t, [counts], [], set())
        if vote_round_closed(counts, self.n):
            s.vote.latch = 0
            d = self._parse(counts)
            if d.result is _PASSED:
                x.role, x.leader_id = _LEADER, e.node
                s.vote, s.parse = None, frozenset({_PASSED})
            else:
                self._close_vote(s, [(d, t, t)])
        diff = x.diff(after)
        if diff:
            out.append(violation("candidate_action", e.node, what,
                                 f"the state after a round opens (its own vote: {own.result.value})", "; ".join(diff)))

    def _increase_term(self, s: _Node, e: StepEvent, out: list) -> None:
        before, after, t = s.pre, e.view, e.time
        self._tally.append("candidate_action")
        what = f"{e.node} raised its term from {before.curr_term} to {after.curr_term} without a vote round"
        self._blocked(s, e, what, out)
        allowed = {next_term(before.curr_term, k) for k in s.known_max}
        if not s.need_increase:
            out.append(violation("candidate_action", e.node, what,
                                 "a term raised only with a vote round (needIncreaseTermImmediately is not set)",
                                 "the term raised alone"))
        elif after.curr_term not in allowed:
            out.append(violation("candidate_action", e.node, what, f"nextTerm(): {_terms(before.curr_term, s.known_max)}",
                                 f"term {after.curr_term}"))
        x = _Expect(before)
        x.curr_term, x.voted_for = after.curr_term, None
        diff = x.diff(after)
        if diff:
            out.append(violation("candidate_action", e.node, what, "only the term raised and the vote cleared",
                                 "; ".join(diff)))
        s.need_increase = False
        s.parse = frozenset({_WAIT_TO_REVOTE})
        s.next_vote_lo = next_vote_time(t, 0, self.timing)  # its earliest (the smallest draw)

    def _blocked(self, s: _Node, e: StepEvent, what: str, out: list) -> None:
        """The maintainer waits on an open vote round: nothing it does happens before the round ends."""
        if s.vote is None:
            return
        r = s.vote
        out.append(violation("candidate_action", e.node, what,
                             f"nothing before the vote round of term {r.term} (opened at {r.start}) ends (its latch "
                             f"is shut and its deadline is {self._vote_deadline(r)[0]} or later)", f"this at {e.time}"))
        self._close_vote(s, [(self._parse(r.counts[-1]), e.time, e.time)])

    def _follower_timeout(self, s: _Node, e: StepEvent, out: list) -> None:
        before, t = s.pre, e.time
        self._tally.append("follower_timed_out")
        lease = self.timing.lease_ms
        since = elapsed(t, s.last_leader_hb)
        if not follower_timed_out(t, s.last_leader_hb, self.timing):
            out.append(violation("follower_timed_out", e.node, f"{e.node} stepped down as follower of {before.leader_id}",
                                 f"no step-down within {lease} ms of its leader's last heartbeat",
                                 f"a step-down {since} ms after it"))
        self._tick_frame(s, e, out, role=_CANDIDATE)

    # ------------------------------------------------------------------ heartbeat rounds

    def _heartbeat_round(self, s: _Node, e: StepEvent, out: list) -> None:
        after, t = e.view, e.time
        self._tally.append("decide_heartbeat_round")
        if s.hb is not None:
            out.append(violation("decide_heartbeat_round", e.node,
                                 f"{e.node} opened a heartbeat round of term {after.curr_term} at {t}",
                                 f"no new round before the last one (opened at {s.hb.start}) is decided "
                                 f"(at {self._hb_instant(s.hb)})", "a new round"))
        requests = [o for o in e.outputs if type(o.payload) is HeartBeatRequest]
        ids = {o.payload.round for o in requests}
        rid = next(iter(ids)) if len(ids) == 1 else 0
        wanted = HeartBeatRequest(after.curr_term, e.node, rid)
        if not _all_are(requests, wanted) or sorted(o.dst for o in requests) != self._asked(e.node):
            out.append(violation("decide_heartbeat_round", e.node, f"{e.node} sent a heartbeat round",
                                 f"{_show_payload(wanted)} to each of {', '.join(sorted(self.peers - {e.node}))}",
                                 ", ".join(f"{_show_payload(o.payload)} to {o.dst}" for o in requests)))
        s.hb = _Round(rid, after.curr_term, t, [start_heartbeat_counts(after.curr_term)], [], set())
        self._tick_frame(s, e, out, commit=True)

    # ------------------------------------------------------------------ leading

    def _start_leading(self, s: _Node, v: DLedgerView) -> None:
        s.matched = {p: -1 for p in self.peers if p != v.node_id}
        s.frontier = {p: -2 for p in self.peers if p != v.node_id}
        s.sent = {p: {} for p in self.peers if p != v.node_id}

    def _stop_leading(self, s: _Node) -> None:
        # (a heartbeat round still open is decided at its instant all the same)
        s.matched, s.frontier, s.sent = {}, {}, {}

    def _leader_commit(self, s: _Node, e: StepEvent, before: DLedgerView, after: DLedgerView, out: list) -> None:
        old, new = before.committed_index, after.committed_index
        if new == old:
            return
        self._tally.append("leader_commit_index")
        what = f"leader {e.node} of term {after.curr_term} moved its commit index from {old} to {new}"
        if new < old:
            out.append(violation("leader_commit_index", e.node, what, "a leader's commit index never moves back",
                                 f"{new}"))
            return
        matches = [len(after.log) - 1] + [s.matched.get(p, -1) for p in sorted(self.peers) if p != e.node]
        quorum = quorum_match_index(matches)
        if new > quorum:
            out.append(violation("leader_commit_index", e.node, what,
                                 f"at most {quorum}, the index a quorum holds (as the followers told it: "
                                 f"{matches[1:]}, its own end {matches[0]})", f"{new}"))
        elif self.profile.log_generation == "G2" and 0 <= new < len(after.log) and after.log[new].term != after.curr_term:
            out.append(violation("leader_commit_index", e.node, what,
                                 f"a commit only by counting replicas of an entry of term {after.curr_term} "
                                 f"({self.profile.name}, G2)", f"entry {new} of term {after.log[new].term} committed"))

    def _pushes(self, s: _Node, e: StepEvent, after: DLedgerView, out: list) -> None:
        pushes = [o for o in e.outputs if type(o.payload) is PushEntryRequest]
        if not pushes:
            return
        self._tally.append("next_push")
        if after.role is not _LEADER:
            for o in pushes:
                out.append(violation("next_push", e.node, f"{e.node} ({after.role.value}) pushed to {o.dst}",
                                     "pushes only from the leader", _show_payload(o.payload)))
            return
        log = after.log
        for o in pushes:
            p, peer = o.payload, o.dst
            problem = self._push_problem(s, p, peer, after)
            if problem is not None:
                out.append(violation("next_push", e.node, f"leader {e.node} of term {after.curr_term} sent "
                                     f"{_show_payload(p)} to {peer} (its log {_show_log(log)})", problem[0], problem[1]))
            if peer in s.sent:
                s.sent[peer][p.seq] = p
                if p.type is _APPEND and p.entries and p.prev_index <= s.frontier.get(peer, -2):
                    s.frontier[peer] = max(s.frontier[peer], p.entries[-1].index)
                elif p.type is _TRUNCATE and (p.prev_index == 0 or p.prev_index - 1 <= s.frontier.get(peer, -2)):
                    s.frontier[peer] = max(s.frontier[peer], p.prev_index - 1 + len(p.entries))

    def _push_problem(self, s: _Node, p: PushEntryRequest, peer: str, v: DLedgerView) -> tuple[str, str] | None:
        log, end = v.log, len(v.log) - 1
        if peer not in self.peers or peer == v.node_id:
            return "pushes only to the other members", f"a push to {peer}"
        if p.term != v.curr_term or p.leader != v.node_id:
            return f"term {v.curr_term} and leader {v.node_id}", f"term {p.term} and leader {p.leader}"
        if p.commit_index > v.committed_index:
            return f"a commit index of at most its own ({v.committed_index})", f"{p.commit_index}"
        if p.type is _COMPARE:
            want = log[p.prev_index].term if 0 <= p.prev_index <= end else NO_TERM
            if not -1 <= p.prev_index <= end or p.prev_term != want or p.entries:
                return f"a compare at an index of its log with that entry's term ({want})", \
                    f"prev ({p.prev_index}, {p.prev_term}) with {len(p.entries)} entries"
        elif p.type is _TRUNCATE:
            if not 0 <= p.prev_index <= end + 1 or tuple(p.entries) != log[p.prev_index: p.prev_index + len(p.entries)]:
                return "a truncation at an index of its log, carrying its own entries", \
                    f"truncate at {p.prev_index} with {_show_log(tuple(p.entries))}"
            if p.prev_index > 0 and p.prev_index - 1 > s.frontier.get(peer, -2):
                return f"a truncation only above an index the follower was shown to match " \
                       f"(up to {s.frontier.get(peer, -2)})", f"truncate at {p.prev_index}"
        elif p.type is _APPEND:
            first = p.prev_index + 1
            if not p.entries or tuple(p.entries) != log[first: first + len(p.entries)] or first < 0:
                return "entries of its own log, from prev_index + 1", f"{_show_log(tuple(p.entries))} after {p.prev_index}"
            if p.prev_index > s.frontier.get(peer, -2):
                matched = s.frontier.get(peer, -2)
                return (f"an append only after a prefix the follower was shown to match "
                        f"({'none yet' if matched < -1 else f'up to {matched}'})", f"an append after {p.prev_index}")
        elif p.entries:
            return "a commit push without entries", f"{len(p.entries)} entries"
        return None

    # ------------------------------------------------------------------ persistence

    def _persist(self, e: StepEvent, before: DLedgerView, after: DLedgerView, out: list) -> None:
        p = e.persist
        if p is None:
            if self.persist_expected and (after.curr_term != before.curr_term or after.voted_for != before.voted_for
                                          or (after.log is not before.log and after.log != before.log)):
                out.append(violation("persist", e.node, f"{e.node} changed its term, vote or log",
                                     f"(term {after.curr_term}, vote {after.voted_for}, log {_show_log(after.log)}) "
                                     f"persisted before sending", "nothing persisted"))
            return
        written = _durable(p)
        if written is not None and written != (after.curr_term, after.voted_for, after.log):
            out.append(violation("persist", e.node, f"{e.node} persisted its state",
                                 f"term {after.curr_term}, vote {after.voted_for}, log {_show_log(after.log)}",
                                 f"term {written[0]}, vote {written[1]}, log {_show_log(written[2])}"))


def _durable(p: Any) -> tuple | None:
    """(term, vote, log) of a persisted DLedger state, if it is one (a record or its JSON object)."""
    if isinstance(p, dict):
        if not {"curr_term", "voted_for", "log"} <= p.keys():
            return None
        log = p["log"]
        try:
            if not (isinstance(log, tuple) and all(type(e) is Entry for e in log[-1:])):
                log = tuple(e if isinstance(e, Entry) else Entry(e["index"], e["term"], e.get("body", ""))
                            for e in log)
        except (TypeError, KeyError):
            return None
        return p["curr_term"], p["voted_for"], log
    try:
        return p.curr_term, p.voted_for, tuple(p.log)
    except AttributeError:
        return None


def _all_are(sent: list, wanted: Any) -> bool:
    """Whether every message sent carries ``wanted``."""
    for o in sent:
        if not o.payload == wanted:
            return False
    return True


def _terms(curr: int, known: frozenset) -> str:
    return " or ".join(str(t) for t in sorted({next_term(curr, k) for k in known}))


def _counts(c: Any) -> str:
    return ", ".join(f"{f.name} {getattr(c, f.name)}" for f in attrs.fields(type(c)) if f.name != "term")


PROPERTIES: tuple[str, ...] = tuple(step_property(p) for p in PROCEDURES)
