"""Check one truncation case against the spec, with a z3-backed explanation.

A case gives the master's and the slave's epoch files and max offsets, optionally
their logs (segments labelled with the epoch of the master that wrote them; without
them each entry's range is taken to hold messages of its own epoch), and the expected
answer. The spec answers with the handshake decision; z3 then explains it against the
logs: that the logs agree below the consistent point (no offset below it where the
labels differ), that the point is maximal (the first offset where they differ, found
by minimisation), or — when there is no point — how long the logs' common prefix
really is, i.e. whether a human must wipe the slave or the algorithm missed a point.
"""
from __future__ import annotations

import attrs
import z3

from spec.truncation.algebra import NO_POINT, REFERENCE, Variant
from spec.truncation.epoch_file import EpochEntry, EpochFile
from spec.truncation.replication import HandshakeOutcome, slave_handshake


@attrs.frozen(slots=True)
class Segment:
    start: int
    end: int
    epoch: int


@attrs.frozen(slots=True)
class Side:
    epoch_file: EpochFile
    max_offset: int
    log: tuple[Segment, ...] | None = None  # None: derived from the epoch file

    def segments(self) -> tuple[Segment, ...]:
        if self.log is not None:
            return self.log
        entries = self.epoch_file.entries
        out = []
        for i, e in enumerate(entries):
            end = entries[i + 1].start_offset if i + 1 < len(entries) else self.max_offset
            end = min(end, self.max_offset)
            if end > e.start_offset:
                out.append(Segment(e.start_offset, end, e.epoch))
        return tuple(out)


@attrs.frozen(slots=True)
class Expectation:
    consistent_point: int | None = None  # expected point, or None when failure is expected
    failure: bool = False  # expect no consistent point


@attrs.frozen(slots=True)
class Case:
    name: str
    master: Side
    slave: Side
    expect: Expectation
    description: str = ""
    variant: str = "reference"


@attrs.frozen(slots=True)
class CaseResult:
    case: Case
    agrees: bool
    answer: str  # the spec's answer, in words
    consistent_point: int  # -1: none
    explanation: tuple[str, ...]


def _label(segments: tuple[Segment, ...], x):
    """z3 term: the epoch of the message at offset x (0 where there is none)."""
    term = z3.IntVal(0)
    for s in reversed(segments):
        term = z3.If(z3.And(x >= s.start, x < s.end), s.epoch, term)
    return term


def first_difference(slave: Side, master: Side) -> int:
    """The longest common prefix of the two logs, found by z3 minimisation."""
    x = z3.Int("x")
    limit = min(slave.max_offset, master.max_offset)
    opt = z3.Optimize()
    opt.add(x >= 0, x < limit, _label(slave.segments(), x) != _label(master.segments(), x))
    opt.minimize(x)
    if opt.check() == z3.sat:
        return opt.model()[x].as_long()
    return limit


def agree_below(slave: Side, master: Side, t: int) -> bool:
    """z3 proof (unsat) that no offset below t holds different messages."""
    x = z3.Int("x")
    s = z3.Solver()
    s.add(x >= 0, x < t, _label(slave.segments(), x) != _label(master.segments(), x))
    return s.check() == z3.unsat


def check_case(case: Case, variants: dict[str, Variant]) -> CaseResult:
    variant = REFERENCE if case.variant == "reference" else variants[case.variant]
    m, s = case.master, case.slave
    decision = slave_handshake(s.epoch_file, s.max_offset, m.epoch_file, m.max_offset, variant=variant)
    if decision.outcome is HandshakeOutcome.NO_CONSISTENT_POINT:
        point = NO_POINT
        answer = "no consistent point (the slave cannot proceed; an operator must wipe it)"
    elif decision.outcome is HandshakeOutcome.TRANSFER_FROM_START:
        point = 0
        answer = "no epoch entry vouches for any data: copy everything from the start (consistent point 0)"
    else:
        point = decision.transfer_from if decision.truncate_log_to is None else decision.truncate_log_to
        point = min(point, s.max_offset)
        cut = "no truncation needed" if decision.truncate_log_to is None else f"truncate the slave to {point}"
        answer = f"consistent point {point}: {cut}, then copy from {decision.transfer_from}"
    lcp = first_difference(s, m)
    why: list[str] = [f"z3: the logs' longest common prefix is {lcp} "
                      f"(slave max {s.max_offset}, master max {m.max_offset})"]
    if point >= 0:
        if agree_below(s, m, point):
            why.append(f"z3 proves the logs agree below {point} (no offset there holds different messages)")
        else:
            why.append(f"z3 finds offsets below {point} where the logs differ: truncating to {point} keeps "
                       f"a divergent prefix")
        if point == lcp:
            why.append(f"{point} is maximal: " + (
                f"at offset {point} the slave holds epoch {_at(s, point)} and the master epoch {_at(m, point)}"
                if point < min(s.max_offset, m.max_offset) else "one log ends there"))
        elif point < lcp:
            why.append(f"{point} is not maximal: the logs agree up to {lcp}, so {lcp - point} bytes are "
                       f"truncated needlessly")
    else:
        matches = [e for e in s.epoch_file.entries
                   if any(x.epoch == e.epoch and x.start_offset == e.start_offset for x in m.epoch_file.entries)]
        why.append("no slave entry has the same epoch and start on the master" if not matches else
                   f"matching entries exist ({', '.join(f'e{e.epoch}@{e.start_offset}' for e in matches)}) "
                   f"but hold no data")
        if lcp > 0:
            why.append(f"yet the logs agree on their first {lcp} bytes: a consistent point exists that the "
                       f"algorithm does not find")
    if case.expect.failure:
        agrees = point == NO_POINT
    else:
        agrees = point == case.expect.consistent_point
    return CaseResult(case, agrees, answer, point, tuple(why))


def _at(side: Side, offset: int) -> int:
    for seg in side.segments():
        if seg.start <= offset < seg.end:
            return seg.epoch
    return 0


# A history outside the model's assumptions: the controller's metadata was wiped
# (CleanBrokerData) and epochs restarted, so "epoch 1" names two different masters.
# Segment tags 900/901 are the old incarnation's epochs 0 and 1. The reference finds
# no consistent point (an operator must wipe the slave); matching on the epoch alone
# finds one where the logs differ.
EPOCH_REUSE_CASE = Case(
    name="epochs-reused-after-metadata-wipe",
    description="the slave's epoch 1 (old incarnation, started at 200) is not the master's epoch 1 (started at 0)",
    master=Side(EpochFile((EpochEntry(1, 0), EpochEntry(2, 300))), 500, (Segment(0, 300, 1), Segment(300, 500, 2))),
    slave=Side(EpochFile((EpochEntry(0, 0), EpochEntry(1, 200))), 400, (Segment(0, 200, 900), Segment(200, 400, 901))),
    expect=Expectation(failure=True),
)
