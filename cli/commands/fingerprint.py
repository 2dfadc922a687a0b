"""``rmqha fingerprint --adapter SPEC``: which profile does each procedure match?

Runs every handler-level DLedger operation the implementation offers on the same
deterministic inputs against the spec under every profile, and prints, per procedure,
the profiles it reproduces (for example ``handle_vote: dledger-0.2/0.4``). A procedure
matching no profile is printed as ``no profile``: the implementation differs from every
known release there (run the differential tests to see the first difference).

An implementation that declares no DLedger operation (``jvm:rocketmq``, an epoch-file
shim) gets, instead, the handler-level verdict of each operation it declares, under the
profile it is judged against, known upstream departures named (as ``rmqha check`` does).
"""
from __future__ import annotations

import sys

from cli.args import POSITIVE


def register(sub) -> None:
    p = sub.add_parser("fingerprint", help="which spec profile each procedure of an implementation matches",
                       description=__doc__)
    p.add_argument("--adapter", default="reference", help="implementation (default: %(default)s)")
    p.add_argument("--samples", type=POSITIVE, default=400, help="inputs per procedure (default: %(default)s)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    from tqdm import tqdm

    from adapters import resolve
    from conformance.fingerprint import INPUTS, SHORT, fingerprint, render

    adapter = resolve(args.adapter)
    info = adapter.info
    if not any(op.startswith("dledger.") for op in info.operations):
        return _handler_level(args, adapter)
    print(f"{args.adapter}: {info.implementation} {info.version}")
    print(f"  {info.judged_against('dledger')}")
    bar = tqdm(total=len(INPUTS), desc="fingerprint", unit="procedure", disable=args.quiet, file=sys.stderr)
    matches = fingerprint(adapter, args.samples, progress=lambda: bar.update(1))
    bar.close()
    width = max(len(v) for v in SHORT.values())
    for op, names in matches.items():
        shown = "not applicable" if names is None else ("no profile" if not names else ", ".join(names))
        print(f"  {SHORT[op]:{width}s}  {shown}")
    print(render(matches))
    judged = info.profiles.get("dledger")
    answered = {op: names for op, names in matches.items() if names is not None}
    if judged and answered:
        differ = [SHORT[op] for op, names in answered.items() if judged not in names]
        print(f"{judged}: " + (f"differs in {', '.join(differ)}" if differ
                               else "reproduced by every procedure the implementation answers"))
    return 0


def _handler_level(args, adapter) -> int:
    """An implementation without DLedger operations (``jvm:rocketmq``): each operation it declares,
    judged under the profile it is judged against, known upstream departures named."""
    from tqdm import tqdm

    from conformance.handler_check import check_handlers

    info = adapter.info
    print(f"{args.adapter}: {info.implementation} {info.version}")
    for family in sorted(info.profiles):
        print(f"  {info.judged_against(family)}")
    bar = tqdm(total=len(info.operations), desc="fingerprint", unit="operation", disable=args.quiet, file=sys.stderr)
    verdicts = check_handlers(adapter, samples=min(args.samples, 200), progress=lambda: bar.update(1))
    bar.close()
    width = max((len(v.operation) for v in verdicts), default=0)
    for v in verdicts:
        known = "; ".join(f"{label} x{n}" for label, n in sorted(v.departures.items()))
        print(f"  {v.operation:{width}s}  {v.verdict}" + (f" ({known})" if known else ""))
    return 0
