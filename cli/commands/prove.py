"""``rmqha prove``: z3 checks of the epoch truncation algorithm and of truncation cases.

``rmqha prove truncation [--max-epochs K] [--variant NAME]`` proves the algorithm's
properties over every history of the bounded model (spec/proofs/truncation_model.py)
and refutes each known-bad variant with a concrete counterexample. Exit 0 when the
algorithm is proved and every bad variant refuted, 1 otherwise.

``rmqha prove cases FILE...`` checks truncation case files (docs/truncation-cases.md)
against the spec, with a z3-backed explanation per case. Exit 0 when every case
agrees, 1 when one disagrees, 2 for a malformed file.
"""
from __future__ import annotations

import sys

import attrs

from cli.args import whole
from conformance.errors import UserError

# The z3 model unrolls every offset of every round, and each epoch costs about ten times
# the last (measured, 2 cores: the reference's six proofs take 16 s at K=3, 167 s at K=4;
# every variant too takes 75 s at K=3 and more than 10 min at K=4): K=5 would run for
# hours, and a larger K exhausts memory building the model before the solver starts.
MAX_EPOCHS = 4
# messages per epoch cost far less (K=3: 16 s at W=2, 25 s at W=4, 86 s at W=8); each bound
# was measured with the other at its default, so K=4 with W=8 takes longer still
MAX_MESSAGES = 8
# the solver's timeout per query: a day is far past any query's (minutes at K=4), and z3
# keeps it as a 32-bit count of milliseconds, so 4,294,968 s and more wrap round to a few
# (the proof "gives up" at once)
MAX_TIMEOUT_S = 86_400


def register(sub) -> None:
    p = sub.add_parser("prove", help="z3 proofs of the epoch truncation algorithm and of truncation cases",
                       description=__doc__)
    what = p.add_subparsers(dest="what", metavar="WHAT")
    what.required = True
    t = what.add_parser("truncation", help="prove the algorithm for bounded histories; refute the bad variants")
    t.add_argument("--max-epochs", type=whole(1, MAX_EPOCHS), default=3, metavar="K",
                   help="epochs in the bounded histories, re-confirmations of a master in its epoch counted "
                        f"(1 to {MAX_EPOCHS}; default: %(default)s; K=3 proves and refutes everything in about "
                        "75 s, K=4 the reference alone in about 3 min)")
    t.add_argument("--messages", type=whole(1, MAX_MESSAGES), default=2, metavar="W",
                   help=f"messages a master may write per epoch (1 to {MAX_MESSAGES}; default: %(default)s)")
    t.add_argument("--variant", default=None,
                   help="check only this algorithm: 'reference' or a known-bad variant (default: all)")
    t.add_argument("--timeout", type=whole(1, MAX_TIMEOUT_S), default=300, metavar="S",
                   help=f"solver timeout per query, in seconds (1 to {MAX_TIMEOUT_S:,}; default: %(default)s)")
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    t.set_defaults(func=run_truncation)
    c = what.add_parser("cases", help="check truncation case files against the spec")
    c.add_argument("files", nargs="+", metavar="FILE", help="truncation case files (JSON, docs/truncation-cases.md)")
    c.set_defaults(func=run_cases)


def _result(ok: bool, algorithm: bool, variants: bool) -> str:
    """The last line, naming only what was checked (``--variant`` checks one side alone)."""
    if algorithm and variants:
        return "the algorithm is proved and every bad variant refuted" if ok else "NOT all proved/refuted"
    if algorithm:
        return "the algorithm is proved (no bad variant checked)" if ok else "the algorithm is NOT proved"
    return "the bad variant is refuted (the algorithm not checked)" if ok else "the bad variant is NOT refuted"


def run_truncation(args) -> int:
    from tqdm import tqdm

    from spec.proofs.cases import EPOCH_REUSE_CASE, check_case
    from spec.proofs.truncation_model import PROPERTIES, VARIANTS, check

    if args.max_epochs < 1 or args.messages < 1:
        raise UserError("--max-epochs and --messages must be at least 1")
    names = ["reference"] + list(VARIANTS)
    if args.variant is not None:
        if args.variant not in names:
            raise UserError(f"unknown variant {args.variant!r} (known: {', '.join(names)})")
        names = [args.variant]
    ok = True
    bar = tqdm(total=len(names), desc="prove truncation", unit="algorithm", disable=args.quiet, file=sys.stderr)
    report: list[str] = []
    for name in names:
        bar.set_postfix_str(name)
        if name == "reference":
            verdicts = check(name, args.max_epochs, args.messages, PROPERTIES, args.timeout * 1000)
            for v in verdicts:
                report.append(f"{name:36s} {v.property:24s} {v.status:8s} {v.seconds:7.2f} s  ({v.bound})")
                if v.status != "proved":
                    ok = False
                    report.append(_indent(v.counterexample or "solver gave up (raise --timeout)"))
        else:
            refuted = None
            for prop in PROPERTIES:
                (v,) = check(name, args.max_epochs, args.messages, (prop,), args.timeout * 1000)
                if v.status == "refuted":
                    refuted = v
                    break
            if refuted is not None:
                report.append(f"{name:36s} {refuted.property:24s} refuted  {refuted.seconds:7.2f} s  ({refuted.bound})")
                report.append(_indent(refuted.counterexample))
            else:
                # no history of the model tells it apart; try the documented case outside the model
                result = check_case(attrs.evolve(EPOCH_REUSE_CASE, variant=name), VARIANTS)
                if not result.agrees:
                    report.append(f"{name:36s} {'prefix-agreement':24s} refuted  (outside the model: "
                                  f"{EPOCH_REUSE_CASE.name})")
                    report.append(_indent(
                        f"every history of the model proves it equivalent (epoch-start-agreement holds there);\n"
                        f"case {EPOCH_REUSE_CASE.name}: {EPOCH_REUSE_CASE.description}\n"
                        f"slave {EPOCH_REUSE_CASE.slave.epoch_file.render()} max {EPOCH_REUSE_CASE.slave.max_offset}; "
                        f"master {EPOCH_REUSE_CASE.master.epoch_file.render()} max "
                        f"{EPOCH_REUSE_CASE.master.max_offset}\n"
                        f"{name} answers: {result.answer}\n" + "\n".join(result.explanation)))
                else:
                    ok = False
                    report.append(f"{name:36s} {'(all)':24s} NOT REFUTED within K={args.max_epochs}")
        bar.update(1)
    bar.close()
    print("\n".join(report))
    print("result: " + _result(ok, "reference" in names, any(n != "reference" for n in names)))
    return 0 if ok else 1


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def run_cases(args) -> int:
    from conformance.truncation_cases import load_cases
    from spec.proofs.cases import check_case
    from spec.proofs.truncation_model import VARIANTS

    known = {"reference", *VARIANTS}
    loaded = [(path, load_cases(path, known)) for path in args.files]  # every file is valid before any check
    disagree = 0
    total = 0
    for path, cases in loaded:
        print(f"{path}:")
        for case in cases:
            total += 1
            result = check_case(case, VARIANTS)
            expected = "no consistent point" if case.expect.failure else f"consistent point {case.expect.consistent_point}"
            mark = "agrees   " if result.agrees else "DISAGREES"
            disagree += not result.agrees
            algo = f" [{case.variant}]" if case.variant != "reference" else ""
            print(f"  {mark} {case.name}{algo}: spec: {result.answer}; expected: {expected}")
            for line in result.explanation:
                print(f"      {line}")
    print(f"{total - disagree} of {total} cases agree")
    return 1 if disagree else 0
