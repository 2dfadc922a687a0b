"""Does the default ``rmqha check`` catch every slip of an independent implementation?

tests/fixtures/js/dledger_node.js is a DLedger node written in JavaScript from the
protocol's semantics, with plausible single slips (``--slip NAME``: the kind a port makes
in vote counting, log appends, truncation, the commit watermark, durability or the
lease); tests/fixtures/js/replica_node.js is a RocketMQ 5 broker replica (node kind
``replica``, the ``truncation`` scenario) written the same way, with slips in the
handshake's comparison and cut, role changes, batches, confirmOffset and durability
(``--node replica``); tests/fixtures/js/classic_node.js is a classic master/slave broker (node
kind ``classic``, the ``classic`` scenario; ``--node classic``). For the correct node and each slip, this runs the default check's campaign
(``rmqha check``'s settings: its runs, seeds, group sizes, fault mixes and search, wave
after wave) in its order, stops at the first failing run (the campaign's verdict is then *not conformant*
whatever the later runs say), and shrinks that failure with the default budget. Prints,
per slip, the run that caught it and the property, the CPU seconds to get there (this
process's and the implementation's: its server, kept open between runs, read from /proc),
and the shrink's time against the target (median <=
5 s per CPU-second), with the machine's load.

    python benchmarks/slips.py [--node dledger|replica|classic] [--slip NAME ...] [--runs 200] [--scripts DIR] [--no-deadlines]

Needs ``node`` on the PATH. A slip not caught in ``--runs`` runs is a MISS.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.throughput import cpu_with_implementations  # noqa: E402
from cli.commands import run as run_command  # noqa: E402
from cli.main import build_parser  # noqa: E402
from conformance.campaign import DEFAULT_SHRINK, run_one, shrink_result  # noqa: E402
from conformance.search import SearchState  # noqa: E402
from conformance.spark_campaign import chunk_configs, earlier_chunks, plan_waves, search_chunk  # noqa: E402
from reference.simulator import Simulator  # noqa: E402

# --node NAME -> (the fixture, the scenario its default check runs)
NODES = {
    "dledger": (ROOT / "tests" / "fixtures" / "js" / "dledger_node.js", "dledger"),
    "replica": (ROOT / "tests" / "fixtures" / "js" / "replica_node.js", "truncation"),
    "classic": (ROOT / "tests" / "fixtures" / "js" / "classic_node.js", "classic"),
}
NODE, SCENARIO = NODES["dledger"]
TARGET_SHRINK_MEDIAN_S = 5.0


def load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def slips(node: Path = NODE) -> list[str]:
    """The slips the fixture declares (its SLIPS table)."""
    return re.findall(r"^\s+'([a-z0-9-]+)': '", node.read_text(), re.M)


def node_command(node: Path) -> str:
    """How the adapter names the fixture: relative to the repository when run from it (so
    a written script's ``adapter`` line replays from a checkout anywhere), else absolute."""
    return str(node.relative_to(ROOT)) if Path.cwd().resolve() == ROOT else str(node)


def first_failure(adapter: str, runs: int, scenario: str = SCENARIO):
    """(runs taken, the first failing result or None, CPU seconds) over the default
    check's campaign of ``scenario``, in its order."""
    args = build_parser().parse_args(["check", "--adapter", adapter, "--runs", str(runs), "--scenario", scenario])
    spec = run_command.campaign_spec_from(args)
    cpu = cpu_with_implementations()
    taken = 0
    learnt: dict[str, SearchState] = {}  # chunk -> what its search learnt (the campaign commits it)
    for chunk in (c for wave in plan_waves(spec) for c in wave):
        configs = chunk_configs(spec, chunk)
        known = SearchState()
        for c in earlier_chunks(spec, chunk):
            known = known.merge(learnt[c.id])
        learnt[chunk.id] = SearchState()
        results = (search_chunk(spec, configs, run_one, known, learnt[chunk.id]) if spec.search
                   else map(run_one, configs))
        for result in results:
            taken += 1
            if result.verdict == "error":
                raise SystemExit(f"{adapter}: run {result.config.seed} errored: {result.error}")
            if result.first_violation is not None:
                return taken, result, cpu_with_implementations() - cpu
    return taken, None, cpu_with_implementations() - cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--node", choices=sorted(NODES), default="dledger",
                    help="which JS fixture: dledger (dledger_node.js, scenario dledger), replica (replica_node.js, "
                         "scenario truncation) or classic (classic_node.js, scenario classic) (default: %(default)s)")
    ap.add_argument("--slip", action="append", default=None, help="slips to try (default: every one, and the correct node)")
    ap.add_argument("--runs", type=int, default=run_command.DEFAULTS["runs"], help="the campaign's runs (default: check's)")
    ap.add_argument("--scripts", type=Path, default=None,
                    help="write each slip's shrunk counterexample there as SLIP.rmqha (default: none written)")
    ap.add_argument("--no-deadlines", action="store_true",
                    help="tick the nodes every 10 ms whatever deadlines they give: the same runs, at the cost of a "
                         "node that gives none (docs/adapter-protocol.md, next_deadline)")
    args = ap.parse_args()
    if args.no_deadlines:
        Simulator.use_deadlines = False
    if shutil.which("node") is None:
        print("node is not installed: nothing to measure", file=sys.stderr)
        return 2
    node, scenario = NODES[args.node]
    names = args.slip or [""] + slips(node)
    ticked = "; ticked every 10 ms (--no-deadlines)" if args.no_deadlines else ""
    print(f"default check campaign ({args.runs} runs, scenario {scenario}) against {node.relative_to(ROOT)}{ticked}; "
          f"{load()}")
    print(f"{'slip':26s} {'caught by':44s} {'run':>5s} {'cpu s':>7s} {'shrink cpu s':>12s} {'wall s':>7s} {'steps':>12s}")
    shrinks, walls, missed = [], [], []
    for name in names:
        adapter = f"stdio:node {node_command(node)}" + (f" --slip {name}" if name else "")
        taken, failure, cpu = first_failure(adapter, args.runs, scenario)
        label = name or "(correct node)"
        if failure is None:
            verdict = "passed every run" if not name else "MISS: passed every run"
            if name:
                missed.append(name)
            print(f"{label:26s} {verdict:44s} {taken:5d} {cpu:7.1f}", flush=True)
            continue
        started, wall = cpu_with_implementations(), time.perf_counter()
        cx = shrink_result(failure, DEFAULT_SHRINK, (failure.first_violation,))
        shrink_cpu, wall = cpu_with_implementations() - started, time.perf_counter() - wall
        steps = f"{cx[0].original_steps} -> {cx[0].shrunk_steps}" if cx else "-"
        if cx and args.scripts is not None and name:
            args.scripts.mkdir(parents=True, exist_ok=True)
            (args.scripts / f"{name}.rmqha").write_text(cx[0].script)
        if name:
            shrinks.append(shrink_cpu)
            walls.append(wall)
        else:
            missed.append("(the correct node failed)")
        print(f"{label:26s} {failure.first_violation[:44]:44s} {taken:5d} {cpu:7.1f} {shrink_cpu:12.2f} {wall:7.1f} {steps:>12s}",
              flush=True)
    if shrinks:
        med = statistics.median(shrinks)
        print(f"shrink: median {med:.2f} CPU s (this process and the implementation's), max {max(shrinks):.2f}; "
              f"median {statistics.median(walls):.1f} s wall; target median <= {TARGET_SHRINK_MEDIAN_S:g} s per CPU-second: "
              f"{med / TARGET_SHRINK_MEDIAN_S:.2f}x of it, {'ok' if med <= TARGET_SHRINK_MEDIAN_S else 'MISS'}")
    print(f"caught {len(shrinks)} of {len([n for n in names if n])} slips; "
          f"{'every slip caught' if not missed else 'MISS: ' + ', '.join(missed)}; {load()}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
