"""The reference DLedger node keeps the real releases' time.

Every round recorded from a real build (tests/transcripts/dledger, docs/dledger.md) is
replayed through a ``DLedgerNode`` of the release's profile: the node is put in the
recorded state, ticked at the instant the maintainer runs, handed each reply as a
message at the instant it arrives, and ticked once more at the instant the real
round returned. The node must have decided what the real elector decided, stamped with
the same times, and be due to run its maintainer when the real one ran again. This is
the guard of the node's and the simulator's timing model: whatever changes how time is
kept (deadline scheduling included) must keep these rounds.

Not replayed: rounds where a request fails (the simulator's network loses messages, it
does not report failed requests, docs/dledger.md "Network errors") and rounds of a
leadership transferee (the reference node never transfers leadership); the transcripts also
hold candidate rounds asked of a node in another role, which a node never runs.
"""
import json
from pathlib import Path

import pytest

from adapters.jvm_dledger import MAINTAINER_BEAT_CASES, DLedgerElectorServer
from conformance.transcript import load
from reference.dledger_node import DLedgerDurable, DLedgerNode
from reference.node_api import Message
from spec.dledger import effects as fx
from spec.dledger.candidate import VOTE_INTERVAL, VOTE_WAIT
from spec.dledger.profiles import PROFILES
from spec.dledger.member_state import MemberView
from spec.dledger.records import (
    Entry,
    HeartBeatRequest,
    HeartBeatResponse,
    ResponseCode,
    Role,
    VoteRequest,
    VoteResponse,
)
from spec.dledger.heartbeat import follower_timeout_at, heartbeat_due_at
from spec.dledger.rounds import (
    DrawUse,
    HeartbeatReply,
    RoundDraws,
    maintainer_run_at_or_after,
    maintainer_run_at_or_before,
    next_maintainer_run,
)

NOW = 1_000_000

TRANSCRIPTS = sorted((Path(__file__).parents[1] / "transcripts" / "dledger").glob("rounds-*.jsonl.gz"))


def _node(member, profile, now, draws=None, timing=None):
    used: list[DrawUse] = []
    draws = draws or RoundDraws()

    def draw(bound: int) -> int:
        site = VOTE_WAIT if bound == profile.timing.max_vote_interval_ms else VOTE_INTERVAL
        used.append(DrawUse(site, bound))
        return draws.vote_wait if site == VOTE_WAIT else draws.vote_interval

    log = tuple(Entry(i, member.ledger_end_term) for i in range(member.ledger_end_index + 1))
    node = DLedgerNode(member.self_id, tuple(member.peers), draw, DLedgerDurable(member.curr_term, member.voted_for, log),
                       now, profile, timing)
    node.ledger_end_term = member.ledger_end_term
    if member.role is Role.LEADER:
        node._become_leader(fx.BecomeLeader(member.curr_term), now)
    node.role, node.leader_id = member.role, member.leader_id
    return node, used


def _deliver(node, kind, sent, replies, until: int, now: int) -> None:
    """The replies to the round's requests, each at its instant (none after ``until``)."""
    ask = {m.dst: m.payload.round for m in sent if isinstance(m.payload, kind)}
    seen = set()
    for r in sorted(replies, key=lambda r: r.at):
        if r.peer in ask and r.peer not in seen and now + r.at <= until:
            seen.add(r.peer)
            reply = r.response
            payload = (HeartBeatResponse(reply.term, reply.code, ask[r.peer]) if kind is HeartBeatRequest
                       else VoteResponse(reply.term, reply.result, ask[r.peer]))
            node.step(Message(r.peer, node.node_id, payload), now + r.at)


def _replayable(op: str, args) -> bool:
    """Rounds the node can be put into: no failed request, no transferee, the role the round is of."""
    role = Role.LEADER if op == "dledger.heartbeat_round" else Role.CANDIDATE
    state = args.get("state")
    return (all(r.response is not None for r in args["replies"]) and not (state and state.preferred_leader)
            and args["member"].role is role)


def _view(node, member):
    return (node.curr_term, node.voted_for, node.role, node.leader_id)


def _replay(profile, e, timing=None):
    args, answer, now = e.args, e.answer, e.args["now"]
    member = args["member"]
    if e.op == "dledger.heartbeat_round":
        node, _ = _node(member, profile, now, timing=timing)
        node.last_send_heartbeat_time = args["times"].last_send_heartbeat_time
        node.last_succ_heartbeat_time = args["times"].last_succ_heartbeat_time
        sent = node.tick(now).messages
        _deliver(node, HeartBeatRequest, sent, args["replies"], answer.returns_at, now)
        node.tick(answer.returns_at)
        got = (node._hb_round is None, _view(node, member), node.last_send_heartbeat_time,
               node.last_succ_heartbeat_time)
        expected = (True, _view_of(answer.member), answer.times.last_send_heartbeat_time,
                    answer.times.last_succ_heartbeat_time)
    else:
        state = args["state"]
        node, used = _node(member, profile, now, args["draws"], timing)
        node.known_max_term = state.known_max_term
        node.next_time_to_request_vote = state.next_time_to_request_vote
        node.need_increase_term_immediately = state.need_increase_term_immediately
        node.last_parse_result = state.last_parse_result
        node.last_vote_cost = state.last_vote_cost
        sent = node.tick(now).messages
        _deliver(node, VoteRequest, sent, args["replies"], answer.returns_at, now)
        node.tick(answer.returns_at)
        s = answer.state
        got = (node._vote_round is None, _view(node, member), node.next_time_to_request_vote,
               node.need_increase_term_immediately, node.last_parse_result, node.last_vote_cost,
               node.known_max_term, tuple(used))
        expected = (True, _view_of(answer.member), s.next_time_to_request_vote, s.need_increase_term_immediately,
                    s.last_parse_result, s.last_vote_cost, s.known_max_term, answer.draws)
    return got, expected, node._next_run


def _view_of(member):
    return (member.curr_term, member.voted_for, member.role, member.leader_id)


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.name for p in TRANSCRIPTS])
def test_the_reference_node_replays_the_real_rounds(path):
    header, entries = load(path)
    profile = PROFILES[header["profile"]]
    replayed = 0
    for e in entries:
        if not _replayable(e.op, e.args):
            continue
        got, expected, due = _replay(profile, e)
        assert got == expected, f"{e.op} {e.args}:\n  node: {got}\n  real: {expected}"
        if e.answer.returns_at != e.args["now"]:  # a round ran: the maintainer runs again 10 ms after it returned
            assert due == next_maintainer_run(e.answer.returns_at, profile.timing), (e.op, e.args)
        replayed += 1
    assert replayed >= 400


@pytest.mark.parametrize("version,other", [("0.2.7", "dledger-0.4"), ("0.4.0", "dledger-0.2"), ("0.1", "dledger-0.2")])
def test_a_node_keeping_another_releases_time_is_caught(version, other):
    path = next(p for p in TRANSCRIPTS if p.name == f"rounds-{version}.jsonl.gz")
    header, entries = load(path)
    profile, timing = PROFILES[header["profile"]], PROFILES[other].timing
    wrong = sum(1 for e in entries if _replayable(e.op, e.args) and (lambda r: r[0] != r[1])(_replay(profile, e, timing)))
    assert wrong >= 10


# ------------------------------------------------------------------ between rounds

BEAT = json.loads((Path(__file__).parents[1] / "transcripts" / "dledger" / "maintainer-beat.json").read_text())
BEAT_CASES = [(b["profile"], c) for b in BEAT["builds"] for c in b["cases"]]


def _acts(profile, case, until=9000):
    """The instants a node of ``profile``, put in the case's state at NOW and woken exactly at
    each of its deadlines (and at each reply), does what the case records the real one doing."""
    role, since = Role[case["role"]], case.get("since", 0)
    leader = "n1" if role is Role.LEADER else (None if role is Role.CANDIDATE else "n2")
    member = MemberView("n1", frozenset({"n1", "n2", "n3"}), 5, leader, leader, role)
    node, _ = _node(member, profile, NOW)
    if role is Role.LEADER:
        node.last_send_heartbeat_time = node.last_succ_heartbeat_time = NOW - 5000
    elif role is Role.FOLLOWER:
        node.last_leader_heartbeat_time = NOW - since
    else:
        node.next_time_to_request_vote = NOW + since
    pending: list[tuple[int, Message]] = []
    acted: list[int] = []
    while not (role is not Role.LEADER and acted):
        t = node.next_deadline()
        if pending and (t is None or pending[0][0] <= t):
            at, message = pending.pop(0)
            node.step(message, at)  # a reply due at an instant comes before the tick at it
            continue
        if t is None or t >= NOW + until:
            break
        out = node.tick(t).messages
        beats = [m for m in out if isinstance(m.payload, HeartBeatRequest)]
        if beats:
            acted.append(t - NOW)
            pending += [(t + case["reply_at"], Message(m.dst, "n1", HeartBeatResponse(5, ResponseCode.SUCCESS,
                                                                                      m.payload.round)))
                        for m in beats]
            pending.sort(key=lambda p: p[0])
        if (role is Role.FOLLOWER and node.role is not Role.FOLLOWER) or any(
                isinstance(m.payload, VoteRequest) for m in out):
            acted.append(t - NOW)
    return acted


@pytest.mark.parametrize("profile,case", BEAT_CASES, ids=[f"{p}-{c['role']}-{c.get('reply_at', c.get('since'))}"
                                                            for p, c in BEAT_CASES])
def test_the_maintainer_keeps_the_real_beat_between_rounds(profile, case):
    """Recorded from the real StateMaintainer of each build: its next round, timeout or
    campaign comes at its first run (the beat: a run returned, +10 ms, +10 ms, ...) at or
    after the instant it falls due; a node woken exactly at its deadlines acts then too."""
    assert _acts(PROFILES[profile], case) == case["acts_at"]


def test_the_recorded_beat_is_what_the_recorder_asks():
    """maintainer-beat.json is record_maintainer_beat's answer: its cases, its description,
    one record per recorded build."""
    assert BEAT["what"] == " ".join(DLedgerElectorServer.maintainer_acts.__doc__.split("\n\n")[1].split())
    assert [b["version"] for b in BEAT["builds"]] == ["0.1", "0.2.7", "0.3.1.2", "0.3.2", "0.4.0"]
    for b in BEAT["builds"]:
        assert [{k: v for k, v in c.items() if k != "acts_at"} for c in b["cases"]] == list(MAINTAINER_BEAT_CASES)


def test_the_recorded_beat_tells_the_beat_from_the_due_instant():
    """The recording can fail a node acting at the instant its timer falls due: in most cases
    the real run came later than that."""
    later = 0
    for profile, case in BEAT_CASES:
        timing = PROFILES[profile].timing
        if case["role"] == "FOLLOWER":
            later += case["acts_at"][0] > follower_timeout_at(-case["since"], timing)
        elif case["role"] == "CANDIDATE":
            later += case["acts_at"][0] > case["since"]
        else:
            later += any(b > heartbeat_due_at(a, timing) for a, b in zip(case["acts_at"], case["acts_at"][1:]))
    assert later >= len(BEAT_CASES) * 2 // 3


def test_the_beat_holds_whatever_else_wakes_the_node():
    """A tick between two runs (a dispatcher's push, a grid tick) runs the maintainer at its
    last beat, not at the tick: the next round comes when it would have without that tick."""
    profile = PROFILES["dledger-0.4"]
    member = MemberView("n1", frozenset({"n1", "n2", "n3"}), 5, "n1", "n1", Role.LEADER)
    node, _ = _node(member, profile, NOW)
    node.last_send_heartbeat_time = node.last_succ_heartbeat_time = NOW - 5000
    sent = node.tick(NOW).messages
    _deliver(node, HeartBeatRequest, sent, [HeartbeatReply("n2", 30, HeartBeatResponse(-1, ResponseCode.SUCCESS))],
             NOW + 40, NOW)
    node.tick(NOW + 40)
    assert node._hb_round is None and node.last_succ_heartbeat_time == NOW + 40
    assert node.next_deadline() == maintainer_run_at_or_after(NOW + 50, NOW + 2001, profile.timing) == NOW + 2010
    node.tick(NOW + 1234)
    rounds_at = [t for t in range(NOW + 1235, NOW + 2100) if any(
        isinstance(m.payload, HeartBeatRequest) for m in node.tick(t).messages)]
    assert rounds_at[0] == NOW + 2010
    assert maintainer_run_at_or_before(NOW + 50, NOW + 2019, profile.timing) == NOW + 2010
