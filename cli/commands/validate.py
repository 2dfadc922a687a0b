"""``rmqha validate TRACE``: judge every step of a recorded trace against the spec.

TRACE is an ``rmqha-trace/1`` step trace (docs/traces.md): a header line, then one
JSON line per step of a node (its input, its view after, what it sent and
persisted), written by an implementation's logging hook or by ``rmqha replay
--step-trace``. Each step is judged by the same step-conformance code that judges
live nodes in campaigns (docs/step-conformance.md); the trace is read as a stream,
so its length does not bound memory. The first step the spec does not allow is
printed with the spec's expectation and what was observed.

Exit status: 0 every step allowed, 1 a step the spec does not allow (said on stderr
too), 2 an unreadable trace (one line naming the line and field) or one where nothing
was judged (no step, or no step any procedure judges).
"""
from __future__ import annotations

import sys

from conformance.errors import UserError
from conformance.traces import REPLICA_PROFILES, Validation, validate
from spec.controller.profiles import PROFILES as CONTROLLER_PROFILES
from spec.dledger.profiles import PROFILES


def register(sub) -> None:
    p = sub.add_parser("validate", help="judge every step of a recorded trace (rmqha-trace/1) against the spec",
                       description=__doc__)
    p.add_argument("trace", help="step trace, JSON lines ('-' for stdin)")
    p.add_argument("--profile", default=None, choices=sorted(PROFILES) + sorted(set(REPLICA_PROFILES) | set(CONTROLLER_PROFILES)),
                   help="profile to judge against (default: the one the trace's header declares)")
    p.add_argument("--all", action="store_true",
                   help="go on after the first disallowed step and print every one (default: stop at the first)")
    p.set_defaults(func=run)


def run(args) -> int:
    name = "<stdin>" if args.trace == "-" else args.trace
    try:
        f = sys.stdin if args.trace == "-" else open(args.trace, encoding="utf-8", errors="strict")
    except OSError as exc:
        raise UserError(f"{name}: cannot read: {exc.strerror}") from None
    try:
        result = validate(f, name, args.profile, stop_at_first=not args.all)
    except UnicodeDecodeError as exc:
        raise UserError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    finally:
        if f is not sys.stdin:
            f.close()
    if result.events == 0:
        raise UserError(f"{name}: the trace has a header but no step: nothing was judged")
    if not result.judged and not result.findings:
        raise UserError(f"{name}: {result.events} steps, none that a procedure judges (no input, no change, "
                        "no output): nothing was judged")
    report(name, result)
    if result.findings:
        first = result.findings[0]
        print(f"exit status 1: {len(result.findings)} step(s) the spec does not allow, the first at line "
              f"{first.line} ({first.violation.property})", file=sys.stderr)
        return 1
    return 0


def report(name: str, result: Validation) -> None:
    h = result.header
    who = f" of {h.implementation}" if h.implementation else ""
    for f in result.findings:
        e, v = f.event, f.violation
        what = (f"{type(e.payload).__name__} from {e.src}" if e.input == "message" else e.input)
        print(f"{name}:{f.line}: {v.property}: {e.node} at t={e.time} ms, input {what}")
        print(f"  {v.message.split(': expected ')[0]}")
        print(f"  expected: {v.expected}")
        print(f"  observed: {v.observed}")
    verdict = (f"{len(result.findings)} step(s) the spec does not allow" if result.findings
               else "every step is one the spec allows")
    print(f"{name}: {result.events} steps{who} judged against {result.profile} "
          f"({len(result.nodes)} nodes): {verdict}")
    judged = ", ".join(f"{p} {n}" for p, n in sorted(result.judged.items()))
    print(f"  steps judged per procedure: {judged or 'none'}")
