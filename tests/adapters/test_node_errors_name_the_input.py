"""A node's ``internal`` error answer names what the node was handling (node id, the
message's kind and sender, or a tick): an implementation's own message ("cannot read
properties of null") rarely does, and the one-line error of a replay or a report's errored
runs is all a user sees. No time or ids in it, so a campaign counts one failure as one
message."""
from conformance.campaign import execute
from conformance.script import parse_script

ADAPTER = "python:tests.fixtures.node_throws:on_third_put"


def test_an_internal_error_names_the_node_and_the_message_it_handled():
    script = parse_script("scenario classic\nnodes b1 b2\nseed 0\nrun 100\nwrite 3\nrun 100\n")
    ex = execute(script, ADAPTER, record_trace=False)
    assert ex.error is not None
    assert "node.step failed: internal: TypeError: cannot read properties of null" in ex.error, ex.error
    assert ex.error.endswith("(node b1, handling a Put from client)"), ex.error
