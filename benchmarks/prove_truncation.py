"""Solver time of the truncation proofs as the bound grows.

For K = 2.. (``--max-epochs``), proves every property of the reference algorithm
over all histories of the bounded model and prints the solver time per property.

    python benchmarks/prove_truncation.py [--max-epochs 5] [--messages 2] [--no-reconfirm]

``--no-reconfirm`` leaves re-confirmation rounds out of the histories: the model as it
was before they joined, for figures comparable with older measurements.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from spec.proofs.truncation_model import PROPERTIES, check  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-epochs", type=int, default=5)
    ap.add_argument("--messages", type=int, default=2)
    ap.add_argument("--no-reconfirm", action="store_true", help="histories without re-confirmation rounds")
    args = ap.parse_args()
    print(f"{'K':>2s} " + " ".join(f"{p:>22s}" for p in PROPERTIES) + f" {'total':>8s}")
    for k in range(2, args.max_epochs + 1):
        verdicts = check("reference", K=k, W=args.messages, timeout_ms=1_800_000, reconfirm=not args.no_reconfirm)
        cells = [f"{v.status[:7]:>8s} {v.seconds:9.2f}s" for v in verdicts]
        print(f"{k:>2d} " + " ".join(f"{c:>22s}" for c in cells) + f" {sum(v.seconds for v in verdicts):7.1f}s",
              flush=True)


if __name__ == "__main__":
    main()
