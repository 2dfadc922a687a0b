"""Same seed, same outcome: digests of traces to compare two versions of the simulator.

Runs every scenario script under tests/scenarios/, a range of generated campaign
runs per scenario and a few runs of each of its mutants, with tracing on, and prints one line per run: what ran, the
SHA-256 of its canonical JSON-lines trace, and the violations it recorded. Save the
output before a change and compare after it:

    python benchmarks/trace_digests.py --seeds 300 > before.txt
    ... change the simulator ...
    python benchmarks/trace_digests.py --seeds 300 --compare before.txt

``--compare`` prints every run whose trace or violations differ and exits 1 if any
does (a changed trace must then be explained: docs/performance.md lists them).
"""
from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conformance.campaign import execute, plan_configs  # noqa: E402
from conformance.scenarios.registry import get_scenario  # noqa: E402
from conformance.script import read_script  # noqa: E402
from reference.simulator import Simulator  # noqa: E402

# scenario -> (group sizes, fault mixes) of the generated runs
GENERATED = {
    "dledger": ((3, 5), ("mixed", "crash", "partition", "lossy", "none")),
    "truncation": ((2, 3), ("mixed",)),
    "controller": ((3, 2), ("mixed",)),
}


def digest_of(script, adapter=None) -> str:
    ex = execute(script, adapter, record_trace=True)
    trace = hashlib.sha256(ex.cluster.trace_jsonl().encode()).hexdigest()[:16]
    violations = sorted({f"{r.step}:{r.violation.property}" for r in ex.violations})
    return f"{trace} error={ex.error is not None} violations={','.join(violations) or '-'}"


def lines(seeds: int, mutant_seeds: int, scenarios: list[str], scripts: bool):
    if scripts:
        for path in sorted((ROOT / "tests" / "scenarios").rglob("*.rmqha")):
            script = read_script(str(path))
            if script.scenario not in scenarios:
                continue
            script = script.with_steps(s for s in script.steps if s.op != "expect")
            yield f"script {path.relative_to(ROOT)}", digest_of(script)
    for name in scenarios:
        if name not in GENERATED:
            continue
        sizes, mixes = GENERATED[name]
        scenario = get_scenario(name)
        for config in plan_configs("digest", seeds, 0, scenario=name, group_sizes=sizes, fault_mixes=mixes):
            yield f"{name} seed={config.seed} size={config.group_size} mix={config.fault_mix}", digest_of(
                scenario.generate(config), config.adapter)
        mutants = [f"mutant:{m.name}" for m in scenario.mutants]
        for config in plan_configs("digest", mutant_seeds, 0, scenario=name, adapters=mutants, group_sizes=sizes):
            yield f"{name} {config.adapter} seed={config.seed} size={config.group_size}", digest_of(
                scenario.generate(config), config.adapter)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200, help="generated runs per scenario (default 200)")
    ap.add_argument("--mutant-seeds", type=int, default=10, help="generated runs per mutant (default 10)")
    ap.add_argument("--scenario", action="append", help="only this scenario (repeatable; default all)")
    ap.add_argument("--no-scripts", action="store_true", help="skip the scripts under tests/scenarios/")
    ap.add_argument("--no-deadlines", action="store_true",
                    help="tick every node every 10 ms, whatever its deadlines (the behaviour before deadlines)")
    ap.add_argument("--compare", metavar="FILE", help="an earlier output: print the runs that differ")
    args = ap.parse_args()
    if args.no_deadlines:
        Simulator.use_deadlines = False
    scenarios = args.scenario or ["dledger", "raft", "truncation", "controller"]
    before = {}
    if args.compare:
        for line in Path(args.compare).read_text().splitlines():
            key, _, value = line.partition("\t")
            before[key] = value
    changed = 0
    for key, value in lines(args.seeds, args.mutant_seeds, scenarios, not args.no_scripts):
        if not args.compare:
            print(f"{key}\t{value}", flush=True)
        elif key in before and before[key] != value:
            changed += 1
            print(f"CHANGED {key}\n  before {before[key]}\n  after  {value}", flush=True)
    if args.compare:
        print(f"{changed} run(s) changed")
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
