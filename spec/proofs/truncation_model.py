"""A bounded z3 model of RIP-44 histories, checking the epoch truncation algorithm.

The model (every choice below is a free z3 variable, so a proof covers all of them):

* two replicas, A and B; ``K`` epochs assigned by the controller, unique and
  increasing; each epoch has one master, chosen freely;
* before each epoch either replica may crash and lose an unflushed tail of its log
  (never below the acknowledged point: acknowledged data was flushed everywhere);
* the master changes role (``change_to_master``: where a crash left a dirty tail, cut
  the epoch file at the log's end; append ``(epoch, max offset)`` under the append rule)
  and writes up to ``W`` messages (one offset each) from its own max offset;
* the other replica may then handshake (``find_consistent_point`` on both epoch
  files with the log ends as last ends; an empty or data-less file copies from the
  start) and, if a point exists, truncate there and copy any prefix of the master's
  log, recording an epoch entry whenever a batch header's epoch changes; what both
  replicas then hold is acknowledged (allAckInSyncStateSet with a set of two).

A log is its sequence of message labels: the epoch whose master wrote the message.
One master per epoch writes each offset at most once, so equal labels mean equal
messages. The algorithm's definitions come from ``spec/truncation/algebra.py`` —
the same functions the concrete spec runs — evaluated on z3 terms.

Properties, checked at every handshake of every epoch:

* ``prefix-agreement``: after truncating to t, the slave's log equals the master's below t;
* ``maximality``: where a point exists and both logs go on, they differ right at t;
* ``committed-survival``: t never falls below acknowledged data the slave holds;
* ``existence``: when the slave's log is a prefix of the master's, a point exists
  and no truncation is needed;
* ``well-formed``: after every step, each epoch file's epochs and starts strictly
  increase and every offset below the log's end maps to an entry;
* ``epoch-start-agreement``: an epoch recorded on both replicas has the same start on both.

(An entry's range need not hold messages of its own epoch: a master re-elected
without having written anything cannot append ``(epoch, max offset)`` at an unchanged
start, so its new messages go under its previous entry. That is upstream's behaviour
and harmless — the same broker wrote both — and prefix agreement, which compares the
messages themselves, covers it.)
"""
from __future__ import annotations

import time
from typing import Any

import attrs
import z3

from spec.truncation.algebra import (
    NO_POINT,
    REFERENCE,
    EpochArrays,
    Variant,
    append_allowed,
    effective_count,
    find_consistent_point_arrays,
    suffix_truncated_count,
)
from spec.truncation.variants import VARIANTS

NO_BOUND = 10**6
REPLICAS = ("A", "B")
PROPERTIES = ("prefix-agreement", "maximality", "committed-survival", "existence", "well-formed",
              "epoch-start-agreement")


class _Z3Ops:
    ite = staticmethod(z3.If)

    @staticmethod
    def and_(*xs):
        return z3.And(*xs)

    @staticmethod
    def or_(*xs):
        return z3.Or(*xs) if xs else z3.BoolVal(False)

    not_ = staticmethod(z3.Not)

    @staticmethod
    def min(a, b):
        return z3.If(a <= b, a, b)

    @staticmethod
    def max(a, b):
        return z3.If(a >= b, a, b)


Z3 = _Z3Ops()

@attrs.define
class _Replica:
    name: str
    labels: list  # z3 Int per offset: epoch of the message there (0 beyond the end)
    max: Any
    epochs: list
    starts: list
    count: Any
    cap: Any  # the last entry's own end (NO_BOUND: open-ended; finite after the buggy truncation)

    def arrays(self, last_end) -> EpochArrays:
        return EpochArrays(self.epochs, self.starts, self.count, last_end)


@attrs.frozen
class Check:
    property: str
    epoch: int
    violated: Any  # z3 Bool: this property fails at this point


@attrs.define
class History:
    K: int
    W: int
    solver_constraints: list
    checks: list
    snapshots: list  # per epoch: (label, {replica: state}) for rendering
    choices: dict  # name -> z3 var, for rendering


def _fresh(prefix: str, n: int) -> list:
    return [z3.Int(f"{prefix}_{i}") for i in range(n)]


def build_history(K: int, W: int = 2, variant: Variant = REFERENCE) -> History:
    """Unroll K epochs of the model as z3 constraints and property checks."""
    ops = Z3
    maxo = K * W
    cons: list = []
    checks: list[Check] = []
    snapshots: list = []
    choices: dict[str, Any] = {}
    reps = [
        _Replica(n, [z3.IntVal(0)] * maxo, z3.IntVal(0), [z3.IntVal(0)] * K, [z3.IntVal(0)] * K, z3.IntVal(0),
                 z3.IntVal(NO_BOUND))
        for n in REPLICAS
    ]
    acked: Any = z3.IntVal(0)

    def append_entry(r: _Replica, epoch, start, enabled) -> None:
        last_epoch = _at(r.epochs, r.count - 1, K)
        last_start = _at(r.starts, r.count - 1, K)
        ok = ops.and_(enabled, append_allowed(last_epoch, last_start, r.count, epoch, start, ops, variant), r.count < K)
        r.epochs = [z3.If(ops.and_(ok, r.count == i), epoch, r.epochs[i]) for i in range(K)]
        r.starts = [z3.If(ops.and_(ok, r.count == i), start, r.starts[i]) for i in range(K)]
        r.count = z3.If(ok, r.count + 1, r.count)
        r.cap = z3.If(ok, NO_BOUND, r.cap)

    def truncate_suffix(r: _Replica, offset, enabled) -> None:
        new_count = suffix_truncated_count(r.arrays(r.max), offset, ops)
        dropped = ops.and_(enabled, new_count < r.count)
        if variant.finite_end_after_suffix_truncation:
            cap = z3.If(new_count > 0, _at(r.starts, new_count, K), NO_BOUND)
        else:
            cap = NO_BOUND
        r.cap = z3.If(dropped, cap, r.cap)
        r.count = z3.If(enabled, new_count, r.count)

    def well_formed(r: _Replica):
        ok = [r.count >= 0, r.count <= K, r.max >= 0, r.max <= maxo]
        for i in range(K - 1):
            ok.append(z3.Implies(i + 1 < r.count, z3.And(r.epochs[i] < r.epochs[i + 1], r.starts[i] < r.starts[i + 1])))
        for o in range(maxo):
            covered = z3.Or(*[z3.And(i < r.count, r.starts[i] <= o,
                                     o < z3.If(i + 1 < r.count, r.starts[min(i + 1, K - 1)], r.cap))
                              for i in range(K)])
            ok.append(z3.Implies(o < r.max, covered))
        return z3.And(*ok)

    for e in range(1, K + 1):
        master_is_b = z3.Bool(f"e{e}_master_is_B")
        writes = z3.Int(f"e{e}_writes")
        cons += [writes >= 0, writes <= W]
        choices[f"e{e}_master_is_B"] = master_is_b
        choices[f"e{e}_writes"] = writes
        # crashes with flush loss (never below acknowledged data)
        dirty = {}
        for r in reps:
            lost_to = z3.Int(f"e{e}_{r.name}_max_after_crash")
            cons += [lost_to >= acked, lost_to <= r.max]
            choices[f"e{e}_{r.name}_max_after_crash"] = lost_to
            dirty[r.name] = lost_to < r.max  # a tail was lost: the log had a dirty tail to drop
            choices[f"e{e}_{r.name}_max_before_crash"] = r.max
            r.max = lost_to
        # the master of this epoch: change_to_master, then write
        for idx, r in enumerate(reps):
            is_master = master_is_b if idx == 1 else z3.Not(master_is_b)
            # change_to_master: cut the epoch file where a dirty tail was dropped, then append
            truncate_suffix(r, r.max, z3.And(is_master, dirty[r.name]))
            append_entry(r, z3.IntVal(e), r.max, is_master)
            new_max = r.max + writes
            r.labels = [z3.If(z3.And(is_master, r.max <= o, o < new_max), e, r.labels[o]) for o in range(maxo)]
            cons.append(z3.Implies(is_master, new_max <= maxo))
            r.max = z3.If(is_master, new_max, r.max)
        a, b = reps
        master = _Select(master_is_b, b, a)
        slave = _Select(master_is_b, a, b)
        m_labels = [z3.If(master_is_b, b.labels[o], a.labels[o]) for o in range(maxo)]
        s_labels = [z3.If(master_is_b, a.labels[o], b.labels[o]) for o in range(maxo)]
        m_max, s_max = master.get("max"), slave.get("max")
        m_arr = EpochArrays(master.list("epochs", K), master.list("starts", K), master.get("count"), m_max)
        s_arr = EpochArrays(slave.list("epochs", K), slave.list("starts", K), slave.get("count"), s_max)
        at_handshake = [(r.name, r.labels[:], r.max, r.epochs[:], r.starts[:], r.count) for r in reps]
        sync = z3.Bool(f"e{e}_sync")
        choices[f"e{e}_sync"] = sync
        comparable = effective_count(s_arr, ops, variant)
        point = find_consistent_point_arrays(s_arr, m_arr, ops, variant)
        t = z3.If(comparable == 0, 0, point)
        t_var = z3.Int(f"e{e}_t")
        cons.append(t_var == t)
        choices[f"e{e}_t"] = t_var
        ok = z3.And(sync, t_var != NO_POINT)
        # properties at this handshake
        upto = ops.min(t_var, s_max)
        prefix_ok = z3.And(*[z3.Implies(o < upto, z3.And(o < m_max, s_labels[o] == m_labels[o])) for o in range(maxo)])
        checks.append(Check("prefix-agreement", e, z3.And(ok, z3.Not(prefix_ok))))
        differs_at_t = z3.Or(*[z3.And(t_var == o, s_labels[o] != m_labels[o]) for o in range(maxo)])
        checks.append(Check("maximality", e, z3.And(ok, t_var < ops.min(s_max, m_max), z3.Not(differs_at_t))))
        checks.append(Check("committed-survival", e, z3.And(ok, t_var < ops.min(acked, s_max))))
        is_prefix = z3.And(s_max <= m_max,
                           *[z3.Implies(o < s_max, s_labels[o] == m_labels[o]) for o in range(maxo)])
        checks.append(Check("existence", e, z3.And(sync, is_prefix, z3.Or(t_var == NO_POINT, t_var < s_max))))
        # the slave truncates and copies [from, copy_to) from the master
        copy_to = z3.Int(f"e{e}_copy_to")
        choices[f"e{e}_copy_to"] = copy_to
        start_from = z3.If(comparable == 0, 0, ops.min(t_var, s_max))
        cons += [z3.Implies(ok, z3.And(copy_to >= start_from, copy_to <= m_max))]
        for idx, r in enumerate(reps):
            is_slave = z3.Not(master_is_b) if idx == 1 else master_is_b
            act = z3.And(is_slave, ok)
            # an empty or data-less file starts over; otherwise suffix-truncate at t
            clear = z3.And(act, comparable == 0)
            r.count = z3.If(clear, 0, r.count)
            r.cap = z3.If(clear, NO_BOUND, r.cap)
            truncate_suffix(r, t_var, z3.And(act, comparable != 0))
            r.max = z3.If(act, start_from, r.max)
            # copy message by message; record an entry when the header's epoch changes
            for o in range(maxo):
                copying = z3.And(act, start_from <= o, o < copy_to)
                r.labels[o] = z3.If(copying, m_labels[o], r.labels[o])
                h_epoch, h_start = _header_label(m_arr, o, K, variant)
                last_epoch = _at(r.epochs, r.count - 1, K)
                append_entry(r, h_epoch, h_start, z3.And(copying, z3.Or(r.count == 0, h_epoch != last_epoch)))
            r.max = z3.If(act, copy_to, r.max)
        acked = z3.If(ok, ops.max(acked, copy_to), acked)
        for r in reps:
            checks.append(Check("well-formed", e, z3.Not(well_formed(r))))
        # an epoch has one start everywhere: what makes comparing starts redundant in the model
        a, b = reps
        same_epoch_other_start = z3.Or(*[
            z3.And(i < a.count, j < b.count, a.epochs[i] == b.epochs[j], a.starts[i] != b.starts[j])
            for i in range(K) for j in range(K)])
        checks.append(Check("epoch-start-agreement", e, same_epoch_other_start))
        snapshots.append((e, at_handshake, [(r.name, r.labels[:], r.max, r.epochs[:], r.starts[:], r.count)
                                            for r in reps]))
    return History(K, W, cons, checks, snapshots, choices)


class _Select:
    """The master's or the slave's state, chosen by a z3 condition."""

    def __init__(self, cond, if_true: _Replica, if_false: _Replica):
        self.cond, self.t, self.f = cond, if_true, if_false

    def get(self, field: str):
        return z3.If(self.cond, getattr(self.t, field), getattr(self.f, field))

    def list(self, field: str, n: int):
        return [z3.If(self.cond, getattr(self.t, field)[i], getattr(self.f, field)[i]) for i in range(n)]


def _at(values: list, index, n: int):
    """values[index] for a symbolic index (0 outside the range)."""
    out: Any = z3.IntVal(0)
    for i in range(n):
        out = z3.If(index == i, values[i], out)
    return out


def _header_label(m: EpochArrays, o: int, K: int, variant: Variant):
    """The (epoch, start) a batch header carries for the message at offset ``o``.

    The master labels a batch with the epoch entry containing it; the upstream variant
    labels the last message of an epoch with the next epoch already.
    """
    epoch: Any = z3.IntVal(0)
    start: Any = z3.IntVal(0)
    for i in range(K):
        nxt = m.starts[i + 1] if i + 1 < K else m.last_end
        end = z3.If(i + 1 < m.count, nxt, m.last_end)
        inside = z3.And(i < m.count, m.starts[i] <= o, o < end)
        e_i, s_i = m.epochs[i], m.starts[i]
        if variant.label_switched_early and i + 1 < K:
            last_of_epoch = z3.And(i + 1 < m.count, o == end - 1)
            e_i = z3.If(last_of_epoch, m.epochs[i + 1], e_i)
            s_i = z3.If(last_of_epoch, m.starts[i + 1], s_i)
        epoch = z3.If(inside, e_i, epoch)
        start = z3.If(inside, s_i, start)
    return epoch, start


# ------------------------------------------------------------------ checking


@attrs.frozen
class Verdict:
    variant: str
    property: str
    bound: str
    status: str  # "proved", "refuted", "unknown"
    seconds: float
    counterexample: str | None = None


def check(variant_name: str = "reference", K: int = 3, W: int = 2, properties=PROPERTIES,
          timeout_ms: int = 120_000) -> list[Verdict]:
    variant = REFERENCE if variant_name == "reference" else VARIANTS[variant_name]
    history = build_history(K, W, variant)
    bound = f"K={K} epochs, {W} messages per epoch, 2 replicas"
    verdicts = []
    for prop in properties:
        started = time.perf_counter()
        solver = z3.Solver()
        solver.set("timeout", timeout_ms)
        solver.add(*history.solver_constraints)
        solver.add(z3.Or(*[c.violated for c in history.checks if c.property == prop]))
        result = solver.check()
        seconds = time.perf_counter() - started
        if result == z3.unsat:
            verdicts.append(Verdict(variant_name, prop, bound, "proved", seconds))
        elif result == z3.sat:
            verdicts.append(Verdict(variant_name, prop, bound, "refuted", seconds,
                                    render_counterexample(history, solver.model(), prop)))
        else:
            verdicts.append(Verdict(variant_name, prop, bound, "unknown", seconds))
    return verdicts


def _val(model, term) -> int:
    return model.eval(term, model_completion=True).as_long()


def render_counterexample(history: History, model, prop: str) -> str:
    """The history as readable steps, then both epoch files and logs where it failed."""
    lines = []
    failing = min(c.epoch for c in history.checks
                  if c.property == prop and z3.is_true(model.eval(c.violated, model_completion=True)))
    for e in range(1, failing + 1):
        ch = history.choices
        crash = [f"{r} crashes and keeps only {_val(model, ch[f'e{e}_{r}_max_after_crash'])}; " for r in REPLICAS
                 if _val(model, ch[f"e{e}_{r}_max_after_crash"]) < _val(model, ch[f"e{e}_{r}_max_before_crash"])]
        master = "B" if z3.is_true(model.eval(ch[f"e{e}_master_is_B"], model_completion=True)) else "A"
        slave = "A" if master == "B" else "B"
        step = f"epoch {e}: {''.join(crash)}master {master} writes {_val(model, ch[f'e{e}_writes'])}"
        if z3.is_true(model.eval(ch[f"e{e}_sync"], model_completion=True)):
            t = _val(model, ch[f"e{e}_t"])
            step += f"; {slave} handshakes: consistent point {t}"
            if t != NO_POINT:
                step += f", copies up to {_val(model, ch[f'e{e}_copy_to'])}"
        lines.append(step)
    _, at_handshake, after = history.snapshots[failing - 1]
    states = after if prop in ("well-formed", "epoch-start-agreement") else at_handshake
    when = "after" if states is after else "at the handshake of"
    lines.append(f"state {when} epoch {failing} ({prop} fails):")
    for name, labels, mx, epochs, starts, count in states:
        n = _val(model, count)
        entries = " ".join(f"[e{_val(model, epochs[i])}@{_val(model, starts[i])}]" for i in range(n)) or "(empty)"
        end = _val(model, mx)
        log = " ".join(str(_val(model, labels[o])) for o in range(end)) or "(empty)"
        lines.append(f"  {name}: epoch file {entries}; log (epoch of each message) {log}; max offset {end}")
    return "\n".join(lines)
