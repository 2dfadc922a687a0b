"""``rmqha transcript record|replay``: an implementation's answers, recorded once, judged anywhere.

``record --adapter SPEC --out FILE`` asks the implementation a seeded sample of calls
of each round operation (``dledger.heartbeat_round``, ``dledger.candidate_round``;
``--operation`` to choose), compares every answer with the spec under the profile it is
judged against, prints how many agreed, and writes the transcript (a selection of the
calls covering every path the sample reached, with the real answers). Exit 0 when
every answer agreed, 1 otherwise (the transcript is written either way).

``replay FILE...`` judges transcripts against the spec as it is now, without the
implementation: exit 0 when every recorded answer is the spec's, 1 when one is not
(each shown), 2 for a file that is not a transcript. The DLedger transcripts CI
replays are in ``tests/transcripts/`` (docs/dledger.md, "Timing").
"""
from __future__ import annotations

import sys

from cli.args import POSITIVE


def register(sub) -> None:
    p = sub.add_parser("transcript", help="record an implementation's answers / replay them against the spec",
                       description=__doc__)
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    rec = verbs.add_parser("record", help="ask an implementation a seeded sample and write a transcript")
    rec.add_argument("--adapter", required=True, help="implementation (e.g. jvm:dledger=dledger-0.2:CLASSPATH)")
    rec.add_argument("--out", required=True, help="transcript file to write (.jsonl.gz)")
    rec.add_argument("--operation", action="append", default=None,
                     help="round operation to record (repeatable; default: every round operation)")
    rec.add_argument("--samples", type=POSITIVE, default=20_000, help="calls asked per operation (default: %(default)s)")
    rec.add_argument("--keep", type=POSITIVE, default=300, help="calls kept per operation (default: %(default)s)")
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
    from conformance.transcript import record

    ops = args.operation or list(ROUND_INPUTS)
    unknown = [o for o in ops if o not in ROUND_INPUTS]
    if unknown:
        raise UserError(f"--operation {unknown[0]}: not a round operation (one of {', '.join(ROUND_INPUTS)})")
    if args.samples < 1 or args.keep < 1:
        raise UserError("--samples and --keep must be at least 1")
    adapter = resolve(args.adapter)
    missing = [o for o in ops if o not in adapter.info.operations]
    if missing:
        raise UserError(f"{args.adapter} does not answer {', '.join(missing)}: nothing to record")
    bar = tqdm(total=args.samples * len(ops), desc="record", unit="call", disable=args.quiet, file=sys.stderr)
    done = record(adapter, {o: ROUND_INPUTS[o] for o in ops}, args.samples, args.keep, args.out, args.source,
                  progress=lambda: bar.update(1))
    bar.close()
    h = done.header
    print(f"{args.adapter}: {h['implementation']} {h['version']}, judged against {h['profile']}")
    for op, a in h["agreement"].items():
        print(f"  {op}: {a['agreed']} of {a['asked']} answers agree with the spec")
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
        print(f"{path}: {h.get('implementation')} {h.get('version')} judged against {r.profile}: "
              f"{total - len(r.mismatches)} of {total} recorded answers are the spec's")
        for op, paths in sorted(r.paths.items()):
            print(f"  {op}: {len(paths)} paths: " + ", ".join(f"{k} x{v}" for k, v in sorted(paths.items())))
        for m in r.mismatches[:5]:
            print(m.render())
        if not r.agreed:
            status = 1
    return status
