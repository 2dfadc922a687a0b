"""Campaigns that search (conformance/search.py): mutated runs are reproducible from their
seeds, every scenario's mutations stay runnable scripts that keep their opening and
healing suffix, and runs report the abstract states the search steers by."""
from __future__ import annotations

import random
from collections import Counter

import attrs
import pytest

from cli.commands.run import campaign_spec_from, default_chunk_size
from cli.main import build_parser
from conformance.campaign import run_one, script_for
from conformance.faults import DEFAULT_FAULT_MIXES
from conformance.scenarios.controller import _elections
from conformance.scenarios.dledger import grow_group
from conformance.scenarios.edits import overlay, probed, stretch_of
from conformance.scenarios.registry import SCENARIOS, get_scenario
from conformance.script import Script, Step, parse_script
from conformance.search import ENERGY, RARE_TARGETS, WARMUP_RUNS, SearchState, rare_states, reached, searched
from conformance.spark_campaign import CampaignSpec, Chunk, plan_chunks, plan_waves, run_campaign, run_chunk
from results import io
from results.errors import ResultsError
from results.runresult import RunConfig

SEARCHING = sorted(name for name, sc in SCENARIOS.items() if sc.mutate is not None)


def ops(steps):
    return [(s.op, s.args) for s in steps]


def config(scenario: str, seed: int, **kw) -> RunConfig:
    sc = get_scenario(scenario)
    return RunConfig(campaign="t", seed=seed, adapter="reference", scenario=scenario, profile=sc.profile(None),
                     group_size=sc.group_sizes[seed % len(sc.group_sizes)],
                     fault_mix=DEFAULT_FAULT_MIXES[seed % len(DEFAULT_FAULT_MIXES)], duration_ms=kw.get("duration_ms", 8_000))


def test_every_scenario_searches():
    assert SEARCHING == sorted(SCENARIOS) == ["classic", "controller", "dledger", "raft", "truncation"]
    for name in SEARCHING:
        assert get_scenario(name).abstract_universe, f"{name}: the report needs the universe of node states"


@pytest.mark.parametrize("scenario", SEARCHING)
def test_mutations_are_scripts_of_the_same_shape(scenario):
    """A mutation parses back from its rendering, keeps the script's header, and is
    reproduced exactly from the same random stream."""
    sc = get_scenario(scenario)
    for seed in range(4):
        c = config(scenario, seed)
        script = sc.generate(c)
        mutated = sc.mutate(script, random.Random(f"{seed}:mutate"), c)
        again = sc.mutate(script, random.Random(f"{seed}:mutate"), c)
        assert mutated == again
        assert (mutated.nodes, mutated.profile) == (script.nodes, script.profile)
        # the controller's and classic search may put the faults under another generated configuration
        assert mutated.options == script.options or scenario in ("controller", "classic")
        assert ops(parse_script(mutated.render()).steps) == ops(mutated.steps)
        # the healing end of the script stays: liveness is still judged after the faults
        assert ops(mutated.steps[-3:]) == ops(script.steps[-3:])


@pytest.mark.parametrize("scenario", SEARCHING)
def test_a_mutated_run_is_rebuilt_from_its_lineage(scenario):
    """script_for rebuilds a searched run's script from its seeds (origin + own seed), so
    the run replays with the same verdict and the same abstract states."""
    c = attrs.evolve(config(scenario, 7), origin=(3, 5))
    sc = get_scenario(scenario)
    expected = sc.generate(attrs.evolve(c, seed=3, origin=()))
    for seed in (5, 7):
        expected = sc.mutate(expected, random.Random(f"{seed}:mutate"), c)
    assert ops(script_for(c).steps) == ops(expected.steps)
    first, second = run_one(c), run_one(c)
    assert first.verdict == second.verdict == "pass", first.first_violation
    assert reached(first) and reached(first) == reached(second)


def test_searched_mutates_after_the_warm_up_and_favours_new_states():
    """The first WARMUP_RUNS runs sample; later ones are mutations of corpus runs in about
    the policy's share of cases, each naming its ancestors; the same inputs choose the same."""
    configs = [config("dledger", s, duration_ms=4_000) for s in range(12)]
    runs = list(searched(configs, run_one))
    again = list(searched(configs, run_one))
    assert [r.config for r in runs] == [r.config for r in again]
    assert all(not r.config.origin for r in runs[:WARMUP_RUNS])
    mutated = [r for r in runs[WARMUP_RUNS:] if r.config.origin]
    assert mutated, "no run was a mutation"
    assert len(mutated) <= len(runs) - WARMUP_RUNS
    seeds = {c.seed for c in configs}
    assert all(set(r.config.origin) <= seeds for r in mutated)
    assert 0 < ENERGY.mutate_share < 1 and 0 < RARE_TARGETS.mutate_share < 1
    # without mutation (a scenario that has none), the configs run as given
    plain = list(searched(configs[:5], run_one, can_mutate=False))
    assert [r.config for r in plain] == configs[:5]


def test_the_rarity_cutoff_is_the_smallest_power_of_two_over_the_fewest_hits():
    """FairFuzz's rare states: reached by at most the smallest power of two that is no
    smaller than the fewest runs that reached any state the corpus holds."""
    hits = Counter({"a": 1, "b": 2, "c": 5, "z": 1})
    reaching = {"a": [], "b": [], "c": []}  # z: counted, but no corpus run holds it
    assert rare_states(hits, reaching) == ["a"]
    hits = Counter({"d": 9, "c": 5, "b": 4, "a": 3})
    assert rare_states(hits, dict.fromkeys(hits, [])) == ["a", "b"]  # fewest 3: cutoff 4, sorted
    assert rare_states(Counter({"a": 8, "b": 9}), {"a": [], "b": []}) == ["a"]  # fewest 8: cutoff 8


def _one_rare_one_broad():
    """A known corpus: one run reached a state no other did, another reached 1,000
    states that ten runs each reached (AFL's energy: 1 against 100)."""
    rare_run, broad_run = config("dledger", 100), config("dledger", 101)
    broad = frozenset(f"common-{i}" for i in range(1000))
    hits = {"only-once": 1, **dict.fromkeys(broad, 10)}
    return rare_run, broad_run, SearchState([(rare_run, frozenset({"only-once"})), (broad_run, broad)], Counter(hits))


def test_the_dledger_search_mutates_runs_that_reached_rare_states():
    """DLedger's search (RARE_TARGETS) draws a rare state, then a run that reached it: the
    run with the one rare state is every first run's parent, where AFL's energy (ENERGY,
    still the controller's) draws the run with a thousand common states."""
    assert get_scenario("dledger").search_policy == get_scenario("raft").search_policy == RARE_TARGETS
    assert get_scenario("controller").search_policy == ENERGY
    rare_run, broad_run, known = _one_rare_one_broad()
    spec = attrs.evolve(_campaign("r", runs=6, chunk_size=1), group_sizes=(3,))
    parents = []
    for seed in range(6):  # each a chunk of one run that starts from the known corpus
        learnt = SearchState()
        (result,) = run_chunk(spec, Chunk(f"c{seed}", "reference", seed, seed + 1), run_one, known=known, learnt=learnt)
        parents.append(result.config.origin[-1:])
    assert parents.count((rare_run.seed,)) >= 4 and set(parents) <= {(rare_run.seed,), ()}, parents
    energy = [r.config.origin[-1:] for seed in range(6)
              for r in searched([config("dledger", seed)], run_one, known=known, policy=ENERGY)]
    assert energy.count((broad_run.seed,)) >= 4, energy


# ---------------------------------------------------------------- waves: the campaign's search


def _campaign(name: str, runs: int = 8, **kw) -> CampaignSpec:
    settings = {"group_sizes": (3,), "fault_mixes": ("partition",), "duration_ms": 3000, "chunk_size": 2,
                "search_waves": 2, "shrink_replays": 0, "shrink_seconds": 0.0, **kw}
    return CampaignSpec(name, "dledger", ("reference",), runs=runs, **settings)


def test_waves_spread_each_adapters_chunks_in_seed_order():
    spec = CampaignSpec("w", "dledger", ("reference", "mutant:double-vote"), runs=10, chunk_size=2, search_waves=4)
    waves = plan_waves(spec)
    assert [[c.id for c in w] for w in waves] == [
        ["a00-s000000000", "a00-s000000002", "a01-s000000000", "a01-s000000002"],
        ["a00-s000000004", "a01-s000000004"], ["a00-s000000006", "a01-s000000006"],
        ["a00-s000000008", "a01-s000000008"]]
    assert sorted(c.id for w in waves for c in w) == sorted(c.id for c in plan_chunks(spec))
    assert len(plan_waves(attrs.evolve(spec, search=False))) == 1  # sampling needs no order
    assert len(plan_waves(attrs.evolve(spec, runs=2))) == 1  # fewer chunks than waves
    # a campaign begun before waves (its manifest does not say) keeps searching chunk by chunk
    old = spec.to_json()
    del old["search_waves"]
    assert CampaignSpec.from_json(old).search_waves == 1


def test_a_later_wave_mutates_what_the_earlier_waves_found(tmp_path):
    run_campaign(tmp_path / "c", _campaign("c"), master=None, progress=False)
    runs = {r["seed"]: r for r in io.read_table(tmp_path / "c", "runs").to_pylist()}
    assert sorted(runs) == list(range(8))
    first_wave = {0, 1, 2, 3}
    # a chunk of the second wave starts from the first wave's corpus: no warm-up, and
    # its mutations descend from runs of other chunks
    late = [r for s, r in runs.items() if s not in first_wave and r["origin"]]
    assert late, "the second wave mutated nothing"
    assert any(int(r["origin"].split(">")[0]) in first_wave for r in late)
    for chunk in io.committed_chunks(tmp_path / "c"):
        state = SearchState.from_json(io.read_search_state(tmp_path / "c", chunk), config("dledger", 0))
        assert state.hits  # every committed chunk has what its search learnt


def test_a_resumed_campaign_searches_as_an_uninterrupted_one(tmp_path):
    whole = tmp_path / "whole"
    run_campaign(whole, _campaign("c"), master=None, progress=False)

    def dies_in_the_second_wave(config):
        if config.seed == 5:
            raise KeyboardInterrupt
        return run_one(config)

    cut = tmp_path / "cut"
    with pytest.raises(KeyboardInterrupt):
        run_campaign(cut, _campaign("c"), master=None, progress=False, run_fn=dies_in_the_second_wave)
    run_campaign(cut, None, master=None, resume=True, progress=False)
    pick = lambda out: sorted((r["seed"], r["origin"], r["verdict"], r["steps"])  # noqa: E731
                              for r in io.read_table(out, "runs").to_pylist())
    assert pick(cut) == pick(whole)


def test_another_search_stream_draws_other_parents_and_its_runs_replay_from_their_lineage(tmp_path):
    """``--search-stream``: the same seeds, the search's own draws salted; the sampled runs
    are the same, the mutated ones differ, and each replays from its config alone (its
    lineage), so ``rmqha replay`` and ``script_for`` need no stream. The default stream is
    the search's own: a campaign that names none searches as before streams existed."""
    spec = _campaign("s", runs=10, chunk_size=5)
    for name, stream in (("own", ""), ("b", "b")):
        run_campaign(tmp_path / name, attrs.evolve(spec, search_stream=stream), master=None, progress=False)
    own, other = ({r["seed"]: r for r in io.read_table(tmp_path / n, "runs").to_pylist()} for n in ("own", "b"))
    assert sorted(own) == sorted(other) == list(range(10))
    assert [own[s]["origin"] for s in range(10)] != [other[s]["origin"] for s in range(10)]
    sampled_in_both = [s for s in range(10) if not own[s]["origin"] and not other[s]["origin"]]
    assert sampled_in_both, "the first chunk's warm-up samples in both campaigns"
    assert all(own[s]["steps"] == other[s]["steps"] for s in sampled_in_both)
    first = plan_chunks(spec)[0]
    lineage = lambda c: ">".join(map(str, c.origin)) or None  # noqa: E731 (as the runs table writes it)
    assert [lineage(r.config) for r in run_chunk(spec, first)] == [own[s]["origin"] for s in range(5)]  # own
    for r in run_chunk(attrs.evolve(spec, search_stream="b"), first):
        assert lineage(r.config) == other[r.config.seed]["origin"]
        if r.config.origin:
            assert run_one(r.config).steps == r.steps == other[r.config.seed]["steps"]
    assert CampaignSpec.from_json({k: v for k, v in spec.to_json().items() if k != "search_stream"}).search_stream == ""


def test_the_search_stream_is_a_campaign_setting_of_run_and_check(tmp_path):
    """``--search-stream NAME`` reaches the campaign's settings (so ``--resume`` keeps it and
    the report's command repeats it); a bad name is a one-line usage error."""
    parser = build_parser()
    args = parser.parse_args(["run", "--scenario", "dledger", "--runs", "4", "--search-stream", "b2"])
    assert campaign_spec_from(args).search_stream == "b2"
    args = parser.parse_args(["check", "--scenario", "dledger", "--runs", "4"])
    assert campaign_spec_from(args).search_stream == ""
    for bad in ("", "a b", "x" * 33, "s/1"):
        with pytest.raises(SystemExit) as exc:
            parser.parse_args(["run", "--search-stream", bad])
        assert exc.value.code == 2


def test_a_damaged_search_state_is_a_one_line_error(tmp_path):
    out = tmp_path / "c"

    def dies_in_the_second_wave(config):
        if config.seed == 4:
            raise KeyboardInterrupt
        return run_one(config)

    with pytest.raises(KeyboardInterrupt):
        run_campaign(out, _campaign("c"), master=None, progress=False, run_fn=dies_in_the_second_wave)
    (out / io.SEARCH / "a00-s000000000.json").write_text('{"states": [], "hits": [[3, 1]], "corpus": []}')
    with pytest.raises(ResultsError, match="a00-s000000000.*malformed"):
        run_campaign(out, None, master=None, resume=True, progress=False)
    (out / io.SEARCH / "a00-s000000000.json").unlink()
    with pytest.raises(ResultsError, match="missing"):
        run_campaign(out, None, master=None, resume=True, progress=False)


def test_the_controller_search_can_run_the_faults_under_another_configuration():
    sc = get_scenario("controller")
    c = config("controller", 0)
    script = sc.generate(c)
    changed = [m for m in (sc.mutate(script, random.Random(f"{k}:mutate"), c) for k in range(40))
               if m.options != script.options]
    assert changed, "no mutation changed the configuration"
    generated = {key for k in range(40) for key, _ in sc.generate(config("controller", k)).options}
    for m in changed:  # another generated script's configuration: keys the generator writes
        assert {key for key, _ in m.options} <= generated
        assert parse_script(m.render()).options == m.options


def test_a_controller_overlay_holds_over_its_whole_stretch():
    """The overlay edit puts a stretch of the run under another network: set again after
    each of the stretch's own resets (a heal, ``net default``), lifted after it."""
    stretch = [Step("run", ("500",)), Step("heal"), Step("crash", ("b1",)), Step("net", ("default",)),
               Step("run", ("200",))]
    lossy, default = Step("net", ("1..60", "drop=0.1", "dup=0.05")), Step("net", ("default",))
    assert ops(overlay(stretch, lossy, default)) == ops(
        [lossy, stretch[0], stretch[1], stretch[2], stretch[3], lossy, stretch[4], default])
    cut, heal = Step("partition", ("c1", "b2")), Step("heal")
    assert ops(overlay(stretch, cut, heal)) == ops([cut, stretch[0], stretch[1], cut, *stretch[2:], heal])
    assert ops(overlay([], cut, heal)) == ops([cut, heal])


def test_a_controller_probe_writes_to_every_broker_after_each_wait():
    """The probe edit: producers with stale routes write one message to each broker after
    each wait of a stretch (half the time the whole fault phase), whatever its role."""
    stretch = [Step("crash", ("b1",)), Step("run", ("500",)), Step("heal"), Step("run", ("200",))]
    probes = [Step("write", ("1", "b1")), Step("write", ("1", "b2"))]
    assert ops(probed(stretch, ["b1", "b2"])) == ops(stretch[:2] + probes + stretch[2:] + probes)
    spans = [stretch_of(random.Random(k), 30) for k in range(200)]
    assert (0, 30) in spans and all(0 <= a <= b <= 30 and (b - a <= 12 or (a, b) == (0, 30)) for a, b in spans)
    assert any(b - a <= 12 for a, b in spans)


def test_a_controller_election_edit_elects_a_broker_after_each_wait():
    """The elect edit: an operator elects a broker drawn at random after each wait of a
    stretch."""
    stretch = [Step("crash", ("b1",)), Step("run", ("500",)), Step("heal"), Step("run", ("200",))]
    once = _elections(stretch, ["b1", "b2", "b3"], random.Random(7))
    assert [s.op for s in once] == ["crash", "run", "elect", "heal", "run", "elect"]
    assert all(s.args[0] in ("b1", "b2", "b3") for s in once if s.op == "elect")
    drawn = {s.args for k in range(30) for s in _elections(stretch, ["b1", "b2"], random.Random(k)) if s.op == "elect"}
    assert drawn == {("b1",), ("b2",)}


CUTS = ("partition", "block", "isolate-leader-with")  # (a crash nemesis isolates the leader too)


@pytest.mark.parametrize("scenario", ["dledger", "raft"])
def test_a_lineage_inserts_the_faults_of_every_fault_mix_of_its_campaign(scenario):
    """A searched run's insert edits draw from every fault and nemesis of the campaign's
    fault mixes (``RunConfig.search_fault_mixes``), not only its lineage's: a crash
    lineage's mutations cut the network too, and never with faults the campaign did not
    ask for."""
    sc = get_scenario(scenario)
    c = attrs.evolve(config(scenario, 1), fault_mix="crash", duration_ms=4_000)
    script = sc.generate(c)
    assert not {s.op for s in script.steps} & set(CUTS)
    with_cuts = 0
    for k in range(40):
        rng = f"{k}:mutate"
        own = sc.mutate(script, random.Random(rng), c)
        assert not {s.op for s in own.steps} & set(CUTS), "a crash lineage alone never cuts the network"
        narrow = sc.mutate(script, random.Random(rng), attrs.evolve(c, search_fault_mixes=("crash", "lossy")))
        assert not {s.op for s in narrow.steps} & set(CUTS), "a fault of a mix the campaign did not ask for"
        wide = sc.mutate(script, random.Random(rng), attrs.evolve(c, search_fault_mixes=DEFAULT_FAULT_MIXES))
        with_cuts += bool({s.op for s in wide.steps} & set(CUTS))
        assert ops(parse_script(wide.render()).steps) == ops(wide.steps)
    assert with_cuts >= 5, with_cuts


def test_a_campaign_records_its_fault_mixes_in_each_mutated_run_and_replays_them(tmp_path):
    """The campaign's fault mixes travel with each mutated run (so ``script_for`` rebuilds
    the run from its config alone); sampled runs carry none."""
    spec = CampaignSpec("t", "dledger", ("reference",), runs=10, first_seed=40, chunk_size=10, group_sizes=(3,),
                        fault_mixes=("crash", "partition"), duration_ms=4_000, search=True, search_waves=1,
                        shrink_replays=0, shrink_seconds=0.0)
    chunk = plan_chunks(spec)[0]
    results = run_chunk(spec, chunk)
    mutated = [r.config for r in results if r.config.origin]
    assert mutated and all(c.search_fault_mixes == ("crash", "partition") for c in mutated)
    assert all(r.config.search_fault_mixes == () for r in results if not r.config.origin)
    for c in mutated:
        again = run_one(c)
        assert reached(again) == reached(next(r for r in results if r.config == c))
@pytest.mark.parametrize("scenario", ["dledger", "raft"])
def test_a_dledger_mutation_can_add_client_appends(scenario):
    """Client traffic does not only thin out along a lineage: the appends edit writes one
    to five fresh entries at the leader, also where the fault mix's blocks write none
    (``lossy``: only network changes) and drops remove appends."""
    sc = get_scenario(scenario)
    c = attrs.evolve(config(scenario, 0), fault_mix="lossy")
    script = sc.generate(c)

    def bodies(s):
        return [s_.args[-1] for s_ in s.steps if s_.op in ("append-leader", "append")]

    grown = []
    for k in range(60):
        mutated = sc.mutate(script, random.Random(f"{k}:mutate"), c)
        added = len(bodies(mutated)) - len(bodies(script))
        assert len(set(bodies(mutated))) == len(bodies(mutated)), "an appended body is written twice"
        assert ops(mutated.steps[-8:]) == ops(script.steps[-8:])  # healing, liveness and its appends stay
        if added > 0:
            grown.append(added)
    assert grown, "no mutation of a lossy script added a client append"
    assert max(grown) <= 4 * 5  # at most four edits of at most five appends


@pytest.mark.parametrize("runs, chunk, waves", [(8, 10, 4), (100, 13, 4), (200, 25, 4), (1_000, 50, 10),
                                                (3_000, 100, 10), (100_000, 1_000, 10)])
def test_a_searched_campaign_has_waves_to_learn_in(runs, chunk, waves):
    """By default a searched campaign is cut into at least 20 chunks (of 25 runs or more)
    and runs two chunks a wave, 4 to 10 waves; the default check (200 runs) keeps its 8
    chunks in 4 waves, and a campaign that only samples keeps the plain chunk sizes."""
    spec = campaign_spec_from(build_parser().parse_args(["run", "--runs", str(runs), "--no-spark"]))
    assert (spec.chunk_size, spec.search_waves) == (chunk, waves)
    assert len(plan_waves(spec)) == min(waves, len(plan_chunks(spec)))
    sampling = campaign_spec_from(build_parser().parse_args(["run", "--runs", str(runs), "--no-search"]))
    assert sampling.chunk_size == default_chunk_size(runs)
    given = campaign_spec_from(build_parser().parse_args(["run", "--runs", str(runs), "--search-waves", "3"]))
    assert given.search_waves == 3


# ---------------------------------------------------------------- resize: a lineage's group size


def test_growing_a_group_adds_the_next_free_nodes_into_a_side_of_every_named_partition():
    """The next free nodes join, each into a side drawn at random of every partition that
    names its sides; every other step is kept; the grown script parses back from its
    rendering; a group is never grown to fewer nodes than it has."""
    steps = [Step("crash", ("n2",)), Step("partition", ("n1", "|", "n2", "n3")), Step("partition", ("n3",)),
             Step("block", ("n1", "n3")), Step("isolate-leader-with", ("1",)), Step("append", ("n1", "m1")),
             Step("run", ("100",)), Step("heal"), Step("restart-all")]
    three = Script("dledger", ("n1", "n2", "n3"), seed=1, boot_at=(("n2", 5),), steps=tuple(steps))
    assert grow_group(three, 3, random.Random(0)) == three
    assert grow_group(three, 4, random.Random(0)).nodes == ("n1", "n2", "n3", "n4")
    grown = [grow_group(three, 5, random.Random(k)) for k in range(20)]
    for g in grown:
        assert g.nodes == ("n1", "n2", "n3", "n4", "n5") and g.boot_at == three.boot_at
        cut, lone = [s for s in g.steps if s.op == "partition"]
        sides = " ".join(cut.args).split(" | ")
        assert len(sides) == 2 and sorted(" ".join(sides).split()) == list(g.nodes)
        assert lone.args == ("n3",), "a partition that does not name its sides is kept as it is"
        assert ops(s for s in g.steps if s.op != "partition") == ops(s for s in steps if s.op != "partition")
        assert ops(parse_script(g.render()).steps) == ops(g.steps)
    assert len({s.steps for s in grown}) > 1, "the joining nodes' sides are drawn"
    with pytest.raises(ValueError, match="cannot grow a group of 3 nodes to 2"):
        grow_group(three, 2, random.Random(0))


@pytest.mark.parametrize("scenario", ["dledger", "raft"])
def test_a_lineage_moves_between_the_group_sizes_of_its_campaign(scenario):
    """With the campaign's group sizes (``RunConfig.search_group_sizes``) a share of the
    mutations grow the group to the next larger size, never beyond them; ``script_for``
    rebuilds a resized lineage from its first script's size."""
    sc = get_scenario(scenario)
    c = attrs.evolve(config(scenario, 0), duration_ms=4_000, search_group_sizes=(3, 4, 5))
    for size, reachable in ((3, {3, 4}), (4, {4, 5}), (5, {5})):
        script = sc.generate(attrs.evolve(c, group_size=size))
        sizes = {len(sc.mutate(script, random.Random(f"{k}:mutate"), c).nodes) for k in range(60)}
        assert sizes == reachable, (size, sizes)
        kept = {len(sc.mutate(script, random.Random(f"{k}:mutate"), attrs.evolve(c, search_group_sizes=(size,))).nodes)
                for k in range(60)}
        assert kept == {size}
    lineage = attrs.evolve(c, seed=7, origin=(3, 5), group_size=5, origin_group_size=3)
    expected = sc.generate(attrs.evolve(c, seed=3, group_size=3))
    for seed in (5, 7):
        expected = sc.mutate(expected, random.Random(f"{seed}:mutate"), lineage)
    rebuilt = script_for(lineage)
    assert rebuilt.nodes == expected.nodes and ops(rebuilt.steps) == ops(expected.steps)
    # without the first size, origin[0]'s script would be generated with the run's 5 nodes
    assert ops(script_for(attrs.evolve(lineage, origin_group_size=None)).steps) != ops(expected.steps)


def test_a_campaign_resizes_its_lineages_and_records_the_size_each_run_ran_with(tmp_path):
    """A searched campaign over several group sizes: mutated runs record their lineage's
    first group size (runs.origin_group_size, the search state's corpus) and the size
    their script has (group_size); some lineages change size; each replays from its config."""
    spec = CampaignSpec("t", "dledger", ("reference",), runs=30, first_seed=60, chunk_size=10,
                        group_sizes=(3, 4, 5), duration_ms=3_000, search=True, search_waves=3,
                        shrink_replays=0, shrink_seconds=0.0)
    out = tmp_path / "c"
    run_campaign(out, spec, master=None, progress=False)
    rows = io.read_table(out, "runs").to_pylist()
    mutated = [r for r in rows if r["origin"]]
    assert mutated and all(r["origin_group_size"] in (3, 4, 5) for r in mutated)
    assert all(r["origin_group_size"] is None for r in rows if not r["origin"])
    resized = [r for r in mutated if r["group_size"] != r["origin_group_size"]]
    assert resized, "no lineage changed its group size"
    for r in resized:
        c = RunConfig("t", r["seed"], "reference", "dledger", r["profile"], r["group_size"], r["fault_mix"], 3_000,
                      origin=tuple(int(s) for s in r["origin"].split(">")), origin_group_size=r["origin_group_size"],
                      search_fault_mixes=spec.fault_mixes, search_group_sizes=(3, 4, 5))
        assert len(script_for(c).nodes) == r["group_size"]
    corpus = [c for chunk in io.committed_chunks(out)
              for c, _ in SearchState.from_json(io.read_search_state(out, chunk), config("dledger", 0)).corpus]
    by_seed = {r["seed"]: r for r in rows}
    assert any(c.origin for c in corpus)
    for c in corpus:
        assert (c.group_size, c.origin_group_size) == (by_seed[c.seed]["group_size"], by_seed[c.seed]["origin_group_size"])


def test_a_resized_runs_counterexample_replays(tmp_path, capsys):
    """A failing run of a lineage that grew: its counterexample names the nodes it ran
    with and ``rmqha replay`` reproduces the violation."""
    from cli.main import main
    found = None
    for k in range(40):
        c = RunConfig("t", 100 + k, "mutant:double-vote", "dledger", "dledger-0.4", 3, "mixed", 6_000, origin=(7,),
                      origin_group_size=3, search_fault_mixes=DEFAULT_FAULT_MIXES, search_group_sizes=(3, 4, 5))
        nodes = script_for(c).nodes
        if len(nodes) == 3:
            continue
        result = run_one(attrs.evolve(c, group_size=len(nodes)))
        if result.counterexamples:
            found = (nodes, result.counterexamples[0])
            break
    assert found, "no grown run of a double-voting node failed"
    nodes, cx = found
    assert parse_script(cx.script).nodes == nodes == ("n1", "n2", "n3", "n4")
    path = tmp_path / "cx.rmqha"
    path.write_text(cx.script)
    capsys.readouterr()
    assert main(["replay", str(path)]) == 0
    assert f"reproduced: {cx.property}" in capsys.readouterr().out
