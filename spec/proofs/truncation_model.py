"""A bounded z3 model of RIP-44 histories, checking the epoch truncation algorithm.

The model (every choice below is a free z3 variable, so a proof covers all of them):

* two replicas, A and B; ``K`` rounds, each under an epoch assigned by the controller:
  a new, larger epoch with a master chosen freely, or (from the second round) the last
  epoch again with the same master, re-confirmed after a quick restart;
* before each round either replica may crash and lose an unflushed tail of its log:
  anything past its flushed prefix, which covers what it acknowledged and what it
  received as a slave (a slave flushes a batch before it reports it) and, as master,
  what ``flushed_for_transfer`` says it flushed before sending; the crash may leave a
  torn record (a dirty tail) or not;
* the master changes role (``change_to_master``: where a crash left a dirty tail, cut
  the epoch file at the log's end; a master re-confirmed in the epoch its file ends
  with keeps that entry; else append ``(epoch, max offset)`` under the append rule)
  and writes up to ``W`` messages (one offset each) from its own max offset;
* the other replica may then handshake (``find_consistent_point`` on both epoch
  files with the log ends as last ends; an empty or data-less file copies from the
  start) and, if a point exists, truncate there and copy any prefix of the master's
  log, recording an epoch entry whenever a batch header's epoch changes; any prefix of
  what it copied is then acknowledged (allAckInSyncStateSet with a set of two: the
  slave's report may not have reached the master yet).

A log is its sequence of message labels: the round in which its master wrote the
message. Each round's master writes each offset at most once, so equal labels mean
equal messages, with no assumption about crashes: a master re-confirmed in its epoch
that lost a tail and writes again at the same offsets writes messages of a new round.
(The model labelled messages by epoch until session 10, assuming a re-confirmed master
rewrites only offsets no other replica holds; the reference broke that assumption, and
the model could not see it: docs/truncation.md.) The algorithm's definitions come from
``spec/truncation/algebra.py`` — the same functions the concrete spec runs — evaluated
on z3 terms.

Properties, checked at every handshake of every round:

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

from spec.truncation import algebra
from spec.truncation.algebra import NO_BOUND, NO_POINT, REFERENCE, EpochArrays, Variant, choose
from spec.truncation.variants import VARIANTS

REPLICAS = ("A", "B")
PROPERTIES = ("prefix-agreement", "maximality", "committed-survival", "existence", "well-formed",
              "epoch-start-agreement")


class _Z3Ops:
    concrete = False
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

    @staticmethod
    def at(values, index, default):
        out = default
        for i, v in enumerate(values):
            out = z3.If(index == i, v, out)
        return out


Z3 = _Z3Ops()


@attrs.define
class _Replica:
    name: str
    labels: list  # z3 Int per offset: the round that wrote the message there (0 beyond the end)
    max: Any
    file: EpochArrays  # K slots; last_end: the last entry's own end (NO_BOUND: open-ended)
    flushed: Any = z3.IntVal(0)  # the log's durable prefix: a crash keeps at least this much

    def snapshot(self) -> tuple:
        return (self.name, self.labels[:], self.max, list(self.file.epochs), list(self.file.starts), self.file.count)


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


def build_history(K: int, W: int = 2, variant: Variant = REFERENCE, reconfirm: bool = True) -> History:
    """Unroll K rounds of the model as z3 constraints and property checks (``reconfirm``:
    a round may re-confirm the last master in its epoch).

    Every step of the algorithm is the algebra's rule (``spec/truncation/algebra.py``)
    on z3 terms: the master's role change, the slave's handshake, each batch's label and
    the epoch entry the slave records from it. The model itself adds only the history:
    who is master, crashes, writes, whether and how far the slave copies.
    """
    ops = Z3
    maxo = K * W
    cons: list = []
    checks: list[Check] = []
    snapshots: list = []
    choices: dict[str, Any] = {}
    zeros = [z3.IntVal(0)] * K
    reps = [_Replica(n, [z3.IntVal(0)] * maxo, z3.IntVal(0), EpochArrays(zeros, zeros, z3.IntVal(0), NO_BOUND))
            for n in REPLICAS]
    acked: Any = z3.IntVal(0)

    def well_formed(r: _Replica):
        f = r.file
        return z3.And(f.count >= 0, f.count <= K, r.max >= 0, r.max <= maxo, algebra.increasing(f, ops),
                      *[z3.Implies(o < r.max, algebra.covers(f, o, ops)) for o in range(maxo)])

    epoch: Any = z3.IntVal(0)
    previous_master: Any = None
    for e in range(1, K + 1):
        master_is_b = z3.Bool(f"e{e}_master_is_B")
        # the controller may re-confirm the last master in its own epoch (after a quick restart)
        again = z3.Bool(f"e{e}_reconfirm") if reconfirm and e > 1 else z3.BoolVal(False)
        choices[f"e{e}_reconfirm"] = again
        if previous_master is not None:
            cons.append(z3.Implies(again, master_is_b == previous_master))
        previous_master = master_is_b
        epoch = z3.If(again, epoch, epoch + 1)
        choices[f"e{e}_epoch"] = epoch
        writes = z3.Int(f"e{e}_writes")
        cons += [writes >= 0, writes <= W]
        choices[f"e{e}_master_is_B"] = master_is_b
        choices[f"e{e}_writes"] = writes
        # crashes lose what was not flushed (never acknowledged data: it was flushed everywhere)
        dirty = {}
        for r in reps:
            lost_to = z3.Int(f"e{e}_{r.name}_max_after_crash")
            cons += [lost_to >= r.flushed, lost_to <= r.max]
            choices[f"e{e}_{r.name}_max_after_crash"] = lost_to
            torn = z3.Bool(f"e{e}_{r.name}_torn")  # the crash left a torn record past the valid data
            choices[f"e{e}_{r.name}_torn"] = torn
            dirty[r.name] = z3.And(torn, lost_to < r.max)  # a dirty tail to drop at the role change
            choices[f"e{e}_{r.name}_max_before_crash"] = r.max
            r.max = lost_to
        # the master of this epoch: change_to_master, then write
        for idx, r in enumerate(reps):
            is_master = master_is_b if idx == 1 else z3.Not(master_is_b)
            r.file = algebra.change_to_master(r.file, epoch, r.max, dirty[r.name], ops, variant,
                                              enabled=is_master).file
            new_max = r.max + writes
            r.labels = [z3.If(z3.And(is_master, r.max <= o, o < new_max), e, r.labels[o]) for o in range(maxo)]
            cons.append(z3.Implies(is_master, new_max <= maxo))
            r.max = z3.If(is_master, new_max, r.max)
        a, b = reps
        m_labels = [z3.If(master_is_b, b.labels[o], a.labels[o]) for o in range(maxo)]
        s_labels = [z3.If(master_is_b, a.labels[o], b.labels[o]) for o in range(maxo)]
        m_max, s_max = z3.If(master_is_b, b.max, a.max), z3.If(master_is_b, a.max, b.max)
        m_file, s_file = choose(master_is_b, b.file, a.file, ops), choose(master_is_b, a.file, b.file, ops)
        m_arr = EpochArrays(m_file.epochs, m_file.starts, m_file.count, m_max)  # as the master compares
        at_handshake = [r.snapshot() for r in reps]
        sync = z3.Bool(f"e{e}_sync")
        choices[f"e{e}_sync"] = sync
        point = z3.Int(f"e{e}_consistent_point")

        def named(t, point=point):
            cons.append(point == t)
            return point

        handshake = algebra.slave_handshake(s_file, s_max, m_file, m_max, ops, variant, name=named)
        t_var = z3.Int(f"e{e}_t")
        cons.append(t_var == handshake.point)
        choices[f"e{e}_t"] = t_var
        ok = z3.And(sync, z3.Not(handshake.failed))
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
        # the slave truncates and copies [from, copy_to) from the master, one message per batch
        copy_to = z3.Int(f"e{e}_copy_to")
        choices[f"e{e}_copy_to"] = copy_to
        start_from = handshake.log_end
        cons += [z3.Implies(ok, z3.And(copy_to >= start_from, copy_to <= m_max))]
        ack_to = z3.Int(f"e{e}_ack_to")  # how much of the copy the master has heard acknowledged
        choices[f"e{e}_ack_to"] = ack_to
        cons += [z3.Implies(ok, z3.And(ack_to >= 0, ack_to <= copy_to))]
        headers = [algebra.batch_label(m_arr, o, o + 1, ops, variant) for o in range(maxo)]
        shipped = z3.And(ok, copy_to > start_from)
        for idx, r in enumerate(reps):
            is_slave = z3.Not(master_is_b) if idx == 1 else master_is_b
            act = z3.And(is_slave, ok)
            r.file = algebra.handshake_file(r.file, handshake.from_start, handshake.failed, point, ops, variant,
                                            enabled=act)
            r.max = z3.If(act, start_from, r.max)
            for o in range(maxo):
                copying = z3.And(act, start_from <= o, o < copy_to)
                r.labels[o] = z3.If(copying, m_labels[o], r.labels[o])
                r.file, _ = algebra.record_header_epoch(r.file, *headers[o], ops, variant, enabled=copying)
            r.max = z3.If(act, copy_to, r.max)
            # the slave flushes what it receives and reports as flushed_for_report says (a
            # truncation cuts its flushed prefix too); the master flushes what it sends as
            # flushed_for_transfer says
            r.flushed = z3.If(act, z3.If(copy_to > start_from,
                                         algebra.flushed_for_report(ops.min(r.flushed, start_from), copy_to, ops),
                                         ops.min(r.flushed, start_from)),
                              z3.If(z3.And(z3.Not(is_slave), shipped),
                                    algebra.flushed_for_transfer(r.flushed, copy_to, ops, variant), r.flushed))
        acked = z3.If(ok, ops.max(acked, ack_to), acked)
        for r in reps:  # acknowledged data is flushed on every replica before it is acknowledged
            r.flushed = ops.max(r.flushed, acked)
        for r in reps:
            checks.append(Check("well-formed", e, z3.Not(well_formed(r))))
        # an epoch has one start everywhere: what makes comparing starts redundant in the model
        a, b = reps
        same_epoch_other_start = z3.Or(*[
            z3.And(i < a.file.count, j < b.file.count, a.file.epochs[i] == b.file.epochs[j],
                   a.file.starts[i] != b.file.starts[j])
            for i in range(K) for j in range(K)])
        checks.append(Check("epoch-start-agreement", e, same_epoch_other_start))
        snapshots.append((e, at_handshake, [r.snapshot() for r in reps]))
    return History(K, W, cons, checks, snapshots, choices)


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
          timeout_ms: int = 120_000, reconfirm: bool = True) -> list[Verdict]:
    variant = REFERENCE if variant_name == "reference" else VARIANTS[variant_name]
    history = build_history(K, W, variant, reconfirm)
    bound = f"K={K} epochs, {W} messages per epoch, 2 replicas" + (", re-confirmations" if reconfirm else "")
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


def _label(model, history: History, term) -> str:
    """A message as ``epoch.round``: the epoch of the round whose master wrote it."""
    r = _val(model, term)
    return f"{_val(model, history.choices[f'e{r}_epoch'])}.{r}" if r else "?"


def render_counterexample(history: History, model, prop: str) -> str:
    """The history as readable steps, then both epoch files and logs where it failed."""
    lines = []
    failing = min(c.epoch for c in history.checks
                  if c.property == prop and z3.is_true(model.eval(c.violated, model_completion=True)))
    for e in range(1, failing + 1):
        ch = history.choices
        crash = [f"{r} crashes and keeps only {_val(model, ch[f'e{e}_{r}_max_after_crash'])}"
                 f"{' (a torn record dropped)' if z3.is_true(model.eval(ch[f'e{e}_{r}_torn'], model_completion=True)) else ''}; "
                 for r in REPLICAS
                 if _val(model, ch[f"e{e}_{r}_max_after_crash"]) < _val(model, ch[f"e{e}_{r}_max_before_crash"])]
        master = "B" if z3.is_true(model.eval(ch[f"e{e}_master_is_B"], model_completion=True)) else "A"
        slave = "A" if master == "B" else "B"
        again = z3.is_true(model.eval(ch[f"e{e}_reconfirm"], model_completion=True))
        step = (f"epoch {_val(model, ch[f'e{e}_epoch'])}{' again' if again else ''}: {''.join(crash)}master {master}"
                f"{' re-confirmed' if again else ''} writes {_val(model, ch[f'e{e}_writes'])}")
        if z3.is_true(model.eval(ch[f"e{e}_sync"], model_completion=True)):
            t = _val(model, ch[f"e{e}_t"])
            step += f"; {slave} handshakes: consistent point {t}"
            if t != NO_POINT:
                step += (f", copies up to {_val(model, ch[f'e{e}_copy_to'])}, acknowledged up to "
                         f"{_val(model, ch[f'e{e}_ack_to'])}")
        lines.append(step)
    _, at_handshake, after = history.snapshots[failing - 1]
    states = after if prop in ("well-formed", "epoch-start-agreement") else at_handshake
    when = "after" if states is after else "at the handshake of"
    lines.append(f"state {when} epoch {_val(model, history.choices[f'e{failing}_epoch'])} ({prop} fails):")
    for name, labels, mx, epochs, starts, count in states:
        n = _val(model, count)
        entries = " ".join(f"[e{_val(model, epochs[i])}@{_val(model, starts[i])}]" for i in range(n)) or "(empty)"
        end = _val(model, mx)
        log = " ".join(_label(model, history, labels[o]) for o in range(end)) or "(empty)"
        lines.append(f"  {name}: epoch file {entries}; log (epoch of each message, .round that wrote it) {log}; "
                     f"max offset {end}")
    return "\n".join(lines)
