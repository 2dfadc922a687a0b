"""Where rmqha runs beside the implementations it drives: on one CPU.

rmqha talks to an implementation one request at a time: while one side works the other
waits, so the two never use two CPUs at once. When the kernel puts them on different
CPUs every request and every answer wakes the other CPU, and on a virtual machine that
costs more than the work itself: a round trip over a pipe between two processes took
~40 us of CPU on two CPUs of this project's 2-CPU test machine and ~9 us on one
(docs/performance.md, "Co-location"). The kernel picks either placement, run to run.

So each rmqha process that drives an implementation running in another process or
thread (``stdio:``, ``jvm:``, ``python:``) claims a *home CPU* the first time it does
(``colocated()``: a run, a handler-level check, a fingerprint), and runs there while it
does, giving its thread's previous CPU set back afterwards. The implementation's
processes and rmqha's watchdog threads are *adopted*: pinned to the home CPU, whether
they started before the claim or after it (what they start later inherits it).

Several rmqha processes on one machine (Spark's workers, two campaigns) claim different
CPUs: a claim is an advisory lock on a file per CPU, held while the process lives; a
process that only said hello to an implementation (the campaign's driver under Spark)
claims nothing. When every CPU is claimed, or the platform cannot pin, nothing is
pinned and the kernel places the processes as it would have. ``RMQHA_COLOCATE=0``
turns it off.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import threading
from pathlib import Path
from typing import IO, Iterator

ENV = "RMQHA_COLOCATE"  # "0": never pin

_claim: tuple[int, int, IO, frozenset[int]] | None = None  # (pid, cpu, locked file, the CPUs before) of this process
_adopted_processes: set[int] = set()  # pids of implementations' processes this process started
_adopted_threads: set[int] = set()  # native ids of threads of this process that call implementations


def enabled() -> bool:
    return os.environ.get(ENV, "1") != "0" and hasattr(os, "sched_setaffinity")


def _slots() -> Path:
    return Path(tempfile.gettempdir()) / f"rmqha-cpus-{os.getuid()}"


def _running_on() -> int | None:
    """The CPU the calling thread last ran on (field 39 of /proc/thread-self/stat)."""
    try:
        return int(Path("/proc/thread-self/stat").read_text().rsplit(")", 1)[1].split()[36])
    except (OSError, IndexError, ValueError):
        return None


def home_cpu() -> int | None:
    """This process's CPU (claimed on first use), or None: nothing to pin to."""
    global _claim
    if _claim is not None and _claim[0] == os.getpid():
        return _claim[1]
    _claim = None  # a forked child does not inherit its parent's claim
    if not enabled():
        return None
    try:
        allowed = os.sched_getaffinity(0)
        if len(allowed) < 2:
            return None
        slots = _slots()
        slots.mkdir(mode=0o700, exist_ok=True)
        here = _running_on()
        for cpu in sorted(allowed, key=lambda c: (c != here, c)):  # where it runs now, if free
            lock = open(slots / f"cpu{cpu}", "a")
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                lock.close()
                continue
            _claim = (os.getpid(), cpu, lock, frozenset(allowed))
            for pid in list(_adopted_processes):
                _pin_process(pid, cpu)
            for tid in list(_adopted_threads):
                _pin(tid, cpu)
            return cpu
    except OSError:
        pass
    return None


def _pin(task: int, cpu: int) -> bool:
    try:
        os.sched_setaffinity(task, {cpu})
        return True
    except OSError:  # gone, or not ours to pin
        return False


def _pin_process(pid: int, cpu: int) -> None:
    """Every thread of ``pid`` and of its descendants (``stdio:sh run.sh`` starts the JVM
    as a grandchild) on ``cpu``; a process gone is forgotten."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        _adopted_processes.discard(pid)
        return
    for tid in tasks:
        _pin(int(tid), cpu)
        try:
            children = Path(f"/proc/{pid}/task/{tid}/children").read_text().split()
        except OSError:
            children = []
        for child in children:
            _pin_process(int(child), cpu)


def adopt_process(pid: int) -> None:
    """An implementation's process: on the home CPU now if there is one, else at the claim."""
    if not enabled():
        return
    _adopted_processes.add(pid)
    if _claim is not None and _claim[0] == os.getpid():
        _pin_process(pid, _claim[1])


def forget_process(pid: int) -> None:
    """The process has been stopped (its pid may be reused by someone else's)."""
    _adopted_processes.discard(pid)


def adopt_thread() -> int:
    """The calling thread calls implementations (a watchdog's worker): as ``adopt_process``.
    Returns its native id, for ``disown_thread``."""
    tid = threading.get_native_id()
    if enabled():
        _adopted_threads.add(tid)
        if _claim is not None and _claim[0] == os.getpid():
            _pin(tid, _claim[1])
    return tid


def disown_thread(tid: int) -> None:
    """A worker abandoned in a call that never returned: it may go on computing, so it is
    given the process's CPUs back rather than left to compete with rmqha on its own."""
    _adopted_threads.discard(tid)
    if _claim is not None and _claim[0] == os.getpid():
        try:
            os.sched_setaffinity(tid, _claim[3])
        except OSError:
            pass


@contextlib.contextmanager
def colocated(wanted: bool = True) -> Iterator[int | None]:
    """Run the calling thread on the home CPU inside the block (when ``wanted`` and a home
    CPU is to be had); yields the CPU, or None when nothing was pinned."""
    cpu = home_cpu() if wanted else None
    if cpu is None:
        yield None
        return
    try:
        before = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {cpu})
    except OSError:  # a container that forbids it: run where the kernel puts us
        yield None
        return
    try:
        yield cpu
    finally:
        try:
            os.sched_setaffinity(0, before)
        except OSError:
            pass


def _forget_after_fork() -> None:
    global _claim
    _adopted_processes.clear()  # the parent's, not this child's
    _adopted_threads.clear()
    if _claim is not None:
        _claim[2].close()  # the parent still holds the lock: its file stays locked
        _claim = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
