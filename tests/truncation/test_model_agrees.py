"""The z3 model and the concrete rules agree on random histories.

The proof is about what runs only if the model's histories evolve as the concrete
spec does. A random history of the model's kind (who is master of each epoch,
re-confirmations of a master in its epoch, crashes that lose an unflushed tail (torn or
not), writes, whether and how far the slave copies and how much of that is acknowledged)
is played twice: with the concrete functions of
``spec/truncation`` (``change_to_master``, ``slave_handshake``, ``next_batch``,
``on_transfer_header``) on epoch files and logs, and by the z3 model (``build_history``) with every choice fixed to the same values.
Both must reach the same epoch files, logs and handshake outcomes at every epoch, for
the reference and for every known-bad variant.
"""
from __future__ import annotations

from functools import lru_cache

import z3
from hypothesis import given
from hypothesis import strategies as st

from spec.proofs.truncation_model import REPLICAS, build_history
from spec.truncation.algebra import REFERENCE
from spec.truncation.epoch_file import EpochFile
from spec.truncation.replication import (
    HandshakeOutcome,
    Message,
    change_to_master,
    flushed_for_transfer,
    next_batch,
    on_transfer_header,
    slave_handshake,
)
from spec.truncation.variants import VARIANTS

W = 2  # messages a master may write per epoch (the model's default)
ALGORITHMS = {"reference": REFERENCE, **VARIANTS}


@lru_cache(maxsize=None)
def history(k: int, name: str):
    return build_history(k, W, ALGORITHMS[name])


def play(data, k: int, variant) -> tuple[dict, list]:
    """Draw a history and run it with the concrete rules: (the choices, the state after
    each epoch: per replica (epoch file entries, log labels) and the handshake outcome)."""
    files = {r: EpochFile() for r in REPLICAS}
    logs: dict[str, list[int]] = {r: [] for r in REPLICAS}  # the label (the round that wrote it) per offset
    flushed = {r: 0 for r in REPLICAS}
    acked = 0
    choices: dict[str, int | bool] = {}
    states = []
    epoch, master = 0, None
    for e in range(1, k + 1):
        dirty = {}
        for r in REPLICAS:  # a crash keeps at least what was flushed
            kept = data.draw(st.integers(flushed[r], len(logs[r])))
            torn = data.draw(st.booleans())
            choices[f"e{e}_{r}_max_after_crash"] = kept
            choices[f"e{e}_{r}_torn"] = torn
            dirty[r] = torn and kept < len(logs[r])
            del logs[r][kept:]
        again = e > 1 and data.draw(st.booleans())  # the last master re-confirmed in its epoch
        if not again:
            epoch, master = epoch + 1, data.draw(st.sampled_from(REPLICAS))
        slave = REPLICAS[1 - REPLICAS.index(master)]
        writes = data.draw(st.integers(0, W))
        choices.update({f"e{e}_master_is_B": master == "B", f"e{e}_writes": writes, f"e{e}_reconfirm": again})
        files[master] = change_to_master(files[master], epoch, len(logs[master]), dirty[master], variant).epoch_file
        logs[master] += [e] * writes
        sync = data.draw(st.booleans())
        choices[f"e{e}_sync"] = sync
        outcome = None
        if sync:
            d = slave_handshake(files[slave], len(logs[slave]), files[master], len(logs[master]), variant=variant)
            outcome = d.outcome
            if outcome is not HandshakeOutcome.NO_CONSISTENT_POINT:
                files[slave] = d.epoch_file
                start = d.transfer_from if d.truncate_log_to is None else d.truncate_log_to
                del logs[slave][start:]
                flushed[slave] = min(flushed[slave], start)
                copy_to = data.draw(st.integers(len(logs[slave]), len(logs[master])))
                ack_to = data.draw(st.integers(0, copy_to))
                choices.update({f"e{e}_copy_to": copy_to, f"e{e}_ack_to": ack_to})
                master_log = [Message(o, 1, label) for o, label in enumerate(logs[master])]
                for o in range(len(logs[slave]), copy_to):  # one message per batch, as in the model
                    header = next_batch(files[master], master_log, o, 0, 1, variant)
                    flushed[master] = flushed_for_transfer(flushed[master], header, variant)
                    files[slave] = on_transfer_header(files[slave], o, header, variant).epoch_file
                    logs[slave].append(logs[master][o])
                    flushed[slave] = o + 1  # a slave flushes a batch before it reports it
                acked = max(acked, ack_to)
                for r in REPLICAS:  # acknowledged data is flushed everywhere
                    flushed[r] = max(flushed[r], acked)
        states.append(({r: ([(x.epoch, x.start_offset) for x in files[r].entries], list(logs[r]))
                        for r in REPLICAS}, outcome))
    return choices, states


def model_states(k: int, name: str, choices: dict) -> list:
    h = history(k, name)
    solver = z3.Solver()
    solver.add(*h.solver_constraints)
    for key, value in choices.items():
        var = h.choices[key]
        solver.add(var == (z3.BoolVal(value) if isinstance(value, bool) else value))
    assert solver.check() == z3.sat, "the model cannot take this history"
    m = solver.model()

    def val(term):
        return m.eval(term, model_completion=True)

    states = []
    for e, _, after in h.snapshots:
        replicas = {}
        for r, labels, mx, epochs, starts, count in after:
            n, end = val(count).as_long(), val(mx).as_long()
            replicas[r] = ([(val(epochs[i]).as_long(), val(starts[i]).as_long()) for i in range(n)],
                           [val(labels[o]).as_long() for o in range(end)])
        t = val(h.choices[f"e{e}_t"]).as_long() if z3.is_true(val(h.choices[f"e{e}_sync"])) else None
        states.append((replicas, t))
    return states


@given(st.sampled_from((2, 3)), st.sampled_from(sorted(ALGORITHMS)), st.data())
def test_the_model_evolves_as_the_concrete_rules_do(k, name, data):
    choices, concrete = play(data, k, ALGORITHMS[name])
    modelled = model_states(k, name, choices)
    for e, ((files_logs, outcome), (m_files_logs, t)) in enumerate(zip(concrete, modelled), 1):
        assert m_files_logs == files_logs, f"epoch {e}"
        if outcome is not None:  # the same handshake outcome (the model's t: 0 from the start, -1 none)
            assert (t == -1) == (outcome is HandshakeOutcome.NO_CONSISTENT_POINT), f"epoch {e}"
            assert (outcome is HandshakeOutcome.TRANSFER_FROM_START) <= (t == 0), f"epoch {e}"
