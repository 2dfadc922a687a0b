"""The reference broker's log as entries (``ControllerModeBroker.log_entries``): built
incrementally (what the last call built is kept up to where the log was cut since), it
must always equal the log built from scratch, whatever appends, batches and truncations
came between two reads."""
from __future__ import annotations

from hypothesis import given, strategies as st

from reference.controller_broker import BrokerSetup, ControllerModeBroker
from spec.broker.messages import MessageTag
from spec.broker.records import LogEntry
from spec.truncation.replication import Message as LogMessage


def _from_scratch(broker: ControllerModeBroker) -> tuple[LogEntry, ...]:
    return tuple(LogEntry(t.msg_id, m.offset, m.end, t.queue, t.queue_offset) for m, t in zip(broker.log, broker.ids))


def _broker() -> ControllerModeBroker:
    return ControllerModeBroker("b1", ("b2",), BrokerSetup("c", "broker-a", ("c1",)))


# what changes a broker's log: a write (append), a replicated batch (extend), a cut at an
# offset (``_truncate_log``: the slave's handshake, a new master's recovery), and a read
ACTIONS = st.lists(st.one_of(
    st.tuples(st.just("append"), st.integers(1, 9)),
    st.tuples(st.just("batch"), st.lists(st.integers(1, 9), max_size=4)),
    st.tuples(st.just("cut"), st.integers(0, 60)),
    st.just(("read", None)),
), max_size=40)


def _append(broker: ControllerModeBroker, size: int, serial: list[int]) -> tuple[LogMessage, MessageTag]:
    serial[0] += 1
    queue = f"q{serial[0] % 2}"
    return LogMessage(broker.max_offset, size, 1), MessageTag(f"m{serial[0]}", queue, serial[0] // 2)


@given(ACTIONS)
def test_log_entries_always_equal_the_log_built_from_scratch(actions):
    broker, serial = _broker(), [0]
    for action, arg in actions:
        if action == "append":
            m, t = _append(broker, arg, serial)
            broker.log.append(m)
            broker.ids.append(t)
        elif action == "batch":
            for size in arg:
                m, t = _append(broker, size, serial)
                broker.log.extend([m])
                broker.ids.extend([t])
        elif action == "cut":
            broker._truncate_log(arg)
        else:
            assert broker.log_entries() == _from_scratch(broker)
    assert broker.log_entries() == _from_scratch(broker)


def test_a_cut_and_a_regrowth_to_the_same_length_are_seen():
    """The case a length check alone would miss: cut, then written again to as many entries."""
    broker, serial = _broker(), [0]
    for size in (3, 4, 5):
        m, t = _append(broker, size, serial)
        broker.log.append(m)
        broker.ids.append(t)
    before = broker.log_entries()
    broker._truncate_log(3)
    for size in (2, 5):
        m, t = _append(broker, size, serial)
        broker.log.append(m)
        broker.ids.append(t)
    after = broker.log_entries()
    assert len(after) == len(before) and after != before and after == _from_scratch(broker)


def test_two_brokers_holding_a_message_share_its_entry():
    """Their logs then compare by identity (the abstraction relates every broker's log to the
    master's on every change); equality is what matters, this is what keeps it cheap."""
    a, b = _broker(), _broker()
    m, t = LogMessage(0, 7, 1), MessageTag("m1", "q0", 0)
    for broker in (a, b):
        broker.log.append(m)
        broker.ids.append(t)
    assert a.log_entries()[0] is b.log_entries()[0]
