"""Campaigns that search: coverage of abstract protocol states as feedback.

Sampling alone leaves the states where slips show (an isolated leader holding a longer
log of an older term, a crash in the instant after a truncation, ...) to chance. Each
run reports the abstract states its group went through (``spec/raft/abstract.py``:
roles, term and log relations, votes, commit, network; the spec's own state space,
as in model-guided fuzzing). A run that reached a state no earlier run knew of joins
the *corpus*; a share of the runs (the scenario's ``SearchPolicy``) are no longer
generated from their own seed but are a mutation of a corpus script (a fault block
inserted, a step dropped, a wait stretched, the network roughened: ``Scenario.mutate``),
its parent drawn to favour rare finds (AFL's energy, or FairFuzz's rare targets); the
rest keep sampling.

A campaign's chunks run in parallel, so they cannot learn from each other as they
go; the campaign runs them in *waves* (``CampaignSpec.search_waves``: by default two
chunks a wave, 4 to 10 waves, ``default_waves``) instead: a chunk starts from what every chunk of the earlier waves learnt (their
corpus and state counts, ``SearchState``, committed beside their verdicts), and a
chunk of the first wave samples ``WARMUP_RUNS`` runs before it mutates.

Everything stays reproducible from seeds: a mutated run records its lineage
(``RunConfig.origin``: the seeds of its ancestors) and ``campaign.script_for`` rebuilds
its script from them; a chunk rerun (``--resume``) makes the same choices because they
depend only on its seeds, its runs' results and what the earlier waves committed.
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Callable, Iterable, Iterator

import attrs

from results.runresult import RunConfig, RunResult
from results.schema import ABSTRACT_STATE

WARMUP_RUNS = 4  # runs of a chunk that only sample, before the search mutates (first wave)
SEARCH_WAVES = 4  # a campaign's chunks run in at least this many waves, each learning from the earlier
MAX_SEARCH_WAVES = 10  # and at most this many by default (a Spark job each)
SEARCH_CHUNKS = 20  # a searched campaign's runs are cut into at least this many chunks (of 25 runs or more)


@attrs.frozen
class SearchPolicy:
    """How a scenario's search spends its runs: the share of runs (after the warm-up) that
    mutate a corpus script, and how a parent is drawn. ``rare_targets`` False: AFL's energy,
    a corpus run drawn with the weight of the sum, over the states it reached, of one over
    how many runs reached each. True: FairFuzz's rare targets (Lemieux and Sen, ASE 2018),
    a *rare* state drawn uniformly (``rare_states``), then a corpus run that reached it,
    uniformly: every state at the frontier gets the same share of the mutations, however
    many other states its runs reached, so the search does not settle on the lineage of
    the runs that reached the most states."""

    mutate_share: float
    rare_targets: bool


ENERGY = SearchPolicy(mutate_share=0.8, rare_targets=False)
# DLedger (docs/performance.md, "session 10"): after the first quarter of a campaign a
# sampled run found 0.0-0.4 new states, a mutated one 0.5-1.5, so nineteen runs in twenty mutate
RARE_TARGETS = SearchPolicy(mutate_share=0.95, rare_targets=True)


def rare_states(hits: Counter, reaching: dict) -> list[str]:
    """The rare states among those corpus runs reached (``reaching``'s keys), sorted:
    those reached by at most the *rarity cutoff* of runs, the smallest power of two that
    is no smaller than the fewest runs that reached any of them (FairFuzz's cutoff)."""
    fewest = min(hits[s] for s in reaching)
    cutoff = 1
    while cutoff < fewest:
        cutoff *= 2
    return sorted(s for s in reaching if hits[s] <= cutoff)


def default_waves(chunks: int) -> int:
    """The search's waves for a campaign of ``chunks`` chunks per adapter: two chunks a
    wave (both cores of a small machine busy, each chunk starting from everything the
    earlier waves found), from ``SEARCH_WAVES`` to ``MAX_SEARCH_WAVES``."""
    return min(MAX_SEARCH_WAVES, max(SEARCH_WAVES, chunks // 2))


def reached(result: RunResult) -> set[str]:
    """The abstract states a run went through."""
    return {c.outcome for c in result.coverage if c.procedure == ABSTRACT_STATE}


@attrs.define
class SearchState:
    """What a search knows: its corpus (runs that reached abstract states no run before
    them had, with the states they reached) and how many runs reached each state."""

    corpus: list[tuple[RunConfig, frozenset[str]]] = attrs.Factory(list)
    hits: Counter = attrs.Factory(Counter)

    def merge(self, other: "SearchState") -> "SearchState":
        return SearchState(self.corpus + other.corpus, self.hits + other.hits)

    def to_json(self) -> dict:
        """A JSON document: states by index, each corpus entry by what a mutation keeps
        of its parent (seed, lineage, group size and its lineage's first group size, fault mix)."""
        names = sorted(set(self.hits).union(*(states for _, states in self.corpus)))
        index = {s: i for i, s in enumerate(names)}
        return {
            "states": names,
            "hits": [[index[s], n] for s, n in sorted(self.hits.items())],
            "corpus": [{"seed": c.seed, "origin": list(c.origin), "group_size": c.group_size,
                        "origin_group_size": c.origin_group_size, "fault_mix": c.fault_mix,
                        "states": sorted(index[s] for s in states)}
                       for c, states in self.corpus],
        }

    @classmethod
    def from_json(cls, doc: dict, template: RunConfig) -> "SearchState":
        """Inverse of ``to_json``; corpus configs are ``template`` with each entry's fields
        (a document written before resize edits has no ``origin_group_size``: the same size)."""
        names = doc["states"]
        corpus = [(attrs.evolve(template, seed=e["seed"], origin=tuple(e["origin"]), group_size=e["group_size"],
                                origin_group_size=e.get("origin_group_size"), fault_mix=e["fault_mix"]),
                   frozenset(names[i] for i in e["states"]))
                  for e in doc["corpus"]]
        return cls(corpus, Counter({names[i]: n for i, n in doc["hits"]}))


def searched(configs: Iterable[RunConfig], run: Callable[[RunConfig], RunResult],
             can_mutate: bool = True, known: SearchState | None = None,
             learnt: SearchState | None = None, policy: SearchPolicy = ENERGY,
             fault_mixes: tuple[str, ...] = (), group_sizes: tuple[int, ...] = (),
             size_of: Callable[[RunConfig], int] | None = None, stream: str = "") -> Iterator[RunResult]:
    """Run ``configs`` in order, replacing a share of them by mutations of runs that
    reached new abstract states.

    ``known``: what earlier waves of the campaign learnt (their corpus and hits; then
    the search mutates from the first run), else it samples ``WARMUP_RUNS`` runs first.
    ``learnt`` receives what these runs add (their corpus entries and hits), for later
    waves. ``policy`` says how often a run mutates and how its parent is drawn
    (``SearchPolicy``; the scenario's, ``Scenario.search_policy``). ``fault_mixes``: the
    campaign's, recorded in every mutated run (``RunConfig.search_fault_mixes``): its
    insert edits draw from all their faults, so a lineage is not bound to the fault mix
    its first script was generated with (dledger, raft). ``group_sizes``: the campaign's,
    recorded likewise (``RunConfig.search_group_sizes``) for the scenarios whose mutations
    resize the group between them (dledger, raft): a lineage is not bound to its first
    script's size either. Every mutated run records its lineage's first group size
    (``RunConfig.origin_group_size``, what ``script_for`` generates ``origin[0]`` with);
    ``size_of`` gives the group size a mutated run's script has (``len(script.nodes)``), so
    its result records the size it ran with. ``stream`` salts the search's own draws
    (whether a run mutates, and its parent; ``CampaignSpec.search_stream``): the same seeds
    searched with another stream, to tell a change of the search from its luck. A mutated
    run records its lineage either way, so it replays without it."""
    known = known or SearchState()
    learnt = learnt if learnt is not None else SearchState()
    hits: Counter = Counter(known.hits)  # abstract state -> runs that reached it
    corpus = list(known.corpus)
    reaching: dict[str, list[RunConfig]] = {}  # abstract state -> the corpus runs that reached it, in corpus order
    for c, states in corpus:
        for s in states:
            reaching.setdefault(s, []).append(c)
    for k, config in enumerate(configs):
        rng = random.Random(f"{config.seed}:search{stream}")
        if can_mutate and corpus and (k >= WARMUP_RUNS or known.corpus) and rng.random() < policy.mutate_share:
            if policy.rare_targets:
                parent = rng.choice(reaching[rng.choice(rare_states(hits, reaching))])
            else:
                weights = [sum(1.0 / hits[s] for s in states) for _, states in corpus]
                parent = rng.choices([c for c, _ in corpus], weights)[0]
            config = attrs.evolve(config, group_size=parent.group_size, fault_mix=parent.fault_mix,
                                  origin=parent.origin + (parent.seed,), origin_group_size=parent.root_group_size,
                                  search_fault_mixes=tuple(fault_mixes), search_group_sizes=tuple(group_sizes))
            if size_of is not None:
                config = attrs.evolve(config, group_size=size_of(config))
        result = run(config)
        states = frozenset(reached(result))
        if states - hits.keys():
            corpus.append((result.config, states))
            for s in states:
                reaching.setdefault(s, []).append(result.config)
            learnt.corpus.append((result.config, states))
        hits.update(states)
        learnt.hits.update(states)
        yield result
