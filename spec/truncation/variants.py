"""Known-bad variants of the truncation algorithm, by the names the CLI and the docs use.

Each is a ``Variant`` of ``spec/truncation/algebra.py`` (flags the algebra, the
concrete rules and the z3 model all read) with its mutant record: the proof
(``rmqha prove truncation --variant NAME``) refutes it, and the ``truncation``
scenario runs it as adapter ``mutant:NAME``. A new variant is one flag in ``Variant``,
read where the rule it changes is written, plus one record here.
"""
from __future__ import annotations

from typing import Callable, Mapping

import attrs

from spec.broker.confirm_offset import ConfirmDecision, ConfirmOutcome, compute_master_confirm_offset
from spec.mutants import MutantInfo
from spec.truncation.algebra import Variant


@attrs.frozen(slots=True)
class TruncationVariant(MutantInfo):
    variant: Variant = Variant()


# ``violates``: the scenario invariant its tests/scenarios/truncation counterexample
# breaks, or None when no campaign counterexample is recorded
MUTANTS: Mapping[str, TruncationVariant] = {m.name: m for m in (
    TruncationVariant(
        "epoch-only-match", None,
        "entries match on epoch alone, ignoring the start offset (equivalent inside the model: docs/truncation.md)",
        None, Variant(epoch_only_match=True)),
    TruncationVariant(
        "max-of-end-offsets", None,
        "the consistent point takes the max instead of the min of two end offsets",
        "prefix-agreement", Variant(max_of_ends=True)),
    TruncationVariant(
        "ascending-scan", None,
        "entries are scanned by ascending epoch: the first match is the oldest",
        "acknowledged-not-lost", Variant(ascending_scan=True)),
    TruncationVariant(
        "end-off-by-one", None,
        "an entry's end offset is one past the next entry's start",
        None, Variant(end_off_by_one=True)),
    TruncationVariant(
        "equal-start-append", None,
        "an epoch entry whose start equals the last start is appended",
        "epoch-file-well-formed", Variant(equal_start_append=True)),
    TruncationVariant(
        "label-switched-before-header", None,
        "the last chunk of an epoch is labelled with the next epoch",
        "positions-covered", Variant(label_switched_early=True)),
    TruncationVariant(
        "finite-end-after-suffix-truncation", "rocketmq EpochFileCache (5.1.x, develop)",
        "suffix truncation leaves the survivor's old end (lastEntry() returns a copy) and prefix truncation "
        "drops a last entry with a finite end",
        None, Variant(finite_end_after_suffix_truncation=True)),
    TruncationVariant(
        "header-epoch-not-recorded", None,
        "a slave appends a batch whose header carries a new epoch without recording (epoch, epochStartOffset)",
        "step-conformance:on_transfer_header", Variant(header_epoch_not_recorded=True)),
    TruncationVariant(
        "ships-unflushed", "rocketmq AutoSwitchHAConnection with ASYNC_FLUSH (5.1.x, develop)",
        "a master sends slaves bytes it has not flushed, so a crash can take from it a message they hold; "
        "re-confirmed or failed over to again, it writes another message at that offset under an epoch "
        "entry they share",
        "step-conformance:next_batch", Variant(ships_unflushed=True)),
    TruncationVariant(
        "upstream-empty-epoch", "rocketmq PR #9942",
        "entries holding no data take part in the comparison, and one starting beyond the log's end is open-ended "
        "(upstream before PR #9942)",
        "handshake-progress", Variant(skip_empty_epochs=False)),
)}

VARIANTS: Mapping[str, Variant] = {name: m.variant for name, m in MUTANTS.items()}

# Equivalent in the truncation scenario: they cannot change what a run does there, so no
# property can kill them and they are left out of its mutant registry (docs/mutants.md
# gives the argument). epoch-only-match: the proof shows every history of the model keeps
# epoch-start-agreement (a replica records each epoch at the start its master recorded),
# which makes comparing starts redundant, and the scenario's controller never reuses an
# epoch; the proof refutes it only outside the model (epochs reused after a metadata wipe).
# Each stays a variant the proof judges and an adapter ``mutant:NAME``.
EQUIVALENT_IN_SCENARIO: frozenset[str] = frozenset({"epoch-only-match"})


# ------------------------------------------------------------------ replicas wrong outside the algebra


@attrs.frozen(slots=True)
class ReplicaMutant(MutantInfo):
    """A known-bad replica whose slip lies outside the truncation algebra (so the proof
    does not judge it): the master's acknowledgement rule replaced. The scenario runs it as
    adapter ``mutant:NAME`` like a variant."""

    confirm: Callable = compute_master_confirm_offset  # the master's computeConfirmOffset


def _ack_own_max(max_offset, sync_state_set, master_id, acks, current_confirm_offset):
    """The master confirms (and so acknowledges) what it holds itself, not what every replica holds."""
    return ConfirmDecision(ConfirmOutcome.COMPUTED, max_offset)


def _confirm_stays_put(max_offset, sync_state_set, master_id, acks, current_confirm_offset):
    """The master's confirmOffset never moves, so nothing is ever acknowledged (nothing unsafe is said)."""
    return ConfirmDecision(ConfirmOutcome.COMPUTED, current_confirm_offset)


REPLICA_MUTANTS: Mapping[str, ReplicaMutant] = {m.name: m for m in (
    ReplicaMutant(
        "ack-before-replicate", None,
        "a master acknowledges a write as soon as it holds it, before every replica of the set does "
        "(the slip of the same name in tests/fixtures/java/Rip44Shim.java)",
        "step-conformance:confirm_offset", confirm=_ack_own_max),
    ReplicaMutant(
        "confirm-stays-put", None,
        "a master's confirmOffset never moves from where it took office, so no write is ever acknowledged "
        "(synthetic: only liveness can tell)",
        "write-acknowledged", confirm=_confirm_stays_put),
)}

SCENARIO_MUTANTS: tuple[MutantInfo, ...] = tuple(
    m for name, m in MUTANTS.items() if name not in EQUIVALENT_IN_SCENARIO) + tuple(REPLICA_MUTANTS.values())
