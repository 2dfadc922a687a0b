"""Writing and reading campaign directories, atomically and defensively.

Layout of a campaign directory::

    manifest.json                 what was asked (config, seeds, adapters, rmqha and schema version)
    chunks/<chunk>.json           commit marker of one chunk: its part files and row counts
    runs/<chunk>.parquet          one part per committed chunk, in each of the five tables
    properties/<chunk>.parquet
    ...

A chunk's part files are first written under ``_staging/`` and renamed into place;
the chunk exists only once its marker is renamed into ``chunks/``. A campaign killed
at any moment therefore leaves only complete chunks (readers ignore part files that
no marker names, and ``--resume`` discards them and reruns those chunks), so no run
is ever lost, duplicated or half-written.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterable

import attrs
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from results.errors import ResultsError
from results import rollup as _rollup
from results.schema import SCHEMA_VERSION, SCHEMAS, TABLES

MANIFEST = "manifest.json"
CHUNKS = "chunks"
STAGING = "_staging"


def _write_json_atomic(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


SEARCH = "search"


def write_search_state(out: Path, chunk: str, state: dict) -> None:
    """What a chunk's search learnt (conformance/search.py ``SearchState.to_json``), for
    the later waves of its campaign; written before the chunk's marker, so a committed
    chunk always has it."""
    _write_json_atomic(Path(out) / SEARCH / f"{chunk}.json", state)


def read_search_state(out: Path, chunk: str) -> dict:
    path = Path(out) / SEARCH / f"{chunk}.json"
    try:
        with open(path, encoding="utf-8") as f:
            state = json.load(f)
    except FileNotFoundError:
        raise ResultsError(f"{path}: missing: chunk {chunk} is committed but what its search learnt is not "
                           f"(results of another rmqha version?)") from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path}: unreadable ({exc})".splitlines()[0]) from None
    if not isinstance(state, dict) or not {"states", "hits", "corpus"} <= state.keys():
        raise ResultsError(f"{path}: not a search state (states, hits, corpus)")
    return state


def write_manifest(out: Path, manifest: dict) -> None:
    _write_json_atomic(Path(out) / MANIFEST, {**manifest, "schema_version": SCHEMA_VERSION})


def read_manifest(out: Path) -> dict:
    path = Path(out) / MANIFEST
    try:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except FileNotFoundError:
        raise ResultsError(f"{out}: not a campaign directory (no {MANIFEST})") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise ResultsError(f"{path}: unreadable manifest ({exc})") from None
    if not isinstance(manifest, dict) or "schema_version" not in manifest:
        raise ResultsError(f"{path}: manifest has no schema_version")
    if manifest["schema_version"] != SCHEMA_VERSION:
        raise ResultsError(
            f"{path}: results schema version {manifest['schema_version']}, this rmqha reads version {SCHEMA_VERSION}"
        )
    for key, kind in MANIFEST_KEYS.items():
        if not isinstance(manifest.get(key), kind):
            raise ResultsError(f"{path}: manifest field {key!r} is missing or not a {kind.__name__}")
    for adapter, info in manifest["adapters"].items():
        if not isinstance(info, dict):
            raise ResultsError(f"{path}: manifest entry of adapter {adapter!r} is not an object")
    return manifest


# What readers rely on in a manifest (docs/results-schema.md lists every field).
MANIFEST_KEYS = {"campaign": str, "spec": dict, "chunks": list, "adapters": dict, "properties": dict}


def commit_chunk(out: Path, chunk: str, tables: dict[str, pa.Table]) -> dict:
    """Write one chunk's tables and commit it (the marker is the last, atomic step)."""
    out = Path(out)
    staging = out / STAGING / f"{chunk}-{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    files = {}
    for name in TABLES:
        table = tables[name]
        with open(staging / f"{name}.parquet", "wb") as f:
            pq.write_table(table, f)
            f.flush()
            os.fsync(f.fileno())  # the marker must never name a part the disk has not kept
        files[name] = {"file": part_file(name, chunk), "rows": table.num_rows}
    for name in TABLES:
        (out / name).mkdir(exist_ok=True)
        os.replace(staging / f"{name}.parquet", out / files[name]["file"])
    shutil.rmtree(staging, ignore_errors=True)
    verdicts = tables["runs"].column("verdict").to_pylist()
    marker = {
        "chunk": chunk,
        "tables": files,
        "schema_version": SCHEMA_VERSION,
        "summary": {"runs": len(verdicts), "fail": verdicts.count("fail"), "error": verdicts.count("error")},
        "rollup": _rollup.rollup(tables),  # what a report sums instead of scanning (results/rollup.py)
    }
    _write_json_atomic(out / CHUNKS / f"{chunk}.json", marker)
    return marker


SHRUNK_SUFFIX = ".shrunk"


def shrunk_chunk_id(chunk: str, serial: int) -> str:
    """The ``serial``-th commit of shrunk counterexamples, of runs of ``chunk``
    (committed after every verdict of the campaign)."""
    return f"{chunk}{SHRUNK_SUFFIX}.{serial}"


def planned_chunk_of(chunk: str) -> str:
    """The planned chunk a committed chunk belongs to (itself, or the one whose runs
    it shrank; ``<chunk>.shrunk`` is how results of schema 2's first campaigns name it)."""
    return chunk.split(SHRUNK_SUFFIX, 1)[0]


def read_table_part(out: Path, marker: dict, table: str, columns: list[str] | None = None) -> pa.Table:
    """One committed chunk's part of ``table`` (by its marker)."""
    return pq.read_table(Path(out) / marker["tables"][table]["file"], columns=columns)


def part_file(table: str, chunk: str) -> str:
    return f"{table}/{chunk}.parquet"


def read_chunk_marker(path: Path) -> dict:
    """Read and check one commit marker: it must name exactly its chunk's five parts."""
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as f:
            marker = json.load(f)
    except (OSError, json.JSONDecodeError) as exc:
        raise ResultsError(f"{path}: corrupt chunk marker ({str(exc).splitlines()[0]})") from None
    chunk = path.stem
    tables = marker.get("tables") if isinstance(marker, dict) else None
    if not isinstance(tables, dict) or marker.get("chunk") != chunk:
        raise ResultsError(f"{path}: corrupt chunk marker (no chunk {chunk!r} with its tables)")
    for name in TABLES:
        entry = tables.get(name)
        # a marker names only its own parts: never a path outside the campaign directory
        if not isinstance(entry, dict) or entry.get("file") != part_file(name, chunk) \
                or not isinstance(entry.get("rows"), int):
            raise ResultsError(f"{path}: corrupt chunk marker (bad or missing {name} part)")
    summary = marker.get("summary")
    if not isinstance(summary, dict) or not all(isinstance(summary.get(k), int) for k in ("runs", "fail", "error")):
        raise ResultsError(f"{path}: corrupt chunk marker (no run summary)")
    if "rollup" in marker and not _rollup.well_formed(marker["rollup"]):  # optional: older results have none
        raise ResultsError(f"{path}: corrupt chunk marker (malformed rollup)")
    return marker


def committed_chunks(out: Path) -> dict[str, dict]:
    folder = Path(out) / CHUNKS
    if not folder.is_dir():
        return {}
    return {path.stem: read_chunk_marker(path) for path in sorted(folder.glob("*.json"))}


def discard_uncommitted(out: Path) -> int:
    """Remove staging leftovers and part files no marker names (after a kill)."""
    out = Path(out)
    shutil.rmtree(out / STAGING, ignore_errors=True)
    named = {t["file"] for m in committed_chunks(out).values() for t in m["tables"].values()}
    removed = 0
    for name in TABLES:
        for part in (out / name).glob("*.parquet") if (out / name).is_dir() else ():
            if f"{name}/{part.name}" not in named:
                part.unlink()
                removed += 1
    return removed


@attrs.frozen(slots=True)
class CommittedChunk:
    """A committed chunk as validated: its part files, their row counts, its adapter."""

    id: str
    adapter: str | None  # None when its runs part is empty
    files: dict  # table -> absolute path of its part
    rows: dict  # table -> rows
    rollup: dict | None = None  # conformance/results/rollup.py (None: written before rollups)


def validated_chunks(out: Path) -> tuple[dict, list[CommittedChunk]]:
    """Check a campaign directory before anything reads it; return (manifest, chunks).

    Every problem is a one-line ResultsError: a missing or empty directory, a manifest of
    another schema version, a chunk whose files are missing, truncated or corrupt, a
    part whose schema is not this version's, row counts that do not match the marker,
    or rows that belong to another campaign or adapter than the manifest says. Each
    part's footer is read once (in a few threads: on a shared file system the latency,
    not the bytes, is what costs).
    """
    out = Path(out)
    if not out.exists():
        raise ResultsError(f"{out}: no such directory")
    if not out.is_dir():
        raise ResultsError(f"{out}: not a directory")
    if not any(out.iterdir()):
        raise ResultsError(f"{out}: empty directory, no campaign results")
    manifest = read_manifest(out)
    markers = committed_chunks(out)
    if not markers:
        raise ResultsError(f"{out}: the campaign has no committed runs yet")
    unplanned = sorted(c for c in markers if planned_chunk_of(c) not in set(manifest["chunks"]))
    if unplanned:
        raise ResultsError(f"{out}: committed chunk {unplanned[0]} is not one the manifest planned "
                        f"(results of another campaign mixed in?)")
    for chunk, marker in sorted(markers.items()):
        if marker.get("schema_version") != SCHEMA_VERSION:
            raise ResultsError(f"{out}: chunk {chunk} has schema version {marker.get('schema_version')}, "
                            f"expected {SCHEMA_VERSION} (mixed schema versions)")
    jobs = [(chunk, name, marker["tables"][name]) for chunk, marker in sorted(markers.items()) for name in TABLES]
    with ThreadPoolExecutor(max_workers=8) as pool:
        footers = list(pool.map(lambda job: _checked_footer(out, *job), jobs))
    with ThreadPoolExecutor(max_workers=8) as pool:  # a report sums rollups: each must be its runs table's
        list(pool.map(lambda c: _check_rollup(out, c, markers[c]), [c for c in sorted(markers) if "rollup" in markers[c]]))
    chunks = []
    for i, chunk in enumerate(sorted(markers)):
        mine = dict(zip(TABLES, footers[i * len(TABLES):(i + 1) * len(TABLES)]))
        adapter = _check_keys(out, chunk, out / markers[chunk]["tables"]["runs"]["file"], mine["runs"], manifest)
        chunks.append(CommittedChunk(chunk, adapter, {t: str(out / markers[chunk]["tables"][t]["file"]) for t in TABLES},
                                     {t: markers[chunk]["tables"][t]["rows"] for t in TABLES},
                                     markers[chunk].get("rollup")))
    return manifest, chunks


def validated_parts(out: Path) -> tuple[dict, dict[str, list[str]]]:
    """``validated_chunks``, as table -> part files."""
    manifest, chunks = validated_chunks(out)
    return manifest, {t: [c.files[t] for c in chunks] for t in TABLES}


def _checked_footer(out: Path, chunk: str, name: str, entry: dict) -> pq.FileMetaData:
    path = out / entry["file"]
    try:
        meta = pq.read_metadata(path)
        schema = meta.schema.to_arrow_schema()
    except FileNotFoundError:
        raise ResultsError(f"{path}: missing part file of committed chunk {chunk}") from None
    except (OSError, pa.ArrowException) as exc:
        raise ResultsError(f"{path}: corrupt or truncated Parquet file ({str(exc).splitlines()[0]})") from None
    version = (schema.metadata or {}).get(b"rmqha.schema_version", b"?").decode()
    if version != str(SCHEMA_VERSION):
        raise ResultsError(f"{path}: schema version {version}, expected {SCHEMA_VERSION} (mixed schema versions)")
    if not schema.equals(SCHEMAS[name], check_metadata=False):
        raise ResultsError(f"{path}: columns do not match the {name} schema version {SCHEMA_VERSION}")
    if meta.num_rows != entry["rows"]:
        raise ResultsError(f"{path}: {meta.num_rows} rows, the chunk marker says {entry['rows']}")
    return meta


def _check_rollup(out: Path, chunk: str, marker: dict) -> None:
    """A chunk's rollup and run summary agree with its runs table: its verdict counts and
    how many failed properties its runs list (two columns of one part read; the groups'
    other sums are not checked)."""
    runs = pq.read_table(out / marker["tables"]["runs"]["file"], columns=["verdict", "failed_properties"])
    counted = {v: pc.sum(pc.equal(runs.column("verdict"), v)).as_py() or 0 for v in _rollup.VERDICTS}
    failed = pc.sum(pc.list_value_length(runs.column("failed_properties"))).as_py() or 0
    r = marker["rollup"]
    claimed = {v: sum(g[v] for g in r["groups"]) for v in _rollup.VERDICTS}
    summary = marker["summary"]
    if (claimed != counted or sum(g["runs"] for g in r["groups"]) != runs.num_rows
            or sum(n for _, _, n in r["failed"]) != failed
            or (summary["runs"], summary["fail"], summary["error"]) != (runs.num_rows, counted["fail"], counted["error"])):
        raise ResultsError(f"{out / CHUNKS / (chunk + '.json')}: the chunk marker's counts disagree with its runs "
                           f"table ({counted['fail']} failed, {counted['error']} errored of {runs.num_rows} runs; "
                           f"edited or corrupt?)")


def _column_values(path: Path, meta: pq.FileMetaData, column: str) -> set:
    """The distinct values of a string column, from Parquet statistics when they suffice."""
    index = meta.schema.names.index(column)
    values: set = set()
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(index).statistics
        if stats is None or not stats.has_min_max:
            if meta.row_group(g).num_rows == 0:
                continue
            return set(pq.read_table(path, columns=[column]).column(column).to_pylist())
        if stats.min != stats.max:
            return set(pq.read_table(path, columns=[column]).column(column).to_pylist())
        values.add(stats.min)
    return values


def _check_keys(out: Path, chunk: str, runs_part: Path, meta: pq.FileMetaData, manifest: dict) -> str | None:
    """The runs of a chunk belong to the manifest's campaign and adapters; return the adapter."""
    adapters = manifest["adapters"]
    campaign = manifest["campaign"]
    found = _column_values(runs_part, meta, "adapter")
    if not found <= set(adapters):
        raise ResultsError(f"{out}: chunk {chunk} holds runs of adapter(s) {sorted(found - set(adapters))} "
                        f"that the manifest does not list")
    if len(found) > 1:  # the writer commits one adapter's seed range per chunk
        raise ResultsError(f"{out}: chunk {chunk} holds runs of several adapters {sorted(found)}")
    if found:
        declared = adapters[next(iter(found))].get("implementation")
        implementations = _column_values(runs_part, meta, "implementation") - {"?"}  # "?": runs that errored
        if declared and implementations and implementations != {declared}:
            raise ResultsError(f"{out}: chunk {chunk} holds runs of implementation {sorted(implementations)}, "
                            f"the manifest says {declared!r}")
    campaigns = _column_values(runs_part, meta, "campaign")
    if campaigns and campaigns != {campaign}:
        raise ResultsError(f"{out}: chunk {chunk} holds runs of campaign {sorted(campaigns)}, "
                        f"the manifest says {campaign!r}")
    return next(iter(found), None)


def read_table(out: Path, name: str, files: Iterable[str] | None = None) -> pa.Table:
    """Read one table of a validated campaign directory with pyarrow (small data, tests)."""
    if files is None:
        files = validated_parts(out)[1][name]
    tables = [pq.read_table(f) for f in files]
    return pa.concat_tables(tables) if tables else SCHEMAS[name].empty_table()
