"""The ``classic`` scenario: a classic master/slave group (seed 001) in the simulator.

Nodes ``b1 b2 [b3]``: ``b1`` starts as the master (SYNC_MASTER or ASYNC_MASTER: option
``mode``), the others as its slaves. Producers are the script: they reach brokers
directly. An operator may fail over by hand (``failover``), wipe a broker's store, or
let the commitlog cleaner delete old files.

Steps, besides those every scenario understands (``conformance/scenarios/base.py``):

| step | meaning |
|---|---|
| ``write [COUNT] [NODE] [size=BYTES] [nowait]`` | a producer writes COUNT (default 1) messages of BYTES each (default 64) to NODE, or to the configured master; ``nowait``: waitStoreMsgOK false |
| ``failover NODE`` | the operator promotes NODE: it restarts as the master (same mode), every other broker restarts as its slave; a broker that is down gets the new configuration on its disk |
| ``wipe NODE`` | the operator replaces NODE's store by an empty one (the broker is stopped, wiped and started again) |
| ``clean NODE KEEP`` | NODE's commitlog cleaner deletes every file but the last KEEP |
| ``await-sync [MS]`` | run until every live slave holds its live master's max offset (at most MS, default 60000) |
| ``expect max NODE OFFSET`` / ``expect min NODE OFFSET`` | NODE's commitlog ends (starts) at OFFSET |
| ``expect status ID STATUS`` | the producer of message ID was told STATUS (e.g. ``FLUSH_SLAVE_TIMEOUT``); ``none``: nothing yet |
| ``expect acknowledged COUNT`` | COUNT messages were answered PUT_OK so far |
| ``expect finding NAME`` / ``expect no-finding`` | a documented finding was (not) recorded |

Options (script header ``option KEY VALUE``): ``mode sync|async`` (SYNC_MASTER, the
default, or ASYNC_MASTER), ``flush async|sync`` (flushDiskType), ``file-size BYTES``
(mappedFileSizeCommitLog, default 1024), ``batch-size BYTES`` (haTransferBatchSize,
default 256), ``max-gap BYTES`` (haMaxGapNotInSync, default 2048), ``page-size BYTES``
(OS_PAGE_SIZE for the flush thresholds, default 64), ``in-sync-replicas N`` (5.x).
Sizes are scaled down from upstream's (1 GiB files, 32 KiB batches) so that runs
cross files; every time is upstream's.

Invariants (``spec/invariants/classic.py``) are checked after every activation of
every node. Findings: ``divergent_slave`` (a slave holds bytes its master lost: the
classic protocol never truncates) and ``failover_loses_acknowledged`` (an operator's
failover drops acknowledged messages the promoted slave lacked).
"""
from __future__ import annotations

import random

import attrs

from conformance.errors import UserError
from conformance.faults import faults_of
from conformance.inputs import whole_number
from conformance.scenarios.base import MAX_WRITE_BURST, ExpectationFailed, RunSummary, SimCluster
from conformance.scenarios.edits import lossy_net, overlay_stretch, probed, stretch_of
from conformance.script import Script, Step
from conformance.targets import ScenarioTargets, resolve_targets
from results.runresult import Metric, RunConfig
from spec.classic import abstract, commitlog, master, slave, write
from spec.classic.commitlog import BLANK_MAGIC_CODE, read_record
from spec.classic.profiles import DEFAULT_PROFILE, PROFILES, ClassicProfile
from spec.classic.records import BrokerRole, ClassicConfig, FlushDiskType, PutMessageStatus, SlaveReport
from spec.classic.rules import ClassicRules
from spec.classic.stream import OrderedStream
from spec.classic.wire import (
    ClassicNodeConfig, CleanFiles, HAReset, HAStream, Put, PutResult, Reconfigure, TransferFrame,
)
from spec.invariants import Violation
from spec.invariants import classic as inv
from spec.steps import BOOT, CRASH, MESSAGE, TICK, StepEvent
from spec.steps import classic as classic_steps

DIVERGENT_SLAVE = "divergent_slave"
FAILOVER_LOSS = "failover_loses_acknowledged"
QUIET_MS = 30_000  # no fault for this long: connections must hold
CATCH_UP_MS = 30_000  # a slave must reach a target its master held this long ago
DEFAULT_MESSAGE_SIZE = 64
PROPERTIES = tuple(inv.INVARIANTS) + classic_steps.PROPERTIES
_BLANK = BLANK_MAGIC_CODE.to_bytes(4, "big")

SCENARIO_CONFIG = ClassicConfig(mapped_file_size_commit_log=1024, ha_transfer_batch_size=256,
                                ha_max_gap_not_in_sync=2048, os_page_size=64)


def classic_profile(name: str | None) -> ClassicProfile:
    if name is None:
        return DEFAULT_PROFILE
    if name not in PROFILES:
        raise UserError(f"unknown classic profile {name!r} (known: {', '.join(PROFILES)})")
    return PROFILES[name]


def _int_option(script: Script, name: str, default: int, hi: int = 1 << 40) -> int:
    return whole_number(script.option(name, str(default)), f"option {name}", 1, hi)


def _choice_option(script: Script, name: str, choices: dict, default: str):
    value = script.option(name, default)
    if value not in choices:
        raise UserError(f"option {name}: want {' or '.join(choices)}, not {value!r}")
    return choices[value]


class ClassicCluster(SimCluster):
    scenario = "classic"
    finding_names = (DIVERGENT_SLAVE, FAILOVER_LOSS)

    def __init__(self, script: Script, targets: ScenarioTargets, record_trace: bool = True):
        super().__init__(script, record_trace)
        self.target = targets
        brokers = targets["broker"]
        if not 2 <= len(self.peers) <= 5:
            raise UserError(f"the classic scenario needs 2-5 brokers, not {' '.join(self.peers)}")
        self.mode = _choice_option(script, "mode", {"sync": BrokerRole.SYNC_MASTER, "async": BrokerRole.ASYNC_MASTER},
                                   "sync")
        flush = _choice_option(script, "flush", {"async": FlushDiskType.ASYNC_FLUSH, "sync": FlushDiskType.SYNC_FLUSH},
                               "async")
        base = SCENARIO_CONFIG
        self.config = attrs.evolve(
            base, broker_role=self.mode, flush_disk_type=flush,
            mapped_file_size_commit_log=_int_option(script, "file-size", base.mapped_file_size_commit_log),
            ha_transfer_batch_size=_int_option(script, "batch-size", base.ha_transfer_batch_size),
            ha_max_gap_not_in_sync=_int_option(script, "max-gap", base.ha_max_gap_not_in_sync),
            os_page_size=_int_option(script, "page-size", base.os_page_size),
            in_sync_replicas=_int_option(script, "in-sync-replicas", base.in_sync_replicas),
        )
        self.profile = classic_profile(script.profile)
        self.rules = ClassicRules(config=self.config, profile=self.profile)  # what the monitor asks of a configuration
        self.file_size = self.config.mapped_file_size_commit_log
        self.master = self.peers[0]  # whom the operator configured as master
        # monitor state
        self.written: dict[int, list[bytes]] = {}  # start -> records any master wrote there
        self._written_upto: dict[str, tuple[object, int]] = {}  # master -> (node object, parsed up to)
        # master -> (node object, {start: [record, held]}): messages awaiting their producer's
        # answer, and whether a slave held them when it reported past them
        self.pending: dict[str, tuple[object, dict[int, list]]] = {}
        self.excused: dict[str, tuple[object, int]] = {}  # master -> (node object, a diverged slave's report)
        self.diverged: dict[str, object] = {}  # slave -> the node object that diverged
        self._history_checked: dict[str, tuple[object, int]] = {}
        self._violated: set[tuple[str, object]] = set()
        self.reports: dict[str, int] = {}  # connection -> last report sent
        self.mirrors: dict[str, OrderedStream] = {}  # the order in which each connection's slave reads frames
        self.views: dict[str, tuple[object, object]] = {}  # node -> (node object, its view at its last activation)
        self.acknowledged: dict[str, tuple[int, bytes]] = {}  # PUT_OK'd id -> (start, record)
        self.statuses: dict[str, str] = {}
        self.written_count = 0
        self.failovers = 0
        self._failover_check: tuple[str, int, dict] | None = None  # (promoted node, failover, acknowledged)
        self.last_fault = 0
        self.catch_up: dict[str, tuple[int, int]] = {}  # slave -> (since, target)
        self.closes = 0
        self._group_seen = None  # (views, configured master, every broker's abstract state)
        # step conformance (spec/steps/classic.py): every step judged against the declared profile
        self.steps = self.new_steps()
        self.step_sink = None  # step_sink(event): e.g. conformance.traces.TraceWriter.write

        def factory(node_id, durable, now, draw):
            return brokers.make_node(node_id, self.peers, draw, durable, now, self.node_config(node_id))

        self._start_simulator(factory, (self._observe,))

    def new_steps(self):
        return classic_steps.ClassicSteps(self.config, self.profile)

    def _judge_step(self, node_id: str, event: StepEvent) -> None:
        if self.step_sink is not None:
            self.step_sink(event)
        if self.steps is not None:
            for found in self.steps.check(event):
                self.violate(found)

    def node_config(self, node_id: str) -> ClassicNodeConfig:
        """The operator's configuration of ``node_id`` (what it boots with)."""
        if node_id == self.master:
            return ClassicNodeConfig(self.mode, None, self.config, self.profile.name)
        return ClassicNodeConfig(BrokerRole.SLAVE, self.master, self.config, self.profile.name)

    # ------------------------------------------------------------------ helpers

    def not_applicable(self) -> set[str]:
        return set() if self.rules.waits_for_slaves() else {"put-ok-held-by-slave"}

    def _record(self, found: Violation | None, key=None) -> None:
        if found is None:
            return
        if key is not None:
            if key in self._violated:
                return
            self._violated.add(key)
        self.violate(found)

    def _view(self, n: str | None):
        """(node object, view) of a live node, else (None, None)."""
        node = self.sim.nodes.get(n) if n is not None else None
        if node is None:
            return None, None
        seen = self.views.get(n)
        if seen is None or seen[0] is not node:
            seen = (node, node.observe())
        return seen

    def _master_of(self, slave) -> tuple[object, object]:
        """(node, view) of a slave view's live master, else (None, None)."""
        if slave.role is not BrokerRole.SLAVE:
            return None, None
        node, view = self._view(slave.master)
        return (node, view) if view is not None and view.role.is_master else (None, None)

    def quiet(self) -> bool:
        sim = self.sim
        return not sim.blocked and sim.net.drop == 0 and sim.now - self.last_fault >= QUIET_MS

    def _fault(self) -> None:
        self.last_fault = self.sim.now
        self.catch_up.clear()

    # ------------------------------------------------------------------ monitor

    def _observe(self, sim, node_id: str, incoming, ready) -> None:
        node = sim.nodes[node_id]
        if node is None:
            if self.steps is not None or self.step_sink is not None:
                self._judge_step(node_id, StepEvent(node_id, sim.now, CRASH))
            return
        before = self.views.get(node_id)
        before = before[1] if before is not None and before[0] is node else None
        view = node.observe()
        self.views[node_id] = (node, view)
        if self.steps is not None or self.step_sink is not None:
            kind = MESSAGE if incoming is not None else TICK if ready is not None else BOOT
            self._judge_step(node_id, StepEvent(
                node_id, sim.now, kind, incoming.src if incoming is not None else None,
                incoming.payload if incoming is not None else None, view, ready.messages if ready is not None else ()))
        if self._failover_check is not None and self._failover_check[0] == node_id:
            self._check_failover_loss(view)
        messages = ready.messages if ready is not None else ()
        if view.role.is_master:
            self._observe_master(node_id, node, view, messages, before)
        elif incoming is not None and isinstance(incoming.payload, HAStream):
            self._observe_frames(node_id, node, view, incoming.payload, before)
        if messages:
            self._observe_reports(node_id, node, view, messages)
        if before is not None:
            self._observe_closes(node_id, before, view, incoming)
        if self.full_check:  # the oracle: every live broker against its master, every time
            for n in self.peers:
                other, other_view = self._view(n)
                if other_view is not None:
                    self._check_prefixes(n, other, other_view)
        elif before is None or (before.min_offset, before.max_offset, before.role, before.master) != \
                (view.min_offset, view.max_offset, view.role, view.master):
            self._check_prefixes(node_id, node, view)  # its log or its configuration changed
        self._check_catch_up()
        self._note_abstract_state(node_id, incoming)

    def _note_abstract_state(self, node_id: str, incoming) -> None:
        """Count the abstract state of the group a broker's step reached (spec/classic/abstract.py)."""
        views = tuple(self._view(n)[1] for n in self.peers)
        seen = self._group_seen
        # worked out again only when a view or the configured master changed (views are
        # immutable: the same objects, the same states)
        if seen is None or seen[1] != self.master or any(a is not b for a, b in zip(seen[0], views)):
            seen = self._group_seen = (views, self.master, abstract.group_state(dict(zip(self.peers, views)),
                                                                               self.master))
        masters = sum(1 for v in views if v is not None and v.role.is_master)
        self.note_abstract_state(abstract.state_of_step(seen[2][node_id], self.event_kind(incoming), masters,
                                                        self.network_condition()))

    def _observe_closes(self, node_id: str, before, view, incoming) -> None:
        """Connections that were open before this activation and are gone: closed by this
        broker (unless the activation was the peer's reset)."""
        gone = {c.conn: c.slave for c in before.connections} | (
            {before.client.conn: before.master} if before.client is not None and before.client.connected else {})
        still = {c.conn for c in view.connections} | ({view.client.conn} if view.client is not None else set())
        reset = incoming.payload.conn if incoming is not None and isinstance(incoming.payload, HAReset) else None
        for conn, peer in gone.items():
            if conn in still or conn == reset:
                continue
            self.closes += 1
            if self.quiet() and peer not in self.diverged and node_id not in self.diverged \
                    and not self._closed_on_report_past_master(before, conn, incoming):
                self._record(inv.connection_stable(node_id, conn, "closed by this broker",
                                                   self.sim.now - self.last_fault))

    def _closed_on_report_past_master(self, before, conn: str, incoming) -> bool:
        """The master closed ``conn`` as the profile's report rule says for the report that
        arrived: 4.9.3's #3015 check closes on every later report past its max offset, so a
        slave whose log ends past its master's (it held what a failover lost, even if the
        cleaner has deleted those bytes since) is closed until the master's writes overtake
        it. Upstream's own reaction, not an unstable connection."""
        payload = incoming.payload if incoming is not None else None
        if not (isinstance(payload, HAStream) and payload.conn == conn and isinstance(payload.payload, SlaveReport)):
            return False
        mine = next((c for c in before.connections if c.conn == conn), None)
        if mine is None:
            return False
        connection = master.ConnectionView(mine.slave_request_offset, mine.slave_ack_offset)
        return self.rules.on_slave_report(connection, payload.payload.offset, before.max_offset, 0, self.profile).close

    def _observe_master(self, node_id: str, node, view, messages, before) -> None:
        self.diverged.pop(node_id, None)  # a promoted slave's log is the truth now
        # every record a master appends is history: a slave may hold it after the master lost it
        seen = self._written_upto.get(node_id)
        pos = seen[1] if seen is not None and seen[0] is node else view.max_offset
        if before is not None:
            # what this activation appended starts at the log's end before it: a record
            # boundary, where the end of what was seen may not be (a diverged log ends inside
            # another master's record, and no record could be read from there)
            pos = max(pos, before.max_offset)
        if seen is None and view.max_offset > view.min_offset and not self.written:
            pos = view.min_offset  # the first master: its log is history from the start
        pending = self._pending(node_id, node)
        for start, record in self._records(view, pos, view.max_offset):
            self.written.setdefault(start, []).append(record)
            if record[4:8] != _BLANK:
                pending[start] = [record, False]
            pos = start + len(record)
        # (a restart's recovery may have cut a torn last record: the next one starts there)
        self._written_upto[node_id] = (node, min(pos, view.max_offset))
        waits = self.rules.waits_for_slaves()
        sync_flush = self.config.flush_disk_type is FlushDiskType.SYNC_FLUSH
        excuse = self.excused.get(node_id)
        excused_to = excuse[1] if excuse is not None and excuse[0] is node else -1
        for m in messages:
            r = m.payload
            if not isinstance(r, PutResult):
                continue
            self.statuses[r.msg_id] = r.status.value
            entry = pending.pop(r.start, None)
            if r.status is not PutMessageStatus.PUT_OK or r.start < 0:
                continue
            # the record as the master wrote it (the cleaner may have deleted its file since)
            record = entry[0] if entry is not None else view.data[r.start - view.min_offset:r.end - view.min_offset]
            self.acknowledged[r.msg_id] = (r.start, record)
            if waits:
                held = entry is not None and entry[1]
                self._record(inv.put_ok_held(node_id, r.start, record, held, excused_to >= r.end))
            if sync_flush:
                self._record(inv.put_ok_flushed(node_id, r.end, view.flushed))

    def _pending(self, master: str, node) -> dict[int, list]:
        seen = self.pending.get(master)
        if seen is None or seen[0] is not node:
            seen = self.pending[master] = (node, {})
        return seen[1]

    @staticmethod
    def _records(view, start: int, end: int):
        """Whole records of a broker's commitlog in [start, end), from a record boundary."""
        data, base = view.data, view.min_offset
        pos = max(start, base)
        while pos < end:
            head = read_record(data, pos - base)
            if head is None or head[0] < 8 or pos + head[0] > end:
                return
            yield pos, bytes(data[pos - base:pos - base + head[0]])
            pos += head[0]

    def _observe_reports(self, node_id: str, node, view, messages) -> None:
        for m in messages:
            p = m.payload
            if not (isinstance(p, HAStream) and isinstance(p.payload, SlaveReport)):
                continue
            report = p.payload.offset
            previous = self.reports.get(p.conn)
            if previous is not None:
                self._record(inv.reports_monotone(node_id, p.conn, previous, report), ("monotone", p.conn))
            self.reports[p.conn] = report
            master = self.sim.nodes.get(m.dst)
            if master is None:
                continue
            if self.diverged.get(node_id) is node:
                old = self.excused.get(m.dst)
                keep = old[1] if old is not None and old[0] is master else -1
                self.excused[m.dst] = (master, max(keep, report))
                continue
            data, base = view.data, view.min_offset
            for start, entry in self._pending(m.dst, master).items():
                record = entry[0]
                if not entry[1] and start + len(record) <= report and start >= base \
                        and data[start - base:start - base + len(record)] == record:
                    entry[1] = True

    def _observe_frames(self, node_id: str, node, view, stream: HAStream, before) -> None:
        mirror = self.mirrors.setdefault(stream.conn, OrderedStream(node_id))
        frames = [f for f in mirror.receive(stream.seq, stream.payload, self.sim.now) if isinstance(f, TransferFrame)]
        if before is None or (before.min_offset, before.max_offset) == (view.min_offset, view.max_offset):
            return
        before_min, before_max = before.min_offset, before.max_offset
        running = before_max
        for f in frames:
            if not f.body:
                continue
            if running == before_min == before_max and f.header.master_phy_offset == view.min_offset:
                running = view.min_offset  # an empty log starts where the frame says
            at = running - view.min_offset
            if f.header.master_phy_offset == running and view.data[at:at + len(f.body)] == f.body:
                running += len(f.body)
        if running != view.max_offset:
            bad = next((f for f in frames if f.body), None)
            offset = bad.header.master_phy_offset if bad is not None else -1
            body = bad.body if bad is not None else b""
            self._record(inv.frame_at_slave_offset(node_id, before_max, before_min, view, offset, body,
                                                   self.file_size), ("frame", node))

    def _check_prefixes(self, node_id: str, node, view) -> None:
        if view.role is BrokerRole.SLAVE:
            slaves = [(node, view)]
        else:
            slaves = [self._view(n) for n in self.peers if n != node_id]
            slaves = [(o, v) for o, v in slaves if v is not None and v.role is BrokerRole.SLAVE and v.master == node_id]
        for slave_node, slave in slaves:
            master_node, master = self._master_of(slave)
            if master is None or self.diverged.get(slave.node_id) is slave_node:
                continue  # (a slave's log only grows: once diverged, it stays so)
            if slave.min_offset < master.min_offset:
                # what the master no longer has (deleted files) is judged against what masters wrote
                seen = self._history_checked.get(slave.node_id)
                pos = seen[1] if seen is not None and seen[0] is slave_node else slave.min_offset
                pos = max(pos, slave.min_offset)  # (the cleaner may have deleted files since)
                bad, pos = inv.unwritten_record(slave, pos, min(slave.max_offset, master.min_offset), self.written)
                self._history_checked[slave.node_id] = (slave_node, pos)
                if bad is not None:
                    self._record(inv.slave_prefix(slave, master, bad, False), ("prefix", slave_node))
                    continue
            at = inv.first_difference(slave, master)
            if at is None:
                if inv.positioned_past_master(slave, master, self.written):
                    self._diverge(slave_node, slave, f"{slave.node_id} holds nothing and ends at {slave.max_offset}, "
                                                     f"past its master {master.node_id}'s end {master.max_offset} (a "
                                                     f"master's log reached there, then was lost or replaced)")
                continue
            if inv.explain_divergence(slave, at, self.written, self.file_size):
                self._diverge(slave_node, slave, f"{slave.node_id} holds bytes at {at} that its master "
                                                 f"{master.node_id} does not (a master wrote them, then lost them "
                                                 f"or was replaced)")
            else:
                self._record(inv.slave_prefix(slave, master, at, False), ("prefix", slave_node))

    def _diverge(self, slave_node, slave, what: str) -> None:
        """``slave`` diverged from its master by history (a finding): from now on its reports
        excuse the PUT_OKs they release (``put_ok_held``), until it restarts."""
        self.diverged[slave.node_id] = slave_node
        self.add_finding(f"{slave.node_id}@{self.sim.now}", what, DIVERGENT_SLAVE)

    def _wake_all(self, t: int) -> None:
        """Judge the passing of time at ``t`` as a simulator ticking every node every 10 ms
        would (deadline scheduling may leave every node asleep then)."""
        for n in self.peers:
            if self.sim.nodes[n] is not None:
                self.sim.wake_at(n, t)

    def _check_catch_up(self) -> None:
        if not self.quiet():
            if not self.sim.blocked and self.sim.net.drop == 0:
                self._wake_all(self.last_fault + QUIET_MS)  # when the quiet begins
            return
        now = self.sim.now
        for n in self.peers:
            slave_node, slave = self._view(n)
            if slave is None or slave.role is not BrokerRole.SLAVE:
                continue
            _, master = self._master_of(slave)
            if master is None or self.diverged.get(n) is slave_node or slave.max_offset < master.min_offset \
                    or slave.max_offset >= master.max_offset:
                self.catch_up.pop(n, None)
                continue
            since, target = self.catch_up.get(n, (now, master.max_offset))
            if slave.max_offset >= target:
                since, target = now, master.max_offset
            elif now - since > CATCH_UP_MS:
                self._record(inv.slave_catches_up(n, target, since, now, slave.max_offset))
                since, target = now, master.max_offset
            self.catch_up[n] = (since, target)
            self._wake_all(since + CATCH_UP_MS + 1)

    # ------------------------------------------------------------------ results

    def run_summary(self) -> RunSummary:
        counts: dict[str, int] = {}
        for status in self.statuses.values():
            counts[status] = counts.get(status, 0) + 1
        metrics = [Metric("acknowledged_messages", float(len(self.acknowledged))),
                   Metric("written_messages", float(self.written_count)),
                   Metric("slave_not_available", float(counts.get("SLAVE_NOT_AVAILABLE", 0))),
                   Metric("flush_slave_timeout", float(counts.get("FLUSH_SLAVE_TIMEOUT", 0))),
                   Metric("connections_closed", float(self.closes)),
                   *self.finding_metrics()]
        return RunSummary(elections=1 + self.failovers, leader_changes=self.failovers, max_term=self.failovers,
                          metrics=tuple(metrics))

    # ------------------------------------------------------------------ steps (faults first)

    def step_crash(self, step: Step) -> None:
        self._fault()
        super().step_crash(step)

    def step_restart(self, step: Step) -> None:
        self._fault()
        super().step_restart(step)

    def step_restart_all(self, step: Step) -> None:
        self._fault()
        super().step_restart_all(step)

    def step_partition(self, step: Step) -> None:
        self._fault()
        super().step_partition(step)

    def step_block(self, step: Step) -> None:
        self._fault()
        super().step_block(step)

    def step_heal(self, step: Step) -> None:
        self._fault()
        super().step_heal(step)

    def step_net(self, step: Step) -> None:
        self._fault()
        super().step_net(step)

    def step_slow(self, step: Step) -> None:
        self._fault()
        super().step_slow(step)

    def step_write(self, step: Step) -> None:
        size, wait, positional = DEFAULT_MESSAGE_SIZE, True, []
        for a in step.args:
            if a.startswith("size="):
                size = whole_number(a[len("size="):], f"line {step.line}: write size=", 9, self.file_size - 8)
            elif a == "nowait":
                wait = False
            else:
                positional.append(a)
        plain = Step(step.op, tuple(positional), step.line)
        count = self.int_arg(plain, 0, 1, 1, MAX_WRITE_BURST)
        target = self.node_arg(plain, 1) if len(positional) > 1 else self.master
        for _ in range(count):
            self.written_count += 1
            self.sim.client(target, Put(f"m{self.written_count}", size, wait))

    def step_failover(self, step: Step) -> None:
        new = self.node_arg(step)
        self._fault()
        self.failovers += 1
        # what the promoted broker lacks of the acknowledged messages is judged when it next
        # serves (now if it is up, after its restart if it is down: what survived)
        self._failover_check = (new, self.failovers, dict(self.acknowledged))
        self.master = new
        for n in self.peers:
            if self.sim.nodes[n] is not None:
                config = self.node_config(n)
                self.sim.client(n, Reconfigure(config.role, config.master))
        # a stopped broker boots with the new configuration (node_config)

    def _check_failover_loss(self, view) -> None:
        new, number, acknowledged = self._failover_check
        self._failover_check = None
        data, base = view.data, view.min_offset
        for msg_id, (start, record) in sorted(acknowledged.items()):
            # (a message before the promoted broker's first file was deleted by the cleaner)
            if start >= base and data[start - base:start - base + len(record)] != record:
                self.add_finding(f"{msg_id}@failover{number}",
                                 f"acknowledged {msg_id} at {start} is not on {new}, promoted by failover {number}",
                                 FAILOVER_LOSS)

    def step_wipe(self, step: Step) -> None:
        n = self.node_arg(step)
        self._fault()
        self.harvest_coverage(n)
        self.sim.crash(n)
        self.sim.disk[n] = None  # a new disk: the broker boots empty with its configuration
        self.sim.restart(n)

    def step_clean(self, step: Step) -> None:
        n = self.node_arg(step)
        keep = self.int_arg(step, 1, 1, 1, 1 << 20)
        self.sim.client(n, CleanFiles(keep))

    def step_await_sync(self, step: Step) -> None:
        limit = self.sim.now + self.ms_arg(step, 0, 60_000)
        while self.sim.now < limit and not self._in_sync():
            self.sim.run_for(100)

    def _in_sync(self) -> bool:
        for n in self.peers:
            _, slave = self._view(n)
            if slave is None or slave.role is not BrokerRole.SLAVE:
                continue
            _, master = self._master_of(slave)
            if master is not None and slave.max_offset != master.max_offset:
                return False
        return True

    # ------------------------------------------------------------------ expectations

    def _expect_view(self, step: Step, where: str):
        n = self.node_arg(step, 1)
        _, view = self._view(n)
        if view is None:
            raise ExpectationFailed(f"{where}: {n} is down")
        return view

    def expect_max(self, step: Step, where: str) -> None:
        view = self._expect_view(step, where)
        if view.max_offset != self.int_arg(step, 2, lo=0):
            raise ExpectationFailed(f"{where}: but {view.node_id}'s commitlog ends at {view.max_offset}")

    def expect_min(self, step: Step, where: str) -> None:
        view = self._expect_view(step, where)
        if view.min_offset != self.int_arg(step, 2, lo=0):
            raise ExpectationFailed(f"{where}: but {view.node_id}'s commitlog starts at {view.min_offset}")

    def expect_status(self, step: Step, where: str) -> None:
        if len(step.args) < 3:
            raise UserError(f"line {step.line}: expect status ID STATUS")
        got = self.statuses.get(step.args[1], "none")
        if got != step.args[2]:
            raise ExpectationFailed(f"{where}: but {step.args[1]} got {got}")

    def expect_acknowledged(self, step: Step, where: str) -> None:
        if len(self.acknowledged) != self.int_arg(step, 1, lo=0):
            raise ExpectationFailed(f"{where}: but {len(self.acknowledged)} were acknowledged")


# ---------------------------------------------------------------------- campaigns


def classic_outcomes() -> dict[str, tuple[str, ...]]:
    """Every outcome the classic decision procedures can report (for coverage)."""
    return {
        "place_message": tuple(o.value for o in commitlog.PlaceOutcome if o is not commitlog.PlaceOutcome.MESSAGE_SIZE_EXCEEDED),
        "submit_flush_request": tuple(o.value for o in write.FlushRequestOutcome),
        "submit_replica_request": tuple(o.value for o in write.ReplicaOutcome),
        "transfer_status": ("PUT_OK", "FLUSH_SLAVE_TIMEOUT"),
        "on_slave_report": tuple(o.value for o in master.ReportOutcome),
        "first_transfer_offset": tuple(o.value for o in master.FirstOffsetOutcome),
        "write_socket_round": tuple(o.value for o in master.WriteOutcome),
        "master_housekeeping": tuple(o.value for o in master.HousekeepingOutcome),
        "periodic_report": tuple(o.value for o in slave.ReportKind if o is not slave.ReportKind.PROGRESS),
        "progress_report": ("NONE", "PROGRESS"),
        "on_frame": tuple(o.value for o in slave.FrameOutcome),
        "slave_housekeeping": ("KEEP",),
    }


# every script's end: every fault ends; writes flow, then the group idles: connections must
# hold and every slave must catch up (a search's edits leave it as it is)
HEALING_END = (Step("heal"), Step("net", ("default",)), Step("restart-all"), Step("run", ("5000",)),
               Step("write", ("3",)), Step("run", ("2000",)), Step("write", ("2", "size=200")),
               Step("run", (str(QUIET_MS + CATCH_UP_MS + 10_000),)))


def generate_classic_script(config: RunConfig, fault_mixes: dict) -> Script:
    """A master and 1-2 slaves; writes of varied sizes (files roll over), idle spells,
    faults of the mix (crashes with flush loss, wipes, partitions, lossy links), the
    operator's failovers and the commitlog cleaner; then every fault ends and the
    group must settle (connections hold, slaves catch up)."""
    faults = faults_of(config.fault_mix, fault_mixes)
    if config.group_size not in (2, 3):
        raise UserError(f"the classic scenario has 2 or 3 brokers, not {config.group_size}")
    rng = random.Random(f"{config.seed}:plan")
    nodes = tuple(f"b{i}" for i in range(1, config.group_size + 1))
    options = [("mode", "sync" if rng.random() < 0.7 else "async"),
               ("flush", "sync" if rng.random() < 0.3 else "async")]
    if config.profile == "rocketmq-5.0":
        options.append(("in-sync-replicas", "2"))
    master = nodes[0]
    steps: list[Step] = [Step("run", ("6000",))]
    down: set[str] = set()
    elapsed = 0

    def writes() -> None:
        for _ in range(rng.randint(1, 4)):
            size = rng.choice((24, 64, 64, 100, 200))
            steps.append(Step("write", (str(rng.randint(1, 6)), f"size={size}")))
            steps.append(Step("run", (str(rng.choice((5, 50, 300))),)))

    while elapsed < config.duration_ms:
        choice = rng.choice(("write", "write", "write", "idle", "failover", "clean") + faults)
        up = [n for n in nodes if n not in down]
        if choice == "write":
            writes()
        elif choice == "idle":
            steps.append(Step("run", (str(rng.choice((8000, 25000))),)))
        elif choice == "failover" and len(up) > 1:
            candidates = [n for n in up if n != master]
            master = rng.choice(candidates)
            steps.append(Step("failover", (master,)))
        elif choice == "clean":
            steps.append(Step("clean", (rng.choice(up or list(nodes)), str(rng.choice((1, 2, 3))))))
        elif choice in ("crash", "crash-leader"):
            if down and rng.random() < 0.5:
                n = rng.choice(sorted(down))
                down.discard(n)
                steps.append(Step("restart", (n,)))
            elif up:
                n = master if choice == "crash-leader" and master in up else rng.choice(up)
                if rng.random() < 0.25 and n != master:
                    steps.append(Step("wipe", (n,)))  # a replaced disk: the slave starts empty
                else:
                    down.add(n)
                    steps.append(Step("crash", (n,)))
                    writes()  # writes while it is down (or none reach a dead master)
                    if rng.random() < 0.6:
                        steps.append(Step("run", (str(rng.choice((500, 2000, 8000))),)))
                        steps.append(Step("restart", (n,)))
                        down.discard(n)
        elif choice in ("partition", "isolate-leader", "block"):
            a, b = rng.sample(nodes, 2)
            steps.append(Step("partition", (a, "|", b)) if choice != "block" else Step("block", (a, b)))
            writes()
            steps.append(Step("run", (str(rng.choice((1000, 6000, 25000))),)))
            steps.append(Step("heal"))
        elif choice == "lossy":
            steps.append(Step("net", ("1..60", f"drop={rng.choice(('0.02', '0.1'))}", "dup=0.05")))
            writes()
            steps.append(Step("net", ("default",)))
        ms = rng.choice((200, 1000, 3000))
        steps.append(Step("run", (str(ms),)))
        elapsed += ms + 1000
    return Script("classic", nodes, config.seed, config.profile, config.adapter, start_spread_ms=0,
                  steps=tuple(steps) + HEALING_END, options=tuple(options))


def _masters_never_wiped(phase: list[Step], master: str) -> list[Step]:
    """``phase`` with a wipe of the broker acting as master at that point (an operator's
    failover moves it) made a crash and restart: the generator wipes only slaves (a
    replaced disk), and an edit must not turn a slave's wipe into the master's."""
    out = []
    for step in phase:
        if step.op == "failover":
            master = step.args[0]
        if step.op == "wipe" and step.args[0] == master:
            out += [Step("crash", step.args), Step("restart", step.args)]
        else:
            out.append(step)
    return out


def mutate_classic_script(script: Script, config: RunConfig, rng: random.Random, fault_mixes: dict) -> Script:
    """A neighbour of ``script`` for the search (conformance/search.py): one to three edits
    of its fault phase: splice in a window of the fault phase of another seed's script of
    the same settings; put a window under a partition or a blocked link, a lossy network,
    or a broker's crash and restart (writes arriving meanwhile); put a stretch of the run
    itself (half the time its whole fault phase) under a lossy network or a partition,
    or have producers with stale routes write to every broker after each of its waits;
    an operator's failover to a broker drawn at random, the cleaner on one, a burst of
    writes; or the same faults under another seed's configuration (sync or async master,
    flush). The opening wait and the healing end stay, and no edit wipes a master."""
    steps = list(script.steps)
    head, phase, suffix = steps[:1], steps[1:-len(HEALING_END)], steps[-len(HEALING_END):]
    nodes = list(script.nodes)
    options = script.options

    def writes() -> list[Step]:
        return [Step("write", (str(rng.randint(1, 6)), f"size={rng.choice((24, 64, 100, 200))}")) for _ in
                range(rng.randint(1, 3))]

    def partition() -> Step:  # one side of a random cut (the rest of the group is the other)
        return Step("partition", tuple(rng.sample(nodes, rng.randint(1, len(nodes) - 1))))

    for _ in range(rng.randint(1, 3)):
        op = rng.choice(("splice", "splice", "cut", "cut", "lossy", "lossy", "down", "down", "overlay", "overlay",
                         "probe", "probe", "failover", "clean", "writes", "options"))
        at = rng.randint(0, len(phase))
        ms = str(rng.choice((500, 1500, 4000, 12000)))
        if op == "splice":
            donor = generate_classic_script(attrs.evolve(config, seed=rng.randrange(1 << 31), origin=()),
                                            fault_mixes).steps[1:-len(HEALING_END)]
            if donor:
                start = rng.randrange(len(donor))
                phase[at:at] = donor[start:start + rng.randint(2, 8)]
        elif op == "cut":
            fault = partition() if rng.random() < 0.6 else Step("block", tuple(rng.sample(nodes, 2)))
            phase[at:at] = [fault, *writes(), Step("run", (ms,)), Step("heal")]
        elif op == "lossy":
            phase[at:at] = [lossy_net(rng), *writes(), Step("run", (ms,)), Step("net", ("default",))]
        elif op == "down":
            n = rng.choice(nodes)
            phase[at:at] = [Step("crash", (n,)), *writes(), Step("run", (ms,)), Step("restart", (n,))]
        elif op == "overlay":
            overlay_stretch(rng, phase, partition)
        elif op == "probe":
            # producers with stale routes: after every wait of a stretch, a write to each
            # broker whatever its role, so that each state a broker passes through meets one
            start, stop = stretch_of(rng, len(phase))
            phase[start:stop] = probed(phase[start:stop], nodes)
        elif op == "failover":
            phase[at:at] = [Step("failover", (rng.choice(nodes),)), *writes()]
        elif op == "clean":
            phase[at:at] = [Step("clean", (rng.choice(nodes), str(rng.choice((1, 2, 3)))))]
        elif op == "writes":
            phase[at:at] = writes() + [Step("run", (str(rng.choice((5, 50, 300))),))]
        else:
            options = generate_classic_script(attrs.evolve(config, seed=rng.randrange(1 << 31), origin=()),
                                              fault_mixes).options
    phase = _masters_never_wiped(phase, nodes[0])
    return attrs.evolve(script, options=options).with_steps(head + phase + suffix)


def build_classic(script: Script, adapter: str, record_trace: bool = True):
    classic_profile(script.profile)  # an unknown profile is bad input before any node starts
    return ClassicCluster(script, resolve_targets("classic", adapter, script.profile), record_trace)
