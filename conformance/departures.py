"""Known departures of upstream releases from the spec, as data.

The spec follows what upstream's code intends (or what the design notes say) and says so
where that differs from what the released code does (docs/controller.md,
docs/truncation.md). A real implementation that shows one of these differences is not
reported as a generic disagreement but by name: each departure here reproduces upstream's
behaviour — a named variant of the spec, a known-bad variant of the reference, or "upstream
throws here" — and ``conformance.differential.compare`` names the first that reproduces
an implementation's answer.

Only upstream's own behaviour is listed: a synthetic mutant that an implementation happens
to reproduce is still a plain disagreement.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import attrs

from adapters.operations import OPERATIONS
from reference.mutants_controller import controller_rules, get_mutant
from spec.controller.events import UpdateBrokerAddressEvent
from spec.controller.profiles import get_profile
from spec.controller.records import ElectMasterRequest
from spec.truncation import epoch_file as ef
from spec.truncation import replication
from spec.truncation.algebra import Variant
from spec.truncation.variants import MUTANTS as TRUNCATION_VARIANTS


@attrs.frozen(slots=True)
class Departure:
    name: str
    issue: Optional[str]  # the upstream issue, PR or class that has it
    description: str
    # upstream's answer, ``answer(profile, args)``, for a departure in what is answered
    answer: Optional[Callable[[Optional[str], dict], Any]] = None
    # for a departure where upstream throws and the spec answers: does it throw on ``args``?
    throws: Optional[Callable[[dict], bool]] = None

    def label(self) -> str:
        return f"{self.name} ({self.issue})" if self.issue else self.name


# ------------------------------------------------------------------ epoch file

# how each epoch-file operation answers under a Variant of spec/truncation/algebra.py
UNDER_VARIANT: dict[str, Callable[[dict, Variant], Any]] = {
    "truncation.find_consistent_point": lambda a, v: ef.find_consistent_point(
        a["local"], a["local_max"], a["master"], a["master_max"], v),
    "truncation.truncate_suffix_by_offset": lambda a, v: ef.truncate_suffix_by_offset(a["epoch_file"], a["offset"], v),
    "truncation.truncate_suffix_by_epoch": lambda a, v: ef.truncate_suffix_by_epoch(a["epoch_file"], a["epoch"], v),
    "truncation.truncate_prefix_by_offset": lambda a, v: ef.truncate_prefix_by_offset(a["epoch_file"], a["offset"], v),
    "truncation.slave_handshake": lambda a, v: replication.slave_handshake(
        a["local"], a["local_max"], a["master"], a["master_max"], variant=v),
    "truncation.change_to_master": lambda a, v: replication.change_to_master(
        a["epoch_file"], a["epoch"], a["valid_max_offset"], a["had_dirty_tail"], v),
}
# upstream's EpochFileCache as released (5.1.x, develop before PR #9942)
UPSTREAM_EPOCH_FILE_VARIANTS = ("upstream-empty-epoch", "finite-end-after-suffix-truncation")


def combined_variant(names: tuple[str, ...]) -> Variant:
    """The variant with every flag the named variants set."""
    flags: dict[str, bool] = {}
    for name in names:
        variant = TRUNCATION_VARIANTS[name].variant
        flags.update({f.name: getattr(variant, f.name) for f in attrs.fields(Variant)
                      if getattr(variant, f.name) != getattr(Variant(), f.name)})
    return Variant(**flags)


UPSTREAM_EPOCH_FILE = combined_variant(UPSTREAM_EPOCH_FILE_VARIANTS)


def _variant_departure(operation: str, names: tuple[str, ...]) -> Departure:
    combined = combined_variant(names)
    records = [TRUNCATION_VARIANTS[n] for n in names]
    return Departure(" + ".join(names), "; ".join(r.issue for r in records if r.issue) or None,
                     "; ".join(r.description for r in records),
                     answer=lambda profile, args: UNDER_VARIANT[operation](args, combined))


def _epoch_file_departures(operation: str) -> tuple[Departure, ...]:
    singles = tuple(_variant_departure(operation, (n,)) for n in UPSTREAM_EPOCH_FILE_VARIANTS)
    return singles + (_variant_departure(operation, UPSTREAM_EPOCH_FILE_VARIANTS),)


# ------------------------------------------------------------------ controller

def _mutant_departure(name: str, operation_answer: Callable) -> Departure:
    mutant = get_mutant(name)
    return Departure(mutant.name, f"apache/rocketmq{mutant.issue}" if mutant.issue else None, mutant.description,
                     answer=operation_answer)


def _handle_with(mutant: str) -> Callable[[Optional[str], dict], Any]:
    def answer(profile, args):
        rules = attrs.evolve(controller_rules(mutant), profile=get_profile(profile or "rocketmq-5.1"))
        return rules.handle(args["metadata"], args["request"], args["liveness"], is_leader=args["is_leader"])
    return answer


def _elect_with_an_alive_broker_without_live_info(args: dict) -> bool:
    request, liveness = args["request"], args["liveness"]
    if not isinstance(request, ElectMasterRequest):
        return False
    found = args["metadata"].known(request.broker_name)
    return found is not None and any(
        liveness.is_alive(request.cluster_name, request.broker_name, b)
        and liveness.live_info(request.cluster_name, request.broker_name, b) is None
        for b in found.replicas.brokers)


def _update_address_of_a_set_without_replicas(args: dict) -> bool:
    event, found = args["event"], args["metadata"].get(getattr(args["event"], "broker_name", None))
    return isinstance(event, UpdateBrokerAddressEvent) and (found is None or found.replicas is None)


DEPARTURES: dict[str, tuple[Departure, ...]] = {
    **{op: _epoch_file_departures(op) for op in UNDER_VARIANT},
    "controller.handle": (
        _mutant_departure("elect-offset-comparator-overflow", _handle_with("elect-offset-comparator-overflow")),
        Departure(
            "elect-candidate-without-live-info-throws", "DefaultElectPolicy (5.1.x, develop)",
            "an election whose candidates include a broker the valid predicate calls alive but the live-info "
            "getter has no entry for throws a NullPointerException (its comparator reads each candidate's "
            "BrokerLiveInfo); the spec ranks such a broker last. Upstream's controller meets it only when the "
            "scan removes a candidate's heartbeat entry between the two reads of brokerLiveTable",
            throws=_elect_with_an_alive_broker_without_live_info),
    ),
    "controller.apply_event": (Departure(
        "update-address-of-unknown-set-throws", "ReplicasInfoManager.handleUpdateBrokerAddress (5.1.x, develop)",
        "an UpdateBrokerAddressEvent for a broker set without its replica table throws a NullPointerException; the "
        "spec's state machine is total (it changes nothing). The controller never commits one: registerBroker emits "
        "it only for a registered set, and each call's events are applied right after it",
        throws=_update_address_of_a_set_without_replicas),),
}
assert set(DEPARTURES) <= set(OPERATIONS)


def known_departure(operation: str, profile: Optional[str], args: dict, got: Any) -> Optional[Departure]:
    """The first known departure whose answer is ``got`` (canonical), if any."""
    canonical = OPERATIONS[operation].canonical
    for departure in DEPARTURES.get(operation, ()):
        if departure.answer is not None and canonical(departure.answer(profile, args)) == got:
            return departure
    return None


def counted(departures: dict) -> str:
    """Departure label -> times seen, as the command lines print it: ``label x3; other x1``."""
    return "; ".join(f"{label} x{n}" for label, n in sorted(departures.items()))


def known_throw(operation: str, args: dict) -> Optional[Departure]:
    """The known departure under which upstream throws on ``args``, if any."""
    return next((d for d in DEPARTURES.get(operation, ()) if d.throws is not None and d.throws(args)), None)
