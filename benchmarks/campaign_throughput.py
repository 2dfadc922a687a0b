"""Campaign throughput: Spark local[2] against one plain process, for the same runs.

Runs the same campaign (same seeds, same adapter, same settings) twice — once with
``--no-spark`` in this process, once as a Spark job on ``local[2]`` — and prints runs
per second for each, Spark's with and without its fixed start-up, and the ratio.

    python benchmarks/campaign_throughput.py [--runs 3000]

Target: the Spark campaign at least 1.7x the single-process throughput on 2 cores.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from results import io  # noqa: E402
from conformance.spark_campaign import CampaignSpec, run_campaign  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3000)
    ap.add_argument("--chunk-size", type=int, default=50)
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="rmqha-throughput-"))
    spec = CampaignSpec("throughput", "dledger", ("reference",), args.runs, chunk_size=args.chunk_size)
    try:
        t = time.perf_counter()
        plain = run_campaign(base / "plain", spec, master=None, progress=False)
        plain_s = time.perf_counter() - t

        from results.spark import spark_session

        t = time.perf_counter()
        spark_session("local[2]").range(1).count()  # start-up and a first job, measured apart
        startup_s = time.perf_counter() - t
        t = time.perf_counter()
        sparked = run_campaign(base / "spark", spec, master="local[2]", progress=False)
        spark_s = time.perf_counter() - t
        assert plain["committed_runs"] == sparked["committed_runs"] == args.runs
        same = sorted(r["seed"] for r in io.read_table(base / "spark", "runs").to_pylist()) == list(range(args.runs))
        print(f"runs: {args.runs} (chunks of {args.chunk_size}); identical seeds committed: {same}")
        print(f"one process        : {plain_s:7.1f} s  {args.runs / plain_s:8.1f} runs/s")
        print(f"Spark local[2]     : {spark_s:7.1f} s  {args.runs / spark_s:8.1f} runs/s"
              f"  (session start-up {startup_s:.1f} s measured apart)")
        print(f"with start-up      : {spark_s + startup_s:7.1f} s  {args.runs / (spark_s + startup_s):8.1f} runs/s")
        ratio = plain_s / spark_s
        print(f"speed-up           : {ratio:.2f}x  (target >= 1.7x: {'ok' if ratio >= 1.7 else 'MISSED'}); "
              f"with start-up {plain_s / (spark_s + startup_s):.2f}x")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
