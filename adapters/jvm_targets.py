"""``jvm:`` adapters: Java implementations through JPype.

* ``jvm:CLASSPATH:CLASS`` — a Java class that speaks the adapter protocol itself: a
  public no-argument constructor and ``String handle(String requestJson)`` returning
  the response JSON (docs/adapter-protocol.md). CLASSPATH entries are separated by
  ``os.pathsep``; a ``dir/*`` entry takes every jar of a directory.
"""
from __future__ import annotations

from adapters.errors import UserError
from adapters.jvm import split_classpath
from adapters.transports import JvmAdapter, ProtocolAdapter


def connect(spec: str, rest: str) -> ProtocolAdapter:
    classpath, _, class_name = rest.rpartition(":")
    if not classpath or not class_name:
        raise UserError(f"adapter {spec!r}: use jvm:CLASSPATH:CLASS, jvm:dledger[:CLASSPATH] or "
                        f"jvm:rocketmq[:CLASSPATH]")
    return JvmAdapter(spec, split_classpath(classpath), class_name)
