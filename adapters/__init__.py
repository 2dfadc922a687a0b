"""How implementations under test plug into rmqha.

``resolve(spec)`` turns an ``--adapter`` spec into a connected ``ProtocolAdapter``
(handshake done, capabilities known). docs/adapters.md describes every form:

| spec | what it is |
|---|---|
| ``reference`` | rmqha's reference (spec + reference nodes), in process |
| ``mutant:NAME`` | the reference with one known bug (``reference/mutants.py``) |
| ``pysyncobj`` | PySyncObj's Raft core as ``raft`` nodes, over TCP-like links (``adapters/pysyncobj_server.py``) |
| ``pysyncobj:datagram`` | the same over links that may reorder and duplicate (a ``transport=`` of its own) |
| ``pysyncobj:tcp`` | PySyncObj with its own TCP transport and connection code over simulated sockets (``adapters/simulated_tcp.py``): takes link faults |
| ``pysyncobj:memory`` | PySyncObj with its default in-memory journal (nothing survives a crash); combines with ``datagram`` |
| ``python:MODULE:FACTORY`` | ``MODULE.FACTORY()`` returns an object with ``handle(request) -> response`` |
| ``stdio:COMMAND`` | a process speaking JSON lines on stdin/stdout (docs/adapter-protocol.md) |
| ``jvm:CLASSPATH:CLASS`` | a Java class with ``String handle(String)``, via JPype (CLASSPATH uses ``os.pathsep``) |
| ``jvm:dledger[:CLASSPATH]`` | the real DLedger elector's handlers (``adapters/jvm_targets.py``) |
| ``jvm:rocketmq[:CLASSPATH]`` | the real RocketMQ controller and epoch classes (``adapters/jvm_targets.py``) |

Handler-level tests call ``adapter.invoke(operation, args)``; node-level simulation
wraps ``adapter`` in ``adapters.remote_node.RemoteNode``.
"""
from __future__ import annotations

import atexit
import importlib
from typing import Callable

from adapters import jvm_targets, placement
from adapters.errors import AdapterError, UserError
from adapters.reference_server import ReferenceServer
from adapters.transports import InProcessAdapter, ProtocolAdapter, StdioAdapter, Watchdog, default_timeout

_CACHE: dict[str, ProtocolAdapter] = {}

FORMS = ("reference", "mutant:NAME", "pysyncobj[:datagram][:memory]", "python:MODULE:FACTORY", "stdio:COMMAND",
         "jvm:CLASSPATH:CLASS", "jvm:dledger[:CLASSPATH]", "jvm:rocketmq[:CLASSPATH]")


def runs_in_process(spec: str) -> bool:
    """Whether ``spec`` is one of rmqha's own implementations, which start no process and
    load no code of anyone else's (``reference``, ``mutant:``, ``pysyncobj``); ``stdio:``
    starts a command, ``python:`` imports a module, ``jvm:`` loads classes."""
    return spec == "reference" or spec.partition(":")[0] in ("mutant", "pysyncobj")


def resolve(spec: str, fresh: bool = False) -> ProtocolAdapter:
    """A connected adapter for ``spec`` (handshake done). Cached per spec unless ``fresh``."""
    if not fresh and spec in _CACHE:
        if _CACHE[spec].alive():
            return _CACHE[spec]
        _CACHE.pop(spec).close()  # it died or broke (e.g. in an earlier run): start it again
    adapter = connect(spec)
    try:
        adapter.hello()
    except BaseException:
        adapter.close()
        raise
    if not fresh:
        _CACHE[spec] = adapter
    return adapter


def open_adapters() -> tuple[ProtocolAdapter, ...]:
    """The adapters ``resolve`` keeps open between runs (their processes still running)."""
    return tuple(_CACHE.values())


def colocated_with(adapter: ProtocolAdapter):
    """``placement.colocated`` for calls to ``adapter``: the calling thread on this process's
    home CPU, beside the implementation, unless ``adapter`` is one of rmqha's own."""
    return placement.colocated(not runs_in_process(adapter.spec))


@atexit.register
def close_all() -> None:
    for adapter in _CACHE.values():
        adapter.close()
    _CACHE.clear()


def connect(spec: str) -> ProtocolAdapter:
    """An adapter for ``spec``, not yet greeted (``resolve`` does the handshake)."""
    if spec == "reference":
        return InProcessAdapter(spec, ReferenceServer())
    kind, _, rest = spec.partition(":")
    if kind == "mutant":
        try:
            return InProcessAdapter(spec, ReferenceServer(mutant=rest))
        except KeyError as exc:
            raise UserError(str(exc).strip('"')) from None
    if kind == "pysyncobj":
        from adapters.pysyncobj_server import PySyncObjServer

        options = set(filter(None, rest.split(":")))
        if not options <= {"datagram", "tcp", "memory"} or {"datagram", "tcp"} <= options:
            raise UserError(f"adapter {spec!r}: use pysyncobj[:datagram|:tcp][:memory]")
        links = "datagram" if "datagram" in options else "tcp" if "tcp" in options else "fifo"
        return InProcessAdapter(spec, PySyncObjServer(links=links, journal="memory" if "memory" in options else "file"))
    if kind == "python":
        module_name, _, factory = rest.partition(":")
        if not module_name or not factory:
            raise UserError(f"adapter {spec!r}: use python:MODULE:FACTORY")
        if not all(part.isidentifier() for part in module_name.split(".")):
            # a path (./my_adapter.py) or a relative name imports nothing: the spec is wrong, not the code
            raise UserError(f"adapter {spec!r}: {module_name!r} is not a module name (dotted Python names, "
                            f"e.g. my_pkg.adapter, found on PYTHONPATH)")
        timeout_s = default_timeout()  # before any thread starts: a bad value is bad input
        # the import, the factory and then the calls run on one thread under the same
        # timeout: the implementation's code that never returns is an error, never a hung rmqha
        watchdog = Watchdog(f"rmqha-adapter {spec}")
        make = _python_factory(spec, module_name, factory, watchdog, timeout_s)
        obj = _python_object(spec, factory, make, watchdog, timeout_s)
        if not callable(getattr(obj, "handle", None)):
            raise UserError(f"adapter {spec!r}: {factory}() returned an object without handle(request)")
        return InProcessAdapter(spec, obj, watchdog=watchdog)
    if kind == "stdio":
        if not rest.strip():
            raise UserError(f"adapter {spec!r}: use stdio:COMMAND")
        return StdioAdapter(spec, rest)
    if kind == "jvm":
        return jvm_targets.connect(spec, rest)
    raise UserError(f"unknown adapter {spec!r} (forms: {', '.join(FORMS)})")


def _described(exc: BaseException) -> str:
    """``Type: message``, or the type alone when the message is empty (``sys.exit()``)."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _on_watchdog(spec: str, watchdog: Watchdog, fn: Callable[[], object], late: str, timeout_s: float) -> tuple:
    """``fn()`` on ``watchdog`` within ``timeout_s``: ``(ok, value_or_exception)``. One that
    does not return in time is the implementation failing to start (exit 3, ``late`` says
    what hung), abandoned on its thread as a call that hangs."""
    finished, outcome = watchdog.run(fn, timeout_s)
    if not finished:
        raise AdapterError(f"{spec}: {late} within {timeout_s:g} s")
    return outcome


def _python_factory(spec: str, module_name: str, factory: str, watchdog: Watchdog,
                    timeout_s: float) -> Callable[[], object]:
    """``MODULE.FACTORY`` for a ``python:`` adapter, imported on ``watchdog``. A spec naming
    nothing there is to call is bad input (exit 2); code that raises, exits or hangs as it
    is imported is the implementation failing to start (exit 3), as a ``stdio:`` process
    that dies or hangs before it answers ``hello``."""
    ok, module = _on_watchdog(spec, watchdog, lambda: importlib.import_module(module_name),
                              f"importing {module_name} did not finish", timeout_s)
    if not ok:
        exc = module
        if (isinstance(exc, ModuleNotFoundError) and exc.name is not None
                and (module_name + ".").startswith(exc.name + ".")):
            raise UserError(f"adapter {spec!r}: {exc}")
        # a SyntaxError, whatever its top level raises or exits with; a ModuleNotFoundError
        # here is for something the module imports, the module itself is there
        raise AdapterError(f"{spec}: importing {module_name} raised {_described(exc)}")
    try:
        make = getattr(module, factory)
    except AttributeError as exc:
        raise UserError(f"adapter {spec!r}: {exc}") from None
    if not callable(make):
        raise UserError(f"adapter {spec!r}: {module_name}.{factory} is not callable (type {type(make).__name__})")
    return make


def _python_object(spec: str, factory: str, make: Callable[[], object], watchdog: Watchdog, timeout_s: float) -> object:
    """``make()`` on ``watchdog``, within the adapter timeout. A factory that raises (or
    exits) or does not return in time is the implementation failing to start (exit 3), as
    a ``stdio:`` process that dies or hangs before ``hello`` or a ``jvm:`` constructor that
    throws."""
    ok, value = _on_watchdog(spec, watchdog, make, f"its factory {factory}() did not return", timeout_s)
    if not ok:
        raise AdapterError(f"{spec}: its factory {factory}() raised {_described(value)}")
    return value
