"""The real RocketMQ epoch file (``EpochFileCache``), at handler level, through JPype.

Runs only when ``RMQHA_ROCKETMQ_CLASSPATH`` points at rocketmq-store, rocketmq-remoting
and their dependencies (see docs/adapters.md). CI has no such jars.

rmqha's reference deliberately differs from upstream where an epoch entry starts at
or beyond its log's end (docs/truncation.md, "Entries that vouch for no data are
ignored"). So the real ``findConsistentPoint`` must equal the reference where no
entry does, and the spec's ``upstream-empty-epoch`` variant where one starts exactly
at the end. Where one starts *beyond* the end (a dirty tail dropped from the commitlog
but not from the epoch file), ``setLastEpochEntryEndOffset`` ignores the log end and
the real cache can answer Long.MAX_VALUE as the consistent point (found by this test;
docs/adapters.md).
"""
import os

import pytest
from hypothesis import HealthCheck, given, settings

from adapters import resolve
from conformance.differential import compare
from conformance.strategies import ARGUMENTS
from spec.truncation import epoch_file as ef
from spec.truncation.algebra import UPSTREAM_EMPTY_EPOCH

CLASSPATH = os.environ.get("RMQHA_ROCKETMQ_CLASSPATH")
pytestmark = [pytest.mark.jvm, pytest.mark.skipif(not CLASSPATH, reason="RMQHA_ROCKETMQ_CLASSPATH is not set")]
MANY = settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def rocketmq():
    return resolve("jvm:rocketmq")


def test_hello_declares_the_epoch_file_operations_only(rocketmq):
    assert rocketmq.info.operations == frozenset({"truncation.find_consistent_point", "truncation.append"})


def test_append_agrees_with_the_spec(rocketmq):
    @MANY
    @given(ARGUMENTS["truncation.append"])
    def agrees(args):
        found = compare(rocketmq, "truncation.append", args)
        assert found is None, found.render()

    agrees()


def _latest_start_beyond_end(args) -> int:
    """How far the latest entry of either side starts beyond that side's log end (<= 0: not beyond)."""
    return max((f.entries[-1].start_offset - end for f, end in ((args["local"], args["local_max"]),
                                                                 (args["master"], args["master_max"])) if f.entries),
               default=0)


def test_find_consistent_point_is_the_reference_or_upstreams(rocketmq):
    @MANY
    @given(ARGUMENTS["truncation.find_consistent_point"])
    def agrees(args):
        beyond = _latest_start_beyond_end(args)
        if beyond > 0:
            return  # the Long.MAX_VALUE answers: see the next test
        got = rocketmq.invoke("truncation.find_consistent_point", args)
        upstream = ef.find_consistent_point(args["local"], args["local_max"], args["master"], args["master_max"],
                                            UPSTREAM_EMPTY_EPOCH)
        assert got == upstream
        if beyond < 0:
            assert compare(rocketmq, "truncation.find_consistent_point", args) is None

    agrees()


def test_an_entry_beyond_the_log_end_makes_long_max_the_consistent_point(rocketmq):
    side = ef.of((1, 0), (2, 500))  # epoch 2 started at 500, but the log ends at 300 (a dropped dirty tail)
    args = {"local": side, "local_max": 300, "master": side, "master_max": 300}
    assert rocketmq.invoke("truncation.find_consistent_point", args) == 2**63 - 1
    assert ef.find_consistent_point(side, 300, side, 300) == 300  # the reference: the common log, 300
