"""``rmqha fingerprint --adapter SPEC``: which profile does each procedure match?

Runs every handler-level operation the implementation offers on the same deterministic,
boundary-biased inputs (the differential tests' strata, plus DLedger's seeded cases).
An operation whose answer depends on the profile (DLedger's, the controller's calls, the
classic group's profile-dependent procedures) is run against the spec under every
profile, and the profiles it reproduces are printed (for example ``handle_vote:
dledger-0.2/0.4``); one matching none is ``no profile``: it differs from every known
release there (run the differential tests to see the first difference). An operation no
profile changes (the epoch file, the broker's SyncStateSet checks, most classic
procedures) is listed under "no profile variation" with its verdict against the spec,
known upstream departures named, never as a match.

Nothing to judge is an error (exit 2): an implementation with no handler-level operation
in common with rmqha, or one that answers ``unsupported`` to every input.
"""
from __future__ import annotations

import sys

from cli.args import SAMPLES


def register(sub) -> None:
    p = sub.add_parser("fingerprint", help="which spec profile each procedure of an implementation matches",
                       description=__doc__)
    p.add_argument("--adapter", default="reference", help="implementation (default: %(default)s)")
    p.add_argument("--samples", type=SAMPLES, default=400, help="inputs per procedure (default: %(default)s)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    from tqdm import tqdm

    from adapters import resolve
    from adapters.errors import NotApplicable
    from adapters.operations import OPERATIONS
    from conformance.departures import counted
    from conformance.fingerprint import INPUTS, PROBE_OPERATION, SHORT, VARIATION_FREE, fingerprint, probes, \
        render, variation_free

    adapter = resolve(args.adapter)
    info = adapter.info
    common = sorted(info.operations & set(OPERATIONS))
    if not common:
        raise NotApplicable(f"{args.adapter}: no handler-level operation in common with rmqha (it declares "
                            f"{', '.join(sorted(info.operations)) or 'none'}): nothing to fingerprint")
    print(f"{args.adapter}: {info.implementation} {info.version}")
    for family in sorted(info.profiles):
        print(f"  {info.judged_against(family)}")
    offered = [p for p in probes() if PROBE_OPERATION.get(p, p) in info.operations]
    free = [name for name in VARIATION_FREE if name in info.operations]
    bar = tqdm(total=len(probes()) + len(free), desc="fingerprint", unit="operation", disable=args.quiet,
               file=sys.stderr)
    departures: dict = {}
    matches = fingerprint(adapter, args.samples, progress=lambda: bar.update(1), departures=departures)
    bar.update(len(probes()) - len(offered))
    verdicts = variation_free(adapter, args.samples, progress=lambda: bar.update(1))
    bar.close()
    dledger = any(op in INPUTS for op in offered)  # a DLedger table, its missing procedures not applicable
    shown = {op: names for op, names in matches.items() if op in offered or (dledger and op in INPUTS)}
    width = max([len(SHORT.get(op, op)) for op in shown] + [len(v.operation) for v in verdicts])
    for op, names in shown.items():
        text = "not applicable" if names is None else ("no profile" if not names else ", ".join(names))
        known = counted(departures.get(op, {}))
        print(f"  {SHORT.get(op, op):{width}s}  {text}" + (f" but for known departures ({known})" if known and names else ""))
    if verdicts:
        print("  no profile variation (judged against the spec):")
        for v in verdicts:
            known = counted(v.departures)
            print(f"  {v.operation:{width}s}  {v.verdict}" + (f" ({known})" if known else ""))
    print(render(matches))
    if not any(names is not None for names in matches.values()) and not any(v.judged for v in verdicts):
        raise NotApplicable(f"{args.adapter} answered 'unsupported' to every input of every operation: "
                            "no sample judged, nothing to fingerprint")
    for family, judged in sorted(info.profiles.items()):
        answered = {op: names for op, names in matches.items()
                    if names is not None and OPERATIONS[PROBE_OPERATION.get(op, op)].namespace == family}
        if answered:
            differ = [SHORT.get(op, op) for op, names in answered.items() if judged not in names]
            print(f"{judged}: " + (f"differs in {', '.join(differ)}" if differ
                                   else "reproduced by every profile-dependent procedure the implementation answers"))
    wrong = [f"{v.operation} ({v.verdict})" for v in verdicts if v.verdict in ("disagrees", "error")]
    if wrong:  # the lines above speak of profiles only: say what no profile explains
        print(f"against the spec, where no profile varies: {', '.join(wrong)} (the differential tests show the "
              f"first difference: pytest --adapter=SPEC tests/conformance/test_handler_level.py)")
    return 0
