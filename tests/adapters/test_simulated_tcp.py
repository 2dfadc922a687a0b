"""The simulated TCP under PySyncObj's connection code (adapters/simulated_tcp.py): a byte
stream that survives what the simulator's network does (loss, reordering, duplication),
RST for connections nobody holds, SYN and data timeouts, and the two link faults."""
from __future__ import annotations

import errno

import pytest

from adapters.simulated_tcp import ERROR, READ, WRITE, HostStack, SocketModule

ADDRESSES = {"a": ("10.0.0.1", 4321), "b": ("10.0.0.2", 4321)}


def pair():
    """Two hosts, b listening; a connects and b accepts (every segment delivered at once)."""
    a, b = HostStack("a", ADDRESSES, "a#1"), HostStack("b", ADDRESSES, "b#1")
    listener = SocketModule(b).socket()
    listener.bind(("0.0.0.0", 4321))
    listener.listen(5)
    client = SocketModule(a).socket()
    with pytest.raises(OSError) as e:
        client.connect(("10.0.0.2", 4321))
    assert e.value.errno == errno.EINPROGRESS and not client.events() & WRITE
    carry(a, b)
    assert client.events() & WRITE  # established: writable, as after a real non-blocking connect
    server, _ = listener.accept()
    return a, b, client, server


def carry(*stacks, keep=lambda src, dst, seg: True):
    """Deliver every segment in flight (those ``keep`` lets through) until none is left."""
    hosts = {s.node_id: s for s in stacks}
    while any(s.outbox for s in stacks):
        for s in stacks:
            out, s.outbox = s.outbox, []
            for dst, seg in out:
                if keep(s.node_id, dst, seg):
                    hosts[dst].receive(s.node_id, seg)


def read_all(sock) -> bytes:
    out = b""
    while True:
        try:
            chunk = sock.recv(1 << 16)
        except OSError as e:
            assert e.errno == errno.EAGAIN
            return out
        if not chunk:
            return out
        out += chunk


def test_a_connection_carries_a_byte_stream_both_ways():
    a, b, client, server = pair()
    client.send(b"hello ")
    client.send(b"world")
    server.send(b"!")
    carry(a, b)
    assert server.events() & READ and read_all(server) == b"hello world"
    assert read_all(client) == b"!"


def test_reordered_duplicated_and_lost_segments_still_arrive_once_in_order():
    a, b, client, server = pair()
    for word in (b"one ", b"two ", b"three "):
        client.send(word)
    out, a.outbox = a.outbox, []
    lost = out[1]
    for dst, seg in (out[2], out[0], out[2], out[0]):  # late, early, twice; "two" lost
        b.receive("a", seg)
    carry(b, a)
    assert read_all(server) == b"one "  # the stream stops at the gap
    a.tick(a.now + 200)  # the retransmission timer brings "two" (and what was not acknowledged)
    assert lost in a.outbox
    carry(a, b)
    assert read_all(server) == b"two three "


def test_close_reads_as_end_of_stream_and_a_stranger_gets_a_reset():
    a, b, client, server = pair()
    client.send(b"bye")
    client.close()
    carry(a, b)
    assert read_all(server) == b"bye" and server.recv(10) == b""
    server.send(b"late")  # to a connection the other end closed: RST
    carry(a, b)
    assert server.events() & ERROR and server.getsockopt(0, __import__("socket").SO_ERROR) == errno.ECONNRESET


def test_a_syn_nobody_answers_times_out_after_the_kernels_retries():
    a = HostStack("a", ADDRESSES, "a#1")
    s = SocketModule(a).socket()
    with pytest.raises(OSError):
        s.connect(("10.0.0.2", 4321))
    t, syns = 0, 0
    while not s.error and t < 200_000:
        t += 10
        a.tick(t)
        syns += sum(1 for _, seg in a.outbox if seg["type"] == "syn")
        a.outbox.clear()
    assert (s.error, syns, t) == (errno.ETIMEDOUT, 7, 127_000)  # the SYN and 6 retries after 1, 2, ... 64 s


def test_a_syn_to_a_host_that_does_not_listen_is_refused():
    a, b = HostStack("a", ADDRESSES, "a#1"), HostStack("b", ADDRESSES, "b#1")
    s = SocketModule(a).socket()
    with pytest.raises(OSError):
        s.connect(("10.0.0.2", 4321))
    carry(a, b)
    assert s.error == errno.ECONNREFUSED and s.events() & ERROR


def test_reset_fails_the_near_end_at_once_and_the_far_end_when_the_rst_arrives():
    a, b, client, server = pair()
    a.fault("b", "reset")
    assert client.error == errno.ECONNRESET and not server.error
    carry(a, b)
    assert server.error == errno.ECONNRESET


def test_reset_whose_rst_is_lost_is_learnt_by_the_far_end_when_it_sends():
    a, b, client, server = pair()
    a.fault("b", "reset")
    a.outbox.clear()  # the RST is lost
    server.send(b"anyone?")
    carry(a, b)
    assert server.error == errno.ECONNRESET


def test_half_open_silences_the_connection_without_an_error_and_spares_new_ones():
    a, b, client, server = pair()
    a.fault("b", "half-open")
    client.send(b"lost")
    server.send(b"lost too")
    carry(a, b)
    for t in (200, 600, 1400):  # retransmissions vanish too
        a.tick(t)
        b.tick(t)
        carry(a, b)
    assert (client.error, server.error) == (0, 0)  # both still hold it established
    assert read_all(server) == b"" and read_all(client) == b""
    fresh = SocketModule(a).socket()
    with pytest.raises(OSError):
        fresh.connect(("10.0.0.2", 4321))
    carry(a, b)
    assert fresh.events() & WRITE


def test_a_restarted_host_resets_the_connections_of_its_previous_life():
    a, b, client, server = pair()
    b2 = HostStack("b", ADDRESSES, "b#2")  # b crashed and came back: it knows no connection
    client.send(b"still there?")
    carry(a, b2)
    assert client.error == errno.ECONNRESET


def test_unknown_link_faults_and_segments_are_refused():
    a, b, client, server = pair()
    with pytest.raises(ValueError):
        a.fault("b", "flaky")
    with pytest.raises(ValueError):
        a.receive("b", {"type": "bogus", "conn": "x"})
    with pytest.raises(KeyError):
        a.receive("b", {"conn": "x"})


def test_keepalive_ends_an_idle_connection_that_went_silent():
    import socket

    a, b, client, server = pair()
    for option, value in ((socket.TCP_KEEPIDLE, 16), (socket.TCP_KEEPINTVL, 3), (socket.TCP_KEEPCNT, 5)):
        client.setsockopt(socket.IPPROTO_TCP, option, value)
    assert client.keepalive is None  # options without SO_KEEPALIVE do nothing
    client.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for option, value in ((socket.TCP_KEEPIDLE, 16), (socket.TCP_KEEPINTVL, 3), (socket.TCP_KEEPCNT, 5)):
        client.setsockopt(socket.IPPROTO_TCP, option, value)
    t = 0
    for t in range(10, 40_000, 10):  # answered probes keep it alive
        a.now = b.now = t
        a.tick(t)
        carry(a, b)
    assert not client.error
    a.fault("b", "half-open")
    heard = client.heard_at  # the last answer: 16 s idle, then 5 probes 3 s apart
    while not client.error:
        t += 10
        a.now = t
        a.tick(t)
        carry(a, b)
    assert (client.error, t) == (errno.ETIMEDOUT, heard + 16_000 + 5 * 3_000)
