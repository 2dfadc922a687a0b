"""``rmqha transcript record|replay``: an implementation's answers, recorded once, judged anywhere.

``record --adapter SPEC --out FILE`` asks the implementation a seeded sample of calls
of each operation (by default the round operations ``dledger.heartbeat_round`` and
``dledger.candidate_round`` where it answers them, else every operation it declares;
``--operation`` to choose), compares every answer with the spec under the profile it is
judged against, prints how many agreed and how many reproduce each known upstream
departure (named), and writes the transcript (a selection of the calls covering every
path the sample reached, rarest first, with the real answers). Exit 0 when every answer
agreed or was a known departure, 1 otherwise (the transcript is written either way); 2,
with no transcript written, when the implementation answered ``unsupported`` to every
call: nothing was judged.

``replay FILE...`` judges transcripts against the spec as it is now, without the
implementation: exit 0 when every recorded answer is the spec's or a known departure
(listed by name), 1 when one is not (each shown), 2 for a file that is not a
transcript, holds no calls, names a profile rmqha does not know, or names none where a
call depends on one and no ``--profile`` is given (nothing judged: there is no default,
a transcript is judged against the profile it was recorded under). The transcripts CI replays are in ``tests/transcripts/`` (DLedger:
docs/dledger.md, "Timing"; RocketMQ: docs/adapters.md, "jvm:rocketmq").
"""
from __future__ import annotations

import sys

from cli.args import SAMPLES, output_file


def register(sub) -> None:
    p = sub.add_parser("transcript", help="record an implementation's answers / replay them against the spec",
                       description=__doc__)
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    rec = verbs.add_parser("record", help="ask an implementation a seeded sample and write a transcript")
    rec.add_argument("--adapter", required=True, help="implementation (e.g. jvm:dledger=dledger-0.2:CLASSPATH)")
    rec.add_argument("--out", required=True, type=output_file, help="transcript file to write (.jsonl.gz)")
    rec.add_argument("--operation", action="append", default=None,
                     help="operation to record (repeatable; default: the round operations the implementation "
                          "answers, else every operation it declares)")
    rec.add_argument("--samples", type=SAMPLES, default=20_000, help="calls asked per operation (default: %(default)s)")
    rec.add_argument("--keep", type=SAMPLES, default=300, help="calls kept per operation (default: %(default)s)")
    rec.add_argument("--source", default="",
                     help="how the implementation was built (goes into the header; default: empty)")
    rec.add_argument("--quiet", action="store_true", help="no progress bar")
    rec.set_defaults(func=run_record)
    rep = verbs.add_parser("replay", help="judge transcripts against the spec, without the implementation")
    rep.add_argument("files", nargs="+", help="transcript files")
    rep.add_argument("--profile", default=None,
                     help="judge against this profile instead of the recorded one (default: the recorded one)")
    rep.set_defaults(func=run_replay)


def run_record(args) -> int:
    from tqdm import tqdm

    from adapters import resolve
    from adapters.errors import UserError
    from conformance.round_inputs import ROUND_INPUTS
    from conformance.transcript import inputs_for, record

    if args.samples < 1 or args.keep < 1:
        raise UserError("--samples and --keep must be at least 1")
    adapter = resolve(args.adapter)
    declared = adapter.info.operations
    # default: the round operations where the implementation answers them, else all it declares
    ops = args.operation or ([o for o in ROUND_INPUTS if o in declared] or sorted(declared))
    if not ops:  # nothing asked is nothing judged
        raise UserError(f"{args.adapter} does not answer any handler-level operation: nothing to record")
    inputs = inputs_for(ops, args.samples)
    missing = [o for o in ops if o not in declared]
    if missing:
        raise UserError(f"{args.adapter} does not answer {', '.join(missing)}: nothing to record")
    bar = tqdm(total=args.samples * len(ops), desc="record", unit="call", disable=args.quiet, file=sys.stderr)
    done = record(adapter, inputs, args.samples, args.keep, args.out, args.source, progress=lambda: bar.update(1))
    bar.close()
    h = done.header
    print(f"{args.adapter}: {h['implementation']} {h['version']}, judged against {h['profiles'] or 'no profile'}")
    for op, a in h["agreement"].items():
        if not a["asked"]:  # another operation was judged (else record raised): say this one was not
            print(f"  {op}: not applicable (answered 'unsupported' to all {args.samples} calls)")
            continue
        known = "".join(f"; {label} x{n}" for label, n in sorted(a.get("departures", {}).items()))
        print(f"  {op}: {a['agreed']} of {a['asked']} answers agree with the spec{known}")
    for m in done.mismatches[:3]:
        print(m.render())
    print(f"wrote {args.out} ({done.kept} calls)")
    return 0 if not done.mismatches else 1


def run_replay(args) -> int:
    from conformance.transcript import replay

    status = 0
    for path in args.files:
        r = replay(path, args.profile)
        h = r.header
        total = sum(r.calls.values())
        who = " ".join(str(h[k]) for k in ("implementation", "version") if h.get(k) is not None) or "(unnamed)"
        print(f"{path}: {who} judged against {r.profile}: "
              f"{total - len(r.mismatches)} of {total} recorded answers are the spec's or a known departure")
        for op, paths in sorted(r.paths.items()):
            print(f"  {op}: {len(paths)} paths: " + ", ".join(f"{k} x{v}" for k, v in sorted(paths.items())))
            for label, n in sorted(r.departures.get(op, {}).items()):
                print(f"    known departure {label}: {n} recorded answer(s)")
        for m in r.mismatches[:5]:
            print(m.render())
        if not r.agreed:
            status = 1
    return status
