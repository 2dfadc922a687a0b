"""The node states rmqha's reference reaches in long campaigns, per scenario.

A scenario's universe of node states (``Scenario.abstract_universe``) is a product of
components, and most of its combinations cannot happen. Which ones can is not decided
here; what is known is which ones the reference has reached: ``reference_reached.json``,
the union of the node states of long searched campaigns of the reference
(``python benchmarks/reference_sweep.py --reached conformance/scenarios/reference_reached.json``
adds a sweep's to it). A campaign's report sets its own against them: the node states
the reference reaches that the campaign never did (where it did not steer, or where the
implementation does not go), and those it reached that the reference never has (an
implementation's own ways, or a corner no sweep has reached yet).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from conformance.errors import UserError
from results.schema import abstract_node_part

REACHED_FILE = Path(__file__).with_name("reference_reached.json")


def read_reached(path: Path = REACHED_FILE) -> dict:
    """``{"scenarios": {name: [node state, ...]}, "sweeps": [what added them, ...]}``
    (empty when the file does not exist)."""
    if not path.is_file():
        return {"scenarios": {}, "sweeps": []}
    try:
        data = json.loads(path.read_text())
        return {"scenarios": {str(k): [str(x) for x in v] for k, v in data.get("scenarios", {}).items()},
                "sweeps": [str(x) for x in data.get("sweeps", [])]}
    except (OSError, ValueError, AttributeError, TypeError) as exc:
        raise UserError(f"{path}: not a file of node states ({{\"scenarios\": {{name: [state, ...]}}, "
                        f"\"sweeps\": [...]}}): {exc}") from None


def reference_reached(scenario: str, path: Path = REACHED_FILE) -> tuple[str, ...]:
    return tuple(read_reached(path)["scenarios"].get(scenario, ()))


def add_reached(path: Path, scenario: str, states: Iterable[str], sweep: str, universe: Iterable[str]) -> int:
    """Add the node parts of ``states`` that are in ``universe`` (the scenario's node
    states: the controller scenario's controllers reach states of their own, which no
    report counts) to ``scenario``'s in ``path`` and note ``sweep`` (what reached them);
    how many were new."""
    data = read_reached(path)
    known = set(data["scenarios"].get(scenario, ()))
    new = ({abstract_node_part(s) for s in states} & set(universe)) - known
    data["scenarios"][scenario] = sorted(known | new)
    data["sweeps"].append(sweep)
    data["scenarios"] = dict(sorted(data["scenarios"].items()))
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(path)  # a sweep killed mid-write leaves the file as it was
    return len(new)
