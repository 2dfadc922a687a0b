"""``rmqha check --adapter SPEC``: run a campaign and write its report, in one step.

The campaign's results go to a new directory under ``--out`` (one per check, named
after the campaign, so earlier results are never overwritten); the report is
(re)built in ``--report``. Every setting is checked before anything starts.

Exit status: the report's verdict. 0 conformant; 1 not conformant (a property
violated, other than a documented profile difference); 3 errors (no violation, but
runs the implementation failed: crashed, hung, answered garbage) or the Spark job
died; 2 bad input, or nothing the scenario judges applies to the implementation.

An implementation that runs no nodes (only handler-level operations, such as the real
classes behind ``jvm:rocketmq``) is checked at handler level instead of in a campaign:
every operation it declares, judged against the spec on a deterministic sample, known
upstream departures named (``handler-level.md`` and ``.json`` in ``--report``, or in a
subdirectory of it per adapter when the check names several, beside a campaign's report;
``conformance/handler_check.py``). An operation the implementation failed on names the call.
With ``--scenario`` named, only the operations of that scenario's families are judged
(``Scenario.handler_families``); none of them answered is *not applicable*. Its verdict
counts like a campaign's: 1 for a disagreement, 3 for an implementation error, 2 when
nothing could be judged.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from cli.args import output_dir
from conformance.errors import UserError
from cli.commands import report as report_command
from cli.commands import run as run_command
from conformance.scenarios.registry import get_scenario


def register(sub) -> None:
    p = sub.add_parser(
        "check",
        help="run a campaign against an implementation and write its conformance report (Spark)",
        description=__doc__,
    )
    run_command.add_campaign_arguments(p)
    p.add_argument("--out", default="rmqha-results", type=output_dir,
                   help="parent directory of campaign results (default: %(default)s)")
    p.add_argument("--report", default="rmqha-report", type=output_dir, help="report directory (default: %(default)s)")
    p.set_defaults(func=run, resume=False)


def run(args) -> int:
    from reports.render import check_out_dir

    started = time.perf_counter()
    check_out_dir(args.report)  # refuse an unusable report directory before the campaign runs
    args.adapter, handler_reports, handler_verdicts = _check_handler_only(args)
    if not args.adapter:
        if handler_reports:  # nothing judged: an earlier report stays as it was
            replaced = _campaign_reported_in(Path(args.report))
            _write_handler_level(args.report, handler_reports, beside_campaign=False)
            if replaced:
                _say_replaced(args, replaced)
        verdict = _worst(handler_verdicts.values())
        each = "; ".join(f"{spec}: {v}" for spec, v in handler_verdicts.items())
        print(f"verdict: {verdict.upper()} (handler level)" + (f" — {each}" if len(handler_verdicts) > 1 else ""))
        return EXIT_STATUS[verdict]
    args.campaign = args.campaign or run_command.campaign_name(Path(args.out))
    _check_apart(args.report, args.out, args.campaign)
    spec = run_command.campaign_spec_from(args)
    results = Path(args.out) / spec.campaign
    args.campaign = spec.campaign
    summary = run_command.execute_campaign(args, str(results))
    if isinstance(summary, int):
        return summary
    print(f"{summary['runs']} runs: {summary['fail']} failed, {summary['error']} errored; results in {results}",
          flush=True)
    replaced = _campaign_reported_in(Path(args.report))
    # --no-spark: the campaign and its report both in this process (Arrow), no JVM
    data = report_command.build(str(results), args.report, None if args.no_spark else args.master,
                                report_command.Stages(args.quiet))
    print(f"report: {args.report}/report.html, {args.report}/report.md, {args.report}/summary.json "
          f"(the check took {time.perf_counter() - started:.1f} s in all, its campaign included)")
    if replaced and replaced != spec.campaign:
        _say_replaced(args, replaced)
    if handler_reports:
        _write_handler_level(args.report, handler_reports, beside_campaign=True)
    _say_counterexamples(args.report)
    print(report_command.verdict_line(data))
    return EXIT_STATUS[_worst([*handler_verdicts.values(), data["verdict"]["verdict"]])]


# counterexamples named on the terminal before the verdict (the report has them all)
SHOWN_COUNTEREXAMPLES = 3


def _say_counterexamples(report: str) -> None:
    """The first counterexamples of the report's summary.json (those no other violation precedes
    first, as the report orders them) with their replay commands: a failing check shows where to
    start without opening the report."""
    try:
        counterexamples = json.loads((Path(report) / "summary.json").read_text())["counterexamples"]
    except (OSError, ValueError, KeyError):
        return
    counterexamples = sorted(counterexamples, key=lambda c: c.get("preceded_by") is not None)
    for c in counterexamples[:SHOWN_COUNTEREXAMPLES]:
        n = c.get("shrunk_steps")
        steps = f", shrunk to {n} step{'' if n == 1 else 's'}" if c.get("shrunk") and n else ""
        print(f"counterexample: {c['property']} (seed {c['seed']}{steps}): {c['message']}")
        print(f"  replay: {c['replay']}")
    more = len(counterexamples) - SHOWN_COUNTEREXAMPLES
    if more > 0:
        print(f"  ({more} more in {report}/report.md, \"Counterexamples\")")


def _check_apart(report: str, out: str, campaign: str) -> None:
    """The report directory is replaced whole: it can neither be --out nor hold it, nor lie
    inside the campaign's results (--out/CAMPAIGN); refused before the campaign runs."""
    r, o = Path(report).resolve(), Path(out).resolve()
    results = o / campaign
    if r == o or r in o.parents or r == results or results in r.parents:
        raise UserError(f"--report {report} and --out {out} overlap (the report directory is replaced whole, so it "
                        f"can neither hold the campaign's results nor lie inside them): give directories apart")


def _write_handler_level(report: str, reports: dict, beside_campaign: bool) -> None:
    from reports.render import write_handler_level

    for md in write_handler_level(report, reports, beside_campaign=beside_campaign):
        print(f"report: {md}")


def _say_replaced(args, replaced: str) -> None:
    """A second check with the default --report: say what was replaced and how to have it back."""
    earlier = Path(args.out) / replaced
    again = (f"rmqha report {earlier} --out DIR rebuilds it" if earlier.is_dir()
             else "rmqha report ITS-RESULTS --out DIR rebuilds it")
    print(f"report: this replaced campaign {replaced}'s report in {args.report}; its results are kept "
          f"({again}; --report DIR keeps reports apart)")


def _campaign_reported_in(report: Path) -> str | None:
    """The campaign whose report ``report`` holds now, if any."""
    try:
        campaign = json.loads((report / "summary.json").read_text(encoding="utf-8")).get("campaign")
    except (OSError, ValueError, AttributeError):
        return None
    return campaign if isinstance(campaign, str) else None


EXIT_STATUS = {"conformant": 0, "not conformant": 1, "errors": 3, "not applicable": 2}


def _worst(verdicts) -> str:
    """The verdict of several, as a campaign report combines its adapters' (reports/build.py)."""
    from reports.build import VERDICTS

    return max(verdicts, key=VERDICTS.index)


def _check_handler_only(args) -> tuple[list[str], dict, dict[str, str]]:
    """Check every adapter that runs no nodes at handler level; the adapters left for the campaign,
    the handler-level reports to write (markdown and JSON by report subdirectory) and the
    verdict of each adapter checked (``handler_check.verdict``'s words)."""
    import sys

    from tqdm import tqdm

    from adapters import resolve
    from conformance import handler_check
    from conformance.departures import counted
    from reports.render import HANDLER_LEVEL_MD

    campaign, reports, verdicts_by_spec = [], {}, {}
    for spec in args.adapter or ["reference"]:
        if spec == "reference" or spec.startswith("mutant:") or "=" in spec.split(":", 1)[0] or resolve(spec).info.nodes:
            campaign.append(spec)
            continue
        adapter = resolve(spec)
        operations = _operations_judged(args, adapter.info.operations)
        if not operations:
            scenario = get_scenario(args.scenario)
            print(f"{spec}: {adapter.info.implementation} {adapter.info.version} runs no nodes and answers no "
                  f"handler-level operation of scenario {scenario.name} "
                  f"({', '.join(f + '.*' for f in scenario.handler_families) or 'it has none'}): not applicable")
            verdicts_by_spec[spec] = "not applicable"
            continue
        bar = tqdm(total=len(operations), desc=f"{spec}: handler level", unit="operation",
                   disable=args.quiet, file=sys.stderr)
        verdicts = handler_check.check_handlers(adapter, progress=lambda: bar.update(1), operations=operations)
        bar.close()
        reports[_slug(spec) if len(args.adapter or ()) > 1 else ""] = (
            handler_check.render(adapter.info, verdicts), handler_check.summary(adapter.info, verdicts))
        print(f"{spec}: {adapter.info.implementation} {adapter.info.version}, runs no nodes: checked at handler level")
        for family in sorted(adapter.info.profiles):
            print(f"  {adapter.info.judged_against(family)}")
        for v in verdicts:
            known = counted(v.departures)
            print(f"  {v.operation}: {v.verdict} ({v.agreed} of {v.judged} agree{'; ' + known if known else ''})"
                  + (f": {v.error} (the call it failed on: {HANDLER_LEVEL_MD})" if v.error else ""))
        verdicts_by_spec[spec] = handler_check.verdict(verdicts)
    return campaign, reports, verdicts_by_spec


def _operations_judged(args, declared) -> frozenset[str]:
    """What a handler-level check judges: with ``--scenario`` named, the declared operations of
    that scenario's families (``Scenario.handler_families``); else every declared one."""
    if not getattr(args, "scenario_named", False):
        return frozenset(declared)
    return get_scenario(args.scenario).handler_operations(declared)


def _slug(spec: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in spec)[:60]
