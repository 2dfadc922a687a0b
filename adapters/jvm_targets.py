"""``jvm:`` adapters: Java implementations through JPype.

* ``jvm:CLASSPATH:CLASS`` — a Java class that speaks the adapter protocol itself: a
  public no-argument constructor and ``String handle(String requestJson)`` returning
  the response JSON (docs/adapter-protocol.md). CLASSPATH entries are separated by
  ``os.pathsep``; a ``dir/*`` entry takes every jar of a directory.
* ``jvm:dledger[=PROFILE][:CLASSPATH]`` — the real openmessaging DLedger classes, driven
  at handler level by this module: every ``dledger.handle_vote`` and
  ``dledger.handle_heartbeat`` call builds a real ``MemberState`` in the state the
  call describes and asks a real ``DLedgerLeaderElector`` (``handleVote``,
  ``handleHeartBeat``). CLASSPATH defaults to ``$RMQHA_DLEDGER_JAR`` (the DLedger jar
  and its dependencies); PROFILE (default ``dledger-0.4``) is the profile the jar is
  judged under (``rmqha fingerprint`` tells which one it matches). The jar:
  ``io.openmessaging.storage:dledger`` (Maven Central) — 0.4.0 for RocketMQ 5.x,
  0.2.x/0.3.x for RocketMQ 4.9.x — plus ``org.slf4j:slf4j-api`` and what its pom lists.
* ``jvm:rocketmq[:CLASSPATH]`` — the real RocketMQ ``EpochFileCache`` (the broker's
  epoch file, ``org.apache.rocketmq:rocketmq-store``, with ``rocketmq-remoting`` for
  ``EpochEntry`` and their dependencies) answering ``truncation.find_consistent_point``
  and ``truncation.append``. CLASSPATH defaults to ``$RMQHA_ROCKETMQ_CLASSPATH``. The
  controller (``ReplicasInfoManager``, ``DefaultElectPolicy``) is not driven yet: its
  operations answer ``unsupported`` and are reported as not applicable.

A process has one JVM (JPype): load one version of a library per process.

How a call is observed (the elector's effects are not return values in Java):

| spec effect | observed as |
|---|---|
| ``SetVotedFor(c)`` | ``MemberState`` wrote its term/vote file during the call, with currVoteFor ``c`` |
| ``BecomeCandidate(t)`` / ``BecomeFollower(t, l)`` / ``BecomeLeader(t)`` | the elector's ``RoleChangeHandler`` callback ``handle(t, role)`` (registered by rmqha) |
| ``IncreaseTermImmediately`` | ``needIncreaseTermImmediately`` went from false to true |
| ``RefreshLeaderHeartbeat`` | ``lastLeaderHeartBeatTime`` moved, without a role change |
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from adapters import codec
from adapters.errors import AdapterError, UserError
from adapters.jvm import ensure_started, split_classpath
from adapters.protocol import BAD_REQUEST, INTERNAL, PROTOCOL, UNSUPPORTED, error, ok
from adapters.transports import InProcessAdapter, JvmAdapter, ProtocolAdapter

DLEDGER_ENV = "RMQHA_DLEDGER_JAR"
ROCKETMQ_ENV = "RMQHA_ROCKETMQ_CLASSPATH"
DLEDGER = "io.openmessaging.storage.dledger"
# release-0.1 spells one result with two underscores; the outcome is the same
RESULT_ALIASES = {"REJECT_ALREADY__HAS_LEADER": "REJECT_ALREADY_HAS_LEADER"}


def connect(spec: str, rest: str) -> ProtocolAdapter:
    target, _, classpath = rest.partition(":")
    name, _, profile = target.partition("=")
    if name == "dledger":
        return InProcessAdapter(spec, DLedgerElectorServer(_classpath(spec, classpath, DLEDGER_ENV),
                                                           profile or "dledger-0.4"), watchdog=True)
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


class _RealClassesServer:
    """The adapter protocol at handler level, each operation answered by real Java classes."""

    implementation = "?"
    OPERATIONS: dict = {}

    def __init__(self, classpath: list[str], profiles: dict[str, str]):
        self.profiles = profiles
        self.classpath = classpath
        self.jpype = ensure_started(classpath)
        self.dir = Path(tempfile.mkdtemp(prefix=f"rmqha-{self.implementation}-"))

    def _load(self, what: str, load):
        try:
            return load()
        except Exception as exc:  # ClassNotFoundException, NoClassDefFoundError, ...
            raise AdapterError(f"jvm: cannot load {what} from {os.pathsep.join(self.classpath)}: {exc}") from None

    def version(self) -> str:
        return "unknown"

    def handle(self, req: dict) -> dict:
        rid = req.get("id") if isinstance(req, dict) else None
        try:
            op = req["op"]
            if op == "hello":
                return ok(rid, {"protocol": PROTOCOL, "implementation": self.implementation,
                                "version": self.version(), "profiles": self.profiles,
                                "operations": sorted(self.OPERATIONS), "nodes": []})
            if op == "bye":
                shutil.rmtree(self.dir, ignore_errors=True)
                return ok(rid, {})
            if op != "call":
                return error(rid, UNSUPPORTED, f"operation {op!r} is not supported (handler level only)")
            name = req["args"]["operation"]
            if name not in self.OPERATIONS:
                return error(rid, UNSUPPORTED, f"{name} is not driven on the real classes")
            return ok(rid, codec.encode(self.OPERATIONS[name](self, _decode(name, req["args"]["args"]))))
        except (KeyError, TypeError, codec.CodecError) as exc:
            return error(rid, BAD_REQUEST, f"malformed request: {exc!r}")
        except Exception as exc:  # noqa: BLE001 - the real code threw: reported, the driver decides
            return error(rid, INTERNAL, f"{type(exc).__name__}: {exc}")


def _manifest_version(jclass) -> str:
    return str(jclass.class_.getPackage().getImplementationVersion() or "unknown (no jar manifest)")


class DLedgerElectorServer(_RealClassesServer):
    """The real DLedger elector, one fresh MemberState per call."""

    implementation = "openmessaging-dledger"

    def __init__(self, classpath: list[str], profile: str):
        from spec.dledger.profiles import PROFILES

        if profile not in PROFILES:
            raise UserError(f"unknown DLedger profile {profile!r} (known: {', '.join(PROFILES)})")
        super().__init__(classpath, {"dledger": profile})
        self.j = self._load("DLedger", lambda: _DLedgerClasses(self.jpype))

    def version(self) -> str:
        return _manifest_version(self.j.Elector)

    # ------------------------------------------------------------------ one call

    def _elector(self, member) -> "_Call":
        return _Call(self.j, self.dir, member)

    def handle_vote(self, args: dict):
        from spec.dledger.records import VoteResult
        from spec.dledger.vote import VoteDecision

        request = args["request"]
        with self._elector(args["member"]) as call:
            jreq = call.request(self.j.VoteRequest, request.candidate, request.term)
            jreq.setLedgerEndTerm(request.ledger_end_term)
            jreq.setLedgerEndIndex(request.ledger_end_index)
            response = call.elector.handleVote(jreq, args["self_vote"]).get()
            name = str(response.getVoteResult().name())
            result = VoteResult.__members__.get(RESULT_ALIASES.get(name, name))
            if result is None:
                raise ValueError(f"handleVote answered {name}, which no release of the spec knows")
            return VoteDecision(result, int(response.getTerm()), call.effects())

    def handle_heartbeat(self, args: dict):
        from spec.dledger.heartbeat import HeartbeatDecision
        from spec.dledger.records import ResponseCode

        request = args["request"]
        with self._elector(args["member"]) as call:
            response = call.elector.handleHeartBeat(call.request(self.j.HeartBeatRequest, request.leader,
                                                                 request.term)).get()
            return HeartbeatDecision(ResponseCode(int(response.getCode())), int(response.getTerm()), call.effects())

    OPERATIONS = {"dledger.handle_vote": handle_vote, "dledger.handle_heartbeat": handle_heartbeat}


def _decode(name: str, raw: dict) -> dict:
    from adapters.operations import OPERATIONS

    op = OPERATIONS[name]
    reg = codec.registry(op.namespace)
    return {p: codec.decode(raw[p], t, reg, p) for p, t in op.params}


class _DLedgerClasses:
    """The Java classes, looked up once."""

    def __init__(self, jpype):
        self.jpype = jpype
        self.Config = jpype.JClass(f"{DLEDGER}.DLedgerConfig")
        self.MemberState = jpype.JClass(f"{DLEDGER}.MemberState")
        self.Role = jpype.JClass(f"{DLEDGER}.MemberState$Role")
        self.Elector = jpype.JClass(f"{DLEDGER}.DLedgerLeaderElector")
        self.VoteRequest = jpype.JClass(f"{DLEDGER}.protocol.VoteRequest")
        self.HeartBeatRequest = jpype.JClass(f"{DLEDGER}.protocol.HeartBeatRequest")

        @jpype.JImplements(f"{DLEDGER}.DLedgerLeaderElector$RoleChangeHandler")
        class RoleChanges:
            def __init__(self):
                self.seen: list[tuple[int, str]] = []

            @jpype.JOverride
            def handle(self, term, role):
                self.seen.append((int(term), str(role.name())))

            @jpype.JOverride
            def startup(self):
                pass

            @jpype.JOverride
            def shutdown(self):
                pass

        self.RoleChanges = RoleChanges

    def field(self, obj, name: str):
        f = obj.getClass().getDeclaredField(name)
        f.setAccessible(True)
        return f


class _Call:
    """A real MemberState and elector set to a ``MemberView``, and what one call changed."""

    def __init__(self, j: _DLedgerClasses, base: Path, member):
        self.j = j
        self.member = member
        self.group = "rmqha"
        config = j.Config()
        config.setGroup(self.group)
        config.setSelfId(member.self_id)
        config.setPeers(";".join(f"{p}-127.0.0.1:{20000 + i}" for i, p in enumerate(sorted(member.peers))))
        config.setStoreBaseDir(str(base))
        # leadership transfer exists from 0.2.0 on; in release-0.1 nobody is ever "taking"
        taking = member.taking_leadership and hasattr(config, "setPreferredLeaderIds")
        if taking:
            config.setPreferredLeaderIds(member.self_id)
        self.state = state = j.MemberState(config)
        for name, value in (("currTerm", member.curr_term), ("currVoteFor", member.voted_for),
                            ("leaderId", member.leader_id), ("role", j.Role.valueOf(member.role.value)),
                            ("ledgerEndTerm", member.ledger_end_term), ("ledgerEndIndex", member.ledger_end_index),
                            ("knownMaxTermInGroup", -1)):
            j.field(state, name).set(state, value)
        if taking:
            state.setTermToTakeLeadership(member.curr_term)
        self.elector = j.Elector(config, state, None)
        self.roles = j.RoleChanges()
        self.elector.addRoleChangeHandler(self.roles)
        self.term_file = Path(str(config.getDefaultPath())) / "currterm"

    def request(self, cls, leader: str, term: int):
        """A request of ``cls`` from ``leader`` (DLedger calls the candidate of a vote its leaderId)."""
        jreq = cls()
        jreq.setGroup(self.group)
        jreq.setLeaderId(leader)
        jreq.setTerm(term)
        return jreq

    def __enter__(self) -> "_Call":
        self.term_file.unlink(missing_ok=True)
        self.increase_before = bool(self.j.field(self.elector, "needIncreaseTermImmediately").get(self.elector))
        self.heartbeat_before = int(self.j.field(self.elector, "lastLeaderHeartBeatTime").get(self.elector))
        return self

    def __exit__(self, *exc) -> None:
        self.term_file.unlink(missing_ok=True)

    def effects(self) -> tuple:
        from spec.dledger import effects as fx

        found: list = []
        roles = self.roles.seen
        for term, role in roles:
            if role == "CANDIDATE":
                found.append(fx.BecomeCandidate(term))
            elif role == "FOLLOWER":
                found.append(fx.BecomeFollower(term, str(self.state.getLeaderId())))
            elif role == "LEADER":
                found.append(fx.BecomeLeader(term))
        increase = bool(self.j.field(self.elector, "needIncreaseTermImmediately").get(self.elector))
        if increase and not self.increase_before:
            found.append(fx.INCREASE_TERM_IMMEDIATELY)
        if self.term_file.exists() and self.state.currVoteFor() is not None:
            found.append(fx.SetVotedFor(str(self.state.currVoteFor())))
        heartbeat = int(self.j.field(self.elector, "lastLeaderHeartBeatTime").get(self.elector))
        if heartbeat != self.heartbeat_before and not any(role == "FOLLOWER" for _, role in roles):
            found.append(fx.REFRESH_LEADER_HEARTBEAT)
        return tuple(found)


class EpochFileCacheServer(_RealClassesServer):
    """The real RocketMQ epoch file (``EpochFileCache``), one fresh cache per side and call."""

    implementation = "apache-rocketmq"

    def __init__(self, classpath: list[str]):
        super().__init__(classpath, {})
        self.Cache = self._load("EpochFileCache", lambda: self.jpype.JClass(
            "org.apache.rocketmq.store.ha.autoswitch.EpochFileCache"))
        self.Entry = self.jpype.JClass("org.apache.rocketmq.remoting.protocol.EpochEntry")
        self.ArrayList = self.jpype.JClass("java.util.ArrayList")

    def version(self) -> str:
        return _manifest_version(self.Cache)

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
