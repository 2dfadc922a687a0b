"""``rmqha replay FILE``: run a scenario script deterministically and report.

A counterexample stored by a campaign (or any hand-written script) replays to the
same trace every time. The exit status says whether the run matched the script's
own expectations: 0 when every ``expect`` held and no unexpected property was
violated, 1 otherwise, 2 for a malformed script, 3 when the implementation failed.

A script is data: its ``adapter`` line is used only when it names rmqha's own
implementations (``reference``, ``mutant:NAME``, ``pysyncobj``, for every role).
Replaying a script whose ``adapter`` line would start a process or load code
(``stdio:``, ``python:``, ``jvm:``), say a counterexample someone sent you, needs
``--adapter`` (which also lets you run it against your own build) or
``--use-script-adapter``.
"""
from __future__ import annotations

import shlex
import sys

from adapters import runs_in_process
from cli.args import output_file
from conformance.campaign import execute
from conformance.scenarios.controller import stack_setups
from conformance.errors import AdapterError, NotApplicable, UserError
from conformance.scenarios.base import ExpectationFailed
from conformance.script import in_file, read_script
from conformance.targets import combine_adapter_args, split_roles
from conformance.traces import SCENARIO_TRACES as TRACE_KINDS
from conformance.traces import TraceWriter


def _in_process(adapter: str) -> bool:
    """The reference and its mutants hand their durable state over in every step."""
    return adapter == "reference" or adapter.startswith("mutant:")


def register(sub) -> None:
    p = sub.add_parser("replay", help="replay a scenario script (e.g. a stored counterexample)",
                       description=__doc__)
    p.add_argument("file", help="scenario script (.rmqha)")
    p.add_argument("--adapter", action="append", default=None, metavar="SPEC",
                   help="implementation to run it against; ROLE=SPEC for one role, as in 'rmqha run' (default: "
                        "the script's 'adapter' line if it names reference, mutant:NAME or pysyncobj; else "
                        "reference)")
    p.add_argument("--use-script-adapter", action="store_true",
                   help="run the script's 'adapter' line even if it starts a process or loads code "
                        "(stdio:, python:, jvm:); only for scripts you trust")
    p.add_argument("--trace", metavar="OUT", default=None,
                   help="write the trace as JSON lines to OUT (default: not written)")
    p.add_argument("--step-trace", metavar="OUT", default=None, type=output_file,
                   help="write every node step as an rmqha-trace/1 step trace to OUT (scenarios dledger, "
                        "truncation, controller; judge it with rmqha validate; default: not written)")
    p.set_defaults(func=run)


def run(args) -> int:
    script = read_script(args.file)
    if args.adapter:
        adapters = combine_adapter_args(args.adapter, script.scenario)
        if len(adapters) != 1:
            raise UserError(f"replay runs one adapter, not {len(adapters)} (for one role each, use ROLE=SPEC)")
        adapter = adapters[0]
    else:
        adapter = script.adapter or "reference"
        roles = split_roles(adapter) or {"": adapter}
        if not all(runs_in_process(spec) for spec in roles.values()) and not args.use_script_adapter:
            raise UserError(f"{args.file}: its 'adapter' line names {adapter!r}, which would start a process or "
                            f"load code: rmqha starts nothing a file names. To run it, pass it yourself: "
                            f"--adapter {shlex.quote(adapter)} (or --use-script-adapter)")
    expected = {s.args[1] for s in script.steps if s.op == "expect" and s.args[:1] == ("violation",)}
    steps = None
    if args.step_trace:
        if script.scenario not in TRACE_KINDS:
            raise UserError(f"--step-trace: scenario {script.scenario} does not record node steps "
                            f"({', '.join(TRACE_KINDS)} do)")
        try:
            steps = open(args.step_trace, "w", encoding="utf-8")
        except OSError as exc:
            raise UserError(f"--step-trace: cannot write {args.step_trace}: {exc.strerror}") from None
    sink_failed: list[OSError] = []
    try:
        sink = None
        if steps is not None:
            kind, default_profile = TRACE_KINDS[script.scenario]
            stack = None
            if kind == "controller":  # which nodes are controllers, and how everything is configured
                controllers = tuple(n for n in script.nodes if n.startswith("c"))
                setup, brokers = stack_setups(script, controllers, tuple(n for n in script.nodes if n not in controllers))
                stack = (controllers, setup.config, brokers)
            writer = TraceWriter(steps, kind, script.nodes, script.profile or default_profile,
                                 f"rmqha replay ({adapter})", "each-step" if _in_process(adapter) else "at-crash",
                                 stack)

            def sink(event) -> None:
                try:
                    writer.write(event)
                except OSError as exc:  # the trace's file or pipe, not the implementation, failed
                    sink_failed.append(exc)
                    raise

        try:
            ex = execute(script, adapter, record_trace=True, step_sink=sink)
        except NotApplicable:
            raise
        except UserError as exc:  # a step the scenario refuses: named by file and line, as parse errors are
            raise UserError(in_file(args.file, str(exc))) from None
        if sink_failed:  # (the run stopped there; main reports it: one line, or quietly for a closed pipe)
            raise sink_failed[0]
    except ExpectationFailed as exc:
        print(f"{args.file}: expectation failed: {exc}")
        written_for = script.adapter or "reference"
        if args.adapter and written_for != adapter:
            # a committed mutant-*.rmqha expects what its mutant does, a regression script what the
            # reference does: replayed with --adapter, every role not named runs the reference,
            # never the script's adapter line, and another implementation may take another path
            line = f"its adapter line, {script.adapter}" if script.adapter else "reference (it names no adapter)"
            print(f"  (the script's expectations were written for {line}; "
                  f"--adapter replaced it: this replay ran {adapter})")
        return 1
    finally:
        if steps is not None:
            steps.close()
    cluster = ex.cluster
    if args.trace:
        with open(args.trace, "w", encoding="utf-8") as f:
            f.write(cluster.trace_jsonl())
    expects = sum(1 for s in script.steps if s.op == "expect")  # checks, not steps: as a shrunk title counts
    print(f"{args.file}: scenario {script.scenario}, adapter {adapter}, {len(script.steps) - expects} steps"
          + (f" and {expects} expect line{'s' if expects > 1 else ''}" if expects else "")
          + f", {cluster.sim.now} ms simulated")
    if ex.error:
        raise AdapterError(f"the implementation failed during replay: {ex.error}")
    seen: set[str] = set()
    for r in cluster.violations:
        if r.violation.property in seen:
            continue
        seen.add(r.violation.property)
        step = script.steps[r.step] if 0 <= r.step < len(script.steps) else None
        where = f"step {r.step + 1} ({step.render()}, line {step.line})" if step else "start-up"
        tag = "reproduced" if r.violation.property in expected else "VIOLATED"
        print(f"  {tag}: {r.violation.property} at {where}, t={r.time} ms: {r.violation.message}")
    unexpected = seen - expected
    if not seen:
        print("  no property violated")
    for finding in getattr(cluster, "findings", ()):
        # a documented limit of the configuration, not a violation (e.g. #7017)
        print(f"  finding: {finding.name or cluster.finding_name}: {finding.subject}: {finding.detail} "
              f"(a documented limit of this configuration, not a violation)")
    sys.stdout.flush()
    return 1 if unexpected else 0
