"""``jvm:rocketmq[=PROFILE][:CLASSPATH]``: the real RocketMQ controller and epoch file, through JPype.

Every handler-level call builds the real objects in the state the call describes, asks
them, and reads the answer back from them (docs/adapters.md, "jvm:rocketmq"):

| operation | real classes |
|---|---|
| ``controller.handle`` | a ``ReplicasInfoManager`` loaded with the metadata snapshot (its two tables), a ``DefaultElectPolicy`` over the call's liveness; the API's ``ControllerResult`` (code, header, body, events) read back; the snapshot read back must be unchanged |
| ``controller.apply_event`` | ``ReplicasInfoManager.applyEvent`` on the loaded snapshot; the snapshot read back |
| ``controller.on_broker_heartbeat``, ``is_broker_active``, ``scan_not_active_broker`` | a ``DefaultBrokerHeartbeatManager`` whose ``brokerLiveTable`` is loaded with the table |
| ``truncation.*`` of the epoch file | an ``EpochFileCache`` built as the broker builds one (``initCacheFromEntries``, then ``setLastEpochEntryEndOffset``) |

The heartbeat manager reads the wall clock (``System.currentTimeMillis``): the table is
loaded shifted to it (``real = spec + shift``), and a call counts only if the clock read
the same millisecond before and after it (else it is repeated), so the times are exact.

The profile (``controller``: ``rocketmq-5.1``) is what the classes show (5.1 and later
have ``applyBrokerId``) unless the adapter spec declares one (``jvm:rocketmq=rocketmq-5.1``);
the version comes from the jar manifest, a Maven ``pom.properties``, the
``rmqha-build.properties`` our source build writes, or ``MQVersion``.
"""
from __future__ import annotations

import json
from typing import Any, Optional

from adapters.errors import AdapterError, UserError
from adapters.jvm import RealClassesServer, check_loaded_from
from adapters.protocol import Unsupported
from spec.controller import events as ev, records as rec
from spec.controller.api import ControllerResult
from spec.controller.heartbeat import BrokerLiveInfo, HeartbeatTable
from spec.controller.profiles import PROFILES as CONTROLLER_PROFILES
from spec.truncation.epoch_file import AppendOutcome, EpochEntry, EpochFile

ROCKETMQ_ENV = "RMQHA_ROCKETMQ_CLASSPATH"
PKG = "org.apache.rocketmq"
JAVA_LONG_MAX = 2**63 - 1
# Maven artifacts whose pom.properties name the version of a jar build
ARTIFACTS = ("rocketmq-controller", "rocketmq-store", "rocketmq-remoting", "rocketmq-common")
BUILD_PROPERTIES = "rmqha-build.properties"


class _Classes:
    """The Java classes, looked up once; the controller's are None when the classpath has none."""

    def __init__(self, jpype):
        j = self.jpype = jpype
        self.System = j.JClass("java.lang.System")
        self.ArrayList, self.HashSet = j.JClass("java.util.ArrayList"), j.JClass("java.util.HashSet")
        self.Long, self.Integer = j.JClass("java.lang.Long"), j.JClass("java.lang.Integer")
        self.EpochFileCache = j.JClass(f"{PKG}.store.ha.autoswitch.EpochFileCache")
        self.EpochEntry = j.JClass(f"{PKG}.remoting.protocol.EpochEntry")
        try:
            self.Manager = j.JClass(f"{PKG}.controller.impl.manager.ReplicasInfoManager")
        except Exception:  # noqa: BLE001 - an epoch-file-only classpath (rocketmq-store)
            self.Manager = None
            return
        c, h = f"{PKG}.controller", f"{PKG}.remoting.protocol.header.controller"
        self.ControllerConfig = j.JClass(f"{PKG}.common.ControllerConfig")
        self.BrokerReplicaInfo = j.JClass(f"{c}.impl.manager.BrokerReplicaInfo")
        self.SyncStateInfo = j.JClass(f"{c}.impl.manager.SyncStateInfo")
        self.ElectPolicy = j.JClass(f"{c}.elect.impl.DefaultElectPolicy")
        self.HeartbeatManager = j.JClass(f"{c}.impl.heartbeat.DefaultBrokerHeartbeatManager")
        self.BrokerIdentityInfo = j.JClass(f"{c}.impl.heartbeat.BrokerIdentityInfo")
        self.BrokerLiveInfo = j.JClass(f"{c}.impl.heartbeat.BrokerLiveInfo")
        self.events = {name: j.JClass(f"{c}.impl.event.{name}") for name in (
            "ApplyBrokerIdEvent", "UpdateBrokerAddressEvent", "ElectMasterEvent", "AlterSyncStateSetEvent",
            "CleanBrokerDataEvent")}
        self.headers = {name: j.JClass(f"{h}.{name}") for name in (
            "AlterSyncStateSetRequestHeader", "ElectMasterRequestHeader", "GetReplicaInfoRequestHeader",
            "admin.CleanControllerBrokerDataRequestHeader", "register.ApplyBrokerIdRequestHeader",
            "register.GetNextBrokerIdRequestHeader", "register.RegisterBrokerToControllerRequestHeader")}
        body = f"{PKG}.remoting.protocol.body"
        self.SyncStateSetBody = j.JClass(f"{body}.SyncStateSet")
        self.ElectMasterBody = j.JClass(f"{body}.ElectMasterResponseBody")
        self.Serializable = j.JClass(f"{PKG}.remoting.protocol.RemotingSerializable")

    def field(self, obj, name: str):
        f = obj.getClass().getDeclaredField(name)
        f.setAccessible(True)
        return f

    def get(self, obj, name: str):
        return self.field(obj, name).get(obj)

    def long_set(self, ids) -> Any:
        """A HashSet<Long> filled in ascending order (the order the spec assumes within a bucket)."""
        out = self.HashSet()
        for i in sorted(ids):
            out.add(self.Long(i))
        return out

    def now(self) -> int:
        return int(self.System.currentTimeMillis())


def _opt_int(value) -> Optional[int]:
    return None if value is None else int(value)


def _opt_str(value) -> Optional[str]:
    return None if value is None else str(value)


class RocketMQServer(RealClassesServer):
    """The real controller state machine, heartbeat manager and epoch file of one RocketMQ build."""

    implementation = "apache-rocketmq"

    def __init__(self, classpath: list[str], profile: Optional[str] = None):
        if profile is not None and profile not in CONTROLLER_PROFILES:
            raise UserError(f"unknown controller profile {profile!r} (known: {', '.join(CONTROLLER_PROFILES)})")
        super().__init__(classpath, {})
        self.j = self._load("RocketMQ's EpochFileCache", lambda: _Classes(self.jpype))
        for cls in (self.j.EpochFileCache, self.j.Manager):  # (two builds in one process: judge the one named)
            if cls is not None:
                check_loaded_from("jvm:rocketmq", classpath, cls, "judge one RocketMQ build per rmqha process")
        operations = dict(EPOCH_FILE_OPERATIONS)
        if self.j.Manager is not None:
            detected = "rocketmq-5.1" if _has_method(self.j.Manager, "applyBrokerId") else "rocketmq-5.0"
            self.profiles = {"controller": profile or detected}
            self.declared = {"controller": profile} if profile else {}
            self.claims = {"controller": detected}  # what the classes show (applyBrokerId: 5.1)
            if detected == "rocketmq-5.1":  # 5.0.0's API (ids assigned in register) is not driven
                operations.update(CONTROLLER_OPERATIONS)
            self.heartbeats = self.j.HeartbeatManager(self.j.ControllerConfig())
            # the expiry scan notifies listeners (none here) through its executor: the JVM's
            # common pool (daemon threads) rather than initialize()'s, which would keep the JVM alive
            self.j.field(self.heartbeats, "executor").set(
                self.heartbeats, self.jpype.JClass("java.util.concurrent.ForkJoinPool").commonPool())
        elif profile is not None:
            raise UserError(f"jvm:rocketmq={profile}: the classpath has no controller (ReplicasInfoManager)")
        self.OPERATIONS = operations

    declared: dict = {}
    claims: dict = {}

    def version(self) -> str:
        return build_version(self.j)

    def hello(self) -> dict:
        return {**super().hello(), "declared": self.declared, "claims": self.claims}

    # ------------------------------------------------------------------ epoch file

    def _cache(self, f: EpochFile, max_offset: Optional[int] = None):
        """A cache holding ``f`` as the broker builds one (initCacheFromEntries), ends set like HA does."""
        if f.entries and f.last_end is not None and f.last_end < f.entries[-1].start_offset:
            raise Unsupported(f"an EpochFileCache cannot hold {f}: the last end is before the last start")
        entries = self.j.ArrayList()
        for e in f.entries:
            entries.add(self.j.EpochEntry(e.epoch, e.start_offset))
        cache = self.j.EpochFileCache()
        cache.initCacheFromEntries(entries)
        for end in (f.last_end, max_offset):
            if end is not None:
                cache.setLastEpochEntryEndOffset(end)
        return cache

    def _epoch_file(self, cache) -> EpochFile:
        entries = list(cache.getAllEntries())
        last_end = int(entries[-1].getEndOffset()) if entries else None
        return EpochFile(tuple(EpochEntry(int(e.getEpoch()), int(e.getStartOffset())) for e in entries),
                         None if last_end == JAVA_LONG_MAX else last_end)

    @staticmethod
    def _entry(found) -> Optional[EpochEntry]:
        return None if found is None else EpochEntry(int(found.getEpoch()), int(found.getStartOffset()))

    def find_consistent_point(self, args: dict) -> int:
        local = self._cache(args["local"], args["local_max"])
        master = self._cache(args["master"], args["master_max"])
        return int(local.findConsistentPoint(master))

    def append(self, args: dict):
        f = args["epoch_file"]
        cache = self._cache(f)
        appended = bool(cache.appendEntry(self.j.EpochEntry(args["epoch"], args["start_offset"])))
        if appended:
            outcome = AppendOutcome.APPENDED if f.entries else AppendOutcome.FIRST_ENTRY
        else:  # the cache only logs why; the reason follows from the arguments
            last = f.entries[-1]
            outcome = (AppendOutcome.REFUSED_EPOCH_NOT_GREATER if args["epoch"] <= last.epoch
                       else AppendOutcome.REFUSED_START_NOT_GREATER)
        return self._epoch_file(cache), outcome

    def change_cache(self, args: dict, method: str, arg_name: str) -> EpochFile:
        """``method(args[arg_name])`` on the cache holding the call's epoch file; the file after."""
        cache = self._cache(args["epoch_file"])
        getattr(cache, method)(args[arg_name])
        return self._epoch_file(cache)

    def look_up(self, args: dict, method: str, arg_name: str) -> Optional[EpochEntry]:
        """The entry ``method(args[arg_name])`` finds in the cache holding the call's epoch file."""
        return self._entry(getattr(self._cache(args["epoch_file"]), method)(args[arg_name]))

    # ------------------------------------------------------------------ controller: the metadata snapshot

    def _manager(self, metadata: rec.ControllerMetadata):
        """A ReplicasInfoManager whose two tables hold ``metadata`` (a half-known set: one table)."""
        j = self.j
        manager = j.Manager(j.ControllerConfig())
        replicas, states = j.get(manager, "replicaInfoTable"), j.get(manager, "syncStateSetInfoTable")
        for name, found in sorted(metadata.sets.items()):
            if found.replicas is not None:
                info = j.BrokerReplicaInfo(found.cluster_name, name)
                for broker_id, reg in sorted(found.replicas.brokers.items()):
                    info.addBroker(j.Long(broker_id), reg.address, reg.register_check_code)
                j.get(info, "nextAssignBrokerId").set(found.replicas.next_assign_broker_id)
                replicas.put(name, info)
            if found.sync_state is not None:
                s = found.sync_state
                state = j.SyncStateInfo(found.cluster_name, name)
                j.get(state, "masterEpoch").set(s.master_epoch)
                j.get(state, "syncStateSetEpoch").set(s.sync_state_set_epoch)
                j.field(state, "syncStateSet").set(state, j.long_set(s.sync_state_set))
                j.field(state, "masterBrokerId").set(state, None if s.master_broker_id is None
                                                     else j.Long(s.master_broker_id))
                states.put(name, state)
        return manager

    def _metadata(self, manager) -> rec.ControllerMetadata:
        """The manager's two tables as a metadata snapshot."""
        j = self.j
        replicas, states = j.get(manager, "replicaInfoTable"), j.get(manager, "syncStateSetInfoTable")
        sets = {}
        for name in sorted({str(n) for n in replicas.keySet()} | {str(n) for n in states.keySet()}):
            info, state = replicas.get(name), states.get(name)
            half = None
            if info is not None:
                brokers = {}
                for e in j.get(info, "brokerIdInfo").entrySet():
                    pair = e.getValue()
                    brokers[int(e.getKey())] = rec.BrokerRegistration(_opt_str(pair.getObject1()),
                                                                      _opt_str(pair.getObject2()))
                half = rec.BrokerReplicaInfo(int(info.getNextAssignBrokerId()), brokers)
            sync = None
            if state is not None:
                sync = rec.SyncStateInfo(_opt_int(state.getMasterBrokerId()), int(state.getMasterEpoch()),
                                         frozenset(int(i) for i in state.getSyncStateSet()),
                                         int(state.getSyncStateSetEpoch()))
            cluster = (info if info is not None else state).getClusterName()
            sets[name] = rec.BrokerSetMetadata(str(cluster), half, sync)
        return rec.ControllerMetadata(sets)

    # ------------------------------------------------------------------ controller.handle

    def _liveness(self, liveness):
        """The call's liveness as upstream's BrokerValidPredicate and BrokerLiveInfoGetter."""
        j = self.j

        def check(cluster, name, broker_id):
            return bool(liveness.is_alive(str(cluster), str(name), int(broker_id)))

        def get(cluster, name, broker_id):
            info = liveness.live_info(str(cluster), str(name), int(broker_id))
            return None if info is None else self._live_info(info)

        predicate = j.jpype.JProxy(f"{PKG}.controller.helper.BrokerValidPredicate", dict={"check": check})
        getter = j.jpype.JProxy(f"{PKG}.controller.helper.BrokerLiveInfoGetter", dict={"get": get})
        return predicate, getter

    def _live_info(self, info: BrokerLiveInfo, shift: int = 0):
        j = self.j
        return j.BrokerLiveInfo(info.broker_name, info.broker_address, info.broker_id,
                                info.last_update_timestamp + shift, info.heartbeat_timeout_millis, None, info.epoch,
                                info.max_offset, j.Integer(info.election_priority), info.confirm_offset)

    def _call_api(self, manager, request, predicate, policy):
        j, h, L = self.j, self.j.headers, self.j.Long
        if isinstance(request, rec.GetNextBrokerIdRequest):
            return manager.getNextBrokerId(h["register.GetNextBrokerIdRequestHeader"](
                request.cluster_name, request.broker_name))
        if isinstance(request, rec.ApplyBrokerIdRequest):
            return manager.applyBrokerId(h["register.ApplyBrokerIdRequestHeader"](
                request.cluster_name, request.broker_name, L(request.applied_broker_id), request.register_check_code))
        if isinstance(request, rec.RegisterBrokerRequest):
            header = h["register.RegisterBrokerToControllerRequestHeader"](
                request.cluster_name, request.broker_name, None if request.broker_id is None else L(request.broker_id),
                request.broker_address)
            return manager.registerBroker(header, predicate)
        if isinstance(request, rec.GetReplicaInfoRequest):
            return manager.getReplicaInfo(h["GetReplicaInfoRequestHeader"](request.broker_name))
        if isinstance(request, rec.AlterSyncStateSetRequest):
            header = h["AlterSyncStateSetRequestHeader"](
                request.broker_name, None if request.master_broker_id is None else L(request.master_broker_id),
                j.Integer(request.master_epoch))
            body = j.SyncStateSetBody(j.long_set(request.new_sync_state_set), request.sync_state_set_epoch)
            return manager.alterSyncStateSet(header, body, predicate)
        if isinstance(request, rec.ElectMasterRequest):
            if request.trigger is rec.ElectTrigger.CONTROLLER and not request.designate_elect:
                # as the controller itself asks: 5.1.x leaves brokerId null there, develop -1
                header = h["ElectMasterRequestHeader"].ofControllerTrigger(request.broker_name)
                header.setClusterName(request.cluster_name)
            else:
                header = h["ElectMasterRequestHeader"](request.cluster_name, request.broker_name,
                                                       None if request.broker_id is None else L(request.broker_id),
                                                       request.designate_elect)
            return manager.electMaster(header, policy)
        if isinstance(request, rec.CleanBrokerDataRequest):
            ids = request.broker_ids_to_clean
            listed = ";".join(str(i) for i in sorted(ids)) if ids else None
            header = h["admin.CleanControllerBrokerDataRequestHeader"](
                request.cluster_name, request.broker_name, listed, request.clean_living_broker)
            return manager.cleanBrokerData(header, predicate)
        raise Unsupported(f"{type(request).__name__} is not a controller API")

    def _body(self, result, cls):
        body = result.getBody()
        return None if body is None else self.j.Serializable.decode(body, cls)

    @staticmethod
    def _sync_state_set(result) -> Optional[rec.SyncStateSet]:
        """A ``SyncStateSet`` body (read as JSON: the class has no constructor a JSON library can call)."""
        body = result.getBody()
        if body is None:
            return None
        found = json.loads(bytes(body).decode("utf-8"))
        return rec.SyncStateSet(frozenset(found["syncStateSet"]), found["syncStateSetEpoch"])

    def _response(self, request, result):
        """The ControllerResult's code, header and body as the spec's response record."""
        j, code = self.j, rec.ResponseCode(int(result.getResponseCode()))
        header = result.getResponse()
        if isinstance(request, rec.GetNextBrokerIdRequest):
            return rec.GetNextBrokerIdResponse(code, _opt_int(header.getNextBrokerId()))
        if isinstance(request, rec.ApplyBrokerIdRequest):
            return rec.ApplyBrokerIdResponse(code)
        if isinstance(request, rec.CleanBrokerDataRequest):
            return rec.CleanBrokerDataResponse(code)
        if isinstance(request, rec.AlterSyncStateSetRequest):
            return rec.AlterSyncStateSetResponse(code, int(header.getNewSyncStateSetEpoch()),
                                                 self._sync_state_set(result))
        master = dict(master_broker_id=_opt_int(header.getMasterBrokerId()),
                      master_address=_opt_str(header.getMasterAddress()),
                      master_epoch=_opt_int(header.getMasterEpoch()))
        if isinstance(request, rec.GetReplicaInfoRequest):
            return rec.GetReplicaInfoResponse(code, **master, sync_state_set=self._sync_state_set(result))
        master["sync_state_set_epoch"] = _opt_int(header.getSyncStateSetEpoch())
        if isinstance(request, rec.RegisterBrokerRequest):
            return rec.RegisterBrokerResponse(code, **master, sync_state_set=self._sync_state_set(result))
        body = self._body(result, j.ElectMasterBody)
        members = None if body is None else body.getSyncStateSet()
        group = None if body is None else body.getBrokerMemberGroup()
        return rec.ElectMasterResponse(
            code, **master, sync_state_set=None if members is None else frozenset(int(i) for i in members),
            broker_member_group=None if group is None else {int(k): _opt_str(v)
                                                           for k, v in dict(group.getBrokerAddrs()).items()})

    def handle_api(self, args: dict) -> ControllerResult:
        if not args["is_leader"]:
            raise Unsupported("the leader check lives in the controller (DLedgerController), not in "
                              "ReplicasInfoManager: not driven")
        metadata = args["metadata"]
        manager = self._manager(metadata)
        predicate, getter = self._liveness(args["liveness"])
        result = self._call_api(manager, args["request"], predicate, self.j.ElectPolicy(predicate, getter))
        after = self._metadata(manager)
        if after != metadata:
            raise AssertionError(f"the API changed the metadata it only validates against: {after}")
        return ControllerResult(self._response(args["request"], result),
                                tuple(self._spec_event(e) for e in result.getEvents()))

    # ------------------------------------------------------------------ events

    def _spec_event(self, e):
        kind = str(e.getEventType().name())
        if kind == "APPLY_BROKER_ID_EVENT":
            return ev.ApplyBrokerIdEvent(str(e.getClusterName()), str(e.getBrokerName()), _opt_str(e.getBrokerAddress()),
                                         int(e.getNewBrokerId()), _opt_str(e.getRegisterCheckCode()))
        if kind == "UPDATE_BROKER_ADDRESS":
            return ev.UpdateBrokerAddressEvent(str(e.getClusterName()), str(e.getBrokerName()),
                                               str(e.getBrokerAddress()), int(e.getBrokerId()))
        if kind == "ELECT_MASTER_EVENT":
            return ev.ElectMasterEvent(str(e.getBrokerName()), bool(e.getNewMasterElected()),
                                       _opt_int(e.getNewMasterBrokerId()))
        if kind == "ALTER_SYNC_STATE_SET_EVENT":
            return ev.AlterSyncStateSetEvent(str(e.getBrokerName()), frozenset(int(i) for i in e.getNewSyncStateSet()))
        if kind == "CLEAN_BROKER_DATA_EVENT":
            ids = e.getBrokerIdSetToClean()
            return ev.CleanBrokerDataEvent(str(e.getBrokerName()), None if ids is None else frozenset(int(i) for i in ids))
        raise AdapterError(f"jvm:rocketmq: an event of unknown type {kind}")

    def _java_event(self, e):
        j, E, L = self.j, self.j.events, self.j.Long
        if isinstance(e, ev.ApplyBrokerIdEvent):
            return E["ApplyBrokerIdEvent"](e.cluster_name, e.broker_name, e.broker_address, e.new_broker_id,
                                           e.register_check_code)
        if isinstance(e, ev.UpdateBrokerAddressEvent):
            return E["UpdateBrokerAddressEvent"](e.cluster_name, e.broker_name, e.broker_address, L(e.broker_id))
        if isinstance(e, ev.ElectMasterEvent):
            if e.cluster_name is not None or e.broker_address is not None:
                raise Unsupported("an ElectMasterEvent that creates its set is rocketmq-5.0's; 5.1 has none")
            if not e.new_master_elected:
                return E["ElectMasterEvent"](False, e.broker_name)
            return E["ElectMasterEvent"](e.broker_name, L(e.new_master_broker_id))
        if isinstance(e, ev.AlterSyncStateSetEvent):
            return E["AlterSyncStateSetEvent"](e.broker_name, j.long_set(e.new_sync_state_set))
        if isinstance(e, ev.CleanBrokerDataEvent):
            ids = e.broker_ids_to_clean
            return E["CleanBrokerDataEvent"](e.broker_name, None if ids is None else j.long_set(ids))
        raise Unsupported(f"{type(e).__name__} is not a controller event")

    def apply_event(self, args: dict) -> rec.ControllerMetadata:
        manager = self._manager(args["metadata"])
        manager.applyEvent(self._java_event(args["event"]))
        return self._metadata(manager)

    # ------------------------------------------------------------------ heartbeat manager

    def _on_table(self, table: HeartbeatTable, now: int, act):
        """Load ``table`` shifted to the wall clock so that it reads ``now``, run ``act``; repeat until
        the clock stayed in one millisecond. (result, the table read back, the shift)."""
        j = self.j
        live = j.get(self.heartbeats, "brokerLiveTable")
        for _ in range(100):
            wall = j.now()
            shift = wall - now
            live.clear()
            for identity, info in table.entries.items():
                live.put(j.BrokerIdentityInfo(identity.cluster_name, identity.broker_name, j.Long(identity.broker_id)),
                         self._live_info(info, shift))
            result = act()
            if j.now() == wall:
                return result, self._read_table(live, shift)
        raise AdapterError("jvm:rocketmq: the wall clock never stayed within one millisecond around a call")

    def _read_table(self, live, shift: int) -> HeartbeatTable:
        entries = {}
        for e in live.entrySet():
            k, v = e.getKey(), e.getValue()
            entries[rec.BrokerIdentity(str(k.getClusterName()), str(k.getBrokerName()), int(k.getBrokerId()))] = \
                BrokerLiveInfo(str(v.getBrokerName()), _opt_str(v.getBrokerAddr()), int(v.getBrokerId()),
                               int(v.getLastUpdateTimestamp()) - shift, int(v.getHeartbeatTimeoutMillis()),
                               int(v.getEpoch()), int(v.getMaxOffset()), int(v.getConfirmOffset()),
                               int(v.getElectionPriority()))
        return HeartbeatTable(entries)

    def on_broker_heartbeat(self, args: dict) -> HeartbeatTable:
        b, j = args["heartbeat"], self.j
        _, table = self._on_table(args["table"], args["now"], lambda: self.heartbeats.onBrokerHeartbeat(
            b.cluster_name, b.broker_name, b.broker_address, j.Long(b.broker_id), j.Long(b.heartbeat_timeout_millis),
            None, j.Integer(b.epoch), j.Long(b.max_offset), j.Long(b.confirm_offset), j.Integer(b.election_priority)))
        return table

    def is_broker_active(self, args: dict) -> bool:
        i, j = args["identity"], self.j
        active, _ = self._on_table(args["table"], args["now"], lambda: bool(self.heartbeats.isBrokerActive(
            i.cluster_name, i.broker_name, j.Long(i.broker_id))))
        return active

    def scan_not_active_broker(self, args: dict):
        _, after = self._on_table(args["table"], args["now"], self.heartbeats.scanNotActiveBroker)
        expired = sorted(set(args["table"].entries) - set(after.entries),
                         key=lambda i: (i.cluster_name, i.broker_name, i.broker_id))
        return after, tuple(expired)


def _has_method(jclass, name: str) -> bool:
    return any(str(m.getName()) == name for m in jclass.class_.getMethods())


def _changing(method: str, arg_name: str):
    return lambda server, args: server.change_cache(args, method, arg_name)


def _looking_up(method: str, arg_name: str):
    return lambda server, args: server.look_up(args, method, arg_name)


EPOCH_FILE_OPERATIONS = {
    "truncation.find_consistent_point": RocketMQServer.find_consistent_point,
    "truncation.append": RocketMQServer.append,
    "truncation.truncate_suffix_by_offset": _changing("truncateSuffixByOffset", "offset"),
    "truncation.truncate_suffix_by_epoch": _changing("truncateSuffixByEpoch", "epoch"),
    "truncation.truncate_prefix_by_offset": _changing("truncatePrefixByOffset", "offset"),
    "truncation.set_last_end": _changing("setLastEpochEntryEndOffset", "end"),
    "truncation.find_entry_by_offset": _looking_up("findEpochEntryByOffset", "offset"),
    "truncation.find_entry_by_epoch": _looking_up("getEntry", "epoch"),
    "truncation.next_entry": _looking_up("nextEntry", "epoch"),
}
CONTROLLER_OPERATIONS = {
    "controller.handle": RocketMQServer.handle_api,
    "controller.apply_event": RocketMQServer.apply_event,
    "controller.on_broker_heartbeat": RocketMQServer.on_broker_heartbeat,
    "controller.is_broker_active": RocketMQServer.is_broker_active,
    "controller.scan_not_active_broker": RocketMQServer.scan_not_active_broker,
}


# ------------------------------------------------------------------ version


def _resource_properties(j: _Classes, anchor, path: str) -> dict[str, str]:
    stream = anchor.class_.getClassLoader().getResourceAsStream(path)
    if stream is None:
        return {}
    props = j.jpype.JClass("java.util.Properties")()
    try:
        props.load(stream)
    finally:
        stream.close()
    return {str(k): str(props.getProperty(k)) for k in props.stringPropertyNames()}


def build_version(j: _Classes) -> str:
    """The version of the classes: jar manifest, Maven pom.properties, our source build's
    properties, or MQVersion (a source tree's release line)."""
    anchor = j.Manager if j.Manager is not None else j.EpochFileCache
    manifest = anchor.class_.getPackage().getImplementationVersion()
    if manifest:
        return str(manifest)
    for artifact in ARTIFACTS:
        found = _resource_properties(j, anchor, f"META-INF/maven/org.apache.rocketmq/{artifact}/pom.properties")
        if found.get("version"):
            return found["version"]
    built = _resource_properties(j, anchor, BUILD_PROPERTIES)
    if built.get("version"):
        return " ".join(v for v in (built["version"], built.get("commit", "")) if v)
    try:
        mq = j.jpype.JClass(f"{PKG}.common.MQVersion")
        return f"{mq.getVersionDesc(mq.CURRENT_VERSION)} (MQVersion)"
    except Exception:  # noqa: BLE001 - nothing says which version these classes are
        return "unknown (no manifest, pom.properties or MQVersion)"
