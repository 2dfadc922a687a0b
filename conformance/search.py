"""Campaigns that search: coverage of abstract protocol states as feedback.

Sampling alone leaves the states where slips show (an isolated leader holding a longer
log of an older term, a crash in the instant after a truncation, ...) to chance. Each
run reports the abstract states its group went through (``spec/raft/abstract.py``:
roles, term and log relations, votes, commit, network; the spec's own state space,
as in model-guided fuzzing). Within a chunk of a campaign, a run that reached a state
no earlier run of the chunk had joins the *corpus*; after ``WARMUP_RUNS`` runs, a share
``MUTATE_SHARE`` of the runs are no longer generated from their own seed but are a
mutation of a corpus script (a fault block inserted, a step dropped, a wait stretched,
the network roughened: ``Scenario.mutate``), favouring rare finds; the rest keep
sampling.

Everything stays reproducible from seeds: a mutated run records its lineage
(``RunConfig.origin``: the seeds of its ancestors) and ``campaign.script_for`` rebuilds
its script from them; a chunk rerun (``--resume``) makes the same choices because they
depend only on its seeds and its runs' results.
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Callable, Iterable, Iterator

import attrs

from results.runresult import RunConfig, RunResult
from results.schema import ABSTRACT_STATE

WARMUP_RUNS = 4  # runs of a chunk that only sample, before the search mutates
MUTATE_SHARE = 0.8  # share of the later runs that mutate a corpus script


def reached(result: RunResult) -> set[str]:
    """The abstract states a run went through."""
    return {c.outcome for c in result.coverage if c.procedure == ABSTRACT_STATE}


def searched(configs: Iterable[RunConfig], run: Callable[[RunConfig], RunResult],
             can_mutate: bool = True) -> Iterator[RunResult]:
    """Run ``configs`` in order, replacing a share of them (after a warm-up) by
    mutations of runs that reached new abstract states.

    A parent is drawn with a weight that favours rare finds (AFL's energy): the sum, over
    the states it reached, of one over how many runs of the chunk reached each."""
    hits: Counter = Counter()  # abstract state -> runs of the chunk that reached it
    corpus: list[tuple[RunConfig, frozenset[str]]] = []
    for k, config in enumerate(configs):
        rng = random.Random(f"{config.seed}:search")
        if can_mutate and corpus and k >= WARMUP_RUNS and rng.random() < MUTATE_SHARE:
            weights = [sum(1.0 / hits[s] for s in states) for _, states in corpus]
            parent = rng.choices([c for c, _ in corpus], weights)[0]
            config = attrs.evolve(config, group_size=parent.group_size, fault_mix=parent.fault_mix,
                                  origin=parent.origin + (parent.seed,))
        result = run(config)
        states = frozenset(reached(result))
        if states - hits.keys():
            corpus.append((result.config, states))
        hits.update(states)
        yield result
