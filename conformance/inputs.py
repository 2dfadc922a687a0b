"""Reading the files a user hands rmqha (scenario scripts, case files): text and JSON.

Whatever the bytes, the result is the text or a ``UserError`` naming the file and what
is wrong with it, in one line: never a ``UnicodeDecodeError`` or a ``RecursionError``.
"""
from __future__ import annotations

import codecs
import json
import sys
from typing import Any

from conformance.errors import UserError

# whole numbers from files: Java's long holds every offset, epoch, term and seed of the
# real implementations, and the results tables store int64
MIN_INT = -(2**63)
MAX_INT = 2**63 - 1

_OTHER_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
               (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


def read_text(path: str, what: str) -> str:
    """The UTF-8 text of ``path`` (a UTF-8 byte order mark is allowed and dropped)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, not a {what}") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    for bom, encoding in _OTHER_BOMS:
        if data.startswith(bom):
            raise UserError(f"{path}: the {what} is {encoding} text; save it as UTF-8")
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UserError(f"{path}: the {what} is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line})") from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise UserError(f"{path}: the {what} is not text (a NUL character on line {line})")
    return text


def parse_json(text: str, path: str) -> Any:
    """JSON from a user's file; absurdly long numbers, NaN/Infinity and nesting deeper
    than Python's recursion limit are errors (ranges are the schema's business)."""
    try:
        return json.loads(text, parse_int=_bounded_int(path), parse_constant=_no_constant(path))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise UserError(f"{path}: JSON nested too deeply to read (more than {sys.getrecursionlimit()} levels)") from None


def _bounded_int(path: str):
    def parse(text: str) -> int:
        # Python refuses to convert more than 4300 digits (ValueError); nothing in a
        # file rmqha reads needs more than a long's 19
        if len(text.lstrip("-")) > 40:
            raise UserError(f"{path}: number {text[:24]}... has {len(text)} digits (offsets, epochs and terms "
                            f"are Java longs)")
        return int(text)
    return parse


def _no_constant(path: str):
    def parse(name: str) -> Any:
        raise UserError(f"{path}: not JSON: {name} is not a JSON number")
    return parse


def load_json(path: str, what: str) -> Any:
    return parse_json(read_text(path, what), path)


def whole_number(text: str, what: str, lo: int = MIN_INT, hi: int = MAX_INT) -> int:
    """``text`` as an int within ``[lo, hi]``, or a UserError naming ``what``."""
    try:
        value = int(text) if len(text) <= 24 else None
    except ValueError:
        value = None
    if value is None or not lo <= value <= hi:
        shown = text if len(text) <= 24 else text[:21] + "..."
        raise UserError(f"{what}: {shown!r} is not a whole number from {lo:,} to {hi:,}")
    return value
