"""An immutable, hashable mapping for frozen spec records.

attrs records in spec/ are frozen and hashable; a plain ``dict`` field would make
them unhashable and mutable through the back door. ``FrozenMap`` wraps a dict,
never exposes it, and returns a new map from ``set``/``remove``.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class FrozenMap(Mapping, Generic[K, V]):
    __slots__ = ("_items", "_hash")

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()):
        self._items: dict[K, V] = dict(items)
        self._hash: int | None = None

    def __getitem__(self, key: K) -> V:
        return self._items[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    # The Mapping mixins would go through __getitem__ in Python, key by key; the dict's
    # own methods answer the same (its views are read-only: the dict stays unexposed).
    def get(self, key: K, default: Any = None) -> Any:
        return self._items.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def keys(self):
        return self._items.keys()

    def items(self):
        return self._items.items()

    def values(self):
        return self._items.values()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._items.items()))
        return self._hash

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, FrozenMap):
            return self._items == other._items
        if isinstance(other, Mapping):
            return self._items == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"

    def set(self, key: K, value: V) -> "FrozenMap[K, V]":
        items = dict(self._items)
        items[key] = value
        return FrozenMap(items)

    def remove(self, key: K) -> "FrozenMap[K, V]":
        if key not in self._items:
            return self
        items = dict(self._items)
        del items[key]
        return FrozenMap(items)


def frozen_map(value: Mapping | Iterable[tuple] | None) -> FrozenMap:
    """attrs converter: accepts a mapping, pairs (as decoded from JSON) or None."""
    if isinstance(value, FrozenMap):
        return value
    if value is None:
        return FrozenMap()
    if isinstance(value, Mapping):
        return FrozenMap(value)
    return FrozenMap((k, v) for k, v in value)
