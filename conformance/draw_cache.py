"""A disk cache of the handler-level samples (``handler_check.draw_samples``).

Drawing the fingerprint's samples from the differential tests' strategies costs about 7
CPU-seconds (Hypothesis generates some 8,700 arguments), half of a default 200-run
``rmqha check`` of a DLedger node, and every process drew them again. The draws are
deterministic (``derandomize``), so they are kept in one JSON file per version of the
code that makes them: the key hashes Hypothesis's version and the sources of the
strategies, the operations, the codec and the spec, so any change of those draws anew.
Arguments are stored as the adapter protocol encodes them and decoded with the
operation's parameter types; a draw is stored only when it decodes back equal, so a
cached sample is the sample. A missing, unreadable or malformed file is drawn again
(and rewritten), never an error. ``RMQHA_CACHE_DIR`` puts the cache elsewhere;
``RMQHA_CACHE_DIR=off`` turns it off.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Optional

import hypothesis

from adapters import codec
from adapters.operations import OPERATIONS

ROOT = Path(__file__).resolve().parents[1]
# the code the draws depend on: the strategies, what an operation's parameters are, how
# they are encoded, and the spec records they are made of
SOURCES = ("conformance/strategies.py", "adapters/operations.py", "adapters/codec.py", "spec")


def cache_file() -> Optional[Path]:
    """Where the draws of this version of the code are kept (None: the cache is off)."""
    where = os.environ.get("RMQHA_CACHE_DIR")
    if where == "off":
        return None
    base = Path(where) if where else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rmqha"
    return base / f"draws-{_key()}.json"


@functools.lru_cache(maxsize=1)
def _key() -> str:
    digest = hashlib.sha256(hypothesis.__version__.encode())
    for source in SOURCES:
        path = ROOT / source
        for f in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(str(f.relative_to(ROOT)).encode())
            digest.update(f.read_bytes())
    return digest.hexdigest()[:20]


def _entry(operation: str, count: int) -> str:
    return f"{operation}:{count}"


_parsed: dict[Path, tuple[tuple[int, int], dict]] = {}  # path -> ((mtime, size), its document)


def _read(path: Path) -> dict:
    """The cache file's document, parsed once per version of the file (a fingerprint loads
    one entry per operation, and the file holds them all: a few megabytes of JSON)."""
    try:
        stat = path.stat()
        seen = _parsed.get(path)
        if seen is not None and seen[0] == (stat.st_mtime_ns, stat.st_size):
            return seen[1]
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    doc = doc if isinstance(doc, dict) else {}
    _parsed[path] = ((stat.st_mtime_ns, stat.st_size), doc)
    return doc


def _encode(drawn: tuple[dict, ...]) -> list[dict]:
    return [{name: codec.encode(value) for name, value in args.items()} for args in drawn]


def _decode(operation: str, encoded: Any) -> tuple[dict, ...]:
    op = OPERATIONS[operation]
    types, reg = dict(op.params), codec.registry(op.namespace)
    if not isinstance(encoded, list):
        raise codec.CodecError(operation, "not a list of arguments")
    out = []
    for args in encoded:
        if not isinstance(args, dict) or set(args) - set(types):
            raise codec.CodecError(operation, "not the operation's arguments")
        out.append({name: codec.decode(value, types[name], reg, name) for name, value in args.items()})
    return tuple(out)


def load(operation: str, count: int) -> Optional[tuple[dict, ...]]:
    """The cached draws of ``operation`` (None: none cached, or the cache is off)."""
    path = cache_file()
    if path is None or operation not in OPERATIONS:
        return None
    encoded = _read(path).get(_entry(operation, count))
    if encoded is None:
        return None
    try:
        return _decode(operation, encoded)
    except (codec.CodecError, TypeError, ValueError, KeyError):
        return None


def store(operation: str, count: int, drawn: tuple[dict, ...]) -> None:
    """Keep ``drawn`` if it decodes back equal; a cache that cannot be written is skipped."""
    path = cache_file()
    if path is None or operation not in OPERATIONS:
        return
    encoded = _encode(drawn)
    try:
        if _decode(operation, json.loads(json.dumps(encoded))) != drawn:
            return  # (a value the protocol does not carry exactly: draw it each time)
    except (codec.CodecError, TypeError, ValueError, KeyError):
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = dict(_read(path))  # (the parsed document stays as the file holds it)
        doc[_entry(operation, count)] = encoded
        with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as f:
            temporary = f.name
            json.dump(doc, f)
        os.replace(temporary, path)  # atomic: a reader sees the old file or the new one
    except OSError:
        return
