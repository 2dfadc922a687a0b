"""Small JSON-able dicts for controller records.

Controller log entries carry events; adapters exchange requests and responses.
A record becomes ``{"type": <class name>, <field>: <value>, ...}`` with None fields
left out, sets as sorted lists, maps as sorted ``[key, value]`` pairs and response
codes as integers. Decoding relies on the records' own attrs converters.
"""
from __future__ import annotations

import enum
from typing import Any, Iterable, Mapping

import attrs

from spec.controller import events as _events
from spec.controller import records as _records
from spec.frozenmap import FrozenMap


def _registry(types: Iterable[type]) -> dict[str, type]:
    return {t.__name__: t for t in types}


_EVENT_TYPES = _registry(_events.EVENT_TYPES)
_RECORD_TYPES = _registry(
    [
        *_events.EVENT_TYPES,
        *_records.RESPONSE_TYPE_OF,
        *_records.RESPONSE_TYPE_OF.values(),
        _records.SyncStateSet,
    ]
)


def _encode(value: Any) -> Any:
    if attrs.has(type(value)):
        return record_to_dict(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (frozenset, set)):
        return sorted(value)
    if isinstance(value, (FrozenMap, dict)):
        return [[k, _encode(v)] for k, v in sorted(value.items())]
    if isinstance(value, (tuple, list)):
        return [_encode(v) for v in value]
    return value


def record_to_dict(record: Any) -> dict:
    out: dict[str, Any] = {"type": type(record).__name__}
    for field in attrs.fields(type(record)):
        value = getattr(record, field.name)
        if value is not None:
            out[field.name] = _encode(value)
    return out


def _decode(value: Any, registry: Mapping[str, type]) -> Any:
    if isinstance(value, dict) and "type" in value:
        return _from_dict(value, registry)
    return value


def _from_dict(data: Mapping[str, Any], registry: Mapping[str, type]) -> Any:
    try:
        cls = registry[data["type"]]
    except KeyError:
        raise ValueError(f"unknown record type {data.get('type')!r}") from None
    names = {f.name for f in attrs.fields(cls)}
    unknown = set(data) - names - {"type"}
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown field(s) {sorted(unknown)}")
    values = {k: _decode(v, registry) for k, v in data.items() if k != "type"}
    # None fields were left out when encoding; required ones come back as None.
    for field in attrs.fields(cls):
        if field.name not in values and field.default is attrs.NOTHING:
            values[field.name] = None
    return cls(**values)


def record_from_dict(data: Mapping[str, Any]) -> Any:
    """Decode any controller request, response, event or SyncStateSet body."""
    return _from_dict(data, _RECORD_TYPES)


def event_to_dict(event: _events.ControllerEvent) -> dict:
    if type(event) not in _events.EVENT_TYPES:
        raise TypeError(f"not a controller event: {event!r}")
    return record_to_dict(event)


def event_from_dict(data: Mapping[str, Any]) -> _events.ControllerEvent:
    return _from_dict(data, _EVENT_TYPES)
