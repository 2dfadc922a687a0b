"""Truncation case files: read, validate (JSON schema + semantic checks), build spec records.

Every problem is a one-line UserError naming the file, the case and the field.
"""
from __future__ import annotations

import json
from importlib import resources

import jsonschema

from conformance.errors import UserError
from conformance.inputs import load_json
from spec.proofs.cases import Case, Expectation, Segment, Side
from spec.truncation.epoch_file import EpochEntry, EpochFile

SCHEMA_NAME = "truncation-cases.schema.json"


def schema() -> dict:
    return json.loads(resources.files("conformance.schemas").joinpath(SCHEMA_NAME).read_text(encoding="utf-8"))


def _where(path, doc) -> tuple[str, str]:
    """(case label, field path) for a JSON path inside a case file."""
    parts = list(path)
    case = "file"
    if len(parts) >= 2 and parts[0] == "cases" and isinstance(parts[1], int):
        index = parts[1]
        name = None
        try:
            name = doc["cases"][index].get("name")
        except (AttributeError, IndexError, KeyError, TypeError):
            pass
        case = f"case {name!r} (#{index + 1})" if name else f"case #{index + 1}"
        parts = parts[2:]
    field = "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(parts))
    return case, field or "(top level)"


def load_cases(path: str, known_algorithms) -> list[Case]:
    doc = load_json(path, "case file")
    validator = jsonschema.Draft202012Validator(schema())
    errors = sorted(validator.iter_errors(doc), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        err = errors[0]
        case, field = _where(err.absolute_path, doc)
        message = err.message if len(err.message) < 160 else err.message[:157] + "..."
        raise UserError(f"{path}: {case}: field {field}: {message}")
    cases = []
    for i, raw in enumerate(doc["cases"]):
        label = f"case {raw['name']!r} (#{i + 1})"
        algorithm = raw.get("algorithm", "reference")
        if algorithm not in known_algorithms:
            raise UserError(f"{path}: {label}: field algorithm: unknown {algorithm!r} "
                            f"(known: {', '.join(sorted(known_algorithms))})")
        sides = {}
        for side in ("master", "slave"):
            sides[side] = _side(path, label, side, raw[side])
        expect = raw["expect"]
        cases.append(Case(
            name=raw["name"],
            master=sides["master"],
            slave=sides["slave"],
            expect=Expectation(None if "failure" in expect else int(expect["consistent_point"]), "failure" in expect),
            description=raw.get("description", ""),
            variant=algorithm,
        ))
    names = [c.name for c in cases]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise UserError(f"{path}: case {dup!r}: field name: used by more than one case")
    return cases


def _side(path: str, label: str, side: str, raw: dict) -> Side:
    # the schema admits 3.0 as an integer: the records hold ints
    entries = tuple(EpochEntry(int(e), int(s)) for e, s in raw["epochs"])
    for k, (a, b) in enumerate(zip(entries, entries[1:]), start=1):
        if not (a.epoch < b.epoch and a.start_offset < b.start_offset):
            raise UserError(f"{path}: {label}: field {side}.epochs[{k}]: epochs and start offsets must both "
                            f"strictly increase ({[a.epoch, a.start_offset]} then {[b.epoch, b.start_offset]})")
    log = None
    if "log" in raw:
        segments = tuple(Segment(int(s), int(e), int(ep)) for s, e, ep in raw["log"])
        at = 0
        for k, seg in enumerate(segments):
            if seg.start != at or seg.end <= seg.start:
                raise UserError(f"{path}: {label}: field {side}.log[{k}]: segments must be non-empty and "
                                f"contiguous from offset 0 (expected start {at}, got {[seg.start, seg.end]})")
            at = seg.end
        if at != raw["max_offset"]:
            raise UserError(f"{path}: {label}: field {side}.log: segments end at {at}, "
                            f"but max_offset is {raw['max_offset']}")
        log = segments
    return Side(EpochFile(entries), int(raw["max_offset"]), log)
