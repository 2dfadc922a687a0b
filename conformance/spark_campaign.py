"""Campaigns as Spark jobs (or in one plain process), written chunk by chunk.

A campaign is cut into *chunks*: a contiguous seed range of one adapter. Chunks are
Spark partitions; each executor runs its chunk's seeds with ``run_one``, writes the
chunk's five Parquet parts and commits it (``results.io.commit_chunk``),
and returns one small status row. The whole campaign is one Spark job; the driver
advances a progress bar as chunk commit markers appear. Because a chunk is the unit of
commit, ``--resume`` reruns exactly the chunks that have no marker: no run is lost or
duplicated, whatever moment the campaign was killed at. Once every verdict is
committed, the driver shrinks the failures, one counterexample per (adapter,
property) for the whole campaign (``shrink_campaign``).
"""
from __future__ import annotations

import datetime as _dt
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import attrs
import pyarrow as pa

from conformance.campaign import (DEFAULT_SHRINK, HALT_AFTER_VIOLATION_MS, ShrinkBudget, plan_configs, run_one, script_for,
                                  shrink_shared)
from conformance.errors import UserError
from conformance.faults import DEFAULT_FAULT_MIXES, check_fault_mixes
from conformance.fingerprint import describe_adapter
from conformance.scenarios.reached import reference_reached
from conformance.scenarios.registry import get_scenario
from conformance.script import parse_script
from conformance.search import SEARCH_WAVES, SearchState, searched
from conformance.targets import drives_another_process, rmqha_version
from results import io
from results.errors import ResultsError
from results.runresult import PropertyVerdict, RunConfig, RunResult
from results.schema import COUNTEREXAMPLE_KEY, SCHEMAS, TABLES, flatten, keyed_counterexample_rows
from results.spark import is_local, ship_packages, spark_session
from spec.dledger.profiles import PROFILES
from spec.invariants.dledger import INVARIANTS, known_profile_difference


@attrs.frozen(slots=True)
class CampaignSpec:
    campaign: str
    scenario: str
    adapters: tuple[str, ...]
    runs: int  # per adapter
    first_seed: int = 0
    profile: str | None = None
    group_sizes: tuple[int, ...] = (3, 5)
    fault_mixes: tuple[str, ...] = DEFAULT_FAULT_MIXES
    duration_ms: int = 30_000
    chunk_size: int = 50
    # shrinking, after a chunk's verdicts are committed (0 replays: --no-shrink)
    shrink_replays: int = DEFAULT_SHRINK.replays
    shrink_seconds: float = DEFAULT_SHRINK.seconds
    # steer by abstract-state coverage (conformance/search.py); False: sample only
    search: bool = True
    # the search's waves: a chunk learns from every chunk of the earlier waves
    search_waves: int = SEARCH_WAVES
    # salts the search's own draws (``searched(stream=...)``); "" is the search's own stream.
    # benchmarks/search_coverage.py --streams measures a change of the search on several
    search_stream: str = ""

    @property
    def shrink_budget(self) -> ShrinkBudget:
        return ShrinkBudget(self.shrink_replays, self.shrink_seconds)

    def to_json(self) -> dict:
        return attrs.asdict(self, recurse=True, value_serializer=lambda inst, field, v: list(v) if isinstance(v, tuple) else v)

    @classmethod
    def from_json(cls, d: dict) -> "CampaignSpec":
        fields = {f.name for f in attrs.fields(cls)}
        kw = {k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items() if k in fields}
        kw.setdefault("search_waves", 1)  # a campaign begun before waves searched chunk by chunk
        return cls(**kw)


@attrs.frozen(slots=True)
class Chunk:
    id: str
    adapter: str
    first_seed: int
    last_seed: int  # exclusive

    @property
    def runs(self) -> int:
        return self.last_seed - self.first_seed


def plan_chunks(spec: CampaignSpec) -> list[Chunk]:
    chunks = []
    for a, adapter in enumerate(spec.adapters):
        for start in range(spec.first_seed, spec.first_seed + spec.runs, spec.chunk_size):
            end = min(start + spec.chunk_size, spec.first_seed + spec.runs)
            chunks.append(Chunk(f"a{a:02d}-s{start:09d}", adapter, start, end))
    return chunks


def plan_waves(spec: CampaignSpec) -> list[list[Chunk]]:
    """The chunks in the order the search needs: wave by wave (``search_waves`` of them;
    one when the campaign only samples), each adapter's chunks spread evenly over the
    waves in seed order. The chunks of a wave run in parallel; a wave starts once the
    earlier ones are committed."""
    chunks = plan_chunks(spec)
    # more waves than an adapter's chunks would be empty ones (dropped below): not made at all
    count = min(spec.search_waves, -(-spec.runs // spec.chunk_size)) if spec.search else 1
    waves: list[list[Chunk]] = [[] for _ in range(count)]
    for adapter in spec.adapters:
        mine = [c for c in chunks if c.adapter == adapter]
        for i, chunk in enumerate(mine):
            waves[i * count // len(mine)].append(chunk)
    return [w for w in waves if w]


def earlier_chunks(spec: CampaignSpec, chunk: Chunk) -> list[Chunk]:
    """The chunks of ``chunk``'s adapter in the waves before its own: what its search
    starts from (none in the first wave, or when the campaign only samples)."""
    if not spec.search:
        return []
    earlier: list[Chunk] = []
    for wave in plan_waves(spec):
        if chunk in wave:
            return earlier
        earlier += [c for c in wave if c.adapter == chunk.adapter]
    return earlier


def known_before(out: Path, spec: CampaignSpec, chunk: Chunk) -> SearchState | None:
    """What the search of the waves before ``chunk``'s learnt, as committed in ``out``
    (None for a chunk of the first wave, or a campaign that only samples)."""
    earlier = earlier_chunks(spec, chunk)
    if not earlier:
        return None
    template = next(iter(chunk_configs(spec, chunk)))
    known = SearchState()
    for c in earlier:
        doc = io.read_search_state(out, c.id)
        try:
            known = known.merge(SearchState.from_json(doc, template))
        except (KeyError, IndexError, TypeError, ValueError):
            raise ResultsError(f"{out}: what chunk {c.id}'s search learnt is malformed "
                               f"({io.SEARCH}/{c.id}.json)") from None
    return known


def chunk_configs(spec: CampaignSpec, chunk: Chunk) -> Iterator[RunConfig]:
    return plan_configs(
        spec.campaign,
        chunk.runs,
        chunk.first_seed,
        spec.scenario,
        (chunk.adapter,),
        spec.profile,
        spec.group_sizes,
        spec.fault_mixes,
        spec.duration_ms,
    )


def _error_result(config: RunConfig, message: str) -> RunResult:
    scenario = get_scenario(config.scenario)
    return RunResult(
        config=config,
        implementation="?",
        implementation_version="?",
        verdict="error",
        steps=0,
        simulated_ms=0,
        wall_ms=0.0,
        elections=0,
        leader_changes=0,
        max_term=0,
        properties=tuple(PropertyVerdict(p, "error") for p in scenario.properties),
        error=message,
    )


def run_chunk(spec: CampaignSpec, chunk: Chunk, run_fn: Callable[[RunConfig], RunResult] = run_one,
              known: SearchState | None = None, learnt: SearchState | None = None) -> list[RunResult]:
    """Run every seed of a chunk (searching from ``known``, into ``learnt``, unless the
    spec says sample only); a run that raises becomes an ``error`` result."""

    def run(config: RunConfig) -> RunResult:
        try:
            return run_fn(config)
        except UserError:
            raise
        except Exception as exc:  # the implementation under test broke the harness
            return _error_result(config, f"{type(exc).__name__}: {exc}".splitlines()[0][:500])

    configs = chunk_configs(spec, chunk)
    if not spec.search:
        return [run(c) for c in configs]
    return list(search_chunk(spec, configs, run, known, learnt))


def search_chunk(spec: CampaignSpec, configs: Iterable[RunConfig], run: Callable[[RunConfig], RunResult],
                 known: SearchState | None = None, learnt: SearchState | None = None) -> Iterator[RunResult]:
    """``searched`` as a campaign of ``spec`` runs it: the scenario's policy, the campaign's
    fault mixes for insert edits and, where the scenario's mutations resize the group
    (``Scenario.resizes``), its group sizes, each mutated run with the size of its script."""
    scenario = get_scenario(spec.scenario)
    resizes = scenario.resizes and len(set(spec.group_sizes)) > 1
    return searched(configs, run, can_mutate=scenario.mutate is not None, known=known, learnt=learnt,
                    policy=scenario.search_policy, fault_mixes=spec.fault_mixes,
                    group_sizes=tuple(spec.group_sizes) if resizes else (),
                    size_of=(lambda c: len(script_for(c).nodes)) if resizes else None,
                    stream=spec.search_stream)


def execute_and_commit(out: str, spec: CampaignSpec, chunk: Chunk, run_fn=run_one,
                       known: SearchState | None = None) -> dict:
    """Run a chunk (its search starting from ``known``: ``known_before``) and commit its
    verdicts, each failure with its unshrunk counterexample (the script cut after the
    violating step), after what its search learnt. Shrinking waits until the campaign
    has every verdict (``shrink_campaign``)."""
    started = time.perf_counter()
    learnt = SearchState()
    results = run_chunk(spec, chunk, run_fn, known, learnt)
    if spec.search:
        io.write_search_state(Path(out), chunk.id, learnt.to_json())
    io.commit_chunk(Path(out), chunk.id, flatten(results))
    verdicts = [r.verdict for r in results]
    return {
        "chunk": chunk.id,
        "runs": len(results),
        "fail": verdicts.count("fail"),
        "error": verdicts.count("error"),
        "seconds": time.perf_counter() - started,
    }


@attrs.frozen(slots=True)
class ToShrink:
    """A committed, unshrunk counterexample chosen for shrinking."""

    chunk: str
    adapter: str
    property: str
    seed: int
    steps: int  # its length: the run's script cut after the violating step
    original_steps: int
    script: str
    row: dict = attrs.field(eq=False, hash=False)


def to_shrink(out: Path, spec: CampaignSpec) -> list[ToShrink]:
    """What is left to shrink in a campaign: per (adapter, property) with no shrunk
    counterexample committed yet, its shortest unshrunk one (then the lowest seed),
    shortest first.

    A report shows one counterexample per (adapter, property): shrinking every failing
    run, or one per chunk, of a buggy implementation would cost more than the
    campaign itself; the shortest failing prefix is the cheapest start.
    """
    planned = {c.id for c in plan_chunks(spec)}
    best: dict[tuple[str, str], ToShrink] = {}
    done: set[tuple[str, str]] = set()
    for chunk_id, marker in sorted(io.committed_chunks(out).items()):
        if chunk_id not in planned:  # a shrink's commit
            rows = io.read_table_part(out, marker, "counterexamples", ["adapter", "property"]).to_pylist()
            done |= {(r["adapter"], r["property"]) for r in rows}
            continue
        if not marker["summary"]["fail"]:
            continue
        for r in io.read_table_part(out, marker, "counterexamples").to_pylist():
            if r["adapter"] not in spec.adapters:  # shrinking replays it: never an adapter the campaign does not name
                raise ResultsError(f"{out}: chunk {chunk_id} holds a counterexample of adapter {r['adapter']!r} "
                                   f"that the manifest does not list")
            if r["shrunk"]:
                continue
            x = ToShrink(chunk_id, r["adapter"], r["property"], r["seed"], r["shrunk_steps"], r["original_steps"],
                         r["script"], r)
            key = (x.adapter, x.property)
            if key not in best or (x.steps, x.seed) < (best[key].steps, best[key].seed):
                best[key] = x
    return sorted((x for k, x in best.items() if k not in done), key=lambda x: (x.steps, x.seed, x.adapter, x.property))


def _failing_script(text: str, source: str):
    """A committed counterexample's script without its ``expect`` lines."""
    script = parse_script(text, source)
    return script.with_steps(s for s in script.steps if s.op != "expect")


def shrink_campaign(out: str | Path, spec: CampaignSpec, note: Callable[[str], object] = lambda _: None) -> int:
    """Shrink a campaign's failures once every verdict is committed (``to_shrink``);
    returns how many counterexamples it wrote.

    Each shrink is committed as soon as it ends (``<chunk>.shrunk.<n>``), so a campaign
    stopped while shrinking keeps its verdicts and every counterexample shrunk so far,
    and ``--resume`` shrinks only what is left. A shrunk script that also violates
    other properties still waiting (of the same adapter) stands for them as well: one
    shrink usually serves every property one bug breaks.
    """
    budget = spec.shrink_budget
    if not budget.enabled:
        return 0
    out = Path(out)
    pending = to_shrink(out, spec)
    serial = sum(1 for c in io.committed_chunks(out) if io.planned_chunk_of(c) != c)
    written = 0
    while pending:
        x = pending.pop(0)
        note(f"shrinking {x.property} ({len(pending)} more)")
        others = [y.property for y in pending if y.adapter == x.adapter]
        try:
            found = shrink_shared(_failing_script(x.script, f"{x.chunk}: seed {x.seed}"), x.adapter, x.property,
                                  others, budget, x.seed, x.original_steps)
        except UserError:
            raise
        except Exception:  # the implementation broke while being replayed: its unshrunk script stands
            continue
        if not found:
            continue
        rows = keyed_counterexample_rows({k: x.row[k] for k in COUNTEREXAMPLE_KEY}, found)
        tables = {t: SCHEMAS[t].empty_table() for t in TABLES}
        tables["counterexamples"] = pa.Table.from_pylist(rows, schema=SCHEMAS["counterexamples"])
        io.commit_chunk(out, io.shrunk_chunk_id(x.chunk, serial), tables)
        serial += 1
        written += len(found)
        covered = {c.property for c in found}
        pending = [y for y in pending if not (y.adapter == x.adapter and y.property in covered)]
    return written


# ---------------------------------------------------------------- manifest


def adapter_info(adapter: str, scenario: str, profile: str | None) -> dict:
    return describe_adapter(adapter, scenario, profile)


def new_manifest(spec: CampaignSpec, chunks: Sequence[Chunk], adapters: dict | None = None) -> dict:
    """The campaign's manifest; ``adapters``: each adapter's ``adapter_info`` when already
    taken (a DLedger fingerprint costs seconds: ``_validate`` takes it once)."""
    scenario = get_scenario(spec.scenario)
    if adapters is None:
        adapters = {a: adapter_info(a, spec.scenario, spec.profile) for a in spec.adapters}
    return {
        "campaign": spec.campaign,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "rmqha_version": rmqha_version(),
        "working_directory": os.getcwd(),  # where a stdio: command's relative paths resolve
        "spec": spec.to_json(),
        "chunks": [c.id for c in chunks],
        "adapters": adapters,
        "properties": {spec.scenario: list(scenario.properties)},
        "outcomes": {spec.scenario: {k: list(v) for k, v in scenario.outcomes.items()}},
        "abstract_states": {spec.scenario: list(scenario.abstract_universe)},
        # the node states rmqha's reference reaches in long campaigns (conformance/scenarios/reached.py)
        "reference_reached": {spec.scenario: list(reference_reached(spec.scenario))},
        "known_profile_differences": scenario_known_differences(spec),
        # a run stops this long after its first violation (what a failing run judged)
        "halt_after_violation_ms": HALT_AFTER_VIOLATION_MS,
    }


def scenario_known_differences(spec: CampaignSpec) -> dict:
    if spec.scenario != "dledger":
        return {}

    return {p.name: [i for i in INVARIANTS if known_profile_difference(i, p)] for p in PROFILES.values()}


# ---------------------------------------------------------------- drivers


def _validate(spec: CampaignSpec) -> dict:
    """Bad settings are a one-line error before any work; returns each adapter's
    ``adapter_info`` (resolving an adapter is how a bad one is found)."""
    check_settings(spec)
    return {a: adapter_info(a, spec.scenario, spec.profile) for a in spec.adapters}


# chunks per adapter: each is a part file per table and a task, and the plan of a campaign
# holds them all; the default sizes never make more than 5,000 (docs/reports.md, "Chunk size")
MAX_CHUNKS = 100_000


def check_settings(spec: CampaignSpec) -> None:
    """The checks of ``_validate`` that resolve no adapter (start no process): what a
    resumed campaign's manifest is checked with too."""
    get_scenario(spec.scenario).profile(spec.profile)
    if spec.runs < 1:
        raise UserError("--runs must be at least 1")
    if not spec.adapters:
        raise UserError("at least one --adapter is needed")
    if spec.chunk_size < 1:
        raise UserError("--chunk-size must be at least 1")
    chunks = -(-spec.runs // spec.chunk_size)
    if chunks > MAX_CHUNKS:
        raise UserError(f"--runs {spec.runs} in chunks of {spec.chunk_size} is {chunks:,} chunks per adapter; at most "
                        f"{MAX_CHUNKS:,} (each is a part file per table): give --chunk-size "
                        f"{-(-spec.runs // MAX_CHUNKS)} or more, or leave it out")
    if spec.duration_ms < 0:
        raise UserError("--duration must not be negative")
    if not spec.group_sizes or not spec.fault_mixes:
        raise UserError("at least one --group-size and one --fault-mix are needed")
    check_fault_mixes(spec.fault_mixes)
    # generate one script per group size: the scenario's own checks (group size bounds,
    # ...) fail here in one line rather than inside every executor
    scenario = get_scenario(spec.scenario)
    for size in spec.group_sizes:
        scenario.generate(RunConfig(spec.campaign, spec.first_seed, spec.adapters[0], spec.scenario,
                                    spec.profile or scenario.default_profile, size, spec.fault_mixes[0],
                                    spec.duration_ms))


def prepare(out: Path, spec: CampaignSpec | None, resume: bool,
            start: Callable[[], object] = lambda: None) -> tuple[CampaignSpec, list[Chunk]]:
    """Create the campaign directory, or pick an interrupted one up; return what is left.
    ``start`` runs once the settings are checked and before a new directory is made
    (Spark's session: a master that does not start leaves no directory behind)."""
    out = Path(out)
    if resume:
        manifest = io.read_manifest(out)
        try:
            stored = CampaignSpec.from_json(manifest["spec"])
        except (KeyError, TypeError, ValueError):
            raise UserError(f"{out}: the manifest's campaign settings ('spec') are missing or malformed") from None
        if spec is not None and spec != stored:
            raise UserError(f"{out}: --resume with different campaign settings than the manifest's; "
                            f"leave them out or use a new --out")
        try:
            check_settings(stored)
        except UserError as exc:
            raise UserError(f"{out / io.MANIFEST}: {exc}") from None
        io.discard_uncommitted(out)
        done = io.committed_chunks(out)
        return stored, [c for c in plan_chunks(stored) if c.id not in done]
    if spec is None:
        raise UserError("no campaign settings given")
    adapters = _validate(spec)
    if out.exists() and any(out.iterdir()):
        raise UserError(f"{out}: already exists and is not empty (use --resume to finish it, or a new --out)")
    start()
    out.mkdir(parents=True, exist_ok=True)
    chunks = plan_chunks(spec)
    io.write_manifest(out, new_manifest(spec, chunks, adapters))
    return spec, chunks


def run_campaign(
    out: str | Path,
    spec: CampaignSpec | None,
    master: str | None = "local[*]",
    resume: bool = False,
    progress: bool = True,
    run_fn: Callable[[RunConfig], RunResult] = run_one,
) -> dict:
    """Run (or finish) a campaign into ``out``; ``master=None`` runs in this process."""
    out = Path(out)

    def start_spark() -> None:  # a new campaign's: before its directory is made
        if master is not None:
            if progress:
                print(f"campaign {spec.campaign}: starting Spark ({master})", file=sys.stderr, flush=True)
            spark_session(master, app=f"rmqha campaign {spec.campaign}")

    spec, todo = prepare(out, spec, resume, start=start_spark)
    total = sum(c.runs for c in todo)
    from tqdm import tqdm

    bar = tqdm(total=total, unit="run", desc=f"campaign {spec.campaign}", disable=not progress, leave=True)
    summary = {"runs": 0, "fail": 0, "error": 0, "chunks": 0}

    def counts() -> str:
        return f"fail={summary['fail']}, error={summary['error']}"

    def account(status: dict) -> None:
        for k in ("runs", "fail", "error"):
            summary[k] += status[k]
        summary["chunks"] += 1
        bar.set_postfix_str(counts(), refresh=False)  # before update, which draws the bar
        bar.update(status["runs"])

    started = time.perf_counter()
    try:
        left = {c.id for c in todo}
        waves = [[c for c in wave if c.id in left] for wave in plan_waves(spec)]
        if master is None or not todo:  # a finished campaign starts no Spark job
            for wave in waves:
                for chunk in wave:
                    account(execute_and_commit(str(out), spec, chunk, run_fn, known_before(out, spec, chunk)))
        else:
            # the bar's clock starts once Spark is up: its rate and ETA are the campaign's;
            # until then it says what is happening (a JVM start takes seconds to a minute)
            bar.set_postfix_str(f"starting Spark ({master})")

            def spark_up() -> None:
                bar.set_postfix_str("")
                bar.reset(total=total)

            _run_on_spark(out, spec, [w for w in waves if w], master, run_fn, account, started=spark_up)
        # once every verdict is committed (in this process: the driver, under Spark)
        summary["shrunk"] = shrink_campaign(out, spec, note=lambda text: bar.set_postfix_str(
            f"{counts()}, {text}" if text else counts()))
    finally:
        bar.close()
    staging = out / io.STAGING
    if staging.is_dir() and not any(staging.iterdir()):
        staging.rmdir()
    summary["seconds"] = time.perf_counter() - started
    # the campaign's verdicts so far, this session's and earlier ones' (what --resume exits with)
    committed = io.committed_chunks(out).values()
    summary["committed_runs"] = sum(m["tables"]["runs"]["rows"] for m in committed)
    for k in ("fail", "error"):
        summary[f"committed_{k}"] = sum(m["summary"][k] for m in committed)
    return summary


def resume_command(out: Path, spec: CampaignSpec) -> str:
    """The command that finishes the campaign in ``out``, naming the adapters that start a
    process or load code (a resumed campaign runs them only when named again)."""
    return " ".join([f"rmqha run --resume --out {out}",
                     *(f"--adapter {shlex.quote(a)}" for a in spec.adapters if drives_another_process(a))])


class CampaignJobFailed(Exception):
    """The Spark job died (a Python worker crashed, an executor was lost, ...).

    Runs that raise are ``error`` verdicts and never get here; this is the harness
    itself failing. Committed chunks stay valid: ``--resume`` finishes the campaign.
    """

    exit_code = 3

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


STATUS_DDL = "chunk string, runs long, fail long, error long, seconds double, user_error string"
STATUS_SCHEMA = pa.schema([("chunk", pa.string()), ("runs", pa.int64()), ("fail", pa.int64()),
                           ("error", pa.int64()), ("seconds", pa.float64()), ("user_error", pa.string())])


def chunk_task(out: str, spec: CampaignSpec, chunk: Chunk, run_fn, known: SearchState | None = None) -> dict:
    """What an executor does with one chunk; bad input travels back as data, not a crash."""
    try:
        return {**execute_and_commit(out, spec, chunk, run_fn, known), "user_error": None}
    except (UserError, ResultsError) as exc:  # re-raised by the driver as the one-line error it is
        return {"chunk": chunk.id, "runs": 0, "fail": 0, "error": 0, "seconds": 0.0, "user_error": str(exc)}


def _job_failure(exc: BaseException) -> str:
    """One line out of a Spark or Py4J exception: the innermost cause Spark reports."""
    java = getattr(exc, "java_exception", None)
    text = str(java.toString()) if java is not None else str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("at ")]
    line = lines[0] if lines else type(exc).__name__
    if "most recent failure:" in line:  # "Job aborted ... most recent failure: Lost task ...: <cause>"
        line = line.split("most recent failure:", 1)[1]
        line = line.split("): ", 1)[-1]
    return line.split(". Consider setting", 1)[0][:300]


def _new_markers(out: Path, wanted: dict, seen: set[str]) -> list[dict]:
    """Markers of wanted chunks that appeared since the last look (reads only new files)."""
    folder = out / io.CHUNKS
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return []
    fresh = []
    for name in sorted(names):
        chunk_id = name[: -len(".json")] if name.endswith(".json") else None
        if chunk_id in wanted and chunk_id not in seen:
            marker = io.read_chunk_marker(folder / name)
            seen.add(chunk_id)
            fresh.append(marker)
    return fresh


def _run_on_spark(out: Path, spec: CampaignSpec, waves: list[list[Chunk]], master: str, run_fn, account,
                  started: Callable[[], object] = lambda: None) -> None:
    """A Spark job per wave of the search (one for a campaign that only samples), one
    partition per chunk; progress comes from the commit markers.

    A job keeps every core busy until its last chunk; the executors commit chunks as
    they finish, so the driver follows progress by watching the markers appear. A wave
    waits for the earlier ones: its chunks start from what those learnt.
    """
    for wave in waves:
        known = {c.id: known_before(out, spec, c) for c in wave}
        _run_job_on_spark(out, spec, wave, known, master, run_fn, account, started)
        started = lambda: None  # noqa: E731 - once, when the first job starts


def _run_job_on_spark(out: Path, spec: CampaignSpec, todo: list[Chunk], known: dict, master: str, run_fn, account,
                      started: Callable[[], object]) -> None:
    import threading


    if not todo:
        return
    spark = spark_session(master, app=f"rmqha campaign {spec.campaign}")
    if not is_local(master):
        ship_packages(spark)
    out_str = str(out.resolve())
    by_id = {c.id: c for c in todo}

    def work(batches):
        for batch in batches:
            for chunk_id in batch.column("chunk").to_pylist():
                status = chunk_task(out_str, spec, by_id[chunk_id], run_fn, known[chunk_id])
                yield pa.RecordBatch.from_pylist([status], schema=STATUS_SCHEMA)

    rdd = spark.sparkContext.parallelize([(c.id,) for c in todo], len(todo))
    frame = spark.createDataFrame(rdd, "chunk string")
    outcome: dict = {}

    def job() -> None:
        try:
            outcome["rows"] = frame.mapInArrow(work, STATUS_DDL).collect()
        except BaseException as exc:  # reported by the driver's thread below
            outcome["error"] = exc

    started()
    worker = threading.Thread(target=job, name="rmqha-campaign-job", daemon=True)
    worker.start()
    seen: set[str] = set()
    while True:
        worker.join(timeout=0.5)
        for marker in _new_markers(out, by_id, seen):
            account({**marker["summary"], "chunk": marker["chunk"]})
        if not worker.is_alive():
            break
    if "error" in outcome:
        committed = len(io.committed_chunks(out))
        raise CampaignJobFailed(
            f"Spark job failed: {_job_failure(outcome['error'])}; the {committed} committed chunks in {out} are "
            f"kept: finish with '{resume_command(out, spec)}' (add --no-spark to see the failure in one process)")
    bad = [r["user_error"] for r in outcome["rows"] if r["user_error"]]
    if bad:
        raise UserError(bad[0])
