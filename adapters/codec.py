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
from typing import Any, Callable

import attrs

from adapters.errors import quoted


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
#
# An encoder is chosen once per Python type (by the same rules, in the same order, as
# the list in the module docstring) and cached: a record's field names are listed once.

_PLAIN = frozenset({int, str, bool, float, type(None)})  # encoded as themselves


def encode(value: Any) -> Any:
    encoder = _ENCODERS.get(type(value))
    if encoder is None:
        encoder = _ENCODERS[type(value)] = _encoder_for(type(value))
    return encoder(value)


def _encoder_for(t: type) -> Callable[[Any], Any]:
    if issubclass(t, enum.Enum):  # before int: IntEnum codes are ints too
        return _enum_name
    if t is type(None) or issubclass(t, (bool, int, str, float)):
        return _itself
    if issubclass(t, (bytes, bytearray)):
        return lambda value: base64.b64encode(value).decode("ascii")
    if attrs.has(t):
        return _record_encoder(t)
    if issubclass(t, Mapping):
        return lambda value: [[encode(k), encode(v)] for k, v in sorted(value.items(), key=lambda kv: _sort_key(kv[0]))]
    if issubclass(t, (set, frozenset)):
        return lambda value: [encode(v) for v in sorted(value, key=_sort_key)]
    if issubclass(t, (tuple, list)):
        return lambda value: [v if type(v) in _PLAIN else encode(v) for v in value]

    def cannot(value: Any) -> Any:
        raise CodecError("", f"cannot encode {t.__name__}")

    return cannot


def _enum_name(value: enum.Enum) -> str:
    return value.name


def _itself(value: Any) -> Any:
    return value


def _record_encoder(cls: type) -> Callable[[Any], dict]:
    tag, names = cls.__name__, tuple(f.name for f in attrs.fields(cls))

    def encode_record(value: Any) -> dict:
        out = {"@type": tag}
        for name in names:
            v = getattr(value, name)
            out[name] = v if type(v) in _PLAIN else encode(v)
        return out

    return encode_record


_ENCODERS: dict[type, Callable[[Any], Any]] = {}


def _sort_key(x: Any):
    return (str(type(x).__name__), repr(x))


# ------------------------------------------------------------------ decoding
#
# ``decode`` is driven by a decoder compiled once per type and cached: the typing form
# is taken apart, and a record's fields listed with their decoders, on first use rather
# than on every call. A decoder is ``decoder(data, reg, path) -> value``; ``exact`` on
# it lists the JSON types it returns unchanged and is the only thing it accepts (int,
# str, bool and unions of them), so a record or an array checks such values inline.

Decoder = Callable[[Any, Registry, str], Any]


def decode(data: Any, hint: Any, reg: Registry, path: str = "") -> Any:
    """Decode ``data`` as a value of type ``hint`` (a class or a typing form)."""
    return decoder(hint)(data, reg, path)


def decoder(hint: Any) -> Decoder:
    """The decoder of ``hint``, compiled on first use."""
    try:
        return _DECODERS[hint, type(hint)]
    except KeyError:
        compiled = _DECODERS[hint, type(hint)] = _compile(hint)
        return compiled
    except TypeError:  # an unhashable typing form: compiled for this call only
        return _compile(hint)


_DECODERS: dict[tuple[Any, type], Decoder] = {}


def _exact(dec: Decoder, types_: frozenset = frozenset()) -> Decoder:
    dec.exact = types_  # type: ignore[attr-defined]
    return dec


def _compile(hint: Any) -> Decoder:
    if hint is Any or hint is None or hint is object:
        return _exact(_decode_untyped)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return _union_decoder(hint, args)
    if origin in (tuple, list) or hint in (tuple, list):
        as_list = origin is list or hint is list
        if origin is tuple and args and args[-1] is not Ellipsis:
            return _fixed_tuple_decoder(tuple(decoder(a) for a in args))
        return _array_decoder(decoder(args[0] if args else Any), list if as_list else tuple)
    if origin in (frozenset, set) or hint in (frozenset, set):
        return _array_decoder(decoder(args[0] if args else Any), frozenset)
    if origin in (dict, Mapping, typing.Mapping) or (isinstance(hint, type) and issubclass(hint, Mapping)
                                                     and not attrs.has(hint)):
        key_t, value_t = (args + (Any, Any))[:2] if args else (Any, Any)
        wrap = hint if isinstance(hint, type) and issubclass(hint, Mapping) and hint not in (dict,) else None
        return _mapping_decoder(decoder(key_t), decoder(value_t), wrap)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum_decoder(hint)
    if isinstance(hint, type) and attrs.has(hint):
        return _exact(lambda data, reg, path: _decode_record(data, hint, reg, path))
    if hint in _SCALARS:
        return _SCALARS[hint]
    return _exact(_decode_untyped)


def _union_decoder(hint: Any, args: tuple) -> Decoder:
    nullable = type(None) in args
    options = tuple(decoder(a) for a in args if a is not type(None))

    def decode_union(data: Any, reg: Registry, path: str) -> Any:
        if data is None and nullable:
            return None
        errors = []
        for option in options:
            try:
                return option(data, reg, path)
            except CodecError as exc:
                errors.append(str(exc))
        raise CodecError(path, f"does not fit {hint} ({'; '.join(errors)})")

    # options that each accept exactly their own types (int | None, str | None): values of
    # those types are returned unchanged whichever option is tried first
    exact = frozenset({type(None)} if nullable else ())
    for option in options:
        if not option.exact or option.exact & exact:
            return _exact(decode_union)
        exact |= option.exact
    return _exact(decode_union, exact)


def _fixed_tuple_decoder(items: tuple[Decoder, ...]) -> Decoder:
    def decode_fixed(data: Any, reg: Registry, path: str) -> tuple:
        if not isinstance(data, list):
            raise CodecError(path, f"expected an array, got {type(data).__name__}")
        if len(items) != len(data):
            raise CodecError(path, f"expected {len(items)} items, got {len(data)}")
        return tuple(d(x, reg, f"{path}[{i}]") for i, (x, d) in enumerate(zip(data, items)))

    return _exact(decode_fixed)


def _array_decoder(item: Decoder, make: type) -> Decoder:
    exact = item.exact

    def decode_array(data: Any, reg: Registry, path: str) -> Any:
        if not isinstance(data, list):
            raise CodecError(path, f"expected an array, got {type(data).__name__}")
        if exact:
            for x in data:
                if type(x) not in exact:
                    break
            else:
                return make(data)
        return make([item(x, reg, f"{path}[{i}]") for i, x in enumerate(data)])

    return _exact(decode_array)


def _mapping_decoder(key: Decoder, value: Decoder, wrap: type | None) -> Decoder:
    def decode_mapping(data: Any, reg: Registry, path: str) -> Any:
        if not isinstance(data, list):
            raise CodecError(path, "expected an array of [key, value] pairs")
        out = {}
        for i, pair in enumerate(data):
            if not (isinstance(pair, list) and len(pair) == 2):
                raise CodecError(f"{path}[{i}]", "expected a [key, value] pair")
            k = key(pair[0], reg, f"{path}[{i}][0]")
            out[_hashable(k)] = value(pair[1], reg, f"{path}[{i}][1]")
        if wrap is not None:
            try:
                return wrap(out)
            except TypeError:
                return out
        return out

    return _exact(decode_mapping)


def _enum_decoder(cls: type) -> Decoder:
    members = cls.__members__

    def decode_enum(data: Any, reg: Registry, path: str) -> Any:
        if isinstance(data, str):
            member = members.get(data)
            if member is not None:
                return member
        raise CodecError(path, f"expected one of {', '.join(members)}, got {quoted(data)}")

    return _exact(decode_enum)


def _decode_bool(data: Any, reg: Registry, path: str) -> bool:
    if not isinstance(data, bool):
        raise CodecError(path, f"expected true or false, got {quoted(data)}")
    return data


def _decode_int(data: Any, reg: Registry, path: str) -> int:
    if isinstance(data, bool) or not isinstance(data, int):
        raise CodecError(path, f"expected an integer, got {quoted(data)}")
    return data


def _decode_float(data: Any, reg: Registry, path: str) -> float:
    if isinstance(data, bool) or not isinstance(data, (int, float)):
        raise CodecError(path, f"expected a number, got {quoted(data)}")
    return float(data)


def _decode_str(data: Any, reg: Registry, path: str) -> str:
    if not isinstance(data, str):
        raise CodecError(path, f"expected a string, got {quoted(data)}")
    return data


def _decode_bytes(data: Any, reg: Registry, path: str) -> bytes:
    if isinstance(data, str):
        try:
            return base64.b64decode(data, validate=True)
        except ValueError:
            pass
    raise CodecError(path, f"expected bytes as a base64 string, got {str(data)[:40]!r}")


_SCALARS: dict[type, Decoder] = {bool: _exact(_decode_bool, frozenset({bool})), int: _exact(_decode_int, frozenset({int})),
                                 float: _exact(_decode_float), str: _exact(_decode_str, frozenset({str})),
                                 bytes: _exact(_decode_bytes)}


def _hashable(x: Any) -> Any:
    return tuple(_hashable(v) for v in x) if isinstance(x, list) else x


def _decode_record(data: Any, cls: type, reg: Registry, path: str) -> Any:
    if not isinstance(data, dict):
        raise CodecError(path, f"expected a {cls.__name__} object, got {type(data).__name__}")
    tag = data.get("@type", cls.__name__)
    if tag != cls.__name__:
        other = reg.records.get(tag) if isinstance(tag, str) else None
        if other is None or not issubclass(other, cls):
            raise CodecError(path, f"expected type {cls.__name__}, got {quoted(tag)}")
        cls = other
    try:
        build = _BUILDERS[cls]
    except KeyError:
        build = _BUILDERS[cls] = _record_builder(cls)
    return build(data, reg, path)


_BUILDERS: dict[type, Decoder] = {}


def _record_builder(cls: type) -> Decoder:
    """Decodes an object already known to be a ``cls``: each field by its type, unknown
    fields refused, missing ones without a default named."""
    if getattr(cls, "__attrs_types_resolved__", None) is not cls:
        try:  # field types written as strings (postponed annotations) become types
            attrs.resolve_types(cls, globalns=vars(importlib.import_module(cls.__module__)))
        except Exception:  # a field type that cannot be resolved decodes structurally
            pass
    fields = tuple((f.name, decoder(f.type if f.type is not None else Any), f.default is attrs.NOTHING)
                   for f in attrs.fields(cls))
    fields = tuple((name, dec, dec.exact, required) for name, dec, required in fields)
    known = frozenset(name for name, *_ in fields) | {"@type"}
    name_of_cls = cls.__name__

    def build(data: dict, reg: Registry, path: str) -> Any:
        kwargs = {}
        for name, dec, exact, required in fields:
            if name in data:
                v = data[name]
                kwargs[name] = v if type(v) in exact else dec(v, reg, f"{path}.{name}")
            elif required:
                raise CodecError(f"{path}.{name}", "missing field")
        if len(kwargs) + ("@type" in data) != len(data):
            unknown = data.keys() - known
            raise CodecError(path, f"unknown field(s) {', '.join(sorted(unknown))} for {name_of_cls}")
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as exc:
            raise CodecError(path, f"invalid {name_of_cls}: {exc}") from None

    return build


def _decode_untyped(data: Any, reg: Registry, path: str) -> Any:
    if isinstance(data, dict):
        tag = data.get("@type")
        cls = reg.records.get(tag) if isinstance(tag, str) else None
        if cls is None:
            raise CodecError(path, f"an object needs a known \"@type\" (got {quoted(tag)})")
        return _decode_record(data, cls, reg, path)
    if isinstance(data, list):
        return tuple(_decode_untyped(d, reg, f"{path}[{i}]") for i, d in enumerate(data))
    return data
