"""spec/raft/abstract.py: every value of every component of a node's abstract state,
by a table naming each, and properties of the group and step states."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from spec.raft.abstract import (
    COMMIT_RELATIONS,
    LOG_RELATIONS,
    MESSAGE_TERMS,
    NODE_ROLES,
    TERM_RELATIONS,
    VOTES,
    every_node_state,
    group_state,
    handled,
    log_relation,
    node_state,
    step_state,
)
from spec.raft.records import RaftEntry, RaftRole, RaftView


def log(*terms: int, body: str = "x") -> tuple[RaftEntry, ...]:
    return tuple(RaftEntry(i, t, f"{body}{i}") for i, t in enumerate(terms))


def view(node_id="n1", role=RaftRole.FOLLOWER, term=2, voted_for=None, committed=-1, entries=()) -> RaftView:
    return RaftView(node_id, role, term, voted_for, None, committed, tuple(entries))


LOG_ROWS = [
    ("same", log(1, 2), log(1, 2)),
    ("prefix", log(1), log(1, 2)),
    ("longer", log(1, 2, 2), log(1, 2)),
    ("stale", log(1, 1), log(1, 2)),  # diverges at index 1, its last term older
    ("fork", log(1, 3), log(1, 2)),  # diverges, its last term newer
    ("fork", log(1, 2, body="y"), log(1, 2)),  # same terms, other bodies: diverges, last term as new
    # a divergent log's length against the reference's: longer by one, equal, shorter by one
    ("stale-longer", log(1, 1, 1, 1), log(1, 2, 2)),  # an old leader's longer log of an older term
    ("stale", log(1, 1, 1), log(1, 2, 2)),
    ("stale", log(1, 1), log(1, 2, 2)),
    ("fork-longer", log(1, 3, 3, 3), log(1, 2, 2)),
    ("fork-longer", log(1, 2, 2, 2, body="y"), log(1, 2, 2)),
    ("fork", log(1, 3, 3), log(1, 2, 2)),
    ("fork", log(1, 3), log(1, 2, 2)),
    ("same", (), ()),
    ("prefix", (), log(1)),
]


@pytest.mark.parametrize("expected,mine,reference", LOG_ROWS)
def test_log_relation(expected, mine, reference):
    assert log_relation(mine, reference) == expected


def test_every_log_relation_has_a_row():
    assert {row[0] for row in LOG_ROWS} == set(LOG_RELATIONS)


NODE_ROWS = [
    # (expected, the node, the reference (leader), highest live term)
    ("L=s/same/=", view(role=RaftRole.LEADER, voted_for="n1", committed=1, entries=log(1, 2)),
     view(role=RaftRole.LEADER, voted_for="n1", committed=1, entries=log(1, 2)), 2),
    ("F=o/prefix/<", view(voted_for="n2", committed=0, entries=log(1)),
     view("n2", RaftRole.LEADER, committed=1, entries=log(1, 2)), 2),
    ("C<0/stale/>", view(role=RaftRole.CANDIDATE, term=1, committed=1, entries=log(1, 1)),
     view("n2", RaftRole.LEADER, committed=0, entries=log(1, 2)), 2),
]


@pytest.mark.parametrize("expected,me,reference,max_term", NODE_ROWS)
def test_node_state(expected, me, reference, max_term):
    assert node_state(me, reference, max_term) == expected


def test_the_universe_is_every_combination():
    universe = every_node_state()
    assert len(universe) == len(set(universe)) == (len(NODE_ROLES) * len(TERM_RELATIONS) * len(VOTES)
                                                   * len(LOG_RELATIONS) * len(COMMIT_RELATIONS))
    assert {row[0] for row in NODE_ROWS} <= set(universe)


HANDLED_ROWS = [
    # (expected, kind, the message's term, the node's term before the step)
    ("VoteRequest<", "VoteRequest", 2, 3),  # older: refused or ignored
    ("PushEntryRequest=", "PushEntryRequest", 3, 3),  # the same: judged on its contents
    ("HeartBeatRequest>", "HeartBeatRequest", 4, 3),  # newer: the node steps down to it
    ("tick", "tick", None, 3),
    ("ClientAppend", "ClientAppend", None, 3),  # no term: the kind alone
    ("VoteResponse", "VoteResponse", 2, None),  # a node's first step after a (re)start
]


@pytest.mark.parametrize("expected,kind,message_term,node_term", HANDLED_ROWS)
def test_handled(expected, kind, message_term, node_term):
    assert handled(kind, message_term, node_term) == expected


def test_every_message_term_relation_has_a_row():
    assert {row[0][-1] for row in HANDLED_ROWS if row[2] is not None and row[3] is not None} == set(MESSAGE_TERMS)


@given(st.integers(0, 2**63), st.integers(0, 2**63))
def test_handled_relation_is_the_terms_order(message_term, node_term):
    """One relation for every pair of terms (past 2^31 too), and the kind kept in front."""
    event = handled("VoteRequest", message_term, node_term)
    assert event[:-1] == "VoteRequest"
    assert event[-1] == MESSAGE_TERMS[(message_term >= node_term) + (message_term > node_term)]


roles = st.sampled_from(list(RaftRole))
views = st.builds(view, node_id=st.sampled_from(["n1", "n2", "n3"]), role=roles, term=st.integers(1, 3),
                  voted_for=st.sampled_from([None, "n1", "n2"]), committed=st.integers(-1, 2),
                  entries=st.lists(st.integers(1, 3), max_size=3).map(sorted).map(lambda ts: log(*ts)))


@given(st.lists(views, min_size=1, max_size=3, unique_by=lambda v: v.node_id), st.sampled_from(["clean", "cut", "lossy"]))
def test_states_forget_order_and_stay_in_the_universe(group, network):
    """The order the nodes are listed in does not change the group state; every live
    node's state is one of the universe's."""
    universe = set(every_node_state())
    state = group_state(group, network)
    assert state == group_state(list(reversed(group)), network)
    nodes = state.split("|")[0].split(" ")
    assert all(n in universe for n in nodes)
    for v in group:
        s = step_state(v.node_id, "tick", group, network)
        assert s is not None and s.split("|")[0] in universe and s.endswith(network)


def test_down_nodes_and_an_empty_group():
    assert group_state([None, None], "cut") == "all-down|cut"
    assert step_state("n1", "tick", [None], "clean") is None
    state = group_state([view(role=RaftRole.LEADER), None], "clean")
    assert state.split("|")[0].split(" ")[-1] == "-" and "leaders=1" in state
