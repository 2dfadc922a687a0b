"""``jvm:`` adapters: Java implementations through JPype.

* ``jvm:CLASSPATH:CLASS`` — a Java class that speaks the adapter protocol itself: a
  public no-argument constructor and ``String handle(String requestJson)`` returning
  the response JSON (docs/adapter-protocol.md). CLASSPATH entries are separated by
  ``os.pathsep``; a ``dir/*`` entry takes every jar of a directory.
* ``jvm:dledger[=PROFILE][:CLASSPATH]`` — the real openmessaging DLedger elector, on a
  virtual clock (``adapters/jvm_dledger.py``).
* ``jvm:rocketmq[=PROFILE][:CLASSPATH]`` — the real RocketMQ controller state machine
  (``ReplicasInfoManager`` with ``DefaultElectPolicy``), heartbeat manager and epoch file
  (``EpochFileCache``): ``adapters/jvm_rocketmq.py``.

A process has one JVM (JPype): load one version of a library per process (the DLedger
target loads each build through a class loader of its own, so any number of releases).
"""
from __future__ import annotations

import os

from adapters.errors import UserError
from adapters.jvm import split_classpath
from adapters.jvm_dledger import DLEDGER_ENV, DLedgerElectorServer
from adapters.jvm_rocketmq import ROCKETMQ_ENV, RocketMQServer
from adapters.transports import InProcessAdapter, JvmAdapter, ProtocolAdapter


def connect(spec: str, rest: str) -> ProtocolAdapter:
    target, _, classpath = rest.partition(":")
    name, _, profile = target.partition("=")
    if name == "dledger":
        return InProcessAdapter(spec, DLedgerElectorServer(_classpath(spec, classpath, DLEDGER_ENV),
                                                           profile or None), watchdog=True)
    if name == "rocketmq":
        return InProcessAdapter(spec, RocketMQServer(_classpath(spec, classpath, ROCKETMQ_ENV), profile or None),
                                watchdog=True)
    classpath, _, class_name = rest.rpartition(":")
    if not classpath or not class_name:
        raise UserError(f"adapter {spec!r}: use jvm:CLASSPATH:CLASS, jvm:dledger[=PROFILE][:CLASSPATH] or "
                        f"jvm:rocketmq[=PROFILE][:CLASSPATH]")
    return JvmAdapter(spec, split_classpath(classpath), class_name)


def _classpath(spec: str, given: str, env: str) -> list[str]:
    text = given or os.environ.get(env, "")
    if not text:
        raise UserError(f"adapter {spec!r}: give the jars as {spec}:CLASSPATH or in ${env}")
    return split_classpath(text)


