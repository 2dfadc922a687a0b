"""``isolate-active-controller [BROKER ...]``: the nemesis that cuts off the controller
serving requests (the search's mutations insert it: conformance/scenarios/controller.py)."""
import pytest

from conformance.errors import UserError
from conformance.scenarios.controller import build_controller
from conformance.script import Step, parse_script

OPENING = """scenario controller
profile rocketmq-5.1
adapter reference
nodes c1 c2 c3 b1 b2
seed 3
start-spread 500
await-master 30000
write 3
run 2000
"""


def opened():
    script = parse_script(OPENING)
    cluster = build_controller(script, "reference", record_trace=False)
    cluster.execute(script.steps)
    return cluster


def active(cluster):
    return [c for c in cluster.controllers if cluster.views[c] is not None and cluster.views[c].active]


def test_the_active_controller_is_cut_off_with_the_named_brokers():
    cluster = opened()
    old = cluster.active_controller()
    assert old is not None
    cluster.execute((Step("isolate-active-controller", ("b2",)),))
    others = [n for n in cluster.sim.nodes if n not in (old, "b2")]
    assert cluster.sim.link_up(old, "b2") and cluster.sim.link_up("b2", old)
    assert not any(cluster.sim.link_up(old, n) or cluster.sim.link_up(n, old) for n in others)
    assert not any(cluster.sim.link_up("b2", n) for n in others)
    assert all(cluster.sim.link_up(a, b) for a in others for b in others if a != b)
    # it serves for its lease, then steps down; the majority elects another active controller
    cluster.execute((Step("run", ("1000",)),))
    assert active(cluster) == [old]
    cluster.execute((Step("run", ("14000",)),))
    assert old not in active(cluster) and len(active(cluster)) == 1
    cluster.execute((Step("heal",),))
    assert all(cluster.sim.link_up(a, b) for a in cluster.sim.nodes for b in cluster.sim.nodes if a != b)


def test_without_an_active_controller_it_does_nothing():
    cluster = opened()
    for c in cluster.controllers:
        cluster.execute((Step("crash", (c,)),))
    cluster.execute((Step("isolate-active-controller", ("b1",)),))
    nodes = list(cluster.sim.nodes)
    assert all(cluster.sim.link_up(a, b) for a in nodes for b in nodes if a != b)


@pytest.mark.parametrize("arg", ["c1", "b9"])
def test_only_brokers_go_with_it(arg):
    cluster = opened()
    with pytest.raises(UserError) as e:
        cluster.execute((Step("isolate-active-controller", (arg,), 12),))
    assert "line 12" in str(e.value) and "\n" not in str(e.value)
