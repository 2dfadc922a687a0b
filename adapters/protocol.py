"""The adapter protocol, version 1: requests and responses as JSON objects.

The same protocol is spoken over every transport — in process, JSON lines over a
subprocess's stdin/stdout, and the JVM — so an implementation answers the same
questions whichever way it is plugged in. docs/adapter-protocol.md is the reference.
"""
from __future__ import annotations

import json
import sys
from functools import lru_cache
from json.encoder import c_make_encoder, encode_basestring_ascii
from pathlib import Path
from typing import Any

PROTOCOL = "rmqha-adapter/1"

# Operations of the protocol itself (handler-level operations go through "call").
OPS = ("hello", "call", "node.create", "node.tick", "node.step", "node.crash", "node.observe", "bye")

# Fields of a node kind's view that report what happened since the previous observation,
# each thing once (docs/adapter-protocol.md).
ONCE_FIELDS: dict[str, str] = {"controller": "decisions"}

# Error codes an implementation may answer with.
UNSUPPORTED = "unsupported"  # the operation (or node kind) is not implemented: reported as not applicable
BAD_REQUEST = "bad-request"  # the request could not be understood
INTERNAL = "internal"  # the implementation failed while handling it
ERROR_CODES = (UNSUPPORTED, BAD_REQUEST, INTERNAL)


# One line of the protocol: json.dumps(x, separators=(",", ":")), without building an
# encoder per message (the C encoder is made once), and without the check for circular
# references (12% of the encoding): a message is built fresh from the codec's output or
# from JSON arguments, a tree (a cycle would be a bug in the caller, and still ends in an
# exception: RecursionError instead of ValueError)
_ENCODER = json.JSONEncoder(separators=(",", ":"), check_circular=False)
_ITERENCODE = (None if c_make_encoder is None else
               c_make_encoder(None, _ENCODER.default, encode_basestring_ascii, None, ":", ",", False, False, True))


def compact_json(value: Any) -> str:
    """``value`` as one compact JSON line (the same text as ``json.dumps(value, separators=(",", ":"))``)."""
    if _ITERENCODE is None:
        return _ENCODER.encode(value)
    return "".join(_ITERENCODE(value, 0))


_RAW_DECODE = json.JSONDecoder().raw_decode


def parse_json(text: str) -> Any:
    """``json.loads(text)``: the same value, faster for a line with no whitespace around it
    (the whole of it one JSON value). Every line it cannot read is a ``JSONDecodeError``,
    also those ``json.loads`` fails on otherwise (an integer past Python's limit on
    digits is a ValueError, nesting past the recursion limit a RecursionError): a reader
    of lines from an implementation or a file catches one error."""
    try:
        try:
            value, end = _RAW_DECODE(text)
            if end == len(text):
                return value
        except json.JSONDecodeError:
            pass
        return json.loads(text)  # whitespace around the value, or the error json.loads gives
    except json.JSONDecodeError:
        raise
    except ValueError:  # int("9" * 5000): Python converts at most sys.get_int_max_str_digits() digits
        raise json.JSONDecodeError(f"a number of more than {sys.get_int_max_str_digits()} digits", text, 0) from None
    except RecursionError:
        raise json.JSONDecodeError(f"nested more than {sys.getrecursionlimit()} levels deep", text, 0) from None


def request(request_id: int, op: str, args: dict) -> dict:
    return {"rmqha": 1, "id": request_id, "op": op, "args": args}


def ok(request_id: Any, result: Any) -> dict:
    return {"rmqha": 1, "id": request_id, "ok": True, "result": result}


def error(request_id: Any, code: str, message: str) -> dict:
    return {"rmqha": 1, "id": request_id, "ok": False, "error": {"code": code, "message": message}}


class Unsupported(Exception):
    """Raised by an implementation (or the driver) for an operation it does not offer."""


SCHEMA_PATH = Path(__file__).with_name("protocol.schema.json")


@lru_cache(maxsize=None)
def schema() -> dict:
    """The published JSON schema of the protocol (requests, responses, hello, node answers)."""
    return json.loads(SCHEMA_PATH.read_text())


@lru_cache(maxsize=None)
def _validator(definition: str):
    import jsonschema

    root = schema()
    return jsonschema.Draft202012Validator({"$defs": root["$defs"], "$ref": f"#/$defs/{definition}"})


def validate(definition: str, value: Any) -> str | None:
    """None if ``value`` fits the schema's ``definition``, else one line saying where it does not."""
    error = next(iter(sorted(_validator(definition).iter_errors(value), key=lambda e: list(e.path))), None)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(answer)"
    return f"{where}: {error.message}"


def validate_hello(answer: Any) -> str | None:
    return validate("hello", answer)
