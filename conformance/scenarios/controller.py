"""The ``controller`` scenario: the full RIP-44 stack in the simulator.

Nodes ``c1 c2 c3`` are controllers (``reference/controller_node.py``: a DLedger group
whose committed entries are controller events); ``b1 b2 [b3]`` are the brokers of one
set ``broker-a`` (``reference/controller_broker.py``). Producers and consumers are the
script: they reach brokers directly (they are not on the simulated network).

Steps, besides those every scenario understands (``conformance/scenarios/base.py``):

| step | meaning |
|---|---|
| ``write [COUNT] [NODE] [size=BYTES]`` | a producer writes COUNT (default 1) messages of BYTES each (default 10, the model's unit) to NODE, or to the current master |
| ``consume [NODE]`` | a consumer reads every visible message of NODE (default: the current master) |
| ``crash-master`` | crash the current master (nothing if there is none) |
| ``elect [NODE]`` | an administrator (``mqadmin electMaster``) asks the active controller to elect broker NODE (designated), by default the first in-sync broker that is not the master: a switch of master (nothing if no controller is active or NODE has no id) |
| ``crash-active-controller`` | crash the controller that serves requests (nothing if none does) |
| ``isolate-active-controller [BROKER ...]`` | cut the controller that serves requests off from every other node, the brokers named on its side (nothing if none serves): until it steps down, it still answers the brokers it reaches while the others elect a new active controller |
| ``replace [NODE]`` | broker NODE's machine is replaced (or a pod without a persistent volume restarts): it boots on an empty disk, so it asks the controllers for a new broker id (the largest so far + 1) and registers afresh, while its old id stays registered, dead, until an admin cleans it. Without NODE: the last broker (by name) that is up and neither the current master nor the master the active controller records, whose disk the set never needs: another broker holds every acknowledged message it holds (nothing if none, or no controller is active) |
| ``clean [living]`` | an administrator (``mqadmin cleanBrokerMetadata -b IDS``) asks the active controller to remove the ids of ``broker-a`` it has registered that no broker holds any more, those of replaced machines (nothing if none, or no controller is active; the controller refuses ids it still sees alive); with ``living`` (``-l``, ``cleanLivingBroker=true``) the same list, or none if no id is dead, which upstream reads as "the whole set" either way |
| ``await-master [MS]`` | run until a broker is an unfenced master of the controller's masterEpoch (at most MS, default 60000) |
| ``expect master NODE`` | NODE is the current master |
| ``expect acknowledged COUNT`` | COUNT messages were acknowledged so far |
| ``expect finding NAME`` | the run recorded the documented finding NAME (e.g. ``acknowledged_lost_default_acks``) |
| ``expect no-finding`` | no finding so far |

Options (script header ``option KEY VALUE``): ``acks all|default`` (allAckInSyncStateSet
on or off; default ``all``), ``in-sync-replicas N``, ``min-in-sync-replicas N``,
``learner NODE`` (an async learner), ``unclean true|false`` (enableElectUncleanMaster),
``priorities NODE=N,...`` (brokerElectionPriority; lower wins among candidates equal in
epoch and offset; default Integer.MAX_VALUE).

Invariants (``spec/invariants/controller.py``) are checked after every activation of
every node. With ``acks default`` an acknowledged write may be lost (upstream #7017, a
documented limit, not a bug): ``no_acknowledged_message_lost`` is then not applicable
and a loss is recorded as the finding ``acknowledged_lost_default_acks``.
"""
from __future__ import annotations

import random

import attrs

from conformance.errors import UserError
from conformance.faults import faults_of
from conformance.inputs import whole_number
from conformance.scenarios.base import MAX_MESSAGE_SIZE, MAX_WRITE_BURST, ExpectationFailed, RunSummary, SimCluster
from conformance.scenarios.edits import after_waits, lossy_net, overlay_stretch, probed, stretch_of
from conformance.script import Script, Step
from conformance.targets import ScenarioTargets, resolve_targets
from results.runresult import Metric, RunConfig
from spec.broker.abstract import set_state as broker_set_state, state_of_step
from spec.broker.confirm_offset import ConfirmOutcome
from spec.broker.messages import MAX_ELECTION_PRIORITY, BrokerNodeConfig, Produce, ProduceResult
from spec.broker.records import DEFAULT_HA_CONFIG, PutMessageStatus
from spec.broker.role import PollOutcome, RoleOutcome
from spec.broker.sync_state_set import ApplyOutcome, ExpandOutcome
from spec.broker.write import ReplicationOutcome
from spec.controller.api import api_rows
from spec.controller.events import CleanBrokerDataEvent
from spec.controller.heartbeat import BrokerHeartbeat, DEFAULT_HEARTBEAT_TIMEOUT_MS
from spec.controller.messages import ControllerCall, ControllerNodeConfig
from spec.controller.profiles import get_profile
from spec.controller.records import DEFAULT_CONFIG, CleanBrokerDataRequest, ElectMasterRequest, ResponseCode
from spec.controller.rules import ControllerRules
from spec.invariants import Violation
from spec.steps import BOOT, CRASH, MESSAGE, TICK, StepEvent
from spec.steps.controller import ControllerStackSteps
from spec.truncation.messages import IN_ORDER_ON_SLAVES_CONNECTION, MESSAGE_SIZE, ON_SLAVES_CONNECTION
from spec.invariants import controller as inv

CLUSTER = "cluster-a"
BROKER_NAME = "broker-a"
CONTROLLERS = ("c1", "c2", "c3")
FINDING_7017 = "acknowledged_lost_default_acks"  # upstream #7017
# A set may keep a dead master at most this long while an electable broker lives:
# the heartbeat timeout, two scan periods, and time to commit the election.
STUCK_BOUND_MS = DEFAULT_HEARTBEAT_TIMEOUT_MS + 2 * 5_000 + 5_000
# A set whose nodes have all been up on a clean network this long has a master, unless the
# rules leave it none (no_masterless_healthy_set): the same margin, for a dead master's
# heartbeat to run out, two scans and an election's commit (the reference, 2,000 runs:
# at most 14.4 s after its healing suffix restarted every node)
MASTERLESS_BOUND_MS = STUCK_BOUND_MS
# produce_answered: a write to a healthy set's master is answered within this (the broker's
# write timeout, syncFlushTimeout, is 3 s: FLUSH_SLAVE_TIMEOUT then at the latest)
ANSWER_BOUND_MS = 10_000
# slave_catches_up: how long every node has been up on a clean network, and the master's log
# unchanged, before each other broker must be its slave holding that log (see _judge_catch_up)
CATCH_UP_MS = 10_000

PROPERTIES = tuple(inv.INVARIANTS)


def _bool(value: str, where: str) -> bool:
    if value in ("true", "on", "yes"):
        return True
    if value in ("false", "off", "no"):
        return False
    raise UserError(f"{where}: want true or false, not {value!r}")


def stack_setups(script: Script, controllers, brokers) -> tuple[ControllerNodeConfig, dict[str, BrokerNodeConfig]]:
    """What the script's options configure: the controllers' ControllerNodeConfig (profile,
    ControllerConfig) and each broker's BrokerNodeConfig (bad options are bad input)."""
    acks = script.option("acks", "all")
    if acks not in ("all", "default"):
        raise UserError(f"option acks: want all or default, not {acks!r}")
    try:
        ha = attrs.evolve(
            DEFAULT_HA_CONFIG,
            all_ack_in_sync_state_set=acks == "all",
            in_sync_replicas=int(script.option("in-sync-replicas", "1")),
            min_in_sync_replicas=int(script.option("min-in-sync-replicas", "1")),
        )
    except ValueError as exc:
        raise UserError(f"option: {exc}") from None
    unclean = _bool(script.option("unclean", "false"), "option unclean")
    config = attrs.evolve(DEFAULT_CONFIG, enable_elect_unclean_master=unclean)
    get_profile(script.profile or "rocketmq-5.1")  # an unknown profile is bad input, before any node starts
    learner = script.option("learner")
    if learner is not None and learner not in brokers:
        raise UserError(f"option learner: {learner!r} is not a broker ({' '.join(brokers)})")
    priorities = _priorities(script.option("priorities"), brokers)
    broker_setups = {
        b: BrokerNodeConfig(CLUSTER, BROKER_NAME, tuple(controllers), ha, async_learner=(b == learner),
                            election_priority=priorities.get(b, MAX_ELECTION_PRIORITY))
        for b in brokers
    }
    return ControllerNodeConfig(script.profile or "rocketmq-5.1", config), broker_setups


class ControllerCluster(SimCluster):
    scenario = "controller"
    on_receivers_connection = ON_SLAVES_CONNECTION
    in_order = IN_ORDER_ON_SLAVES_CONNECTION

    def __init__(self, script: Script, targets: ScenarioTargets, record_trace: bool = True):
        super().__init__(script, record_trace)
        self.target = targets
        self.controllers = tuple(n for n in self.peers if n.startswith("c"))
        self.brokers = tuple(n for n in self.peers if n.startswith("b"))
        other = next((n for n in self.peers if n not in self.controllers + self.brokers), None)
        if other is not None:
            raise UserError(f"the controller scenario names controllers c* and brokers b*: what is {other!r}?")
        if len(self.controllers) < 1 or not 1 <= len(self.brokers) <= 5:
            raise UserError(f"the controller scenario needs controllers c* and 1-5 brokers b*, not {' '.join(self.peers)}")
        controller_setup, broker_setups = stack_setups(script, self.controllers, self.brokers)
        self.all_ack = next(iter(broker_setups.values())).ha.all_ack_in_sync_state_set
        # what the controllers are configured with, and what the monitor judges them by
        self.controller_config = controller_setup.config
        # how long a slave may follow an older role while holding the log: a metadata poll
        # per controller (the active one may be the last it asks), and one more
        period = max(setup.ha.sync_broker_metadata_period_ms for setup in broker_setups.values())
        self._learns_role_ms = period * (len(self.controllers) + 1)
        # the rules each decision's row is read from, for coverage (whichever controller decided)
        self._rules = ControllerRules.for_profile(controller_setup.profile, controller_setup.config)
        # monitor state
        self.acknowledged: set[str] = set()
        # each message written before an admin clean restarted the broker set
        # (inv.CLEAN_RESTARTS_SET): how many such cleans came before it was written (its set's
        # generation; a message written since the last restart is of the current one)
        self.generation_of: dict[str, int] = {}
        self.consumed: set[str] = set()
        self.written = 0
        self.admin_calls = 0
        self.results: dict[str, str] = {}
        # What the monitor knows of each node: its view after its latest activation (None
        # while it is down), the last view it had before it went down, and for controllers
        # (incarnation, applied, metadata) of the last metadata judged.
        self.views: dict[str, object] = {n: None for n in self.peers}
        self.last_views: dict[str, object] = {}
        self._controller_seen: dict[str, tuple] = {}
        # brokerName -> ranges (lo, hi] of applied counts in which some controller's metadata
        # did not know the set (an admin clean removed a half of it): a controller that applied
        # entries across such a point may hold a set created again, whose epochs start over
        self._set_unknown: dict[str, set[tuple[int, int]]] = {}
        self._broker_seen: dict[str, int] = {}  # broker -> incarnation last observed (another: restarted)
        self.check_codes = inv.CheckCodeHistory()
        self.sync_state_sets = inv.SyncStateSetHistory()
        self.master_epochs = inv.MasterEpochHistory()
        self.applied_epochs = inv.AppliedEpochHistory()
        self.exempt: set[str] = set()
        self.heard: dict[tuple[str, str], int] = {}  # (controller, broker) -> last heartbeat delivered
        self.stuck_since: dict[str, tuple[tuple, int]] = {}  # set -> (active period, since)
        # controller -> whether its last view was active, and how often it became active: a
        # node that lost its leadership and won it again in the same term (a DLedger candidate
        # need not raise its term) starts another active period
        self._was_active: dict[str, bool] = {}
        self._activations: dict[str, int] = {}
        self._broker_presence: dict[str, tuple] = {}  # broker -> (up, broker id), as _check_stuck reads them
        self._master_log_seen: tuple | None = None  # (master, node, acknowledged, consumed) last judged
        self._set_state_seen: tuple | None = None  # (broker views, sync, their abstract part) last worked out
        self.masters: list[tuple[int, int, str]] = []  # (time, masterEpoch, broker) as masters start writing
        # the newest masterEpoch a master wrote in, in the set as it is now (an admin clean that
        # restarts the set starts its epochs over: inv.clean_restarts_set), and the masters of
        # the set before such a clean that are still unfenced (node -> their masterEpoch)
        self.newest_master_epoch: int | None = None
        self.stale_masters: dict[str, int] = {}
        self.set_restarted = False  # an admin clean restarted the set (then ids may be held twice)
        self.granted: dict[int, str] = {}  # since that restart: broker id -> the broker the new set gave it
        self._restart_entries: list[int] = []  # the applied count at which each such restart was seen
        self._applied_high = 0  # the most entries any controller has applied
        self.crash_times: list[tuple[int, str]] = []  # master crashes, for failover times
        self.failovers: list[float] = []
        self.first_master_ms: int | None = None
        # slave_catches_up: since when every node has been up on a clean network (None: a fault
        # now), and (master, masterEpoch, max offset, since when) of the current master's log
        self._healthy_since: int | None = None
        self._master_end: tuple | None = None
        self._broker_progress: dict[str, tuple] = {}  # broker -> ((incarnation, role state, max offset), since)
        # produce_answered: writes sent to the master of a healthy set, not answered yet:
        # msg_id -> (broker, its incarnation, (role, masterEpoch), sent at)
        self._unanswered: dict[str, tuple] = {}

        # step conformance (spec/steps): every controller step judged against the declared
        # profile and the controllers' config, every broker step against spec/broker
        self._controller_setup, self._broker_setups = controller_setup, broker_setups
        self.steps = self.new_steps()
        self.step_sink = None  # step_sink(event): e.g. conformance.traces.TraceWriter.write

        controller, broker = targets["controller"], targets["broker"]

        def factory(node_id, durable, now, draw):
            if node_id in self.controllers:
                return controller.make_node(node_id, self.controllers, draw, durable, now, controller_setup)
            return broker.make_node(node_id, self.brokers, draw, durable, now, broker_setups[node_id])

        self._start_simulator(factory, (self._observe,))

    # ------------------------------------------------------------------ helpers

    def _record(self, found) -> None:
        for v in found:
            self.violate(Violation(v.invariant, f"{v.subject}: {v.detail}", v.subject))

    def current_master(self) -> str | None:
        """The unfenced master of the newest masterEpoch any broker has written in (None if
        that master is down or has stepped down: an old master still unfenced in an older
        epoch is not current, whatever it believes)."""
        newest = self.newest_master_epoch  # (masterEpochs only grow, until a clean restarts the set)
        stale = None
        for b in self.brokers:
            view = self.views[b]
            if view is not None and view.role_state.writable and view.sync_state is not None:
                if newest is None or view.role_state.master_epoch >= newest:
                    if not self._of_old_set(b):
                        return b
                    stale = stale or b
        # a master of the set before an admin clean restarted it, or a broker holding an id the
        # new set gave another: current until the new set has had a master of its own
        return stale if newest is None else None

    def _id_held_twice(self) -> str | None:
        """Once an admin clean restarted the set: an id two brokers hold (running, or on the
        disk of one that is down: one kept the old set's id, the new set gave it to the other),
        or one broker holds while the new set gave it another (whose machine may since have
        been replaced), said as "b1 and b2 both hold id 2" or "b1 holds id 2, which the new
        set gave b2". The controller cannot tell such a holder from the member: it may act as
        that member."""
        if not self.set_restarted:
            return None
        holders: dict[int, str] = {}
        for b in self.brokers:
            view = self._broker_view_or_disk(b)
            if view is not None and view.broker_id is not None:
                if view.broker_id in holders:
                    return f"{holders[view.broker_id]} and {b} both hold id {view.broker_id}"
                holders[view.broker_id] = b
        for broker_id, b in holders.items():
            if self.granted.get(broker_id, b) != b:
                return f"{b} holds id {broker_id}, which the new set gave {self.granted[broker_id]}"
        return None

    def _of_old_set(self, broker: str) -> bool:
        """Whether ``broker`` still acts for the set an admin clean restarted: its unfenced
        master then, or a broker holding an id the new set gave another."""
        return broker in self.stale_masters or bool(self._id_given_to(broker))

    def _broker_view_or_disk(self, broker: str):
        """A broker's view, or while it is down the last it had (what its disk holds)."""
        return self.views[broker] or self.last_views.get(broker)

    def _id_given_to(self, broker: str) -> str | None:
        """Once an admin clean restarted the set: the broker the active controller's set
        registers ``broker``'s id for, when that is another broker (one of the two kept the
        old set's id on its disk, and the new set assigned it again: the registration names
        whichever registered last, which the controller cannot tell from the other). None
        otherwise."""
        if not self.set_restarted:
            return None
        view = self.views[broker]
        active = self.active_controller()
        known = self.views[active].metadata.known(BROKER_NAME) if active is not None else None
        if view is None or view.broker_id is None or known is None or known.replicas is None:
            return None
        registration = known.replicas.brokers.get(view.broker_id)
        return registration.address if registration is not None and registration.address != broker else None

    def active_controller(self) -> str | None:
        for c in self.controllers:
            view = self.views[c]
            if view is not None and view.active:
                return c
        return None

    finding_name = FINDING_7017  # (the default of add_finding)
    finding_names = (FINDING_7017, inv.CLEAN_RESTARTS_SET)

    def not_applicable(self) -> set[str]:
        return set() if self.all_ack else {"no_acknowledged_message_lost"}

    # ------------------------------------------------------------------ monitor

    def _observe(self, sim, node_id: str, incoming, ready) -> None:
        node = sim.nodes[node_id]
        view = None
        if node is not None:  # (the one observation of this activation: views report decisions once)
            view = self.last_views[node_id] = node.observe()
        self.views[node_id] = view
        if self.steps is not None or self.step_sink is not None:
            self._step(sim, node_id, view, incoming, ready)
        if node_id in self.brokers:
            presence = (view is not None, view.broker_id if view is not None else None)
            if self._broker_presence.get(node_id) != presence:
                self._broker_presence[node_id] = presence
                self._wake_active_controllers()  # their next tick judges the stuck master again
        if view is not None:
            if node_id in self.controllers:
                if incoming is not None and isinstance(incoming.payload, BrokerHeartbeat):
                    self.heard[(node_id, incoming.src)] = sim.now
                self._observe_controller(node_id, view)
            else:
                for m in ready.messages if ready is not None else ():
                    if isinstance(m.payload, ProduceResult):  # what the producer hears back
                        self.results[m.payload.msg_id] = m.payload.status
                        self._unanswered.pop(m.payload.msg_id, None)
                        if m.payload.status == PutMessageStatus.PUT_OK.value:
                            self.acknowledged.add(m.payload.msg_id)
                self._observe_broker(node_id, view)
        self._judge_new_master_log()
        self._note_abstract_state(node_id, incoming)
        if self.full_check:  # the oracle: every other node too (time-driven checks keep their own clock)
            for other in self.peers:
                v = self.views[other]
                if other != node_id and v is not None:
                    if other in self.controllers:
                        self._observe_controller(other, v, judge_time=False, decisions=False)
                    else:
                        self._observe_broker(other, v)

    def new_steps(self):
        return ControllerStackSteps(self.controllers, self._controller_setup.profile, self.controller_config,
                                    self._broker_setups)

    def _step(self, sim, node_id: str, view, incoming, ready) -> None:
        """One node step for step conformance (spec/steps/controller.py) and step traces."""
        kind = CRASH if view is None else MESSAGE if incoming is not None else TICK if ready is not None else BOOT
        event = StepEvent(node_id, sim.now, kind, incoming.src if incoming is not None else None,
                          incoming.payload if incoming is not None else None, view,
                          ready.messages if ready is not None else (), ready.persist if ready is not None else None)
        if self.step_sink is not None:
            self.step_sink(event)
        if self.steps is not None:
            for violation in self.steps.check(event):
                self.violate(violation)

    def _note_abstract_state(self, node_id: str, incoming) -> None:
        """Count the abstract state of the broker set a step reached (spec/broker/abstract.py),
        judged by the first active controller's metadata."""
        active = [v for v in (self.views[c] for c in self.controllers) if v is not None and v.active]
        known = active[0].metadata.known(BROKER_NAME) if active else None
        sync = known.sync_state if known is not None else None
        # The brokers' part is worked out again only when a broker's view or the set changed
        # (views are immutable: the same objects, the same part; most steps change neither).
        views = tuple(self.views[b] for b in self.brokers)
        seen = self._set_state_seen
        if seen is None or seen[1] is not sync or any(a is not b for a, b in zip(seen[0], views)):
            seen = self._set_state_seen = (views, sync, broker_set_state(dict(zip(self.brokers, views)), sync))
        self.note_abstract_state(state_of_step(seen[2], node_id, self.event_kind(incoming), len(active),
                                               self.network_condition()))

    def _observe_controller(self, node_id: str, view, judge_time: bool = True, decisions: bool = True) -> None:
        config = self.controller_config
        incarnation = self.sim.incarnation[node_id]
        seen = self._controller_seen.get(node_id)
        before = seen[2] if seen is not None and seen[0] == incarnation else None
        changed = seen is None or seen[0] != incarnation or seen[1] != view.applied
        if changed or self.full_check:
            # an unchanged controller is judged again (full_check) against the histories,
            # which only a change updates: observe_controller forgets recreated sets
            after = view.metadata
            self._note_unknown_sets(seen[1] if before is not None else 0, view, decisions)
            if before is not None:
                self._note_set_restart(before, after, seen[1], view.applied)
                self._record(inv.epochs_never_decrease(self._comparable(before, seen[1], view.applied), after))
            self._record(inv.master_in_sync_state_set(after, self.exempt))
            current = self._current_sets(after, view.applied)
            behind = view.applied < self._applied_high  # replaying its log, or lagging
            self._applied_high = max(self._applied_high, view.applied)
            check_codes, found = self.check_codes.observe(current, behind)
            self._record(found)
            sync_state_sets, found = self.sync_state_sets.observe_controller(current, behind)
            self._record(found)
            master_epochs, found = self.master_epochs.observe_controller(current, behind)
            self._record(found)
            if changed:
                self.check_codes, self.sync_state_sets, self.master_epochs = check_codes, sync_state_sets, master_epochs
                self._controller_seen[node_id] = (incarnation, view.applied, after)
        if decisions:
            for d in view.decisions:
                self._check_decision(d, config)
        if view.active and not self._was_active.get(node_id):
            self._activations[node_id] = self._activations.get(node_id, 0) + 1
        self._was_active[node_id] = view.active
        if view.active and judge_time:
            self._check_stuck(node_id, view)

    def _note_unknown_sets(self, applied_before: int, view, decisions: bool) -> None:
        """Where a set was not known: at this view's applied count, and anywhere in the entries
        it applied since ``applied_before`` if one of its decisions (a clean) left it so."""
        after, applied = view.metadata, view.applied
        for name in set(self._set_unknown) | set(after.sets):
            if after.known(name) is None:
                self._set_unknown.setdefault(name, set()).add((applied - 1, applied))
        for d in view.decisions if decisions else ():
            name = getattr(d.request, "broker_name", None)
            if d.events and name is not None and d.after.known(name) is None:
                self._set_unknown.setdefault(name, set()).add((applied_before, applied))

    def _comparable(self, before, applied_before: int, applied: int):
        """``before`` without the sets that were unknown somewhere strictly between the two
        applied counts: a controller that caught up over several entries at once (a lagging
        follower) may have applied a clean that removed a set and the entries that created it
        again, with epochs from the start (upstream's ApplyBrokerId of an unknown set), and
        the monitor never saw the set gone."""
        gone = [name for name in before.sets for lo, hi in self._set_unknown.get(name, ())
                if max(lo, applied_before) + 1 <= min(hi, applied - 1)]
        for name in gone:
            before = before.with_set(name, None)
        return before

    def _current_sets(self, metadata, applied: int):
        """``metadata`` without the sets a later entry removes (the controller lags behind a
        clean that some controller already applied): the histories hold the set created
        again since, whose epochs and ids start over, and the older set was judged when it
        was current."""
        for name in [n for n in metadata.sets if any(lo >= applied for lo, _ in self._set_unknown.get(n, ()))]:
            metadata = metadata.with_set(name, None)
        return metadata

    def _check_decision(self, d, config) -> None:
        response = d.response
        if self.set_restarted:
            self._note_granted(d)
        self._record(inv.reply_code_allowed(d.api, response.code))
        name = getattr(d.request, "broker_name", None)
        if d.liveness is None or name is None:
            return  # a CONTROLLER_NOT_LEADER answer
        # the row the API decides by on what the node decided on: the situation reached,
        # counted for any implementation (its own row, right or wrong, is step conformance's)
        self.coverage[(d.api, self._rules.handle(d.before, d.request, d.liveness).check)] += 1
        self._record(inv.reply_matches_state(name, response, d.after))
        if d.api == "alter_sync_state_set":
            self._record(inv.alter_is_compare_and_set(d.before, d.request, response, d.after))
        if d.api == "elect_master":
            self._record(inv.elected_master_was_eligible(d.before, d.events, config))
            self._record(inv.elected_master_most_up_to_date(d.before, d.request, response, d.liveness, config))
        self._note_reach(d)

    def _note_granted(self, d) -> None:
        """After a clean restarted the set: which broker each id the new set registers was
        given to (an id's registration may later name another address: a broker that kept
        the id on its disk from the old set registers with it)."""
        before, after = d.before.known(BROKER_NAME), d.after.known(BROKER_NAME)
        if after is None or after.replicas is None:
            return
        held = before.replicas.brokers if before is not None and before.replicas is not None else {}
        for broker_id, registration in after.replicas.brokers.items():
            if broker_id not in held:
                self.granted.setdefault(broker_id, registration.address)

    def _note_reach(self, d) -> None:
        """Count what campaigns must reach besides the spec's outcomes, whichever controller
        decided: elections over a SyncStateSet holding a broker id of 16 or more (Java's
        HashSet orders those apart from the small ones), and each kind of admin clean."""
        if d.response.code != ResponseCode.SUCCESS:
            return
        if d.api == "elect_master":
            known = d.before.known(d.request.broker_name)
            members = known.sync_state.sync_state_set if known is not None else frozenset()
            self.coverage[("election_broker_ids", "past_16" if any(i >= 16 for i in members) else "below_16")] += 1
        elif d.api == "clean_broker_data":
            r = d.request
            known = d.before.known(r.broker_name)
            for e in d.events:  # a CleanBrokerDataEvent: its ids, or none for the whole set
                if known is not None and isinstance(e, CleanBrokerDataEvent):
                    self.sync_state_sets = self.sync_state_sets.note_clean(
                        r.broker_name, known.sync_state.sync_state_set_epoch, e.broker_ids_to_clean or ())
                    self.check_codes = self.check_codes.note_clean(
                        r.broker_name, e.broker_ids_to_clean or known.replicas.brokers.keys())
            listed = bool(r.broker_ids_to_clean)
            if r.clean_living_broker or listed:  # (the ``clean`` step never sends the masterless kind)
                kind = ("forced_with_ids" if listed else "forced") if r.clean_living_broker else "dead_ids"
                self.coverage[("admin_clean", kind)] += 1

    def _note_set_restart(self, before, after, applied_before: int, applied: int) -> None:
        """Whether the entries a controller applied since its last observation include an
        admin clean that restarted the set (``inv.set_restarted``: it left the set unknown,
        or it is known again with its epochs started over). Read from the metadata,
        not from the clean's decision: a controller that loses its leadership between
        proposing a clean and applying it reports no decision, and its successor applies the
        clean all the same (seed 5928 of the default search from 5000). The first controller
        to apply the clean tells; the others, applying the same entry later, do not."""
        if not inv.set_restarted(before, after, BROKER_NAME):
            return
        if any(applied_before < entry <= applied for entry in self._restart_entries):
            return
        self._restart_entries.append(applied)
        # what was written so far (acknowledged, consumed, or in any broker's log: a consumer
        # may still read it from a broker of the old set) may go with the old set, whose master
        # may go on writing in its masterEpoch while the new set's epochs start over
        written = self.acknowledged | self.consumed | {
            e.msg_id for b in self.brokers if (v := self._broker_view_or_disk(b)) is not None for e in v.log}
        for msg_id in written - self.generation_of.keys():
            self.generation_of[msg_id] = len(self._restart_entries) - 1
        self.newest_master_epoch = None
        self.set_restarted = True
        self.granted = {}
        self.stale_masters.update({b: v.role_state.master_epoch for b in self.brokers
                                   if (v := self.views[b]) is not None and v.role_state.writable})
        # the restarted set's first registration replaces its broker ids with new ones: every
        # id it held may be given again (seed 5728)
        self.check_codes = self.check_codes.note_clean(BROKER_NAME, before.known(BROKER_NAME).replicas.brokers.keys())

    def _check_stuck(self, controller: str, view) -> None:
        """no_stuck_dead_master, judged by who really heartbeats to the active controller."""
        now = self.sim.now
        alive = []
        for b in self.brokers:
            broker = self.views[b]
            last = self.heard.get((controller, b))
            if broker is not None and broker.broker_id is not None and last is not None \
                    and now - last <= DEFAULT_HEARTBEAT_TIMEOUT_MS:
                alive.append((BROKER_NAME, broker.broker_id))
        stuck = {v.subject for v in inv.no_stuck_dead_master(view.metadata, alive, self.controller_config)}
        if self.sim.net.drop > 0:
            # A liveness bound, judged as every liveness property is: only while the network
            # loses nothing. Under loss the election's commit has no bound (30% drops in both
            # directions kept a decided election uncommitted for 10 s: seed 350168), so the
            # clock starts over once the network is clean.
            stuck = set()
        # The clock runs for one active period: this incarnation of this node, in this term,
        # since it last became active. A new leader (or the same node restarted, or elected
        # again after a time when it was not active, even in the same term) gets the whole bound.
        period = (controller, self.sim.incarnation[controller], view.term, self._activations.get(controller, 0))
        for name in list(self.stuck_since):
            if name not in stuck or self.stuck_since[name][0] != period:
                del self.stuck_since[name]
        for name in sorted(stuck):
            since = self.stuck_since.setdefault(name, (period, now))[1]
            if now - since > STUCK_BOUND_MS:
                self.violate(Violation("no_stuck_dead_master",
                                       f"{name}: {controller} keeps a dead master for {now - since} ms "
                                       f"while an electable broker heartbeats", name))
                self.stuck_since[name] = (period, now)
        # The verdict also changes with time alone (a heartbeat grows too old, a stuck set
        # reaches the bound): look again then, as a check on every tick would.
        due = [since + STUCK_BOUND_MS + 1 for _, since in self.stuck_since.values()]
        due += [self.heard[(controller, b)] + DEFAULT_HEARTBEAT_TIMEOUT_MS + 1 for b in self.brokers
                if now - self.heard.get((controller, b), -DEFAULT_HEARTBEAT_TIMEOUT_MS - 1) <= DEFAULT_HEARTBEAT_TIMEOUT_MS]
        if due:
            self.sim.wake_at(controller, min(due))

    def _wake_active_controllers(self) -> None:
        for c in self.controllers:
            view = self.views[c]
            if view is not None and view.active:
                self.sim.wake_at(c, self.sim.now)

    def _observe_broker(self, node_id: str, view) -> None:
        incarnation = self.sim.incarnation[node_id]
        restarted = self._broker_seen.get(node_id) != incarnation
        self._broker_seen[node_id] = incarnation
        state = view.role_state
        progress = (incarnation, state, view.max_offset)
        if self._broker_progress.get(node_id, (None,))[0] != progress:
            self._broker_progress[node_id] = (progress, self.sim.now)
        self.applied_epochs, found = self.applied_epochs.observe(node_id, state, restarted)
        self._record(found)
        given_to = self._id_given_to(node_id)
        if given_to:
            # the new set registers its id for another broker (one of the two kept the old
            # set's id): what it does as that id is not the new set's; acting as master beside
            # the new set's, two write
            master = self.current_master()
            if state.writable and master not in (None, node_id):
                self.add_finding(f"{node_id} as id {view.broker_id}",
                                 f"{node_id} acts as master with id {view.broker_id} after an admin clean "
                                 f"restarted the set, which registers that id for {given_to}, beside {master}",
                                 inv.CLEAN_RESTARTS_SET)
            return
        stale = self.stale_masters.get(node_id)
        if stale is not None and (restarted or not state.writable or state.master_epoch != stale):
            del self.stale_masters[node_id]  # fenced, or master again in the set as it is now
            stale = None
        if stale is None:
            self.master_epochs, found = self.master_epochs.observe(BROKER_NAME, state)
            self._record(found)
        else:
            # a master of the set before an admin clean restarted it: its masterEpoch counts in
            # the old set's, not against the masters of the new one; beside one, two masters write
            master = self.current_master()
            if master is not None:
                self.add_finding(f"{node_id} in masterEpoch {stale}",
                                 f"{node_id} is still an unfenced master of masterEpoch {stale} of the set an "
                                 f"admin clean restarted, beside {master}, master of the new set",
                                 inv.CLEAN_RESTARTS_SET)
            return
        if not (state.writable and view.sync_state is not None):
            return
        if self.newest_master_epoch is None or state.master_epoch > self.newest_master_epoch:
            self._master_started(node_id, state.master_epoch)
        s = view.sync_state
        for members in (s.local, s.proposed):
            self._record(inv.proposal_contains_master(node_id, view.broker_id, members))
        self._record(self.sync_state_sets.check_broker(BROKER_NAME, node_id, s.local, s.local_epoch))
        holders: dict[int, dict[str, int]] = {}  # member id -> its holders' log ends
        for b in self.brokers:
            other = self.views[b]
            if other is None:  # down: what it had flushed is what it has
                other = self.last_views.get(b)
                end = other.flushed if other is not None else 0
            else:
                end = other.max_offset
            other_id = other.broker_id if other is not None else None
            if other_id is not None and other_id in s.local and b != node_id and other_id != view.broker_id:
                holders.setdefault(other_id, {})[b] = end
        # two brokers hold one id only after an admin clean restarted the set (one kept the
        # old set's id on its disk): the master's own id is the master, and of two holders of
        # another member's id the member is the one whose log went furthest (seed 5940); a
        # broker holding an id the new set gave another, who no longer holds it (its machine
        # was replaced), is not that member (seed 5813)
        members = {i: max(ends.values()) for i, ends in holders.items()
                   if self.granted.get(i) is None or self.granted[i] in ends}
        self._record(self._twin_confirm_offsets(
            node_id, view.broker_id, inv.confirm_offset_bounded(node_id, view.confirm_offset, view.max_offset, members)))
        if self.current_master() == node_id:
            self._judge_master_log(node_id, view)

    def _twin_confirm_offsets(self, master: str, broker_id: int, found: list) -> list:
        """``found`` (confirm_offset_bounded of ``master``), unless another broker holds the
        master's own id (one kept the old set's id after an admin clean restarted the set):
        the controller cannot tell the two apart, so a SyncStateSet one of them altered
        reaches the other, whose confirmOffset was reckoned over the set it had (seed 5925
        of the default search from 5000: b2 took b3 in sync at its log's end 0, and b1, master
        as id 2 beside it with confirmOffset 20, adopted that set). Then the finding
        ``inv.CLEAN_RESTARTS_SET`` instead."""
        if not found or not self.set_restarted:
            return found
        twin = next((b for b in self.brokers if b != master and self._broker_id_of(b) == broker_id), None)
        if twin is None:
            return found
        for v in found:
            self.add_finding(f"{master} confirmOffset", f"{v.detail}, while {master} and {twin} both hold id "
                                                        f"{broker_id} ({v.invariant})", inv.CLEAN_RESTARTS_SET)
        return []

    def _judge_master_log(self, node_id: str, view) -> None:
        self._master_log_seen = (node_id, view, len(self.acknowledged), len(self.consumed))
        log = view.log
        lost = self._restarted_set_losses(inv.acknowledged_messages_present(self.acknowledged, log))
        if self.all_ack:
            self._record(lost)
        else:
            for v in lost:
                self.add_finding(v.subject, v.detail)
        self._record(self._restarted_set_losses(inv.consumed_messages_present(self.consumed, log)))
        self._record(self._restarted_set_reuses(log))

    def _generation(self, msg_id: str) -> int:
        """How many admin cleans had restarted the set before ``msg_id`` was written."""
        return self.generation_of.get(msg_id, len(self._restart_entries))

    def _when(self, msg_id: str) -> str:
        g = self._generation(msg_id)
        return ("before an admin clean restarted the broker set" if g == 0 else
                f"after {'an admin clean' if g == 1 else f'{g} admin cleans'} restarted it")

    def _restarted_set_reuses(self, log) -> list:
        """``inv.queue_offsets_unique`` of ``log``, but a queue offset held by two messages
        written on either side of an admin clean that restarted the set is the finding
        ``inv.CLEAN_RESTARTS_SET`` (the new set's queue offsets start over, and a broker of
        the old set that follows the new master may keep the old set's messages, whose
        epochs the new set's repeat: seed 5813 of the default search from 5000). Each
        restart starts a generation: two cleans, and a message of the first set and one of
        the second share an offset even once the second clean has put both before it
        (seed 25772 of the search from 25000 with stream c)."""
        if not self.set_restarted:
            return inv.queue_offsets_unique(log)
        kept = []
        for v, (queue, offset, first, later) in zip(inv.queue_offsets_unique(log), inv.queue_offset_reuses(log)):
            if self._generation(first) != self._generation(later):
                self.add_finding(f"{queue}@{offset}", f"{first} (written {self._when(first)}) and {later} "
                                                      f"(written {self._when(later)}) in one log "
                                                      f"(queue_offsets_never_reused)", inv.CLEAN_RESTARTS_SET)
            else:
                kept.append(v)
        return kept

    def _restarted_set_losses(self, missing: list) -> list:
        """``missing`` without the messages an admin clean that restarted the set may have
        lost (written before it: ``inv.clean_restarts_set``; or any, while two brokers hold
        one id), each recorded as the finding ``inv.CLEAN_RESTARTS_SET`` instead."""
        kept = []
        twice = self._id_held_twice()
        for v in missing:
            if v.subject in self.generation_of or twice is not None:
                why = "" if twice is None else f", while {twice}"
                self.add_finding(v.subject, f"{v.detail} after an admin clean left the broker set without its "
                                            f"SyncStateSet{why} ({v.invariant})", inv.CLEAN_RESTARTS_SET)
            else:
                kept.append(v)
        return kept

    def _judge_new_master_log(self) -> None:
        """The master's log against what was acknowledged and consumed, also when another
        broker becomes the current master or the sets grow without the master stepping."""
        master = self.current_master()
        if master is None:
            return
        view = self.views[master]
        if self._master_log_seen != (master, view, len(self.acknowledged), len(self.consumed)):
            self._judge_master_log(master, view)

    def _master_started(self, node_id: str, epoch: int) -> None:
        now = self.sim.now
        self.masters.append((now, epoch, node_id))
        self.newest_master_epoch = epoch
        if self.first_master_ms is None:
            self.first_master_ms = now
        if self.crash_times and len(self.masters) > 1 and self.masters[-2][2] == self.crash_times[-1][1]:
            self.failovers.append(float(now - self.crash_times[-1][0]))
            self.crash_times.clear()

    def run_summary(self) -> RunSummary:
        metrics = [Metric("acknowledged_messages", float(len(self.acknowledged))),
                   Metric("written_messages", float(self.written)),
                   *self.finding_metrics()]
        if self.first_master_ms is not None:
            metrics.append(Metric("time_to_first_leader_ms", float(self.first_master_ms)))
        metrics += [Metric("failover_ms", f) for f in self.failovers]
        changes = sum(1 for a, b in zip(self.masters, self.masters[1:]) if a[2] != b[2])
        return RunSummary(
            elections=len(self.masters),
            leader_changes=changes,
            max_term=max((e for _, e, _ in self.masters), default=0),
            metrics=tuple(metrics),
        )

    # ------------------------------------------------------------------ steps

    def step_crash(self, step: Step) -> None:
        n = self.node_arg(step)
        if n == self.current_master():
            self.crash_times.append((self.sim.now, n))
        super().step_crash(step)

    def step_crash_master(self, step: Step) -> None:
        master = self.current_master()
        if master is not None:
            self.step_crash(Step("crash", (master,), step.line))

    def step_crash_active_controller(self, step: Step) -> None:
        active = self.active_controller()
        if active is not None:
            self.step_crash(Step("crash", (active,), step.line))

    def step_isolate_active_controller(self, step: Step) -> None:
        """Cut the active controller off from every other node, the brokers named on its
        side (nothing if no controller is active)."""
        brokers = [self.node_arg(step, i) for i in range(len(step.args))]
        for n in brokers:
            if n not in self.brokers:
                raise UserError(f"line {step.line}: isolate-active-controller: {n} is not a broker "
                                f"(brokers: {' '.join(self.brokers)})")
        active = self.active_controller()
        if active is not None:
            self.sim.partition([[active] + brokers])

    def step_write(self, step: Step) -> None:
        args = [a for a in step.args if not a.startswith("size=")]
        size = MESSAGE_SIZE
        for a in step.args:
            if a.startswith("size="):
                size = whole_number(a[len("size="):], f"line {step.line}: write size=", 1, MAX_MESSAGE_SIZE)
        positional = Step(step.op, tuple(args), step.line)
        count = self.int_arg(positional, 0, 1, 1, MAX_WRITE_BURST)
        target = self.node_arg(positional, 1) if len(args) > 1 else self.current_master()
        if target is None or self.sim.nodes[target] is None:
            return  # no master to write to: the producer gets no route
        healthy = target == self.current_master() and not self.faults_active()
        for _ in range(count):
            self.written += 1
            if healthy:  # (noted first: the client's message may be answered as it is delivered)
                state = self.views[target].role_state
                self._unanswered[f"m{self.written}"] = (target, self.sim.incarnation[target],
                                                       (state.role, state.master_epoch), self.sim.now)
            self.sim.client(target, Produce(f"m{self.written}", f"q{self.written % 2}", size))

    def step_consume(self, step: Step) -> None:
        target = self.node_arg(step, 0) if step.args else self.current_master()
        view = self.views.get(target) if target is not None else None
        if view is None:
            return
        self.consumed.update(e.msg_id for e in view.visible())
        self._judge_new_master_log()  # now, not at whichever node happens to activate next

    def step_elect(self, step: Step) -> None:
        active = self.active_controller()
        if active is None:
            return  # the operator's command finds no leader to send it to
        if step.args:
            view = self.views[self.node_arg(step)]
            broker_id = view.broker_id if view is not None else None
        else:
            known = self.views[active].metadata.known(BROKER_NAME)
            s = known.sync_state if known is not None else None
            others = sorted(s.sync_state_set - {s.master_broker_id}) if s is not None else []
            broker_id = others[0] if others else None
        if broker_id is None:
            return
        self.admin_calls += 1
        request = ElectMasterRequest.of_admin_trigger(CLUSTER, BROKER_NAME, broker_id)
        self.sim.client(active, ControllerCall(self.admin_calls, request))

    def _broker_id_of(self, broker: str) -> int | None:
        """The id a broker holds: running, or on its disk while it is down."""
        view = self._broker_view_or_disk(broker)
        return view.broker_id if view is not None else None

    def _dispensable_broker(self) -> str | None:
        """A broker whose disk the set never needs: up, not the current master, not the
        master the active controller records (every acknowledged message is on the master,
        flushed, and elections pick only in-sync members, which a fresh id is not yet), nor,
        while the set has no master (its master died and no one was electable), the last
        master: its disk holds what it acknowledged, and it is electable again once back;
        and never the last broker that holds every acknowledged message."""
        active = self.active_controller()
        if active is None:
            return None
        known = self.views[active].metadata.known(BROKER_NAME)
        recorded = known.sync_state.master_broker_id if known is not None else None
        if recorded is None:
            epochs = {epoch: broker_id for (name, epoch), broker_id in self.master_epochs.masters.items()
                      if name == BROKER_NAME}
            recorded = epochs[max(epochs)] if epochs else None
        master = self.current_master()
        up = [b for b in self.brokers if self.views[b] is not None and b != master
              and self._broker_id_of(b) != recorded and self._another_holds_every_acknowledged(b)]
        return up[-1] if up else None

    def _another_holds_every_acknowledged(self, broker: str) -> bool:
        """Whether one broker other than ``broker`` (running, or on its disk while down: what
        was acknowledged was flushed) holds every acknowledged message ``broker`` holds. The
        recorded master need not: an admin election can land on a broker just as its
        machine is replaced (seed 490138), and the last copy must not go with the next
        replacement. (Messages no broker holds any more, which ``acks default`` may lose by
        design, do not stop a replacement.)"""
        mine = self._broker_view_or_disk(broker)
        needed = self.acknowledged & {e.msg_id for e in mine.log} if mine is not None else set()
        for b in self.brokers:
            view = self._broker_view_or_disk(b)
            if b != broker and view is not None and needed <= {e.msg_id for e in view.log}:
                return True
        return not needed

    def step_replace(self, step: Step) -> None:
        broker = self.node_arg(step) if step.args else self._dispensable_broker()
        if broker is None:
            return
        if broker not in self.brokers:
            raise UserError(f"line {step.line}: replace: {broker!r} is not a broker ({' '.join(self.brokers)})")
        if self.sim.nodes[broker] is not None:
            self.harvest_coverage(broker)
            self.sim.crash(broker)
        self.sim.disk[broker] = None  # a new machine: nothing survives
        self.last_views.pop(broker, None)
        self.sim.restart(broker)

    def step_clean(self, step: Step) -> None:
        living = bool(step.args) and step.args[0] == "living"
        if step.args and not living or len(step.args) > 1:
            raise UserError(f"line {step.line}: clean: want 'clean' or 'clean living', not {step.render()!r}")
        active = self.active_controller()
        if active is None:
            return
        known = self.views[active].metadata.known(BROKER_NAME)
        if known is None:
            return
        held = {self._broker_id_of(b) for b in self.brokers}  # by a running broker or on a crashed one's disk
        dead = frozenset(i for i in known.replicas.brokers if i not in held)
        if not dead and not living:
            return
        self.admin_calls += 1
        request = CleanBrokerDataRequest(CLUSTER, BROKER_NAME, dead or None, clean_living_broker=living)
        self.sim.client(active, ControllerCall(self.admin_calls, request))

    def do(self, step: Step) -> None:
        super().do(step)
        if self.faults_active():
            self._healthy_since = None
            self._unanswered.clear()  # a fault may take an answer (or the write) with it
        elif self._healthy_since is None:
            self._healthy_since = self.sim.now

    def step_run(self, step: Step) -> None:
        super().step_run(step)
        self._judge_catch_up()
        self._judge_answers()

    def _judge_answers(self) -> None:
        """produce_answered, after each wait (``run``), for the writes still waiting; a write
        whose broker restarted, or changed role or masterEpoch, is no longer asked about."""
        for msg_id, (broker, incarnation, role, sent) in list(self._unanswered.items()):
            view = self.views[broker]
            if view is None or self.sim.incarnation[broker] != incarnation \
                    or (view.role_state.role, view.role_state.master_epoch) != role:
                del self._unanswered[msg_id]
                continue
            found = inv.produce_answered(msg_id, broker, self.sim.now - sent, ANSWER_BOUND_MS)
            if found:
                self._record(found)
                del self._unanswered[msg_id]

    def _judge_catch_up(self) -> None:
        """slave_catches_up, after each wait (``run``): once every node has been up on a
        clean network, the current master's log unchanged, and a broker's role and log end
        unchanged, for ``CATCH_UP_MS``, that broker is the master's slave and holds its log. A
        broker still moving is not judged: the reference's slaves catch up at the pace of
        their HA connection (seeds 391 and 543: 10-12 s behind a quiet master, gaining all
        the while). Not after an admin clean restarted the set (brokers then hold ids the new
        set gave others: ``_id_held_twice``)."""
        master = self.current_master()
        if master is None or self._healthy_since is None or self.faults_active() or self.set_restarted:
            return
        m = self.views[master]
        end = (master, m.role_state.master_epoch, m.max_offset)
        if self._master_end is None or self._master_end[:3] != end:
            self._master_end = (*end, self.sim.now)
        quiet = self.sim.now - max(self._healthy_since, self._master_end[3])
        if quiet < CATCH_UP_MS:
            return
        for b in self.brokers:
            if b != master and self.views[b] is not None:
                stalled = min(quiet, self.sim.now - self._broker_progress.get(b, (None, self.sim.now))[1])
                if stalled >= CATCH_UP_MS:
                    self._record(inv.slave_catches_up(self.views[b], m, stalled, self._learns_role_ms))

    def step_await_master(self, step: Step) -> None:
        """Run until a broker is an unfenced master of the controller's masterEpoch. If it
        waited out its limit with every node up on a clean network for ``MASTERLESS_BOUND_MS``
        or longer, the set's liveness is judged (``no_masterless_healthy_set``): otherwise a
        broker or controller that never acts would pass every other property."""
        limit = self.sim.now + self.ms_arg(step, 0, 60_000)
        healthy_since = None
        while self.sim.now < limit:
            master = self.current_master()
            if master is not None and self._recorded_master_epoch() == self.views[master].role_state.master_epoch:
                return
            if self.faults_active():
                healthy_since = None
            elif healthy_since is None:
                healthy_since = self.sim.now
            self.sim.run_for(100)
        if healthy_since is not None and not self.faults_active() and self.sim.now - healthy_since >= MASTERLESS_BOUND_MS:
            active = self.active_controller()
            metadata = self.views[active].metadata if active is not None else None
            held = [self.views[b].broker_id for b in self.brokers]
            epochs = None  # each live broker's own masterEpoch, by the id it holds: only once an
            if self.set_restarted:  # admin clean restarted the set, whose epochs start over
                epochs = {v.broker_id: v.role_state.master_epoch
                          for v in (self.views[b] for b in self.brokers) if v is not None and v.broker_id is not None}
            waited = self.sim.now - healthy_since
            self._record(attrs.evolve(v, detail=f"{v.detail}, {waited} ms after every node was up on a clean network")
                         for v in inv.no_masterless_healthy_set(BROKER_NAME, metadata, held, self.controller_config,
                                                                epochs))

    def _recorded_master_epoch(self) -> int | None:
        c = self.active_controller()
        if c is None:
            return None
        known = self.views[c].metadata.known(BROKER_NAME)
        return None if known is None else known.sync_state.master_epoch

    # ------------------------------------------------------------------ expectations

    def expect_master(self, step: Step, where: str) -> None:
        want = self.node_arg(step, 1)
        if self.current_master() != want:
            raise ExpectationFailed(f"{where}: but the current master is {self.current_master()}")

    def expect_acknowledged(self, step: Step, where: str) -> None:
        if len(self.acknowledged) != self.int_arg(step, 1):
            raise ExpectationFailed(f"{where}: but {len(self.acknowledged)} were acknowledged")


# ---------------------------------------------------------------------- campaigns


def controller_outcomes() -> dict[str, tuple[str, ...]]:
    """Every outcome the stack's decision procedures can report (for coverage)."""
    return {
        "change_broker_role": tuple(o.value for o in RoleOutcome),
        "replica_info_poll": tuple(o.value for o in PollOutcome),
        "maybe_expand": tuple(o.value for o in ExpandOutcome),
        "maybe_shrink": ("SHRINK", "KEEP"),
        "on_alter_sync_state_set_reply": tuple(o.value for o in ApplyOutcome),
        "compute_master_confirm_offset": tuple(o.value for o in ConfirmOutcome),
        "replication_status": tuple(o.value for o in ReplicationOutcome if o is not ReplicationOutcome.WAITING),
        "check_write_admission": ("broker_not_writable", "in_sync_replicas_not_enough", "admitted"),
        # judged from the controllers' decisions (ControllerCluster._note_reach)
        "election_broker_ids": ("below_16", "past_16"),
        "admin_clean": ("dead_ids", "forced", "forced_with_ids"),
        # each API's rows, read from every controller's decisions (_check_decision); the
        # scenario's default profile's (rocketmq-5.0 registers by other rows)
        **api_rows(get_profile("rocketmq-5.1")),
    }


def _priorities(value: str | None, brokers) -> dict[str, int]:
    """``option priorities b1=0,b2=3``: brokerElectionPriority per broker (lower wins among equals)."""
    out: dict[str, int] = {}
    for item in filter(None, (value or "").split(",")):
        node, _, number = item.partition("=")
        if node not in brokers or not number.isdigit() or int(number) > MAX_ELECTION_PRIORITY:
            raise UserError(f"option priorities: want NODE=N,... with brokers {' '.join(brokers)} and N from 0 to "
                            f"{MAX_ELECTION_PRIORITY}, not {item!r}")
        out[node] = int(number)
    return out


# the steps every generated script ends with (heal, restart all, a master, a write read back)
_CONTROLLER_SUFFIX = 7
# what some end with after those (_with_replacements): a forced clean, which no step may follow
_FORCED_CLEAN_TAIL = (("clean", ("living",)), ("run", ("2000",)))


def _closing(steps) -> int:
    """How many steps at the end of a generated script close it (the search keeps them)."""
    tail = len(_FORCED_CLEAN_TAIL)
    ends_forced = tuple((s.op, s.args) for s in steps[-tail:]) == _FORCED_CLEAN_TAIL
    return _CONTROLLER_SUFFIX + (tail if ends_forced else 0)


def _with_replacements(steps: list[Step], rng: random.Random) -> list[Step]:
    """On about a quarter of the seeds, a broker whose pod has no persistent volume
    crash-loops: each boot is a new machine, hence a new broker id (up to 15 of them, so
    that ids of 16 and more, which Java's HashSet orders apart from the small ones, take
    part in elections: after 15 the master fails), maybe followed by an administrator
    cleaning the dead ids once the controllers see them dead (a clean before that, which the
    controller refuses, was tried: docs/controller-stack.md); now and then the run ends
    with a forced clean
    (``cleanLivingBroker``) of the whole set, the ids listed. Drawn from a stream of its
    own, so that the rest of a seed's plan stays what it was."""
    if rng.random() >= 0.25:
        return steps
    churn: list[Step] = []
    times = rng.choice((2, 5, 15))
    for _ in range(times):
        churn += [Step("replace"), Step("run", (str(rng.choice((200, 500, 1500))),))]
    if times == 15:  # the last new id catches up and joins the set; then the master fails
        churn += [Step("run", ("3000",)), Step("crash-master"), Step("run", ("20000",)), Step("restart-all")]
    if rng.random() < 0.5:
        churn += [Step("run", (str(DEFAULT_HEARTBEAT_TIMEOUT_MS + 1000),)), Step("clean")]
    at = rng.randint(3, len(steps) - 7)  # after the first master, before the closing steps
    steps = steps[:at] + churn + steps[at:]
    if rng.random() < 0.3:
        steps += [Step(op, args) for op, args in _FORCED_CLEAN_TAIL]
    return steps


def _with_controller_bounce(steps: list[Step], rng: random.Random, brokers: tuple[str, ...]) -> list[Step]:
    """On about a third of the seeds with controller crashes, the story "controller bounce"
    (docs/controller-stack.md, "The scenario"): the active controller, cut off from its peers
    but not from the brokers, takes an operator's election it cannot commit, crashes, and
    restarts within the election timeout. DLedger lets it win its persisted term again
    (a restarted node's first campaign keeps the term) with that entry still uncommitted;
    under a lossy network its peers' acks come slowly while operators ask for elections,
    so a controller that serves before its own empty proposal is applied decides on
    metadata without the entry (upstream's RoleChangeHandler waits for it). Drawn from a
    stream of its own, so that the rest of a seed's plan stays what it was; not on a seed
    whose plan has a crash-looping broker (``_with_replacements``: ids past 16 need every
    replacement to register)."""
    if rng.random() >= 0.3 or any(step.op == "replace" for step in steps):
        return steps  # (a crash-looping broker's replacements need an active controller throughout)
    bounce = [Step("isolate-active-controller", brokers), Step("elect"),
              Step("run", (str(rng.choice((100, 300, 1000))),)), Step("crash-active-controller"), Step("heal"),
              Step("run", (str(rng.choice((50, 200))),)), Step("restart-all"),
              Step("net", ("1..60", "drop=0.3", "dup=0.05"))]
    # it wins its term again only once its peers time out (6 s after it was cut off) and
    # before they move to the next term; operators' elections keep coming until then
    gap = rng.choice((50, 100))
    for _ in range(7000 // gap):
        bounce += [Step("run", (str(gap),)), Step("elect")]
    bounce += [Step("run", ("3000",)), Step("net", ("default",))]
    at = rng.randint(3, len(steps) - 7)  # after the first master, before the closing steps
    return steps[:at] + bounce + steps[at:]


def generate_controller_script(config: RunConfig, fault_mixes: dict) -> Script:
    """3 controllers and 2 or 3 brokers; writes, consumes, and faults of the mix on both
    tiers (broker crashes with flush loss, controller leader crashes, partitions between
    brokers, between brokers and controllers, inside the controller group)."""
    faults = faults_of(config.fault_mix, fault_mixes)
    if config.group_size not in (2, 3):
        raise UserError(f"the controller scenario has 2 or 3 brokers, not {config.group_size}")
    rng = random.Random(f"{config.seed}:plan")
    brokers = tuple(f"b{i}" for i in range(1, config.group_size + 1))
    nodes = CONTROLLERS + brokers
    options = [("acks", "all" if rng.random() < 0.5 else "default")]
    if config.group_size == 3 and rng.random() < 0.25:
        options.append(("learner", "b3"))
    # configured priorities (brokerElectionPriority), drawn apart so that the plan stays the seed's
    configured = random.Random(f"{config.seed}:priorities")
    if configured.random() < 0.3:
        options.append(("priorities", ",".join(f"{b}={configured.choice((0, 1, 2))}" for b in brokers)))
    steps: list[Step] = [Step("await-master", ("30000",)), Step("write", ("3",)), Step("run", ("2000",))]
    down: set[str] = set()
    elapsed = 0

    def after_restart(restarted, steady: bool = False) -> None:
        # Clients still routed to a broker that has just restarted: it must serve nothing
        # it may later lose (#6508, #6609).
        restarted = [n for n in restarted if n in brokers]
        for n in restarted:
            if rng.random() < 0.7:
                steps.append(Step("consume", (n,)))
        if restarted and rng.random() < 0.3:
            steps.append(Step("write", (str(rng.randint(1, 3)), rng.choice(restarted))))
        if restarted and (steady or rng.random() < 0.5):
            # A steady producer while the restarted brokers reconnect: writes land between
            # a slave's handshake and its first ack (#6728).
            for _ in range(20):
                steps.extend((Step("write"), Step("run", ("50",))))

    while elapsed < config.duration_ms:
        extra = ("lagging-failover", "double-failure") if "crash-leader" in faults else ()
        if "crash" in faults:
            extra += ("bounce",)
        if "crash" in faults and "partition" in faults:
            extra += ("stranded-master",)
        choice = rng.choice(("write", "write", "write", "consume", "run", "switch") + faults + extra)
        up = [n for n in nodes if n not in down]
        if choice == "write":
            if rng.random() < 0.2:
                steps.append(Step("write", (str(rng.randint(1, 3)), rng.choice(brokers))))  # a stale route
            else:
                steps.append(Step("write", (str(rng.randint(1, 4)),)))
        elif choice == "consume":
            steps.append(Step("consume", (rng.choice(brokers),) if rng.random() < 0.5 else ()))
        elif choice == "switch":
            # An operator moves the master (mqadmin electMaster), maybe several times in a row,
            # maybe while one broker's links from the controllers are congested, so that role
            # notifications reach it out of order.
            slowed = rng.choice(brokers) if "lossy" in faults and rng.random() < 0.6 else None
            if slowed is not None:
                steps += [Step("slow", (c, slowed, "200..3000")) for c in CONTROLLERS]
            for _ in range(rng.randint(1, 4)):
                gap = rng.choice((300, 500, 800))
                steps += [Step("elect"), Step("run", (str(gap),))]
                elapsed += gap
            if slowed is not None:
                steps.append(Step("run", ("3000",)))
                steps += [Step("slow", (c, slowed, "off")) for c in CONTROLLERS]
                elapsed += 3000
        elif choice == "lagging-failover":
            # The master fails while two brokers cannot reach each other, so one of them
            # lags: by a backlog of GiBs, most of the time with three brokers (the two
            # candidates' offsets then lie more than 2^31 apart, #10578).
            a, b = rng.sample(brokers, 2)
            steps += [Step("block", (a, b)), Step("block", (b, a))]
            huge = len(brokers) == 3 and rng.random() < 0.7
            steps.append(Step("write", ("1", "size=3000000000") if huge else (str(rng.randint(1, 4)),)))
            lag, failover = rng.choice((1000, 3000)), rng.choice((15000, 20000))
            steps += [Step("run", (str(lag),)), Step("crash-master"), Step("run", (str(failover),)), Step("heal")]
            elapsed += lag + failover
            steps.append(Step("restart-all"))
            after_restart(brokers)
            down.clear()
        elif choice == "double-failure":
            # The master and the active controller fail a few seconds apart: in this order
            # the new controller leader may never see the master expire (#6382: only the
            # periodic re-elect scan then replaces it); in the other, a new leader judges
            # liveness by heartbeats alone (#5712).
            order = ("crash-master", "crash-active-controller")
            first, second = order if rng.random() < 0.6 else order[::-1]
            gap, wait = rng.choice((3000, 6000, 9000)), rng.choice((30000, 40000))
            steps += [Step(first), Step("run", (str(gap),)), Step(second), Step("run", (str(wait),))]
            elapsed += gap + wait
            steps.append(Step("restart-all"))
            after_restart(brokers)
            down.clear()
        elif choice == "stranded-master":
            # All brokers but one crash and the survivor loses the controllers: if it is the
            # master, the controller's expiry election finds nobody and records no master,
            # while the survivor, still master, proposes to expand its set when the others
            # come back: its alterSyncStateSet meets a set without a master (#7293).
            survivor = rng.choice(brokers)
            others = [n for n in brokers if n != survivor]
            steps += [Step("crash", (n,)) for n in others]
            isolated = rng.choice((15000, 20000))
            steps += [Step("run", ("2000",)), Step("partition", CONTROLLERS), Step("run", (str(isolated),))]
            steps += [Step("restart", (n,)) for n in others]
            steps += [Step("run", ("5000",)), Step("heal")]
            elapsed += 7000 + isolated
            down -= set(others)
        elif choice == "bounce":
            # A broker restarts within the heartbeat timeout (a deploy, a quick crash): it
            # rejoins the set it never left, under a steady producer.
            n = rng.choice([b for b in brokers if b not in down] or list(brokers))
            pause = rng.choice((1000, 3000, 8000))
            steps += [Step("crash", (n,)), Step("run", (str(pause),)), Step("restart", (n,))]
            elapsed += pause
            down.discard(n)
            after_restart([n], steady=True)
        elif choice == "crash-leader" and rng.random() < 0.5:
            steps.append(Step(rng.choice(("crash-master", "crash-active-controller"))))
            steps.append(Step("run", (str(rng.choice((500, 3000, 12000))),)))
            if rng.random() < 0.3:
                steps.append(Step("restart-all"))
                after_restart(brokers)
                down.clear()
            else:
                steps.append(Step(rng.choice(("crash-master", "write"))))
        elif choice in ("crash", "crash-leader"):
            if down and rng.random() < 0.5:
                n = rng.choice(sorted(down))
                down.discard(n)
                steps.append(Step("restart", (n,)))
                after_restart([n])
            else:
                pool = [n for n in up if (n in brokers) == (choice == "crash" or rng.random() < 0.5)]
                live_controllers = [c for c in CONTROLLERS if c not in down]
                pool = [n for n in pool if n in brokers or len(live_controllers) > 2]
                if pool:
                    n = rng.choice(pool)
                    down.add(n)
                    steps.append(Step("crash", (n,)))
        elif choice in ("partition", "isolate-leader"):
            side = rng.sample(nodes, rng.randint(1, 3))
            steps.append(Step("partition", tuple(side)))
            if rng.random() < 0.3:
                steps.append(Step("heal"))
        elif choice == "block":
            a, b = rng.sample(nodes, 2)
            steps.append(Step("block", (a, b)))
        elif choice == "lossy":
            steps.append(Step("net", ("1..60", f"drop={rng.choice(('0.02', '0.1'))}", "dup=0.05")))
        ms = rng.choice((200, 500, 1500, 4000, 12000, 20000))
        steps.append(Step("run", (str(ms),)))
        elapsed += ms
    steps += [Step("heal"), Step("net", ("default",)), Step("restart-all"), Step("await-master", ("60000",)),
              Step("write", ("2",)), Step("run", ("5000",)), Step("consume",)]
    if "crash" in faults:
        steps = _with_replacements(steps, random.Random(f"{config.seed}:replacements"))
    if "crash-leader" in faults:
        steps = _with_controller_bounce(steps, random.Random(f"{config.seed}:controller-bounce"), brokers)
    return Script("controller", nodes, config.seed, config.profile, config.adapter, start_spread_ms=500,
                  steps=tuple(steps), options=tuple(options))


def build_controller(script: Script, adapter: str, record_trace: bool = True):
    return ControllerCluster(script, resolve_targets("controller", adapter, script.profile), record_trace)


def _elections(stretch: list[Step], brokers, rng: random.Random) -> list[Step]:
    """``stretch`` with an operator's election of a broker drawn at random after each of its waits."""
    return after_waits(stretch, lambda: [Step("elect", (rng.choice(brokers),))])


def mutate_controller_script(script: Script, config: RunConfig, rng: random.Random, fault_mixes: dict) -> Script:
    """A neighbour of ``script`` for the search (conformance/search.py): one to three edits
    of its fault phase (splice in a window of the fault phase of another seed's script of
    the same settings, put a window under a partition, a lossy network or a node's crash
    and restart, cut the active controller off for a window, put a stretch of the run
    itself, half the time its whole fault phase, under a lossy network or a partition,
    which makes it no longer, have producers with stale routes write to every broker
    after each wait of such a stretch, or have an operator elect a broker drawn at random
    after each wait of one), or the same
    faults under another generated configuration; the opening (a master, a first write)
    and the healing suffix stay.

    Edits that found few new abstract states per run (appending a window at the end,
    repeating one, dropping a step, stretching a wait) are left out and network windows
    drawn twice as often (measured: docs/performance.md, "Search")."""
    steps = list(script.steps)
    closing = _closing(steps)
    head, phase, suffix = steps[:3], steps[3:-closing], steps[-closing:]
    nodes = list(script.nodes)
    brokers = [b for b in nodes if b not in CONTROLLERS]
    options = script.options
    for _ in range(rng.randint(1, 3)):
        op = rng.choice(("splice", "splice", "cut", "cut", "lossy", "lossy", "bounce", "options", "overlay",
                         "overlay", "isolate", "isolate", "probe", "probe", "elect"))
        if op == "elect":
            # an operator moving the master to a broker drawn at random (maybe the master
            # itself, a broker outside the set or down) after every wait of a stretch: the
            # controller's answer and the role changes it notifies meet each situation
            start, stop = stretch_of(rng, len(phase))
            phase[start:stop] = _elections(phase[start:stop], brokers, rng)
        elif op == "probe":
            # producers with stale routes: after every wait of a stretch, a write to each
            # broker whatever its role, so that each state a broker passes through meets a
            # produce request (a slave or a broker without a role refuses it, an old master
            # cut off from the others may take it)
            start, stop = stretch_of(rng, len(phase))
            phase[start:stop] = probed(phase[start:stop], brokers)
        elif op == "isolate":
            # the active controller cut off, maybe with brokers on its side: the brokers
            # that cannot reach it meet a controller group without an active member, and
            # for a while two controllers may believe they are active
            side = tuple(b for b in brokers if rng.random() < 0.3)
            at = rng.randint(0, len(phase))
            ms = str(rng.choice((1500, 4000, 12000)))
            phase[at:at] = [Step("isolate-active-controller", side), Step("run", (ms,)), Step("heal")]
        elif op == "overlay":
            # what the run went through (half the time its whole fault phase, else up to a
            # dozen steps), again under a lossy network or a partition: the same situations
            # under another network
            overlay_stretch(rng, phase, lambda: Step("partition", tuple(rng.sample(nodes, rng.randint(1, 3)))))
        elif op == "splice":
            donor = generate_controller_script(attrs.evolve(config, seed=rng.randrange(1 << 31), origin=()),
                                               fault_mixes).steps
            donor = donor[3:-_closing(donor)]
            if donor:
                start = rng.randrange(len(donor))
                at = rng.randint(0, len(phase))
                phase[at:at] = donor[start:start + rng.randint(2, 8)]
        elif op == "options":
            # the same faults under another seed's configuration (acks, a learner,
            # priorities: what the generator draws)
            options = generate_controller_script(attrs.evolve(config, seed=rng.randrange(1 << 31), origin=()),
                                                 fault_mixes).options
        elif op in ("cut", "lossy", "bounce"):
            # what the run went through, again under another network or with a node
            # down for a while: the abstract states of the same situations with
            # another network condition, or a broker or controller missing
            at = rng.randint(0, len(phase))
            ms = str(rng.choice((500, 1500, 4000, 12000)))
            if op == "cut":
                fault = (Step("partition", tuple(rng.sample(nodes, rng.randint(1, 3)))) if rng.random() < 0.6
                         else Step("block", tuple(rng.sample(nodes, 2))))
                window = [fault, Step("run", (ms,)), Step("heal")]
            elif op == "lossy":
                window = [lossy_net(rng), Step("run", (ms,)), Step("net", ("default",))]
            else:
                n = rng.choice(nodes)
                window = [Step("crash", (n,)), Step("run", (ms,)), Step("restart", (n,))]
            phase[at:at] = window
    return attrs.evolve(script, options=options).with_steps(head + phase + suffix)
