"""How implementations under test plug into rmqha.

``resolve(spec)`` turns an ``--adapter`` spec into a connected ``ProtocolAdapter``:

| spec | what it is |
|---|---|
| ``reference`` | rmqha's reference (spec + reference nodes), in process |
| ``mutant:NAME`` | the reference with one known bug (``reference/mutants.py``) |
| ``python:MODULE:FACTORY`` | ``MODULE.FACTORY()`` returns an object with ``handle(request) -> response`` |
| ``stdio:COMMAND`` | a process speaking JSON lines on stdin/stdout (docs/adapter-protocol.md) |
| ``jvm:CLASSPATH:CLASS`` | a Java class with ``String handle(String)``, via JPype (CLASSPATH uses ``os.pathsep``) |

Handler-level campaigns and tests call ``adapter.call(operation, args)``; node-level
simulation wraps ``adapter`` in ``adapters.remote_node.RemoteNode``.
"""
from __future__ import annotations

import importlib
import os

from adapters.transports import InProcessAdapter, JvmAdapter, ProtocolAdapter, StdioAdapter
from adapters.errors import UserError

_CACHE: dict[str, ProtocolAdapter] = {}


def resolve(spec: str, fresh: bool = False) -> ProtocolAdapter:
    """A connected adapter for ``spec`` (handshake done). Cached per spec unless ``fresh``."""
    if not fresh and spec in _CACHE:
        if _CACHE[spec].alive():
            return _CACHE[spec]
        _CACHE.pop(spec).close()  # it died (e.g. crashed in an earlier run): start it again
    adapter = _connect(spec)
    adapter.hello()
    if not fresh:
        _CACHE[spec] = adapter
    return adapter


def close_all() -> None:
    for adapter in _CACHE.values():
        adapter.close()
    _CACHE.clear()


def _connect(spec: str) -> ProtocolAdapter:
    from adapters.reference_server import ReferenceServer

    if spec == "reference":
        return InProcessAdapter(spec, ReferenceServer())
    kind, _, rest = spec.partition(":")
    if kind == "mutant":
        try:
            return InProcessAdapter(spec, ReferenceServer(mutant=rest))
        except KeyError as exc:
            raise UserError(str(exc).strip('"')) from None
    if kind == "python":
        module_name, _, factory = rest.partition(":")
        if not module_name or not factory:
            raise UserError(f"adapter {spec!r}: use python:MODULE:FACTORY")
        try:
            module = importlib.import_module(module_name)
            obj = getattr(module, factory)()
        except (ImportError, AttributeError) as exc:
            raise UserError(f"adapter {spec!r}: {exc}") from None
        if not callable(getattr(obj, "handle", None)):
            raise UserError(f"adapter {spec!r}: {factory}() returned an object without handle(request)")
        return InProcessAdapter(spec, obj)
    if kind == "stdio":
        if not rest:
            raise UserError(f"adapter {spec!r}: use stdio:COMMAND")
        return StdioAdapter(spec, rest)
    if kind == "jvm":
        classpath, _, class_name = rest.rpartition(":")
        if not classpath or not class_name:
            raise UserError(f"adapter {spec!r}: use jvm:CLASSPATH:CLASS")
        return JvmAdapter(spec, classpath.split(os.pathsep), class_name)
    raise UserError(f"unknown adapter {spec!r} (reference, mutant:NAME, python:MODULE:FACTORY, stdio:COMMAND, "
                    f"jvm:CLASSPATH:CLASS)")
