"""Shims in other languages pass (or, when buggy, fail) the same differential tests.

A JavaScript shim over stdio (``node``, tests/fixtures/js/dledger_shim.js) and the
Java shim through JPype (tests/fixtures/java/RmqhaShim.java, compiled with ``javac``
here) answer handler-level operations; Hypothesis feeds them the arguments the
conformance suite uses, and each answer is compared with the spec's. The buggy
variants must be caught, with the disagreement naming both answers; the misbehaving
Java variants (MisbehavingShim.java) must be errors, never a hang.
"""
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from adapters import resolve
from adapters.errors import AdapterError
from conformance.differential import compare
from conformance.strategies import ARGUMENTS
from spec.dledger.member_state import MemberView
from spec.dledger.records import HeartBeatRequest
from tests.budgets import share

FIXTURES = Path(__file__).parents[1] / "fixtures"
FEW = share(2.5, suppress_health_check=[HealthCheck.too_slow])  # 150 examples under the ci profile


def agrees_everywhere(adapter, operation):
    @FEW
    @given(ARGUMENTS[operation])
    def check(args):
        found = compare(adapter, operation, args)
        assert found is None, found.render()

    check()


def first_disagreement(adapter, operation):
    try:
        agrees_everywhere(adapter, operation)
    except AssertionError as exc:
        return str(exc)
    return None


# ------------------------------------------------------------------ JavaScript over stdio

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@needs_node
@pytest.mark.parametrize("operation", ["dledger.handle_vote", "dledger.handle_heartbeat"])
def test_javascript_shim_conforms(operation):
    adapter = resolve(f"stdio:node {FIXTURES / 'js' / 'dledger_shim.js'}", fresh=True)
    try:
        assert adapter.info.implementation == "dledger-shim-js"
        agrees_everywhere(adapter, operation)
    finally:
        adapter.close()


@needs_node
def test_javascript_shim_with_a_bug_is_caught():
    adapter = resolve(f"stdio:node {FIXTURES / 'js' / 'dledger_shim.js'} --bug skip-voted", fresh=True)
    try:
        found = first_disagreement(adapter, "dledger.handle_vote")
    finally:
        adapter.close()
    assert found is not None
    # the vote already given is not checked: the shim answers what a later row says
    assert "spec under dledger-0.4:    (<VoteResult.REJECT_ALREADY" in found and "implementation: (<VoteResult." in found


# ------------------------------------------------------------------ Java through JPype

needs_javac = pytest.mark.skipif(shutil.which("javac") is None, reason="javac is not installed")



@pytest.mark.jvm
@needs_javac
@pytest.mark.parametrize("operation", ["dledger.handle_vote", "dledger.handle_heartbeat"])
def test_java_shim_conforms_through_jpype(java_classes, operation):
    adapter = resolve(f"jvm:{java_classes}:RmqhaShim", fresh=True)
    assert (adapter.info.implementation, adapter.info.profiles) == ("java-shim-example", {"dledger": "dledger-0.4"})
    agrees_everywhere(adapter, operation)


@pytest.mark.jvm
@needs_javac
def test_java_shim_with_the_wrong_check_order_is_caught(java_classes):
    adapter = resolve(f"jvm:{java_classes}:MisbehavingShim$WrongOrder", fresh=True)
    found = first_disagreement(adapter, "dledger.handle_heartbeat")
    # the term check answered before the membership checks that must come first
    assert found is not None and "implementation: (<ResponseCode.EXPIRED_TERM" in found
    assert "spec under dledger-0.4:    (<ResponseCode.UNKNOWN_MEMBER" in found or "UNEXPECTED_MEMBER" in found


@pytest.mark.jvm
@needs_javac
@pytest.mark.parametrize("variant,message", [
    ("Hanging", "no answer within 1.5 s"),
    ("Garbage", "answered something that is not JSON"),
    ("Throwing", "threw .*member state is locked"),
])
def test_java_misbehaviour_is_an_adapter_error(java_classes, monkeypatch, variant, message):
    monkeypatch.setenv("RMQHA_ADAPTER_TIMEOUT", "1.5")
    adapter = resolve(f"jvm:{java_classes}:MisbehavingShim${variant}", fresh=True)
    args = {"member": MemberView("n1", frozenset({"n1", "n2"}), 1), "request": HeartBeatRequest(1, "n2")}
    with pytest.raises(AdapterError, match=message):
        adapter.invoke("dledger.handle_heartbeat", args)


@pytest.mark.jvm
@needs_javac
def test_a_missing_java_class_is_an_adapter_error(java_classes):
    with pytest.raises(AdapterError, match="cannot load class NoSuchShim"):
        resolve(f"jvm:{java_classes}:NoSuchShim", fresh=True)


@pytest.mark.jvm
@needs_javac
def test_a_java_class_without_handle_is_an_adapter_error(java_classes):
    with pytest.raises(AdapterError, match=r"class MisbehavingShim has no method handle\(String\)$"):
        resolve(f"jvm:{java_classes}:MisbehavingShim", fresh=True)


def _compile_renamed(tmp_path, base, extra=""):
    """RmqhaShim renamed ``base`` (a class no other test loads), compiled into two
    directories ``a`` and ``b``; ``extra`` (Java source of more classes) joins ``b``."""
    source = (FIXTURES / "java" / "RmqhaShim.java").read_text().replace("RmqhaShim", base)
    dirs = []
    for name in ("a", "b"):
        src = tmp_path / f"src-{name}"
        src.mkdir()
        (src / f"{base}.java").write_text(source)
        files = [str(src / f"{base}.java")]
        if extra and name == "b":
            (src / f"{base}Child.java").write_text(extra)
            files.append(str(src / f"{base}Child.java"))
        subprocess.run(["javac", "-d", str(tmp_path / name), *files], check=True, capture_output=True)
        dirs.append(tmp_path / name)
    return dirs


@pytest.mark.jvm
@needs_javac
def test_a_second_build_of_a_loaded_class_is_refused(tmp_path):
    """One JVM per process keeps the first class of a name: the adapter naming another
    build says so instead of running the first one."""
    a, b = _compile_renamed(tmp_path, "ShadowProbeShim")
    assert resolve(f"jvm:{a}:ShadowProbeShim", fresh=True).info.implementation == "java-shim-example"
    assert resolve(f"jvm:{a}:ShadowProbeShim", fresh=True)  # the same build again: fine
    with pytest.raises(AdapterError) as e:
        resolve(f"jvm:{b}:ShadowProbeShim", fresh=True)
    message = str(e.value)
    assert "\n" not in message and f"already loaded in this process from {a}" in message
    assert "stdio:java -cp" in message


@pytest.mark.jvm
@needs_javac
def test_a_subclass_over_a_superclass_of_another_build_is_refused(tmp_path):
    a, b = _compile_renamed(tmp_path, "ShadowBaseShim", "public class ShadowBaseShimChild extends ShadowBaseShim {}\n")
    resolve(f"jvm:{a}:ShadowBaseShim", fresh=True)
    with pytest.raises(AdapterError, match=f"class ShadowBaseShim is already loaded in this process from {a}"):
        resolve(f"jvm:{b}:ShadowBaseShimChild", fresh=True)
