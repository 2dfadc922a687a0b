"""Calls into Java on the calling thread, and a monitor that stops one that overruns.

A ``jvm:CLASSPATH:CLASS`` call used to run on a watchdog thread (``transports.Watchdog``)
so that a Java method that never returns becomes an error after the timeout; handing
each call to that thread and back cost about as much as the rest of the call together
(docs/performance.md, "JPype calls on the calling thread"). Here the calling thread calls
Java itself and only records, without a system call, that a call is in progress (a
sequence number; JPype releases the GIL while Java runs). One monitor thread per process
looks at the calls in progress every ``STOP_PERIOD_S``; a call it has seen in progress for
longer than its timeout is stopped on the Java side: ``java.lang.Thread.stop()`` on the
caller's Java thread throws ``ThreadDeath`` into it, which ends a busy loop, a sleep, a
wait, a park, a ``Lock``. The caller then reports the same error as before ("no answer
within N s"), and the adapter is broken as before (the next run starts a fresh instance).

``Thread.stop`` cannot end a thread blocked entering a ``synchronized`` block held by
another thread (a deadlock), blocked in native code (a socket read), or code that catches
``ThreadDeath`` and goes on: the caller never returns. The monitor stops such a call again
every period; if it has not ended ``STOP_GRACE_S`` after its timeout, rmqha cannot go on
(its calling thread is the one stuck) and exits with status 3 and one line saying so.
``RMQHA_JVM_WATCHDOG=thread`` keeps the hand-over to a watchdog thread (such a call is then
abandoned, as for ``python:``), and so does a JVM where ``Thread.stop`` does not work (it
throws ``UnsupportedOperationException`` from JDK 20): ``direct_calls`` decides once per
process, by stopping this thread in a Java call of its own (``_stop_works``).
"""
from __future__ import annotations

import os
import sys
import threading
import time
import weakref
from typing import Any, Callable

from adapters import jvm
from adapters.errors import UserError

WATCHDOG_ENV = "RMQHA_JVM_WATCHDOG"  # "stop" (the default, where the JVM can) or "thread"
WATCHDOGS = ("stop", "thread")
STOP_PERIOD_S = 0.05  # how often the monitor looks at the calls in progress
STOP_GRACE_S = 2.0  # how long after its timeout a stopped call may take to end before rmqha exits
UNSTOPPABLE_EXIT = 3  # an implementation error (docs/ARCHITECTURE.md, exit statuses)

_stop_verdict: list[bool] = []  # the probe's answer, once per process


def watchdog_mode() -> str:
    """The ``RMQHA_JVM_WATCHDOG`` the user chose (``stop`` if unset)."""
    mode = os.environ.get(WATCHDOG_ENV, "stop") or "stop"
    if mode not in WATCHDOGS:
        raise UserError(f"{WATCHDOG_ENV}={mode!r}: use one of {', '.join(WATCHDOGS)}")
    return mode


def direct_calls() -> bool:
    """Whether ``jvm:`` calls run on the calling thread under the monitor (the JVM is started)."""
    if watchdog_mode() != "stop":
        return False
    if not _stop_verdict:
        _stop_verdict.append(_stop_works())
    return _stop_verdict[0]


def _stop_works() -> bool:
    """Whether ``Thread.stop`` ends a Java call of this thread that another thread stops (the
    GIL released meanwhile, ``ThreadDeath`` raised in Python), and whether a stop that lands
    after a call returned is delivered by the next Java call (``CallGuard._settle``)."""
    jpype = jvm.ensure_started(())
    thread_class = jpype.JClass("java.lang.Thread")
    thread_death = jpype.JClass("java.lang.ThreadDeath")
    me = thread_class.currentThread()
    try:
        thread_class().stop()  # a thread never started: JDK 20+ throws UnsupportedOperationException
    except Exception:  # noqa: BLE001 - any refusal means: keep the hand-over
        return False

    def stop_once_parked() -> None:
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            if str(me.getState()) == "TIMED_WAITING":
                me.stop()
                return
            time.sleep(0.001)

    helper = threading.Thread(target=stop_once_parked, name="rmqha-jvm-stop-probe", daemon=True)
    helper.start()
    park, deadline = jpype.JClass("java.util.concurrent.locks.LockSupport").parkNanos, time.monotonic() + 2.0
    try:
        while time.monotonic() < deadline:  # a park may return early (a permit an earlier stop left)
            park(200_000_000)
        stopped_in_java = False
    except thread_death:
        stopped_in_java = True
    helper.join()
    helper = threading.Thread(target=me.stop, name="rmqha-jvm-stop-probe", daemon=True)
    helper.start()
    helper.join()  # this thread is in Python now: the stop waits for its next Java call
    try:
        thread_class.interrupted()
        delivered_later = False
    except thread_death:
        delivered_later = True
    _settle(thread_class, thread_death)
    return stopped_in_java and delivered_later


def _settle(thread_class: Any, thread_death: Any) -> None:
    """Take a ``ThreadDeath`` still pending for this thread (a stop that landed after its call
    returned) and clear the interrupt a stop sets, so that the next Java call starts clean."""
    for _ in range(3):
        try:
            thread_class.interrupted()
            return
        except thread_death:
            continue


class CallGuard:
    """One adapter's calls into Java, made on the calling thread, watched by the monitor."""

    __slots__ = ("name", "timeout_s", "seq", "done", "stopped", "lock", "ident", "jthread", "seen_seq",
                 "seen_at", "_thread", "_death", "__weakref__")

    def __init__(self, name: str, timeout_s: float):
        jpype = jvm.ensure_started(())
        self.name, self.timeout_s = name, timeout_s
        self._thread = jpype.JClass("java.lang.Thread")
        self._death = jpype.JClass("java.lang.ThreadDeath")
        self.seq = self.done = self.stopped = self.seen_seq = 0  # call numbers: started, ended, stopped, seen
        self.seen_at = 0.0
        self.lock = threading.Lock()  # orders a stop against the end of the call it stops
        self.ident, self.jthread = None, None  # the calling thread (Python ident, java.lang.Thread)
        _watch(self)

    def call(self, fn: Callable[[Any], Any], arg: Any) -> tuple[bool, Any] | None:
        """``(True, fn(arg))`` or ``(False, exception)``; None when the call overran its
        timeout and was stopped (whatever it ended with)."""
        if threading.get_ident() != self.ident:
            self.ident, self.jthread = threading.get_ident(), self._thread.currentThread()
        self.seq = seq = self.seq + 1
        stopped = False
        try:
            outcome = True, fn(arg)
        except Exception as exc:  # noqa: BLE001 - classified by the caller (ThreadDeath below)
            outcome = False, exc
        finally:  # (a KeyboardInterrupt too: a call that ended is never stopped later)
            with self.lock:
                self.done = seq
                stopped = self.stopped == seq
            if stopped:
                _settle(self._thread, self._death)
        return None if stopped else outcome

    def check(self, now: float) -> None:
        """The monitor's look at this guard: stop a call in progress for longer than the timeout."""
        seq = self.seq
        if seq == self.done:
            return
        if seq != self.seen_seq:
            self.seen_seq, self.seen_at = seq, now
            return
        late = now - self.seen_at - self.timeout_s
        if late < 0:
            return
        if late > STOP_GRACE_S and self.stopped == seq:
            _give_up(self)
        with self.lock:
            if self.done != seq:
                self.stopped = seq
                try:
                    self.jthread.stop()
                except Exception:  # noqa: BLE001 - cannot stop: the grace above ends it
                    pass


def _give_up(guard: CallGuard) -> None:
    """A stopped call that never ends holds rmqha's calling thread: say so in one line and exit."""
    sys.stderr.write(("\n" if sys.stderr.isatty() else "") +  # past a progress bar
                     f"rmqha: {guard.name}: no answer within {guard.timeout_s:g} s, and the Java call did not "
                     f"stop (a thread blocked on a lock or in native code, or catching ThreadDeath, cannot be "
                     f"stopped); set {WATCHDOG_ENV}=thread to abandon such a call and go on\n")
    sys.stderr.flush()
    os._exit(UNSTOPPABLE_EXIT)


_guards: weakref.WeakSet = weakref.WeakSet()
_monitor: list[threading.Thread] = []  # the running monitor, if any
_monitor_lock = threading.Lock()


def _watch(guard: CallGuard) -> None:
    with _monitor_lock:
        _guards.add(guard)
        if not _monitor or not _monitor[0].is_alive():
            _monitor[:] = [threading.Thread(target=_monitor_loop, name="rmqha-jvm-monitor", daemon=True)]
            _monitor[0].start()


def _monitor_loop() -> None:
    """Look at every live guard each period; end when none is left (the next guard starts another)."""
    while True:
        time.sleep(STOP_PERIOD_S)
        with _monitor_lock:
            guards = list(_guards)
            if not guards:
                _monitor.clear()
                return
        now = time.monotonic()
        for guard in guards:
            guard.check(now)
        del guards
