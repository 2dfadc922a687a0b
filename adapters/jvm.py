"""The one JVM of a Python process, through JPype.

A process can start JPype's JVM only once, so every JVM adapter goes through
``ensure_started``: the first caller starts it with its classpath, later callers add
their entries to the running JVM (JPype's dynamic class loader finds them). The JVM
options are fixed at the first start; rmqha asks for none.
"""
from __future__ import annotations

import os
from typing import Any, Iterable

from adapters.errors import AdapterError, UserError


def _jpype():
    try:
        import jpype
    except ImportError:
        raise UserError("the jvm: adapters need JPype (pip install jpype1)") from None
    return jpype


def ensure_started(classpath: Iterable[str]) -> Any:
    """The ``jpype`` module with a running JVM whose classpath includes ``classpath``."""
    jpype = _jpype()
    entries = [str(e) for e in classpath if str(e)]
    if not jpype.isJVMStarted():
        jpype.startJVM(classpath=entries, convertStrings=True)
    else:
        for entry in entries:
            jpype.addClassPath(entry)
    return jpype


def split_classpath(text: str) -> list[str]:
    """A classpath string (``os.pathsep``-separated; ``dir/*`` globs all jars of a directory)."""
    return [e for e in text.split(os.pathsep) if e]


def load_class(spec: str, classpath: list[str], class_name: str) -> Any:
    jpype = ensure_started(classpath)
    try:
        return jpype.JClass(class_name)
    except Exception as exc:  # TypeError/java.lang.ClassNotFoundException/NoClassDefFoundError
        raise AdapterError(f"{spec}: cannot load class {class_name} "
                           f"(classpath {os.pathsep.join(classpath) or '(empty)'}): {exc}") from None


def instantiate(spec: str, classpath: list[str], class_name: str) -> Any:
    """A new instance of ``class_name`` (a public no-argument constructor) from ``classpath``."""
    cls = load_class(spec, classpath, class_name)
    try:
        return cls()
    except Exception as exc:
        raise AdapterError(f"{spec}: cannot instantiate {class_name}: {exc}") from None
