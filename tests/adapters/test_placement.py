"""rmqha beside the implementation on one CPU (adapters/placement.py).

Each scenario runs in a fresh interpreter whose temporary directory is the test's own,
so its claims (lock files per CPU) are its alone and this process's home CPU, if it has
one, is left as it is. Pinning needs two CPUs to choose from: on one the tests skip.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="co-location pins to one of several CPUs: this machine offers fewer than two",
)

STDIO = f"stdio:{sys.executable} -m cli serve-stdio"


def run_python(code: str, tmp_path: Path, **env) -> dict:
    """Run ``code`` in a fresh interpreter (TMPDIR: the test's); the JSON it prints last."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "TMPDIR": str(tmp_path), **env})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_run_against_a_process_runs_beside_it_and_gives_the_cpus_back(tmp_path):
    out = run_python(f"""
        import json, os
        import adapters
        from adapters import placement
        from conformance.campaign import execute, plan_configs
        from conformance.scenarios.registry import get_scenario
        scenario = get_scenario("controller")
        script = scenario.generate(next(iter(plan_configs("t", 1, 0, scenario="controller", duration_ms=2000))))
        before = sorted(os.sched_getaffinity(0))
        adapter = adapters.resolve({STDIO!r})  # started before any claim (a campaign's manifest does this)
        child_before = sorted(os.sched_getaffinity(adapter.proc.pid))
        seen = []
        execute(script, {STDIO!r}, until=lambda cluster: seen.append(sorted(os.sched_getaffinity(0))) or False)
        print(json.dumps(dict(before=before, child_before=child_before, during=seen[0], after=sorted(os.sched_getaffinity(0)),
                              child=sorted(os.sched_getaffinity(adapter.proc.pid)), home=placement.home_cpu())))
    """, tmp_path)
    assert out["home"] in out["before"]
    assert out["child_before"] == out["before"]  # hello alone claims nothing
    assert out["during"] == [out["home"]]  # the run: on the home CPU ...
    assert out["child"] == [out["home"]]  # ... with the implementation's process, adopted at the claim
    assert out["after"] == out["before"]  # and the thread's CPUs back afterwards


def test_a_run_of_rmqhas_own_reference_pins_nothing(tmp_path):
    out = run_python("""
        import json, os
        from adapters import placement
        from conformance.campaign import execute, plan_configs
        from conformance.scenarios.registry import get_scenario
        scenario = get_scenario("controller")
        script = scenario.generate(next(iter(plan_configs("t", 1, 0, scenario="controller", duration_ms=2000))))
        seen = []
        execute(script, "reference", until=lambda cluster: seen.append(sorted(os.sched_getaffinity(0))) or False)
        print(json.dumps(dict(before=sorted(os.sched_getaffinity(0)), during=seen[0], claim=placement._claim is not None)))
    """, tmp_path)
    assert out["during"] == out["before"] and not out["claim"]


def test_turned_off_by_the_environment(tmp_path):
    out = run_python(f"""
        import json, os
        import adapters
        from adapters import colocated_with
        adapter = adapters.resolve({STDIO!r})
        with colocated_with(adapter) as cpu:
            inside = sorted(os.sched_getaffinity(0))
        print(json.dumps(dict(cpu=cpu, inside=inside, all=sorted(os.sched_getaffinity(0)),
                              child=sorted(os.sched_getaffinity(adapter.proc.pid)))))
    """, tmp_path, RMQHA_COLOCATE="0")
    assert out["cpu"] is None and out["inside"] == out["all"] == out["child"]


def test_processes_claim_different_cpus_and_a_fork_claims_its_own(tmp_path):
    """Spark's workers are forks of one daemon: each must get a CPU of its own, and when
    every CPU is claimed the rest run unpinned."""
    out = run_python("""
        import json, os
        from adapters import placement
        cpus = sorted(os.sched_getaffinity(0))
        mine = placement.home_cpu()
        children = []
        hold_r, hold_w = os.pipe()  # children keep their claims until this closes
        for _ in range(len(cpus)):  # one more claimant than CPUs, this process included
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                with placement.colocated() as cpu:
                    pinned = sorted(os.sched_getaffinity(0))
                os.write(w, json.dumps([cpu, pinned]).encode())
                os.close(w)
                os.close(hold_w)
                os.read(hold_r, 1)
                os._exit(0)
            os.close(w)
            children.append((pid, r))
        answers = [json.loads(os.read(r, 1000)) for pid, r in children]
        os.close(hold_w)
        for pid, r in children:
            os.waitpid(pid, 0)
        print(json.dumps(dict(cpus=cpus, mine=mine, answers=answers)))
    """, tmp_path)
    claimed = [out["mine"]] + [cpu for cpu, _ in out["answers"] if cpu is not None]
    assert sorted(claimed) == out["cpus"]  # every CPU claimed once
    unpinned = [pinned for cpu, pinned in out["answers"] if cpu is None]
    assert unpinned == [out["cpus"]]  # the one too many runs where the kernel puts it
    assert all(pinned == [cpu] for cpu, pinned in out["answers"] if cpu is not None)


def test_a_watchdog_thread_runs_beside_the_caller(tmp_path):
    """A ``python:`` implementation is called on a watchdog's thread: the hand-over between
    the two threads is what co-location saves, so the worker is adopted too."""
    out = run_python("""
        import json, os, threading
        import adapters
        from adapters import colocated_with
        adapter = adapters.resolve("python:tests.fixtures.spec_handlers:SpecHandlers")
        worker = next(t for t in threading.enumerate() if t.name.startswith("rmqha-adapter"))
        before = sorted(os.sched_getaffinity(worker.native_id))
        with colocated_with(adapter) as cpu:
            during = sorted(os.sched_getaffinity(worker.native_id))
        print(json.dumps(dict(cpu=cpu, before=before, during=during, all=sorted(os.sched_getaffinity(0)))))
    """, tmp_path)
    assert out["before"] == out["all"]
    assert out["during"] == [out["cpu"]]



def test_pytest_with_an_adapter_runs_the_session_beside_it(tmp_path):
    probe = "tests/adapters/test_session_placement.py"
    for env in ({}, {"RMQHA_COLOCATE": "0"}):
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", probe, "--adapter", STDIO],
                              cwd=ROOT, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "TMPDIR": str(tmp_path), **env})
        assert "1 passed" in proc.stdout, (env, proc.stdout[-2000:])
