"""``jvm:`` adapters: Java implementations through JPype.

* ``jvm:CLASSPATH:CLASS`` — a Java class that speaks the adapter protocol itself: a
  public no-argument constructor and ``String handle(String requestJson)`` returning
  the response JSON (docs/adapter-protocol.md). CLASSPATH entries are separated by
  ``os.pathsep``; a ``dir/*`` entry takes every jar of a directory.
* ``jvm:dledger[=PROFILE][:CLASSPATH]`` — the real openmessaging DLedger elector, on a
  virtual clock (``adapters/jvm_dledger.py``).
* ``jvm:rocketmq[:CLASSPATH]`` — the real RocketMQ ``EpochFileCache`` (the broker's
  epoch file, ``org.apache.rocketmq:rocketmq-store``, with ``rocketmq-remoting`` for
  ``EpochEntry`` and their dependencies) answering ``truncation.find_consistent_point``
  and ``truncation.append``. CLASSPATH defaults to ``$RMQHA_ROCKETMQ_CLASSPATH``. The
  controller (``ReplicasInfoManager``, ``DefaultElectPolicy``) is not driven yet: its
  operations answer ``unsupported`` and are reported as not applicable.

A process has one JVM (JPype): load one version of a library per process (the DLedger
target loads each build through a class loader of its own, so any number of releases).
"""
from __future__ import annotations

import os

from adapters.errors import UserError
from adapters.jvm import RealClassesServer, manifest_version, split_classpath
from adapters.jvm_dledger import DLEDGER_ENV, DLedgerElectorServer
from adapters.transports import InProcessAdapter, JvmAdapter, ProtocolAdapter

ROCKETMQ_ENV = "RMQHA_ROCKETMQ_CLASSPATH"


def connect(spec: str, rest: str) -> ProtocolAdapter:
    target, _, classpath = rest.partition(":")
    name, _, profile = target.partition("=")
    if name == "dledger":
        return InProcessAdapter(spec, DLedgerElectorServer(_classpath(spec, classpath, DLEDGER_ENV),
                                                           profile or None), watchdog=True)
    if name == "rocketmq":
        return InProcessAdapter(spec, EpochFileCacheServer(_classpath(spec, classpath, ROCKETMQ_ENV)), watchdog=True)
    classpath, _, class_name = rest.rpartition(":")
    if not classpath or not class_name:
        raise UserError(f"adapter {spec!r}: use jvm:CLASSPATH:CLASS, jvm:dledger[=PROFILE][:CLASSPATH] or "
                        f"jvm:rocketmq[:CLASSPATH]")
    return JvmAdapter(spec, split_classpath(classpath), class_name)


def _classpath(spec: str, given: str, env: str) -> list[str]:
    text = given or os.environ.get(env, "")
    if not text:
        raise UserError(f"adapter {spec!r}: give the jars as {spec}:CLASSPATH or in ${env}")
    return split_classpath(text)


class EpochFileCacheServer(RealClassesServer):
    """The real RocketMQ epoch file (``EpochFileCache``), one fresh cache per side and call."""

    implementation = "apache-rocketmq"

    def __init__(self, classpath: list[str]):
        super().__init__(classpath, {})
        self.Cache = self._load("EpochFileCache", lambda: self.jpype.JClass(
            "org.apache.rocketmq.store.ha.autoswitch.EpochFileCache"))
        self.Entry = self.jpype.JClass("org.apache.rocketmq.remoting.protocol.EpochEntry")
        self.ArrayList = self.jpype.JClass("java.util.ArrayList")

    def version(self) -> str:
        return manifest_version(self.Cache)

    def _cache(self, f, max_offset: int | None = None):
        """A cache holding ``f`` as the broker builds one (initCacheFromEntries), ends set like HA does."""
        entries = self.ArrayList()
        for e in f.entries:
            entries.add(self.Entry(e.epoch, e.start_offset))
        cache = self.Cache()
        cache.initCacheFromEntries(entries)
        for end in (f.last_end, max_offset):
            if end is not None:
                cache.setLastEpochEntryEndOffset(end)
        return cache

    def _epoch_file(self, cache):
        from spec.truncation.epoch_file import EpochEntry, EpochFile

        entries = list(cache.getAllEntries())
        last_end = int(entries[-1].getEndOffset()) if entries else None
        return EpochFile(tuple(EpochEntry(int(e.getEpoch()), int(e.getStartOffset())) for e in entries),
                         None if last_end == JAVA_LONG_MAX else last_end)

    def find_consistent_point(self, args: dict) -> int:
        local = self._cache(args["local"], args["local_max"])
        master = self._cache(args["master"], args["master_max"])
        return int(local.findConsistentPoint(master))

    def append(self, args: dict):
        from spec.truncation.epoch_file import AppendOutcome

        f = args["epoch_file"]
        cache = self._cache(f)
        appended = bool(cache.appendEntry(self.Entry(args["epoch"], args["start_offset"])))
        if appended:
            outcome = AppendOutcome.APPENDED if f.entries else AppendOutcome.FIRST_ENTRY
        else:  # the cache only logs why; the reason follows from the arguments
            last = f.entries[-1]
            outcome = (AppendOutcome.REFUSED_EPOCH_NOT_GREATER if args["epoch"] <= last.epoch
                       else AppendOutcome.REFUSED_START_NOT_GREATER)
        return self._epoch_file(cache), outcome

    OPERATIONS = {"truncation.find_consistent_point": find_consistent_point, "truncation.append": append}


JAVA_LONG_MAX = 2**63 - 1
