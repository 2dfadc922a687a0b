"""``jvm:CLASSPATH:CLASS`` calls run on the calling thread (adapters/jvm_calls.py).

A Java method that never returns, sleeping or in a busy loop, is stopped after the
timeout and is the same error as on the watchdog thread it replaced; the adapter is then
unusable and a fresh instance on the same thread answers (a campaign's next run). A stop
that lands after its call returned is taken before the next call. A call that cannot be
stopped (a deadlock) ends rmqha with one line and exit status 3; ``RMQHA_JVM_WATCHDOG=thread``
keeps the hand-over, which abandons it instead. The shims: tests/fixtures/java/MisbehavingShim.java.
"""
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from adapters import jvm, jvm_calls, resolve
from adapters.errors import AdapterError, UserError
from spec.dledger.heartbeat import handle_heartbeat
from spec.dledger.member_state import MemberView
from spec.dledger.records import HeartBeatRequest
from tests.adapters.test_other_languages import needs_javac

ROOT = Path(__file__).resolve().parents[2]
MEMBER, REQUEST = MemberView("n1", frozenset({"n1", "n2"}), 1), HeartBeatRequest(1, "n2")
ARGS = {"member": MEMBER, "request": REQUEST}

pytestmark = [pytest.mark.jvm, needs_javac]


def _stops(java_classes) -> bool:
    """Whether this JDK stops a call (``Thread.stop`` works up to JDK 19)."""
    resolve(f"jvm:{java_classes}:RmqhaShim", fresh=True)  # starts the JVM
    return int(jvm.ensure_started(()).JClass("java.lang.Runtime").version().feature()) < 20


def test_calls_run_on_the_calling_thread_where_the_jdk_can_stop_them(java_classes):
    adapter = resolve(f"jvm:{java_classes}:RmqhaShim", fresh=True)
    assert jvm_calls.direct_calls() is _stops(java_classes)
    assert (adapter._guard is not None, adapter._watchdog is None) == (_stops(java_classes),) * 2


@pytest.mark.parametrize("variant", ["Hanging", "Spinning"])
def test_a_java_call_that_never_returns_is_stopped_and_a_fresh_instance_answers(java_classes, monkeypatch, variant):
    if not _stops(java_classes):
        pytest.skip("this JDK cannot stop a thread: calls are handed to a watchdog thread (a busy loop would stay)")
    monkeypatch.setenv("RMQHA_ADAPTER_TIMEOUT", "1")
    adapter = resolve(f"jvm:{java_classes}:MisbehavingShim${variant}", fresh=True)
    started = time.monotonic()
    with pytest.raises(AdapterError, match=r"no answer within 1 s$") as failure:
        adapter.invoke("dledger.handle_heartbeat", ARGS)
    assert time.monotonic() - started < 1 + 0.5  # the timeout and a few of the monitor's periods
    assert "dledger.handle_heartbeat" in failure.value.exchange
    with pytest.raises(AdapterError, match="unusable after an earlier failure"):
        adapter.invoke("dledger.handle_heartbeat", ARGS)
    fresh = resolve(f"jvm:{java_classes}:RmqhaShim", fresh=True)  # the next run, on this thread
    answer, spec = fresh.invoke("dledger.handle_heartbeat", ARGS), handle_heartbeat(MEMBER, REQUEST)
    assert (answer.code, answer.reply_term, answer.effects) == (spec.code, spec.reply_term, spec.effects)
    assert not jvm.ensure_started(()).JClass("java.lang.Thread").interrupted()  # the stop left nothing behind


def test_a_stop_that_lands_after_its_call_returned_is_taken_before_the_next_call(java_classes):
    if not _stops(java_classes):
        pytest.skip("this JDK cannot stop a thread")
    guard = jvm_calls.CallGuard("jvm:race", 10.0)
    java_thread = jvm.ensure_started(()).JClass("java.lang.Thread")

    def returns_just_as_it_is_stopped(arg):
        def monitor():  # the monitor's half of a stop, decided just as the call returns
            with guard.lock:
                guard.stopped = guard.seq
                guard.jthread.stop()
        stopper = threading.Thread(target=monitor)
        stopper.start()
        stopper.join()
        return arg

    assert guard.call(returns_just_as_it_is_stopped, "answer") is None  # overran: reported as no answer
    assert guard.call(lambda _: java_thread.interrupted(), None) == (True, False)  # no ThreadDeath left, no interrupt


def test_a_call_interrupted_in_python_is_over_for_the_monitor(java_classes):
    """Ctrl-C raised as a call returns: the call is over, never stopped later (the monitor
    would otherwise throw ThreadDeath into rmqha's next Java call, then exit)."""
    _stops(java_classes)
    guard = jvm_calls.CallGuard("jvm:interrupted", 10.0)

    def interrupted(_):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        guard.call(interrupted, None)
    assert guard.done == guard.seq == 1


def test_the_watchdog_thread_abandons_a_hang_when_asked(java_classes, monkeypatch):
    monkeypatch.setenv("RMQHA_ADAPTER_TIMEOUT", "1")
    monkeypatch.setenv("RMQHA_JVM_WATCHDOG", "thread")
    adapter = resolve(f"jvm:{java_classes}:MisbehavingShim$Hanging", fresh=True)
    assert adapter._guard is None
    started = time.monotonic()
    with pytest.raises(AdapterError, match=r"no answer within 1 s$"):
        adapter.invoke("dledger.handle_heartbeat", ARGS)
    assert time.monotonic() - started < 1 + 0.5


def test_an_unknown_watchdog_is_a_user_error(java_classes, monkeypatch):
    monkeypatch.setenv("RMQHA_JVM_WATCHDOG", "never")
    with pytest.raises(UserError, match="RMQHA_JVM_WATCHDOG='never': use one of stop, thread"):
        resolve(f"jvm:{java_classes}:RmqhaShim", fresh=True)


def test_a_java_call_that_cannot_be_stopped_ends_rmqha_with_one_line(java_classes, tmp_path):
    if not _stops(java_classes):
        pytest.skip("this JDK cannot stop a thread: the call is abandoned on the watchdog thread")
    spec = f"jvm:{java_classes}:MisbehavingShim$Locked"
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "cli", "check", "--quiet", "--adapter", spec, "--out",
                           str(tmp_path / "out"), "--report", str(tmp_path / "report")], cwd=ROOT,
                          env={**os.environ, "RMQHA_ADAPTER_TIMEOUT": "0.5"}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 3, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"rmqha: {spec}: no answer within 0.5 s, and the Java call did not stop (a thread blocked on a lock or in "
        f"native code, or catching ThreadDeath, cannot be stopped); set RMQHA_JVM_WATCHDOG=thread to abandon such "
        f"a call and go on")
    assert time.monotonic() - started < 60
