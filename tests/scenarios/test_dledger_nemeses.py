"""The DLedger nemeses reach the situations they are named for (docs/scenarios.md,
"Nemeses"), judged from the reference's steps rather than from the script."""
from __future__ import annotations

from conformance.campaign import execute, script_for
from results.runresult import RunConfig
from spec.dledger.records import PushEntryRequest, PushType


def _appends_behind_the_end(seed: int, fault_mix: str) -> int:
    """How many APPENDs of a generated run reached a follower that already held entries
    past them (a late copy of a push, after the pushes that followed it)."""
    config = RunConfig(campaign="t", seed=seed, adapter="reference", scenario="dledger", profile="dledger-0.4",
                       group_size=3 + seed % 3, fault_mix=fault_mix, duration_ms=30_000)
    end: dict[str, int] = {}
    behind = 0

    def sink(event) -> None:
        nonlocal behind
        p = event.payload
        if (event.input == "message" and isinstance(p, PushEntryRequest) and p.type is PushType.APPEND
                and p.entries and p.entries[-1].index < end.get(event.node, -1)):
            behind += 1
        if event.view is not None:
            end[event.node] = event.view.ledger_end_index

    execute(script_for(config), "reference", record_trace=False, step_sink=sink)
    return behind


def test_late_and_duplicated_brings_followers_appends_they_have_moved_past():
    """The lossy mix's nemesis writes while late copies of earlier pushes are on their
    way, so a follower meets an APPEND below its end, after the pushes that followed it:
    where a follower that overwrites from an APPEND (instead of taking held entries as
    held) drops what it acknowledged. The reference leader keeps one push in flight per
    follower, so without those writes few runs get there (2 of these 40 before the
    nemesis wrote; 12 with it)."""
    runs = sum(_appends_behind_the_end(seed, "lossy") > 0 for seed in range(40))
    assert runs >= 8, runs


def test_a_group_of_one_runs_every_fault_mix():
    """``--group-size 1`` is accepted (a group of one elects itself): no nemesis asks for a
    minority it does not have (``leader-minority-beyond-lease`` stopped such a campaign with
    an error about the script's line 0)."""
    from conformance.faults import FAULT_MIXES

    for k, mix in enumerate(sorted(FAULT_MIXES) * 8):
        config = RunConfig(campaign="t", seed=k, adapter="reference", scenario="dledger", profile="dledger-0.4",
                           group_size=1, fault_mix=mix, duration_ms=30_000)
        ex = execute(script_for(config), "reference", record_trace=False)
        assert ex.error is None and not ex.cluster.violations, (k, mix, ex.error)
