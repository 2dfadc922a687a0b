"""The commitlog as classic HA sees it: files of ``mappedFileSizeCommitLog`` bytes.

Rules (``CommitLog``, ``MappedFileQueue``, ``MappedFile``, ``DefaultAppendMessageCallback``;
the same in 4.9.x and 5.x):

* **Placement**: a message of ``size`` bytes goes at the end of the last file if
  ``size + END_FILE_MIN_BLANK_LENGTH`` fits in what remains; otherwise the rest of the
  file is a blank record (END_OF_FILE) and the message starts the next file. So no
  message crosses a file and every full file ends with a blank record.
* **getCommitLogData(offset)**: the bytes from ``offset`` to the end of what is written
  in *offset's* file (never across files). An offset outside the files finds nothing,
  except offset 0, which then reads the *first* file from its start
  (``returnFirstOnNotFound``): the bytes of another offset.
* **Flush**: one call flushes one file, the one holding the flushed offset, if at least
  ``leastPages`` pages are dirty (page numbers of the positions, ``OS_PAGE_SIZE``), or
  anything is dirty when ``leastPages`` is 0, or the file is full.
* **Recovery** after a crash: messages are scanned from the first file; a blank record
  moves to the next file; the first position that holds no whole message ends the log.

Byte format (ours, shaped like upstream's): a record is ``TOTALSIZE`` (4 bytes, big
endian) and ``MAGICCODE`` (4 bytes) followed by the body; a blank record's size is what
remained of the file.
"""
from __future__ import annotations

import enum
import struct

import attrs

END_FILE_MIN_BLANK_LENGTH = 4 + 4
MESSAGE_MAGIC_CODE = 0xDAA320A7
BLANK_MAGIC_CODE = 0xCBD43194
_HEAD = struct.Struct(">II")


def file_start(offset: int, file_size: int) -> int:
    return offset - offset % file_size


def clean_files_keep_from(min_offset: int, max_offset: int, keep: int, file_size: int) -> int:
    """Where the log starts after the cleaner deletes every file but the last ``keep``
    (at least one: the file being written)."""
    return max(min_offset, file_start(max_offset, file_size) - (max(keep, 1) - 1) * file_size)


# ---------------------------------------------------------------- placement


class PlaceOutcome(enum.Enum):
    PUT_OK = "PUT_OK"
    END_OF_FILE = "END_OF_FILE"  # a blank record fills the file; the message opens the next one
    MESSAGE_SIZE_EXCEEDED = "MESSAGE_SIZE_EXCEEDED"


@attrs.frozen(slots=True)
class Placement:
    outcome: PlaceOutcome
    start: int  # where the message goes (-1: nowhere)
    blank_at: int = -1  # where the blank record goes, END_OF_FILE only
    blank_size: int = 0


def place_message(max_offset: int, size: int, file_size: int) -> Placement:
    """Where a message of ``size`` bytes is appended to a log ending at ``max_offset``."""
    if size < END_FILE_MIN_BLANK_LENGTH or size + END_FILE_MIN_BLANK_LENGTH > file_size:
        return Placement(PlaceOutcome.MESSAGE_SIZE_EXCEEDED, -1)
    remaining = file_size - max_offset % file_size  # a full last file (or none): a new one
    if size + END_FILE_MIN_BLANK_LENGTH > remaining:
        next_file = max_offset + remaining
        return Placement(PlaceOutcome.END_OF_FILE, next_file, max_offset, remaining)
    return Placement(PlaceOutcome.PUT_OK, max_offset)


def encode_record(size: int, magic: int, body: bytes) -> bytes:
    """A record of exactly ``size`` bytes: header, then ``body`` cycled to fill it."""
    fill = size - _HEAD.size
    payload = (body * (fill // len(body) + 1))[:fill] if body and fill > 0 else bytes(max(fill, 0))
    return _HEAD.pack(size, magic) + payload


def blank_record(size: int) -> bytes:
    return _HEAD.pack(size, BLANK_MAGIC_CODE) + bytes(size - _HEAD.size)


# ---------------------------------------------------------------- reading for transfer


class DataOutcome(enum.Enum):
    FOUND = "FOUND"  # bytes of offset's own file
    FIRST_FILE = "FIRST_FILE"  # offset 0 outside the files: the first file, from its start
    NOT_FOUND = "NOT_FOUND"


@attrs.frozen(slots=True)
class DataSlice:
    outcome: DataOutcome
    read_from: int  # where the bytes really start (-1: none)
    size: int  # how many (0: none)


def commit_log_data(offset: int, min_offset: int, max_offset: int, file_size: int) -> DataSlice:
    """``getCommitLogData(offset)``: what the master can send from ``offset``.

    ``[min_offset, max_offset)`` is what the files hold (``min_offset`` is the start of
    the first file; an empty log has ``min_offset == max_offset``)."""
    files_end = file_start(max_offset, file_size) + (file_size if max_offset % file_size else 0)
    has_files = max_offset > min_offset
    if has_files and min_offset <= offset < files_end:
        end = min(max_offset, file_start(offset, file_size) + file_size)
        if offset < end:
            return DataSlice(DataOutcome.FOUND, offset, end - offset)
        return DataSlice(DataOutcome.NOT_FOUND, -1, 0)
    if has_files and offset == 0:
        end = min(max_offset, min_offset + file_size)
        return DataSlice(DataOutcome.FIRST_FILE, min_offset, end - min_offset)
    return DataSlice(DataOutcome.NOT_FOUND, -1, 0)


# ---------------------------------------------------------------- flush


class FlushOutcome(enum.Enum):
    FLUSHED = "FLUSHED"
    NOT_ENOUGH_PAGES = "NOT_ENOUGH_PAGES"
    NOTHING_DIRTY = "NOTHING_DIRTY"


@attrs.frozen(slots=True)
class FlushDecision:
    outcome: FlushOutcome
    flushed: int  # the flushed offset after the call


def flush_commit_log(flushed: int, max_offset: int, file_size: int, least_pages: int, page_size: int) -> FlushDecision:
    """``MappedFileQueue.flush(leastPages)``: flush the file holding ``flushed``."""
    if flushed >= max_offset:
        return FlushDecision(FlushOutcome.NOTHING_DIRTY, flushed)
    start = file_start(flushed, file_size)
    written = min(max_offset, start + file_size) - start
    done = flushed - start
    full = written == file_size
    if not full and least_pages > 0 and written // page_size - done // page_size < least_pages:
        return FlushDecision(FlushOutcome.NOT_ENOUGH_PAGES, flushed)
    return FlushDecision(FlushOutcome.FLUSHED, start + written)


@attrs.frozen(slots=True)
class AsyncFlushDecision:
    least_pages: int  # what this round of FlushRealTimeService flushes with
    thorough: bool  # the thorough interval passed: flush whatever is dirty


def async_flush_round(now: int, last_thorough_ms: int, least_pages: int, thorough_interval_ms: int) -> AsyncFlushDecision:
    """``FlushRealTimeService``: each round (every flushIntervalCommitLog ms) flushes with
    flushCommitLogLeastPages pages, or with 0 when the thorough interval has passed."""
    if now >= last_thorough_ms + thorough_interval_ms:
        return AsyncFlushDecision(0, True)
    return AsyncFlushDecision(least_pages, False)


# ---------------------------------------------------------------- recovery


def read_record(data: bytes, position: int) -> tuple[int, int] | None:
    """(size, magic) of the record at ``position`` of ``data``, or None if no header fits."""
    if position + _HEAD.size > len(data):
        return None
    return _HEAD.unpack_from(data, position)


def recovered_end(data: bytes, min_offset: int, file_size: int) -> int:
    """How much of a commitlog holding ``data`` from ``min_offset`` survives recovery:
    the end of the last whole record (``CommitLog.recoverAbnormally``)."""
    pos = 0
    while True:
        head = read_record(data, pos)
        if head is None:
            return min_offset + pos
        size, magic = head
        in_file = file_size - (min_offset + pos) % file_size
        if magic == BLANK_MAGIC_CODE and size == in_file and pos + size <= len(data):
            pos += size
        elif magic == MESSAGE_MAGIC_CODE and _HEAD.size <= size <= in_file and pos + size <= len(data):
            pos += size
        else:
            return min_offset + pos
