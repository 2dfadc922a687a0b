"""Classic HA decision procedures: one table row per outcome (and boundary), per profile."""
import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.classic import commitlog as cl
from spec.classic import master, slave, write
from spec.classic.profiles import PROFILES, ROCKETMQ_4_9_0, ROCKETMQ_4_9_3, ROCKETMQ_5_0
from spec.classic.records import BrokerRole, ClassicConfig, FlushDiskType, PutMessageStatus, TransferHeader

SYNC = ClassicConfig(broker_role=BrokerRole.SYNC_MASTER, mapped_file_size_commit_log=1024,
                     ha_transfer_batch_size=256, ha_max_gap_not_in_sync=2048)
ASYNC = attrs.evolve(SYNC, broker_role=BrokerRole.ASYNC_MASTER)
BIG = 2**31 + 7  # offsets past 2^31


# ---------------------------------------------------------------- commitlog


PLACE = [
    ("fits", 0, 100, 1024, cl.PlaceOutcome.PUT_OK, 0),
    ("fits-leaving-a-blank", 900, 116, 1024, cl.PlaceOutcome.PUT_OK, 900),
    ("one-byte-short-of-a-blank", 900, 117, 1024, cl.PlaceOutcome.END_OF_FILE, 1024),
    ("full-file-opens-next", 1024, 100, 1024, cl.PlaceOutcome.PUT_OK, 1024),
    ("too-big", 0, 1017, 1024, cl.PlaceOutcome.MESSAGE_SIZE_EXCEEDED, -1),
    ("too-small", 0, 7, 1024, cl.PlaceOutcome.MESSAGE_SIZE_EXCEEDED, -1),
    ("past-2^31", BIG, 64, 1024, cl.PlaceOutcome.PUT_OK, BIG),
]


@pytest.mark.parametrize("case,max_offset,size,file_size,outcome,start", PLACE, ids=[c[0] for c in PLACE])
def test_place_message(case, max_offset, size, file_size, outcome, start):
    p = cl.place_message(max_offset, size, file_size)
    assert (p.outcome, p.start) == (outcome, start)
    if outcome is cl.PlaceOutcome.END_OF_FILE:
        assert p.blank_at == max_offset and p.blank_at + p.blank_size == start


DATA = [
    # offset, min, max -> outcome, read_from, size
    ("within-last-file", 1100, 0, 1500, cl.DataOutcome.FOUND, 1100, 400),
    ("to-end-of-its-file", 900, 0, 1500, cl.DataOutcome.FOUND, 900, 124),
    ("at-max", 1500, 0, 1500, cl.DataOutcome.NOT_FOUND, -1, 0),
    ("past-max-in-last-file", 1600, 0, 1500, cl.DataOutcome.NOT_FOUND, -1, 0),
    ("past-the-files", 2048, 0, 1500, cl.DataOutcome.NOT_FOUND, -1, 0),
    ("before-first-file", 1000, 1024, 1500, cl.DataOutcome.NOT_FOUND, -1, 0),
    ("zero-before-first-file-reads-first", 0, 1024, 1500, cl.DataOutcome.FIRST_FILE, 1024, 476),
    ("zero-empty-log", 0, 0, 0, cl.DataOutcome.NOT_FOUND, -1, 0),
    ("past-2^31", BIG, BIG - 7, BIG + 100, cl.DataOutcome.FOUND, BIG, 100),
]


@pytest.mark.parametrize("case,offset,min_offset,max_offset,outcome,read_from,size", DATA, ids=[c[0] for c in DATA])
def test_commit_log_data(case, offset, min_offset, max_offset, outcome, read_from, size):
    assert cl.commit_log_data(offset, min_offset, max_offset, 1024) == cl.DataSlice(outcome, read_from, size)


FLUSH = [
    ("nothing-dirty", 500, 500, 4, cl.FlushOutcome.NOTHING_DIRTY, 500),
    ("four-pages", 0, 256, 4, cl.FlushOutcome.FLUSHED, 256),
    ("three-pages", 0, 255, 4, cl.FlushOutcome.NOT_ENOUGH_PAGES, 0),
    ("page-numbers-not-bytes", 60, 256, 4, cl.FlushOutcome.FLUSHED, 256),
    ("thorough", 0, 10, 0, cl.FlushOutcome.FLUSHED, 10),
    ("one-file-per-call", 1000, 2000, 0, cl.FlushOutcome.FLUSHED, 1024),
    ("full-file-whatever-pages", 1000, 1024, 4, cl.FlushOutcome.FLUSHED, 1024),
]


@pytest.mark.parametrize("case,flushed,max_offset,least,outcome,after", FLUSH, ids=[c[0] for c in FLUSH])
def test_flush_commit_log(case, flushed, max_offset, least, outcome, after):
    assert cl.flush_commit_log(flushed, max_offset, 1024, least, 64) == cl.FlushDecision(outcome, after)


def test_async_flush_round_thorough_interval_boundary():
    assert cl.async_flush_round(10_000, 0, 4, 10_000) == cl.AsyncFlushDecision(0, True)
    assert cl.async_flush_round(9_999, 0, 4, 10_000) == cl.AsyncFlushDecision(4, False)


def _log(*sizes, file_size=1024):
    data, offset = b"", 0
    for i, size in enumerate(sizes):
        p = cl.place_message(offset, size, file_size)
        if p.outcome is cl.PlaceOutcome.END_OF_FILE:
            data += cl.blank_record(p.blank_size)
        data += cl.encode_record(size, cl.MESSAGE_MAGIC_CODE, f"m{i}|".encode())
        offset = p.start + size
    return data


@pytest.mark.parametrize("case,min_offset,max_offset,keep,keep_from", [
    ("keeps the last two files", 0, 2500, 2, 1024),
    ("keeps only the file being written", 0, 2500, 1, 2048),
    ("keep 0 still keeps the file being written", 0, 2500, 0, 2048),
    ("max at a file boundary: that empty file counts", 0, 2048, 2, 1024),
    ("nothing older than the log", 1024, 2500, 5, 1024),
    ("an empty log", 0, 0, 1, 0),
])
def test_clean_files_keep_from(case, min_offset, max_offset, keep, keep_from):
    assert cl.clean_files_keep_from(min_offset, max_offset, keep, 1024) == keep_from


def test_recovered_end_drops_a_torn_record_and_keeps_blank_records():
    data = _log(400, 400, 400)  # the third opens file 2 after a blank record
    assert len(data) == 1024 + 400
    assert cl.recovered_end(data, 0, 1024) == 1424
    assert cl.recovered_end(data[:1300], 0, 1024) == 1024  # torn third message
    assert cl.recovered_end(data[:1020], 0, 1024) == 800  # torn blank record
    assert cl.recovered_end(b"", 2048, 1024) == 2048
    assert cl.recovered_end(bytes(64), 0, 1024) == 0  # zeros: no record


# ---------------------------------------------------------------- write path


SLAVE_OK = [
    ("ok", 1, 0, 2047, write.SlaveOkOutcome.SLAVE_OK),
    ("gap-at-the-limit", 1, 0, 2048, write.SlaveOkOutcome.SLAVE_FALL_BEHIND),
    ("no-connection", 0, 0, 10, write.SlaveOkOutcome.NO_CONNECTION),
    ("past-2^31", 2, BIG, BIG + 2047, write.SlaveOkOutcome.SLAVE_OK),
]


@pytest.mark.parametrize("case,conns,push2,put_where,outcome", SLAVE_OK, ids=[c[0] for c in SLAVE_OK])
def test_is_slave_ok(case, conns, push2, put_where, outcome):
    assert write.is_slave_ok(conns, push2, put_where, SYNC) is outcome


REPLICA = [
    # config, profile, wait_store, conns, push2 -> outcome, status, deadline, need
    ("async-master", ASYNC, ROCKETMQ_4_9_3, True, 1, 0, write.ReplicaOutcome.NOT_SYNC_MASTER, PutMessageStatus.PUT_OK, None, None),
    ("no-wait-store", SYNC, ROCKETMQ_4_9_3, False, 1, 0, write.ReplicaOutcome.NOT_SYNC_MASTER, PutMessageStatus.PUT_OK, None, None),
    ("slave-not-available", SYNC, ROCKETMQ_4_9_3, True, 0, 0, write.ReplicaOutcome.SLAVE_NOT_AVAILABLE, PutMessageStatus.SLAVE_NOT_AVAILABLE, None, None),
    ("wait-slave-timeout", SYNC, ROCKETMQ_4_9_3, True, 1, 0, write.ReplicaOutcome.WAIT, None, 1000 + 3000, 2),
    ("wait-sync-flush-timeout-4.9.0", SYNC, ROCKETMQ_4_9_0, True, 1, 0, write.ReplicaOutcome.WAIT, None, 1000 + 5000, 2),
    ("5.0-no-acks-needed", SYNC, ROCKETMQ_5_0, True, 0, 0, write.ReplicaOutcome.NO_ACKS_NEEDED, PutMessageStatus.PUT_OK, None, None),
    ("5.0-waits-without-connection", attrs.evolve(SYNC, in_sync_replicas=2), ROCKETMQ_5_0, True, 0, 0, write.ReplicaOutcome.WAIT, None, 4000, 2),
]


@pytest.mark.parametrize("case,config,profile,wait,conns,push2,outcome,status,deadline,need", REPLICA,
                         ids=[c[0] for c in REPLICA])
def test_submit_replica_request(case, config, profile, wait, conns, push2, outcome, status, deadline, need):
    d = write.submit_replica_request(100, 64, 1000, conns, push2, wait, config, profile)
    assert (d.outcome, d.status) == (outcome, status)
    if deadline is not None:
        assert d.request == write.ReplicaRequest(100, 164, deadline, need)


REQ = write.ReplicaRequest(100, 164, 4000, 2)
TRANSFER = [
    ("acked", [(0, 164)], 1000, write.TransferOutcome.PUT_OK),
    ("acked-one-short", [(0, 163)], 1000, write.TransferOutcome.WAITING),
    ("deadline", [(0, 163)], 4000, write.TransferOutcome.FLUSH_SLAVE_TIMEOUT),
    ("one-ms-before-deadline", [], 3999, write.TransferOutcome.WAITING),
    ("transfer-began-at-the-message", [(100, 164)], 1000, write.TransferOutcome.PUT_OK),
    ("transfer-began-after-the-message", [(101, 2000)], 1000, write.TransferOutcome.WAITING),
    ("any-connection", [(1024, 2000), (0, 164)], 1000, write.TransferOutcome.PUT_OK),
]


@pytest.mark.parametrize("case,acks,now,outcome", TRANSFER, ids=[c[0] for c in TRANSFER])
def test_transfer_status(case, acks, now, outcome):
    assert write.transfer_status(REQ, 10_000, acks, now) is outcome


def test_transfer_status_counts_connections_for_in_sync_replicas():
    three = write.ReplicaRequest(100, 164, 4000, 3)
    assert write.transfer_status(three, 0, [(0, 164)], 0) is write.TransferOutcome.WAITING
    assert write.transfer_status(three, 0, [(0, 164), (0, 200)], 0) is write.TransferOutcome.PUT_OK


def test_flush_request_and_status_combination():
    assert write.submit_flush_request(ASYNC) is write.FlushRequestOutcome.ASYNC_FLUSH
    sync_flush = attrs.evolve(SYNC, flush_disk_type=FlushDiskType.SYNC_FLUSH)
    assert write.submit_flush_request(sync_flush) is write.FlushRequestOutcome.WAIT_FLUSH
    assert write.submit_flush_request(sync_flush, wait_store_msg_ok=False) is write.FlushRequestOutcome.ASYNC_FLUSH
    assert write.group_commit_status(164, 164) is PutMessageStatus.PUT_OK
    assert write.group_commit_status(163, 164) is PutMessageStatus.FLUSH_DISK_TIMEOUT
    ok, disk, slave_to = PutMessageStatus.PUT_OK, PutMessageStatus.FLUSH_DISK_TIMEOUT, PutMessageStatus.FLUSH_SLAVE_TIMEOUT
    assert write.combine_put_status(ok, ok) is ok
    assert write.combine_put_status(disk, ok) is disk
    assert write.combine_put_status(disk, slave_to) is slave_to  # the replica status is applied last


# ---------------------------------------------------------------- HAConnection


REPORTS = [
    # profile, connection, report, master max, push2 -> outcome, request, ack, push2 after, close
    ("first-report", ROCKETMQ_4_9_3, master.ConnectionView(), 500, 1000, 0, master.ReportOutcome.REQUEST, 500, 500, 500, False),
    ("first-report-past-max-accepted", ROCKETMQ_4_9_3, master.ConnectionView(), 2000, 1000, 0, master.ReportOutcome.REQUEST, 2000, 2000, 2000, False),
    ("ack", ROCKETMQ_4_9_3, master.ConnectionView(500, 500), 800, 1000, 900, master.ReportOutcome.ACK, 500, 800, 900, False),
    ("ack-at-max", ROCKETMQ_4_9_3, master.ConnectionView(500, 500), 1000, 1000, 0, master.ReportOutcome.ACK, 500, 1000, 1000, False),
    ("ack-past-max-closes-4.9.3", ROCKETMQ_4_9_3, master.ConnectionView(500, 500), 1001, 1000, 0, master.ReportOutcome.ACK_BEYOND_MASTER, 500, 1001, 0, True),
    ("ack-past-max-accepted-4.9.0", ROCKETMQ_4_9_0, master.ConnectionView(500, 500), 1001, 1000, 0, master.ReportOutcome.ACK, 500, 1001, 1001, False),
    ("ack-past-max-accepted-5.0", ROCKETMQ_5_0, master.ConnectionView(500, 500), 1001, 1000, 0, master.ReportOutcome.ACK, 500, 1001, 1001, False),
    ("past-2^31", ROCKETMQ_4_9_3, master.ConnectionView(BIG, BIG), BIG + 1, BIG + 1, BIG, master.ReportOutcome.ACK, BIG, BIG + 1, BIG + 1, False),
]


@pytest.mark.parametrize("case,profile,conn,report,max_offset,push2,outcome,request_offset,ack,after,close", REPORTS,
                         ids=[c[0] for c in REPORTS])
def test_on_slave_report(case, profile, conn, report, max_offset, push2, outcome, request_offset, ack, after, close):
    d = master.on_slave_report(conn, report, max_offset, push2, profile)
    assert (d.outcome, d.connection.slave_request_offset, d.connection.slave_ack_offset,
            d.push2_slave_max_offset, d.close) == (outcome, request_offset, ack, after, close)


def test_push2_slave_max_offset_only_grows():
    assert master.notify_transfer_some(500, 400) == 500
    assert master.notify_transfer_some(500, 501) == 501


def test_master_housekeeping_boundary():
    assert master.master_housekeeping(0, 20_000, SYNC) is master.HousekeepingOutcome.KEEP
    assert master.master_housekeeping(0, 20_001, SYNC) is master.HousekeepingOutcome.EXPIRED


FIRST = [
    ("slave-offset", 700, 5000, master.FirstOffsetOutcome.SLAVE_REQUEST_OFFSET, 700),
    ("empty-slave-last-file", 0, 5000, master.FirstOffsetOutcome.LAST_FILE_START, 4096),
    ("empty-slave-file-boundary", 0, 4096, master.FirstOffsetOutcome.LAST_FILE_START, 4096),
    ("empty-slave-first-file", 0, 1023, master.FirstOffsetOutcome.LAST_FILE_START, 0),
    ("slave-past-master", 9000, 5000, master.FirstOffsetOutcome.SLAVE_REQUEST_OFFSET, 9000),
]


@pytest.mark.parametrize("case,request_offset,max_offset,outcome,start", FIRST, ids=[c[0] for c in FIRST])
def test_first_transfer_offset(case, request_offset, max_offset, outcome, start):
    assert master.first_transfer_offset(request_offset, max_offset, SYNC) == (outcome, start)


LOG = master.LogView(0, 1500)
ROUNDS = [
    # view, now -> outcome, next, heartbeat, batch, transfer_from
    ("await-request", master.WriteView(), 100, master.WriteOutcome.AWAIT_REQUEST, -1, None, None, -1),
    ("first-batch-from-last-file", master.WriteView(0, -1, 100), 100, master.WriteOutcome.TRANSFER, 1280,
     None, TransferHeader(1024, 256), 1024),
    ("first-batch-from-request", master.WriteView(1400, -1, 100), 100, master.WriteOutcome.TRANSFER, 1500,
     None, TransferHeader(1400, 100), 0),
    ("batch-cut-at-file-end", master.WriteView(900, 900, 100), 100, master.WriteOutcome.TRANSFER, 1024,
     None, TransferHeader(900, 124), -1),
    ("nothing-to-send", master.WriteView(1500, 1500, 100), 5100, master.WriteOutcome.NOTHING_TO_SEND, 1500,
     None, None, -1),
    ("heartbeat-when-idle", master.WriteView(1500, 1500, 100), 5101, master.WriteOutcome.HEARTBEAT, 1500,
     TransferHeader(1500, 0), None, -1),
    ("heartbeat-and-batch", master.WriteView(1400, 1400, 100), 5101, master.WriteOutcome.HEARTBEAT_AND_TRANSFER,
     1500, TransferHeader(1400, 0), TransferHeader(1400, 100), -1),
]


@pytest.mark.parametrize("case,view,now,outcome,nxt,heartbeat,batch,transfer_from", ROUNDS, ids=[c[0] for c in ROUNDS])
def test_write_socket_round(case, view, now, outcome, nxt, heartbeat, batch, transfer_from):
    d = master.write_socket_round(view, LOG, now, SYNC)
    assert (d.outcome, d.next_transfer_from_where, d.heartbeat, d.batch, d.transfer_from) == \
        (outcome, nxt, heartbeat, batch, transfer_from)


def test_write_socket_round_reads_the_first_file_for_offset_zero():
    d = master.write_socket_round(master.WriteView(5, 0, 0), master.LogView(2048, 2500), 10, SYNC)
    assert (d.batch, d.read_from) == (TransferHeader(0, 256), 2048)


# ---------------------------------------------------------------- HAClient


def test_on_connect_first_report_clock_per_profile():
    assert slave.on_connect(700, 9000, 100, ROCKETMQ_4_9_3) == slave.ClientView(700, 9000, 9000)
    assert slave.on_connect(700, 9000, 100, ROCKETMQ_5_0) == slave.ClientView(700, 100, 9000)


def test_reports():
    view = slave.ClientView(700, 1000, 1000)
    assert slave.periodic_report(view, 6000, SYNC) == slave.SlaveReportDecision(slave.ReportKind.NONE)
    assert slave.periodic_report(view, 6001, SYNC) == slave.SlaveReportDecision(slave.ReportKind.HEARTBEAT, 700)
    assert slave.progress_report(view, 700) == slave.SlaveReportDecision(slave.ReportKind.NONE)
    assert slave.progress_report(view, 701) == slave.SlaveReportDecision(slave.ReportKind.PROGRESS, 701)
    assert slave.on_report(view, 900, 2000) == slave.ClientView(900, 2000, 1000)
    assert slave.on_read(view, 3000) == slave.ClientView(700, 1000, 3000)


FRAMES = [
    ("append", 500, TransferHeader(500, 100), slave.FrameOutcome.APPEND, 500),
    ("heartbeat-checked-too", 500, TransferHeader(400, 0), slave.FrameOutcome.OFFSET_MISMATCH, -1),
    ("behind", 500, TransferHeader(600, 100), slave.FrameOutcome.OFFSET_MISMATCH, -1),
    ("ahead", 500, TransferHeader(499, 100), slave.FrameOutcome.OFFSET_MISMATCH, -1),
    ("empty-log-file-boundary", 0, TransferHeader(4096, 100), slave.FrameOutcome.EMPTY_LOG, 4096),
    ("empty-log-unaligned", 0, TransferHeader(4100, 100), slave.FrameOutcome.EMPTY_LOG, 4096),
    ("past-2^31", BIG, TransferHeader(BIG, 10), slave.FrameOutcome.APPEND, BIG),
]


@pytest.mark.parametrize("case,slave_max,header,outcome,append_at", FRAMES, ids=[c[0] for c in FRAMES])
def test_on_frame(case, slave_max, header, outcome, append_at):
    d = slave.on_frame(slave_max, header, SYNC)
    assert (d.outcome, d.append_at, d.close) == (outcome, append_at, outcome is slave.FrameOutcome.OFFSET_MISMATCH)


def test_fits_last_file_and_housekeeping():
    assert slave.fits_last_file(1000, 24, SYNC) and not slave.fits_last_file(1000, 25, SYNC)
    view = slave.ClientView(0, 0, 5000)
    assert slave.slave_housekeeping(view, 20_001, SYNC, ROCKETMQ_4_9_3) is slave.ClientHousekeeping.EXPIRED
    assert slave.slave_housekeeping(view, 20_001, SYNC, ROCKETMQ_5_0) is slave.ClientHousekeeping.KEEP
    assert slave.slave_housekeeping(view, 25_001, SYNC, ROCKETMQ_5_0) is slave.ClientHousekeeping.EXPIRED


def test_profiles_named_by_release():
    assert set(PROFILES) == {"rocketmq-4.9.0", "rocketmq-4.9.3", "rocketmq-5.0"}


# ---------------------------------------------------------------- properties


@given(st.lists(st.integers(9, 1016), min_size=1, max_size=40), st.sampled_from([1024, 2048]))
def test_placement_never_crosses_a_file_and_leaves_room_for_a_blank(sizes, file_size):
    offset = 0
    for size in sizes:
        p = cl.place_message(offset, size, file_size)
        if size + cl.END_FILE_MIN_BLANK_LENGTH > file_size:
            assert p.outcome is cl.PlaceOutcome.MESSAGE_SIZE_EXCEEDED
            continue
        assert p.start // file_size == (p.start + size - 1) // file_size
        assert file_size - (p.start + size) % file_size >= cl.END_FILE_MIN_BLANK_LENGTH or (p.start + size) % file_size == 0
        offset = p.start + size


@given(st.integers(0, 2**40), st.integers(0, 2**40), st.integers(0, 2**40))
def test_batches_stay_in_one_file_and_never_pass_the_max_offset(offset, a, b):
    low, high = sorted((a, b))
    low -= low % 1024
    d = cl.commit_log_data(offset, low, high, 1024)
    if d.outcome is cl.DataOutcome.FOUND:
        assert d.read_from == offset and 0 < d.size and offset + d.size <= high
        assert offset // 1024 == (offset + d.size - 1) // 1024


@given(st.integers(0, 2**40), st.integers(0, 2**40))
def test_last_file_start_is_a_file_boundary_at_or_below_the_max(request, max_offset):
    outcome, start = master.first_transfer_offset(request, max_offset, SYNC)
    if request == 0:
        assert start % 1024 == 0 and max_offset - 1024 < start <= max_offset
    else:
        assert start == request
