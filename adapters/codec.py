"""JSON for spec records, so any language can speak the adapter protocol.

Encoding (docs/adapter-protocol.md, "Values"):

* an attrs record → an object with ``"@type": "<ClassName>"`` and one key per field;
* an enum → its name (``"ACCEPT"``, ``"SUCCESS"``);
* a tuple or list → an array; a set or frozenset → a sorted array;
* a mapping → an array of ``[key, value]`` pairs, sorted by key (keys may be arrays);
* ``None`` → null; ints, strings, bools as themselves; bytes (a classic frame's body,
  a commitlog) → a base64 string.

Decoding is driven by the field types of the records (so an enum field accepts its
name), and by ``"@type"`` where a field may hold several kinds of record (effects).
Anything that does not fit raises ``CodecError`` naming the path of the bad value.
"""
from __future__ import annotations

import base64
import enum
import importlib
import pkgutil
import types
import typing
from collections.abc import Mapping
from typing import Any

import attrs


class CodecError(ValueError):
    def __init__(self, path: str, message: str):
        super().__init__(f"{path or '(value)'}: {message}")
        self.path = path


NAMESPACES = {
    "dledger": ("spec.dledger",),
    "truncation": ("spec.truncation",),
    # (a controller node's reference implementation talks DLedger to its peers)
    "controller": ("spec.controller", "spec.frozenmap", "spec.dledger"),
    # (a broker node speaks the HA messages of spec.truncation to its peers)
    "broker": ("spec.broker", "spec.controller", "spec.truncation", "spec.frozenmap"),
    "raft": ("spec.raft",),
    "classic": ("spec.classic",),
}
# the codec namespace of each node kind's messages, views and configs
NODE_NAMESPACES = {"dledger": "dledger", "raft": "raft", "replica": "truncation", "broker": "broker",
                   "controller": "controller", "classic": "classic"}


class Registry:
    """Record and enum classes by name, for one namespace of operations."""

    def __init__(self, packages: tuple[str, ...]):
        self.records: dict[str, type] = {}
        self.enums: dict[str, type] = {}
        for package in packages:
            for module in _modules(package):
                for name, obj in vars(module).items():
                    if not isinstance(obj, type) or obj.__module__ != module.__name__:
                        continue
                    if attrs.has(obj):
                        self.records.setdefault(name, obj)
                    elif issubclass(obj, enum.Enum):
                        self.enums.setdefault(name, obj)
        for cls in self.records.values():
            try:
                attrs.resolve_types(cls, globalns=vars(importlib.import_module(cls.__module__)))
            except Exception:  # a field type that cannot be resolved decodes structurally
                pass


def _modules(package: str):
    root = importlib.import_module(package)
    yield root
    for info in pkgutil.walk_packages(getattr(root, "__path__", []), prefix=package + "."):
        if not info.name.split(".")[-1].startswith("_") and ".proofs" not in info.name:
            yield importlib.import_module(info.name)


_REGISTRIES: dict[str, Registry] = {}


def registry(namespace: str) -> Registry:
    if namespace not in _REGISTRIES:
        _REGISTRIES[namespace] = Registry(NAMESPACES[namespace])
    return _REGISTRIES[namespace]


# ------------------------------------------------------------------ encoding


def encode(value: Any) -> Any:
    if isinstance(value, enum.Enum):  # before int: IntEnum codes are ints too
        return value.name
    if value is None or isinstance(value, (bool, int, str, float)):
        return value
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if attrs.has(type(value)):
        out = {"@type": type(value).__name__}
        for f in attrs.fields(type(value)):
            out[f.name] = encode(getattr(value, f.name))
        return out
    if isinstance(value, Mapping):
        return [[encode(k), encode(v)] for k, v in sorted(value.items(), key=lambda kv: _sort_key(kv[0]))]
    if isinstance(value, (set, frozenset)):
        return [encode(v) for v in sorted(value, key=_sort_key)]
    if isinstance(value, (tuple, list)):
        return [encode(v) for v in value]
    raise CodecError("", f"cannot encode {type(value).__name__}")


def _sort_key(x: Any):
    return (str(type(x).__name__), repr(x))


# ------------------------------------------------------------------ decoding


def decode(data: Any, hint: Any, reg: Registry, path: str = "") -> Any:
    """Decode ``data`` as a value of type ``hint`` (a class or a typing form)."""
    if hint is Any or hint is None or hint is object:
        return _decode_untyped(data, reg, path)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        errors = []
        for option in (a for a in args if a is not type(None)):
            try:
                return decode(data, option, reg, path)
            except CodecError as exc:
                errors.append(str(exc))
        raise CodecError(path, f"does not fit {hint} ({'; '.join(errors)})")
    if origin in (tuple, list) or hint in (tuple, list):
        if not isinstance(data, list):
            raise CodecError(path, f"expected an array, got {type(data).__name__}")
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(args) != len(data):
                raise CodecError(path, f"expected {len(args)} items, got {len(data)}")
            return tuple(decode(d, a, reg, f"{path}[{i}]") for i, (d, a) in enumerate(zip(data, args)))
        item = args[0] if args else Any
        values = [decode(d, item, reg, f"{path}[{i}]") for i, d in enumerate(data)]
        return values if origin is list or hint is list else tuple(values)
    if origin in (frozenset, set) or hint in (frozenset, set):
        if not isinstance(data, list):
            raise CodecError(path, f"expected an array, got {type(data).__name__}")
        item = args[0] if args else Any
        return frozenset(decode(d, item, reg, f"{path}[{i}]") for i, d in enumerate(data))
    if origin in (dict, Mapping, typing.Mapping) or (isinstance(hint, type) and issubclass(hint, Mapping)
                                                     and not attrs.has(hint)):
        if not isinstance(data, list):
            raise CodecError(path, "expected an array of [key, value] pairs")
        key_t, value_t = (args + (Any, Any))[:2] if args else (Any, Any)
        out = {}
        for i, pair in enumerate(data):
            if not (isinstance(pair, list) and len(pair) == 2):
                raise CodecError(f"{path}[{i}]", "expected a [key, value] pair")
            key = decode(pair[0], key_t, reg, f"{path}[{i}][0]")
            out[_hashable(key)] = decode(pair[1], value_t, reg, f"{path}[{i}][1]")
        if isinstance(hint, type) and issubclass(hint, Mapping) and hint not in (dict,):
            try:
                return hint(out)
            except TypeError:
                return out
        return out
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        if not isinstance(data, str) or data not in hint.__members__:
            raise CodecError(path, f"expected one of {', '.join(hint.__members__)}, got {data!r}")
        return hint[data]
    if isinstance(hint, type) and attrs.has(hint):
        return _decode_record(data, hint, reg, path)
    if hint is bool:
        if not isinstance(data, bool):
            raise CodecError(path, f"expected true or false, got {data!r}")
        return data
    if hint is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise CodecError(path, f"expected an integer, got {data!r}")
        return data
    if hint is float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise CodecError(path, f"expected a number, got {data!r}")
        return float(data)
    if hint is str:
        if not isinstance(data, str):
            raise CodecError(path, f"expected a string, got {data!r}")
        return data
    if hint is bytes:
        if isinstance(data, str):
            try:
                return base64.b64decode(data, validate=True)
            except ValueError:
                pass
        raise CodecError(path, f"expected bytes as a base64 string, got {str(data)[:40]!r}")
    return _decode_untyped(data, reg, path)


def _hashable(x: Any) -> Any:
    return tuple(_hashable(v) for v in x) if isinstance(x, list) else x


def _decode_record(data: Any, cls: type, reg: Registry, path: str) -> Any:
    if not isinstance(data, dict):
        raise CodecError(path, f"expected a {cls.__name__} object, got {type(data).__name__}")
    tag = data.get("@type", cls.__name__)
    if tag != cls.__name__:
        other = reg.records.get(tag)
        if other is None or not issubclass(other, cls):
            raise CodecError(path, f"expected type {cls.__name__}, got {tag!r}")
        cls = other
    kwargs = {}
    for f in attrs.fields(cls):
        if f.name in data:
            kwargs[f.name] = decode(data[f.name], f.type if f.type is not None else Any, reg, f"{path}.{f.name}")
        elif f.default is attrs.NOTHING:
            raise CodecError(f"{path}.{f.name}", "missing field")
    unknown = set(data) - {f.name for f in attrs.fields(cls)} - {"@type"}
    if unknown:
        raise CodecError(path, f"unknown field(s) {', '.join(sorted(unknown))} for {cls.__name__}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise CodecError(path, f"invalid {cls.__name__}: {exc}") from None


def _decode_untyped(data: Any, reg: Registry, path: str) -> Any:
    if isinstance(data, dict):
        tag = data.get("@type")
        cls = reg.records.get(tag) if isinstance(tag, str) else None
        if cls is None:
            raise CodecError(path, f"an object needs a known \"@type\" (got {tag!r})")
        return _decode_record(data, cls, reg, path)
    if isinstance(data, list):
        return tuple(_decode_untyped(d, reg, f"{path}[{i}]") for i, d in enumerate(data))
    return data
